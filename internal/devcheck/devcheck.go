// Package devcheck proves, for course authors, every rule of docs/authoring.md ("What `course dev
// check` proves, per chapter"): the target passes vet and its tests with -race, offline; every
// focused test belongs to exactly one lab; the starter builds and lab 1 fails first with its own
// message; labs fail and pass in progressive order, and a plain `go test ./...` at every stage
// shows only labs' pending messages; every mutant is caught; every lab has its cards and the
// chapter its text; every mutant's failure signature is committed and names exactly it; no
// focused test is flaky under repeated -race runs; chapter regions (//chapter:begin NN) are well
// formed, never reach a learner tree, and a starter is its parent's target plus only the
// chapter's own files and regions (devcheck_regions.go). Every earlier chapter's focused tests
// passing on a chapter's target is part of the first rule: they are in the target, and
// `go test -race ./...` runs them.
// Observe-mode chapters have no stubs and skip the starter, progressive and signature checks;
// their mutants are checked like any other.
//
// A Cache (cache.go) keeps the proof of every chapter that passes, keyed by a hash of all it
// depends on, so that a chapter nothing of which changed is not proven again.
package devcheck

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/progress"
	"github.com/learn-tinypi/course/internal/tree"
)

// DefaultParallel is how many go commands run at once when Options.Parallel is 0 (the mutant
// phase gets twice as many, see runJobs). Three was tried (2026-12-05): a fresh-clone make test
// took 1529 s against 1541 s with two, the other parts slower by as much as dev check was faster,
// since the whole run keeps two cores busy.
const DefaultParallel = 2

// testTimeout bounds each go test run, so that a stub that blocks instead of panicking fails its
// check instead of hanging the whole dev check.
const testTimeout = 2 * time.Minute

// Options selects the chapters to check and how.
type Options struct {
	Chapters []string  // chapter numbers ("7" or "07"); empty means all
	Parallel int       // go commands run at once; 0 means DefaultParallel
	Out      io.Writer // one line per check as it finishes, then a summary; nil discards
	// ASCII marks checks "ok" and "FAIL" instead of ✓ and ✗, for output that is not a terminal.
	ASCII bool
	// FlakeRuns is how many times rule 8 runs each chapter's focused tests; 0 means
	// DefaultFlakeRuns.
	FlakeRuns int
	// Cache, when not nil, keeps the proof of every chapter whose checks all pass, and gives
	// back the checks of a chapter whose proof it keeps under the same key (Cache.Key) instead
	// of proving them again. Nil proves every chapter and keeps nothing.
	Cache *Cache
	// Force proves every chapter even when Cache keeps its proof; the proofs that pass are
	// stored again.
	Force bool
}

// marks returns the marks of a passing and a failing check.
func (o Options) marks() (ok, failed string) {
	if o.ASCII {
		return "ok", "FAIL"
	}
	return "✓", "✗"
}

// Result is the outcome of a check run.
type Result struct {
	Chapters []ChapterResult
	// CacheErr, when not nil, says why Options.Cache could not be used at all; every chapter
	// was proven, and nothing stored.
	CacheErr error
}

// ChapterResult is the outcome of one chapter's checks, in a fixed order.
type ChapterResult struct {
	Number string
	Checks []Check
	// Cached reports that the checks were taken from Options.Cache: every one of them passed
	// when the chapter was proven at ProvenAt, with the same inputs.
	Cached bool
	// ProvenAt is when the checks ran: during this Run, or earlier when Cached.
	ProvenAt time.Time
	// CacheErr, when not nil, says why the cache could not be used for the chapter: its key could
	// not be computed, or its proof not stored. The checks are not affected.
	CacheErr error
}

// OK reports whether every check of the chapter passed.
func (r *ChapterResult) OK() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// Check is one rule proved (or disproved) for one chapter.
type Check struct {
	Name   string
	OK     bool
	Detail string // why it failed; when OK, empty or a note worth reading
}

// OK reports whether every check passed.
func (r *Result) OK() bool { return r.Failed() == 0 }

