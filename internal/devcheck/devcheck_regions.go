package devcheck

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/learn-tinypi/course/internal/chaptersrc"
	"github.com/learn-tinypi/course/internal/labsrc"
	"github.com/learn-tinypi/course/internal/linediff"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// Names of the checks of chapter regions (docs/authoring.md, "Later chapters extend earlier
// files"). That every earlier chapter's focused tests still pass on a chapter's target is rule 1:
// the target holds their test files, and `go test -race ./...` runs them all.
const (
	regionsCheck = "regions: every //chapter: marker is well formed and matches the manifests' extends:"
	markersCheck = "regions: no //chapter: marker reaches a learner tree (target, parent, starter, stages, mutants)"
	parentCheck  = "parent: the starter is the parent's target except in the chapter's own files and its chapter regions"
)

// regionTasks are the checks of chapter regions for ch: markers well formed, none in a learner
// tree, and, for a rebuild chapter, nothing but its own files and regions between its parent and
// its starter. None runs go.
func regionTasks(b *tree.Builder, ch *manifest.Chapter) []task {
	tasks := []task{{
		name: regionsCheck,
		run: func(context.Context, string) (Check, error) {
			if err := b.CheckRegions(ch); err != nil {
				return fail("%v", err), nil
			}
			return pass(), nil
		},
	}, {
		name: markersCheck,
		run: func(context.Context, string) (Check, error) {
			return checkNoMarkers(b, ch), nil
		},
	}}
	if ch.Rebuild() {
		tasks = append(tasks, task{
			name: parentCheck,
			run: func(context.Context, string) (Check, error) {
				return checkParent(b, ch), nil
			},
		})
	}
	return tasks
}

// checkNoMarkers builds every learner tree of ch and names each file in which a line is a chapter
// marker: chapter regions are resolved by the kit, a learner never sees them.
func checkNoMarkers(b *tree.Builder, ch *manifest.Chapter) Check {
	type build struct {
		name string
		tree func() (tree.Tree, error)
	}
	builds := []build{
		{"target", func() (tree.Tree, error) { return b.Target(ch) }},
		{"parent", func() (tree.Tree, error) { return b.Parent(ch) }},
	}
	if ch.Rebuild() {
		for k := range len(ch.Labs) + 1 {
			name := fmt.Sprintf("stage %d", k)
			if k == 0 {
				name = "starter"
			}
			builds = append(builds, build{name, func() (tree.Tree, error) { return b.Progressive(ch, k) }})
		}
	}
	for _, m := range ch.Mutants {
		builds = append(builds, build{"mutant " + m.Name, func() (tree.Tree, error) { return b.Mutant(ch, m) }})
	}
	var problems []string
	for _, bl := range builds {
		t, err := bl.tree()
		if err != nil {
			problems = append(problems, fmt.Sprintf("building the %s: %v", bl.name, err))
			continue
		}
		for _, p := range t.Paths() {
			if n := chaptersrc.MarkerLine(t[p]); n != 0 {
				problems = append(problems, fmt.Sprintf("%s:%d of the %s is a chapter marker (regions work in Go files only; the kit resolves them)", p, n, bl.name))
			}
		}
	}
	if len(problems) > 0 {
		return Check{Detail: strings.Join(problems, "\n")}
	}
	return pass()
}

// checkParent proves that ch's starter is its parent (the previous rebuild chapter's target) plus
// only what ch brings: its own files (and those of observe chapters joining at ch) are new, the
// files ch extends differ from the parent's only by lines of ch's chapter regions and of ch's
// stubbed labs (and by gofmt realigning a line), go.mod at most in which requirements are
// indirect, the previous chapter's focused tests are the parent's behind the build tag
// manifest.EarlierTestsTag, and every other file is byte for byte the parent's.
func checkParent(b *tree.Builder, ch *manifest.Chapter) Check {
	parent, err := b.Parent(ch)
	if err != nil {
		return fail("building the parent: %v", err)
	}
	starter, err := b.Starter(ch)
	if err != nil {
		return fail("building the starter: %v", err)
	}
	own, err := newFiles(b, ch)
	if err != nil {
		return fail("%v", err)
	}
	var problems []string
	for _, p := range parent.Paths() {
		if _, ok := starter[p]; !ok {
			problems = append(problems, fmt.Sprintf("%s is in the parent but not in the starter", p))
		}
	}
	for _, p := range starter.Paths() {
		old, inParent := parent[p]
		switch {
		case !inParent && !own[p]:
			problems = append(problems, fmt.Sprintf("%s is in the starter, but is neither in the parent nor a file of chapter %s", p, ch.Number))
		case !inParent || bytes.Equal(old, starter[p]):
		case p == "go.mod":
			if a, b := modRequirements(old), modRequirements(starter[p]); a != b {
				problems = append(problems, fmt.Sprintf("go.mod of the starter differs from the parent's beyond which requirements are // indirect:\nparent:  %s\nstarter: %s", a, b))
			}
		case earlierTestsTagged(b.Course(), p, old, starter[p]):
			// The previous chapter's own focused tests, now behind the build tag: the file is
			// the parent's, with the //go:build line and its comment before it.
		case slices.Contains(ch.Extends, p):
			raw, err := fs.ReadFile(b.FS(), path.Join(tree.SourceDir, p))
			if err != nil {
				return fail("%v", err)
			}
			problems = append(problems, extendedFileProblems(ch, p, raw, old, starter[p])...)
		default:
			problems = append(problems, fmt.Sprintf("%s differs from the parent's, but chapter %s neither owns it nor extends it", p, ch.Number))
		}
	}
	if len(problems) > 0 {
		return Check{Detail: strings.Join(problems, "\n")}
	}
	return pass()
}

