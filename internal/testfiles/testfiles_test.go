package testfiles

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNeeded(t *testing.T) {
	files := map[string][]byte{
		"loop_test.go": []byte("package tinypi\n\nimport \"testing\"\n\n" +
			"func TestLab7_1_X(t *testing.T) { r := newRecorder(); r.note(); var _ fake = fake{}; var l *Loop; l.poke() }\n"),
		// recorder_test.go declares what loop_test.go calls; it uses clock_test.go in turn.
		"recorder_test.go": []byte("package tinypi\n\ntype recorder struct{ c clock }\n\nfunc newRecorder() *recorder { return &recorder{} }\n"),
		"clock_test.go":    []byte("package tinypi\n\ntype clock int\n"),
		// methods_test.go declares a method of recorder: a kept type keeps its methods.
		"methods_test.go": []byte("package tinypi\n\nfunc (r *recorder) note() {}\n"),
		// fake_test.go declares fake; fakemethods_test.go its method set, which an interface may need.
		"fake_test.go":        []byte("package tinypi\n\ntype fake struct{}\n"),
		"fakemethods_test.go": []byte("package tinypi\n\nfunc (fake) Stream() {}\n"),
		// pkgmethod_test.go declares a method of a type of the package itself (no test file names
		// the type): its name alone keeps it.
		"pkgmethod_test.go": []byte("package tinypi\n\nfunc (l *Loop) poke() {}\n"),
		// unusedfake_test.go declares a method called like one loop_test.go calls, on a test
		// type nothing needed uses: not kept.
		"unusedfake_test.go": []byte("package tinypi\n\ntype unused struct{}\n\nfunc (unused) note() {}\n"),
		// init_test.go runs whatever the tests are.
		"init_test.go": []byte("package tinypi\n\nfunc init() {}\n"),
		// Not needed by loop_test.go.
		"other_test.go": []byte("package tinypi\n\nimport \"testing\"\n\nfunc TestLab8_1_Y(t *testing.T) { unrelated() }\n\nfunc unrelated() {}\n"),
		// Not a root test file: ignored.
		"cmd/diagnose/main_test.go": []byte("package main\n"),
	}
	keep, ok := Needed(files, "loop_test.go")
	if !ok {
		t.Fatal("Needed(loop_test.go) = not ok, want a smaller set")
	}
	want := []string{"clock_test.go", "fake_test.go", "fakemethods_test.go", "init_test.go", "loop_test.go", "methods_test.go", "pkgmethod_test.go", "recorder_test.go"}
	if diff := cmp.Diff(want, slices.Sorted(maps.Keys(keep))); diff != "" {
		t.Errorf("files kept (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name, testFile string
		files          map[string][]byte
	}{
		{"missing test file", "nope_test.go", files},
		{"not a root test file", "cmd/diagnose/main_test.go", files},
		{"a test file that does not parse", "loop_test.go", map[string][]byte{"loop_test.go": []byte("package tinypi\n\nfunc {")}},
		{"an external test package", "loop_test.go", map[string][]byte{"loop_test.go": []byte("package tinypi_test\n")}},
	} {
		if _, ok := Needed(tc.files, tc.testFile); ok {
			t.Errorf("%s: Needed(%s) = ok, want every file used", tc.name, tc.testFile)
		}
	}
}