// Total returns how many checks ran.
func (r *Result) Total() int {
	n := 0
	for _, ch := range r.Chapters {
		n += len(ch.Checks)
	}
	return n
}

// Failed returns how many checks failed.
func (r *Result) Failed() int {
	n := 0
	for _, ch := range r.Chapters {
		for _, c := range ch.Checks {
			if !c.OK {
				n++
			}
		}
	}
	return n
}

// task is one check to run. Tasks that run go wait for a slot of the pool.
type task struct {
	name   string
	usesGo bool
	phase  phase // when a task that uses go starts (schedule.go)
	rank   int   // orders the tasks of one phase before the order of chapters (schedule.go)
	run    func(ctx context.Context, dir string) (Check, error)
}

// Run checks the chapters of b's course (all, or opts.Chapters) and returns every check's
// outcome. With opts.Cache, a chapter whose proof the cache keeps is not proven again: its checks
// are printed with "(cached)" after them, and every chapter proven now that passes is stored.
// The error is non-nil only when checking could not go on: an unknown chapter, no go
// command, no temporary directory, or ctx ended.
func Run(ctx context.Context, b *tree.Builder, opts Options) (*Result, error) {
	chapters, err := selectChapters(b.Course(), opts.Chapters)
	if err != nil {
		return nil, err
	}
	out := opts.output()
	result := &Result{}
	cache, err := opts.runCache(ctx)
	result.CacheErr = err
	keys := make([]string, len(chapters)) // "" when the chapter's proof is not to be stored
	started := time.Now()
	tools := &runTools{}
	var jobs []job
	for i, ch := range chapters {
		result.Chapters = append(result.Chapters, ChapterResult{Number: ch.Number, ProvenAt: started})
		tasks := plan(b, ch, opts, tools)
		if cache != nil {
			keys[i], result.Chapters[i].CacheErr = cachedProof(b, ch, opts, cache, tasks, &result.Chapters[i])
			if result.Chapters[i].Cached {
				for _, c := range result.Chapters[i].Checks {
					printCheck(out, opts, ch.Number, Check{Name: c.Name + " (cached)", OK: true, Detail: c.Detail})
				}
				continue
			}
		}
		for _, t := range tasks {
			slot := len(result.Chapters[i].Checks)
			result.Chapters[i].Checks = append(result.Chapters[i].Checks, Check{Name: t.name})
			jobs = append(jobs, job{
				dir:    fmt.Sprintf("%03d", len(jobs)),
				usesGo: t.usesGo,
				phase:  t.phase,
				rank:   t.rank,
				run: func(ctx context.Context, dir string) (func(), error) {
					check, err := t.run(ctx, dir)
					if err != nil {
						return nil, err
					}
					return func() {
						check.Name = t.name
						result.Chapters[i].Checks[slot] = check
						printCheck(out, opts, ch.Number, check)
					}, nil
				},
			})
		}
	}
	if len(jobs) > 0 {
		if err := runJobs(ctx, "dev check", "course-devcheck-", opts, jobs); err != nil {
			return nil, err
		}
	}
	for i := range result.Chapters {
		r := &result.Chapters[i]
		if keys[i] != "" && !r.Cached && r.OK() {
			r.CacheErr = cache.store(keys[i], *r)
		}
	}
	fmt.Fprintf(out, "%d checks, %d failed\n", result.Total(), result.Failed())
	return result, nil
}

// PrintFailures writes every failed check of result again, with its detail, as opts marks
// them. The command calls it last, just before its verdict: a long run's failure is printed
// when it happens, hundreds of lines up, and a log that keeps only its tail (a CI page, a
// terminal's scrollback) must still say what failed and why.
func PrintFailures(w io.Writer, opts Options, result *Result) {
	if result.Failed() == 0 {
		return
	}
	fmt.Fprintln(w, "failed checks:")
	for _, r := range result.Chapters {
		for _, c := range r.Checks {
			if !c.OK {
				printCheck(w, opts, r.Number, c)
			}
		}
	}
}

