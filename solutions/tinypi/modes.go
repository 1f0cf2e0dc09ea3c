package tinypi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// This file is chapter 13's print and JSON modes: one prompt in, one run, and an exit status
// that says how the run ended, so that a shell script can tell a finished answer from a failure.

// The exit statuses of RunPrintMode and RunJSONMode.
const (
	ExitOK         = 0   // the run ended with stop: the answer is complete
	ExitRunFailed  = 1   // the model failed, or the run could not start
	ExitIncomplete = 2   // the run stopped early: step limit, length, a hook asked it to stop
	ExitAborted    = 130 // ctx was cancelled (Ctrl-C), as a shell reports SIGINT
)

// ExitStatus is the exit status of a run that ended with reason.
func ExitStatus(reason RunReason) int {
	//lab:begin 13.2
	switch reason {
	case RunStop:
		return ExitOK
	case RunAborted:
		return ExitAborted
	case RunError:
		return ExitRunFailed
	}
	return ExitIncomplete
	//lab:end
}

// RunPrintMode runs prompt on rt and writes the final answer's text to stdout, followed by a
// newline. Only the last assistant message is the answer: what the model said before its tool
// calls is not. When the run does not end with stop, nothing goes to stdout and one line on
// stderr says why: "tinypi: the run ended with REASON: ERROR" (without ": ERROR" when the run
// has no error text). Cancelling ctx aborts the run. It returns the exit status (ExitStatus).
func RunPrintMode(ctx context.Context, rt *Runtime, prompt string, stdout, stderr io.Writer) int {
	//lab:begin 13.2
	end, err := runOnce(ctx, rt, prompt, nil)
	if err != nil {
		fmt.Fprintf(stderr, "tinypi: %v\n", err)
		return ExitRunFailed
	}
	if answer, ok := lastAssistant(end.Messages); ok && end.Reason == RunStop {
		fmt.Fprintln(stdout, TextOf(answer.Content))
	}
	if end.Reason != RunStop {
		fmt.Fprintf(stderr, "tinypi: the run ended with %s%s\n", end.Reason, suffixIfAny(": ", end.Error))
	}
	return ExitStatus(end.Reason)
	//lab:end
}

// RunJSONMode runs prompt on rt and writes every event of the run to stdout as one line of JSON
// (MarshalAgentEvent), in the order the agent delivered them, ending with the run's run_end.
// It returns the exit status (ExitStatus). A run that cannot start is one line
// {"type":"error","error":"..."} and ExitRunFailed.
func RunJSONMode(ctx context.Context, rt *Runtime, prompt string, stdout io.Writer) int {
	//lab:begin 13.3
	var writeErr error
	end, err := runOnce(ctx, rt, prompt, func(e AgentEvent) {
		if writeErr != nil {
			return
		}
		line, err := MarshalAgentEvent(e)
		if err == nil {
			_, err = stdout.Write(append(line, '\n'))
		}
		writeErr = err
	})
	if err != nil {
		line, _ := json.Marshal(map[string]string{"type": "error", "error": err.Error()})
		fmt.Fprintf(stdout, "%s\n", line)
		return ExitRunFailed
	}
	if writeErr != nil {
		return ExitRunFailed
	}
	return ExitStatus(end.Reason)
	//lab:end
}

// runOnce subscribes onEvent (when not nil), prompts, and waits for the run and the delivery of
// its events; it returns the run's run_end. Subscribing first is what makes run_start the first
// event the subscriber sees. Only the events of that run reach onEvent: an agent busy with
// another run delivers that run's events too, until Prompt refuses to start a second one. The run
// is started with ctx, so that cancelling ctx aborts it.
func runOnce(ctx context.Context, rt *Runtime, prompt string, onEvent func(AgentEvent)) (RunEndEvent, error) {
	//lab:begin 13.2
	var end RunEndEvent
	mine := 0 // the run this call started: the first run_start after subscribing
	unsubscribe := rt.Agent.Subscribe(func(e AgentEvent) {
		if start, ok := e.(RunStartEvent); ok && mine == 0 {
			mine = start.RunID
		}
		if e.Run() != mine {
			return // a run that was active before ours: Prompt will refuse to start ours
		}
		if onEvent != nil {
			onEvent(e)
		}
		if e, ok := e.(RunEndEvent); ok {
			end = e
		}
	})
	defer unsubscribe()
	if err := rt.Agent.Prompt(ctx, UserText(prompt)); err != nil {
		return RunEndEvent{}, err
	}
	if err := rt.Agent.WaitForIdle(context.Background()); err != nil {
		return RunEndEvent{}, err
	}
	return end, nil
	//lab:end
}

//chapter:begin 14

// RunPrompt runs prompt on rt to its end and returns the run's run_end: runOnce for packages
// outside tinypi, such as chapter 14's evaluation harness, which sees the runtime from outside.
func RunPrompt(ctx context.Context, rt *Runtime, prompt string) (RunEndEvent, error) {
	return runOnce(ctx, rt, prompt, nil)
}

//chapter:end

// lastAssistant is the last assistant message of messages.
func lastAssistant(messages []Message) (AssistantMessage, bool) {
	for i := len(messages) - 1; i >= 0; i-- {
		if m, ok := messages[i].(AssistantMessage); ok {
			return m, true
		}
	}
	return AssistantMessage{}, false
}

func suffixIfAny(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}
