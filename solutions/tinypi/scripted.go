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
// For each scripted message it emits start, one delta per text, thinking and tool call block in
// content order (a tool call also gets toolcall_end), and then done, or error when the scripted
// stop reason is error or aborted. When ctx is cancelled before or during streaming the response
// ends with an error event whose stop reason is aborted. When the script has run out the
// response is an error event that names the request. A cancelled request still uses up its
// scripted response, so the n-th request always meets the n-th message.
//
// A ScriptedModel is safe for concurrent use.
//
// Recording costs what is new in a request, not the whole transcript: when a request's messages
// extend the previous request's slice in place (the same backing array, at least as long, as
// the agent loop of chapter 07 passes its growing transcript), the copies already recorded for
// the earlier messages are shared and only the new messages are copied. The model therefore
// assumes that a message it was already sent is not changed in place afterwards while the same
// slice keeps growing; a request in any other slice is copied whole.
type ScriptedModel struct {
	// mu guards the fields below. It is a sync.Mutex (NewScriptedModel); a Locker, so that a test
	// can see when the model takes it and hold the model up there.
	mu        sync.Locker
	responses []AssistantMessage // never changed after NewScriptedModel
	calls     int                // requests received so far
	requests  []Request          // deep copies, in the order the requests arrived

	sent   []Message // the messages of the last recorded request, as the caller passed them
	copies []Message // their recorded copies; records share this array (see record)
}

// NewScriptedModel returns a model that replays responses in order. It keeps its own copy of
// them: changing the arguments afterwards does not change the script.
func NewScriptedModel(responses ...AssistantMessage) *ScriptedModel {
	return &ScriptedModel{mu: new(sync.Mutex), responses: CloneAssistants(responses)}
}

// CloneAssistants deep-copies assistant messages.
func CloneAssistants(in []AssistantMessage) []AssistantMessage {
	out := make([]AssistantMessage, len(in))
	for i, m := range in {
		out[i] = CloneMessage(m).(AssistantMessage)
	}
	return out
}

// Requests returns deep copies of the requests received so far, in order. Changing what it
// returns does not change what the model recorded.
func (m *ScriptedModel) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	//lab:begin 4.2
	out := make([]Request, len(m.requests))
	for i, r := range m.requests {
		out[i] = cloneRequest(r)
	}
	return out
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// Calls returns the number of requests received so far.
func (m *ScriptedModel) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