// runCache returns the cache of this run, its go environment filled in: nil when opts has none,
// and an error when the go environment cannot be found (no chapter can use the cache then).
func (opts Options) runCache(ctx context.Context) (*Cache, error) {
	if opts.Cache == nil {
		return nil, nil
	}
	c := *opts.Cache
	if c.Go == "" {
		env, err := goEnvironment(ctx)
		if err != nil {
			return nil, err
		}
		c.Go = env
	}
	return &c, nil
}

// cachedProof computes ch's key in cache and, unless opts.Force, fills r with the checks the
// cache keeps under it. tasks are ch's checks today. It returns the key under which to store a
// new proof, or the error that makes the cache unusable for ch.
func cachedProof(b *tree.Builder, ch *manifest.Chapter, opts Options, cache *Cache, tasks []task, r *ChapterResult) (string, error) {
	key, err := cache.Key(b, ch, opts)
	if err != nil {
		return "", err
	}
	if opts.Force {
		return key, nil
	}
	names := make([]string, len(tasks))
	for i, t := range tasks {
		names[i] = t.name
	}
	if checks, at, ok := cache.load(ch.Number, key, names); ok {
		r.Checks, r.ProvenAt, r.Cached = checks, at, true
	}
	return key, nil
}

// selectChapters returns the chapters named by numbers, or all of them.
func selectChapters(c *manifest.Course, numbers []string) ([]*manifest.Chapter, error) {
	if len(numbers) == 0 {
		return c.Chapters, nil
	}
	var chapters []*manifest.Chapter
	for _, n := range numbers {
		ch, err := c.Chapter(n)
		if err != nil {
			return nil, err
		}
		chapters = append(chapters, ch)
	}
	return chapters, nil
}

// printCheck writes one check's line, and its detail indented under it: why it failed, or a
// note a passing check left.
func printCheck(w io.Writer, opts Options, chapter string, c Check) {
	mark, failed := opts.marks()
	if !c.OK {
		mark = failed
	}
	fmt.Fprintf(w, "%s %s %s\n", chapter, mark, c.Name)
	if c.Detail != "" {
		for _, line := range strings.Split(strings.TrimRight(c.Detail, "\n"), "\n") {
			fmt.Fprintf(w, "      %s\n", line)
		}
	}
}

// plan lists ch's checks in the order docs/authoring.md numbers them; tools is what the run's
// chapters share.
func plan(b *tree.Builder, ch *manifest.Chapter, opts Options, tools *runTools) []task {
	tasks := []task{{
		name:   "target: go vet and go test -race ./... pass offline",
		usesGo: true,
		phase:  phaseTarget,
		run: func(ctx context.Context, dir string) (Check, error) {
			return checkTarget(ctx, b, ch, dir)
		},
	}, {
		name: "tests: every focused test matches exactly one lab pattern",
		run: func(context.Context, string) (Check, error) {
			return checkTestsMatchOnePattern(b, ch), nil
		},
	}}
	for _, lab := range ch.Labs {
		tasks = append(tasks, task{
			name: fmt.Sprintf("tests: lab %s pattern %s selects its %d test(s) and nothing else", lab.ID, lab.Pattern, lab.Tests),
			run: func(context.Context, string) (Check, error) {
				return checkPattern(b, ch, lab), nil
			},
		})
	}
	if ch.Rebuild() && len(ch.Labs) > 0 {
		first := ch.Labs[0]
		tasks = append(tasks, task{
			name:   fmt.Sprintf("starter: builds; lab %s fails first with its own message", first.ID),
			usesGo: true,
			phase:  phaseStarter,
			run: func(ctx context.Context, dir string) (Check, error) {
				return checkStarter(ctx, b, ch, dir)
			},
		})
		stages := &stageSchema{tools: tools} // stages.go
		for k, lab := range ch.Labs {
			tasks = append(tasks, task{
				name:   fmt.Sprintf("progressive: lab %s fails with its own message, earlier labs pass, course test shows its hint", lab.ID),
				usesGo: true,
				phase:  phaseProgressive,
				rank:   k,
				run: func(ctx context.Context, dir string) (Check, error) {
					return checkProgressive(ctx, b, ch, k, stages, dir)
				},
			})
		}
	}
	// Rule 5 for every chapter (an observe chapter's mutants break the code it reads), and rule 7
	// from the same mutant runs for rebuild chapters (devcheck_signatures.go).
	// The mutants' build (schema.go) serves the held-out checks too.
	schema := &chapterSchema{tools: tools}
	tasks = append(tasks, mutantTasks(b, ch, schema)...)
	tasks = append(tasks, task{
		name: "content: every lab has its cards (zh, en) and the chapter has " + ch.Doc,
		run: func(context.Context, string) (Check, error) {
			return checkContent(b.FS(), ch), nil
		},
	}, languageTask(b, ch), textsTask(b, ch), countsTask(b, ch), flakeTask(b, ch, opts.flakeRuns()))
	tasks = append(tasks, diagnosisTask(b, ch)...)
	tasks = append(tasks, heldoutTasks(b, ch, schema)...) // devcheck_heldout.go
	return append(tasks, regionTasks(b, ch)...)           // devcheck_regions.go
}

