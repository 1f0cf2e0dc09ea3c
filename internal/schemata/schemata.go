// Package schemata compiles many mutants of a Go package into one build ("mutant schemata"):
// every function a mutant changes keeps its original body, behind a switch that calls the
// mutant's version of the function when the environment variable EnvVar names that mutant.
// Proving a chapter's mutants then takes one compilation instead of one per mutant; each
// mutant's tests run the same test binary with EnvVar set.
//
// Only mutants that change the bodies of functions (their signatures, and everything else in
// the file, stay as they were) can be woven in; Build reports which are, and the others are
// proven the usual way, each in a tree of its own.
package schemata

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/learn-tinypi/course/internal/labsrc"
)

// EnvVar is the environment variable that selects the active mutant of a schema build: its
// value is a Mutation's Name. Empty (or any other value) runs the original code.
const EnvVar = "COURSE_DEVCHECK_MUTANT"

// activeVar is the package-level variable of each package with woven mutants that holds
// EnvVar's value; generatedFile declares it.
const activeVar = "devcheckActiveMutant"

// generatedFile is the name of the file, in each package directory with woven mutants, that
// declares activeVar.
const generatedFile = "zz_devcheck_mutant.go"

// Mutation is one mutant's version of one file: the whole file with the mutant applied. A mutant
// that changes several files (a progressive stage of a chapter, whose labs' bodies are stubs) is
// one Mutation per file, all with its Name; it is in the build only when Build weaves every one
// of them.
type Mutation struct {
	Name string // the mutant's name, EnvVar's value that selects it
	File string // the file it changes, a slash-separated path in the tree
	Src  []byte // File with the mutant applied
}

// Result is a schema build: the files of the tree to replace or add, and which mutations are
// woven in.
type Result struct {
	// Files are the changed and added files, by path. The rest of the tree stays as it is.
	Files map[string][]byte
	// Woven[i] reports whether mutations[i] is in the build; Why[i] says why not.
	Woven []bool
	Why   []string
}

// Build weaves mutations into tree (the original files, by path). A mutation is woven in when
// its file parses, has the same declarations as the original in the same order, and every
// declaration it changes is a function or method whose parameters and receiver all have names,
// changed in its body alone. Its imports may be fewer than the original's: a stub no longer
// uses what the reference body did, and the tool that wrote it dropped that import (the woven
// file keeps the original's imports, which the original bodies still use). The others are left
// out, with the reason in Why.
func Build(tree map[string][]byte, mutations []Mutation) *Result {
	res := &Result{Files: map[string][]byte{}, Woven: make([]bool, len(mutations)), Why: make([]string, len(mutations))}
	// versions[file][decl index] lists the mutated versions of one function of file.
	versions := map[string]map[int][]version{}
	parsed := map[string]*ast.File{}
	fset := token.NewFileSet()
	for i, m := range mutations {
		orig, ok := tree[m.File]
		if !ok || !strings.HasSuffix(m.File, ".go") || strings.HasSuffix(m.File, "_test.go") {
			res.Why[i] = "not a non-test Go file of the tree"
			continue
		}
		of, ok := parsed[m.File]
		if !ok {
			var err error
			of, err = parser.ParseFile(fset, m.File, orig, parser.SkipObjectResolution)
			if err != nil {
				res.Why[i] = fmt.Sprintf("the original does not parse: %v", err)
				continue
			}
			parsed[m.File] = of
		}
		mset := token.NewFileSet()
		mf, err := parser.ParseFile(mset, m.File, m.Src, parser.SkipObjectResolution)
		if err != nil {
			res.Why[i] = fmt.Sprintf("the mutated file does not parse: %v", err)
			continue
		}
		changed, why := changedFuncs(fset, orig, of, mset, m.Src, mf)
		if why != "" {
			res.Why[i] = why
			continue
		}
		if versions[m.File] == nil {
			versions[m.File] = map[int][]version{}
		}
		for idx, v := range changed {
			v.mutant = m.Name
			versions[m.File][idx] = append(versions[m.File][idx], v)
		}
		res.Woven[i] = true
	}

	packages := map[string]string{} // directory → package name, of the files woven into
	serial := 0
	for _, f := range slices.Sorted(maps.Keys(versions)) {
		orig, of := tree[f], parsed[f]
		var out, copies bytes.Buffer
		last := 0
		for _, idx := range slices.Sorted(maps.Keys(versions[f])) {
			fd := of.Decls[idx].(*ast.FuncDecl)
			var sw strings.Builder
			fmt.Fprintf(&sw, "\n\tswitch %s {", activeVar)
			for _, v := range versions[f][idx] {
				serial++
				name := fmt.Sprintf("devcheckMutant%d_%s", serial, fd.Name.Name)
				fmt.Fprintf(&sw, "\n\tcase %q:\n\t\t%s", v.mutant, forward(fd, name))
				fmt.Fprintf(&copies, "\n\n%s%s%s", v.beforeName, name, v.afterName)
			}
			sw.WriteString("\n\t}\n")
			at := fset.Position(fd.Body.Lbrace).Offset + 1
			out.Write(orig[last:at])
			out.WriteString(sw.String())
			last = at
		}
		out.Write(orig[last:])
		out.Write(copies.Bytes())
		out.WriteString("\n")
		res.Files[f] = out.Bytes()
		packages[path.Dir(f)] = of.Name.Name
	}
	for dir, pkg := range packages {
		res.Files[path.Join(dir, generatedFile)] = fmt.Appendf(nil,
			"// Code generated by course dev check (mutant schemata). DO NOT EDIT.\n\npackage %s\n\nimport \"os\"\n\n// %s names the mutant this test binary runs, or none.\nvar %s = os.Getenv(%q)\n",
			pkg, activeVar, activeVar, EnvVar)
	}
	return res
}

