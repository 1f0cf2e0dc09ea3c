package cli

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/progress"
)

// testCommand is `course test [--lab ID] [DIR]`.
func (a *app) testCommand() *cobra.Command {
	var labFlag string
	c := &cobra.Command{
		Use:     "test [--lab ID] [DIR]",
		Short:   a.p.text("test.short"),
		Long:    a.p.text("test.long"),
		Example: a.p.text("test.example"),
		Args:    a.argsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			root, b, ch, err := a.practiceChapter(dirArg(args))
			if err != nil {
				return err
			}
			labs := ch.Labs
			if labFlag != "" {
				l, err := ch.Lab(labFlag)
				if err != nil {
					return a.unknownLab(ch, labFlag)
				}
				labs = []*manifest.Lab{l}
			}
			if err := a.requireGo(b.Course()); err != nil {
				return err
			}
			// Record the run for course status/next, and show the hints of the labs worked on.
			run, err := a.runLabs(c.Context(), root, ch, labs)
			if err != nil {
				return err
			}
			if !a.printTestReport(labs, run.report, progress.HintLabs(run.outcome)) {
				a.printKnownMistakes(b, ch, labs, run.report) // knownmistake.go
				a.printTranscriptHint(root, run.report)
				return errSilentFailure
			}
			return nil
		},
	}
	c.Flags().StringVar(&labFlag, "lab", "", a.p.text("test.flag.lab"))
	a.addTimeoutFlag(c)
	return c
}

// labOutcome is what the focused tests of one lab did.
type labOutcome struct {
	lab          *manifest.Lab
	passed, runs int
	firstFailure string
}

// total is the number of tests the lab counts: the ones the manifest states, or more when more ran.
func (o labOutcome) total() int { return max(o.runs, o.lab.Tests) }

// printTestReport prints the per-lab table, with the hint of each lab in hints under its row,
// and the total line, and reports whether everything passed.
func (a *app) printTestReport(labs []*manifest.Lab, report *gotest.Report, hints []string) bool {
	st := style{a.color}
	if report.BuildFailed {
		fmt.Fprintln(a.stdout, st.bad(a.p.text("test.build")))
		fmt.Fprintln(a.stdout, strings.TrimRight(report.BuildOutput, "\n"))
	}
	outcomes := make([]labOutcome, len(labs))
	for i, l := range labs {
		outcomes[i] = a.labOutcome(l, report)
	}
	rows := [][]string{splitTabs(a.p.text("test.header"))}
	passed, failed := 0, 0
	var next *manifest.Lab
	for _, o := range outcomes {
		passed += o.passed
		failed += o.total() - o.passed
		count := strconv.Itoa(o.passed) + "/" + strconv.Itoa(o.total())
		if o.passed == o.total() {
			count = st.ok(count)
		} else {
			count = st.bad(count)
			if next == nil {
				next = o.lab
			}
		}
		rows = append(rows, []string{o.lab.ID, a.labTitle(o.lab), count, o.firstFailure})
	}
	_ = writeTableNotes(a.stdout, rows, a.labHints(labs, hints))
	fmt.Fprintf(a.stdout, "%d passed, %d failed\n", passed, failed)
	ok := failed == 0 && !report.BuildFailed && report.ExitCode == 0
	switch {
	case next != nil && !report.BuildFailed:
		fmt.Fprintln(a.stdout, a.p.text("test.next", a.cardPath(next), shellQuote(next.Pattern)))
	case ok:
		fmt.Fprintln(a.stdout, st.ok(a.p.text("test.done")))
	case report.BuildOutput != "" && !report.BuildFailed:
		// go test failed outside any focused test (for example in TestMain): show why.
		fmt.Fprintln(a.stdout, strings.TrimRight(report.BuildOutput, "\n"))
	}
	return ok
}

// labOutcome counts the top-level tests of the report that lab l's pattern selects.
func (a *app) labOutcome(l *manifest.Lab, report *gotest.Report) labOutcome {
	o := labOutcome{lab: l}
	re, err := regexp.Compile(l.Pattern)
	if err != nil { // the manifest validates patterns; this is defence only
		o.firstFailure = err.Error()
		return o
	}
	for _, t := range report.Tests {
		if strings.Contains(t.Name, "/") || !re.MatchString(t.Name) {
			continue
		}
		o.runs++
		if t.Passed {
			o.passed++
			continue
		}
		if o.firstFailure == "" {
			o.firstFailure = t.Name
			if t.FirstFailure != "" {
				o.firstFailure += ": " + t.FirstFailure
			}
		}
	}
	if o.firstFailure == "" && o.passed < o.total() {
		if report.BuildFailed {
			o.firstFailure = a.p.text("test.build.short")
		} else {
			o.firstFailure = a.p.text("test.missing")
		}
	}
	return o
}

// unknownLab is the usage error for a --lab value the chapter does not have.
func (a *app) unknownLab(ch *manifest.Chapter, value string) error {
	var b strings.Builder
	b.WriteString(a.p.text("err.unknown.lab", ch.Number, value))
	for _, l := range ch.Labs {
		fmt.Fprintf(&b, "\n  %s  %s  (%s)", l.ID, a.labTitle(l), l.Keyword)
	}
	return &usageError{msg: b.String()}
}