// sharedBuildEnv is gotest.OfflineEnv with -trimpath. Every check writes its tree into a
// directory of its own, and without -trimpath a package's directory is part of its key in go's
// build cache: the target and the flake runs, or the packages a chapter's trees share with the
// next chapter's, are the same sources compiled twice. With it they are compiled once. Mutant
// runs in a tree of their own keep the learner's environment (gotest.OfflineEnv): their messages
// make signatures, which must be what a learner's own go test prints. That environment has
// -trimpath too when the one dev check runs in has it (make test sets it, so that the whole run
// builds the standard library once): a message with a file's path in it could not be a
// signature either way, since every tree is written in a directory of its own.
func sharedBuildEnv() []string {
	return append(gotest.OfflineEnv(), "GOFLAGS=-mod=readonly -trimpath")
}

// pass and fail build Checks.
func pass() Check { return Check{OK: true} }

func fail(format string, args ...any) Check {
	return Check{Detail: fmt.Sprintf(format, args...)}
}

// checkTarget proves rule 1: the target passes go vet and all its tests with -race, offline.
func checkTarget(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, dir string) (Check, error) {
	t, err := b.Target(ch)
	if err != nil {
		return fail("building the target: %v", err), nil
	}
	if err := t.Write(dir); err != nil {
		return Check{}, fmt.Errorf("writing the target of chapter %s: %w", ch.Number, err)
	}
	report, err := gotest.Run(ctx, gotest.Options{
		Dir: dir, Fresh: true, Race: true, Vet: true, Env: sharedBuildEnv(), Timeout: testTimeout, Packages: []string{"./..."},
	})
	if err != nil {
		return Check{}, err
	}
	if !report.OK() {
		return Check{Detail: describe(report)}, nil
	}
	return pass(), nil
}

// checkStarter proves rule 3: the starter builds, and lab 1's tests all fail with lab 1's own
// pending message, in a plain `go test` as the learner runs it (gotest.Options.LearnerView).
func checkStarter(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, dir string) (Check, error) {
	t, err := b.Starter(ch)
	if err != nil {
		return fail("building the starter: %v", err), nil
	}
	if err := t.Write(dir); err != nil {
		return Check{}, fmt.Errorf("writing the starter of chapter %s: %w", ch.Number, err)
	}
	out, ok, err := goBuild(ctx, dir)
	if err != nil {
		return Check{}, err
	}
	if !ok {
		return fail("go build ./... failed:\n%s", clip(out)), nil
	}
	// The run is the learner's first: the card's plain `go test`, which compiles only this
	// chapter's focused tests (and the helpers they use), not the earlier chapters' ones.
	first := ch.Labs[0]
	report, err := gotest.Run(ctx, gotest.Options{Dir: dir, Fresh: true, Unoptimized: true, Run: first.Pattern, Env: sharedBuildEnv(), Timeout: testTimeout, LearnerView: true, Packages: []string{first.PackagePattern()}})
	if err != nil {
		return Check{}, err
	}
	if problems := stubbedLabProblems(report, first); len(problems) > 0 {
		return Check{Detail: strings.Join(problems, "\n")}, nil
	}
	return pass(), nil
}

