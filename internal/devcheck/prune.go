package devcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"strings"

	"github.com/learn-tinypi/course/internal/tree"
)

// withTestsOf returns t without the test files of its root package that the tests in testFile
// do not need: testFile itself, every root test file that declares a name testFile (or a file
// it needs) uses, and every root test file that declares methods of a type kept so. Files of
// other packages, and every file that is not a root _test.go file, are kept.
//
// A mutant is proven by its lab's tests alone (`go test -run PATTERN .`), and in a chapter with
// several earlier chapters most of the test package's source is their tests: compiling them
// for every mutant was most of `course dev check`'s time. The tests that run, and so the
// failures a signature records, are the same as in the whole tree; a mutant changes code, never
// the declarations other chapters' tests use. The analysis is by name, not by type, so it keeps
// more than it must (a field or method called like a kept declaration keeps its file), never
// less; if the smaller tree still does not compile, checkMutant builds the whole tree and its
// verdict stands. ok is false when testFile is not a root test file of t or a file does not
// parse: use t itself then.
func withTestsOf(t tree.Tree, testFile string) (pruned tree.Tree, ok bool) {
	if _, found := t[testFile]; !found || !isRootTest(testFile) {
		return nil, false
	}
	type file struct {
		always bool            // it declares init or TestMain, which run whatever the tests are
		uses   map[string]bool // every identifier it mentions
	}
	files := map[string]*file{}
	// needs maps a name to the root test files that a file mentioning it may need: the one that
	// declares it at top level, those that declare methods on it (a type: its method set, which
	// an interface may need), and those that declare a method called so.
	needs := map[string][]string{}
	fset := token.NewFileSet()
	for p, src := range t {
		if !isRootTest(p) {
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
					recv := receiverName(d.Recv.List[0].Type)
					needs[recv] = append(needs[recv], p)
					needs[d.Name.Name] = append(needs[d.Name.Name], p)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						needs[s.Name.Name] = append(needs[s.Name.Name], p)
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
		files[p] = info
	}
	keep := map[string]bool{testFile: true}
	queue := []string{testFile}
	for p, info := range files {
		if info.always && !keep[p] {
			keep[p] = true
			queue = append(queue, p)
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for name := range files[p].uses {
			for _, q := range needs[name] {
				if !keep[q] {
					keep[q] = true
					queue = append(queue, q)
				}
			}
		}
	}
	pruned = tree.Tree{}
	for p, src := range t {
		if !isRootTest(p) || keep[p] {
			pruned[p] = src
		}
	}
	return pruned, true
}

// isRootTest reports whether p is a test file of the tree's root package.
func isRootTest(p string) bool {
	return path.Dir(p) == "." && strings.HasSuffix(p, "_test.go")
}

// receiverName returns the type name of a method receiver: T for T, *T, T[P] and *T[P].
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
