// Package gotest runs `go test -json` and reports the result per top-level test.
//
// The JSON stream is read with gotest.tools/gotestsum/testjson; this package only folds its test
// cases into top-level tests and picks out the line a learner should read first.
package gotest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"gotest.tools/gotestsum/testjson"

	"github.com/learn-tinypi/course/internal/manifest"
)

// ErrNoGo is returned by Run when the go command cannot be found.
var ErrNoGo = errors.New("the go command was not found on PATH: install the Go toolchain " +
	"(https://go.dev/dl/, or your system's package manager) and make sure its bin directory " +
	"(for example /usr/local/go/bin) is on PATH, then run `go version` to check")

// EnvironmentError reports a run of go that could not do its job because of the machine, not
// because of the code it builds and tests: the go command killed by a signal (the out-of-memory
// killer, a kill), or unable to start.
type EnvironmentError struct {
	// Cause says what happened, in English, for the learner.
	Cause string
	Err   error
}

func (e *EnvironmentError) Error() string { return e.Cause + ": " + e.Err.Error() }

func (e *EnvironmentError) Unwrap() error { return e.Err }

// environmentFailure matches what go prints outside any test when the machine, not the code,
// made the build fail: a full disk or quota, a read-only or unwritable cache, a missing GOROOT,
// a compiler or linker killed (usually for memory), memory or file descriptors exhausted.
var environmentFailure = regexp.MustCompile(`(?i)no space left on device|disk quota exceeded|read-only file system|` +
	`cannot find GOROOT|GOROOT.*(not found|does not exist)|failed to initialize build cache|could not create module cache|` +
	`(compile|link|asm|cgo|vet)[^\n]*signal: (killed|segmentation fault|bus error)|cannot allocate memory|too many open files`)

