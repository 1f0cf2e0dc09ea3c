package watch

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/learn-tinypi/course/internal/hang"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// deadline bounds every wait of these tests (scaled by hang.Bound); no test sleeps to assert.
const deadline = 10 * time.Second

// fakeLoop runs Loop with channels the test drives and a debounce the test fires.
type fakeLoop struct {
	changes chan string
	manual  chan struct{}
	fire    chan chan time.Time // each debounce timer Loop asks for
	runs    chan int            // run n started
	cancel  context.CancelFunc
	result  chan error
}

func startLoop(t *testing.T, runErr func(n int) error) *fakeLoop {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeLoop{
		changes: make(chan string),
		manual:  make(chan struct{}),
		fire:    make(chan chan time.Time, 100),
		runs:    make(chan int, 100),
		cancel:  cancel,
		result:  make(chan error, 1),
	}
	n := 0
	cfg := Config{
		Changes:  f.changes,
		Manual:   f.manual,
		Debounce: time.Hour, // never fires by itself
		Run: func(context.Context) error {
			n++
			f.runs <- n
			if runErr != nil {
				return runErr(n)
			}
			return nil
		},
		After: func(d time.Duration) <-chan time.Time {
			if d != time.Hour {
				t.Errorf("After(%v), want the configured debounce", d)
			}
			c := make(chan time.Time, 1)
			f.fire <- c
			return c
		},
	}
	go func() { f.result <- Loop(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-f.result:
		case <-time.After(hang.Bound(deadline)):
			t.Error("Loop did not return after cancel")
		}
	})
	return f
}

func (f *fakeLoop) wantRun(t *testing.T, n int) {
	t.Helper()
	select {
	case got := <-f.runs:
		if got != n {
			t.Fatalf("run %d started, want run %d", got, n)
		}
	case <-time.After(hang.Bound(deadline)):
		t.Fatalf("run %d did not start", n)
	}
}

func (f *fakeLoop) wantNoRun(t *testing.T) {
	t.Helper()
	select {
	case got := <-f.runs:
		t.Fatalf("run %d started, want none", got)
	default:
	}
}

func (f *fakeLoop) timer(t *testing.T) chan time.Time {
	t.Helper()
	select {
	case c := <-f.fire:
		return c
	case <-time.After(hang.Bound(deadline)):
		t.Fatal("Loop asked for no debounce timer")
		return nil
	}
}

func TestLoopRunsAtStartAndDebouncesChanges(t *testing.T) {
	f := startLoop(t, nil)
	f.wantRun(t, 1)

	// A burst of three saves: each restarts the debounce; only the last timer matters.
	var timers []chan time.Time
	for _, p := range []string{"a.go", "a.go", "b.go"} {
		f.changes <- p
		timers = append(timers, f.timer(t))
	}
	timers[0] <- time.Now() // an outdated timer does nothing
	f.manual <- struct{}{}  // a manual run: Loop is back in its select, so the old timer was ignored
	f.wantRun(t, 2)
	timers[2] <- time.Now() // the manual run covered the burst: its timer is forgotten too
	f.changes <- "c.go"
	f.timer(t) <- time.Now()
	f.wantRun(t, 3)
	f.wantNoRun(t)
}

func TestLoopManualRun(t *testing.T) {
	f := startLoop(t, nil)
	f.wantRun(t, 1)
	f.manual <- struct{}{}
	f.wantRun(t, 2)
	f.manual <- struct{}{}
	f.wantRun(t, 3)
}

func TestLoopStopsOnRunError(t *testing.T) {
	boom := errors.New("boom")
	f := startLoop(t, func(n int) error {
		if n == 2 {
			return boom
		}
		return nil
	})
	f.wantRun(t, 1)
	f.manual <- struct{}{}
	f.wantRun(t, 2)
	select {
	case err := <-f.result:
		if !errors.Is(err, boom) {
			t.Errorf("Loop = %v, want %v", err, boom)
		}
		f.result <- err // for the cleanup
	case <-time.After(hang.Bound(deadline)):
		t.Fatal("Loop did not return the run's error")
	}
}

func TestLoopEndsWhenNothingCanTrigger(t *testing.T) {
	changes := make(chan string)
	manual := make(chan struct{})
	close(changes)
	close(manual)
	runs := 0
	err := Loop(context.Background(), Config{Changes: changes, Manual: manual, Run: func(context.Context) error {
		runs++
		return nil
	}})
	if err != nil || runs != 1 {
		t.Errorf("Loop = %v after %d runs, want nil after 1", err, runs)
	}
}

func TestLoopCancelledDuringRunIsNotAnError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	err := Loop(ctx, Config{Run: func(ctx context.Context) error {
		cancel()
		return ctx.Err()
	}})
	if err != nil {
		t.Errorf("Loop = %v, want nil", err)
	}
}

