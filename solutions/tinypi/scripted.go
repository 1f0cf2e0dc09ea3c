package tinypi

import (
	"context"
	"fmt"
	"sync"
)

// ScriptedModel is an offline Model that answers the n-th request with the n-th scripted
// assistant message, streamed as events. It records every request it receives, so a test can
// check what the model was asked; it is the test double of every chapter after this one.
//
// For each scripted message it emits start, one delta per text, thinking and tool call block
// (a tool call also gets toolcall_end), and then done, or error when the scripted stop reason
// is error or aborted. When ctx is cancelled before or during streaming the response ends with
// an error event whose stop reason is aborted. When the script has run out the response is an
// error event that says so.
//
// A ScriptedModel is safe for concurrent use.
type ScriptedModel struct {
	mu        sync.Mutex
	responses []AssistantMessage
	requests  []Request
}

// NewScriptedModel returns a model that replays responses in order.
func NewScriptedModel(responses ...AssistantMessage) *ScriptedModel {
	return &ScriptedModel{responses: CloneAssistants(responses)}
}

// CloneAssistants deep-copies assistant messages.
func CloneAssistants(in []AssistantMessage) []AssistantMessage {
	out := make([]AssistantMessage, len(in))
	for i, m := range in {
		out[i] = CloneMessage(m).(AssistantMessage)
	}
	return out
}

// Requests returns deep copies of the requests received so far, in order.
func (m *ScriptedModel) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Request, len(m.requests))
	for i, r := range m.requests {
		out[i] = cloneRequest(r)
	}
	return out
}

// Calls returns the number of requests received so far.
func (m *ScriptedModel) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

func cloneRequest(r Request) Request {
	r.Messages = CloneMessages(r.Messages)
	r.Tools = append([]ToolDefinition(nil), r.Tools...)
	return r
}

// Stream implements Model. It records req (a deep copy: later changes by the caller are not
// seen) and streams the next scripted response. The events are produced before Stream returns,
// so no goroutine outlives the call.
func (m *ScriptedModel) Stream(ctx context.Context, req Request) *AssistantStream {
	m.mu.Lock()
	n := len(m.requests)
	m.requests = append(m.requests, cloneRequest(req))
	var next *AssistantMessage
	if n < len(m.responses) {
		msg := CloneMessage(m.responses[n]).(AssistantMessage)
		next = &msg
	}
	total := len(m.responses)
	m.mu.Unlock()

	stream := NewAssistantStream()
	defer stream.Close()
	if next == nil {
		stream.Push(ErrorEvent{Message: AssistantMessage{
			StopReason:   StopReasonError,
			ErrorMessage: fmt.Sprintf("scripted model: script exhausted: request %d, but only %d responses scripted", n+1, total),
		}})
		return stream
	}
	streamScripted(ctx, stream, *next)
	return stream
}

// streamScripted pushes the events of msg, checking ctx before each one.
func streamScripted(ctx context.Context, stream *AssistantStream, msg AssistantMessage) {
	aborted := func() bool {
		if ctx.Err() == nil {
			return false
		}
		stream.Push(ErrorEvent{Message: AssistantMessage{
			StopReason:   StopReasonAborted,
			ErrorMessage: fmt.Sprintf("request cancelled: %v", context.Cause(ctx)),
			ID:           msg.ID,
			Model:        msg.Model,
		}})
		return true
	}
	if aborted() {
		return
	}
	stream.Push(StartEvent{})
	for i, block := range msg.Content {
		if aborted() {
			return
		}
		switch b := block.(type) {
		case TextContent:
			stream.Push(TextDeltaEvent{ContentIndex: i, Delta: b.Text})
		case ThinkingContent:
			stream.Push(ThinkingDeltaEvent{ContentIndex: i, Delta: b.Thinking})
		case ToolCall:
			stream.Push(ToolCallDeltaEvent{ContentIndex: i, Delta: b.Arguments})
			stream.Push(ToolCallEndEvent{ContentIndex: i, ToolCall: b})
		}
	}
	if aborted() {
		return
	}
	switch msg.StopReason {
	case StopReasonError, StopReasonAborted:
		stream.Push(ErrorEvent{Message: msg})
	default:
		stream.Push(DoneEvent{Message: msg})
	}
}