// EnvironmentCause returns the first line of output, what go said outside any test, that shows
// the machine failed the build rather than the code; "" when there is none.
func EnvironmentCause(output string) string {
	for _, line := range strings.Split(output, "\n") {
		if environmentFailure.MatchString(line) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// Options says which tests to run and how.
type Options struct {
	Dir      string   // the module directory `go` runs in; empty means the current directory
	Run      string   // the -run pattern; empty runs every test
	Race     bool     // adds -race
	Vet      bool     // runs `go vet` on Packages first (go test then skips its own vet checks); its failure is reported in Report.Vet*
	Env      []string // added to the current environment; later entries win
	Packages []string // the packages to test; default "."
	// Timeout, when set, is passed as -timeout: a test binary running longer panics, which
	// the report shows as the running test's failure.
	Timeout time.Duration
	// Overlay, when set, is passed as -overlay: the name of a JSON file that replaces or hides
	// source files for this run (`go help build`).
	Overlay string
	// SkipTestVet adds -vet=off: go test does not run the few vet checks it runs by default
	// before the tests. For runs whose verdict is only the tests' (a mutant's), or that run
	// the whole of go vet first (Vet).
	SkipTestVet bool
	// Unoptimized adds -gcflags='-N -l' (for the packages tested, not their dependencies): the
	// compiler neither optimises nor inlines, which saves about a third of the compile, the
	// larger part of a short run's CPU. For runs that judge what the tests report (a mutant, a
	// stub), never for the proof that the reference passes, which tests the code as it ships.
	Unoptimized bool
	// Fresh adds -count=1: the tests run even when go has a cached result for them, as a proof
	// (or a repeated run looking for a flaky failure) must.
	Fresh bool
	// Count, when above 1, runs every test that many times (-count=N, never cached), as a
	// search for flaky tests must; Report.Runs counts the outcomes.
	Count int
	// TestTimeout, when set, bounds each top-level test: one still running after it (an endless
	// loop, a wait that never ends) stops the whole go test, and the report names it in
	// TimedOut. Unlike Timeout the run's other results are kept, and nothing waits for go's own
	// timeout.
	TestTimeout time.Duration
	// LearnerView runs go as a learner's plain `go test` does, without -tags
	// manifest.EarlierTestsTag: in a checkpoint tree only the current chapter's focused tests
	// (and the helpers they use) compile. By default every run passes the tag, so the focused
	// tests of every chapter in the tree are there to run.
	LearnerView bool
	// Binary, when set, is a test binary that Compile built: it is run (through go tool
	// test2json, in Dir) instead of building the package again. Run, Timeout, Fresh, Count, Env
	// and TestTimeout apply; the build options (Race, Vet, SkipTestVet, Unoptimized, Overlay,
	// Packages) were Compile's.
	Binary string
	// Test2JSON, when set, is the test2json program (Test2JSON's answer) that a Binary run goes
	// through. Empty means `go tool test2json`, which starts the go command to find the tool
	// first: about 0.2 s of CPU a run, a fifth of a short mutant run's.
	Test2JSON string
	// BinaryPackage is the import path a Binary run reports its tests under (TestResult.Package);
	// empty means ".".
	BinaryPackage string
}

// TestResult is the outcome of one top-level test. Subtests are folded into their parent:
// their output lines follow the parent's own.
type TestResult struct {
	Package string
	Name    string
	Passed  bool
	Failed  bool
	Skipped bool
	// Output holds the lines the test printed, without their newlines. Passed tests keep
	// no output.
	Output []string
	// FirstFailure is the first message the test reported through t.Error/t.Fatal (the
	// "file_test.go:NN: " prefix removed) or its panic line, whichever came first; empty when
	// the test passed. go test prints t.Log lines the same way, so a failed test's earlier
	// t.Log line counts too.
	FirstFailure string
	// Difference holds, when FirstFailure is only the header of a diff (it ends with ':'), the
	// first lines of the message that carry the difference (the ones starting with - or +),
	// trimmed. FirstFailure itself stays the header: it is part of a failure's signature.
	Difference []string
	// Unfinished is true when the test binary exited while the test was running, before the
	// test reported its own result (os.Exit, log.Fatal, a panic in another goroutine, or a
	// syscall.Exit(0) whose "ok" go test credits to the running test). Failed is set too: a
	// test counts as passed only when it reported its pass itself.
	Unfinished bool
}

// Exit describes a test binary that exited before every test it had started reported a result.
type Exit struct {
	Package string
	// Test is the top-level test that was running when the binary exited (the unfinished test
	// that printed last); "" when no test was running.
	Test string
	// LastOutput holds the last lines the binary printed (at most ten), without go test's own
	// summary line.
	LastOutput []string
}

// Report is the outcome of one `go test` run.
type Report struct {
	// Tests are the top-level tests in the order they started.
	Tests []TestResult
	// BuildFailed is true when a package (or its tests) did not compile, or go could not set
	// up the build (a broken go.mod, a missing package).
	BuildFailed bool
	// BuildOutput holds what go said outside any test: build and setup errors, and the output
	// of a test binary that failed outside its tests (a panicking init or TestMain, a timeout).
	BuildOutput string
	// ExitCode is the exit code of `go test`.
	ExitCode int
	// Exits lists the packages whose test binary exited before all its started tests reported:
	// the tests of such a package that had not started yet did not run at all.
	Exits []Exit
	// VetFailed is true when Options.Vet was set and `go vet` failed; VetOutput holds what it
	// said.
	VetFailed bool
	VetOutput string
	// Runs counts, per top-level test name, how often it passed and failed: with -count=N a
	// test runs N times, and Tests folds those runs into one result.
	Runs map[string]RunCount
	// TimedOut names the top-level test that ran longer than Options.TestTimeout; go test was
	// stopped then, so the tests after it did not run. The test is in Tests, failed, with a
	// FirstFailure that says it timed out.
	TimedOut string
	// Environment, when not empty, is the line in which go said that the machine made the build
	// or the run fail (EnvironmentCause): nothing about the code under test is known from this
	// report.
	Environment string
}

// RunCount is how often one top-level test passed and failed in a run of `go test`, and the
// first failure message of its first failing run.
type RunCount struct {
	Passed, Failed int
	FirstFailure   string
}

// Run runs `go test -json` in opts.Dir and parses its output. The error is non-nil only when go
// cannot be run (ErrNoGo when it is not installed) or ctx ends; failing tests and builds are
// reported in the Report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	goBin, err := goCommand()
	if err != nil {
		return nil, err
	}
	pkgs := opts.Packages
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	report := &Report{}
	if opts.Binary != "" {
		prog, args := goBin, binaryArgs(opts)
		if opts.Test2JSON != "" {
			prog, args = opts.Test2JSON, args[2:] // without "tool test2json"
		}
		if err := runTests(ctx, prog, opts, args, report); err != nil {
			return nil, err
		}
		return report, nil
	}
	if opts.Vet {
		out, code, err := run(ctx, goBin, opts, append(append([]string{"vet"}, tagArgs(opts)...), pkgs...))
		if err != nil {
			return nil, err
		}
		report.VetFailed = code != 0
		if report.VetFailed {
			report.VetOutput = out
		}
	}
	args := append([]string{"test", "-json"}, tagArgs(opts)...)
	if opts.Race {
		args = append(args, "-race")
	}
	if opts.Timeout > 0 {
		args = append(args, "-timeout", opts.Timeout.String())
	}
	if opts.SkipTestVet || opts.Vet {
		args = append(args, "-vet=off")
	}
	if opts.Unoptimized {
		args = append(args, "-gcflags=-N -l")
	}
	if opts.Overlay != "" {
		args = append(args, "-overlay="+opts.Overlay)
	}
	switch {
	case opts.Count > 1:
		args = append(args, fmt.Sprintf("-count=%d", opts.Count))
	case opts.Fresh:
		args = append(args, "-count=1")
	}
	if opts.Run != "" {
		args = append(args, "-run", opts.Run)
	}
	args = append(args, pkgs...)
	if err := runTests(ctx, goBin, opts, args, report); err != nil {
		return nil, err
	}
	return report, nil
}

// tagArgs returns the -tags flag of a build for opts: every chapter's focused tests unless the
// run takes the learner's view (Options.LearnerView).
func tagArgs(opts Options) []string {
	if opts.LearnerView {
		return nil
	}
	return []string{"-tags=" + manifest.EarlierTestsTag}
}

// goCommand finds the go command on PATH: ErrNoGo when it is not there.
func goCommand() (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", ErrNoGo
		}
		return "", fmt.Errorf("looking for the go command: %w", err)
	}
	return goBin, nil
}