// checkProgressive proves rule 4 for lab k (0-based): with labs before k from the reference and
// labs from k on stubbed, lab k's tests fail with its message and earlier labs' tests pass. It
// runs every test of every package, as a learner's plain `go test ./...` does: every other test
// that fails (a later lab's, or an earlier chapter's test that reaches a stub) must fail with the
// pending message of a stubbed lab, through the lab guard, never with a raw panic that ends the
// test binary and hides the tests after it.
//
// The stage runs in the chapter's build of all its stages (stages.go) when it is woven in there,
// else in a tree of its own.
func checkProgressive(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, k int, stages *stageSchema, dir string) (Check, error) {
	if err := stages.prepare(ctx, b, ch, dir); err != nil {
		return Check{}, err
	}
	var report *gotest.Report
	if stages.woven[k] {
		r, err := stages.runStage(ctx, k)
		if err != nil {
			return Check{}, err
		}
		report = r
	} else {
		t, err := b.Progressive(ch, k)
		if err != nil {
			return fail("building the tree: %v", err), nil
		}
		if err := t.Write(dir); err != nil {
			return Check{}, fmt.Errorf("writing a progressive tree of chapter %s: %w", ch.Number, err)
		}
		r, err := gotest.Run(ctx, stageRun(dir, "", ""))
		if err != nil {
			return Check{}, err
		}
		report = r
	}
	problems := stubbedLabProblems(report, ch.Labs[k])
	if !report.BuildFailed {
		for _, lab := range ch.Labs[:k] {
			tests := progress.LabTests(lab, report)
			if len(tests) != lab.Tests {
				problems = append(problems, fmt.Sprintf("lab %s (reference): %d of its %d tests ran", lab.ID, len(tests), lab.Tests))
			}
			for _, r := range tests {
				if !r.Passed {
					problems = append(problems, fmt.Sprintf("lab %s (reference): %s did not pass: %s", lab.ID, r.Name, r.FirstFailure))
				}
			}
		}
		problems = append(problems, onlyLabMessages(report, ch, k)...)
	}
	problems = append(problems, hintProblems(b.FS(), ch, k, report)...) // devcheck_hints.go
	if len(problems) > 0 {
		return Check{Detail: strings.Join(problems, "\n")}, nil
	}
	if why := stages.why[k]; why != "" {
		return Check{OK: true, Detail: "note: proven in a tree of its own, not in the chapter's build of stages (stages.go): " + why}, nil
	}
	return pass(), nil
}

// onlyLabMessages says what is wrong with a plain `go test ./...` of the progressive tree whose
// labs from k on are stubbed, beyond lab k itself: every test of a later lab must have run, and
// every failing test must fail first with the pending message of a stubbed lab, not with a raw
// panic (which ends the test binary: the tests after it never report).
func onlyLabMessages(report *gotest.Report, ch *manifest.Chapter, k int) []string {
	var pending []string
	for _, lab := range ch.Labs[k:] {
		pending = append(pending, lab.PendingMessage())
	}
	var problems []string
	for _, lab := range ch.Labs[k+1:] {
		if n := len(progress.LabTests(lab, report)); n < lab.Tests { // more is rule 2's to report
			problems = append(problems, fmt.Sprintf("lab %s (stubbed): %d of its %d tests ran in go test ./...; did a test end the test binary?", lab.ID, n, lab.Tests))
		}
	}
	for _, r := range report.Failed() {
		raw := strings.HasPrefix(r.FirstFailure, "panic: ")
		lab := slices.ContainsFunc(pending, func(msg string) bool { return strings.Contains(r.FirstFailure, msg) })
		switch {
		case raw:
			problems = append(problems, fmt.Sprintf("go test ./...: %s (%s) dies with a raw panic instead of a lab's message; call the lab code through the lab guard: %s",
				r.Name, r.Package, r.FirstFailure))
		case !lab:
			problems = append(problems, fmt.Sprintf("go test ./...: %s (%s) fails with %q, which is no stubbed lab's pending message", r.Name, r.Package, r.FirstFailure))
		}
	}
	return problems
}

