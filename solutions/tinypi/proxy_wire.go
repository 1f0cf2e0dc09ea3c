package tinypi

import "encoding/json"

// This file is the proxy's wire format, shared by its server (proxy_server.go), its client
// (proxy_client.go) and the JSON and RPC modes' model events (eventjson.go). An event on the wire
// is the AssistantEvent without what its deltas already carried: a done or error event has no
// content, a toolcall_end no arguments. A long answer would otherwise cross the wire once per
// delta as the partial message grows: quadratic in its length.

// proxyRequest is the body of POST /api/stream.
type proxyRequest struct {
	SystemPrompt string            `json:"systemPrompt,omitempty"`
	Messages     []json.RawMessage `json:"messages"`
	Tools        []ToolDefinition  `json:"tools,omitempty"`
}

// proxyEvent is one event on the wire: the AssistantEvent without what the deltas carried.
type proxyEvent struct {
	Type         string     `json:"type"`
	ContentIndex int        `json:"contentIndex,omitempty"`
	Delta        string     `json:"delta,omitempty"`
	ID           string     `json:"id,omitempty"`   // toolcall_end: the call's ID
	Name         string     `json:"name,omitempty"` // toolcall_end: the tool's name
	StopReason   StopReason `json:"stopReason,omitempty"`
	ErrorMessage string     `json:"errorMessage,omitempty"`
	Usage        *Usage     `json:"usage,omitempty"`
	MessageID    string     `json:"messageId,omitempty"`
	Model        string     `json:"model,omitempty"`
	Timestamp    int64      `json:"timestamp,omitempty"`
	// Calls, on done and error, names every tool call of the message: a call cut off by a
	// length stop or an error never had its toolcall_end.
	Calls []proxyCall `json:"calls,omitempty"`
}

// proxyCall is a tool call of a terminal event without its arguments, which the deltas carried.
type proxyCall struct {
	ContentIndex int    `json:"contentIndex"`
	ID           string `json:"id"`
	Name         string `json:"name"`
}

// wireEvent is e as the proxy sends it.
func wireEvent(e AssistantEvent) proxyEvent {
	switch e := e.(type) {
	case TextDeltaEvent:
		return proxyEvent{Type: e.EventType(), ContentIndex: e.ContentIndex, Delta: e.Delta}
	case ThinkingDeltaEvent:
		return proxyEvent{Type: e.EventType(), ContentIndex: e.ContentIndex, Delta: e.Delta}
	case ToolCallDeltaEvent:
		return proxyEvent{Type: e.EventType(), ContentIndex: e.ContentIndex, Delta: e.Delta}
	case ToolCallEndEvent:
		return proxyEvent{Type: e.EventType(), ContentIndex: e.ContentIndex, ID: e.ToolCall.ID, Name: e.ToolCall.Name}
	case DoneEvent:
		return terminalWireEvent(e.EventType(), e.Message)
	case ErrorEvent:
		return terminalWireEvent(e.EventType(), e.Message)
	}
	return proxyEvent{Type: e.EventType()}
}

func terminalWireEvent(kind string, m AssistantMessage) proxyEvent {
	usage := m.Usage
	pe := proxyEvent{Type: kind, StopReason: m.StopReason, ErrorMessage: m.ErrorMessage, Usage: &usage,
		MessageID: m.ID, Model: m.Model, Timestamp: m.Timestamp}
	for i, b := range m.Content {
		if call, ok := b.(ToolCall); ok {
			pe.Calls = append(pe.Calls, proxyCall{ContentIndex: i, ID: call.ID, Name: call.Name})
		}
	}
	return pe
}
