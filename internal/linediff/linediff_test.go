package linediff_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"

	"github.com/learn-tinypi/course/internal/linediff"
)

func TestDiff(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
		want []linediff.Op
	}{
		{"both empty", nil, nil, nil},
		{"equal", []string{"x", "y"}, []string{"x", "y"}, []linediff.Op{
			{linediff.Keep, "x", 0, 0}, {linediff.Keep, "y", 1, 1},
		}},
		{"only added", nil, []string{"x"}, []linediff.Op{{linediff.Insert, "x", 0, 0}}},
		{"only removed", []string{"x"}, nil, []linediff.Op{{linediff.Delete, "x", 0, 0}}},
		{"replaced: removal first", []string{"a", "b", "c"}, []string{"a", "x", "c"}, []linediff.Op{
			{linediff.Keep, "a", 0, 0},
			{linediff.Delete, "b", 1, 1},
			{linediff.Insert, "x", 2, 1},
			{linediff.Keep, "c", 2, 2},
		}},
		{"moved and appended", []string{"a", "b", "c", "d"}, []string{"a", "c", "x", "d", "e"}, []linediff.Op{
			{linediff.Keep, "a", 0, 0},
			{linediff.Delete, "b", 1, 1},
			{linediff.Keep, "c", 2, 1},
			{linediff.Insert, "x", 3, 2},
			{linediff.Keep, "d", 3, 3},
			{linediff.Insert, "e", 4, 4},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := linediff.Diff(tt.a, tt.b)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
			assert.Equal(t, tt.name != "equal" && tt.name != "both empty", linediff.Changed(got), "Changed")
		})
	}
}
