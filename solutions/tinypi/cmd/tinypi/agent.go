package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// systemPrompt is the agent's base prompt; the context files (AGENTS.md) found from the
// repository's root down to the current directory are appended to it.
const systemPrompt = `You are tinypi, a coding agent working in the user's repository.
Use the tools to read files before changing them, make the smallest change that does the task,
and run the project's checks with bash when there are any. Answer briefly: say what you changed.`

// readOnlyPrompt is added to the system prompt under -read-only, so that the model does not try
// what will be refused.
const readOnlyPrompt = `

This session is read-only: only the read, ls, find and grep tools run; every write, edit and
bash call is refused. Look with them and answer; do not try to change files or run commands.
If the task needs a change, say what you would change.`

// readOnlyTools are the tools -read-only lets run.
var readOnlyTools = map[string]bool{"read": true, "ls": true, "find": true, "grep": true}

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
			return e.failf(exitCannotStart, "-sandbox: %v", err)
		}
		fmt.Fprintf(e.stderr, "tinypi: sandbox %s (a git repository: see the agent's changes with git -C %s diff)\n", cwd, cwd)
	}
	root, err := gitRoot(cwd)
	if err != nil {
		return e.failf(exitCannotStart, "%v", err)
	}
	if err := checkContextLinks(cwd, root); err != nil {
		return e.failf(exitCannotStart, "%v", err)
	}
	session, err := openSession(cfg, cwd)
	if err != nil {
		return e.failf(exitCannotStart, "%v", err)
	}
	for _, note := range session.notes {
		fmt.Fprintf(e.stderr, "tinypi: %s\n", note)
	}
	code := runSession(ctx, cfg, e, model, cwd, root, session)
	if err := session.close(); err != nil {
		e.failf(exitCannotStart, "%v", err)
		if code == 0 {
			code = exitCannotStart
		}
	}
	return code
}