// stubbedLabProblems says what is wrong with report for a stubbed lab: it must compile, run
// all of the lab's tests, and each must fail first with the lab's pending message.
func stubbedLabProblems(report *gotest.Report, lab *manifest.Lab) []string {
	if report.BuildFailed {
		return []string{"does not compile:\n" + clip(report.BuildOutput)}
	}
	msg := lab.PendingMessage()
	tests := progress.LabTests(lab, report)
	var problems []string
	if len(tests) != lab.Tests {
		problems = append(problems, fmt.Sprintf("lab %s (stubbed): %d of its %d tests ran", lab.ID, len(tests), lab.Tests))
	}
	for _, r := range tests {
		switch {
		case !r.Failed:
			problems = append(problems, fmt.Sprintf("lab %s (stubbed): %s did not fail", lab.ID, r.Name))
		case !strings.Contains(r.FirstFailure, msg):
			problems = append(problems, fmt.Sprintf("lab %s (stubbed): %s failed first with %q, want %q", lab.ID, r.Name, r.FirstFailure, msg))
		}
	}
	return problems
}

// checkMutant proves rule 5 for m: the mutated target compiles and a test of m's lab fails. It
// also returns the run's report (nil when the mutant could not be applied), from which rule 7
// takes m's signature.
func checkMutant(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, m *manifest.Mutant, dir string) (Check, *gotest.Report, error) {
	lab, err := ch.Lab(m.Lab)
	if err != nil {
		return fail("%v", err), nil, nil
	}
	t, err := b.Mutant(ch, m)
	if err != nil {
		return fail("applying the mutant: %v", err), nil, nil
	}
	report, note, err := runMutant(ctx, t, ch, m, lab, dir)
	if err != nil {
		return Check{}, nil, err
	}
	return mutantVerdict(lab, report, note), report, nil
}

// checkWovenMutant proves rule 5 for m, which is woven into the chapter's schema build
// (schema.go): m's lab's tests run there with m selected, and one of them must fail. The build
// compiled, so m's code does.
func checkWovenMutant(ctx context.Context, ch *manifest.Chapter, m *manifest.Mutant, schema *chapterSchema) (Check, *gotest.Report, error) {
	lab, err := ch.Lab(m.Lab)
	if err != nil {
		return fail("%v", err), nil, nil
	}
	report, err := gotest.Run(ctx, schema.run(lab.Pattern, m.Name))
	if err != nil {
		return Check{}, nil, err
	}
	return mutantVerdict(lab, report, ""), report, nil
}

// mutantVerdict is rule 5's verdict on a run of m's lab's tests with m applied; note is kept on
// a pass.
func mutantVerdict(lab *manifest.Lab, report *gotest.Report, note string) Check {
	if report.BuildFailed {
		return fail("does not compile:\n%s", clip(report.BuildOutput))
	}
	tests := progress.LabTests(lab, report)
	for _, r := range tests {
		if r.Failed {
			return Check{OK: true, Detail: note}
		}
	}
	return fail("all %d test(s) of lab %s pass with the mutant applied; they do not catch it", len(tests), lab.ID)
}

// runMutant writes the mutated target t into dir and runs lab's tests there: first with only
// the test files they need (withTestsOf, prune.go), and, if that tree does not compile, again
// with all of t, whose verdict stands; note then says so. dir keeps the tree that ran, for
// rerunLab.
func runMutant(ctx context.Context, t tree.Tree, ch *manifest.Chapter, m *manifest.Mutant, lab *manifest.Lab, dir string) (report *gotest.Report, note string, err error) {
	run := func(t tree.Tree) (*gotest.Report, error) {
		if err := os.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("emptying the directory of mutant %s of chapter %s: %w", m.Name, ch.Number, err)
		}
		if err := t.Write(dir); err != nil {
			return nil, fmt.Errorf("writing mutant %s of chapter %s: %w", m.Name, ch.Number, err)
		}
		report, err := gotest.Run(ctx, mutantTestRun(dir, lab, m.Race))
		// The race detector sees a race only when the goroutines meet; on a loaded machine one
		// run may miss it (a fresh-clone make test did, 2026-12-05). A race mutant gets up to
		// raceMutantRuns runs; the first that catches it stands.
		for tries := 1; m.Race && tries < raceMutantRuns && err == nil && !report.BuildFailed && !anyFailed(lab, report); tries++ {
			report, err = gotest.Run(ctx, mutantTestRun(dir, lab, m.Race))
		}
		return report, err
	}
	if pruned, ok := withTestsOf(t, ch.TestFile); ok {
		small, err := run(pruned)
		if err != nil || !small.BuildFailed {
			return small, "", err
		}
		whole, err := run(t)
		if err != nil || whole.BuildFailed {
			return whole, "", err
		}
		// The proof stands, but took twice as long: say so, so that prune.go gets fixed.
		return whole, "with only the test files its lab needs (prune.go) the mutant did not compile; the whole tree does:\n" + clip(small.BuildOutput), nil
	}
	report, err = run(t)
	return report, "", err
}