func TestRelevant(t *testing.T) {
	tests := map[string]bool{
		"agentloop.go":           true,
		"cmd/diagnose/main.go":   true,
		"go.mod":                 true,
		"go.sum":                 true,
		"testdata/x.golden":      true,
		"sub/testdata/x.json":    true,
		"labs/7.1.md":            false,
		".agentloop.go.swp":      false,
		"agentloop.go~":          false,
		"LEARNING.md":            false,
		"notes/.hidden/x.golden": false,
	}
	for rel, want := range tests {
		if got := Relevant(rel); got != want {
			t.Errorf("Relevant(%q) = %v, want %v", rel, got, want)
		}
	}
}

// waitFor reads w.C until it delivers want or the deadline passes.
func waitFor(t *testing.T, w *Watcher, want string) {
	t.Helper()
	timeout := time.After(hang.Bound(deadline))
	for {
		select {
		case got, ok := <-w.C:
			if !ok {
				t.Fatalf("the watcher stopped before delivering %s", want)
			}
			if got == want {
				return
			}
		case <-timeout:
			t.Fatalf("the watcher did not deliver %s", want)
		}
	}
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
	require.NoError(t, os.WriteFile(name, []byte(data), 0o644))
}

func TestStartDeliversSavesInNewDirectories(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.go"), "package a\n")
	writeFile(t, filepath.Join(root, ".git", "index"), "x")
	w, err := Start(root)
	if err != nil {
		t.Skipf("no file events on this system: %v", err)
	}
	defer w.Close()

	writeFile(t, filepath.Join(root, "a.go"), "package a // saved\n")
	waitFor(t, w, "a.go")

	// A directory created after the start is watched as well.
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	// The watcher adds sub when it sees its creation, which may come after the first save in it:
	// save again every so often until a save in sub is reported.
	timeout := time.After(hang.Bound(deadline))
	for i := 0; ; i++ {
		writeFile(t, filepath.Join(root, "sub", "b.go"), strings.Repeat("/", i)+"package sub\n")
		retry := time.After(50 * time.Millisecond)
	wait:
		for {
			select {
			case got := <-w.C:
				if got == "sub/b.go" {
					return
				}
			case <-retry:
				break wait
			case <-timeout:
				t.Fatal("the watcher did not deliver sub/b.go")
			}
		}
	}
}

func TestStartIgnoresHiddenAndIrrelevantFiles(t *testing.T) {
	root := t.TempDir()
	w, err := Start(root)
	if err != nil {
		t.Skipf("no file events on this system: %v", err)
	}
	defer w.Close()
	writeFile(t, filepath.Join(root, "notes.md"), "x")
	writeFile(t, filepath.Join(root, ".course", "progress.json"), "x")
	writeFile(t, filepath.Join(root, "z.go"), "package z\n")
	// Events arrive in order: the first delivered path must be the Go file.
	select {
	case got := <-w.C:
		if got != "z.go" {
			t.Errorf("first change = %q, want z.go", got)
		}
	case <-time.After(hang.Bound(deadline)):
		t.Fatal("the watcher did not deliver z.go")
	}
}

func TestStartPolling(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a.go"), "package a\n")
	w := StartPolling(root, 10*time.Millisecond)
	defer w.Close()
	if !w.Polling {
		t.Error("Polling = false")
	}
	writeFile(t, filepath.Join(root, "a.go"), "package a // a longer file\n")
	waitFor(t, w, "a.go")
	writeFile(t, filepath.Join(root, "b.go"), "package a\n")
	waitFor(t, w, "b.go")
}

func TestChanged(t *testing.T) {
	t0 := time.Unix(0, 0)
	before := map[string]stamp{"a.go": {t0, 1}, "b.go": {t0, 1}, "c.go": {t0, 1}}
	after := map[string]stamp{"a.go": {t0, 1}, "b.go": {t0, 2}, "d.go": {t0, 1}}
	got := changed(before, after)
	slices.Sort(got)
	if want := []string{"b.go", "c.go", "d.go"}; !slices.Equal(got, want) {
		t.Errorf("changed = %v, want %v", got, want)
	}
}

func TestReadKeys(t *testing.T) {
	k := ReadKeys(strings.NewReader("\nagain\nq\nnever read\n"))
	defer k.Stop()
	for i := 0; i < 2; i++ {
		select {
		case <-k.Manual:
		case <-time.After(hang.Bound(deadline)):
			t.Fatalf("manual run %d not delivered", i+1)
		}
	}
	select {
	case <-k.Quit:
	case <-time.After(hang.Bound(deadline)):
		t.Fatal("q did not quit")
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang.Bound(deadline))
	defer cancel()
	require.NoError(t, k.Wait(ctx))
}

