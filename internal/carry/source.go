package carry

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/parser"
	"go/scanner"
	"go/token"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ast/astutil"

	"github.com/learn-tinypi/course/internal/labsrc"
	"github.com/learn-tinypi/course/internal/testfiles"
)

// decl is one top-level declaration of a Go file (imports aside).
type decl struct {
	file string
	// keys name what it declares, as the package sees it: "F" for a function F, "T.M" for a
	// method M of T, "N" for each type, variable and constant N. Two declarations with a key in
	// common cannot be in one package.
	keys []string
	// refs are the names code uses to refer to it: F, M, N.
	refs    []string
	display string // "F", "(*T).M", "N": how a message names it
	text    string // its source, doc comment included
}

// fileDecls parses the Go file name and returns its package name, its top-level declarations in
// source order and whether it has a build constraint (a //go:build line), which keeps it out of
// some builds.
func fileDecls(name string, src []byte) (pkg string, decls []decl, constrained bool, err error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return "", nil, false, err
	}
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build") {
				constrained = true
			}
		}
	}
	for _, d := range f.Decls {
		var x decl
		switch d := d.(type) {
		case *ast.FuncDecl:
			x = funcDecl(d)
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			x = genDecl(d)
		default:
			continue
		}
		x.file = name
		x.text = declText(fset, src, d)
		decls = append(decls, x)
	}
	return f.Name.Name, decls, constrained, nil
}

// funcDecl describes a function or method declaration.
func funcDecl(d *ast.FuncDecl) decl {
	name := d.Name.Name
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return decl{keys: []string{name}, refs: []string{name}, display: name}
	}
	typ, star := testfiles.ReceiverType(d.Recv.List[0].Type)
	if typ == "" {
		typ = "?"
	}
	display := typ + "." + name
	if star {
		display = "(*" + typ + ")." + name
	}
	return decl{keys: []string{typ + "." + name}, refs: []string{name}, display: display}
}

// genDecl describes a type, var or const declaration: every name it declares.
func genDecl(d *ast.GenDecl) decl {
	var x decl
	for _, spec := range d.Specs {
		switch s := spec.(type) {
		case *ast.TypeSpec:
			x.keys = append(x.keys, s.Name.Name)
		case *ast.ValueSpec:
			for _, n := range s.Names {
				if n.Name != "_" {
					x.keys = append(x.keys, n.Name)
				}
			}
		}
	}
	x.refs = x.keys
	x.display = strings.Join(x.keys, ", ")
	return x
}

// declText returns the source of d, its doc comment included.
func declText(fset *token.FileSet, src []byte, d ast.Decl) string {
	return string(src[fset.Position(declStart(d)).Offset:fset.Position(d.End()).Offset])
}

// declStart is where d starts in its file: at its doc comment when it has one.
func declStart(d ast.Decl) token.Pos {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Doc != nil {
			return d.Doc.Pos()
		}
	case *ast.GenDecl:
		if d.Doc != nil {
			return d.Doc.Pos()
		}
	}
	return d.Pos()
}

// enclosing returns the source of the top-level declaration of src around line (from 1), doc
// comment included, and how a message names it; ok is false when line is in none.
func enclosing(src []byte, line int) (text, display string, ok bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return "", "", false
	}
	for _, d := range f.Decls {
		start, end := declStart(d), d.End()
		if fset.Position(start).Line > line || fset.Position(end).Line < line {
			continue
		}
		switch d := d.(type) {
		case *ast.FuncDecl:
			display = funcDecl(d).display
		case *ast.GenDecl:
			display = genDecl(d).display
		}
		return declText(fset, src, d), display, true
	}
	return "", "", false
}

// identifiers returns every identifier in code, a piece of Go source that need not parse on
// its own (a lab's body). Names of fields and methods after a dot count too: a learner's
// helper method is called as x.helper().
func identifiers(code string) map[string]bool {
	ids := map[string]bool{}
	scan(code, func(tok token.Token, lit string) {
		if tok == token.IDENT {
			ids[lit] = true
		}
	})
	return ids
}

// scan calls fn with each token of code; comments are skipped.
func scan(code string, fn func(tok token.Token, lit string)) {
	var s scanner.Scanner
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(code))
	s.Init(file, []byte(code), func(token.Position, string) {}, 0)
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return
		}
		fn(tok, lit)
	}
}

// fileImport is one import of a file: the name the file uses for it and its path.
type fileImport struct{ name, path string }

// fileImports returns the imports of src by the name the file refers to them with (an explicit
// name, or the package name its path suggests: labsrc.AssumedName). Blank and dot imports are
// left out: no code refers to them by name.
func fileImports(src []byte) (map[string]fileImport, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	out := map[string]fileImport{}
	for _, spec := range f.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		imp := fileImport{name: labsrc.AssumedName(p), path: p}
		if spec.Name != nil {
			imp.name = spec.Name.Name
		}
		if imp.name == "_" || imp.name == "." {
			continue
		}
		out[imp.name] = imp
	}
	return out, nil
}

// addImports adds imports to src, each under its own name when that is not the name its path
// suggests, and returns the file gofmt-ed.
func addImports(name string, src []byte, imports []fileImport) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	for _, imp := range imports {
		local := imp.name
		if local == labsrc.AssumedName(imp.path) {
			local = ""
		}
		astutil.AddNamedImport(fset, f, local, imp.path)
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
