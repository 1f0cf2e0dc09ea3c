//go:build !unix

package gotest

import (
	"os"
	"os/exec"
)

// setProcessGroup does nothing here: there are no process groups to signal.
func setProcessGroup(cmd *exec.Cmd) {}

// signalGroup kills p: an interrupt cannot be sent to another process here.
func signalGroup(p *os.Process, kill bool) error {
	return p.Kill()
}
