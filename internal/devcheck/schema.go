package devcheck

import (
	"context"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/heldout"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/schemata"
	"github.com/learn-tinypi/course/internal/tree"
)

// chapterSchema is one build of a chapter's target with its mutants woven in (package
// schemata): compiling the package once for all of them, rather than once per mutant, was most
// of dev check's time. A race mutant (it needs a -race build), a mutant that cannot be woven in,
// or every mutant when the build does not compile or does not pass its own labs' tests with no
// mutant selected, is proven in a tree of its own (runMutant), as before. The first mutant job of the chapter makes the build; the
// others wait for it.
type chapterSchema struct {
	tools *runTools // what every chapter of the run shares
	once  sync.Once
	dir   string // where the build's tree is; "" when there is none
	bin   string // its test binary
	// test2json is the test2json program its runs go through (gotest.Test2JSON); "" for go tool.
	test2json string
	woven     map[string]bool // the mutants in it, by name
	// heldout: the build holds the held-out harness (heldout.HarnessName), so the held-out checks
	// run its binary too, one run per mutant, with no build of their own.
	heldout bool
	err     error // what stopped the run (ctx ended, a directory cannot be written)
}

// prepare makes the build in a directory next to jobDir (inside the run's temporary directory,
// which runJobs removes at the end), once.
func (s *chapterSchema) prepare(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, jobDir string) error {
	s.once.Do(func() {
		s.err = s.build(ctx, b, ch, filepath.Join(filepath.Dir(jobDir), "schema-"+ch.Number))
	})
	return s.err
}

func (s *chapterSchema) build(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, dir string) error {
	target, err := b.Target(ch)
	if err != nil {
		return nil // the target check reports it; every mutant runs on its own
	}
	var mutations []schemata.Mutation
	var labs []*manifest.Lab
	for _, m := range ch.Mutants {
		if m.Race {
			continue // its tests need a -race build of their own (mutantTestRun)
		}
		mt, err := b.Mutant(ch, m)
		if err != nil || !onlyFileDiffers(target, mt, m.File) {
			continue // checkMutant reports a mutant that cannot be applied
		}
		lab, err := ch.Lab(m.Lab)
		if err != nil {
			continue
		}
		mutations = append(mutations, schemata.Mutation{Name: m.Name, File: m.File, Src: mt[m.File]})
		labs = append(labs, lab)
	}
	res := schemata.Build(target, mutations)
	woven := map[string]bool{}
	var patterns []string
	for i, ok := range res.Woven {
		if ok {
			woven[mutations[i].Name] = true
			patterns = append(patterns, "(?:"+labs[i].Pattern+")")
		}
	}
	if len(woven) == 0 {
		return nil
	}
	t := tree.Tree{}
	if pruned, ok := withTestsOf(target, ch.TestFile); ok {
		maps.Copy(t, pruned)
	} else {
		maps.Copy(t, target)
	}
	for p, src := range res.Files {
		t[p] = src
	}
	cases, _ := heldout.Load(b.FS(), ch.Number) // a broken case is the held-out checks' to report
	harness, err := heldout.Harness(b.FS())
	withHeldout := len(cases) > 0 && err == nil
	if withHeldout {
		t[path.Join(ch.Package, heldout.HarnessName)] = harness // the harness joins the chapter's package
	}
	if err := t.Write(dir); err != nil {
		return fmt.Errorf("writing the mutants of chapter %s: %w", ch.Number, err)
	}
	// The test binary is built once, as a mutant's own run builds its tree (runMutant).
	bin := dir + ".test"
	pkgDir := ch.PackageDirIn(dir) // the build's and its runs' directory
	built, err := gotest.Compile(ctx, gotest.Options{Dir: pkgDir, SkipTestVet: true, Unoptimized: true, Env: sharedBuildEnv()}, bin)
	if err != nil {
		return err
	}
	if built.BuildFailed {
		return nil
	}
	// With no mutant selected the build is the target: its labs' tests must pass, or a mutant's
	// failures could be the build's own.
	s.dir, s.bin = pkgDir, bin
	// Every run of the binary goes through test2json: found once here, it is started directly
	// instead of through `go tool` (gotest.Options.Test2JSON). Not found, the runs use go tool.
	path, err := s.tools.test2JSON(ctx)
	if err != nil {
		return err
	}
	s.test2json = path
	report, err := gotest.Run(ctx, s.run(strings.Join(patterns, "|"), ""))
	if err != nil {
		return err
	}
	if !report.OK() {
		s.dir, s.bin = "", ""
		return nil
	}
	s.woven = woven
	s.heldout = withHeldout
	return nil
}

// runTools finds, once for a whole run, the programs that every chapter's builds use. Found by
// each chapter on its own, the first chapters to ask on an empty build cache each built
// test2json at the same time: three builds, about 60 s of CPU (2026-12-07).
type runTools struct {
	once      sync.Once
	test2json string // gotest.Test2JSON's answer; "" when it has none: runs go through go tool
	err       error  // ctx ended while it was being found
}

// test2JSON returns the test2json program that test binaries' runs go through (gotest.Options.
// Test2JSON): "" when it cannot be found, and the runs go through `go tool` instead. The error
// is ctx's, when it ended first.
func (t *runTools) test2JSON(ctx context.Context) (string, error) {
	t.once.Do(func() {
		path, err := gotest.Test2JSON(ctx, sharedBuildEnv())
		if err == nil {
			t.test2json = path
		} else if ctx.Err() != nil {
			t.err = ctx.Err()
		}
	})
	return t.test2json, t.err
}

// run returns the options of a run of the schema build's test binary: the tests that pattern
// selects, with the mutant selected by name ("" for none).
func (s *chapterSchema) run(pattern, mutant string) gotest.Options {
	return gotest.Options{
		Dir: s.dir, Binary: s.bin, Test2JSON: s.test2json, Fresh: true, Run: pattern, Timeout: testTimeout,
		Env: append(sharedBuildEnv(), schemata.EnvVar+"="+mutant),
	}
}

// onlyFileDiffers reports whether a and b hold the same files, with the same contents except
// file's.
func onlyFileDiffers(a, b tree.Tree, file string) bool {
	if len(a) != len(b) {
		return false
	}
	for p, src := range a {
		other, ok := b[p]
		if !ok || (p != file && string(other) != string(src)) {
			return false
		}
	}
	return true
}
