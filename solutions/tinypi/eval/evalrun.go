package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// EvalOptions says how RunEvalCase runs a case.
type EvalOptions struct {
	// Model answers instead of the case's script when it is not nil: a real provider
	// (NewProvider). Nil runs the case offline, with a ScriptedModel of the case's script.
	Model tinypi.Model
	// SystemPrompt is the agent's base prompt.
	SystemPrompt string
	// TempDir is where a run makes its copy of the workspace; "" means the system's
	// temporary directory. The copy is removed when the case has been judged.
	TempDir string
	// WorkspaceOptions are passed to the coding tools.
	WorkspaceOptions tinypi.WorkspaceOptions
}

// RunEvalCase runs c once and judges it. It copies c's workspace into a new directory under
// opts.TempDir (the case itself is never changed), builds a Runtime there with the model, runs
// c's prompt to the end, closes the runtime and judges the result. A run may make one request
// more than the budget's steps (MaxSteps), so that a run that would go on stops, and still shows
// as over budget.
//
// The verdict's checks are, in this order: "stop" (the run ended with stop; its Detail is
// "the run ended with REASON" and the run's error when there is one), "workspace"
// (CheckWorkspace), "paired" (CheckPairedCalls), "commands" (CheckCommands) and "budget"
// (CheckBudget). It passes when every check does. A run that fails or is aborted is a verdict
// that does not pass, not an error: RunEvalCase returns an error only when the case cannot run
// at all (its workspace cannot be copied, the runtime cannot be built), and then no verdict.
// The copy is removed in every case.
func RunEvalCase(ctx context.Context, c EvalCase, opts EvalOptions) (EvalVerdict, error) {
	//lab:begin 14.4
	start := time.Now()
	tmp, err := os.MkdirTemp(opts.TempDir, "tinypi-eval-")
	if err != nil {
		return EvalVerdict{}, fmt.Errorf("tinypi: eval %s: %w", c.Name, err)
	}
	defer os.RemoveAll(tmp)
	ws := filepath.Join(tmp, "workspace")
	if err := CopyWorkspace(c.Workspace, ws); err != nil {
		return EvalVerdict{}, fmt.Errorf("tinypi: eval %s: %w", c.Name, err)
	}
	model := opts.Model
	if model == nil {
		model = tinypi.NewScriptedModel(tinypi.CloneAssistants(c.Script)...)
	}
	maxSteps := 0
	if c.Budget.Steps > 0 {
		maxSteps = c.Budget.Steps + 1
	}
	rt, err := tinypi.NewRuntime(tinypi.RuntimeOptions{Model: model, Workspace: ws, ContextRoot: ws,
		WorkspaceOptions: opts.WorkspaceOptions, SystemPrompt: opts.SystemPrompt, MaxSteps: maxSteps})
	if err != nil {
		return EvalVerdict{}, fmt.Errorf("tinypi: eval %s: %w", c.Name, err)
	}
	end, runErr := tinypi.RunPrompt(ctx, rt, c.Prompt)
	if err := rt.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return EvalVerdict{}, fmt.Errorf("tinypi: eval %s: %w", c.Name, runErr)
	}
	events := rt.Session.Events()
	stop := EvalCheck{Name: "stop", Pass: end.Reason == tinypi.RunStop}
	if !stop.Pass {
		stop.Detail = "the run ended with " + string(end.Reason)
		if end.Error != "" {
			stop.Detail += ": " + end.Error
		}
	}
	budget, steps, tokens := CheckBudget(events, c.Budget)
	v := EvalVerdict{
		Case: c.Name,
		Checks: []EvalCheck{
			stop,
			CheckWorkspace(c.Workspace, ws, c.Expect),
			CheckPairedCalls(events),
			CheckCommands(events, c.Expect.Commands),
			budget,
		},
		Reason: end.Reason,
		Steps:  steps,
		Tokens: tokens,
	}
	v.Pass = true
	for _, check := range v.Checks {
		v.Pass = v.Pass && check.Pass
	}
	v.Wall = time.Since(start)
	return v, nil
	//lab:end
}
