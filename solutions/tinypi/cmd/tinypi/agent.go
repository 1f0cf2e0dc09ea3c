package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// systemPrompt is the agent's base prompt; the context files (AGENTS.md) found from the
// repository's root down to the current directory are appended to it.
const systemPrompt = `You are tinypi, a coding agent working in the user's repository.
Use the tools to read files before changing them, make the smallest change that does the task,
and run the project's checks with bash when there are any. Answer briefly: say what you changed.`

// runAgent builds the runtime cfg asks for, in the current directory, and runs the mode.
func runAgent(ctx context.Context, cfg config, e env) int {
	model, err := newModel(cfg, e)
	if err != nil {
		return e.failf(exitCannotStart, "%v", err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return e.failf(exitCannotStart, "%v", err)
	}
	if cfg.sandbox != "" {
		if cwd, err = newSandbox(ctx, cfg.sandbox); err != nil {
			return e.failf(exitCannotStart, "%v", err)
		}
		fmt.Fprintf(e.stderr, "tinypi: sandbox %s (a git repository: see the agent's changes with git -C %s diff)\n", cwd, cwd)
	}
	root, err := gitRoot(cwd)
	if err != nil {
		return e.failf(exitCannotStart, "%v", err)
	}
	session, path, repaired, err := openSession(cfg, cwd)
	if err != nil {
		return e.failf(exitCannotStart, "%v", err)
	}
	defer session.Close()
	opts := tinypi.RuntimeOptions{Model: model, Workspace: cwd, ContextRoot: root, SystemPrompt: systemPrompt,
		Session: session, MaxSteps: cfg.maxSteps}
	if cfg.contextWindow > 0 {
		opts.Compaction = &tinypi.CompactionOptions{ContextWindow: cfg.contextWindow}
	}
	if cfg.readOnly {
		opts.Hooks = &tinypi.LoopHooks{BeforeToolCall: readOnly}
	}
	rt, err := tinypi.NewRuntime(opts)
	if err != nil {
		return e.failf(exitCannotStart, "%v", err)
	}
	defer rt.Close()
	for _, p := range rt.Problems {
		fmt.Fprintf(e.stderr, "tinypi: context file %s skipped: %s\n", p.Path, p.Reason)
	}
	if repaired > 0 {
		fmt.Fprintf(e.stderr, "tinypi: %s: %d events repaired after a crash\n", path, repaired)
	}

	// Ctrl-C in the modes of chapter 13: the first one cancels ctx, which aborts the run.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	switch {
	case cfg.print != "":
		go cancelOnInterrupt(runCtx, e, cancel)
		return tinypi.RunPrintMode(runCtx, rt, cfg.print, e.stdout, e.stderr)
	case cfg.jsonPrompt != "":
		go cancelOnInterrupt(runCtx, e, cancel)
		return tinypi.RunJSONMode(runCtx, rt, cfg.jsonPrompt, e.stdout)
	case cfg.rpc:
		go cancelOnInterrupt(runCtx, e, cancel)
		if err := tinypi.ServeRPC(runCtx, rt, e.stdin, e.stdout); err != nil {
			return e.failf(exitCannotStart, "%v", err)
		}
		return 0
	}
	fmt.Fprintf(e.stderr, "tinypi: session %s (open it with: course serve %s)\n", path, path)
	return interactive(ctx, rt, e) // interactive.go
}

// cancelOnInterrupt calls cancel at the first Ctrl-C, or returns when ctx ends.
func cancelOnInterrupt(ctx context.Context, e env, cancel func()) {
	select {
	case <-e.interrupts:
		cancel()
	case <-ctx.Done():
	}
}

// readOnly is the BeforeToolCall hook of -read-only: it lets only read run.
func readOnly(_ context.Context, call tinypi.ToolCall, _ json.RawMessage) (tinypi.ToolCallDecision, error) {
	if call.Name == "read" {
		return tinypi.ToolCallDecision{}, nil
	}
	return tinypi.ToolCallDecision{Block: true, Reason: "tinypi runs read-only (-read-only): " + call.Name + " is refused"}, nil
}

// openSession opens the session cfg asks for and returns it with its file and how many events a
// resume repaired: a new file (never an existing one), a resumed file, or a fork of one.
func openSession(cfg config, cwd string) (*tinypi.Session, string, int, error) {
	if cfg.resume != "" {
		s, repair, err := tinypi.LoadSession(cfg.resume, tinypi.SessionOptions{})
		if err != nil {
			return nil, "", 0, err
		}
		return s, cfg.resume, len(repair.Appended), nil
	}
	path := cfg.session
	if path == "" {
		path = defaultSessionPath(cwd, time.Now())
	}
	if _, err := os.Lstat(path); err == nil {
		return nil, "", 0, fmt.Errorf("%s exists: tinypi never overwrites a session; continue it with -resume %s", path, path)
	}
	if err := makeSessionDir(filepath.Dir(path)); err != nil {
		return nil, "", 0, err
	}
	id := filepath.Base(path)
	if cfg.fork == "" {
		s, err := tinypi.CreateSession(tinypi.SessionOptions{ID: id, Path: path})
		return s, path, 0, err
	}
	from, seq, err := parseFork(cfg.fork)
	if err != nil {
		return nil, "", 0, err
	}
	parent, _, err := tinypi.LoadSession(from, tinypi.SessionOptions{})
	if err != nil {
		return nil, "", 0, err
	}
	fork, err := parent.Fork(seq, tinypi.SessionOptions{ID: id, Path: path})
	if cerr := parent.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, "", 0, errors.Join(fmt.Errorf("-fork %s", cfg.fork), err)
	}
	return fork, path, 0, nil
}

// makeSessionDir makes dir for session files; a new directory named .tinypi gets a .gitignore
// that ignores it whole, so that sessions stay out of the repository's changes.
func makeSessionDir(dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if filepath.Base(dir) == ".tinypi" {
		return os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*\n"), 0o644)
	}
	return nil
}

// newSandbox copies src into a new temporary directory, makes it a git repository with the copy
// as its first commit, and returns the directory.
func newSandbox(ctx context.Context, src string) (string, error) {
	tmp, err := os.MkdirTemp("", "tinypi-sandbox-")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(tmp, "workspace")
	if err := tinypi.CopyWorkspace(src, dir); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("-sandbox: %w", err)
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=tinypi", "-c", "user.email=tinypi@localhost", "commit", "-q", "-m", "sandbox: the files before the agent"},
	} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("-sandbox: git %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
		}
	}
	return dir, nil
}