// raceMutantRuns is how many times a race mutant's lab tests may run before dev check says they
// do not catch it.
const raceMutantRuns = 5

// anyFailed reports whether a test of lab failed in report.
func anyFailed(lab *manifest.Lab, report *gotest.Report) bool {
	for _, t := range progress.LabTests(lab, report) {
		if t.Failed {
			return true
		}
	}
	return false
}

// mutantTestRun returns the options of a run of lab's tests on a mutated tree in dir: unoptimised,
// without go test's vet, since only what the tests report counts; with the race detector for a
// race mutant, a data race that only the detector sees.
func mutantTestRun(dir string, lab *manifest.Lab, race bool) gotest.Options {
	return gotest.Options{Dir: dir, Fresh: true, SkipTestVet: true, Unoptimized: true, Race: race, Run: lab.Pattern, Env: sharedBuildEnv(), Timeout: testTimeout,
		Packages: []string{lab.PackagePattern()}}
}

// checkTestsMatchOnePattern proves the first half of rule 2: every Test function of the
// chapter's test file matches exactly one of the chapter's lab patterns.
func checkTestsMatchOnePattern(b *tree.Builder, ch *manifest.Chapter) Check {
	if ch.TestFile == "" {
		if len(ch.Labs) > 0 {
			return fail("the chapter has labs but no test_file")
		}
		return pass() // a chapter without focused tests has nothing to match
	}
	tests, err := chapterTests(b, ch)
	if err != nil {
		return fail("%v", err)
	}
	own := tests[ch.TestFile]
	if len(own) == 0 {
		return fail("%s has no Test functions", ch.TestFile)
	}
	patterns, err := compilePatterns(ch)
	if err != nil {
		return fail("%v", err)
	}
	var problems []string
	for _, name := range own {
		var labs []string
		for i, re := range patterns {
			if re.MatchString(name) {
				labs = append(labs, ch.Labs[i].ID)
			}
		}
		switch len(labs) {
		case 1:
		case 0:
			problems = append(problems, name+" matches no lab pattern")
		default:
			problems = append(problems, fmt.Sprintf("%s matches the patterns of labs %s", name, strings.Join(labs, ", ")))
		}
	}
	if len(problems) > 0 {
		return Check{Detail: strings.Join(problems, "\n")}
	}
	return pass()
}

// checkPattern proves the second half of rule 2 for lab: its pattern selects exactly its stated
// number of tests, all in the chapter's test file. A pattern that also selects a test of another
// file would make `go test -run` run that test too.
func checkPattern(b *tree.Builder, ch *manifest.Chapter, lab *manifest.Lab) Check {
	tests, err := chapterTests(b, ch)
	if err != nil {
		return fail("%v", err)
	}
	re, err := regexp.Compile(lab.Pattern)
	if err != nil {
		return fail("pattern %q: %v", lab.Pattern, err)
	}
	var problems []string
	own := 0
	for _, file := range sortedKeys(tests) {
		for _, name := range tests[file] {
			if !re.MatchString(name) {
				continue
			}
			if file == ch.TestFile {
				own++
			} else {
				problems = append(problems, fmt.Sprintf("also selects %s in %s", name, file))
			}
		}
	}
	if own != lab.Tests {
		problems = append(problems, fmt.Sprintf("selects %d test(s) in %s, the manifest says %d", own, ch.TestFile, lab.Tests))
	}
	if len(problems) > 0 {
		return Check{Detail: strings.Join(problems, "\n")}
	}
	return pass()
}