// runSession builds the runtime on session and runs the mode; the runtime is closed (the run
// aborted, the log flushed) before it returns.
func runSession(ctx context.Context, cfg config, e env, model tinypi.Model, cwd, root string, session *openedSession) int {
	retrying := retryingModel{Model: model, base: cfg.retryBase, notify: func(n retryNote) {
		fmt.Fprintf(e.info, "tinypi: %s\n", n)
		if err := logRetry(session.s, n); err != nil {
			fmt.Fprintf(e.stderr, "tinypi: the retry could not be recorded in the session: %v\n", oneLine(err.Error()))
		}
	}}
	meter := newUsageMeter(e.info, cfg.price, session.s)
	meter.reportAtEnd = cfg.rpc
	prompt := systemPrompt
	if cfg.readOnly {
		prompt += readOnlyPrompt
	}
	searchRoot, err := os.OpenRoot(cwd)
	if err != nil {
		return e.failf(exitCannotStart, "%v", err)
	}
	defer searchRoot.Close()
	opts := tinypi.RuntimeOptions{Model: checkedModel{meter.count(retrying)}, Workspace: cwd, ContextRoot: root, SystemPrompt: prompt,
		Session: session.s, MaxSteps: cfg.maxSteps, Tools: searchTools(searchRoot)}
	if cfg.contextWindow > 0 {
		opts.Compaction = &tinypi.CompactionOptions{ContextWindow: cfg.contextWindow}
	}
	if cfg.contextWindow > 0 {
		// The runtime's defaults (16,384 tokens kept free for the answer, 20,000 kept verbatim)
		// are for windows of 100,000 tokens and more: in a smaller window they would compact at
		// every request and find nothing to cut.
		quarter := cfg.contextWindow / 4
		opts.Compaction.ReserveTokens = min(tinypi.DefaultReserveTokens, quarter)
		opts.Compaction.KeepRecentTokens = min(tinypi.DefaultKeepRecentTokens, quarter)
	}
	// Interactive mode reads its lines in the background from the start; at a terminal, and
	// without -yes, the approver reads its answers from them too.
	var lines lineSource
	var ask *approver
	if cfg.print == "" && cfg.jsonPrompt == "" && !cfg.rpc {
		lines = newLineSource(e)
		if e.stdinTerminal && !cfg.yes && !cfg.readOnly {
			ask = &approver{lines: lines, out: e.stdout}
		}
	}
	opts.Hooks = &tinypi.LoopHooks{BeforeToolCall: beforeToolCall(cwd, session.path, cfg.readOnly, ask)}
	rt, err := tinypi.NewRuntime(opts)
	session.loaded() // the agent holds its transcript: the resume is over
	if err != nil {
		return e.failf(exitCannotStart, "%v", err)
	}
	if ask != nil {
		ask.abort = rt.Agent.Abort
	}
	closed := false
	closeRuntime := func() {
		if !closed {
			closed = true
			rt.Close()
		}
	}
	defer closeRuntime()
	for _, p := range rt.Problems {
		fmt.Fprintf(e.stderr, "tinypi: context file %s skipped: %s\n", p.Path, p.Reason)
	}

	// Ctrl-C in the modes of chapter 13: the first one cancels ctx, which aborts the run. SIGTERM
	// and SIGHUP do the same in every mode.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var terminated atomic.Value // the signal that ended the program, if one did
	go func() {
		select {
		case sig := <-e.terminations:
			terminated.Store(sig)
			cancel()
		case <-runCtx.Done():
		}
	}()
	fmt.Fprintf(e.info, "tinypi: %s\n", sessionLine(cfg, session.path))
	if cfg.print != "" || cfg.jsonPrompt != "" || cfg.rpc {
		defer rt.Agent.Subscribe(meter.show)()
	}
	code := 0
	switch {
	case cfg.print != "":
		go cancelOnInterrupt(runCtx, e, cancel)
		code = tinypi.RunPrintMode(runCtx, rt, cfg.print, e.stdout, e.stderr)
		rt.Agent.WaitForIdle(context.Background())
		meter.report()
	case cfg.jsonPrompt != "":
		go cancelOnInterrupt(runCtx, e, cancel)
		code = tinypi.RunJSONMode(runCtx, rt, cfg.jsonPrompt, e.stdout)
		rt.Agent.WaitForIdle(context.Background())
		meter.report()
	case cfg.rpc:
		go cancelOnInterrupt(runCtx, e, cancel)
		if err := tinypi.ServeRPC(runCtx, rt, e.stdin, e.stdout); err != nil {
			code = e.failf(exitCannotStart, "%v", err)
		}
		rt.Agent.WaitForIdle(context.Background())
	default:
		templates, notes := loadTemplates(root)
		for _, n := range notes {
			fmt.Fprintf(e.stderr, "tinypi: %s\n", n)
		}
		commands := &slashCommands{out: e.stdout, sessionPath: session.path, model: modelName(cfg), templates: templates, meter: meter, session: session.s,
			compact: func(ctx context.Context) (tinypi.Compaction, error) {
				c := tinypi.CompactionOptions{Model: opts.Model}
				if opts.Compaction != nil {
					c = *opts.Compaction
					c.Model = opts.Model
				}
				return session.s.Compact(ctx, c, tinypi.CompactionManual)
			}}
		code = interactive(runCtx, rt, e, lines, meter, commands, session.check) // interactive.go
	}
	closeRuntime() // the run's commands are stopped, its events written
	if sig, ok := terminated.Load().(os.Signal); ok {
		fmt.Fprintf(e.stderr, "tinypi: %v: the run was aborted and its commands stopped\n", sig)
		code = terminatedStatus(sig)
	}
	if err := session.check(); err != nil {
		e.failf(exitCannotStart, "%v", err)
		if code == 0 {
			code = exitCannotStart
		}
	}
	return code
}

// modelName says which model cfg asks.
func modelName(cfg config) string {
	switch {
	case cfg.scripted != "":
		return "a recorded conversation, " + cfg.scripted
	case cfg.proxy != "":
		return "the proxy's, at " + cfg.proxy
	}
	return cfg.provider + " " + cfg.model
}

