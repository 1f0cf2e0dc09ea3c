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
// `course serve`.
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
)

func main() {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt)
	code := run(context.Background(), os.Args[1:], env{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, interrupts: signals,
	})
	os.Exit(code)
}

// env is what the program gets from its process, so that tests can give it their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// interrupts delivers Ctrl-C (SIGINT).
	interrupts <-chan os.Signal
}

// Exit statuses besides tinypi.ExitStatus's.
const (
	exitCannotStart = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// failf writes one line, "tinypi: ...", to stderr and returns code. The package's errors start
// with "tinypi: " already; the line says it once.
func (e env) failf(code int, format string, args ...any) int {
	msg := strings.TrimPrefix(fmt.Sprintf(format, args...), "tinypi: ")
	fmt.Fprintln(e.stderr, "tinypi: "+msg)
	return code
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