// earlierTestsTagged reports whether now is then, the focused test file p of a chapter, put
// behind manifest.EarlierTestsTag as a later chapter's trees have it: a //go:build line and a
// comment before the same bytes.
func earlierTestsTagged(c *manifest.Course, p string, then, now []byte) bool {
	if !slices.ContainsFunc(c.Chapters, func(x *manifest.Chapter) bool { return x.TestFile == p }) {
		return false
	}
	return bytes.HasPrefix(now, []byte("//go:build "+manifest.EarlierTestsTag+"\n")) && bytes.HasSuffix(now, then) &&
		!bytes.Contains(now[:len(now)-len(then)], []byte("\npackage "))
}

// newFiles returns the paths, relative to a tree's root, of the files that join the trees at
// ch: those of the chapters in ch's trees that are not in its parent's.
func newFiles(b *tree.Builder, ch *manifest.Chapter) (map[string]bool, error) {
	mine, err := b.Sources(ch)
	if err != nil {
		return nil, err
	}
	var before []string
	if p := b.Course().Parent(ch); p != nil {
		if before, err = b.Sources(p); err != nil {
			return nil, err
		}
	}
	own := map[string]bool{}
	for _, s := range mine {
		if f, ok := strings.CutPrefix(s, tree.SourceDir+"/"); ok && !slices.Contains(before, s) {
			own[f] = true
		}
	}
	return own, nil
}

// modRequirements describes a go.mod by its module path, go version and requirements, sorted,
// leaving out which are indirect (that follows from what the tree's Go files import, which the
// chapter changes) and how they are grouped.
func modRequirements(data []byte) string {
	f, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		return "unparsable: " + err.Error()
	}
	var parts []string
	if f.Module != nil {
		parts = append(parts, "module "+f.Module.Mod.Path)
	}
	if f.Go != nil {
		parts = append(parts, "go "+f.Go.Version)
	}
	var reqs []string
	for _, r := range f.Require {
		reqs = append(reqs, r.Mod.Path+"@"+r.Mod.Version)
	}
	slices.Sort(reqs)
	return strings.Join(append(parts, reqs...), ", ")
}

// extendedFileProblems compares the parent's and the starter's versions of file, which ch
// extends (raw is the reference file): every line only the parent has must be a before line of a
// region of ch, every line only the starter has a live line of a region of ch or a line of a
// stubbed lab of ch. A line both sides have, only spaced differently (gofmt realigning a struct
// or a block), counts as the same line.
func extendedFileProblems(ch *manifest.Chapter, file string, raw, parent, starter []byte) []string {
	regions, err := chaptersrc.Regions(file, raw)
	if err != nil {
		return []string{err.Error()}
	}
	rawLines := lines(raw)
	live, before := map[string]bool{}, map[string]bool{}
	for _, r := range regions {
		if r.Chapter != ch.Number {
			continue
		}
		liveEnd := r.EndLine
		if r.BeforeLine != 0 {
			liveEnd = r.BeforeLine
			for _, l := range rawLines[r.BeforeLine : r.EndLine-1] {
				l = strings.TrimSpace(l)
				before[normal(strings.TrimPrefix(strings.TrimPrefix(l, "//"), " "))] = true
			}
		}
		for _, l := range rawLines[r.BeginLine : liveEnd-1] {
			live[normal(l)] = true
		}
	}
	for _, lab := range ch.Labs {
		bodies, err := labsrc.Bodies(starter, lab.ID)
		if err != nil {
			continue // the lab has no region in this file
		}
		live[normal("//lab:begin "+lab.ID)], live[normal("//lab:end")] = true, true
		for _, body := range bodies {
			for _, l := range lines([]byte(body)) {
				live[normal(l)] = true
			}
		}
	}
	ops := linediff.Diff(lines(parent), lines(starter))
	deleted, inserted := map[string]int{}, map[string]int{}
	for _, op := range ops {
		switch op.Kind {
		case linediff.Delete:
			deleted[normal(op.Text)]++
		case linediff.Insert:
			inserted[normal(op.Text)]++
		}
	}
	var problems []string
	for _, op := range ops {
		n := normal(op.Text)
		switch {
		case n == "" || op.Kind == linediff.Keep:
		case op.Kind == linediff.Delete && inserted[n] == 0 && !before[n]:
			problems = append(problems, fmt.Sprintf("%s: line %d of the parent, %q, is not in the starter, and is no before line of a //chapter:begin %s region", file, op.Old+1, strings.TrimSpace(op.Text), ch.Number))
		case op.Kind == linediff.Insert && deleted[n] == 0 && !live[n]:
			problems = append(problems, fmt.Sprintf("%s: line %d of the starter, %q, is not in the parent, and is no line of a //chapter:begin %s region or of a stubbed lab of chapter %s", file, op.New+1, strings.TrimSpace(op.Text), ch.Number, ch.Number))
		}
	}
	return problems
}

// lines splits data into lines without their line ends.
func lines(data []byte) []string {
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// normal is a line with its runs of white space made single spaces, and none at either end.
func normal(line string) string { return strings.Join(strings.Fields(line), " ") }
