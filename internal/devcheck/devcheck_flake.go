package devcheck

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/hang"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/progress"
	"github.com/learn-tinypi/course/internal/tree"
)

// DefaultFlakeRuns is how many times the flake check runs a chapter's focused tests with -race
// when Options.FlakeRuns is 0. A test that fails once in a few dozen runs on a busy two-core
// machine turns a learner's correct solution red at random. Twelve runs catch a 5% flake with a
// probability of about 46% and a 10% flake with 72%; CI proves every chapter on every push, so a
// flake that one run misses is met again at the next, and an author who suspects one asks for
// more (--flake-runs). It was fifty, then twenty-five, each time cut to keep a fresh-clone
// make test near CI's 15 minutes: on 2026-12-07 the flake runs of all chapters were 256 s of
// CPU at twenty-five, chapter 13's alone 108 s (its tests start child processes of a
// race-built binary), out of about 2,800 s for the whole run (docs/performance.md).
const DefaultFlakeRuns = 12

// flakeRuns returns how many times the flake check runs each chapter's tests.
func (o Options) flakeRuns() int {
	if o.FlakeRuns > 0 {
		return o.FlakeRuns
	}
	return DefaultFlakeRuns
}

// flakeTask returns the task of rule 8: ch's focused tests pass every one of runs repeated
// -race runs on ch's target.
func flakeTask(b *tree.Builder, ch *manifest.Chapter, runs int) task {
	return task{
		name:   fmt.Sprintf("flake: the chapter's focused tests pass %d runs in a row with -race", runs),
		usesGo: true,
		phase:  phaseFlake,
		run: func(ctx context.Context, dir string) (Check, error) {
			return checkFlake(ctx, b, ch, runs, dir)
		},
	}
}

// checkFlake proves rule 8 for ch: runs runs of every focused test of ch, with -race, on its
// target, and not one failure. A failure names the test, how often it failed and its first
// message.
func checkFlake(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, runs int, dir string) (Check, error) {
	if len(ch.Labs) == 0 {
		return pass(), nil
	}
	t, err := b.Target(ch)
	if err != nil {
		return fail("building the target: %v", err), nil
	}
	if err := t.Write(dir); err != nil {
		return Check{}, fmt.Errorf("writing the target of chapter %s: %w", ch.Number, err)
	}
	var patterns []string
	for _, lab := range ch.Labs {
		patterns = append(patterns, "(?:"+lab.Pattern+")")
	}
	report, err := gotest.Run(ctx, gotest.Options{
		Dir: dir, Race: true, Count: runs, Run: strings.Join(patterns, "|"), Env: sharedBuildEnv(), Timeout: flakeTimeout(runs),
		Packages: []string{ch.PackagePattern()},
	})
	if err != nil {
		return Check{}, err
	}
	if report.BuildFailed {
		return fail("does not compile:\n%s", clip(report.BuildOutput)), nil
	}
	return flakeVerdict(ch, report, runs), nil
}

// flakeTimeout bounds one repeated run: the usual bound, and ten seconds more per run. The
// tests' own guards catch a hang; this bound only stops a run gone wrong, and must not be what
// fails a correct chapter on a slow, busy machine (chapter 08's runs wait for processes to end
// and take several seconds each there). It scales with COURSE_TEST_TIMEOUT_SCALE (hang.Bound),
// which make test sets: on a loaded machine (load about 30 on 2 cores, 2026-12-07) chapter 13's
// 25 runs under -race took longer than the unscaled 6m10s with nothing wrong.
func flakeTimeout(runs int) time.Duration {
	return hang.Bound(testTimeout + time.Duration(runs)*10*time.Second)
}

// flakeVerdict reads a repeated run: every focused test of ch must have passed runs times and
// never failed, and the test binary must have ended normally.
func flakeVerdict(ch *manifest.Chapter, report *gotest.Report, runs int) Check {
	var problems []string
	for _, lab := range ch.Labs {
		var names []string
		for _, t := range progress.LabTests(lab, report) {
			if _, ran := report.Runs[t.Name]; ran {
				names = append(names, t.Name)
			}
		}
		if len(names) < lab.Tests {
			problems = append(problems, fmt.Sprintf("lab %s: %d of its %d tests ran", lab.ID, len(names), lab.Tests))
		}
		for _, name := range names {
			c := report.Runs[name]
			switch {
			case c.Failed > 0:
				problems = append(problems, fmt.Sprintf("%s is flaky: failed %d of %d runs (%.1f%%), first with %q",
					name, c.Failed, c.Failed+c.Passed, 100*float64(c.Failed)/float64(c.Failed+c.Passed), c.FirstFailure))
			case c.Passed < runs:
				problems = append(problems, fmt.Sprintf("%s passed %d of %d runs; the test binary stopped before the others", name, c.Passed, runs))
			}
		}
	}
	if len(problems) == 0 && report.ExitCode != 0 {
		problems = append(problems, "go test failed outside the focused tests:\n"+clip(report.BuildOutput))
	}
	if len(problems) > 0 {
		problems = append(problems, "a focused test must synchronise on what the code reports (events, channels), never on timing: see docs/authoring.md")
		return Check{Detail: strings.Join(problems, "\n")}
	}
	return pass()
}
