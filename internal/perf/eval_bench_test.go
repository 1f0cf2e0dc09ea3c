package perf

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/learn-tinypi/course/solutions/tinypi/eval"
)

// Chapter 14's evaluation, offline: one public case end to end (a copy of its workspace, a
// runtime, four scripted model requests, a read, an edit, a `sh check.sh`, the five checks, the
// copy removed), and the whole public suite of nine cases. The cases are the reference's own
// (solutions/tinypi/testdata/eval); a benchmark fails when a case does not pass.

// evalCases loads the public cases.
func evalCases(b *testing.B) []eval.EvalCase {
	b.Helper()
	cases, err := eval.LoadEvalSuite(filepath.Join("..", "..", "solutions", "tinypi", "testdata", "eval"))
	if err != nil {
		b.Fatal(err)
	}
	return cases
}

func BenchmarkEvalCase(b *testing.B) {
	var c eval.EvalCase
	for _, e := range evalCases(b) {
		if e.Name == "09-fix-and-check" {
			c = e
		}
	}
	opts := eval.EvalOptions{TempDir: b.TempDir()}
	b.ReportAllocs()
	for b.Loop() {
		v, err := eval.RunEvalCase(context.Background(), c, opts)
		if err != nil || !v.Pass {
			b.Fatalf("the case: %+v, %v", v, err)
		}
	}
}

func BenchmarkEvalSuite(b *testing.B) {
	cases := evalCases(b)
	opts := eval.EvalOptions{TempDir: b.TempDir()}
	b.ReportAllocs()
	for b.Loop() {
		report := eval.RunEvalSuite(context.Background(), cases, opts, io.Discard)
		if report.Failed != 0 {
			b.Fatalf("%d cases failed", report.Failed)
		}
	}
	b.ReportMetric(float64(len(cases)), "cases/op")
}