// cloneRequest returns a copy of r that shares nothing the caller could change later: messages
// (with their content and details) and the tool list are copied. Strings are immutable in Go,
// so copying a ToolDefinition by value is enough.
func cloneRequest(r Request) Request {
	//lab:begin 4.2
	r.Messages = CloneMessages(r.Messages)
	r.Tools = append([]ToolDefinition(nil), r.Tools...)
	return r
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// Stream implements Model. It records req (a deep copy: later changes by the caller are not
// seen) and streams the next scripted response. The events are produced before Stream returns,
// so no goroutine outlives the call.
func (m *ScriptedModel) Stream(ctx context.Context, req Request) *AssistantStream {
	stream := NewAssistantStream()
	defer stream.Close() // no reader may hang, whatever happens below
	msg, number, ok := m.take(req)
	if !ok {
		stream.Push(ErrorEvent{Message: m.exhausted(number)})
		return stream
	}
	streamScripted(ctx, stream, msg)
	return stream
}

// take counts and records req and returns its number (1-based) and a copy of its scripted
// response; ok is false when the script has run out. Counting, recording and choosing happen
// under one lock, so with concurrent callers the i-th recorded request is the one that got the
// i-th response.
func (m *ScriptedModel) take(req Request) (msg AssistantMessage, number int, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	number = m.calls
	//lab:begin 4.2
	m.requests = append(m.requests, m.record(req))
	//lab:stub
	//	// 在这里用 m.record 记录 req 的深拷贝，供 Requests 返回。
	//lab:end
	if number > len(m.responses) {
		return AssistantMessage{}, number, false
	}
	return CloneMessage(m.responses[number-1]).(AssistantMessage), number, true
}

// record returns the copy of req that the model keeps: cloneRequest's deep copy, made in time
// and memory proportional to what is new. m.mu is held.
//
// Performance, not part of lab 4.2: an agent loop sends its whole transcript with every
// request, so copying every request whole costs O(n²) for a run of n steps (2,000 steps took a
// second and 700 MiB). When req.Messages extends the previous request's slice in place, its
// first messages are the very slots that were copied last time: their copies are reused and
// only the new messages go through cloneRequest. Each record gets a clipped view of the shared
// copies, so appending the next request's copies never shows in an earlier record. A request in
// another slice (another caller, or the loop's transcript after append moved it) is copied
// whole; a transcript that grows by append moves O(log n) times, so that stays linear too.
func (m *ScriptedModel) record(req Request) Request {
	prev := len(m.sent)
	if prev == 0 || len(req.Messages) < prev || &req.Messages[0] != &m.sent[0] {
		rec := cloneRequest(req)
		m.sent, m.copies = req.Messages, rec.Messages
		return rec
	}
	tail := req
	tail.Messages = req.Messages[prev:]
	rec := cloneRequest(tail)
	m.copies = append(m.copies, rec.Messages...)
	m.sent = req.Messages
	rec.Messages = m.copies[:len(m.copies):len(m.copies)]
	return rec
}

// exhausted is the failed response to request number when the script has no message for it.
// It names the request, because "which call was one too many" is what the test author needs.
func (m *ScriptedModel) exhausted(number int) AssistantMessage {
	//lab:begin 4.3
	return AssistantMessage{
		StopReason: StopReasonError,
		ErrorMessage: fmt.Sprintf("scripted model: no response scripted for request %d (the script has %d)",
			number, len(m.responses)),
	}
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// streamScripted pushes the events of msg, checking ctx before each one.
func streamScripted(ctx context.Context, stream *AssistantStream, msg AssistantMessage) {
	for _, event := range scriptedEvents(msg) {
		if abortIfCancelled(ctx, stream, msg) {
			return
		}
		stream.Push(event)
	}
	if abortIfCancelled(ctx, stream, msg) {
		return
	}
	stream.Push(terminalEvent(msg))
}

// scriptedEvents returns the events that stream msg before its terminal event: start, then one
// delta per content block in content order, each carrying the block's index. A tool call's
// arguments arrive as one toolcall_delta, followed by toolcall_end with the complete call.
func scriptedEvents(msg AssistantMessage) []AssistantEvent {
	//lab:begin 4.1
	events := []AssistantEvent{StartEvent{}}
	for i, block := range msg.Content {
		switch b := block.(type) {
		case TextContent:
			events = append(events, TextDeltaEvent{ContentIndex: i, Delta: b.Text})
		case ThinkingContent:
			events = append(events, ThinkingDeltaEvent{ContentIndex: i, Delta: b.Thinking})
		case ToolCall:
			events = append(events, ToolCallDeltaEvent{ContentIndex: i, Delta: b.Arguments})
			events = append(events, ToolCallEndEvent{ContentIndex: i, ToolCall: b})
		}
	}
	return events
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// terminalEvent is the event that ends the stream of msg: error when the script says the
// response failed (stop reason error or aborted), done for every other stop reason. Both carry
// msg unchanged, so the stream's result is exactly the scripted message.
func terminalEvent(msg AssistantMessage) AssistantEvent {
	switch msg.StopReason {
	case StopReasonError, StopReasonAborted:
		//lab:begin 4.3
		return ErrorEvent{Message: msg}
		//lab:stub
		//	panic(LAB_PENDING)
		//lab:end
	}
	return DoneEvent{Message: msg}
}

// abortIfCancelled ends the stream with an aborted error event when ctx is done, and reports
// whether it did. The event's message has no content: a reader already has the deltas that
// were pushed before the cancellation.
func abortIfCancelled(ctx context.Context, stream *AssistantStream, msg AssistantMessage) bool {
	if ctx.Err() == nil {
		return false
	}
	//lab:begin 4.4
	stream.Push(ErrorEvent{Message: AssistantMessage{
		StopReason:   StopReasonAborted,
		ErrorMessage: fmt.Sprintf("scripted model: request cancelled: %v", context.Cause(ctx)),
		ID:           msg.ID,
		Model:        msg.Model,
	}})
	return true
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}
