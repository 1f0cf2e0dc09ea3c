package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/learn-tinypi/course/internal/hang"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/progress"
)

// TestWatchRunsOnceAndQuits runs the watch command's loop on a tiny module: it runs the current
// lab's tests at once, records the progress, shows the table, and returns after "q" without
// leaving a goroutine behind (the file watcher and the key reader are stopped).
func TestWatchRunsOnceAndQuits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module tinypi\n\ngo 1.26\n",
		"a.go":   "package tinypi\n\nfunc Add(a, b int) int { return a + b }\n",
		"a_test.go": "package tinypi\n\nimport \"testing\"\n\n" +
			"func TestLab7_1_Add(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"Add(1, 2) != 3\")\n\t}\n}\n\n" +
			"func TestLab7_2_Sub(t *testing.T) { t.Fatal(\"Lab 7.2 减法 尚未实现\") }\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ch := &manifest.Chapter{Number: "07", Labs: []*manifest.Lab{
		{ID: "7.1", Title: "加法", StubTitle: "加法", Pattern: "^TestLab7_1_", Tests: 1},
		{ID: "7.2", Title: "减法", StubTitle: "减法", Pattern: "^TestLab7_2_", Tests: 1},
	}}
	var out strings.Builder
	a := &app{p: printer{lang: langEN}, stdout: &out, stderr: &out, stdin: strings.NewReader("q\n")}
	ctx, cancel := context.WithTimeout(context.Background(), hang.Bound(2*time.Minute))
	defer cancel()
	if err := a.watch(ctx, root, ch, nil, false); err != nil {
		t.Fatalf("watch: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"watching " + root,
		"running: go test -run '^TestLab7_1_|^TestLab7_2_' .", // no progress yet: every lab
		"1 passed, 1 failed",
		"[#####-----] 1/2 labs done",
		"press Enter to run again, q and Enter to quit.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "running: go test"); n != 1 {
		t.Errorf("%d runs, want 1:\n%s", n, got)
	}
	p, err := progress.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := p.Lab("7.2"); l.State != progress.NotStarted {
		t.Errorf("lab 7.2 recorded as %q, want %q", l.State, progress.NotStarted)
	}
}
