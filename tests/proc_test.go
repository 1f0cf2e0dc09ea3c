//go:build unix

package tests

import (
	"bytes"
	"errors"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/proctest"
)

// startReportingPID starts cmd, the program prog, and returns the process id that what it runs
// (what, in failures) writes to the FIFO fifo, and the channel cmd.Wait's error arrives on. The
// test fails when cmd ends first or the line is no process id, with what cmd printed (out).
func startReportingPID(t *testing.T, cmd *exec.Cmd, prog, what, fifo string, out *bytes.Buffer) (pid int, exited <-chan error) {
	t.Helper()
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pid, err := proctest.PID(fifo, done)
	if err != nil {
		var ended *proctest.EndedError
		if !errors.As(err, &ended) { // cmd still runs
			cmd.Process.Kill()
			<-done // out is complete, and no longer written
		}
		t.Fatalf("%s, %s: %v\n%s", prog, what, err, out.String())
	}
	return pid, done
}
