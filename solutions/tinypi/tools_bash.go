package tinypi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// CommandResult is how a command ended and what it printed.
type CommandResult struct {
	// Output is what the command wrote to stdout and stderr, in the order it arrived. When it
	// was longer than the workspace's OutputHead+OutputTail bytes, only its head and its tail
	// are kept, with a marker between that says how many bytes were left out.
	Output string
	// TotalBytes is how many bytes the command wrote; OmittedBytes how many of them Output
	// leaves out.
	TotalBytes, OmittedBytes int64
	// ExitCode is the shell's exit status; -1 when a signal ended it.
	ExitCode int
	// Signal names the signal that ended the shell ("SIGKILL"), or is empty.
	Signal string
	// TimedOut and Cancelled say that the tool stopped the command: its time ran out, or the
	// context was cancelled.
	TimedOut, Cancelled bool
	// OutputLeftOpen is true when the output was still open after the process group was gone
	// (a process that left the group, with setsid for example, kept it): the tool stopped
	// reading instead of waiting for that process.
	OutputLeftOpen bool
}

// Failed reports whether the command did not end with exit status 0 by itself.
func (r CommandResult) Failed() bool {
	return r.ExitCode != 0 || r.Signal != "" || r.TimedOut || r.Cancelled
}

// Text is the output followed by a line that says how the command ended.
func (r CommandResult) Text() string {
	var b strings.Builder
	b.WriteString(r.Output)
	if r.Output != "" && !strings.HasSuffix(r.Output, "\n") {
		b.WriteByte('\n')
	}
	switch {
	case r.TimedOut:
		b.WriteString("[timed out: the command's process group was stopped")
	case r.Cancelled:
		b.WriteString("[cancelled: the command's process group was stopped")
	default:
		b.WriteString("[command ended")
	}
	if r.Signal != "" {
		fmt.Fprintf(&b, "; killed by signal %s]", r.Signal)
	} else {
		fmt.Fprintf(&b, "; exit code %d]", r.ExitCode)
	}
	if r.OutputLeftOpen {
		b.WriteString("\n[a process outside the command's group kept its output open; stopped reading]")
	}
	return b.String()
}

// RunCommand runs command with bash -c in the workspace's directory, as the leader of a new
// process group, with no input. timeout 0 means the workspace's CommandTimeout.
//
// When the time runs out or ctx is cancelled, the whole group gets SIGTERM, and SIGKILL after
// the workspace's KillGrace if the shell has not ended by then. When the shell ends, by itself or
// not, whatever it left running in its group is killed: a command that starts a background
// process and exits does not keep the tool waiting, and nothing it started outlives it. The
// output is read until every process holding it is gone; a process that left the group (setsid)
// is waited for only KillGrace, then reading stops and the result says so.
//
// progress, when not nil, gets the output as it arrives, up to OutputHead bytes, and after that
// a line for every further MiB. It is called from one goroutine at a time and never after
// RunCommand returned. The error is for a command that could not start; how it ended is in
// the result.
//
// A command sees only a small environment (commandEnv): PATH, HOME, USER, LANG, LC_ALL,
// LC_CTYPE, TERM, TMPDIR and TZ from the agent's own environment, when set there, then the
// workspace's CommandEnv. Everything else the agent has, API keys included, stays with the
// agent.
//
// The workspace confines the file tools, not the shell: a command can name any path. Run the
// tools in a container or as a user with few rights when that matters.
func (w *Workspace) RunCommand(ctx context.Context, command string, timeout time.Duration, progress func(text string)) (CommandResult, error) {
	if strings.TrimSpace(command) == "" {
		return CommandResult{}, errors.New("command is empty")
	}
	if err := ctx.Err(); err != nil {
		return CommandResult{Cancelled: true, ExitCode: -1}, nil
	}
	//lab:begin 8.4
	if timeout <= 0 {
		timeout = w.opts.CommandTimeout
	}
	out := newCappedOutput(w.opts.OutputHead, w.opts.OutputTail, progress)
	pr, pw, err := os.Pipe()
	if err != nil {
		return CommandResult{}, err
	}
	defer pr.Close()
	cmd := exec.Command("bash", "-c", command)
	cmd.Dir = w.dir
	cmd.Env = commandEnv(os.Environ(), w.opts.CommandEnv)
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	pw.Close() // the children hold the write end now
	if err != nil {
		return CommandResult{}, fmt.Errorf("starting bash: %w", err)
	}
	group := cmd.Process.Pid // the leader's pid is the group's id

	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, pr) // ends when the output closes, or pr is closed below
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var res CommandResult
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-timer.C:
		res.TimedOut = true
		waitErr = stopGroup(group, exited, w.opts.KillGrace)
	case <-ctx.Done():
		res.Cancelled = true
		waitErr = stopGroup(group, exited, w.opts.KillGrace)
	}
	// The shell is gone; what it left in its group goes too: SIGTERM, then SIGKILL if the
	// output is still open after the grace, then stop reading if even that did not close it.
	signalGroup(group, syscall.SIGTERM)
	if !closedWithin(copied, w.opts.KillGrace) {
		signalGroup(group, syscall.SIGKILL)
		if !closedWithin(copied, w.opts.KillGrace) {
			res.OutputLeftOpen = true
			pr.Close()
			<-copied
		}
	}
	res.ExitCode, res.Signal = exitStatus(waitErr)
	res.Output, res.TotalBytes, res.OmittedBytes = out.result()
	return res, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// commandEnv returns the environment of a command: the entries of environ (the agent's own,