// Test2JSON returns the path of the test2json program that `go tool test2json` runs, in the
// environment env adds to the current one, so that many runs of test binaries (Options.Binary)
// start it directly. The go command builds the tool into its build cache on first use; Test2JSON
// has it built when the cache does not hold it yet.
func Test2JSON(ctx context.Context, env []string) (string, error) {
	goBin, err := goCommand()
	if err != nil {
		return "", err
	}
	opts := Options{Env: env}
	find := func() (string, error) {
		out, code, err := run(ctx, goBin, opts, []string{"tool", "-n", "test2json"})
		if err != nil {
			return "", err
		}
		path := strings.TrimSpace(out)
		if code != 0 || strings.ContainsAny(path, "\n ") {
			return "", fmt.Errorf("go tool -n test2json: exit %d: %q", code, path)
		}
		info, err := os.Stat(path)
		if err != nil {
			return "", err
		}
		if !info.Mode().IsRegular() {
			return "", fmt.Errorf("go tool -n test2json: %s is not a regular file", path)
		}
		return path, nil
	}
	if path, err := find(); err == nil {
		return path, nil
	}
	// Not built yet: any use of the tool builds it (-h prints its usage and exits 2).
	if _, _, err := run(ctx, goBin, opts, []string{"tool", "test2json", "-h"}); err != nil {
		return "", err
	}
	return find()
}

// binaryArgs returns the arguments of go that run opts.Binary and report as go test -json does.
func binaryArgs(opts Options) []string {
	args := []string{"tool", "test2json", "-t", "-p", cmp.Or(opts.BinaryPackage, "."), opts.Binary, "-test.v=test2json"}
	if opts.Timeout > 0 {
		args = append(args, "-test.timeout="+opts.Timeout.String())
	}
	if opts.Count > 1 {
		args = append(args, fmt.Sprintf("-test.count=%d", opts.Count))
	}
	if opts.Run != "" {
		args = append(args, "-test.run="+opts.Run)
	}
	return args
}

// Compile builds the test binary of the package in opts.Dir (`go test -c`) into out, with
// opts's build options (Race, SkipTestVet, Unoptimized, Overlay, Env), for runs with
// Options.Binary. A build that fails is reported as Run reports one: BuildFailed and
// BuildOutput, and no binary.
func Compile(ctx context.Context, opts Options, out string) (*Report, error) {
	goBin, err := goCommand()
	if err != nil {
		return nil, err
	}
	args := append([]string{"test", "-c", "-o", out}, tagArgs(opts)...)
	if opts.Race {
		args = append(args, "-race")
	}
	if opts.SkipTestVet {
		args = append(args, "-vet=off")
	}
	if opts.Unoptimized {
		args = append(args, "-gcflags=-N -l")
	}
	if opts.Overlay != "" {
		args = append(args, "-overlay="+opts.Overlay)
	}
	output, code, err := run(ctx, goBin, opts, append(args, "."))
	if err != nil {
		return nil, err
	}
	report := &Report{ExitCode: code, BuildFailed: code != 0}
	if report.BuildFailed {
		report.BuildOutput = output
		report.Environment = EnvironmentCause(output)
	}
	return report, nil
}

// OK reports whether everything ran and passed: vet (when asked), the build and every test.
func (r *Report) OK() bool {
	return !r.VetFailed && !r.BuildFailed && r.ExitCode == 0 && len(r.Failed()) == 0
}

