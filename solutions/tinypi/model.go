package tinypi

import "context"

// Request is everything a model sees for one response.
type Request struct {
	SystemPrompt string
	Messages     []Message
	Tools        []ToolDefinition
}

// Model produces one assistant response per request as a stream of events.
//
// Stream must return at once; the response arrives on the stream. The stream always ends with a
// DoneEvent or an ErrorEvent, also when the request fails or ctx is cancelled (stop reason
// aborted), so a reader never has to look anywhere else for the outcome.
type Model interface {
	Stream(ctx context.Context, req Request) *AssistantStream
}

// ToolDefinition tells the model what a tool is called, what it does and which arguments it
// takes (a JSON Schema).
type ToolDefinition struct {
	Name        string
	Description string
	// Parameters is a JSON Schema document for the call's arguments object.
	Parameters string
}
