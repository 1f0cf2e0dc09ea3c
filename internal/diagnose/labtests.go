package diagnose

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/progress"
	"github.com/learn-tinypi/course/internal/tree"
)

// RunLabTests diagnoses mistake m of ch by the tests that catch it, for a chapter without a
// diagnosis program: it applies m to ch's target in a temporary directory (removed afterwards),
// runs the focused tests of m's lab there, offline, and prints to w in lang which of them pass,
// which fail and each failure's first message and the first lines of its difference: what a
// learner who makes the mistake sees from course test. It needs the go command (gotest.ErrNoGo
// without it).
func RunLabTests(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, m *manifest.Mutant, lang Language, w io.Writer) error {
	lab, err := ch.Lab(m.Lab)
	if err != nil {
		return err
	}
	mutated, err := b.Mutant(ch, m)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "course-diagnose-")
	if err != nil {
		return fmt.Errorf("creating a temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := mutated.Write(dir + "/src"); err != nil {
		return err
	}
	report, err := gotest.Run(ctx, gotest.Options{Dir: dir + "/src", Run: lab.Pattern, Fresh: true, Env: gotest.OfflineEnv()})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, renderLabTests(textsFor(lang), ch, m, lab, report))
	return err
}

// renderLabTests is the text RunLabTests prints for report, the run of lab's tests on mistake m.
func renderLabTests(l texts, ch *manifest.Chapter, m *manifest.Mutant, lab *manifest.Lab, report *gotest.Report) string {
	var b strings.Builder
	fmt.Fprintln(&b, l.text("header", ch.Number, m.Name, m.Lab))
	fmt.Fprintln(&b, l.text("explain", l.explanation(m)))
	fmt.Fprintln(&b)
	if report.BuildFailed {
		fmt.Fprintln(&b, l.text("tests.build", strings.TrimSpace(report.BuildOutput)))
		return b.String()
	}
	fmt.Fprintln(&b, l.text("tests.intro", lab.ID, lab.Pattern))
	failed := 0
	for _, t := range progress.LabTests(lab, report) {
		if !t.Failed {
			fmt.Fprintf(&b, "  ✓ %s  %s\n", t.Name, l.text("tests.pass"))
			continue
		}
		failed++
		fmt.Fprintf(&b, "  ✗ %s  %s\n", t.Name, l.text("tests.fail"))
		fmt.Fprintf(&b, "      %s\n", t.FirstFailure)
		for _, line := range t.Difference {
			fmt.Fprintf(&b, "      %s\n", line)
		}
	}
	fmt.Fprintln(&b)
	if failed == 0 {
		fmt.Fprintln(&b, l.text("tests.uncaught", lab.ID))
	} else {
		fmt.Fprintln(&b, l.text("tests.footer", lab.ID))
	}
	return b.String()
}
