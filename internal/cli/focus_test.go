package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/learn-tinypi/course/internal/manifest"
)

func TestFocusOverlayHidesTheTestsNotNeeded(t *testing.T) {
	root := t.TempDir()
	for name, src := range map[string]string{
		"ch01_a_test.go":   "package tinypi\n\nfunc helperA() {}\n",
		"ch02_b_test.go":   "package tinypi\n\nimport \"testing\"\n\nfunc TestLab2_1_X(t *testing.T) { helperA() }\n",
		"ch03_c_test.go":   "package tinypi\n\nimport \"testing\"\n\nfunc TestLab3_1_Y(t *testing.T) {}\n",
		"labguard_test.go": "package tinypi\n\nfunc init() {}\n",
		"code.go":          "package tinypi\n",
		// The learner's own tests: never hidden, and what they use stays.
		"mine_test.go":   "package tinypi\n\nimport \"testing\"\n\nfunc TestLab2_1_Mine(t *testing.T) { helperD() }\n",
		"ch04_d_test.go": "package tinypi\n\nfunc helperD() {}\n",
		"ch05_e_test.go": "package tinypi\n\nfunc helperE() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kitTests := map[string]string{}
	for _, f := range []string{"ch01_a_test.go", "ch02_b_test.go", "ch03_c_test.go", "ch04_d_test.go", "ch05_e_test.go", "labguard_test.go", "testdata/x.json"} {
		kitTests[f] = "sha256 of the file"
	}
	name, remove := focusOverlay(root, &manifest.Chapter{TestFile: "ch02_b_test.go"}, kitTests)
	if name == "" {
		t.Fatal("focusOverlay = no overlay, want one hiding ch03_c_test.go and ch05_e_test.go")
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var overlay struct{ Replace map[string]string }
	if err := json.Unmarshal(data, &overlay); err != nil {
		t.Fatalf("overlay %s: %v", data, err)
	}
	want := map[string]string{}
	for _, f := range []string{"ch03_c_test.go", "ch05_e_test.go"} {
		abs, _ := filepath.Abs(filepath.Join(root, f))
		want[abs] = ""
	}
	if diff := cmp.Diff(want, overlay.Replace); diff != "" {
		t.Errorf("overlay (-want +got):\n%s", diff)
	}
	if filepath.Dir(name) == root {
		t.Errorf("overlay %s is in the practice directory", name)
	}
	remove()
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Errorf("overlay %s is still there after remove (stat: %v)", name, err)
	}

	// Nothing to work out: no overlay, the whole package runs.
	if name, remove := focusOverlay(root, &manifest.Chapter{}, kitTests); name != "" {
		remove()
		t.Errorf("focusOverlay(a chapter without a test file) = %s, want none", name)
	}
	if name, remove := focusOverlay(root, &manifest.Chapter{TestFile: "ch02_b_test.go"}, nil); name != "" {
		remove()
		t.Errorf("focusOverlay without the kit's test files = %s, want none (what is the learner's is not known)", name)
	}
	if err := os.WriteFile(filepath.Join(root, "ch06_f_test.go"), []byte("package tinypi\n\nfunc {"), 0o644); err != nil {
		t.Fatal(err)
	}
	if name, remove := focusOverlay(root, &manifest.Chapter{TestFile: "ch02_b_test.go"}, kitTests); name != "" {
		remove()
		t.Errorf("focusOverlay with a test file that does not parse = %s, want none (go test reports it)", name)
	}
}
