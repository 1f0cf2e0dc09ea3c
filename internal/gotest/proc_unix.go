//go:build unix

package gotest

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup makes cmd the leader of a new process group, so that its children (the test
// binaries) can be signalled together with it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup interrupts (SIGINT) or kills (SIGKILL) the process group p leads.
func signalGroup(p *os.Process, kill bool) error {
	sig := syscall.SIGINT
	if kill {
		sig = syscall.SIGKILL
	}
	return syscall.Kill(-p.Pid, sig)
}
