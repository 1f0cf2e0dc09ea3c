//go:build unix

package gotest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/proctest"
)

// hangTests is a test that reports its process id through the FIFO named by $HANG_FIFO, then
// never ends; with $HANG_IGNORE_INT set it ignores interrupts too.
const hangTests = `package m

import (
	"fmt"
	"os"
	"os/signal"
	"testing"
	"time"
)

func TestHang(t *testing.T) {
	if os.Getenv("HANG_IGNORE_INT") != "" {
		signal.Ignore(os.Interrupt)
	}
	f, err := os.OpenFile(os.Getenv("HANG_FIFO"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, os.Getpid())
	f.Close()
	time.Sleep(time.Hour)
}
`

// startHang runs the hanging test with Run in the background and returns the test binary's
// process id once the test has reported it, and a channel that delivers Run's error.
func startHang(t *testing.T, ctx context.Context, ignoreInterrupt bool) (int, <-chan error) {
	t.Helper()
	dir := writeModule(t, map[string]string{"m_test.go": hangTests})
	fifo := filepath.Join(t.TempDir(), "fifo")
	proctest.MakeFIFO(t, fifo)
	env := append(OfflineEnv(), "HANG_FIFO="+fifo)
	if ignoreInterrupt {
		env = append(env, "HANG_IGNORE_INT=1")
	}
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Options{Dir: dir, Env: env, Fresh: true})
		done <- err
	}()
	pid, err := proctest.PID(fifo, done)
	if err != nil {
		t.Fatalf("the hanging test under Run: %v", err)
	}
	return pid, done
}

// TestRunCancelStopsEverything cancels a run while a test hangs: the test binary must be gone and
// nothing (go's work directory, the command's temporary directory) left in TMPDIR, also when the
// test binary ignores interrupts and has to be killed.
func TestRunCancelStopsEverything(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		t.Run("ignore interrupt="+strconv.FormatBool(ignore), func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			t.Setenv("GOTMPDIR", "")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pid, done := startHang(t, ctx, ignore)
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Run = %v, want context.Canceled", err)
			}
			if !proctest.Gone(pid) {
				t.Errorf("test binary %d still runs after Run returned", pid)
				syscall.Kill(pid, syscall.SIGKILL)
			}
			if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("left in TMPDIR: %v", names)
			}
		})
	}
}

// TestRunTestTimeout runs a test that never ends with a per-test limit: the run ends, names the
// test, keeps the results before it, and leaves nothing behind.
func TestRunTestTimeout(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("GOTMPDIR", "")
	dir := writeModule(t, map[string]string{
		"m_test.go": "package m\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\n" +
			"func TestQuick(t *testing.T) {}\n\n" +
			"func TestHang(t *testing.T) { t.Log(\"started\"); time.Sleep(time.Hour) }\n\n" +
			"func TestAfter(t *testing.T) {}\n",
	})
	report, err := Run(context.Background(), Options{Dir: dir, Env: OfflineEnv(), Fresh: true, TestTimeout: 5 * time.Second})
	require.NoError(t, err)
	if report.TimedOut != "TestHang" {
		t.Errorf("TimedOut = %q, want TestHang", report.TimedOut)
	}
	hang, ok := report.Test("TestHang")
	if !ok || !hang.Failed || hang.FirstFailure != "timed out: still running after 5s, so go test was stopped" {
		t.Errorf("TestHang = %+v, %v; want failed with the time-out message", hang, ok)
	}
	if quick, _ := report.Test("TestQuick"); !quick.Passed {
		t.Errorf("TestQuick = %+v, want passed", quick)
	}
	if after, ok := report.Test("TestAfter"); ok && after.Passed {
		t.Errorf("TestAfter passed: go test was not stopped at the time-out")
	}
	if report.OK() || report.ExitCode == 0 {
		t.Errorf("OK = %v, ExitCode = %d after a time-out; want false, non-zero", report.OK(), report.ExitCode)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("left in TMPDIR: %v", entries)
	}
}