// Failed returns the tests that failed, in the order they started.
func (r *Report) Failed() []TestResult {
	var failed []TestResult
	for _, t := range r.Tests {
		if t.Failed {
			failed = append(failed, t)
		}
	}
	return failed
}

// Exited returns the first entry of Exits, and whether there is one.
func (r *Report) Exited() (Exit, bool) {
	if len(r.Exits) == 0 {
		return Exit{}, false
	}
	return r.Exits[0], true
}

// Test returns the top-level test with the given name (the first one when several packages have
// a test of that name).
func (r *Report) Test(name string) (TestResult, bool) {
	for _, t := range r.Tests {
		if t.Name == name {
			return t, true
		}
	}
	return TestResult{}, false
}

// OfflineEnv returns the environment that keeps go offline and inside the module: no downloads,
// no go.mod rewrites, no workspace and no toolchain switch. Its GOFLAGS replaces the current
// one, but keeps -trimpath when the current one has it: that flag changes no test's behaviour,
// only how builds are keyed in go's build cache, and make test sets it so that all of its parts
// and the go commands they start share one build of the standard library and the modules
// instead of one with it and one without (docs/performance.md).
func OfflineEnv() []string {
	flags := "GOFLAGS=-mod=readonly"
	if slices.Contains(strings.Fields(os.Getenv("GOFLAGS")), "-trimpath") {
		flags += " -trimpath"
	}
	return []string{flags, "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local"}
}

// stopGrace is how long go (and the test binaries it runs) get to end after an interrupt before
// the whole process group is killed.
const stopGrace = 3 * time.Second

// process is a go command running in its own process group, with its own temporary directory.
type process struct {
	cmd    *exec.Cmd
	finish func()
}

// command returns the go command for args, set up from opts and by Prepare. Call its finish once
// the command has ended (or failed to start).
func command(ctx context.Context, goBin string, opts Options, args []string) (*process, error) {
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = opts.Dir
	cmd.Env = append(os.Environ(), opts.Env...)
	finish, err := Prepare(cmd)
	if err != nil {
		return nil, fmt.Errorf("preparing go %s: %w", args[0], err)
	}
	return &process{cmd: cmd, finish: finish}, nil
}

// Prepare sets up cmd, made by exec.CommandContext and not started yet, to leave nothing behind:
// it runs in its own process group; when its context ends the whole group is interrupted, as a
// terminal's Ctrl-C would (go then stops its test binaries and removes its work directory, which
// it leaves behind on SIGTERM or SIGKILL), and killed after stopGrace. TMPDIR and GOTMPDIR point
// to a new directory of the command's own (inside $GOTMPDIR, else the system's temporary
// directory). finish, to be called once cmd has ended or failed to start, kills what is left of
// the group and removes that directory with whatever a killed build or test left in it.
func Prepare(cmd *exec.Cmd) (finish func(), err error) {
	tmp, err := os.MkdirTemp(os.Getenv("GOTMPDIR"), "course-go-")
	if err != nil {
		return nil, fmt.Errorf("creating a temporary directory: %w", err)
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp, "GOTMPDIR="+tmp)
	setProcessGroup(cmd)
	done := make(chan struct{})
	cmd.Cancel = func() error {
		err := signalGroup(cmd.Process, false)
		go func() {
			select {
			case <-time.After(stopGrace):
				_ = signalGroup(cmd.Process, true)
			case <-done:
			}
		}()
		return err
	}
	// A test binary that outlives a killed go command would keep the pipes open; stop
	// waiting for it after a while.
	cmd.WaitDelay = stopGrace + 2*time.Second
	return func() {
		close(done)
		if cmd.Process != nil {
			_ = signalGroup(cmd.Process, true)
		}
		os.RemoveAll(tmp)
	}, nil
}