// version is one mutant's text of a function: the declaration, cut around the function's name.
type version struct {
	mutant                string
	beforeName, afterName string
}

// changedFuncs compares the original file (of, parsed from orig) with the mutated one (mf, from
// src) declaration by declaration. It returns the mutated version of every declaration that
// differs, by index, or why the mutation cannot be woven in.
func changedFuncs(fset *token.FileSet, orig []byte, of *ast.File, mset *token.FileSet, src []byte, mf *ast.File) (map[int]version, string) {
	if of.Name.Name != mf.Name.Name {
		return nil, "it changes the package name"
	}
	// Import declarations come first in a Go file; they are compared as sets of imports, the
	// other declarations one by one.
	oImports, mImports := importDecls(of), importDecls(mf)
	if len(of.Decls)-oImports != len(mf.Decls)-mImports {
		return nil, "it adds or removes declarations"
	}
	if why := checkImports(of, mf); why != "" {
		return nil, why
	}
	text := func(fs *token.FileSet, b []byte, from, to token.Pos) string {
		return string(b[fs.Position(from).Offset:fs.Position(to).Offset])
	}
	changed := map[int]version{}
	for i := oImports; i < len(of.Decls); i++ {
		od, md := of.Decls[i], mf.Decls[i-oImports+mImports]
		if text(fset, orig, od.Pos(), od.End()) == text(mset, src, md.Pos(), md.End()) {
			continue
		}
		ofd, ok1 := od.(*ast.FuncDecl)
		mfd, ok2 := md.(*ast.FuncDecl)
		if !ok1 || !ok2 || ofd.Body == nil || mfd.Body == nil {
			return nil, "it changes a declaration that is not a function body"
		}
		if text(fset, orig, ofd.Pos(), ofd.Body.Lbrace) != text(mset, src, mfd.Pos(), mfd.Body.Lbrace) {
			return nil, "it changes the signature of " + ofd.Name.Name
		}
		if why := forwardable(ofd); why != "" {
			return nil, why
		}
		changed[i] = version{
			beforeName: text(mset, src, mfd.Pos(), mfd.Name.Pos()),
			afterName:  text(mset, src, mfd.Name.End(), mfd.End()),
		}
	}
	return changed, ""
}

// forwardable says why fd's switch cannot call another version of fd with fd's own receiver
// and parameters, or "" when it can: each must have a name other than _.
func forwardable(fd *ast.FuncDecl) string {
	if fd.Name.Name == "init" && fd.Recv == nil {
		return "it changes an init function"
	}
	lists := []*ast.FieldList{fd.Type.Params}
	if fd.Recv != nil {
		lists = append(lists, fd.Recv)
	}
	if fd.Type.TypeParams != nil {
		lists = append(lists, fd.Type.TypeParams)
	}
	for _, l := range lists {
		if l == nil {
			continue
		}
		for _, f := range l.List {
			if len(f.Names) == 0 {
				return "a parameter or receiver of " + fd.Name.Name + " has no name"
			}
			for _, n := range f.Names {
				if n.Name == "_" {
					return "a parameter or receiver of " + fd.Name.Name + " is named _"
				}
			}
		}
	}
	return ""
}

