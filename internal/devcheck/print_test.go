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
