package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/progress"
	"github.com/learn-tinypi/course/solutions/tinypi"
)

// labRunMessages are the texts of a run of focused tests, whichever command starts it.
var labRunMessages = i18n.Catalog{
	"test.running": {ZH: "第 %s 章 · 运行：go test %s-run %s %s", EN: "chapter %s · running: go test %s-run %s %s"},
	"test.norace": {
		ZH: "注意：这台机器不能用竞态检测器（go test -race）运行：\n  %s\n这次运行没有 -race：只有检测器能看到的数据竞争不会被发现。",
		EN: "warning: this machine cannot run the race detector (go test -race):\n  %s\nThis run is without -race: a data race that only the detector sees goes unnoticed.",
	},
	"progress.save": {ZH: "注意：无法保存进度（%v）", EN: "warning: the progress could not be saved (%v)"},
	"test.env": {
		ZH: "没有运行任何测试：问题出在这台机器上，不是你的代码：\n  %s\n处理好之后再运行（磁盘空间：df -h；Go 的安装与环境：course doctor）。这次运行没有被记录，进度不变。",
		EN: "no test ran: the cause is this machine, not your code:\n  %s\nDeal with it, then run again (disk space: df -h; the Go installation and environment: course doctor). This run was not recorded; your progress is unchanged.",
	},
	"tests.changed": {
		ZH: "注意：聚焦测试文件和练习开始时不一样了：%s\n改过的测试证明不了什么：在恢复之前，没有 Lab 会被记为完成，参考答案也不会解锁。\n恢复它们（只恢复测试文件，你的代码不动）：\n  %s",
		EN: "WARNING: the focused test files differ from the ones the practice started with: %s\nEdited tests prove nothing: until they are restored, no lab is marked done and no solution unlocks.\nRestore them (only the test files; your code stays as it is):\n  %s",
	},
}

// runPattern is the -run pattern that selects the tests of labs.
func runPattern(labs []*manifest.Lab) string {
	patterns := make([]string, len(labs))
	for i, l := range labs {
		patterns[i] = l.Pattern
	}
	return strings.Join(patterns, "|")
}

// labRun is one run of the focused tests of some labs of a chapter.
type labRun struct {
	// testsChanged lists the focused test files that differ from the practice's start: while it
	// is not empty no lab counts as done.
	testsChanged []string
	report       *gotest.Report
	outcome      progress.Progress // what the run found about the labs it ran
	progress     progress.Progress // the chapter's progress with the outcome merged in
}

// runLabs runs the focused tests of labs in the practice directory root, records the outcome in
// its progress file and returns the report, the outcome and the updated progress of the whole
// chapter. A progress file that cannot be written is a warning, not a failure.
func (a *app) runLabs(ctx context.Context, root string, ch *manifest.Chapter, labs []*manifest.Lab) (labRun, error) {
	changed := a.changedTests(root)
	if len(changed) > 0 {
		a.printTestsChanged(changed)
	}
	run := runPattern(labs)
	// A lab whose mistakes include data races is run as its card says, with the race detector.
	race := slices.ContainsFunc(labs, func(l *manifest.Lab) bool { return l.Race })
	raceFlag := ""
	if race {
		raceFlag = "-race "
	}
	// The labs' packages: "." (the module's root package) for most chapters, a chapter's own
	// package ("./eval") for its labs, both for course test --all.
	pkgs := manifest.LabPackages(labs)
	fmt.Fprintln(a.stdout, a.p.text("test.running", ch.Number, raceFlag, shellQuote(run), strings.Join(pkgs, " ")))
	// The marker check builds the chapter's starter, a tenth of a second or two of CPU on every
	// run: it runs beside the go command's own start and prints while go builds. Nothing else
	// writes until it is done (<-markersDone), so its lines come before the run's.
	markersDone := make(chan struct{})
	go func() {
		defer close(markersDone)
		a.warnLabMarkers(root, ch.Number) // labmarkers.go
	}()
	defer func() { <-markersDone }() // also on an early return; a closed channel answers again
	started := time.Now()
	// Unoptimized: a third less compile for the same verdict, and a panic's stack without
	// inlined frames folded away.
	opts := gotest.Options{Dir: root, Run: run, Env: transcriptEnv(root), TestTimeout: a.testTimeout, Unoptimized: true, Race: race, Packages: pkgs}
	var kitTests map[string]string
	if _, prov, err := practice.Find(root); err == nil {
		kitTests = prov.TestFiles
	}
	own := slices.DeleteFunc(slices.Clone(labs), func(l *manifest.Lab) bool { return !slices.Contains(ch.Labs, l) })
	overlay, removeOverlay := "", func() {}
	if len(own) == len(labs) {
		// Only ch's tests run: compile no other chapter's (course test --all runs them all).
		overlay, removeOverlay = focusOverlay(root, ch, kitTests) // focus.go
	}
	defer removeOverlay()
	opts.Overlay = overlay
	report, err := gotest.Run(ctx, opts)
	<-markersDone
	if err == nil && race && report.BuildFailed && raceUnsupported(report.BuildOutput) {
		// -race needs cgo on some systems (Windows without a C compiler): run without it, and say
		// what the learner loses.
		fmt.Fprintln(a.stderr, a.p.text("test.norace", strings.TrimSpace(report.BuildOutput)))
		opts.Race = false
		report, err = gotest.Run(ctx, opts)
	}
	if err == nil && overlay != "" && report.BuildFailed {
		// The build without the other chapters' tests failed: build the whole package, whose
		// errors are the ones the learner's own go test shows.
		opts.Overlay = ""
		report, err = gotest.Run(ctx, opts)
	}
	var envErr *gotest.EnvironmentError
	switch {
	case errors.As(err, &envErr):
		return labRun{}, a.environmentFailure(envErr.Cause)
	case err != nil:
		return labRun{}, err
	case report.Environment != "":
		// The build failed for the machine: a "build failed" against the labs would blame
		// the learner's code, and recording it would turn their progress red.
		return labRun{}, a.environmentFailure(report.Environment)
	}
	a.printTimedOut(ch, report)                              // timeout.go
	outcome := progress.FromReport(ch, own, report, started) // the record is ch's
	if len(changed) > 0 {
		outcome.Distrust(testsChangedReason(changed))
	}
	return labRun{testsChanged: changed, report: report, outcome: outcome,
		progress: a.recordProgress(root, ch, outcome, changed)}, nil
}

