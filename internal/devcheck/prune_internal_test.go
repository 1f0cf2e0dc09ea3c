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
		"go.mod":  []byte("module tinypi\n"),
		"loop.go": []byte("package tinypi\n\ntype Loop struct{}\n\nfunc (Loop) Run() {}\n"),
		"loop_test.go": []byte("package tinypi\n\nimport \"testing\"\n\n" +
			"func TestLab7_1_X(t *testing.T) { r := newRecorder(); r.note(); var _ fake = fake{} }\n"),
		// recorder_test.go declares what loop_test.go calls; it uses clock_test.go in turn.
		"recorder_test.go": []byte("package tinypi\n\ntype recorder struct{ c clock }\n\nfunc newRecorder() *recorder { return &recorder{} }\n"),
		"clock_test.go":    []byte("package tinypi\n\ntype clock int\n"),
		// methods_test.go declares a method of recorder: a kept type keeps its methods.
		"methods_test.go": []byte("package tinypi\n\nfunc (r *recorder) note() {}\n"),
		// fake_test.go declares fake; fakemethods_test.go its method set, which an interface may need.
		"fake_test.go":        []byte("package tinypi\n\ntype fake struct{}\n"),
		"fakemethods_test.go": []byte("package tinypi\n\nfunc (fake) Stream() {}\n"),
		// init_test.go runs whatever the tests are.
		"init_test.go": []byte("package tinypi\n\nfunc init() {}\n"),
		// Not needed by loop_test.go.
		"other_test.go": []byte("package tinypi\n\nimport \"testing\"\n\nfunc TestLab8_1_Y(t *testing.T) { unrelated() }\n\nfunc unrelated() {}\n"),
		// Test files of another package are never dropped.
		"cmd/diagnose/main_test.go": []byte("package main\n"),
	}
	got, ok := withTestsOf(full, "loop_test.go")
	if !ok {
		t.Fatal("withTestsOf(loop_test.go) = not ok, want a smaller tree")
	}
	want := []string{
		"clock_test.go", "cmd/diagnose/main_test.go", "fake_test.go", "fakemethods_test.go", "go.mod",
		"init_test.go", "loop.go", "loop_test.go", "methods_test.go", "recorder_test.go",
	}
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(got))); diff != "" {
		t.Errorf("files kept (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name, testFile string
		tree           tree.Tree
	}{
		{"missing test file", "nope_test.go", full},
		{"not a test file", "loop.go", full},
		{"a test file that does not parse", "loop_test.go", tree.Tree{"loop_test.go": []byte("package tinypi\n\nfunc {")}},
		{"an external test package", "loop_test.go", tree.Tree{"loop_test.go": []byte("package tinypi_test\n")}},
	} {
		if _, ok := withTestsOf(tc.tree, tc.testFile); ok {
			t.Errorf("%s: withTestsOf(%s) = ok, want the whole tree used", tc.name, tc.testFile)
		}
	}
}
