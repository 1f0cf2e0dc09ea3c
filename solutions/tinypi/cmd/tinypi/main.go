// Command tinypi is the course's coding agent: the runtime of chapters 05 to 14 in one program.
//
// Usage:
//
//	tinypi [flags]                 talk to the agent at a prompt (interactive)
//	tinypi [flags] -p PROMPT       print mode: run PROMPT, print the answer (chapter 13)
//	tinypi [flags] -json PROMPT    JSON mode: run PROMPT, print every event as a JSON line
//	tinypi [flags] -rpc            RPC mode: JSON commands on stdin, responses and events on stdout
//	tinypi eval [flags] DIR        run the evaluation cases in DIR (chapter 14)
//
// The model is a provider configured by the environment (TINYPI_PROVIDER openai or anthropic,
// TINYPI_MODEL, TINYPI_BASE_URL, and OPENAI_API_KEY or ANTHROPIC_API_KEY), a proxy (-proxy URL
// with TINYPI_PROXY_TOKEN), or, offline, a recorded conversation (-scripted FILE). The agent
// works in the current directory, which must be inside a git repository: every change it makes
// can be seen with git diff and undone. Its session is written as it happens to a file under
// .tinypi/ (-session), can be resumed (-resume FILE) or forked (-fork FILE@SEQ), and opened with
// `course serve`. A model request that fails before any of its answer streamed (429, 5xx, a
// dropped connection) is sent again after a wait (retry.go).
//
// Exit status: 0 when the run (or every run) ended with stop; 1 when tinypi cannot start or a run
// failed; 2 for a usage error or a run that ended otherwise; 130 after Ctrl-C.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
)

func main() {
	closed := openStdio()
	if closed[1] {
		fmt.Fprintln(os.Stderr, "tinypi: stdout is closed: what tinypi would write there could not be read, so it does not start")
		os.Exit(exitCannotStart)
	}
	if err := hideKeys(); err != nil { // returns only when the keys are out of the environment
		fmt.Fprintf(os.Stderr, "tinypi: %v\n", err)
		os.Exit(exitCannotStart)
	}
	keys, err := takeKeys()
	if err != nil {
		fmt.Fprintf(os.Stderr, "tinypi: %v\n", err)
		os.Exit(exitCannotStart)
	}
	interrupts := make(chan os.Signal, 2)
	signal.Notify(interrupts, os.Interrupt)
	terminations := make(chan os.Signal, 2)
	signal.Notify(terminations, syscall.SIGTERM, syscall.SIGHUP)
	stdout := &reportingWriter{w: os.Stdout, name: "stdout"}
	stderr := &reportingWriter{w: os.Stderr, name: "stderr"}
	stderr.closed = closed[2]
	code := run(context.Background(), os.Args[1:], env{
		stdin: os.Stdin, stdinTerminal: isTerminal(os.Stdin), stdoutTerminal: isTerminal(os.Stdout), stdout: stdout, stderr: stderr, info: os.Stderr, getenv: withKeys(keys, os.Getenv),
		interrupts: interrupts, terminations: terminations,
	})
	os.Exit(finalStatus(code, stdout, stderr))
}

// finalStatus is the exit status of a program that returned code: a write to stdout or stderr
// that could not be completed is reported (on stderr, when that still works) and makes a
// successful exit status 1.
func finalStatus(code int, stdout, stderr *reportingWriter) int {
	if err := stdout.failure(); err != nil {
		fmt.Fprintf(stderr, "tinypi: %v\n", err)
		if code == 0 {
			code = exitCannotStart
		}
	}
	if stderr.failure() != nil && code == 0 {
		code = exitCannotStart
	}
	return code
}

// openStdio reports which of stdout and stderr were closed when the program started. The Go
// runtime opens /dev/null, for reading and writing, on a standard file descriptor that is closed
// at start (so that no file the program opens takes its place); a shell's redirection to
// /dev/null opens it for writing only. So a descriptor 1 or 2 that is /dev/null open for reading
// and writing was closed: a write there would be lost without a word.
func openStdio() (closed [3]bool) {
	var null syscall.Stat_t
	if syscall.Stat(os.DevNull, &null) != nil {
		return closed
	}
	for fd := 1; fd < 3; fd++ {
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) != nil {
			closed[fd] = true
			continue
		}
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
		closed[fd] = errno == 0 && st.Mode&syscall.S_IFMT == syscall.S_IFCHR && st.Rdev == null.Rdev &&
			int(flags)&syscall.O_ACCMODE == syscall.O_RDWR
	}
	return closed
}

// reportingWriter remembers the first write to w that failed, so that the program can report
// it and exit with a failure, whoever wrote.
type reportingWriter struct {
	w    io.Writer
	name string
	// closed is set for a descriptor that was closed at start: every write to it fails.
	closed bool
	mu     sync.Mutex
	err    error
}

// Write implements io.Writer.
func (r *reportingWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	if r.closed {
		r.err = fmt.Errorf("writing to %s: it is closed", r.name)
		return 0, r.err
	}
	n, err := r.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		r.err = fmt.Errorf("writing to %s: %w", r.name, err)
	}
	return n, err
}

// failure is the first write error, or nil.
func (r *reportingWriter) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// withKeys is getenv that answers the key variables from keys.
func withKeys(keys map[string]string, getenv func(string) string) func(string) string {
	return func(name string) string {
		if v, ok := keys[name]; ok {
			return v
		}
		return getenv(name)
	}
}

// env is what the program gets from its process, so that tests can give it their own.
type env struct {
	stdin io.Reader
	// stdinTerminal is set when stdin is a terminal: only then does tinypi show a prompt.
	stdinTerminal bool
	// stdoutTerminal is set when stdout is a terminal: with stdin one too, the prompt edits lines.
	stdoutTerminal bool
	stdout, stderr io.Writer
	// info is stderr for the lines that only inform (where the session is, retries, tokens):
	// a failure to write them is not the run's, so it is not reported (a user who closed stderr
	// asked not to see them).
	info   io.Writer
	getenv func(string) string
	// interrupts delivers Ctrl-C (SIGINT); terminations SIGTERM and SIGHUP, which end the
	// program, a run in progress aborted first (its commands stopped).
	interrupts, terminations <-chan os.Signal
}

// Exit statuses besides tinypi.ExitStatus's.
const (
	exitCannotStart = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// terminatedStatus is the exit status after sig ended the program, as a shell reports it.
func terminatedStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitInterrupted
}

// failf writes one line, "tinypi: ...", to stderr and returns code. The package's errors start
// with "tinypi: " already, and an error that wraps another repeats it ("tinypi: -sandbox: tinypi:
// workspace: ..."): the line says it once.
func (e env) failf(code int, format string, args ...any) int {
	fmt.Fprintln(e.stderr, "tinypi: "+oneLine(fmt.Sprintf(format, args...)))
	return code
}

// oneLine is msg without the "tinypi: " prefixes of the errors it wraps, in one line.
func oneLine(msg string) string {
	msg = strings.TrimPrefix(msg, "tinypi: ")
	msg = strings.ReplaceAll(msg, ": tinypi: ", ": ")
	return strings.ReplaceAll(msg, "\n", "; ")
}

// run is the whole program: it parses args and runs the mode they ask for.
func run(ctx context.Context, args []string, e env) int {
	if len(args) > 0 && args[0] == "eval" {
		return runEval(ctx, args[1:], e) // eval.go
	}
	cfg, err := parseFlags(args, e)
	if err != nil {
		return e.failf(exitUsage, "%v", err)
	}
	if cfg.help {
		return 0
	}
	return runAgent(ctx, cfg, e) // agent.go
}
