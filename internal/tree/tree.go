// Package tree materialises checkpoint trees: the learner's module at a chapter's target, its
// parent, its starter, a progressive stage between the two, or a mutant of the target.
//
// Every tree is derived from the reference under solutions/tinypi and the chapter manifests, as
// docs/authoring.md describes; nothing here keeps a second copy of course code.
package tree

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"

	"github.com/learn-tinypi/course/internal/chaptersrc"
	"github.com/learn-tinypi/course/internal/labsrc"
	"github.com/learn-tinypi/course/internal/manifest"
)

// SourceDir is the folder of the reference package, relative to the root of the course content.
// Chapter files are relative to it, and land at the root of a learner tree.
const SourceDir = "solutions/tinypi"

// Tree is a set of files, keyed by slash-separated paths relative to the tree root.
type Tree map[string][]byte

// Builder builds trees from the course content.
type Builder struct {
	fsys     fs.FS
	course   *manifest.Course
	versions map[string]string // module path → version, from the kit's go.mod
	goSum    []byte            // the kit's go.sum
	memo     *fileMemo         // work on Go files done once (memo.go)
}

// NewBuilder loads the manifests from fsys (the course content, rooted at the repository root)
// and the kit's go.mod and go.sum, which give the learner's module its versions and checksums.
func NewBuilder(fsys fs.FS) (*Builder, error) {
	c, err := manifest.Load(fsys)
	if err != nil {
		return nil, fmt.Errorf("loading the course manifests: %w", err)
	}
	data, err := fs.ReadFile(fsys, "go.mod")
	if err != nil {
		return nil, fmt.Errorf("reading the kit's go.mod: %w", err)
	}
	kitMod, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		return nil, fmt.Errorf("parsing the kit's go.mod: %w", err)
	}
	versions := map[string]string{}
	for _, r := range kitMod.Require {
		versions[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range c.Requires {
		if versions[r] == "" {
			return nil, fmt.Errorf("checkpoints/course.yaml requires %s, but the kit's go.mod does not require it, so the learner's module would have no version for it", r)
		}
	}
	goSum, err := fs.ReadFile(fsys, "go.sum")
	if err != nil {
		return nil, fmt.Errorf("reading the kit's go.sum: %w", err)
	}
	return &Builder{fsys: fsys, course: c, versions: versions, goSum: goSum, memo: newFileMemo()}, nil
}

// Course returns the loaded course.
func (b *Builder) Course() *manifest.Course { return b.course }

// Target returns the tree of ch's target: the learner's go.mod and go.sum and every file owned
// by the chapters whose files are in ch's trees (manifest.Course.InTree: the rebuild chapters up
// to ch, and the observe chapters that observe one of them), with lab markers removed. The
// target of an observe chapter is the target of the chapter it observes.
func (b *Builder) Target(ch *manifest.Chapter) (Tree, error) {
	if err := b.check(ch); err != nil {
		return nil, err
	}
	rc := b.rebuildChapter(ch)
	return b.build(rc, len(rc.Labs), nil, nil)
}

// rebuildChapter returns the chapter whose trees ch has: ch itself, or for an observe chapter the
// chapter it observes.
func (b *Builder) rebuildChapter(ch *manifest.Chapter) *manifest.Chapter {
	if y := b.course.Observed(ch); y != nil {
		return y
	}
	return ch
}

// Parent returns the target of the chapter manifest.Course.Parent names: for a rebuild chapter
// the previous rebuild chapter (an empty module, go.mod and go.sum only, for the first), for an
// observe chapter the chapter it observes.
func (b *Builder) Parent(ch *manifest.Chapter) (Tree, error) {
	if err := b.check(ch); err != nil {
		return nil, err
	}
	if p := b.course.Parent(ch); p != nil {
		return b.Target(p)
	}
	return b.module(Tree{})
}

// Starter returns ch's starter: its parent plus ch's teaching files with every lab of ch stubbed,
// plus ch's focused tests (and the files of observe chapters that observe ch). An observe
// chapter stubs nothing: its starter is its target.
func (b *Builder) Starter(ch *manifest.Chapter) (Tree, error) {
	return b.Progressive(ch, 0)
}

// Progressive returns ch's tree with labs[:k] from the reference and labs[k:] stubbed (k counts
// from 0: Progressive(ch, 0) is the starter, Progressive(ch, len(ch.Labs)) the target). For an
// observe chapter every stage is its target.
func (b *Builder) Progressive(ch *manifest.Chapter, k int) (Tree, error) {
	if err := b.check(ch); err != nil {
		return nil, err
	}
	if k < 0 || k > len(ch.Labs) {
		return nil, fmt.Errorf("chapter %s: progressive stage %d out of range 0..%d", ch.Number, k, len(ch.Labs))
	}
	if !ch.Rebuild() {
		return b.Target(ch)
	}
	return b.build(ch, k, nil, nil)
}

// ProgressiveMarked is Progressive(ch, k) for a rebuild chapter, except that the regions of the
// labs in marked that are kept as reference code (labs of earlier chapters, and labs of ch before
// k) keep their //lab:begin and //lab:end markers, so that labsrc.Bodies and labsrc.Regions find
// them; stubbed regions keep theirs as always. `course practice --from` compares and fills these
// regions.
func (b *Builder) ProgressiveMarked(ch *manifest.Chapter, k int, marked []string) (Tree, error) {
	if err := b.check(ch); err != nil {
		return nil, err
	}
	if !ch.Rebuild() {
		return nil, fmt.Errorf("chapter %s is an observe chapter: its trees have no lab regions", ch.Number)
	}
	if k < 0 || k > len(ch.Labs) {
		return nil, fmt.Errorf("chapter %s: progressive stage %d out of range 0..%d", ch.Number, k, len(ch.Labs))
	}
	return b.build(ch, k, nil, marked)
}

// Mutant returns ch's target with the mutant m applied to its file.
func (b *Builder) Mutant(ch *manifest.Chapter, m *manifest.Mutant) (Tree, error) {
	if err := b.check(ch); err != nil {
		return nil, err
	}
	if !slices.Contains(ch.Mutants, m) {
		return nil, fmt.Errorf("chapter %s has no mutant %q", ch.Number, m.Name)
	}
	rc := b.rebuildChapter(ch)
	return b.build(rc, len(rc.Labs), m, nil)
}

// LabFiles returns the paths (relative to the tree root, sorted) of the files that hold a region
// of lab in ch's target, the files `course reset` and `course solution` work on: ch's own files,
// and the files of earlier chapters it extends (manifest.Chapter.Extends).
func (b *Builder) LabFiles(ch *manifest.Chapter, lab *manifest.Lab) ([]string, error) {
	if err := b.checkLab(ch, lab); err != nil {
		return nil, err
	}
	files, err := b.chapterFiles(ch)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range append(files, ch.Extends...) {
		if !strings.HasSuffix(f, ".go") {
			continue
		}
		src, err := b.readGoFile(ch, f)
		if err != nil {
			return nil, fmt.Errorf("chapter %s: %w", ch.Number, err)
		}
		regions, err := labsrc.Regions(src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Join(SourceDir, f), err)
		}
		if slices.ContainsFunc(regions, func(r labsrc.Region) bool { return r.Lab == lab.ID }) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// StubBodies returns the bodies (labsrc.Bodies) of lab's regions in file of ch's starter: the
// TODO line and the stub, as the learner first saw them, ready for labsrc.ReplaceBodies.
func (b *Builder) StubBodies(ch *manifest.Chapter, lab *manifest.Lab, file string) ([]string, error) {
	if err := b.checkLab(ch, lab); err != nil {
		return nil, err
	}
	t, err := b.build(ch, 0, nil, nil)
	if err != nil {
		return nil, err
	}
	return labBodies(t, ch, lab, file)
}

// ReferenceBodies returns the reference code of lab's regions in file, one body per region, in
// the form and indentation they have in ch's target, ready for labsrc.ReplaceBodies
// (labsrc.Dedent makes them stand alone).
func (b *Builder) ReferenceBodies(ch *manifest.Chapter, lab *manifest.Lab, file string) ([]string, error) {
	if err := b.checkLab(ch, lab); err != nil {
		return nil, err
	}
	t, err := b.build(ch, len(ch.Labs), nil, []string{lab.ID})
	if err != nil {
		return nil, err
	}
	return labBodies(t, ch, lab, file)
}

// labBodies returns the bodies of lab's regions in file of t, a tree in which they are marked.
func labBodies(t Tree, ch *manifest.Chapter, lab *manifest.Lab, file string) ([]string, error) {
	src, ok := t[file]
	if !ok {
		return nil, fmt.Errorf("chapter %s: %s is not a file of the chapter's trees", ch.Number, file)
	}
	bodies, err := labsrc.Bodies(src, lab.ID)
	if err != nil {
		return nil, fmt.Errorf("chapter %s: lab %s has no region in %s: %w", ch.Number, lab.ID, file, err)
	}
	return bodies, nil
}

// checkLab makes sure lab is a lab of ch, a rebuild chapter of this builder's course: only those
// labs have code in regions.
func (b *Builder) checkLab(ch *manifest.Chapter, lab *manifest.Lab) error {
	if err := b.check(ch); err != nil {
		return err
	}
	if !ch.Rebuild() {
		return fmt.Errorf("chapter %s is an observe chapter: its labs are read, they have no code to write", ch.Number)
	}
	if !slices.Contains(ch.Labs, lab) {
		return fmt.Errorf("lab %v is not a lab of chapter %s", lab, ch.Number)
	}
	return nil
}

// Sources returns the paths, relative to the root of the course content and sorted, of every
// file ch's trees are built from: the kit's go.mod and go.sum, each file under SourceDir that a
// chapter in ch's trees owns (manifest.Course.TreeChapters), directories expanded, and the files
// those chapters extend (already among them, as an earlier chapter owns each: editing a chapter
// region of a file changes the sources of its owner and of every later chapter). Its target,
// parent's successors, starter, progressive stages and mutants read nothing else of the content
// (the manifests aside), so a proof over them holds as long as these files are unchanged.
func (b *Builder) Sources(ch *manifest.Chapter) ([]string, error) {
	if err := b.check(ch); err != nil {
		return nil, err
	}
	paths := []string{"go.mod", "go.sum"}
	for _, c := range b.course.TreeChapters(ch) {
		files, err := b.chapterFiles(c)
		if err != nil {
			return nil, err
		}
		for _, f := range append(files, c.Extends...) {
			paths = append(paths, path.Join(SourceDir, f))
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths), nil
}

// CheckRegions checks the chapter regions (//chapter:begin NN … //chapter:end) of every Go file
// ch's trees are built from, and of the files ch extends: markers well formed, each region of a
// rebuild chapter that owns the file or lists it under extends:, each file listed under extends:
// holding a region of its chapter, labs of an extending chapter inside its regions, and ch's
// version of the file parsing. It reports every problem found, each naming the file and line.
func (b *Builder) CheckRegions(ch *manifest.Chapter) error {
	sources, err := b.Sources(ch)
	if err != nil {
		return err
	}
	rc := b.rebuildChapter(ch)
	var errs []error
	for _, p := range sources {
		f, ok := strings.CutPrefix(p, SourceDir+"/")
		if !ok || !strings.HasSuffix(f, ".go") {
			continue
		}
		if _, err := b.readGoFile(rc, f); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// UnownedFiles lists the files under solutions/tinypi that no chapter owns; such a file is in no
// learner tree, which is almost always a mistake in the manifests.
func (b *Builder) UnownedFiles() ([]string, error) {
	var unowned []string
	err := fs.WalkDir(b.fsys, SourceDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(p, SourceDir+"/")
		for _, ch := range b.course.Chapters {
			for _, owned := range append(ch.TeachingFiles(), ch.TestFile) {
				if owned != "" && (rel == owned || strings.HasPrefix(rel, owned+"/")) {
					return nil
				}
			}
		}
		unowned = append(unowned, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", SourceDir, err)
	}
	return unowned, nil
}

// check makes sure ch is a chapter of this builder's course.
func (b *Builder) check(ch *manifest.Chapter) error {
	if ch == nil || !slices.Contains(b.course.Chapters, ch) {
		return errors.New("the chapter is not one of this course's chapters")
	}
	return nil
}

// build materialises the files of the chapters in ch's trees, a rebuild chapter. Every Go file is
// first taken in ch's version (chaptersrc.Derive: its chapter regions resolved for ch). The labs of
// ch from index stubFrom on are stubbed, wherever their regions are (ch's files or the files it
// extends); other labs are always taken from the reference. m, when not nil, is applied to ch's
// version of its file. The regions of the labs in marked keep their markers.
func (b *Builder) build(ch *manifest.Chapter, stubFrom int, m *manifest.Mutant, marked []string) (Tree, error) {
	if err := b.check(ch); err != nil {
		return nil, err
	}
	stubbed := map[string]string{}
	for _, l := range ch.Labs[stubFrom:] {
		stubbed[l.ID] = l.PendingMessage()
	}
	t := Tree{}
	applied := false
	seenLabs := map[string]bool{}
	for _, c := range b.course.Chapters {
		if !b.course.InTree(c, ch) {
			continue
		}
		files, err := b.chapterFiles(c)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			var src []byte
			if strings.HasSuffix(f, ".go") {
				src, err = b.readGoFile(ch, f)
			} else {
				src, err = fs.ReadFile(b.fsys, path.Join(SourceDir, f))
			}
			if err != nil {
				return nil, fmt.Errorf("chapter %s: %w", c.Number, err)
			}
			if m != nil && f == m.File {
				if src, err = labsrc.Apply(src, m.Find, m.Replace); err != nil {
					return nil, fmt.Errorf("chapter %s: mutant %s in %s: %w", ch.Number, m.Name, m.File, err)
				}
				applied = true
			}
			if strings.HasSuffix(f, ".go") {
				if src, err = b.goFile(ch, c, f, src, seenLabs, stubbed, marked); err != nil {
					return nil, err
				}
			}
			if f == c.TestFile && b.rebuildChapter(c) != ch {
				if src, err = earlierTests(c, f, src); err != nil {
					return nil, err
				}
			}
			t[f] = src
		}
	}
	for _, c := range b.course.TreeChapters(ch) {
		for _, l := range c.Labs {
			if c.Rebuild() && !seenLabs[l.ID] {
				return nil, fmt.Errorf("chapter %s: lab %s has no //lab:begin %s region in chapter %s's version of the chapter's files", c.Number, l.ID, l.ID, ch.Number)
			}
		}
	}
	if m != nil && !applied {
		return nil, fmt.Errorf("chapter %s: mutant %s: file %s is not in the chapter's target", ch.Number, m.Name, m.File)
	}
	return b.module(t)
}

// earlierTests puts the focused tests src (file f, chapter c's) of a chapter before the tree's
// own behind the build tag manifest.EarlierTestsTag, with a comment that says why, for the
// learner who opens the file.
func earlierTests(c *manifest.Chapter, f string, src []byte) ([]byte, error) {
	if bytes.HasPrefix(src, []byte("//go:build")) {
		return nil, fmt.Errorf("%s/%s: chapter %s's focused tests have a //go:build line of their own; the kit writes one when the file is in a later chapter's tree", SourceDir, f, c.Number)
	}
	head := fmt.Sprintf("//go:build %s\n\n"+
		"// Chapter %s's focused tests. In a later chapter's directory a plain `go test` leaves them\n"+
		"// out and compiles only that chapter's tests; `course test --all` runs them too\n"+
		"// (go test -tags %s).\n\n", manifest.EarlierTestsTag, c.Number, manifest.EarlierTestsTag)
	return append([]byte(head), src...), nil
}

// readGoFile reads the reference Go file f (relative to SourceDir) and returns ch's version of it
// (chaptersrc.Derive), after checking its chapter regions against the manifests: each names a
// rebuild chapter that owns f or lists it under extends, and each chapter that extends f has a
// region in it.
func (b *Builder) readGoFile(ch *manifest.Chapter, f string) ([]byte, error) {
	name := path.Join(SourceDir, f)
	src, err := fs.ReadFile(b.fsys, name)
	if err != nil {
		return nil, err
	}
	chapters, err := b.memo.check(name, src, func() ([]string, error) { return b.checkChapterRegions(name, f, src) })
	if err != nil {
		return nil, err
	}
	if len(chapters) == 0 {
		return src, nil // chaptersrc.Derive gives a file without chapter regions back as it is
	}
	// Two chapters that are at or past the same regions' chapters get the same version of the
	// file: it is derived once (the error of a version that does not parse names the first
	// chapter that asked for it).
	live := 0
	for _, c := range chapters {
		if ch.Number >= c {
			live++
		}
	}
	key := memoKey("derive", name, src, strconv.Itoa(live))
	return b.memo.make(key, func() ([]byte, error) { return chaptersrc.Derive(name, src, ch.Number) })
}

// checkChapterRegions checks the chapter regions of reference file f (name is its path in the
// content) against the manifests, as readGoFile says, and returns the chapters they name, sorted,
// each once.
func (b *Builder) checkChapterRegions(name, f string, src []byte) ([]string, error) {
	regions, err := chaptersrc.Regions(name, src)
	if err != nil {
		return nil, err
	}
	owner := b.course.Owner(f)
	has := map[string]bool{}
	for _, r := range regions {
		has[r.Chapter] = true
		c, err := b.course.Chapter(r.Chapter)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s:%d: //chapter:begin %s: the course has no chapter %s", name, r.BeginLine, r.Chapter, r.Chapter)
		case !c.Rebuild():
			return nil, fmt.Errorf("%s:%d: //chapter:begin %s: chapter %s is an observe chapter; only rebuild chapters extend files", name, r.BeginLine, r.Chapter, r.Chapter)
		case c != owner && !slices.Contains(c.Extends, f):
			return nil, fmt.Errorf("%s:%d: //chapter:begin %s: chapter %s neither owns %s nor lists it under extends: in checkpoints/%s-%s.yaml", name, r.BeginLine, r.Chapter, r.Chapter, f, c.Number, c.Slug)
		}
	}
	if len(regions) > 0 {
		if err := b.checkLabPlaces(name, f, owner, src, regions); err != nil {
			return nil, err
		}
	}
	for _, c := range b.course.Extenders(f) {
		if !has[c.Number] {
			return nil, fmt.Errorf("chapter %s lists %s under extends:, but %s has no //chapter:begin %s region", c.Number, f, name, c.Number)
		}
	}
	chapters := make([]string, 0, len(has))
	for c := range has {
		chapters = append(chapters, c)
	}
	slices.Sort(chapters)
	return chapters, nil
}

// checkLabPlaces checks, in the reference file f (name is its path in the content) with chapter
// regions, that each lab region is of a lab of owner, f's owner, or sits in the live lines of a
// region of its own chapter, which extends f. Lines are the reference file's.
func (b *Builder) checkLabPlaces(name, f string, owner *manifest.Chapter, src []byte, regions []chaptersrc.Region) error {
	labs, err := labsrc.Regions(src)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, l := range labs {
		if owner != nil && slices.ContainsFunc(owner.Labs, func(x *manifest.Lab) bool { return x.ID == l.Lab }) {
			continue
		}
		var of *manifest.Chapter
		for _, e := range b.course.Extenders(f) {
			if slices.ContainsFunc(e.Labs, func(x *manifest.Lab) bool { return x.ID == l.Lab }) {
				of = e
			}
		}
		if of == nil {
			return fmt.Errorf("%s:%d: lab %s is not a lab of the chapter that owns this file, nor of a chapter that extends it", name, l.StartLine, l.Lab)
		}
		inside := slices.ContainsFunc(regions, func(r chaptersrc.Region) bool {
			liveEnd := r.EndLine
			if r.BeforeLine != 0 {
				liveEnd = r.BeforeLine
			}
			return r.Chapter == of.Number && r.BeginLine < l.StartLine && l.EndLine < liveEnd
		})
		if !inside {
			return fmt.Errorf("%s:%d: lab %s of chapter %s, which extends this file, must sit in the live lines of a //chapter:begin %s region", name, l.StartLine, l.Lab, of.Number, of.Number)
		}
	}
	return nil
}

// goFile turns ch's version of one reference Go file, owned by chapter c, into its learner form:
// regions of the labs in stubbed replaced by stubs within their markers, the markers of other
// regions removed unless their lab is in marked, the kit's import path rewritten. Each lab region
// must be of a lab of c or of a chapter in ch's trees that extends the file; the labs found are
// added to seenLabs.
func (b *Builder) goFile(ch, c *manifest.Chapter, f string, src []byte, seenLabs map[string]bool, stubbed map[string]string, marked []string) ([]byte, error) {
	name := path.Join(SourceDir, f)
	regions, err := labsrc.Regions(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for _, r := range regions {
		if !c.Rebuild() {
			return nil, fmt.Errorf("%s:%d: chapter %s is an observe chapter, whose files have no lab regions (found //lab:begin %s)", name, r.StartLine, c.Number, r.Lab)
		}
		if !b.labAllowed(ch, c, f, r.Lab) {
			return nil, fmt.Errorf("%s:%d: lab %s is not a lab of chapter %s, which owns this file, nor of a chapter that extends it", name, r.StartLine, r.Lab, c.Number)
		}
		seenLabs[r.Lab] = true
	}
	key := memoKey("stub", name, src, stubbed, marked, b.course.KitImport, b.course.Module)
	return b.memo.make(key, func() ([]byte, error) {
		out, err := labsrc.StubKeepingMarkers(name, src, stubbed, marked)
		if err != nil {
			return nil, err
		}
		return rewriteImports(name, out, b.course.KitImport, b.course.Module)
	})
}

// labAllowed reports whether a region of lab may be in file f, owned by chapter c, in ch's trees:
// lab is a lab of c or of a chapter in ch's trees that extends f.
func (b *Builder) labAllowed(ch, c *manifest.Chapter, f, lab string) bool {
	isLab := func(x *manifest.Chapter) bool {
		return slices.ContainsFunc(x.Labs, func(l *manifest.Lab) bool { return l.ID == lab })
	}
	if isLab(c) {
		return true
	}
	for _, e := range b.course.Extenders(f) {
		if b.course.InTree(e, ch) && isLab(e) {
			return true
		}
	}
	return false
}

// chapterFiles lists the files c owns, relative to SourceDir, with directories expanded. A file
// the manifest lists but the content lacks is an error.
func (b *Builder) chapterFiles(c *manifest.Chapter) ([]string, error) {
	var files []string
	for _, entry := range append(c.TeachingFiles(), c.TestFile) {
		if entry == "" {
			continue
		}
		full := path.Join(SourceDir, entry)
		info, err := fs.Stat(b.fsys, full)
		if err != nil {
			return nil, fmt.Errorf("chapter %s lists %q, but %s cannot be read: %w", c.Number, entry, full, err)
		}
		if !info.IsDir() {
			files = append(files, entry)
			continue
		}
		err = fs.WalkDir(b.fsys, full, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, strings.TrimPrefix(p, SourceDir+"/"))
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("chapter %s: listing %s: %w", c.Number, full, err)
		}
	}
	return files, nil
}

// module adds the learner's go.mod and go.sum to t. A required module is marked indirect when no
// Go file of t imports a package of it.
func (b *Builder) module(t Tree) (Tree, error) {
	imported, err := importPaths(t)
	if err != nil {
		return nil, err
	}
	f := new(modfile.File)
	if err := f.AddModuleStmt(b.course.Module); err != nil {
		return nil, fmt.Errorf("learner go.mod: %w", err)
	}
	// The go command writes a language version such as "1.26" as the release "1.26.0" and, with
	// -mod=readonly, refuses a go.mod it would write differently.
	goVersion := b.course.GoVersion
	if strings.Count(goVersion, ".") == 1 {
		goVersion += ".0"
	}
	if err := f.AddGoStmt(goVersion); err != nil {
		return nil, fmt.Errorf("learner go.mod: %w", err)
	}
	var reqs []*modfile.Require
	for _, r := range b.course.Requires {
		direct := slices.ContainsFunc(imported, func(p string) bool { return p == r || strings.HasPrefix(p, r+"/") })
		reqs = append(reqs, &modfile.Require{Mod: module.Version{Path: r, Version: b.versions[r]}, Indirect: !direct})
	}
	f.SetRequireSeparateIndirect(reqs)
	f.Cleanup()
	data, err := f.Format()
	if err != nil {
		return nil, fmt.Errorf("learner go.mod: %w", err)
	}
	t["go.mod"] = data
	t["go.sum"] = slices.Clone(b.goSum)
	return t, nil
}

// importPaths returns every import path of the Go files in t.
func importPaths(t Tree) ([]string, error) {
	var paths []string
	for name, src := range t {
		if !strings.HasSuffix(name, ".go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, spec := range f.Imports {
			if p, err := strconv.Unquote(spec.Path.Value); err == nil {
				paths = append(paths, p)
			}
		}
	}
	return paths, nil
}

// rewriteImports replaces the import paths of src that are from or under kitImport by the same
// path under module. Only import specs change; the file is gofmt-ed again when one did.
func rewriteImports(name string, src []byte, kitImport, module string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var out []byte
	last := 0
	for _, spec := range f.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil || (p != kitImport && !strings.HasPrefix(p, kitImport+"/")) {
			continue
		}
		start := fset.Position(spec.Path.Pos()).Offset
		end := fset.Position(spec.Path.End()).Offset
		out = append(out, src[last:start]...)
		out = append(out, strconv.Quote(module+strings.TrimPrefix(p, kitImport))...)
		last = end
	}
	if out == nil {
		return src, nil
	}
	out = append(out, src[last:]...)
	formatted, err := format.Source(out)
	if err != nil {
		return nil, fmt.Errorf("%s: formatting after rewriting imports: %w", name, err)
	}
	return formatted, nil
}

// Paths returns the tree's paths, sorted.
func (t Tree) Paths() []string {
	paths := make([]string, 0, len(t))
	for p := range t {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths
}

// Equal reports whether t and u hold the same paths with the same contents.
func (t Tree) Equal(u Tree) bool {
	if len(t) != len(u) {
		return false
	}
	for p, data := range t {
		other, ok := u[p]
		if !ok || !bytes.Equal(data, other) {
			return false
		}
	}
	return true
}