func TestReadKeysEndOfInputClosesManual(t *testing.T) {
	k := ReadKeys(strings.NewReader(""))
	select {
	case _, ok := <-k.Manual:
		if ok {
			t.Error("Manual delivered a run on empty input")
		}
	case <-time.After(hang.Bound(deadline)):
		t.Fatal("Manual not closed at the end of the input")
	}
}

func TestReadKeysStop(t *testing.T) {
	r, w := io.Pipe()
	k := ReadKeys(r)
	if _, err := io.WriteString(w, "\n"); err != nil { // the reader now waits to deliver
		t.Fatal(err)
	}
	k.Stop()
	k.Stop() // twice is fine
	ctx, cancel := context.WithTimeout(context.Background(), hang.Bound(deadline))
	defer cancel()
	require.NoError(t, k.Wait(ctx), "the reader did not end after Stop")
	w.Close()
}

func TestLoopQuitLetsTheRunFinish(t *testing.T) {
	quit := make(chan struct{})
	finished := false
	err := Loop(context.Background(), Config{
		Manual: make(chan struct{}), // open: only Quit can end the loop
		Quit:   quit,
		Run: func(ctx context.Context) error {
			close(quit) // q typed during the first run
			if ctx.Err() != nil {
				t.Error("the run was cancelled by quit")
			}
			finished = true
			return nil
		},
	})
	if err != nil || !finished {
		t.Errorf("Loop = %v, run finished %v; want nil after a finished run", err, finished)
	}
}

// TestLoopRestartsARunningRun saves a file while a run is blocked (a test that never ends): the
// run under way is cancelled with ErrRestart and a new one starts once it has ended, never two at
// once. Enter during a run is taken once the run has ended.
func TestLoopRestartsARunningRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := make(chan string)
	manual := make(chan struct{})
	fire := make(chan chan time.Time, 10)
	started := make(chan int, 10)
	causes := make(chan error, 10)
	active := 0
	n := 0
	result := make(chan error, 1)
	go func() {
		result <- Loop(ctx, Config{
			Changes:  changes,
			Manual:   manual,
			Debounce: time.Hour,
			After: func(time.Duration) <-chan time.Time {
				c := make(chan time.Time, 1)
				fire <- c
				return c
			},
			Run: func(ctx context.Context) error {
				n++
				active++
				if active != 1 {
					t.Errorf("%d runs at once, want 1", active)
				}
				started <- n
				<-ctx.Done() // blocks like an endless test
				active--
				causes <- context.Cause(ctx)
				return ctx.Err()
			},
		})
	}()
	wait := func(what string, c <-chan int, want int) {
		t.Helper()
		select {
		case got := <-c:
			if got != want {
				t.Fatalf("%s: run %d started, want %d", what, got, want)
			}
		case <-time.After(hang.Bound(deadline)):
			t.Fatalf("%s: run %d did not start", what, want)
		}
	}
	wantCause := func(want error) {
		t.Helper()
		select {
		case got := <-causes:
			if !errors.Is(got, want) {
				t.Fatalf("run cancelled with cause %v, want %v", got, want)
			}
		case <-time.After(hang.Bound(deadline)):
			t.Fatal("the running run was not cancelled")
		}
	}
	send := func(what string, send func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { send(); close(done) }()
		select {
		case <-done:
		case <-time.After(hang.Bound(deadline)):
			t.Fatalf("Loop does not take %s while a run is under way", what)
		}
	}
	wait("start", started, 1)
	send("a change", func() { changes <- "a.go" })
	send("the debounce", func() { (<-fire) <- time.Now() })
	wantCause(ErrRestart)
	wait("after a save", started, 2)
	entered, giveUp, gaveUp := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer func() { close(giveUp); <-gaveUp }()
	go func() {
		defer close(gaveUp)
		select {
		case manual <- struct{}{}:
			close(entered)
		case <-giveUp:
		}
	}()
	send("a second change", func() { changes <- "b.go" })
	send("the debounce", func() { (<-fire) <- time.Now() })
	wantCause(ErrRestart)
	// Enter was not taken while run 2 ran; either it or the change starts run 3, and the other
	// one more run after it.
	wait("after the second save", started, 3)
	select {
	case <-entered:
		t.Fatal("Enter was taken while a run was under way")
	default:
	}
	cancel()
	wantCause(context.Canceled)
	select {
	case err := <-result:
		if err != nil {
			t.Errorf("Loop = %v, want nil", err)
		}
	case <-time.After(hang.Bound(deadline)):
		t.Fatal("Loop did not return")
	}
}