// forward returns the statement that calls name, a version of fd, with fd's receiver, type
// parameters and parameters, and returns what it returns.
func forward(fd *ast.FuncDecl, name string) string {
	var call strings.Builder
	if fd.Recv != nil {
		call.WriteString(fd.Recv.List[0].Names[0].Name + ".")
	}
	call.WriteString(name)
	if fd.Type.TypeParams != nil {
		var tps []string
		for _, f := range fd.Type.TypeParams.List {
			for _, n := range f.Names {
				tps = append(tps, n.Name)
			}
		}
		call.WriteString("[" + strings.Join(tps, ", ") + "]")
	}
	var args []string
	for _, f := range fd.Type.Params.List {
		for _, n := range f.Names {
			args = append(args, n.Name)
		}
	}
	call.WriteString("(" + strings.Join(args, ", "))
	if l := fd.Type.Params.List; len(l) > 0 {
		if _, variadic := l[len(l)-1].Type.(*ast.Ellipsis); variadic {
			call.WriteString("...")
		}
	}
	call.WriteString(")")
	if fd.Type.Results != nil && len(fd.Type.Results.List) > 0 {
		return "return " + call.String()
	}
	return call.String() + "\n\t\treturn"
}

// importDecls returns how many declarations at the start of f are import declarations.
func importDecls(f *ast.File) int {
	n := 0
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); !ok || gd.Tok != token.IMPORT {
			break
		}
		n++
	}
	return n
}

// checkImports says why the mutated file mf, woven into the original of, might compile where mf
// on its own would not, or "" when it cannot. mf may only drop imports, and only ones it no
// longer uses: the woven file keeps of's imports, so an import mf still declares but no longer
// uses (on its own: "imported and not used") or a name mf uses whose import it dropped (on its
// own: undefined) would compile woven in. Everything else that would not compile on its own
// (a variable declared and not used) does not compile woven in either: the mutated bodies are
// copied into the build as they are.
func checkImports(of, mf *ast.File) string {
	orig, kept := imports(of), imports(mf)
	for key := range kept {
		if !orig[key] {
			return "it adds the import " + key
		}
	}
	// Build parses without object resolution, so every x of a selector x.y counts, a local
	// name too; a file with a local name spelled like one of its imports is beyond this check.
	oUsed, mUsed := labsrc.SelectorRoots(of), labsrc.SelectorRoots(mf)
	for _, spec := range of.Imports {
		key := importKey(spec)
		name, named := importName(spec)
		switch {
		case kept[key] && named && oUsed[name] && !mUsed[name]:
			return "it no longer uses " + name // and keeps its import: "imported and not used"
		case kept[key]:
		case !named || !oUsed[name]:
			return "it drops the import " + key // whose uses this check cannot find
		case mUsed[name]:
			return "it uses " + name + " without importing it"
		}
	}
	return ""
}

// imports returns the keys (importKey) of f's imports.
func imports(f *ast.File) map[string]bool {
	keys := map[string]bool{}
	for _, spec := range f.Imports {
		keys[importKey(spec)] = true
	}
	return keys
}

// importKey is an import as written: its name, if it has one, and its path.
func importKey(spec *ast.ImportSpec) string {
	if spec.Name != nil {
		return spec.Name.Name + " " + spec.Path.Value
	}
	return spec.Path.Value
}

// importName returns the name an import declares in the file, when it is one a selector can use:
// its own name, or the name the package most likely has (labsrc.AssumedName; a package whose
// name is guessed wrongly is never seen as used, so a mutation that drops it is refused). Blank
// and dot imports declare none.
func importName(spec *ast.ImportSpec) (string, bool) {
	if spec.Name != nil {
		if spec.Name.Name == "_" || spec.Name.Name == "." {
			return "", false
		}
		return spec.Name.Name, true
	}
	p, err := strconv.Unquote(spec.Path.Value)
	if err != nil {
		return "", false
	}
	return labsrc.AssumedName(p), true
}
