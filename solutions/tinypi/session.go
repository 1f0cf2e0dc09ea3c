package tinypi

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// SessionEventType names what a session event records. The set is closed: a reader refuses a
// type it does not know unless the event is marked ignorable.
type SessionEventType string

// The event types of the session log, version 1.
const (
	// EventUserMessage records a user message (a prompt, a steering or follow-up message).
	EventUserMessage SessionEventType = "user/message"
	// EventAssistantMessage records a complete assistant message; its toolCall blocks are the
	// model's intents, not yet calls.
	EventAssistantMessage SessionEventType = "assistant/message"
	// EventToolCall records a call the runtime accepted, before it runs.
	EventToolCall SessionEventType = "tool/call"
	// EventToolStart records that a call's tool body is about to run; its SourceEventSeqs is
	// [seq of the call].
	EventToolStart SessionEventType = "tool/start"
	// EventToolResult records the result of a call; its SourceEventSeqs is [seq of the call].
	EventToolResult SessionEventType = "tool/result"
	// EventTurnStart and EventTurnEnd frame one turn: a model request and its tool batch.
	EventTurnStart SessionEventType = "turn/start"
	EventTurnEnd   SessionEventType = "turn/end"
	// EventModelRequest records the frozen request handed to the model: the derived messages of
	// every event up to ThroughSeq.
	EventModelRequest SessionEventType = "model/request"
	//chapter:begin 11
	// EventCompaction records a compaction (chapter 11): from it on, the log derives its summary
	// and the messages from its FirstKeptSeq on.
	EventCompaction SessionEventType = "compaction"
	//chapter:end
)

// Known reports whether t is a type of version 1.
func (t SessionEventType) Known() bool {
	switch t {
	case EventUserMessage, EventAssistantMessage, EventToolCall, EventToolStart, EventToolResult,
		EventTurnStart, EventTurnEnd, EventModelRequest:
		return true
	//chapter:begin 11
	case EventCompaction:
		return true
		//chapter:end
	}
	return false
}

// Codes of the results that crash repair writes (Details["code"]).
const (
	// ToolNotStarted: the call was logged but its body never began.
	ToolNotStarted = "TOOL_NOT_STARTED"
	// ToolOutcomeUnknown: the body began and no result was logged; it may have had effects.
	ToolOutcomeUnknown = "TOOL_OUTCOME_UNKNOWN"
)

// SessionEvent is one entry of the log. Seq is its index in the log and the only ordering key;
// Time is informational. Which payload field is set depends on Type:
//
//   - user/message, assistant/message, tool/result: Message;
//   - tool/call, tool/start: Call (tool/start keeps only the call's ID and name);
//   - turn/start, turn/end: Turn, and Reason for turn/end;
//   - model/request: ThroughSeq and Count;
//   - compaction (chapter 11): Compaction.
//
// An ignorable event of a type this package does not know keeps its payload in Raw.
type SessionEvent struct {
	Type            SessionEventType
	Seq             int
	Time            time.Time
	SourceEventSeqs []int
	Ignorable       bool

	Message    Message
	Call       *ToolCall
	Turn       int
	Reason     string
	ThroughSeq int
	Count      int
	//chapter:begin 11
	Compaction *Compaction
	//chapter:end
	Raw []byte
}

// messageRole returns the role of the message an event of type t holds, and false for a type
// that holds no message.
func messageRole(t SessionEventType) (Role, bool) {
	switch t {
	case EventUserMessage:
		return RoleUser, true
	case EventAssistantMessage:
		return RoleAssistant, true
	case EventToolResult:
		return RoleToolResult, true
	}
	return "", false
}

// clone returns a copy of e that shares nothing mutable with it.
func (e SessionEvent) clone() SessionEvent {
	e.SourceEventSeqs = slices.Clone(e.SourceEventSeqs)
	if e.Message != nil {
		e.Message = CloneMessage(e.Message)
	}
	if e.Call != nil {
		c := *e.Call
		e.Call = &c
	}
	//chapter:begin 11
	e.Compaction = e.Compaction.clone()
	//chapter:end
	e.Raw = slices.Clone(e.Raw)
	return e
}

