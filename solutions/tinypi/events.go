package tinypi

// AssistantEvent is one event of a model's response stream. The set is closed: StartEvent,
// TextDeltaEvent, ThinkingDeltaEvent, ToolCallDeltaEvent, ToolCallEndEvent, DoneEvent and
// ErrorEvent. DoneEvent and ErrorEvent are terminal and carry the complete message.
type AssistantEvent interface {
	// EventType is the event's wire name: "start", "text_delta", "thinking_delta",
	// "toolcall_delta", "toolcall_end", "done" or "error".
	EventType() string
	isAssistantEvent()
}

// StartEvent opens a response.
type StartEvent struct{}

// TextDeltaEvent adds text to the content block at ContentIndex.
type TextDeltaEvent struct {
	ContentIndex int
	Delta        string
}

// ThinkingDeltaEvent adds reasoning to the content block at ContentIndex.
type ThinkingDeltaEvent struct {
	ContentIndex int
	Delta        string
}

// ToolCallDeltaEvent adds a fragment of raw argument JSON to the tool call at ContentIndex.
type ToolCallDeltaEvent struct {
	ContentIndex int
	Delta        string
}

// ToolCallEndEvent reports a tool call whose arguments are complete.
type ToolCallEndEvent struct {
	ContentIndex int
	ToolCall     ToolCall
}

// DoneEvent ends a response that completed; Message.StopReason is stop, toolUse or length.
type DoneEvent struct {
	Message AssistantMessage
}

// ErrorEvent ends a response that failed or was cancelled; Message.StopReason is error or
// aborted and Message.ErrorMessage says why.
type ErrorEvent struct {
	Message AssistantMessage
}

// EventType implements AssistantEvent.
func (StartEvent) EventType() string { return "start" }

// EventType implements AssistantEvent.
func (TextDeltaEvent) EventType() string { return "text_delta" }

// EventType implements AssistantEvent.
func (ThinkingDeltaEvent) EventType() string { return "thinking_delta" }

// EventType implements AssistantEvent.
func (ToolCallDeltaEvent) EventType() string { return "toolcall_delta" }

// EventType implements AssistantEvent.
func (ToolCallEndEvent) EventType() string { return "toolcall_end" }

// EventType implements AssistantEvent.
func (DoneEvent) EventType() string { return "done" }

// EventType implements AssistantEvent.
func (ErrorEvent) EventType() string { return "error" }

func (StartEvent) isAssistantEvent()         {}
func (TextDeltaEvent) isAssistantEvent()     {}
func (ThinkingDeltaEvent) isAssistantEvent() {}
func (ToolCallDeltaEvent) isAssistantEvent() {}
func (ToolCallEndEvent) isAssistantEvent()   {}
func (DoneEvent) isAssistantEvent()          {}
func (ErrorEvent) isAssistantEvent()         {}

// AssistantStream is the stream a model returns for one request.
type AssistantStream = EventStream[AssistantEvent, AssistantMessage]

// NewAssistantStream returns a stream that ends at a DoneEvent or an ErrorEvent, whose message
// becomes the result.
func NewAssistantStream() *AssistantStream {
	return NewEventStream(assistantTerminal)
}

// assistantTerminal reports whether e ends an assistant stream and, if it does, the complete
// message it carries. Deltas only show progress; the message is the outcome.
func assistantTerminal(e AssistantEvent) (AssistantMessage, bool) {
	//lab:begin 3.4
	switch e := e.(type) {
	case DoneEvent:
		return e.Message, true
	case ErrorEvent:
		return e.Message, true
	}
	return AssistantMessage{}, false
	//lab:end
}
