package diagnose

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/learn-tinypi/course/internal/columns"
	"github.com/learn-tinypi/course/internal/linediff"
	"github.com/learn-tinypi/course/internal/manifest"
)

// run is one run as the diagnosis program printed it.
type run struct {
	scenario string
	// lines are the run's lines, the summary line last.
	lines []string
	// fields are the summary line's key=value fields, in order.
	fields []field
}

type field struct{ key, value string }

func (r run) value(key string) (string, bool) {
	for _, f := range r.fields {
		if f.key == key {
			return f.value, true
		}
	}
	return "", false
}

// summaryLine matches the last line of a run: a label, then key=value fields, scenario first.
var summaryLine = regexp.MustCompile(`^\S+ (scenario=\S+(?: [a-zA-Z_]+=\S+)*)$`)

// parseRuns splits the program's output into runs: each ends with its summary line, and blank
// lines separate them.
func parseRuns(out string) ([]run, error) {
	var (
		runs    []run
		pending []string
	)
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" && len(pending) == 0 {
			continue
		}
		pending = append(pending, line)
		m := summaryLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		r := run{lines: pending}
		for _, kv := range strings.Fields(m[1]) {
			k, v, _ := strings.Cut(kv, "=")
			r.fields = append(r.fields, field{k, v})
		}
		r.scenario = r.fields[0].value
		runs = append(runs, r)
		pending = nil
	}
	if len(pending) > 0 || len(runs) == 0 {
		return nil, fmt.Errorf("the diagnosis program's output does not end with a summary line:\n%s", out)
	}
	return runs, nil
}

// render is the whole diagnosis: header, both sides' runs, the comparison table and the lines
// that differ between the two sides' runs of the same scenario.
func render(l texts, ch *manifest.Chapter, m *manifest.Mutant, mutant, target []run) string {
	var b strings.Builder
	fmt.Fprintf(&b, l.header+"\n", ch.Number, m.Name, m.Lab)
	fmt.Fprintf(&b, l.explain+"\n", m.Explain)
	fmt.Fprintf(&b, l.intro+"\n", DriverDir)
	fmt.Fprintf(&b, "\n"+l.mutantSide+"\n\n", m.Name)
	writeRuns(&b, mutant)
	b.WriteString("\n" + l.targetSide + "\n\n")
	writeRuns(&b, target)

	b.WriteString("\n" + l.compare + "\n")
	writeTable(&b, comparison(l, m, mutant, target))

	for _, mr := range mutant {
		for _, tr := range target {
			if mr.scenario != tr.scenario {
				continue
			}
			fmt.Fprintf(&b, "\n"+l.diffHeader+"\n", mr.scenario)
			diff := lineDiff(tr.lines[:len(tr.lines)-1], mr.lines[:len(mr.lines)-1])
			if len(diff) == 0 {
				b.WriteString("  " + l.diffNone + "\n")
			}
			for _, d := range diff {
				prefix := l.diffTarget
				if d.added {
					prefix = l.diffMutant
				}
				fmt.Fprintf(&b, "  %s %s\n", prefix, d.line)
			}
		}
	}
	return b.String()
}

func writeRuns(b *strings.Builder, runs []run) {
	for i, r := range runs {
		if i > 0 {
			b.WriteString("\n")
		}
		for _, line := range r.lines {
			b.WriteString(line + "\n")
		}
	}
}

// comparison is the table of both sides' runs: mutant rows first, then the reference's. The
// columns after the fixed ones are the facts the runs checked in their final answers.
func comparison(l texts, m *manifest.Mutant, mutant, target []run) [][]string {
	fixed := []string{"rounds", "steps", "executions", "unpaired", "end"}
	var checks []string
	for _, r := range append(append([]run(nil), mutant...), target...) {
		for _, f := range r.fields {
			if f.key != "scenario" && !contains(fixed, f.key) && !contains(checks, f.key) {
				checks = append(checks, f.key)
			}
		}
	}
	header := append([]string{l.colSide, l.colScenario}, l.colRounds, l.colSteps, l.colExecutions, l.colUnpaired, l.colEnd)
	for _, c := range checks {
		header = append(header, l.checkLabel(c))
	}
	rows := [][]string{header}
	add := func(side string, runs []run) {
		for _, r := range runs {
			row := []string{side, r.scenario}
			for _, k := range append(append([]string(nil), fixed...), checks...) {
				v, ok := r.value(k)
				if !ok {
					v = "-"
				}
				row = append(row, v)
			}
			rows = append(rows, row)
		}
	}
	add(fmt.Sprintf(l.rowMutant, m.Name), mutant)
	add(l.rowTarget, target)
	return rows
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writeTable writes rows as an indented table padded by display width (a Chinese character
// takes two columns).
func writeTable(b *strings.Builder, rows [][]string) {
	b.WriteString(columns.Table(rows, "  "))
}

// diffLine is a line only one side has: added means only the mutant's run has it.
type diffLine struct {
	line  string
	added bool
}

// lineDiff returns the lines of a and b outside their longest common subsequence, in order:
// a's (removed) before b's (added) within each changed stretch.
func lineDiff(a, b []string) []diffLine {
	var out []diffLine
	for _, op := range linediff.Diff(a, b) {
		if op.Kind != linediff.Keep {
			out = append(out, diffLine{line: op.Text, added: op.Kind == linediff.Insert})
		}
	}
	return out
}
