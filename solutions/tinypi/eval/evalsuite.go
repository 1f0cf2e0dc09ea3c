package eval

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// EvalReport is the result of a suite (RunEvalSuite): one verdict per case, in the order of the
// cases, and how many passed and failed.
type EvalReport struct {
	Verdicts []EvalVerdict `json:"verdicts"`
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"`
}

// RunEvalSuite runs every case with RunEvalCase, one after another, and reports each verdict. A
// case that cannot run does not stop the suite: its verdict does not pass and has a single check
// named "run" whose Detail is the error. When a case has been judged, and before the next one
// starts, one line goes to progress:
//
//	[2/9] 02-add-test: pass (3 steps, 410 tokens)
//	[3/9] 03-rename: FAIL workspace, budget
//
// a failing case's line names its failed checks, in the order of its checks. A nil progress
// writes nothing.
func RunEvalSuite(ctx context.Context, cases []EvalCase, opts EvalOptions, progress io.Writer) EvalReport {
	//lab:begin 14.5
	if progress == nil {
		progress = io.Discard
	}
	report := EvalReport{Verdicts: []EvalVerdict{}}
	for i, c := range cases {
		v, err := RunEvalCase(ctx, c, opts)
		if err != nil {
			v = EvalVerdict{Case: c.Name, Checks: []EvalCheck{{Name: "run", Detail: err.Error()}}}
		}
		report.Verdicts = append(report.Verdicts, v)
		if v.Pass {
			report.Passed++
			fmt.Fprintf(progress, "[%d/%d] %s: pass (%d steps, %d tokens)\n", i+1, len(cases), c.Name, v.Steps, v.Tokens)
			continue
		}
		report.Failed++
		var failed []string
		for _, check := range v.Checks {
			if !check.Pass {
				failed = append(failed, check.Name)
			}
		}
		fmt.Fprintf(progress, "[%d/%d] %s: FAIL %s\n", i+1, len(cases), c.Name, strings.Join(failed, ", "))
	}
	return report
	//lab:end
}

// WriteEvalTable writes report as a table, one row per case (case, result, steps, tokens, wall
// time), then a line with the totals; a failed case's failed checks follow the table with their
// details.
func WriteEvalTable(w io.Writer, report EvalReport) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "case\tresult\tsteps\ttokens\twall")
	for _, v := range report.Verdicts {
		result := "pass"
		if !v.Pass {
			result = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", v.Case, result, v.Steps, v.Tokens, v.Wall.Round(time.Millisecond))
	}
	tw.Flush()
	fmt.Fprintf(&b, "%d passed, %d failed\n", report.Passed, report.Failed)
	for _, v := range report.Verdicts {
		for _, check := range v.Checks {
			if !check.Pass {
				fmt.Fprintf(&b, "%s: %s: %s\n", v.Case, check.Name, check.Detail)
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}