// exitCode turns the error of cmd.Run or cmd.Wait into an exit code, or an error when go did
// not run to its end: ctx's, or an *EnvironmentError when go was killed from outside.
func exitCode(ctx context.Context, args []string, err error) (int, error) {
	if err == nil {
		return 0, nil
	}
	if ctx.Err() != nil {
		return 0, fmt.Errorf("go %s: %w", args[0], ctx.Err())
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() >= 0 {
		return exit.ExitCode(), nil
	}
	if errors.As(err, &exit) {
		// A signal ended the go command itself, which runs none of the code under test (that
		// runs in test binaries, whose end go reports): the machine or a person stopped it.
		return 0, &EnvironmentError{Cause: fmt.Sprintf("the go command (go %s) was ended by a signal (%s), which none of the tested code sends it: out of memory, or killed", args[0], exit), Err: err}
	}
	return 0, fmt.Errorf("running go %s: %w", args[0], err)
}

// run runs go with args and returns its combined output and exit code.
func run(ctx context.Context, goBin string, opts Options, args []string) (string, int, error) {
	p, err := command(ctx, goBin, opts, args)
	if err != nil {
		return "", 0, err
	}
	defer p.finish()
	out, err := p.cmd.CombinedOutput()
	code, err := exitCode(ctx, args, err)
	return string(out), code, err
}

// runTests runs `go test -json` and fills report from its output.
func runTests(ctx context.Context, goBin string, opts Options, args []string, report *Report) error {
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	p, err := command(ctx, goBin, opts, args)
	if err != nil {
		return err
	}
	defer p.finish()
	cmd := p.cmd
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("running go test: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return fmt.Errorf("running go test: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return &EnvironmentError{Cause: "the go command could not be started", Err: err}
	}
	h := &handler{limit: opts.TestTimeout, stop: cancel, reported: map[testKey]bool{}, last: map[string]*lastOutput{}}
	defer h.stopTimers()
	execution, scanErr := testjson.ScanTestOutput(testjson.ScanConfig{
		Stdout:                   stdout,
		Stderr:                   stderr,
		Handler:                  h,
		Stop:                     func() { cancel(nil) },
		IgnoreNonJSONOutputLines: true,
	})
	waited := cmd.Wait()
	timedOut := h.expired()
	if timedOut != "" && parent.Err() == nil {
		// Stopped by the watchdog: not an error of the run, a failure of the test.
		ctx, waited = parent, nil
		report.TimedOut = timedOut
	}
	code, waitErr := exitCode(ctx, args, waited)
	if scanErr != nil {
		return fmt.Errorf("reading go test output: %w", scanErr)
	}
	if waitErr != nil {
		return waitErr
	}
	if report.TimedOut != "" && code == 0 {
		code = 1
	}
	report.ExitCode = code
	report.Tests = topLevel(execution, h.reported)
	report.Exits = exits(report.Tests, h.last)
	report.BuildOutput = strings.Join(h.output, "") + outsideTests(execution)
	report.BuildFailed = h.buildFailed
	report.Runs = h.runs
	if report.TimedOut != "" {
		markTimedOut(report, report.TimedOut, opts.TestTimeout)
	}
	if code != 0 && !h.buildFailed && !h.packageFailed && len(report.Failed()) == 0 {
		// go stopped before any package ran: a broken go.mod, a bad flag, a missing
		// directory. Nothing was tested, which the caller must not mistake for a pass.
		report.BuildFailed = true
	}
	if report.BuildFailed {
		report.Environment = EnvironmentCause(report.BuildOutput)
	}
	return nil
}

// handler watches the event stream for build failures and keeps the build output, which
// tests reported their own pass, each package's last output and each test's run counts, and
// stops go test when a top-level test runs longer than limit. ScanTestOutput calls it from two
// goroutines (stdout and stderr), hence the mutex.
type handler struct {
	mu            sync.Mutex
	buildFailed   bool
	packageFailed bool
	output        []string
	runs          map[string]RunCount // by top-level test name
	running       map[string][]string // the output lines of each top-level test's current run

	limit   time.Duration           // 0: no limit
	stop    context.CancelCauseFunc // stops go test
	timers  map[testKey]*time.Timer // the running top-level tests' watchdogs
	tooLong string                  // the first test that ran longer than limit

	// reported holds the tests that printed their own "--- PASS: Name" line. go test credits
	// the "ok" of a binary that exited with status 0 to the test that was running, with a pass
	// event but without that line.
	reported map[testKey]bool
	last     map[string]*lastOutput // by package
}

// testKey names a test of a package.
type testKey struct{ pkg, test string }

// errTestTimedOut is the cause go test is stopped with when a test runs too long.
var errTestTimedOut = errors.New("a test ran longer than its time limit")

// watch starts or stops the watchdog of a top-level test according to its event. The caller
// holds h.mu.
func (h *handler) watch(e testjson.TestEvent) {
	if h.limit <= 0 || e.Test == "" || strings.Contains(e.Test, "/") {
		return
	}
	key := testKey{e.Package, e.Test}
	switch e.Action {
	case testjson.ActionRun, testjson.ActionCont:
		if h.timers == nil {
			h.timers = map[testKey]*time.Timer{}
		}
		h.timers[key] = time.AfterFunc(h.limit, func() {
			h.mu.Lock()
			if h.tooLong == "" {
				h.tooLong = e.Test
			}
			h.mu.Unlock()
			h.stop(errTestTimedOut)
		})
	case testjson.ActionPass, testjson.ActionFail, testjson.ActionSkip, testjson.ActionPause:
		// A paused (parallel) test waits for the others; its clock restarts when it continues.
		if t, ok := h.timers[key]; ok {
			t.Stop()
			delete(h.timers, key)
		}
	}
}

// stopTimers stops every watchdog.
func (h *handler) stopTimers() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.timers {
		t.Stop()
	}
	h.timers = nil
}

