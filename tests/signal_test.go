//go:build unix

package tests

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/proctest"
)

// hangTest is a focused test of lab 7.1 that reports its process id through the FIFO named by
// $COURSE_SIGNAL_FIFO, then waits for a value nobody sends.
const hangTest = `package tinypi

import (
	"fmt"
	"os"
	"testing"
)

func TestLab7_1_Hang(t *testing.T) {
	f, err := os.OpenFile(os.Getenv("COURSE_SIGNAL_FIFO"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, os.Getpid())
	f.Close()
	<-make(chan int)
}
`

// TestSignalsStopEverything runs course test on a lab whose test never ends, and sends the
// course command SIGTERM, SIGHUP or SIGINT once the test has reported that it runs: course must
// exit saying it was interrupted, the test binary must be gone, and nothing may be left in
// TMPDIR (no go-build*, no course-* directory).
func TestSignalsStopEverything(t *testing.T) {
	course, err := exec.LookPath("course")
	require.NoError(t, err, "finding the course command testscript installed")
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	env := os.Environ()
	for _, kv := range hostGoEnv(t) {
		env = append(env, kv[0]+"="+kv[1])
	}
	env = append(append(env, gotest.OfflineEnv()...),
		"GOSUMDB=off", "NO_COLOR=1", "GOTMPDIR=", "COURSE_LANG=", "LANG=C")

	dir := filepath.Join(t.TempDir(), "p07")
	if out, err := exec.Command(course, "practice", "07", dir).CombinedOutput(); err != nil {
		t.Fatalf("course practice 07: %v\n%s", err, out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "aa_hang_test.go"), []byte(hangTest), 0o644))

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			fifo := filepath.Join(t.TempDir(), "started")
			proctest.MakeFIFO(t, fifo)
			cmd := exec.Command(course, "--lang", "en", "test", "--lab", "7.1")
			cmd.Dir = dir
			cmd.Env = append(env, "TMPDIR="+tmp, "COURSE_SIGNAL_FIFO="+fifo)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			pid, exited := startReportingPID(t, cmd, "course test", "the hanging test", fifo, &out)

			require.NoError(t, cmd.Process.Signal(sig))
			err := <-exited
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Errorf("course test after %v: %v, want exit code 1\n%s", sig, err, out.String())
			}
			if !strings.Contains(out.String(), "interrupted: the running go commands were stopped") {
				t.Errorf("course test after %v did not say it was interrupted:\n%s", sig, out.String())
			}
			if !proctest.Gone(pid) {
				t.Errorf("the test binary (pid %d) still runs after course exited", pid)
				syscall.Kill(pid, syscall.SIGKILL)
			}
			entries, err := os.ReadDir(tmp)
			require.NoError(t, err)
			for _, e := range entries {
				if e.Name() == "goimports" {
					// golang.org/x/tools makes its index directory at start-up, in TMPDIR
					// when it runs inside a test binary (as course does here), else in the
					// user's cache directory.
					continue
				}
				t.Errorf("left in TMPDIR after %v: %s", sig, e.Name())
			}
		})
	}
}