// SessionOptions configures a Session.
type SessionOptions struct {
	// ID names the session; it goes into the header.
	ID string
	// Path, when set, is the JSONL file the session is written to (see CreateSession).
	Path string
	// FlushWindow is how long appended events may wait before the background writer writes
	// them in one batch; zero means DefaultFlushWindow. Flush never waits for it.
	FlushWindow time.Duration
	// Now stamps each appended event; nil means time.Now. Append calls it once per event, with the
	// session's lock held, so it must not call the session.
	Now func() time.Time
	// MaxLineBytes is the longest line LoadSession reads, its "\n" not counted; zero means
	// DefaultMaxLineBytes. A longer line is refused, naming the limit, without being kept in
	// memory.
	MaxLineBytes int
}

// DefaultFlushWindow is the batching window of the background writer.
const DefaultFlushWindow = 2 * time.Millisecond

// Session is an append-only event log and the single source of the messages a model sees.
//
// Append, Messages and Events are safe for concurrent use: tool goroutines log their starts
// while the loop commits results. Append only touches memory; a session with a file writes
// appended events in the background in batches, and Flush is the barrier that returns once
// every event appended before it is written. Close stops the writer.
type Session struct {
	id      string
	parent  string
	forkSeq int // -1 for a root session
	now     func() time.Time

	// mu guards every field below. It is a sync.Locker, set by newSession to a *sync.Mutex, so
	// that the chapter's tests can watch each moment it is held or released (which goroutine
	// commits a result, what another caller may append between two sections); the session uses
	// it like any mutex.
	mu     sync.Locker
	base   []SessionEvent // a fork's inherited events (the parent's through forkSeq); immutable
	events []SessionEvent // this session's own events
	// derived caches the projection of base and events[:derivedThrough].
	derived        []Message
	derivedThrough int
	baseDerived    bool

	// calls is what the rules of the log know about each tool/call, by its seq; Append and
	// LoadSession keep it with noteLocked.
	calls map[int]*loggedCall

	file *sessionFile // nil for a session in memory
}

// loggedCall is what the rules of the log know about one tool/call: its ID, and whether its
// tool/start and its tool/result are logged.
type loggedCall struct {
	id       string
	started  bool
	answered bool
}

// NewSession returns an empty session kept in memory only.
func NewSession(id string) *Session {
	return newSession(SessionOptions{ID: id}, "", -1)
}

func newSession(opts SessionOptions, parent string, forkSeq int) *Session {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Session{id: opts.ID, parent: parent, forkSeq: forkSeq, now: now, mu: new(sync.Mutex)}
}

// ID returns the session's name.
func (s *Session) ID() string { return s.id }

// Parent returns the session this one was forked from and the seq of the turn/end it was
// forked at; "" and -1 for a root session.
func (s *Session) Parent() (id string, forkSeq int) { return s.parent, s.forkSeq }

// Len returns the number of events in the log, inherited ones included: the seq the next
// append gets.
func (s *Session) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.base) + len(s.events)
}

// Events returns a copy of the whole log, inherited events first.
func (s *Session) Events() []SessionEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SessionEvent, 0, len(s.base)+len(s.events))
	for _, e := range s.base {
		out = append(out, e.clone())
	}
	for _, e := range s.events {
		out = append(out, e.clone())
	}
	return out
}

// EachEvent calls fn with every event of the log, inherited events first, until fn returns
// false. Unlike Events it copies nothing, which matters for a long log (reading the usage of a
// resumed session's answers should not double its memory): fn gets the log's own events, so it
// must not change what they hold (a message's content is the log's), and it runs with the
// session's lock held, so it must not call the session.
func (s *Session) EachEvent(fn func(SessionEvent) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, events := range [][]SessionEvent{s.base, s.events} {
		for _, e := range events {
			if !fn(e) {
				return
			}
		}
	}
}

// Append adds e at the end of the log and returns its seq. Append sets Seq (the log's length)
// and Time. It refuses, with an error and without logging anything, an event that breaks a rule
// of the log (see checkLocked); LoadSession refuses a file holding such an event by the same
// rules. The log keeps its own copy of e. Append does no I/O.
func (s *Session) Append(e SessionEvent) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(e)
}

func (s *Session) appendLocked(e SessionEvent) (int, error) {
	seq, err := s.recordLocked(e)
	if err != nil {
		return seq, err
	}
	if recorded, ok := s.eventLocked(seq); ok {
		s.noteLocked(recorded)
	}
	if s.file != nil {
		s.file.wake()
	}
	return seq, nil
}

