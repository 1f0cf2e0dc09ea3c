//go:build unix

package proctest_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/learn-tinypi/course/internal/proctest"
)

// A shell reports its id through the FIFO, then waits for its input to end: PID returns that id
// while it runs, and Gone is true only once it has ended.
func TestPIDAndGone(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pid")
	proctest.MakeFIFO(t, fifo)
	cmd := exec.Command("sh", "-c", `echo $$ > "$0"; exec cat`, fifo)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	pid, err := proctest.PID(fifo, ended)
	if err != nil {
		t.Fatalf("PID: %v", err)
	}
	if pid != cmd.Process.Pid {
		t.Errorf("PID = %d, want the shell's %d", pid, cmd.Process.Pid)
	}
	if proctest.Gone(pid) {
		t.Errorf("Gone(%d) while it runs", pid)
	}
	stdin.Close()
	if err := <-ended; err != nil {
		t.Fatalf("the shell: %v", err)
	}
	if !proctest.Gone(pid) {
		t.Errorf("Gone(%d) = false after it was waited for", pid)
	}
}

// What ended first is returned as an *EndedError; a line that is no process id is an error.
func TestPIDFailures(t *testing.T) {
	defer goleak.VerifyNone(t) // PID's reader of the FIFO ended too
	fifo := filepath.Join(t.TempDir(), "pid")
	proctest.MakeFIFO(t, fifo)
	ended := make(chan error, 1)
	boom := errors.New("exit status 3")
	ended <- boom
	_, err := proctest.PID(fifo, ended)
	var e *proctest.EndedError
	if !errors.As(err, &e) || e.Err != boom {
		t.Errorf("PID after the end = %v, want an *EndedError holding %v", err, boom)
	}

	fifo = filepath.Join(t.TempDir(), "pid")
	proctest.MakeFIFO(t, fifo)
	written := make(chan struct{})
	go func() {
		defer close(written)
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.WriteString("ready\n")
			f.Close()
		}
	}()
	if _, err := proctest.PID(fifo, make(chan error)); err == nil || err.Error() != `it reported "ready", want its process id` {
		t.Errorf("PID of a line %q = %v, want the error that says so", "ready", err)
	}
	<-written
}
