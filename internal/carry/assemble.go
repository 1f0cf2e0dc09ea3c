package carry

import (
	"errors"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/learn-tinypi/course/internal/labsrc"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/tree"
)

// learnerDecls returns the learner's own top-level declarations in the Go files at PREV's root
// (tests excepted), in file and source order: every declaration whose names are all absent from
// prevStarter, the kit's start of PREV (so the helpers a carried PREV got from the learner's
// earlier work count as theirs too). A declaration that mixes the kit's names and new ones (a
// constant added to the kit's block) is not the learner's alone, and stays behind; so does a file
// of another package or with a build constraint. A file that does not parse is refused.
func learnerDecls(prev *prevDir, prevStarter tree.Tree) ([]decl, error) {
	kit := map[string]bool{}
	pkg := ""
	for _, p := range prevStarter.Paths() {
		if !rootGo(p) || isTestFile(p) {
			continue
		}
		name, decls, _, err := fileDecls(p, prevStarter[p])
		if err != nil {
			return nil, fmt.Errorf("the kit's %s: %w", p, err)
		}
		pkg = name
		for _, d := range decls {
			for _, k := range d.keys {
				kit[k] = true
			}
		}
	}
	files, err := prev.goFiles()
	if err != nil {
		return nil, err
	}
	var out []decl
	for _, f := range files {
		src, err := prev.read(f)
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue // gone since it was listed
		case err != nil:
			return nil, err
		}
		name, decls, constrained, err := fileDecls(f, src)
		if err != nil {
			return nil, &Refusal{Kind: RefuseSyntax, File: f, Detail: err.Error()}
		}
		if constrained || name != pkg {
			continue
		}
		for _, d := range decls {
			if len(d.keys) > 0 && !slices.ContainsFunc(d.keys, func(k string) bool { return kit[k] }) {
				out = append(out, d)
			}
		}
	}
	return out, nil
}

