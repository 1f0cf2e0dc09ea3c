package labsrc

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/tools/go/ast/astutil"
)

// DropUnusedImports removes from after (a file whose lab bodies were replaced, as `course reset`
// does) the imports that before (the same file before the replacement) used and after no longer
// uses: the ones that only the replaced code needed. Without this the file would not compile
// ("imported and not used"). Only whole import lines are removed; every other byte stays, so a
// learner's file keeps its layout. When either version does not parse, or an import does not
// stand alone on its line, after comes back unchanged. It also returns the paths of the removed
// imports, in file order.
func DropUnusedImports(before, after []byte) ([]byte, []string) {
	oldFile, err := parser.ParseFile(token.NewFileSet(), "", before, 0)
	if err != nil {
		return after, nil
	}
	fset := token.NewFileSet()
	newFile, err := parser.ParseFile(fset, "", after, 0)
	if err != nil {
		return after, nil
	}
	unused := unusedImports(oldFile, newFile)
	if len(unused) == 0 {
		return after, nil
	}
	type cut struct{ start, end int }
	var cuts []cut
	for _, decl := range newFile.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.IMPORT {
			continue
		}
		var drop []ast.Node
		for _, spec := range gen.Specs {
			if slices.Contains(unused, spec.(*ast.ImportSpec)) {
				drop = append(drop, spec)
			}
		}
		if len(drop) == 0 {
			continue
		}
		if !gen.Lparen.IsValid() {
			// import "time" on its own: the whole declaration goes. (An import block that loses
			// every line stays as an empty "import ()", which is valid Go.)
			drop = []ast.Node{gen}
		}
		for _, n := range drop {
			start, end, ok := wholeLines(after, fset.Position(n.Pos()).Offset, fset.Position(n.End()).Offset)
			if !ok {
				return after, nil
			}
			cuts = append(cuts, cut{start, end})
		}
	}
	slices.SortFunc(cuts, func(a, b cut) int { return a.start - b.start })
	var out bytes.Buffer
	last := 0
	for _, c := range cuts {
		out.Write(after[last:c.start])
		last = c.end
	}
	out.Write(after[last:])
	removed := make([]string, len(unused))
	for i, spec := range unused {
		removed[i], _ = strconv.Unquote(spec.Path.Value) // unusedImports unquoted it already
	}
	return out.Bytes(), removed
}

// wholeLines widens [start, end) to the whole lines it is on, line end included, and reports
// whether those lines hold nothing else but white space and a trailing // comment.
func wholeLines(src []byte, start, end int) (int, int, bool) {
	lineStart := bytes.LastIndexByte(src[:start], '\n') + 1
	lineEnd := len(src)
	if i := bytes.IndexByte(src[end:], '\n'); i >= 0 {
		lineEnd = end + i + 1
	}
	if strings.TrimSpace(string(src[lineStart:start])) != "" {
		return 0, 0, false
	}
	rest := strings.TrimSpace(string(src[end:lineEnd]))
	if rest != "" && !strings.HasPrefix(rest, "//") {
		return 0, 0, false
	}
	return lineStart, lineEnd, true
}

// deleteUnusedImports deletes from file the imports that the reference (original) used and file
// no longer uses. Unlike DropUnusedImports it edits the syntax tree, which the stubbed file is
// printed from (gofmt-ed) afterwards.
func deleteUnusedImports(fset *token.FileSet, filename string, original []byte, file *ast.File) error {
	orig, err := parser.ParseFile(token.NewFileSet(), filename, original, 0)
	if err != nil {
		return fmt.Errorf("%s: the reference does not parse: %w", filename, err)
	}
	for _, spec := range unusedImports(orig, file) {
		localName := ""
		if spec.Name != nil {
			localName = spec.Name.Name
		}
		importPath, _ := strconv.Unquote(spec.Path.Value) // unusedImports unquoted it already
		astutil.DeleteNamedImport(fset, file, localName, importPath)
	}
	return nil
}

// unusedImports returns the imports of after, in file order, whose package before refers to and
// after does not. Comparing with before keeps any import whose package name is guessed wrongly:
// it was never seen as used, so it is never removed. Blank and dot imports always stay.
func unusedImports(before, after *ast.File) []*ast.ImportSpec {
	usedBefore, usedNow := SelectorRoots(before), SelectorRoots(after)
	var unused []*ast.ImportSpec
	for _, spec := range after.Imports {
		importPath, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		name := assumedName(importPath)
		if spec.Name != nil {
			name = spec.Name.Name
		}
		if name != "_" && name != "." && usedBefore[name] && !usedNow[name] {
			unused = append(unused, spec)
		}
	}
	return unused
}

// SelectorRoots returns the names x of every selector x.y whose x is not declared in the file,
// which is how a file refers to an imported package (or, in a package of several files, to a
// declaration of another file).
func SelectorRoots(f *ast.File) map[string]bool {
	roots := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil { //nolint:staticcheck // Obj is what tells a package from a local name here
				roots[id.Name] = true
			}
		}
		return true
	})
	return roots
}

// AssumedName is the package name an import path most likely has, as assumedName guesses it:
// the name a file refers to the package by when its import names none.
func AssumedName(importPath string) string { return assumedName(importPath) }

// assumedName is the package name an import path most likely has: its last element, skipping a
// major-version suffix (jsonschema/v6 → jsonschema), without a "go-" prefix, up to the first
// character that cannot be in an identifier (yaml.v3 → yaml). A wrong guess is harmless: the
// name is never seen as used, so the import is never removed.
func assumedName(importPath string) string {
	base := path.Base(importPath)
	if strings.HasPrefix(base, "v") {
		if _, err := strconv.Atoi(base[1:]); err == nil && path.Dir(importPath) != "." {
			base = path.Base(path.Dir(importPath))
		}
	}
	base = strings.TrimPrefix(base, "go-")
	if i := strings.IndexFunc(base, func(r rune) bool {
		return !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r))
	}); i >= 0 {
		base = base[:i]
	}
	return base
}