// chapterTests returns the Test functions of every test file of ch's package in ch's target (the
// module's root package, or the chapter's own), by file.
func chapterTests(b *tree.Builder, ch *manifest.Chapter) (map[string][]string, error) {
	t, err := b.Target(ch)
	if err != nil {
		return nil, fmt.Errorf("building the target: %w", err)
	}
	if _, ok := t[ch.TestFile]; !ok {
		return nil, fmt.Errorf("the target has no test file %s", ch.TestFile)
	}
	tests := map[string][]string{}
	fset := token.NewFileSet()
	for _, p := range t.Paths() {
		if path.Dir(p) != ch.PackageDir() || !strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, t[p], parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", p, err)
		}
		tests[p] = testFuncs(f)
	}
	return tests, nil
}

// testFuncs returns the names of f's test functions, as `go test` finds them.
func testFuncs(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Name.Name == "TestMain" || !isTestName(fn.Name.Name) {
			continue
		}
		names = append(names, fn.Name.Name)
	}
	return names
}

// isTestName reports whether name is "Test" followed by nothing or by a rune that is not a
// lower-case letter, the rule `go test` applies.
func isTestName(name string) bool {
	rest, ok := strings.CutPrefix(name, "Test")
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return !unicode.IsLower(r)
}

func compilePatterns(ch *manifest.Chapter) ([]*regexp.Regexp, error) {
	var res []*regexp.Regexp
	for _, lab := range ch.Labs {
		re, err := regexp.Compile(lab.Pattern)
		if err != nil {
			return nil, fmt.Errorf("lab %s pattern %q: %w", lab.ID, lab.Pattern, err)
		}
		res = append(res, re)
	}
	return res, nil
}

// checkContent proves rule 6: every lab's cards and the chapter's text exist and are not empty.
func checkContent(fsys fs.FS, ch *manifest.Chapter) Check {
	var want []string
	for _, lab := range ch.Labs {
		want = append(want, lab.CardPath("zh"), lab.CardPath("en"))
	}
	var problems []string
	if ch.Doc == "" {
		problems = append(problems, "the manifest names no doc for the chapter")
	} else {
		want = append(want, ch.Doc)
	}
	for _, p := range want {
		data, err := fs.ReadFile(fsys, p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			problems = append(problems, p+" is missing")
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", p, err))
		case len(strings.TrimSpace(string(data))) == 0:
			problems = append(problems, p+" is empty")
		}
	}
	if len(problems) > 0 {
		return Check{Detail: strings.Join(problems, "\n")}
	}
	return pass()
}

// goBuild runs `go build ./...` offline in dir and returns its output and whether it succeeded.
func goBuild(ctx context.Context, dir string) (string, bool, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", false, gotest.ErrNoGo
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), sharedBuildEnv()...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return string(out), true, nil
	}
	if ctx.Err() != nil {
		return "", false, ctx.Err()
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), false, nil
	}
	return "", false, fmt.Errorf("running go build: %w", err)
}

// describe says why a report is not OK.
func describe(r *gotest.Report) string {
	var parts []string
	if r.VetFailed {
		parts = append(parts, "go vet failed:\n"+clip(r.VetOutput))
	}
	if r.BuildFailed {
		parts = append(parts, "build failed:\n"+clip(r.BuildOutput))
	}
	for _, t := range r.Failed() {
		parts = append(parts, fmt.Sprintf("%s failed: %s", t.Name, t.FirstFailure))
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("go test exited with code %d", r.ExitCode))
	}
	return strings.Join(parts, "\n")
}

// clip keeps the first lines of long go output.
func clip(s string) string {
	const max = 20
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > max {
		lines = append(lines[:max], fmt.Sprintf("... (%d more lines)", len(lines)-max))
	}
	return strings.Join(lines, "\n")
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
