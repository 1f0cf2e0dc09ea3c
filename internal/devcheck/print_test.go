package devcheck

import (
	"strings"
	"testing"
)

func TestPrintCheckMarks(t *testing.T) {
	tests := []struct {
		ascii bool
		check Check
		want  string
	}{
		{false, Check{Name: "target", OK: true}, "07 ✓ target\n"},
		{false, Check{Name: "starter", Detail: "why"}, "07 ✗ starter\n      why\n"},
		{true, Check{Name: "target", OK: true}, "07 ok target\n"},
		{true, Check{Name: "starter", Detail: "why"}, "07 FAIL starter\n      why\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		printCheck(&b, Options{ASCII: tt.ascii}, "07", tt.check)
		if b.String() != tt.want {
			t.Errorf("printCheck(ASCII=%v, %+v) = %q, want %q", tt.ascii, tt.check, b.String(), tt.want)
		}
	}
}

func TestPrintFailuresRepeatsEveryFailedCheck(t *testing.T) {
	result := &Result{Chapters: []ChapterResult{
		{Number: "07", Checks: []Check{{Name: "target", OK: true}, {Name: "mutant m", Detail: "not caught"}}},
		{Number: "08", Checks: []Check{{Name: "flake", Detail: "T is flaky"}}},
	}}
	var b strings.Builder
	PrintFailures(&b, Options{ASCII: true}, result)
	want := "failed checks:\n07 FAIL mutant m\n      not caught\n08 FAIL flake\n      T is flaky\n"
	if b.String() != want {
		t.Errorf("PrintFailures = %q, want %q", b.String(), want)
	}
	b.Reset()
	PrintFailures(&b, Options{}, &Result{Chapters: []ChapterResult{{Number: "07", Checks: []Check{{Name: "target", OK: true}}}}})
	if b.String() != "" {
		t.Errorf("PrintFailures with nothing failed = %q, want nothing", b.String())
	}
}
