// Package testfiles finds which test files of a package the tests of one file need.
//
// A chapter's package holds the focused tests of every chapter so far, and most of its test
// source is earlier chapters' tests. A run of one chapter's tests (a mutant's lab in `course dev
// check`, a learner's `course test`) needs only that chapter's test file and the test files it
// uses; compiling the others was most of the time such a run took. The tests that run, and what
// they report, are the same with the smaller set: the other files only add declarations the
// chosen tests do not use.
package testfiles

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"strings"
)

// Needed returns the root test files (names in files, which holds the _test.go files of a
// package's directory, keyed by slash-separated name relative to it, with their source) that the
// tests in the roots need: the roots themselves, every file that declares a name a needed file
// mentions, every file that declares methods on such a name (or, for a type of the package
// itself, a method called like a name a needed file mentions), and every file that declares
// init or TestMain (they run whatever the tests are). The analysis is by name, not by type, so
// it keeps more than it must (a local variable called like a declaration keeps that
// declaration's file), never less. ok is false when no root is given or a root is not among
// files, when a file does not parse, or when a file belongs to an external test package
// (package x_test): use every file then. Files that are not root _test.go files are ignored.
func Needed(files map[string][]byte, roots ...string) (keep map[string]bool, ok bool) {
	if len(roots) == 0 {
		return nil, false
	}
	for _, r := range roots {
		if _, found := files[r]; !found || !IsRootTest(r) {
			return nil, false
		}
	}
	type file struct {
		always bool            // it declares init or TestMain, which run whatever the tests are
		uses   map[string]bool // every identifier it mentions
	}
	parsed := map[string]*file{}
	// needs maps a name to the root test files that a file mentioning it may need: the one that
	// declares it at top level, those that declare methods on it (a type: its method set, which
	// an interface may need), and those that declare a method called so.
	needs := map[string][]string{}
	// methods are the methods the test files declare. One on a type a test file declares is
	// needed with its type (needs[recv]); one on a type of the package itself may be called on
	// a value whose type no test file names, so its own name needs it too.
	type method struct{ name, recv, file string }
	var methods []method
	testTypes := map[string]bool{}
	fset := token.NewFileSet()
	for p, src := range files {
		if !IsRootTest(p) {
			continue
		}
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, false
		}
		if strings.HasSuffix(f.Name.Name, "_test") {
			return nil, false // an external test package: keep the tree whole
		}
		info := &file{uses: map[string]bool{}}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				switch {
				case d.Recv == nil && (d.Name.Name == "init" || d.Name.Name == "TestMain"):
					info.always = true
				case d.Recv == nil:
					needs[d.Name.Name] = append(needs[d.Name.Name], p)
				case len(d.Recv.List) > 0:
					recv, _ := ReceiverType(d.Recv.List[0].Type)
					needs[recv] = append(needs[recv], p)
					methods = append(methods, method{name: d.Name.Name, recv: recv, file: p})
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						needs[s.Name.Name] = append(needs[s.Name.Name], p)
						testTypes[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							needs[n.Name] = append(needs[n.Name], p)
						}
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, isIdent := n.(*ast.Ident); isIdent {
				info.uses[id.Name] = true
			}
			return true
		})
		parsed[p] = info
	}
	for _, m := range methods {
		if !testTypes[m.recv] {
			needs[m.name] = append(needs[m.name], m.file)
		}
	}
	keep = map[string]bool{}
	var queue []string
	for _, r := range roots {
		if !keep[r] {
			keep[r] = true
			queue = append(queue, r)
		}
	}
	for p, info := range parsed {
		if info.always && !keep[p] {
			keep[p] = true
			queue = append(queue, p)
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for name := range parsed[p].uses {
			for _, q := range needs[name] {
				if !keep[q] {
					keep[q] = true
					queue = append(queue, q)
				}
			}
		}
	}
	return keep, true
}

// IsRootTest reports whether p (slash-separated, relative to a package's directory) is a test
// file of that package: a _test.go file in the directory itself.
func IsRootTest(p string) bool {
	return path.Dir(p) == "." && strings.HasSuffix(p, "_test.go")
}

// ReceiverType returns the type name of a method receiver, T for T, *T, T[P] and *T[P], and
// whether it is a pointer; the name is "" for a receiver it cannot read.
func ReceiverType(e ast.Expr) (name string, pointer bool) {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e, pointer = x.X, true
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name, pointer
		default:
			return "", pointer
		}
	}
}
