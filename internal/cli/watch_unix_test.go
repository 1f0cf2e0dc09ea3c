//go:build unix

package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/learn-tinypi/course/internal/hang"
	"github.com/learn-tinypi/course/internal/manifest"
)

// notifyWriter is a strings.Builder that tells, once, when what it holds contains want.
type notifyWriter struct {
	mu    sync.Mutex
	b     strings.Builder
	wants []string
	seen  []chan struct{}
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.b.Write(p)
	for i, want := range w.wants {
		if w.seen[i] != nil && strings.Contains(w.b.String(), want) {
			close(w.seen[i])
			w.seen[i] = nil
		}
	}
	return n, err
}

func (w *notifyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// when returns a channel closed once the output contains want.
func (w *notifyWriter) when(want string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := make(chan struct{})
	w.wants = append(w.wants, want)
	w.seen = append(w.seen, c)
	return c
}

// TestWatchRestartsARunningTest starts course watch on a lab whose test never ends, fixes the
// test file while it runs, and checks that the run is stopped and a new one started, which
// passes: the learner does not wait for a stale run.
func TestWatchRestartsARunningTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	root := t.TempDir()
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	t.Setenv("WATCH_FIFO", fifo)
	hanging := "package tinypi\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n" +
		"func TestLab7_1_Add(t *testing.T) {\n\tf, _ := os.OpenFile(os.Getenv(\"WATCH_FIFO\"), os.O_WRONLY, 0)\n\tf.Close()\n\t<-make(chan int)\n}\n"
	files := map[string]string{
		"go.mod":    "module tinypi\n\ngo 1.26\n",
		"a_test.go": hanging,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ch := &manifest.Chapter{Number: "07", Labs: []*manifest.Lab{
		{ID: "7.1", Title: "加法", StubTitle: "加法", Pattern: "^TestLab7_1_", Tests: 1},
	}}
	out := &notifyWriter{}
	restarted := out.when("files changed: stopping this run and starting again.")
	passed := out.when("1 passed, 0 failed")
	stdin, keys := io.Pipe()
	a := &app{p: printer{lang: langEN}, stdout: out, stderr: out, stdin: stdin, testTimeout: time.Hour}
	ctx, cancel := context.WithTimeout(context.Background(), hang.Bound(2*time.Minute))
	defer cancel()
	result := make(chan error, 1)
	go func() { result <- a.watch(ctx, root, ch, nil, false) }()

	// The test has started once it opens the FIFO.
	opened := make(chan error, 1)
	go func() {
		f, err := os.Open(fifo)
		if err == nil {
			f.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		if err != nil {
			t.Fatal(err)
		}
	case err := <-result:
		t.Fatalf("watch ended before the test started: %v\n%s", err, out.String())
	}
	fixed := "package tinypi\n\nimport \"testing\"\n\nfunc TestLab7_1_Add(t *testing.T) {}\n"
	if err := os.WriteFile(filepath.Join(root, "a_test.go"), []byte(fixed), 0o644); err != nil {
		t.Fatal(err)
	}
	for what, c := range map[string]<-chan struct{}{"the restart notice": restarted, "the new run's pass": passed} {
		select {
		case <-c:
		case <-ctx.Done():
			t.Fatalf("no %s:\n%s", what, out.String())
		}
	}
	keys.Write([]byte("q\n"))
	if err := <-result; err != nil {
		t.Fatalf("watch: %v\n%s", err, out.String())
	}
	keys.Close()
	if n := strings.Count(out.String(), "running: go test"); n != 2 {
		t.Errorf("%d runs, want 2 (the stopped one and the new one):\n%s", n, out.String())
	}
}