// raceUnsupported reports whether a failed build's output says that go test -race cannot run on
// this machine ("-race requires cgo", "-race is not supported on …").
func raceUnsupported(buildOutput string) bool {
	return strings.Contains(buildOutput, "-race requires cgo") || strings.Contains(buildOutput, "-race is not supported")
}

// environmentFailure says that the machine, not the learner's code, failed the run (what go
// said is cause) and returns the failure to exit with.
func (a *app) environmentFailure(cause string) error {
	fmt.Fprintln(a.stdout, style{a.color}.bad(a.p.text("test.env", cause)))
	return errSilentFailure
}

// changedTests returns the focused test files of the practice directory root that differ from
// the ones it was created with. A failure to check is a warning: the run still counts.
func (a *app) changedTests(root string) []string {
	_, prov, err := practice.Find(root)
	if err != nil {
		return nil
	}
	changed, err := prov.ChangedTestFiles(root)
	if err != nil {
		fmt.Fprintln(a.stderr, a.p.text("err.prefix", err))
		return nil
	}
	return changed
}

// printTestsChanged says loudly that the focused tests were edited, and how to restore them.
func (a *app) printTestsChanged(changed []string) {
	cmd := "course reset --tests"
	if a.fromCwd != "" {
		cmd += " " + shellQuote(a.fromCwd)
	}
	fmt.Fprintln(a.stdout, style{a.color}.bad(a.p.text("tests.changed", strings.Join(changed, ", "), cmd)))
}

// testsChangedReason is the first failure recorded for a lab that a run with edited focused
// tests cannot prove done.
func testsChangedReason(changed []string) string {
	return "focused tests changed (" + strings.Join(changed, ", ") + "): course reset --tests"
}

// savedProgress returns the progress file of root when it belongs to ch; nil when it is
// missing, unreadable or of another chapter.
func savedProgress(root string, ch *manifest.Chapter) *progress.Progress {
	p, err := progress.Load(root)
	if err != nil || p.Chapter != ch.Number {
		return nil
	}
	return p
}

// recordProgress merges a run's outcome into the progress file of root and returns the
// chapter's progress.
func (a *app) recordProgress(root string, ch *manifest.Chapter, run progress.Progress, testsChanged []string) progress.Progress {
	old, err := progress.Load(root)
	if err != nil {
		old = nil // missing or unreadable: this run starts it afresh
	}
	p := progress.Merge(ch, old, run)
	if len(testsChanged) > 0 {
		p.Distrust(testsChangedReason(testsChanged))
	}
	if err := progress.Save(root, p); err != nil {
		fmt.Fprintln(a.stderr, a.p.text("progress.save", err))
	}
	return p
}

// transcriptsDir is where `course test` has the focused tests write their run records, relative
// to the practice directory.
const transcriptsDir = ".course/transcripts"

// transcriptEnv is the environment that has the focused tests in root record their runs.
func transcriptEnv(root string) []string {
	return []string{tinypi.RunRecordDirEnv + "=" + filepath.Join(root, filepath.FromSlash(transcriptsDir))}
}
