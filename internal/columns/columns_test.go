package columns

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
)

func TestWidth(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{"", 0},
		{"lab", 3},
		{"完成纯文本 stop", 15},
		{"\x1b[32m✓\x1b[0m done", 6},
		{"ＡＢ", 4}, // full-width
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Width(tt.s), "Width(%q)", tt.s)
	}
}

func TestTable(t *testing.T) {
	rows := [][]string{
		{"Lab", "标题", "通过", ""},
		{"7.1", "完成纯文本 stop", "1/1", ""},
		{"7.3", "处理所有非执行终态", "0/2", "first failure"},
	}
	want := "" +
		"  Lab  标题                通过\n" +
		"  7.1  完成纯文本 stop     1/1\n" +
		"  7.3  处理所有非执行终态  0/2   first failure\n"
	if diff := cmp.Diff(want, Table(rows, "  ")); diff != "" {
		t.Errorf("Table (-want +got):\n%s", diff)
	}
}