// expired returns the test whose watchdog fired, "" when none did.
func (h *handler) expired() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tooLong
}

// markTimedOut marks the top-level test name of report as failed because it ran longer than
// limit, adding it when go reported nothing of it.
func markTimedOut(report *Report, name string, limit time.Duration) {
	msg := fmt.Sprintf("timed out: still running after %s, so go test was stopped", limit)
	for i := range report.Tests {
		if t := &report.Tests[i]; t.Name == name {
			t.Passed, t.Failed, t.Skipped = false, true, false
			t.FirstFailure = msg
			return
		}
	}
	report.Tests = append(report.Tests, TestResult{Name: name, Failed: true, FirstFailure: msg})
}

// lastOutputLines is how many of a package's last output lines a report keeps.
const lastOutputLines = 10

// lastOutput is the end of one package's output, and the top-level test that printed last.
type lastOutput struct {
	lines []string
	test  string
}

// passLine is the line a test prints when it passes, "--- PASS: TestX (0.00s)".
var passLine = regexp.MustCompile(`^\s*--- PASS: (\S+) \(`)

// summaryLine matches the lines go test prints for a whole package.
var summaryLine = regexp.MustCompile(`^(ok|FAIL|PASS)(\s|$)`)

func (h *handler) record(e testjson.TestEvent) {
	if e.Action != testjson.ActionOutput || e.Package == "" {
		return
	}
	line := strings.TrimRight(e.Output, "\n")
	// By the name in the line, not the event's test: go test has attributed output to the
	// wrong test before (golang.org/issue/29755).
	if m := passLine.FindStringSubmatch(line); m != nil {
		h.reported[testKey{e.Package, m[1]}] = true
	}
	if line == "" || summaryLine.MatchString(line) || strings.HasPrefix(line, "=== ") {
		return
	}
	l := h.last[e.Package]
	if l == nil {
		l = &lastOutput{}
		h.last[e.Package] = l
	}
	if e.Test != "" {
		l.test, _ = testjson.TestName(e.Test).Split()
	}
	l.lines = append(l.lines, line)
	if len(l.lines) > lastOutputLines {
		l.lines = l.lines[len(l.lines)-lastOutputLines:]
	}
}

// failedBuild is the field go test -json sets on a package's fail event when its build failed;
// testjson.TestEvent does not carry it.
type failedBuild struct {
	FailedBuild string
}

func (h *handler) Event(e testjson.TestEvent, _ *testjson.Execution) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.watch(e)
	h.record(e)
	switch e.Action {
	case testjson.ActionBuild:
		h.buildFailed = true
		h.output = append(h.output, e.Output)
	case "build-fail":
		h.buildFailed = true
	case testjson.ActionRun:
		h.startRun(e.Test)
	case testjson.ActionOutput:
		h.addOutput(e.Test, e.Output)
	case testjson.ActionPass:
		h.countRun(e.Test, false)
	case testjson.ActionFail:
		if e.Test != "" {
			h.countRun(e.Test, true)
			return nil
		}
		h.packageFailed = true
		var fb failedBuild
		if raw := e.Bytes(); raw != nil && json.Unmarshal(raw, &fb) == nil && fb.FailedBuild != "" {
			h.buildFailed = true
		}
	}
	return nil
}

// root returns the top-level test of test, and whether test is itself top-level.
func root(test string) (string, bool) {
	name, sub := testjson.TestName(test).Split()
	return name, sub == ""
}

// startRun begins a run of a top-level test: its output so far belonged to an earlier run.
func (h *handler) startRun(test string) {
	if name, top := root(test); test != "" && top {
		if h.running == nil {
			h.running = map[string][]string{}
		}
		h.running[name] = nil
	}
}

// addOutput keeps an output line of a test (or subtest) under its top-level test's current run.
func (h *handler) addOutput(test, line string) {
	if test == "" || h.running == nil {
		return
	}
	name, _ := root(test)
	h.running[name] = append(h.running[name], strings.TrimSuffix(line, "\n"))
}

