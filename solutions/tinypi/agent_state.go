package tinypi

import "slices"

// AgentEvent is what an Agent reports to its subscribers. The set is closed: RunStartEvent,
// RunLoopEvent and RunEndEvent. Every event names the run it belongs to.
type AgentEvent interface {
	// EventType is "run_start", "run_end", or the type of the loop event a RunLoopEvent carries.
	EventType() string
	// Run is the id of the run the event belongs to. Ids start at 1 and are never reused.
	Run() int
}

// RunStartEvent opens run RunID; Messages is the transcript the run starts from.
type RunStartEvent struct {
	RunID    int
	Messages []Message
}

// RunLoopEvent carries one event of the loop that drives run RunID.
type RunLoopEvent struct {
	RunID int
	Event LoopEvent
}

// RunEndEvent closes run RunID. It is the last event of the run.
type RunEndEvent struct {
	RunID  int
	Reason RunReason
	// Messages is the run's whole transcript; nil when the run failed before the loop returned
	// one (then the transcript built from the run's events stands).
	Messages []Message
	// Error says why a run ended with error or aborted; empty otherwise.
	Error string
	// Dropped holds the messages Steer and FollowUp accepted for this run that it never took:
	// steering first, then follow-ups, each oldest first. Only a run that did not end with stop
	// can leave any (it failed, was aborted, or reached MaxSteps or a length stop); nil when
	// the run took everything it accepted. The next run does not see them.
	Dropped []Message
}

// cloneAgentEvent copies the messages an event carries, so that every subscriber gets its own.
func cloneAgentEvent(e AgentEvent) AgentEvent {
	switch e := e.(type) {
	case RunStartEvent:
		e.Messages = CloneMessages(e.Messages)
		return e
	case RunLoopEvent:
		if q, ok := e.Event.(QueuedMessageEvent); ok {
			e.Event = QueuedMessageEvent{Message: CloneMessage(q.Message)}
		} else {
			e.Event = cloneLoopEvent(e.Event)
		}
		return e
	case RunEndEvent:
		e.Messages = CloneMessages(e.Messages)
		e.Dropped = CloneMessages(e.Dropped)
		return e
	}
	return e
}

// EventType implements AgentEvent.
func (RunStartEvent) EventType() string { return "run_start" }

// EventType implements AgentEvent.
func (e RunLoopEvent) EventType() string { return e.Event.EventType() }

// EventType implements AgentEvent.
func (RunEndEvent) EventType() string { return "run_end" }

// Run implements AgentEvent.
func (e RunStartEvent) Run() int { return e.RunID }

// Run implements AgentEvent.
func (e RunLoopEvent) Run() int { return e.RunID }

// Run implements AgentEvent.
func (e RunEndEvent) Run() int { return e.RunID }

// AgentState is what an Agent knows at one moment. Agent.State returns a deep copy: changing
// it changes nothing in the agent.
type AgentState struct {
	SystemPrompt string
	Model        Model
	Tools        []ToolDefinition
	// Messages is the transcript: complete messages only.
	Messages []Message
	// RunID is the id of the current run, or of the last one when none is running (0: none yet).
	RunID int
	// Running is true from run_start to run_end.
	Running bool
	// Streaming is the assistant message the model is producing, built from the stream's
	// deltas; nil when no model response is in progress.
	Streaming *AssistantMessage
	// PendingToolCalls are the calls that started and have not ended, in start order.
	PendingToolCalls []ToolCall
	// LastError is why the last run ended with error or aborted; empty after any other end, and
	// while a run is active.
	LastError string
	// Dropped is what the last run accepted through Steer and FollowUp and never took (its
	// run_end's Dropped); nil while a run is active and after a run that took everything.
	Dropped []Message
	// SubscriberErrors records every panic of a subscriber, oldest first.
	SubscriberErrors []string

	// handedOver is true only in the state an Agent passes to ReduceAgentState: the agent keeps
	// the result and nothing else holds the state's arrays, so reduceLoopEvent may grow the
	// transcript and the pending calls and change the streaming message in place. Copying them at
	// every event made one message with n parallel calls cost O(n²). No state that anyone else
	// sees has it set; for every other caller the reducer stays pure.
	handedOver bool
}

