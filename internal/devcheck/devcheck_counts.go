package devcheck

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"

	"github.com/learn-tinypi/course/internal/cards"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/tree"
)

// countWords are the words that open the "Expected" and "Run" lines of a card or of a lab's box
// in a chapter text, and the words that open such a box, per language.
var countWords = []struct{ lang, expected, run, box string }{
	{"zh", "**预期：**", "**运行：**", "> **实践 "},
	{"en", "**Expected:**", "**Run:**", "> **Lab "},
}

// passCount matches a test count as the cards write it: `7/7`.
var passCount = regexp.MustCompile("`(\\d+)/(\\d+)`")

// countsTask is the check that every "Expected" line states the number of tests the learner
// will see pass: a card's and its box's in the chapter text say the lab's count first (`N/N`),
// and a second count on a box's line is the chapter's. A test added without its card changing
// tells the learner "6/6" while go test prints 7 results. It also checks that every "Run" line
// opens with the command course prints for the lab (practice.TestCommand): with -race exactly
// when the lab is a race lab, which `course test` runs with the race detector.
func countsTask(b *tree.Builder, ch *manifest.Chapter) task {
	return task{
		name: "counts: every card and lab box states its lab's test count and run command, and the text the chapter's count",
		run: func(context.Context, string) (Check, error) {
			return checkCounts(b.FS(), ch), nil
		},
	}
}

// checkCounts proves countsTask's rule for ch in the course content fsys. A missing card or
// text is left to the checks that require them.
func checkCounts(fsys fs.FS, ch *manifest.Chapter) Check {
	var problems []string
	total := 0
	labs := map[string]int{}
	for _, lab := range ch.Labs {
		total += lab.Tests
		labs[lab.ID] = lab.Tests
	}
	for _, w := range countWords {
		for _, lab := range ch.Labs {
			path := cards.ContentPath(lab.ID, w.lang)
			text, err := fs.ReadFile(fsys, path)
			if err != nil {
				continue
			}
			line, ok := expectedLine(strings.Split(string(text), "\n"), "- "+w.expected)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: no line starts with %q", path, "- "+w.expected))
				continue
			}
			problems = append(problems, countProblems(path, "lab "+lab.ID, line, lab.Tests, total)...)
			if run, ok := expectedLine(strings.Split(string(text), "\n"), "- "+w.run); ok {
				problems = append(problems, runProblems(path, "lab "+lab.ID, run, lab)...)
			}
		}
		if ch.Doc == "" {
			continue
		}
		path := ch.DocPath(w.lang)
		text, err := fs.ReadFile(fsys, path)
		if err != nil {
			continue
		}
		for id, box := range labBoxes(string(text), w.box) {
			tests, ok := labs[id]
			if !ok {
				continue // the texts check names a lab the chapter does not have
			}
			if line, ok := expectedLine(box, "> - "+w.expected); ok {
				problems = append(problems, countProblems(path, "the box of lab "+id, line, tests, total)...)
			}
			if run, ok := expectedLine(box, "> - "+w.run); ok {
				lab, _ := ch.Lab(id)
				problems = append(problems, runProblems(path, "the box of lab "+id, run, lab)...)
			}
		}
	}
	if len(problems) > 0 {
		return Check{Detail: strings.Join(problems, "\n")}
	}
	return pass()
}

// expectedLine returns the first of lines that starts with prefix, without it.
func expectedLine(lines []string, prefix string) (string, bool) {
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return rest, true
		}
	}
	return "", false
}

// labBoxes returns the lines of each lab box of a chapter text by lab id: a box opens with a
// line starting with open (then the id and a space) and goes on while lines start with ">".
func labBoxes(text, open string) map[string][]string {
	boxes := map[string][]string{}
	var id string
	for _, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(l, open); ok {
			id, _, _ = strings.Cut(rest, " ")
			boxes[id] = nil
			continue
		}
		if id == "" {
			continue
		}
		if !strings.HasPrefix(l, ">") {
			id = ""
			continue
		}
		boxes[id] = append(boxes[id], l)
	}
	return boxes
}

// runProblems checks one Run line: it opens with lab's command, in backquotes.
func runProblems(path, what, line string, lab *manifest.Lab) []string {
	want := "`" + practice.TestCommand(lab) + "`"
	if strings.HasPrefix(strings.TrimSpace(line), want) {
		return nil
	}
	return []string{fmt.Sprintf("%s: %s: the Run line says %s; want it to open with %s", path, what, strings.TrimSpace(line), want)}
}

// countProblems checks the counts of one Expected line: the first is the lab's, a second one,
// when there is one, the chapter's.
func countProblems(path, what, line string, tests, total int) []string {
	counts := passCount.FindAllStringSubmatch(line, 2)
	if len(counts) == 0 {
		return []string{fmt.Sprintf("%s: %s: the Expected line states no test count (`%d/%d`)", path, what, tests, tests)}
	}
	var problems []string
	for i, want := range []int{tests, total} {
		if i >= len(counts) {
			break
		}
		passed, _ := strconv.Atoi(counts[i][1])
		all, _ := strconv.Atoi(counts[i][2])
		if passed != want || all != want {
			of := "the lab has"
			if i == 1 {
				of = "the chapter has"
			}
			problems = append(problems, fmt.Sprintf("%s: %s: the Expected line says %s, but %s %d focused test(s): `%d/%d`", path, what, counts[i][0], of, want, want, want))
		}
	}
	return problems
}