// countRun counts the end of one run of a top-level test.
func (h *handler) countRun(test string, failed bool) {
	name, top := root(test)
	if test == "" || !top {
		return
	}
	if h.runs == nil {
		h.runs = map[string]RunCount{}
	}
	c := h.runs[name]
	if failed {
		c.Failed++
		if c.FirstFailure == "" {
			c.FirstFailure = FirstFailure(h.running[name])
		}
	} else {
		c.Passed++
	}
	h.runs[name] = c
}

func (h *handler) Err(text string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.output = append(h.output, text+"\n")
	return nil
}

// outsideTests returns the output of the packages that failed outside their tests.
func outsideTests(execution *testjson.Execution) string {
	var b strings.Builder
	for _, name := range execution.Packages() {
		if pkg := execution.Package(name); pkg.TestMainFailed() {
			_ = pkg.WriteOutputTo(&b, 0) // a strings.Builder never fails
		}
	}
	return b.String()
}

// exits returns the packages of tests whose binary exited with a test unfinished.
func exits(tests []TestResult, last map[string]*lastOutput) []Exit {
	var out []Exit
	seen := map[string]bool{}
	for _, t := range tests {
		if !t.Unfinished || seen[t.Package] {
			continue
		}
		seen[t.Package] = true
		e := Exit{Package: t.Package, Test: t.Name}
		if l := last[t.Package]; l != nil {
			e.LastOutput = l.lines
			if r, ok := findTest(tests, t.Package, l.test); ok && r.Unfinished {
				e.Test = l.test
			}
		}
		out = append(out, e)
	}
	return out
}

func findTest(tests []TestResult, pkg, name string) (TestResult, bool) {
	for _, t := range tests {
		if t.Package == pkg && t.Name == name {
			return t, true
		}
	}
	return TestResult{}, false
}

// topLevel folds execution's test cases into top-level tests, in the order they started.
// reported holds the tests that printed their own pass line; a pass without it is unfinished.
func topLevel(execution *testjson.Execution, reported map[testKey]bool) []TestResult {
	var results []TestResult
	for _, name := range execution.Packages() {
		pkg := execution.Package(name)
		type tcase struct {
			tc     testjson.TestCase
			action testjson.Action
		}
		var cases []tcase
		for _, tc := range pkg.Passed {
			cases = append(cases, tcase{tc, testjson.ActionPass})
		}
		for _, tc := range pkg.Failed {
			cases = append(cases, tcase{tc, testjson.ActionFail})
		}
		for _, tc := range pkg.Skipped {
			cases = append(cases, tcase{tc, testjson.ActionSkip})
		}
		sort.Slice(cases, func(i, j int) bool { return cases[i].tc.ID < cases[j].tc.ID })

		index := map[string]int{} // top-level name → position in results
		for _, c := range cases {
			root, _ := c.tc.Test.Split()
			i, ok := index[root]
			if !ok {
				i = len(results)
				index[root] = i
				results = append(results, TestResult{Package: name, Name: root})
			}
			r := &results[i]
			if !c.tc.Test.IsSubTest() {
				r.Passed = c.action == testjson.ActionPass
				r.Failed = c.action == testjson.ActionFail
				r.Skipped = c.action == testjson.ActionSkip
				// A test that never ended, or whose pass go credited from the binary's exit.
				r.Unfinished = c.tc.Elapsed < 0 || (r.Passed && !reported[testKey{name, root}])
				if r.Unfinished {
					r.Passed, r.Failed = false, true
				}
			}
		}
		// Output in the order the cases started: the parent's own lines, then each subtest's.
		for _, c := range cases {
			root, _ := c.tc.Test.Split()
			r := &results[index[root]]
			if c.action == testjson.ActionPass && !c.tc.Test.IsSubTest() && !r.Unfinished {
				continue
			}
			// Each case's own lines: Package.OutputLines would add a parent's passed
			// subtests' lines a second time.
			out := strings.TrimSuffix(caseOutput(pkg, c.tc.ID), "\n")
			if out != "" {
				r.Output = append(r.Output, strings.Split(out, "\n")...)
			}
		}
	}
	for i := range results {
		r := &results[i]
		if !r.Failed {
			r.Output = nil
			continue
		}
		r.FirstFailure = FirstFailure(r.Output)
		r.Difference = Difference(r.Output)
		if pkg := execution.Package(r.Package); r.FirstFailure == "" && pkg.TestMainFailed() {
			// A timeout's panic is printed as the package's output, not the test's.
			r.FirstFailure = FirstFailure(strings.Split(caseOutput(pkg, 0), "\n"))
		}
	}
	return results
}

// caseOutput returns the output of pkg's test case id (0: the package's own output).
func caseOutput(pkg *testjson.Package, id int) string {
	var b strings.Builder
	_ = pkg.WriteOutputTo(&b, id) // a strings.Builder never fails
	return b.String()
}