// recordLocked checks e and adds a copy of it, numbered and stamped, to the events.
func (s *Session) recordLocked(e SessionEvent) (int, error) {
	//lab:begin 10.1
	if err := s.checkLocked(e); err != nil {
		return 0, err
	}
	e = e.clone()
	e.Seq = len(s.base) + len(s.events)
	e.Time = s.now()
	s.events = append(s.events, e)
	return e.Seq, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// checkLocked is the one validation of the log: Append refuses, and LoadSession reports as
// damage, an event that breaks one of these rules, given the events before it:
//
//   - its type is unknown and it is not marked ignorable;
//   - it is a message event without a message of its role (user/message a user message,
//     assistant/message an assistant message, tool/result a tool result);
//   - it is a tool/call without a call that has an ID;
//   - it is a tool/start or tool/result whose SourceEventSeqs is not exactly [seq of a tool/call
//     of this log], or that names another call (a tool/start's Call.ID, a result's ToolCallID);
//   - it is a second tool/start or a second tool/result of one call, or a tool/start logged after
//     the call's result.
func (s *Session) checkLocked(e SessionEvent) error {
	if !e.Type.Known() {
		if e.Ignorable {
			return nil
		}
		return refuse("unknown event type %q (mark it ignorable to log it anyway)", e.Type)
	}
	switch e.Type {
	case EventUserMessage, EventAssistantMessage, EventToolResult:
		want, _ := messageRole(e.Type)
		if e.Message == nil {
			return refuse("a %s event needs a %s message, it has none", e.Type, want)
		}
		if got := e.Message.MessageRole(); got != want {
			return refuse("a %s event needs a %s message, not a %s message", e.Type, want, got)
		}
	case EventToolCall:
		if e.Call == nil || e.Call.ID == "" {
			return refuse("a tool/call event needs a call with an ID")
		}
	//chapter:begin 11
	case EventCompaction:
		return s.checkCompactionLocked(e)
		//chapter:end
	}
	if e.Type != EventToolStart && e.Type != EventToolResult {
		return nil
	}
	if len(e.SourceEventSeqs) != 1 {
		return refuse("a %s event needs sourceEventSeqs [seq of its tool/call], not %v", e.Type, e.SourceEventSeqs)
	}
	callSeq := e.SourceEventSeqs[0]
	call, ok := s.calls[callSeq]
	if !ok {
		return refuse("%s points at seq %d, which is not a tool/call", e.Type, callSeq)
	}
	if e.Type == EventToolStart {
		if e.Call == nil || e.Call.ID != call.id {
			return refuse("the tool/start of call %q points at the tool/call of %q (seq %d)", startID(e), call.id, callSeq)
		}
		if call.started {
			return refuse("call %q (tool/call seq %d) already has a tool/start", call.id, callSeq)
		}
		if call.answered {
			return refuse("call %q (tool/call seq %d) already has its result, so it cannot start", call.id, callSeq)
		}
		return nil
	}
	if r := e.Message.(ToolResultMessage); r.ToolCallID != call.id {
		return refuse("the result for call %q points at the tool/call of %q (seq %d)", r.ToolCallID, call.id, callSeq)
	}
	if call.answered {
		return refuse("call %q (tool/call seq %d) already has a result", call.id, callSeq)
	}
	return nil
}

// startID is the call ID a tool/start names, "" when it names none.
func startID(e SessionEvent) string {
	if e.Call == nil {
		return ""
	}
	return e.Call.ID
}

// noteLocked updates what the rules know after e, which passed checkLocked, was logged.
func (s *Session) noteLocked(e SessionEvent) {
	switch e.Type {
	case EventToolCall:
		if e.Call == nil {
			return
		}
		if s.calls == nil {
			s.calls = map[int]*loggedCall{}
		}
		s.calls[e.Seq] = &loggedCall{id: e.Call.ID}
	case EventToolStart, EventToolResult:
		if len(e.SourceEventSeqs) != 1 {
			return
		}
		if call, ok := s.calls[e.SourceEventSeqs[0]]; ok {
			call.started = call.started || e.Type == EventToolStart
			call.answered = call.answered || e.Type == EventToolResult
		}
	}
}

// refusedEvent is the error of an event that breaks a rule of the log.
type refusedEvent struct{ reason string }

func refuse(format string, args ...any) error {
	return &refusedEvent{reason: fmt.Sprintf(format, args...)}
}

// Error implements error.
func (e *refusedEvent) Error() string { return "tinypi: session: " + e.reason }

// eventLocked returns the event with the given seq.
func (s *Session) eventLocked(seq int) (SessionEvent, bool) {
	if seq < 0 {
		return SessionEvent{}, false
	}
	if seq < len(s.base) {
		return s.base[seq], true
	}
	if seq-len(s.base) < len(s.events) {
		return s.events[seq-len(s.base)], true
	}
	return SessionEvent{}, false
}

// AppendMessage logs a user or assistant message and returns its seq. A tool result cannot be
// logged this way: results enter the log through a ToolBatchLog, which pairs each with its call.
func (s *Session) AppendMessage(m Message) (int, error) {
	switch m.(type) {
	case UserMessage:
		return s.Append(SessionEvent{Type: EventUserMessage, Message: m})
	case AssistantMessage:
		return s.Append(SessionEvent{Type: EventAssistantMessage, Message: m})
	}
	return 0, fmt.Errorf("tinypi: session: AppendMessage takes user and assistant messages, not %T; log results through a ToolBatchLog", m)
}

// DeriveMessages projects a log into the messages a model request is built from: the message of
// every user/message, assistant/message and tool/result event, in seq order. Every other event
// adds no message of its own; from chapter 11 on, a compaction event changes where the projection
// starts (see fromLatestCompaction). It is pure: it neither changes events nor keeps them, and the same events always
// give the same messages.
func DeriveMessages(events []SessionEvent) []Message {
	//lab:begin 10.1
	var out []Message
	//chapter:begin 11
	events, out = fromLatestCompaction(events)
	//chapter:end
	for _, e := range events {
		switch e.Type {
		case EventUserMessage, EventAssistantMessage, EventToolResult:
			out = append(out, CloneMessage(e.Message))
		}
	}
	return out
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// Messages returns DeriveMessages of the whole log. The projection is cached and extended only
// by the events appended since the last call; the caller gets its own deep copy, so what it
// holds is frozen: later appends and changes to it never meet.
func (s *Session) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.messagesLocked()
}

func (s *Session) messagesLocked() []Message {
	//chapter:begin 11
	s.rederiveAfterCompactionLocked()
	//chapter:end
	//lab:begin 10.1
	if !s.baseDerived {
		s.derived, s.baseDerived = DeriveMessages(s.base), true
	}
	s.derived = append(s.derived, DeriveMessages(s.events[s.derivedThrough:])...)
	s.derivedThrough = len(s.events)
	return CloneMessages(s.derived)
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// agentMessages returns a new agent's transcript: DeriveMessages of the whole log, as Messages
// would return, but without filling the cache. Messages would project the log into the cache and
// then copy the cache, so an agent made on a long resumed log would hold, next to the log's own
// messages, two more copies of them; this makes one, the agent's. The cache is filled when the
// first run asks for the messages.
func (s *Session) agentMessages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	//chapter:begin 11
	if latestCompaction(s.events) >= 0 {
		return DeriveMessages(s.logLocked()) // a fork's compaction may keep inherited events
	}
	//chapter:end
	if len(s.base) == 0 {
		return DeriveMessages(s.events)
	}
	return slices.Concat(DeriveMessages(s.base), DeriveMessages(s.events))
}

// Flush is the durability barrier: it returns once every event appended before the call is
// written to the session's file (a no-op for a session in memory), or with the write's error.
func (s *Session) Flush(ctx context.Context) error {
	if s.file == nil {
		return ctx.Err()
	}
	return s.file.flush(ctx)
}

// Close flushes and stops the background writer; a session in memory has nothing to close.
// Events appended after Close stay in memory, and Flush then fails. Calling Close again returns
// the first call's error.
func (s *Session) Close() error {
	if s.file == nil {
		return nil
	}
	return s.file.close()
}

// ModelRequest freezes the next model request: it flushes the log (the barrier before a model
// request), logs a model/request event, and returns the derived messages the request holds,
// which are exactly those of the events before that event: the messages are taken and the event
// appended under one hold of the lock, so no concurrent Append falls between them. When the flush
// fails, it returns the error, wrapped, and logs nothing.
func (s *Session) ModelRequest(ctx context.Context) ([]Message, error) {
	//lab:begin 10.3
	if err := s.Flush(ctx); err != nil {
		return nil, fmt.Errorf("tinypi: session: flushing before the model request: %w", err)
	}
	s.mu.Lock()
	messages := s.messagesLocked()
	through := len(s.base) + len(s.events) - 1
	_, err := s.appendLocked(SessionEvent{Type: EventModelRequest, ThroughSeq: through, Count: len(messages)})
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return messages, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}
