package perf

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// turnModel answers request i with script[i], pushing its events onto the stream from a
// goroutine after Stream has returned, as a provider's reader does: the loop reads while the
// producer writes. A text block is cut into chunks deltas. It neither records nor copies
// requests, so what is measured is the loop, not the test double.
type turnModel struct {
	script []tinypi.AssistantMessage
	chunks int
	turn   int // only the loop's goroutine calls Stream
}

func (m *turnModel) Stream(_ context.Context, _ tinypi.Request) *tinypi.AssistantStream {
	s := tinypi.NewAssistantStream()
	if m.turn >= len(m.script) {
		s.Push(tinypi.ErrorEvent{Message: tinypi.AssistantMessage{StopReason: tinypi.StopReasonError,
			ErrorMessage: fmt.Sprintf("turn model: no response for request %d", m.turn+1)}})
		s.Close()
		return s
	}
	msg := m.script[m.turn]
	m.turn++
	go pushTurn(s, msg, m.chunks)
	return s
}

// pushTurn streams msg: start, chunks text deltas per text block, toolcall_delta and
// toolcall_end per call, done.
func pushTurn(s *tinypi.AssistantStream, msg tinypi.AssistantMessage, chunks int) {
	defer s.Close()
	s.Push(tinypi.StartEvent{})
	for i, block := range msg.Content {
		switch b := block.(type) {
		case tinypi.TextContent:
			n := len(b.Text)
			for c := range chunks {
				s.Push(tinypi.TextDeltaEvent{ContentIndex: i, Delta: b.Text[c*n/chunks : (c+1)*n/chunks]})
			}
		case tinypi.ToolCall:
			s.Push(tinypi.ToolCallDeltaEvent{ContentIndex: i, Delta: b.Arguments})
			s.Push(tinypi.ToolCallEndEvent{ContentIndex: i, ToolCall: b})
		}
	}
	s.Push(tinypi.DoneEvent{Message: msg})
}

// numberSchema is the schema of every benchmark tool: an object with a required number n.
const numberSchema = `{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`

func okTool(name string, run func()) tinypi.Tool {
	return tinypi.Tool{
		ToolDefinition: tinypi.ToolDefinition{Name: name, Description: "answers ok", Parameters: numberSchema},
		Execute: func(context.Context, json.RawMessage, tinypi.ToolExecContext) (tinypi.ToolOutput, error) {
			if run != nil {
				run()
			}
			return tinypi.ToolOutput{Content: []tinypi.ContentBlock{tinypi.Text("ok")}}, nil
		},
	}
}

func answer(stop tinypi.StopReason, content ...tinypi.ContentBlock) tinypi.AssistantMessage {
	return tinypi.AssistantMessage{Content: content, StopReason: stop, Model: "bench", Timestamp: 1}
}

func numberCall(i int, tool string) tinypi.ToolCall {
	return tinypi.ToolCall{ID: fmt.Sprintf("call-%d", i), Name: tool, Arguments: fmt.Sprintf(`{"n":%d}`, i)}
}

// stepsScript is n turns that each call tool once, then a final text answer.
func stepsScript(n int, tool string) []tinypi.AssistantMessage {
	script := make([]tinypi.AssistantMessage, 0, n+1)
	for i := range n {
		script = append(script, answer(tinypi.StopReasonToolUse, numberCall(i, tool)))
	}
	return append(script, answer(tinypi.StopReasonStop, tinypi.Text("done")))
}

// fanoutScript is one turn with k calls of tool, then a final text answer.
func fanoutScript(k int, tool string) []tinypi.AssistantMessage {
	calls := make([]tinypi.ContentBlock, k)
	for i := range calls {
		calls[i] = numberCall(i, tool)
	}
	return []tinypi.AssistantMessage{answer(tinypi.StopReasonToolUse, calls...), answer(tinypi.StopReasonStop, tinypi.Text("done"))}
}

// deltasScript is one text answer of d bytes.
func deltasScript(d int) []tinypi.AssistantMessage {
	return []tinypi.AssistantMessage{answer(tinypi.StopReasonStop, tinypi.Text(strings.Repeat("x", d)))}
}

// runLoop runs the agent loop over model with registry and checks that it stopped normally
// after steps requests with messages messages, no tool result an error.
func runLoop(model tinypi.Model, registry *tinypi.Registry, steps, messages int) error {
	return runLoopWith(model, registry, nil, steps, messages)
}

// runLoopWith is runLoop with the run's hooks (chapter 12); nil runs without.
func runLoopWith(model tinypi.Model, registry *tinypi.Registry, hooks *tinypi.LoopHooks, steps, messages int) error {
	events := 0
	res, err := tinypi.RunAgentLoop(context.Background(), tinypi.AgentLoopOptions{
		Context: tinypi.AgentContext{SystemPrompt: "bench", Messages: []tinypi.Message{
			tinypi.UserMessage{Content: []tinypi.ContentBlock{tinypi.Text("go")}, Timestamp: time.Now().UnixMilli()},
		}},
		Model:    model,
		Tools:    registry,
		MaxSteps: steps,
		OnEvent:  func(tinypi.LoopEvent) { events++ },
		Hooks:    hooks,
	})
	if err != nil {
		return err
	}
	if res.Reason != tinypi.RunStop || res.Steps != steps || len(res.Messages) != messages {
		return fmt.Errorf("run ended %s after %d steps with %d messages, want stop after %d with %d",
			res.Reason, res.Steps, len(res.Messages), steps, messages)
	}
	for _, m := range res.Messages {
		if r, ok := m.(tinypi.ToolResultMessage); ok && r.IsError {
			return fmt.Errorf("tool call %s failed: %s", r.ToolCallID, tinypi.TextOf(r.Content))
		}
	}
	return nil
}