// reach returns the indexes of the declarations of helpers that code with the identifiers ids
// needs, directly or through other helpers, in order.
func reach(ids map[string]bool, helpers []decl) []int {
	ids = maps.Clone(ids)
	in := make([]bool, len(helpers))
	for grew := true; grew; {
		grew = false
		for i, d := range helpers {
			if in[i] || !slices.ContainsFunc(d.refs, func(r string) bool { return ids[r] }) {
				continue
			}
			in[i], grew = true, true
			maps.Copy(ids, identifiers(d.text))
		}
	}
	var out []int
	for i, ok := range in {
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// bodyIdentifiers returns the identifiers of every body of the labs in labs.
func bodyIdentifiers(labs []*owned) map[string]bool {
	ids := map[string]bool{}
	for _, o := range labs {
		for _, bodies := range o.bodies {
			for _, body := range bodies {
				maps.Copy(ids, identifiers(body))
			}
		}
	}
	return ids
}

// needed returns the helpers the carried labs' code needs, in order.
func needed(carried []*owned, helpers []decl) []decl {
	var out []decl
	for _, i := range reach(bodyIdentifiers(carried), helpers) {
		out = append(out, helpers[i])
	}
	return out
}

// treeKeys returns the keys of every top-level declaration of the Go files at t's root, tests
// included: a test helper shares the package too.
func treeKeys(t tree.Tree) map[string]bool {
	keys := map[string]bool{}
	for p, src := range t {
		if !rootGo(p) {
			continue
		}
		_, decls, _, err := fileDecls(p, src)
		if err != nil {
			continue
		}
		for _, d := range decls {
			for _, k := range d.keys {
				keys[k] = true
			}
		}
	}
	return keys
}

// clashes adds to fallback every lab not already there whose code needs a helper of the
// learner's with the name of a declaration of chapter to (which would not compile, or would
// quietly mean the kit's declaration): its reference code is used instead.
func clashes(tc *treeCache, from, to *manifest.Chapter, toStarter tree.Tree, labs []*owned, helpers []decl, fallback map[string]practice.LabOrigin) error {
	toKeys := treeKeys(toStarter)
	for _, o := range labs {
		if _, ok := fallback[o.lab.ID]; ok {
			continue
		}
		for _, i := range reach(bodyIdentifiers([]*owned{o}), helpers) {
			d := helpers[i]
			k := slices.IndexFunc(d.keys, func(k string) bool { return toKeys[k] })
			if k < 0 {
				continue
			}
			changed, err := firstWithKey(tc, from, to, d.keys[k])
			if err != nil {
				return err
			}
			fallback[o.lab.ID] = practice.LabOrigin{Lab: o.lab.ID, Source: practice.SourceReference,
				Reason: practice.ReasonClash, Changed: changed, File: d.file, Decl: d.display}
			break
		}
	}
	return nil
}

// firstWithKey returns the first rebuild chapter after from, up to to, whose target declares key.
func firstWithKey(tc *treeCache, from, to *manifest.Chapter, key string) (string, error) {
	for _, ch := range tc.b.Course().Chapters {
		if !ch.Rebuild() || ch.Number <= from.Number || ch.Number >= to.Number {
			continue
		}
		t, err := tc.target(ch)
		if err != nil {
			return "", err
		}
		if treeKeys(t)[key] {
			return ch.Number, nil
		}
	}
	return to.Number, nil
}

// assemble builds chapter to's starter with the bodies of the carried labs in their regions
// (which keep their markers), the helpers they need appended to the file of the same name (a
// new file when to's tree has none), the imports of PREV that the carried code uses added, and
// the imports only the replaced reference code used removed. Every file it changes is gofmt-ed.
func assemble(b *tree.Builder, to *manifest.Chapter, prev *prevDir, carried []*owned, helpers []decl) (tree.Tree, []Helper, error) {
	ids := make([]string, len(carried))
	for i, o := range carried {
		ids[i] = o.lab.ID
	}
	out, err := b.ProgressiveMarked(to, 0, ids)
	if err != nil {
		return nil, nil, err
	}
	base := maps.Clone(out)
	code := map[string][]string{} // file → the learner's code placed in it
	for _, o := range carried {
		for _, f := range sortedKeys(o.bodies) {
			if out[f], err = labsrc.ReplaceBodies(out[f], o.lab.ID, o.bodies[f]); err != nil {
				return nil, nil, fmt.Errorf("chapter %s: lab %s in %s: %w", to.Number, o.lab.ID, f, err)
			}
			code[f] = append(code[f], o.bodies[f]...)
		}
	}
	var placed []Helper
	created := map[string]bool{}
	for _, d := range helpers {
		src, ok := out[d.file]
		if !ok {
			pkg, err := packageName(prev, d.file)
			if err != nil {
				return nil, nil, err
			}
			src, created[d.file] = []byte("package "+pkg+"\n"), true
		}
		out[d.file] = []byte(strings.TrimRight(string(src), "\n") + "\n\n" + d.text + "\n")
		code[d.file] = append(code[d.file], d.text)
		placed = append(placed, Helper{File: d.file, Name: d.display})
	}
	for _, f := range sortedKeys(code) {
		if out[f], err = fixImports(prev, f, out[f]); err != nil {
			return nil, nil, err
		}
		if !created[f] {
			out[f], _ = labsrc.DropUnusedImports(base[f], out[f])
		}
		if formatted, err := format.Source(out[f]); err == nil {
			out[f] = formatted
		}
	}
	return out, placed, nil
}

// packageName returns the package name of PREV's Go file f.
func packageName(prev *prevDir, f string) (string, error) {
	src, err := prev.read(f)
	if err != nil {
		return "", err
	}
	file, err := parser.ParseFile(token.NewFileSet(), f, src, parser.PackageClauseOnly)
	if err != nil {
		return "", &Refusal{Kind: RefuseSyntax, File: f, Detail: err.Error()}
	}
	return file.Name.Name, nil
}

// fixImports adds to src, file f of the new tree, the imports of PREV's f that src refers to
// (x.y where x is declared nowhere in the file) and does not import: the ones the learner's
// code brought. A file that does not parse comes back as it is; the proof's build reports it.
func fixImports(prev *prevDir, f string, src []byte) ([]byte, error) {
	prevSrc, err := prev.read(f)
	if err != nil {
		return nil, err
	}
	theirs, err := fileImports(prevSrc)
	if err != nil {
		return src, nil
	}
	ours, err := fileImports(src)
	if err != nil {
		return src, nil
	}
	roots, ok := unresolvedRoots(src)
	if !ok {
		return src, nil
	}
	var add []fileImport
	for _, name := range sortedKeys(roots) {
		imp, ok := theirs[name]
		if _, have := ours[name]; ok && !have {
			add = append(add, imp)
		}
	}
	if len(add) == 0 {
		return src, nil
	}
	out, err := addImports(f, src, add)
	if err != nil {
		return src, nil
	}
	return out, nil
}

// unresolvedRoots returns the names x of every selector x.y in src whose x is not declared in
// the file: a package (imported or not), or a declaration of another file.
func unresolvedRoots(src []byte) (map[string]bool, bool) {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, 0)
	if err != nil {
		return nil, false
	}
	return labsrc.SelectorRoots(f), true
}