// differenceLines is how many lines of a diff Difference keeps.
const differenceLines = 2

// Difference returns, when the first failure message of lines is a diff's header (it ends with
// ':'), the first lines after it that start with - or + (trimmed), at most two; nil otherwise.
func Difference(lines []string) []string {
	for i, line := range lines {
		m := messageLine.FindStringSubmatch(line)
		if m == nil {
			if strings.HasPrefix(line, "panic: ") {
				return nil
			}
			continue
		}
		if !strings.HasSuffix(strings.TrimSpace(m[1]), ":") {
			return nil
		}
		var diff []string
		for _, next := range lines[i+1:] {
			if messageLine.MatchString(next) || strings.HasPrefix(strings.TrimSpace(next), "--- ") {
				break
			}
			text := strings.TrimSpace(next)
			if strings.HasPrefix(text, "-") || strings.HasPrefix(text, "+") {
				diff = append(diff, strings.Join(strings.Fields(text), " "))
				if len(diff) == differenceLines {
					break
				}
			}
		}
		return diff
	}
	return nil
}

var (
	// messageLine is a line printed by t.Error, t.Fatal (or t.Log): indented, then file:line.
	messageLine = regexp.MustCompile(`^\s+[^\s:]+\.go:\d+: (.*)$`)
	// recovered is the suffix the testing package adds to a panic it re-raises.
	recovered = regexp.MustCompile(` \[recovered[^\]]*\]$`)
)

// FirstFailure returns the first t.Error/t.Fatal message (without its "file_test.go:NN: "
// prefix), panic line or data race (see raceSummary) of a failed test's output lines; "" when
// there is none.
func FirstFailure(lines []string) string {
	for i, line := range lines {
		if m := messageLine.FindStringSubmatch(line); m != nil {
			return strings.TrimSpace(m[1])
		}
		if strings.HasPrefix(line, "panic: ") {
			return recovered.ReplaceAllString(line, "")
		}
		if line == "WARNING: DATA RACE" {
			return raceSummary(lines[i+1:])
		}
	}
	return ""
}

// raceAccess is the head of one access in a race detector's report: "Write at 0x00c0000a4188 by
// goroutine 9:", "Previous read at … by main goroutine:".
var raceAccess = regexp.MustCompile(`^([A-Z][a-z]*(?: [a-z]+)*) at 0x[0-9a-f]+ by `)

// raceSummary names the two accesses of the race detector's report that follows "WARNING: DATA
// RACE" in lines: "data race: read in tinypi.(*Agent).Abort (agent.go), write in
// tinypi.(*Agent).start (agent.go)", each by its innermost function outside the Go distribution,
// in sorted order. Which access came first, addresses, goroutine and line numbers are left out:
// they differ from run to run and from one learner's code to another's, and a mistake's
// signature must not.
func raceSummary(lines []string) string {
	var accesses []string
	for i := 0; i < len(lines) && len(accesses) < 2; i++ {
		if lines[i] == "==================" {
			break
		}
		m := raceAccess.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		where := "?"
		// Frames are pairs of lines: "  pkg.Func()", "      /path/file.go:12 +0x33".
		for j := i + 1; j+1 < len(lines) && strings.HasPrefix(lines[j], "  ") && !strings.HasPrefix(lines[j], "   "); j += 2 {
			file := strings.TrimSpace(lines[j+1])
			if k := strings.LastIndex(file, ":"); k >= 0 {
				file = file[:k]
			}
			if inGoDistribution(file) {
				continue
			}
			where = strings.TrimSuffix(strings.TrimSpace(lines[j]), "()") + " (" + filepath.Base(file) + ")"
			break
		}
		kind := strings.TrimPrefix(strings.ToLower(m[1]), "previous ")
		accesses = append(accesses, kind+" in "+where)
	}
	if len(accesses) == 0 {
		return "data race"
	}
	// Which access the detector met first depends on the schedule; the race is the same.
	sort.Strings(accesses)
	return "data race: " + strings.Join(accesses, ", ")
}

// inGoDistribution reports whether file, from a stack frame, belongs to the runtime or to the
// standard library's synchronisation and testing code rather than to the code under test. The
// Go that built the test binary may not be the one running this code, so its GOROOT is
// recognised by the shape of these paths.
func inGoDistribution(file string) bool {
	file = filepath.ToSlash(file)
	for _, dir := range []string{"/src/runtime/", "/src/internal/", "/src/sync/", "/src/testing/"} {
		if strings.Contains(file, dir) {
			return true
		}
	}
	return false
}
