//go:build unix

package tests

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// startReportingPID starts cmd, the program prog, and waits until what it runs (what, in
// failures) writes its process id, one line, to the FIFO fifo. It returns that id and the
// channel cmd.Wait's error arrives on. The test fails when cmd ends before the line comes, or
// when the line is no process id; out is what cmd prints, shown in the failure once cmd is gone.
// A FIFO, not a poll: the test goes on at the moment the process is there, on any machine.
func startReportingPID(t *testing.T, cmd *exec.Cmd, prog, what, fifo string, out *bytes.Buffer) (pid int, exited <-chan error) {
	t.Helper()
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	started := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo) // until the process opens it for writing
		if err != nil {
			started <- ""
			return
		}
		defer f.Close()
		line, _ := bufio.NewReader(f).ReadString('\n')
		started <- strings.TrimSpace(line)
	}()
	select {
	case line := <-started:
		pid, err := strconv.Atoi(line)
		if err != nil {
			cmd.Process.Kill()
			<-done // out is complete, and no longer written
			t.Fatalf("%s reported %q, want its process id\n%s", what, line, out.String())
		}
		return pid, done
	case err := <-done:
		if f, openErr := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); openErr == nil {
			f.Close() // releases the reader
		}
		t.Fatalf("%s ended before %s started: %v\n%s", prog, what, err, out.String())
	}
	return 0, nil // not reached: Fatalf ends the test
}

// processGone reports whether process pid has ended (a zombie waiting for its new parent counts).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] == "Z"
}
