package devcheck

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/learn-tinypi/course/internal/tree"
)

func TestWithTestsOf(t *testing.T) {
	full := tree.Tree{
		"go.mod":                    []byte("module tinypi\n"),
		"loop.go":                   []byte("package tinypi\n\nfunc helper() {}\n"),
		"loop_test.go":              []byte("package tinypi\n\nimport \"testing\"\n\nfunc TestLab7_1_X(t *testing.T) { shared() }\n"),
		"shared_test.go":            []byte("package tinypi\n\nfunc shared() {}\n"),
		"other_test.go":             []byte("package tinypi\n\nimport \"testing\"\n\nfunc TestLab8_1_Y(t *testing.T) {}\n"),
		"cmd/diagnose/main_test.go": []byte("package main\n"),
	}
	got, ok := withTestsOf(full, "loop_test.go")
	if !ok {
		t.Fatal("withTestsOf(loop_test.go) = not ok, want a smaller tree")
	}
	want := []string{"cmd/diagnose/main_test.go", "go.mod", "loop.go", "loop_test.go", "shared_test.go"}
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(got))); diff != "" {
		t.Errorf("files kept (-want +got):\n%s", diff)
	}
	if _, ok := withTestsOf(full, "nope_test.go"); ok {
		t.Error("withTestsOf(a missing test file) = ok, want the whole tree used")
	}
}
