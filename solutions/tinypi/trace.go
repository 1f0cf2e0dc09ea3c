package tinypi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Trace records one whole agent run: who called whom, what the model was asked, every event
// and the transcript the run produced. Chapter 00 prints one so that a newcomer can watch the
// runtime work before rebuilding it.
type Trace struct {
	// Calls lists, in order, each call the loop made into the world: model requests and tool
	// executions, e.g. "RunAgentLoop → Model.Stream #1".
	Calls    []string
	Requests []Request
	Events   []LoopEvent
	Result   AgentRunResult
}

// README round trip of chapter 07: the question, the in-memory README and the model's script.
const (
	TraceSystemPrompt = "你是 tinypi，一个会使用工具的编程助手。"
	TraceQuestion     = "请读取 README.md，并告诉我项目名。"
	TraceREADME       = "# tiny-pi\nA small agent runtime."
)

// TraceREADMERoundTrip runs the README question over a ScriptedModel and an in-memory read tool
// and records the run. Everything is offline and deterministic.
func TraceREADMERoundTrip(ctx context.Context) (Trace, error) {
	var (
		mu sync.Mutex
		tr Trace
	)
	record := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		tr.Calls = append(tr.Calls, s)
	}
	read := Tool{
		ToolDefinition: ToolDefinition{
			Name:        "read",
			Description: "读取工作区中的一个文件。",
			Parameters:  `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		},
		Execute: func(ctx context.Context, args json.RawMessage, exec ToolExecContext) (ToolOutput, error) {
			var in struct{ Path string }
			if err := json.Unmarshal(args, &in); err != nil {
				return ToolOutput{}, fmt.Errorf("read: %w", err)
			}
			record(fmt.Sprintf("RunAgentLoop → executor → read(%s)", in.Path))
			if in.Path != "README.md" {
				return ToolOutput{}, fmt.Errorf("read: %s: no such file", in.Path)
			}
			exec.Progress(Text("reading " + in.Path))
			return ToolOutput{Content: []ContentBlock{Text(TraceREADME)}}, nil
		},
	}
	registry, err := NewRegistry(read)
	if err != nil {
		return Trace{}, err
	}
	model := &tracingModel{
		inner: NewScriptedModel(
			AssistantMessage{
				Content: []ContentBlock{
					Text("我先读取项目说明。"),
					ToolCall{ID: "call-1", Name: "read", Arguments: `{"path":"README.md"}`},
				},
				StopReason: StopReasonToolUse,
				Timestamp:  2,
			},
			AssistantMessage{Content: []ContentBlock{Text("项目名是 tiny-pi。")}, StopReason: StopReasonStop, Timestamp: 4},
		),
		record: record,
	}
	// The requests and events are recorded by the RunRecorder the focused tests use too; the
	// call log above is the trace's own.
	rec := NewRunRecorder("readme-trace")
	res, err := RunAgentLoop(ctx, rec.Wrap(AgentLoopOptions{
		Context: AgentContext{
			SystemPrompt: TraceSystemPrompt,
			Messages:     []Message{UserMessage{Content: []ContentBlock{Text(TraceQuestion)}, Timestamp: 1}},
		},
		Model: model,
		Tools: registry,
	}))
	if err != nil {
		return Trace{}, err
	}
	run := rec.Record(false)
	tr.Requests, tr.Events, tr.Result = run.Requests, run.Events, res
	return tr, nil
}

// tracingModel notes each request in the call log before passing it on.
type tracingModel struct {
	inner  *ScriptedModel
	record func(string)
}

func (m *tracingModel) Stream(ctx context.Context, req Request) *AssistantStream {
	m.record(fmt.Sprintf("RunAgentLoop → Model.Stream #%d (%s)", m.inner.Calls()+1, roleList(req.Messages)))
	return m.inner.Stream(ctx, req)
}

func roleList(messages []Message) string {
	roles := make([]string, len(messages))
	for i, m := range messages {
		roles[i] = string(m.MessageRole())
	}
	return strings.Join(roles, " → ")
}

// UnpairedToolCalls returns the IDs of tool calls in messages that no tool result answers, in
// transcript order: the set difference of call IDs and result IDs.
func UnpairedToolCalls(messages []Message) []string {
	answered := map[string]bool{}
	for _, m := range messages {
		if r, ok := m.(ToolResultMessage); ok {
			answered[r.ToolCallID] = true
		}
	}
	var unpaired []string
	for _, m := range messages {
		if a, ok := m.(AssistantMessage); ok {
			for _, call := range a.ToolCalls() {
				if !answered[call.ID] {
					unpaired = append(unpaired, call.ID)
				}
			}
		}
	}
	return unpaired
}

// WriteTo prints the trace in four parts: the call log, each request, the events and the
// transcript, then a one-line summary.
func (tr Trace) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	b.WriteString("== 谁调用了谁 (calls) ==\n")
	for _, c := range tr.Calls {
		fmt.Fprintf(&b, "  %s\n", c)
	}
	for i, req := range tr.Requests {
		fmt.Fprintf(&b, "\n== 请求 %d (request) ==\n", i+1)
		fmt.Fprintf(&b, "  system:   %s\n", req.SystemPrompt)
		names := make([]string, len(req.Tools))
		for j, t := range req.Tools {
			names[j] = t.Name
		}
		fmt.Fprintf(&b, "  tools:    %s\n", strings.Join(names, ", "))
		fmt.Fprintf(&b, "  messages: %s\n", roleList(req.Messages))
	}
	b.WriteString("\n== 事件 (events) ==\n")
	for i, e := range tr.Events {
		fmt.Fprintf(&b, "  %2d  %-17s  %s\n", i+1, e.EventType(), describeLoopEvent(e))
	}
	b.WriteString("\n== transcript ==\n")
	for _, m := range tr.Result.Messages {
		fmt.Fprintf(&b, "  %-10s  %s\n", m.MessageRole(), describeMessage(m))
	}
	unpaired := UnpairedToolCalls(tr.Result.Messages)
	fmt.Fprintf(&b, "\n== 结果 (result) ==\n  reason %s, steps %d, model requests %d, unpaired tool calls %d\n",
		tr.Result.Reason, tr.Result.Steps, len(tr.Requests), len(unpaired))
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

func describeLoopEvent(e LoopEvent) string {
	switch e := e.(type) {
	case ModelEvent:
		switch me := e.Event.(type) {
		case TextDeltaEvent:
			return fmt.Sprintf("%s %q", me.EventType(), me.Delta)
		case ThinkingDeltaEvent:
			return fmt.Sprintf("%s %q", me.EventType(), me.Delta)
		case ToolCallDeltaEvent:
			return fmt.Sprintf("%s %s", me.EventType(), me.Delta)
		case ToolCallEndEvent:
			return fmt.Sprintf("%s %s", me.EventType(), me.ToolCall.ID)
		case DoneEvent:
			return fmt.Sprintf("%s %s", me.EventType(), me.Message.StopReason)
		case ErrorEvent:
			return fmt.Sprintf("%s %s: %s", me.EventType(), me.Message.StopReason, me.Message.ErrorMessage)
		default:
			return me.EventType()
		}
	case AssistantMessageEvent:
		return fmt.Sprintf("%s  %s", e.Message.StopReason, describeMessage(e.Message))
	case ToolStartEvent:
		return fmt.Sprintf("%s %s %s", e.Call.ID, e.Call.Name, e.Call.Arguments)
	case ToolProgressEvent:
		return fmt.Sprintf("%s %q", e.CallID, TextOf(e.Content))
	case ToolEndEvent:
		return fmt.Sprintf("%s → %q", e.Result.ToolCallID, TextOf(e.Result.Content))
	case ToolSkippedEvent:
		return fmt.Sprintf("%s → %q", e.Result.ToolCallID, TextOf(e.Result.Content))
	case TurnEndEvent:
		return fmt.Sprintf("%s, steps %d", e.Reason, e.Steps)
	default:
		return ""
	}
}

func describeMessage(m Message) string {
	switch m := m.(type) {
	case UserMessage:
		return TextOf(m.Content)
	case AssistantMessage:
		parts := []string{}
		if text := TextOf(m.Content); text != "" {
			parts = append(parts, text)
		}
		for _, call := range m.ToolCalls() {
			parts = append(parts, fmt.Sprintf("%s(%s, %s)", call.Name, call.ID, call.Arguments))
		}
		return strings.Join(parts, " + ")
	case ToolResultMessage:
		return fmt.Sprintf("%s → %q", m.ToolCallID, TextOf(m.Content))
	default:
		return ""
	}
}
