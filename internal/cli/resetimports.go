package cli

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// dropImportsUnusedAfter removes from after (a file as `course reset` rewrote it) the imports
// that before (the same file with the learner's code) used and after no longer uses: the ones
// the learner added for the code the reset took away. Without this the reset file would not
// compile ("imported and not used"). Only whole import lines are removed; every other byte stays.
// When either version does not parse, or an import does not stand alone on its line, after comes
// back unchanged. It also returns the paths of the removed imports.
func dropImportsUnusedAfter(before, after []byte) ([]byte, []string) {
	oldFile, err := parser.ParseFile(token.NewFileSet(), "", before, 0)
	if err != nil {
		return after, nil
	}
	fset := token.NewFileSet()
	newFile, err := parser.ParseFile(fset, "", after, 0)
	if err != nil {
		return after, nil
	}
	usedBefore, usedNow := packageRefs(oldFile), packageRefs(newFile)
	type cut struct{ start, end int }
	var cuts []cut
	var removed []string
	for _, decl := range newFile.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.IMPORT {
			continue
		}
		var drop []*ast.ImportSpec
		for _, s := range gen.Specs {
			spec := s.(*ast.ImportSpec)
			importPath, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				continue
			}
			name := importName(importPath)
			if spec.Name != nil {
				name = spec.Name.Name
			}
			if name != "_" && name != "." && usedBefore[name] && !usedNow[name] {
				drop = append(drop, spec)
			}
		}
		if len(drop) == 0 {
			continue
		}
		if !gen.Lparen.IsValid() {
			// import "time" on its own: the whole declaration goes. (An import block that loses
			// every line stays as an empty "import ()", which is valid Go.)
			start, end, ok := wholeLines(after, fset.Position(gen.Pos()).Offset, fset.Position(gen.End()).Offset)
			if !ok {
				return after, nil
			}
			cuts = append(cuts, cut{start, end})
		} else {
			for _, spec := range drop {
				start, end, ok := wholeLines(after, fset.Position(spec.Pos()).Offset, fset.Position(spec.End()).Offset)
				if !ok {
					return after, nil
				}
				cuts = append(cuts, cut{start, end})
			}
		}
		for _, spec := range drop {
			p, _ := strconv.Unquote(spec.Path.Value)
			removed = append(removed, p)
		}
	}
	if len(cuts) == 0 {
		return after, nil
	}
	slices.SortFunc(cuts, func(a, b cut) int { return a.start - b.start })
	var out bytes.Buffer
	last := 0
	for _, c := range cuts {
		out.Write(after[last:c.start])
		last = c.end
	}
	out.Write(after[last:])
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

// packageRefs returns the names x of every selector x.y whose x is not declared in the file,
// which is how a file refers to an imported package.
func packageRefs(f *ast.File) map[string]bool {
	refs := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil { //nolint:staticcheck // Obj is what tells a package from a local name here
				refs[id.Name] = true
			}
		}
		return true
	})
	return refs
}

// importName is the package name an import path most likely has: its last element, skipping a
// major-version suffix, without a "go-" prefix, up to the first character that cannot be in an
// identifier. A wrong guess is harmless: the name is never seen as used, so it is never removed.
func importName(importPath string) string {
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
