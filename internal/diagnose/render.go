package diagnose

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/learn-tinypi/course/internal/columns"
	"github.com/learn-tinypi/course/internal/linediff"
	"github.com/learn-tinypi/course/internal/manifest"
)

// run is one run as the diagnosis program reported it with -json: the lines it prints for
// people, and the facts the comparison table holds.
type run struct {
	Scenario string   `json:"scenario"`
	Lines    []string `json:"lines"`
	Rounds   int      `json:"rounds"`
	// Steps, Executions and Unpaired are nil when the run did not return.
	Steps      *int    `json:"steps"`
	Executions *int    `json:"executions"`
	Unpaired   *int    `json:"unpaired"`
	End        string  `json:"end"`
	Checks     []check `json:"checks"`
}

// check is one fact the run checked in its final answer: Label is its name in the run's language.
type check struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	OK    bool   `json:"ok"`
}

// value returns the fact key of the run as the table shows it ("rounds", "steps",
// "executions", "unpaired", "end" or a check's key), and false when the run has none.
func (r run) value(key string) (string, bool) {
	count := func(n *int) (string, bool) {
		if n == nil {
			return "", false
		}
		return strconv.Itoa(*n), true
	}
	switch key {
	case "rounds":
		return strconv.Itoa(r.Rounds), true
	case "steps":
		return count(r.Steps)
	case "executions":
		return count(r.Executions)
	case "unpaired":
		return count(r.Unpaired)
	case "end":
		return r.End, r.End != ""
	}
	for _, c := range r.Checks {
		if c.Key == key {
			return strconv.FormatBool(c.OK), true
		}
	}
	return "", false
}

// decodeRuns reads the program's -json output: one run a line.
func decodeRuns(out string) ([]run, error) {
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var runs []run
	for {
		var r run
		err := dec.Decode(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the diagnosis program's output is not one JSON object a run: %w\n%s", err, out)
		}
		if r.Scenario == "" || len(r.Lines) == 0 {
			return nil, fmt.Errorf("the diagnosis program printed a run without its scenario or lines:\n%s", out)
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("the diagnosis program printed no run:\n%s", out)
	}
	return runs, nil
}

// render is the whole diagnosis: header, both sides' runs, the comparison table and the lines
// that differ between the two sides' runs of the same scenario.
func render(l texts, ch *manifest.Chapter, m *manifest.Mutant, mutant, target []run) string {
	var b strings.Builder
	b.WriteString(l.text("header", ch.Number, m.Name, m.Lab) + "\n")
	b.WriteString(l.text("explain", l.explanation(m)) + "\n")
	b.WriteString(l.text("intro", ch.Diagnosis.Program) + "\n")
	b.WriteString("\n" + l.text("side.mutant", m.Name) + "\n\n")
	writeRuns(&b, mutant)
	b.WriteString("\n" + l.text("side.target") + "\n\n")
	writeRuns(&b, target)

	b.WriteString("\n" + l.text("compare") + "\n")
	writeTable(&b, comparison(l, m, mutant, target))

	for _, mr := range mutant {
		for _, tr := range target {
			if mr.Scenario != tr.Scenario {
				continue
			}
			b.WriteString("\n" + l.text("diff.header", mr.Scenario) + "\n")
			diff := lineDiff(tr.Lines, mr.Lines)
			if len(diff) == 0 {
				b.WriteString("  " + l.text("diff.none") + "\n")
			}
			for _, d := range diff {
				prefix := l.text("diff.target")
				if d.added {
					prefix = l.text("diff.mutant")
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
		for _, line := range r.Lines {
			b.WriteString(line + "\n")
		}
	}
}

// comparison is the table of both sides' runs: mutant rows first, then the reference's. The
// columns after the fixed ones are the facts the runs checked in their final answers, headed by
// the labels the program gave them.
func comparison(l texts, m *manifest.Mutant, mutant, target []run) [][]string {
	fixed := []string{"rounds", "steps", "executions", "unpaired", "end"}
	header := []string{l.text("col.side"), l.text("col.scenario"), l.text("col.rounds"), l.text("col.steps"),
		l.text("col.executions"), l.text("col.unpaired"), l.text("col.end")}
	var checks []string
	for _, r := range slices.Concat(mutant, target) {
		for _, c := range r.Checks {
			if !slices.Contains(checks, c.Key) {
				checks = append(checks, c.Key)
				header = append(header, c.Label)
			}
		}
	}
	rows := [][]string{header}
	add := func(side string, runs []run) {
		for _, r := range runs {
			row := []string{side, r.Scenario}
			for _, k := range slices.Concat(fixed, checks) {
				v, ok := r.value(k)
				if !ok {
					v = "-"
				}
				row = append(row, v)
			}
			rows = append(rows, row)
		}
	}
	add(l.text("row.mutant", m.Name), mutant)
	add(l.text("row.target"), target)
	return rows
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