// Clone returns a deep copy of s: no slice, message or pointer is shared with s.
func (s AgentState) Clone() AgentState {
	//lab:begin 9.1
	out := s
	out.Tools = slices.Clone(s.Tools)
	out.Messages = CloneMessages(s.Messages)
	if s.Streaming != nil {
		streaming := CloneMessage(*s.Streaming).(AssistantMessage)
		out.Streaming = &streaming
	}
	out.PendingToolCalls = slices.Clone(s.PendingToolCalls)
	out.Dropped = CloneMessages(s.Dropped)
	out.SubscriberErrors = slices.Clone(s.SubscriberErrors)
	return out
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// ReduceAgentState folds one event into a state and returns the new state. It is pure: s is
// not changed, and nothing of the result shares memory that s can reach and change, so a state
// may be reduced along two paths. An event of another run than s.RunID is ignored, except a
// run_start of a newer run, which begins it: a late event of an older run cannot change the
// state of the current one.
//
// run_start begins from a clean slate: its transcript, nothing streaming or pending, no
// LastError and no Dropped left from the run before. run_end closes the run whatever was in
// progress: nothing streams or is pending after it, LastError is its Error and Dropped its
// Dropped.
func ReduceAgentState(s AgentState, e AgentEvent) AgentState {
	//lab:begin 9.1
	if start, ok := e.(RunStartEvent); ok {
		if start.RunID <= s.RunID {
			return s
		}
		s.RunID, s.Running = start.RunID, true
		s.Messages = CloneMessages(start.Messages)
		s.Streaming, s.PendingToolCalls = nil, nil
		s.LastError = ""
		s.Dropped = nil
		return s
	}
	if e.Run() != s.RunID {
		return s
	}
	switch e := e.(type) {
	case RunEndEvent:
		s.Running = false
		if e.Messages != nil {
			s.Messages = CloneMessages(e.Messages)
		}
		s.Streaming = nil
		s.PendingToolCalls = nil
		s.LastError = e.Error
		s.Dropped = CloneMessages(e.Dropped)
	case RunLoopEvent:
		s = reduceLoopEvent(s, e.Event)
	}
	return s
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// reduceLoopEvent folds one loop event of the current run into s, without changing s. A state
// an Agent handed over (handedOver) is changed in place instead: the agent keeps only the result.
func reduceLoopEvent(s AgentState, e LoopEvent) AgentState {
	switch e := e.(type) {
	case ModelEvent:
		s.Streaming = streamed(s.Streaming, e.Event, s.handedOver)
	case AssistantMessageEvent:
		s.Streaming = nil
		s.Messages = withMessage(s, e.Message)
	case ToolStartEvent:
		calls := s.PendingToolCalls
		if !s.handedOver {
			calls = slices.Clip(calls)
		}
		s.PendingToolCalls = append(calls, e.Call)
	case ToolEndEvent:
		s.PendingToolCalls = withoutCall(s.PendingToolCalls, e.Result.ToolCallID, s.handedOver)
		s.Messages = withMessage(s, e.Result)
	case ToolSkippedEvent:
		s.Messages = withMessage(s, e.Result)
	case QueuedMessageEvent:
		s.Messages = withMessage(s, e.Message)
	}
	return s
}

// withMessage is s's transcript followed by a copy of m, made by appendMessage. A handed-over
// state's transcript grows in its own array (amortised O(1)); any other gets appendMessage's new
// array.
func withMessage(s AgentState, m Message) []Message {
	if s.handedOver {
		return append(s.Messages, appendMessage(nil, m)...)
	}
	return appendMessage(s.Messages, m)
}

// withoutCall removes the first pending call with id, the one a tool_end ends. In place (inPlace)
// it moves the shorter side of the gap: the calls of a parallel batch end roughly in start order,
// so the search and the move stay short and a batch stays linear. Otherwise the result is a new
// array.
func withoutCall(calls []ToolCall, id string, inPlace bool) []ToolCall {
	i := slices.IndexFunc(calls, func(c ToolCall) bool { return c.ID == id })
	switch {
	case i < 0 && inPlace:
		return calls
	case i < 0:
		return slices.Clone(calls)
	case !inPlace:
		return slices.Concat(calls[:i], calls[i+1:])
	case i < len(calls)/2:
		copy(calls[1:i+1], calls[:i])
		calls[0] = ToolCall{}
		return calls[1:]
	default:
		copy(calls[i:], calls[i+1:])
		calls[len(calls)-1] = ToolCall{}
		return calls[:len(calls)-1]
	}
}

// appendMessage returns messages followed by a copy of m, in a new array: the caller's array is
// never written.
func appendMessage(messages []Message, m Message) []Message {
	//lab:begin 9.1
	return append(slices.Clip(messages), CloneMessage(m))
	//lab:end
}

// streamed returns the partial assistant after one stream event, as a new message (or partial
// itself, changed, when inPlace): start begins an empty one, deltas extend the block at their
// index, toolcall_end puts the complete call there, and a terminal event ends streaming (nil).
func streamed(partial *AssistantMessage, e AssistantEvent, inPlace bool) *AssistantMessage {
	if _, ok := e.(StartEvent); ok {
		return &AssistantMessage{}
	}
	if partial == nil {
		return nil
	}
	next := partial
	if !inPlace {
		clone := CloneMessage(*partial).(AssistantMessage)
		next = &clone
	}
	switch e := e.(type) {
	case TextDeltaEvent:
		text, _ := blockAt(next.Content, e.ContentIndex).(TextContent)
		next.Content = withBlock(next.Content, e.ContentIndex, Text(text.Text+e.Delta))
	case ThinkingDeltaEvent:
		thinking, _ := blockAt(next.Content, e.ContentIndex).(ThinkingContent)
		thinking.Thinking += e.Delta
		next.Content = withBlock(next.Content, e.ContentIndex, thinking)
	case ToolCallEndEvent:
		next.Content = withBlock(next.Content, e.ContentIndex, e.ToolCall)
	case DoneEvent, ErrorEvent:
		return nil
	}
	return next
}

// blockAt is the block at index i, or nil when there is none yet.
func blockAt(content []ContentBlock, i int) ContentBlock {
	if i < 0 || i >= len(content) {
		return nil
	}
	return content[i]
}

// withBlock puts b at index i of content (which the caller owns), growing it with empty text
// blocks when needed.
func withBlock(content []ContentBlock, i int, b ContentBlock) []ContentBlock {
	if i < 0 {
		return content
	}
	for len(content) <= i {
		content = append(content, Text(""))
	}
	content[i] = b
	return content
}
