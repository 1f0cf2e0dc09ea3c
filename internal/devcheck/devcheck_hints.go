package devcheck

import (
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/learn-tinypi/course/internal/cards"
	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/progress"
)

// hintProblems proves, on the report of lab k's progressive tree (labs before k from the
// reference, lab k stubbed), that `course test` shows lab k's hint under its row: lab k's cards
// have a hint in both languages, and the labs whose hints `course test` shows for this outcome
// (progress.HintLabs, the rule the command itself applies) include lab k.
func hintProblems(fsys fs.FS, ch *manifest.Chapter, k int, report *gotest.Report) []string {
	lab := ch.Labs[k]
	var problems []string
	for _, lang := range []string{"zh", "en"} {
		if _, err := cards.Read(fsys, lab.CardPath(lang)); err != nil {
			problems = append(problems, fmt.Sprintf("lab %s: no hint for course test to show: %v", lab.ID, err))
		}
	}
	if report.BuildFailed {
		return problems // stubbedLabProblems says so already
	}
	outcome := progress.FromReport(ch, ch.Labs[:k+1], report, time.Time{})
	if shown := progress.HintLabs(outcome); !slices.Contains(shown, lab.ID) {
		problems = append(problems, fmt.Sprintf("course test would not show lab %s's hint for its stub (it shows the hints of %v; lab states %v)",
			lab.ID, shown, states(outcome)))
	}
	return problems
}

// states lists "id=state" for each lab of p.
func states(p progress.Progress) []string {
	var s []string
	for _, l := range p.Labs {
		s = append(s, l.ID+"="+string(l.State))
	}
	return s
}