// sessionLine says where the session is written, in every mode, and what it continues.
func sessionLine(cfg config, path string) string {
	how := ""
	switch {
	case cfg.resume != "":
		how = ", resumed"
	case cfg.fork != "":
		how = ", forked from " + cfg.fork
	}
	return fmt.Sprintf("session %s%s (open it with: course serve %s)", path, how, path)
}

// cancelOnInterrupt calls cancel at the first Ctrl-C, or returns when ctx ends.
func cancelOnInterrupt(ctx context.Context, e env, cancel func()) {
	select {
	case <-e.interrupts:
		cancel()
	case <-ctx.Done():
	}
}

// beforeToolCall is the BeforeToolCall hook: a write or edit of a path under the workspace's
// .tinypi directory, or of the session file, is refused (the session log is the record of what
// the agent did, not the agent's to change); with readOnly, every call but read, ls, find and
// grep is. With ask, a mutating call that passed is then asked about.
func beforeToolCall(workspace, sessionPath string, readOnly bool, ask *approver) func(context.Context, tinypi.ToolCall, json.RawMessage) (tinypi.ToolCallDecision, error) {
	protected := []string{filepath.Join(workspace, ".tinypi")}
	if abs, err := filepath.Abs(sessionPath); err == nil {
		protected = append(protected, abs)
	}
	approve := func(ctx context.Context, call tinypi.ToolCall, args json.RawMessage) (tinypi.ToolCallDecision, error) {
		if ask == nil || !mutating[call.Name] {
			return tinypi.ToolCallDecision{}, nil
		}
		return ask.ask(ctx, call, args, callPreview), nil
	}
	return func(ctx context.Context, call tinypi.ToolCall, args json.RawMessage) (tinypi.ToolCallDecision, error) {
		if readOnlyTools[call.Name] {
			return tinypi.ToolCallDecision{}, nil
		}
		if readOnly {
			return tinypi.ToolCallDecision{Block: true, Reason: "tinypi runs read-only (-read-only): " + call.Name + " is refused; read, ls, find and grep run"}, nil
		}
		if call.Name != "write" && call.Name != "edit" {
			return approve(ctx, call, args)
		}
		var a struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(args, &a) != nil || a.Path == "" {
			return tinypi.ToolCallDecision{}, nil // the tool refuses it itself
		}
		target := a.Path
		if !filepath.IsAbs(target) {
			target = filepath.Join(workspace, target)
		}
		target = resolvePath(target)
		for _, p := range protected {
			if within(resolvePath(p), target) {
				return tinypi.ToolCallDecision{Block: true, Reason: fmt.Sprintf("%s is refused: %s is tinypi's session log, which the agent's tools do not change", call.Name, a.Path)}, nil
			}
		}
		return approve(ctx, call, args)
	}
}

// resolvePath is p, cleaned, with the symbolic links of its longest existing part resolved:
// where a write to p would land.
func resolvePath(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for d := p; ; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		if filepath.Dir(d) == d {
			return p
		}
		rest = append([]string{filepath.Base(d)}, rest...)
	}
}

// within reports whether p is dir or inside it (both clean and absolute).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// checkContextLinks refuses a context file (AGENTS.md, CLAUDE.md, as LoadContextFiles finds them
// from root down to workspace) that is a symbolic link to a file outside root, the repository:
// the context files go to the model in the system prompt, and what a repository holds must not
// send the user's other files there. A link that stays inside the repository is followed.
func checkContextLinks(workspace, root string) error {
	top, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	var dirs []string
	for d := workspace; ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == root || filepath.Dir(d) == d {
			break
		}
	}
	for _, dir := range dirs {
		for _, name := range []string{tinypi.AgentsFileName, tinypi.ClaudeFileName} {
			path := filepath.Join(dir, name)
			info, err := os.Lstat(path)
			if err != nil {
				continue
			}
			if info.Mode()&fs.ModeSymlink != 0 {
				if target, err := filepath.EvalSymlinks(path); err == nil && !within(top, target) {
					return fmt.Errorf("context file %s is a link to %s, outside the repository %s: tinypi sends context files to the model and sends nothing from outside the repository; replace the link by a copy of the file, or remove it", path, target, root)
				}
			}
			break // the directory's first context file is its only one
		}
	}
	return nil
}
