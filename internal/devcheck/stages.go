package devcheck

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/schemata"
	"github.com/learn-tinypi/course/internal/tree"
)

// stageSchema is one build of a rebuild chapter's target with its progressive stages woven in
// (package schemata), as chapterSchema weaves its mutants. Stage k is the tree whose labs from k
// on are stubs (tree.Builder.Progressive); it differs from the target in the bodies of the
// labs' functions and in the imports only the reference bodies used, so every stage can be one
// build, and each stage's check a `go test ./...` of that build with the stage selected: the
// packages are compiled once for the chapter instead of once per stage, which was most of the
// progressive checks' time. Unlike the mutants' build it keeps every test file: a stage's check
// runs every test, as a learner's plain `go test ./...` does. A stage that cannot be woven in,
// or every stage when the build does not compile, is proven in a tree of its own, as before.
// The first progressive job of the chapter makes the build; the others wait for it.
//
// The build is every package's test binary, compiled once (gotest.CompileEach), and a stage's
// check runs them (gotest.RunEach) as `go test ./...` would: a `go test ./...` per stage linked
// every test binary again each time, which at the later chapters cost more than the tests
// (294 s of CPU for the 85 stages of a run, 2026-12-07). The binaries run no vet check, as a
// learner's go test does before its tests: the starter check runs that go test on the code with
// every lab stubbed, the target check the whole of go vet on the reference, and a stage is only
// ever those two codes, function by function.
type stageSchema struct {
	tools *runTools // what every chapter of the run shares
	once  sync.Once
	dir   string              // where the build's tree is; "" when there is none
	bins  []gotest.TestBinary // its packages' test binaries
	// test2json is the test2json program the binaries' runs go through; "" for go tool.
	test2json string
	woven     map[int]bool // the stages in it
	// why says, by stage, why one that is not in the build is not: checkProgressive notes it on
	// the stage's check, since nothing else would tell (the stage is proven all the same, only
	// slower).
	why map[int]string
	err error // what stopped the run (ctx ended, a directory cannot be written)
}

// stageName is the name under which stage k is woven in: schemata.EnvVar's value that selects it.
func stageName(k int) string { return fmt.Sprintf("progressive-stage-%d", k) }

// prepare makes the build in a directory next to jobDir (inside the run's temporary directory,
// which runJobs removes at the end), once.
func (s *stageSchema) prepare(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, jobDir string) error {
	s.once.Do(func() {
		s.err = s.build(ctx, b, ch, filepath.Join(filepath.Dir(jobDir), "stages-"+ch.Number))
	})
	return s.err
}

func (s *stageSchema) build(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, dir string) error {
	target, res, woven, why := weaveStages(b, ch)
	s.why = why
	if len(woven) == 0 {
		return nil
	}
	t := maps.Clone(target)
	maps.Copy(t, res.Files)
	if err := t.Write(dir); err != nil {
		return fmt.Errorf("writing the progressive stages of chapter %s: %w", ch.Number, err)
	}
	// Compile every package's test binary once. A build that does not compile leaves every stage
	// to its own tree.
	opts := stageRun(dir, "", "")
	bins, report, err := gotest.CompileEach(ctx, opts, dir+".bin")
	if err != nil {
		return err
	}
	if report.BuildFailed {
		for k := range woven {
			s.why[k] = "the build of all the chapter's stages does not compile:\n" + clip(report.BuildOutput)
		}
		return nil
	}
	path, err := s.tools.test2JSON(ctx)
	if err != nil {
		return err
	}
	s.dir, s.bins, s.test2json, s.woven = dir, bins, path, woven
	return nil
}

// runStage runs every test of the build with stage k selected, as a learner's plain
// `go test ./...` of the stage's own tree would (stageRun).
func (s *stageSchema) runStage(ctx context.Context, k int) (*gotest.Report, error) {
	opts := stageRun(s.dir, "", stageName(k))
	opts.Test2JSON = s.test2json
	return gotest.RunEach(ctx, opts, s.bins)
}

// stageRun returns the options of checkProgressive's run, a learner's plain `go test ./...`, in
// dir: every package's tests that pattern selects ("" for all), with the stage selected by name
// ("" for none, as in a tree of the stage's own).
func stageRun(dir, pattern, stage string) gotest.Options {
	return gotest.Options{
		Dir: dir, Fresh: true, Unoptimized: true, Run: pattern, Timeout: testTimeout, Packages: []string{"./..."},
		Env: append(sharedBuildEnv(), schemata.EnvVar+"="+stage),
	}
}

// weaveStages weaves ch's progressive stages into its target: the target, the build's files
// (schemata.Result), the stages woven in and why each other stage is not. None is woven when the
// target cannot be built (the target check reports why).
func weaveStages(b *tree.Builder, ch *manifest.Chapter) (tree.Tree, *schemata.Result, map[int]bool, map[int]string) {
	why := map[int]string{}
	target, err := b.Target(ch)
	if err != nil {
		return nil, nil, nil, why
	}
	var mutations []schemata.Mutation
	var stages []int // stages[i] is the stage of mutations[i]
	for k := range ch.Labs {
		stage, err := b.Progressive(ch, k)
		if err != nil {
			continue // checkProgressive reports a tree that cannot be built
		}
		if len(stage) != len(target) {
			why[k] = fmt.Sprintf("the stage's tree has %d files, the target's %d", len(stage), len(target))
			continue
		}
		var files []schemata.Mutation
		for _, p := range slices.Sorted(maps.Keys(stage)) {
			orig, ok := target[p]
			if !ok {
				why[k], files = p+" is in the stage's tree, not in the target's", nil
				break
			}
			if string(orig) != string(stage[p]) {
				files = append(files, schemata.Mutation{Name: stageName(k), File: p, Src: stage[p]})
			}
		}
		stages = append(stages, slices.Repeat([]int{k}, len(files))...)
		mutations = append(mutations, files...)
	}
	res := schemata.Build(target, mutations)
	woven := map[int]bool{}
	for _, k := range stages {
		woven[k] = true
	}
	for i, k := range stages { // a stage is in the build when every file of it is
		if !res.Woven[i] && woven[k] {
			why[k] = mutations[i].File + ": " + res.Why[i]
			delete(woven, k)
		}
	}
	return target, res, woven, why
}