// as os.Environ gives it) whose names are PATH, HOME, USER, LANG, LC_ALL, LC_CTYPE, TERM, TMPDIR
// or TZ, in their order, then every entry of extra (the workspace's CommandEnv). exec.Cmd keeps
// the last of two entries with the same name, so an entry of extra wins over the agent's.
func commandEnv(environ, extra []string) []string {
	//lab:begin 8.4
	var env []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "PATH", "HOME", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "TZ":
			env = append(env, kv)
		}
	}
	return append(env, extra...)
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// stopGroup sends SIGTERM to the process group, then SIGKILL if its leader has not ended
// within grace, and returns the leader's Wait error.
func stopGroup(group int, exited <-chan error, grace time.Duration) error {
	//lab:begin 8.4
	signalGroup(group, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-exited:
		return err
	case <-t.C:
		signalGroup(group, syscall.SIGKILL)
		return <-exited
	}
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// signalGroup sends sig to every process of the group. A group that is already gone is fine.
func signalGroup(group int, sig syscall.Signal) {
	//lab:begin 8.4
	_ = syscall.Kill(-group, sig)
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// closedWithin reports whether done is closed within d.
func closedWithin(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// exitStatus reads the exit code and the signal, if any, from a Wait error.
func exitStatus(err error) (code int, signal string) {
	if err == nil {
		return 0, ""
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, signalName(ws.Signal())
		}
		return ee.ExitCode(), ""
	}
	return -1, ""
}

// signalName returns the usual name of the signals a command is likely to die of.
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	}
	return fmt.Sprintf("signal %d", int(s))
}

// progressStep is how often, in bytes, a command's output past its head is reported as progress.
const progressStep = 1 << 20

// cappedOutput keeps the first head bytes and the last tail bytes written to it and counts the
// rest, so a command's output takes bounded memory however long it is. It is written by one
// goroutine and read after that goroutine is done.
type cappedOutput struct {
	head, tail       []byte
	headMax, tailMax int
	total            int64
	progress         func(string)
	nextReport       int64
}

func newCappedOutput(headMax, tailMax int, progress func(string)) *cappedOutput {
	return &cappedOutput{headMax: headMax, tailMax: tailMax, progress: progress}
}

// Write keeps what fits in the head, then the most recent bytes in the tail. It never fails.
func (c *cappedOutput) Write(p []byte) (int, error) {
	//lab:begin 8.4
	n := len(p)
	c.total += int64(n)
	if room := c.headMax - len(c.head); room > 0 {
		take := min(room, len(p))
		c.head = append(c.head, p[:take]...)
		if c.progress != nil {
			c.progress(string(p[:take]))
		}
		p = p[take:]
		c.nextReport = int64(c.headMax) + progressStep
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= c.tailMax {
		c.tail = append(c.tail[:0], p[len(p)-c.tailMax:]...)
	} else {
		c.tail = append(c.tail, p...)
		if len(c.tail) > 2*c.tailMax { // keep memory bounded: slide the last tailMax bytes down
			c.tail = append(c.tail[:0], c.tail[len(c.tail)-c.tailMax:]...)
		}
	}
	if c.progress != nil && c.total >= c.nextReport {
		c.progress(fmt.Sprintf("[... %d bytes of output so far]", c.total))
		c.nextReport = c.total + progressStep
	}
	return n, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// result returns the kept output, with a marker between head and tail when bytes were left
// out, the total count and the omitted count.
func (c *cappedOutput) result() (string, int64, int64) {
	tail := c.tail
	if len(tail) > c.tailMax {
		tail = tail[len(tail)-c.tailMax:]
	}
	omitted := c.total - int64(len(c.head)) - int64(len(tail))
	if omitted == 0 {
		return string(c.head) + string(tail), c.total, 0
	}
	return fmt.Sprintf("%s\n[... %d bytes omitted ...]\n%s", c.head, omitted, tail), c.total, omitted
}
