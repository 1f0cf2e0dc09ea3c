package tinypi

import (
	"context"
	"errors"
	"fmt"
)

// This file is chapter 13's runtime: the one place where the pieces of chapters 05 to 12 are
// put together. Nothing here has a default hidden in a package variable: every part comes in
// through RuntimeOptions, so a test, a print run and an RPC server each build the runtime they
// need, and two runtimes in one process share nothing.

// RuntimeOptions is what a Runtime is made of. Model and Workspace are required.
type RuntimeOptions struct {
	// Model answers every request: a provider (NewProvider), a ScriptedModel, a ProxyModel.
	Model Model
	// Workspace is the directory the coding tools work in, and where the search for context
	// files ends (LoadContextFiles).
	Workspace string
	// ContextRoot is where the search for context files starts; "" means the filesystem root.
	ContextRoot string
	// Workspace options for the coding tools (timeouts, the kill grace).
	WorkspaceOptions WorkspaceOptions
	// SystemPrompt is the base prompt; the context files found are appended to it
	// (SystemPromptWithContext).
	SystemPrompt string
	// Tools are added after the coding tools.
	Tools []Tool
	// Session is the runtime's event log; nil means a new session in memory.
	Session *Session
	// The rest is passed to the Agent as it is (see AgentOptions).
	MaxSteps         int
	Compaction       *CompactionOptions
	Hooks            *LoopHooks
	ToolExecution    ToolExecutionMode
	MaxParallelTools int
}

// Runtime is an Agent with its workspace, session and resources, ready to take prompts.
type Runtime struct {
	Agent   *Agent
	Session *Session
	// SystemPrompt is the prompt the agent was given: the base with the context files.
	SystemPrompt string
	// ContextFiles are the files the prompt was built from, outermost first; Problems the ones
	// that were skipped, and why.
	ContextFiles []ContextFile
	Problems     []ResourceProblem

	workspace *Workspace
}

// NewRuntime builds a runtime from opts: it opens the workspace, loads the context files from
// ContextRoot down to Workspace into the system prompt, registers the coding tools and then
// opts.Tools, and makes an Agent with the session, the hooks and the execution options. A file
// that cannot be used as context is a Problem, not an error; a missing model, a workspace that
// cannot be opened or tools that cannot be registered are errors, and nothing stays open then.
func NewRuntime(opts RuntimeOptions) (*Runtime, error) {
	//lab:begin 13.1
	if opts.Model == nil {
		return nil, errors.New("tinypi: NewRuntime: no model")
	}
	if opts.Workspace == "" {
		return nil, errors.New("tinypi: NewRuntime: no workspace")
	}
	ws, err := OpenWorkspace(opts.Workspace, opts.WorkspaceOptions)
	if err != nil {
		return nil, fmt.Errorf("tinypi: NewRuntime: %w", err)
	}
	files, problems, err := LoadContextFiles(ws.Dir(), opts.ContextRoot)
	if err != nil {
		ws.Close()
		return nil, fmt.Errorf("tinypi: NewRuntime: context files: %w", err)
	}
	tools, err := NewRegistry(append(ws.Tools(), opts.Tools...)...)
	if err != nil {
		ws.Close()
		return nil, fmt.Errorf("tinypi: NewRuntime: %w", err)
	}
	session := opts.Session
	if session == nil {
		session = NewSession("runtime")
	}
	prompt := SystemPromptWithContext(opts.SystemPrompt, files)
	agent, err := NewAgent(AgentOptions{
		SystemPrompt:     prompt,
		Model:            opts.Model,
		Tools:            tools,
		MaxSteps:         opts.MaxSteps,
		Session:          session,
		Compaction:       opts.Compaction,
		Hooks:            opts.Hooks,
		ToolExecution:    opts.ToolExecution,
		MaxParallelTools: opts.MaxParallelTools,
	})
	if err != nil {
		ws.Close()
		return nil, fmt.Errorf("tinypi: NewRuntime: %w", err)
	}
	return &Runtime{Agent: agent, Session: session, SystemPrompt: prompt, ContextFiles: files,
		Problems: problems, workspace: ws}, nil
	//lab:end
}

// Close aborts a run in progress, waits for it to end, flushes the session and closes the
// workspace. It does not close a Session the caller passed in.
func (rt *Runtime) Close() error {
	rt.Agent.Abort()
	errs := []error{rt.Agent.WaitForIdle(context.Background()), rt.Session.Flush(context.Background()), rt.workspace.Close()}
	return errors.Join(errs...)
}
