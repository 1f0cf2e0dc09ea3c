// Package sessionlog reads the session log a tinypi run writes (chapter 10) and projects it into
// the message history a model request is built from. It is the kit's reader: `course serve`
// shows a log with it. The writer lives in the learner's tinypi; this comment is the contract
// both sides keep.
//
// # The format, version 1
//
// A session log is a UTF-8 text file of JSON lines (JSONL), each line one JSON object ending in
// "\n". The first line is the header:
//
//	{"format":"tinypi-session","version":1,"session":"s-01"}
//
// format must be "tinypi-session" and version must be 1. A fork's header adds "parent" (the
// session it was forked from) and "forkSeq" (the seq of the turn/end it was forked at); its file
// still holds the whole branch from seq 0, so it reads like any other log. Other header fields
// (created, ...) are free and ignored. Every following line is one event, in append order:
//
//		{"type":"tool/call","seq":2,"time":"2026-12-01T10:00:02Z","data":{...}}
//
//	  - type: the event type (below).
//	  - seq: the number of events before this one in the log (0 for the first event after the
//	    header). seq is contiguous and is the only ordering key; times may repeat or go backwards.
//	  - time: optional; when present an RFC 3339 time of the append. It is shown, never compared.
//	  - data: the event's payload, an object whose shape the type decides.
//	  - sourceEventSeqs: optional; the seqs of earlier events this one answers.
//	  - ignorable: optional; true lets a reader that does not know the type skip the event. An
//	    unknown type without it makes the whole log unreadable.
//
// Messages inside data use the JSON form of tinypi.MarshalMessage (the run records of `course
// transcript` use the same form): {"role":"user"|"assistant"|"toolResult","content":[blocks],...}
// with blocks {"type":"text","text":...}, {"type":"thinking","thinking":...} and
// {"type":"toolCall","id":...,"name":...,"arguments":"<JSON text>"}.
//
// The event types:
//
//   - "user/message": data {"message": a user message}.
//   - "assistant/message": data {"message": an assistant message}; its toolCall blocks are the
//     model's call intents.
//   - "tool/call": data {"callId","name","arguments"} (arguments is the JSON text the model
//     produced, as in a toolCall block; it may be left out when empty). Appended before the tool
//     runs, for every call of a batch before any of them runs.
//   - "tool/start": data {"callId","name"}; sourceEventSeqs is exactly [seq of its tool/call],
//     and callId and name are that call's. Appended (and written) just before the tool's body
//     runs, at most once per call and before the call's result. It is optional: a call whose
//     body never began has a result and no tool/start, and a log without any tool/start is
//     still a good log. After a crash it tells a call that may have had effects from one that
//     never began.
//   - "tool/result": data {"message": a toolResult message}; sourceEventSeqs is exactly
//     [seq of its tool/call], and the message's toolCallId is that call's callId. One per call.
//   - "turn/start", "turn/end": data {"turn": n}, optional; turn/end may add "reason".
//   - "model/request": data {"throughSeq": s, "messages": n}: the frozen request handed to the
//     model holds the derived messages of the events with seq <= s, n of them (s < this seq;
//     s is -1, and n 0, for a request frozen before any event). A writer that freezes the
//     whole log so far writes s = this seq - 1.
//
// # Damage
//
// ReadFile returns an *Error whose Kind says what is wrong: a torn log (the last line is not
// complete JSON, as when the writer stopped in the middle of a line; the events before it are
// returned too), damage before the last line (bad JSON, a missing field, a seq out of step, an
// unknown type not marked ignorable, a result that refers to no call, a request whose count does
// not match the log, a tool/start that is not its call's first and only start before its result),
// a header of another format, or another version. Error.Explain says what
// is wrong and how to repair it, in either language.
package sessionlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// Format and Version are the header values this package reads.
const (
	Format  = "tinypi-session"
	Version = 1
)

// Type is an event type.
type Type string

// The event types of version 1.
const (
	TypeUserMessage      Type = "user/message"
	TypeAssistantMessage Type = "assistant/message"
	TypeToolCall         Type = "tool/call"
	TypeToolStart        Type = "tool/start"
	TypeToolResult       Type = "tool/result"
	TypeTurnStart        Type = "turn/start"
	TypeTurnEnd          Type = "turn/end"
	TypeModelRequest     Type = "model/request"
)

// Known reports whether t is a type of version 1.
func (t Type) Known() bool {
	switch t {
	case TypeUserMessage, TypeAssistantMessage, TypeToolCall, TypeToolStart, TypeToolResult, TypeTurnStart, TypeTurnEnd, TypeModelRequest:
		return true
	}
	return false
}

// Header is the first line of a log.
type Header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Session string `json:"session,omitempty"`
	// Parent and ForkSeq are set in a fork's header: the session it was forked from and the seq
	// of the turn/end it was forked at. ForkSeq is nil for a session that is no fork.
	Parent  string `json:"parent,omitempty"`
	ForkSeq *int   `json:"forkSeq,omitempty"`
}

// Call is the data of a tool/call event, or of a tool/start event (which has no Arguments).
type Call struct {
	CallID    string `json:"callId"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Request is the data of a model/request event.
type Request struct {
	// ThroughSeq is the seq of the last event whose messages the request holds.
	ThroughSeq int `json:"throughSeq"`
	// Messages is the number of messages the request holds.
	Messages int `json:"messages"`
}

// Event is one event of a log, with its payload decoded for the known types.
type Event struct {
	Type            Type
	Seq             int
	Time            time.Time // zero when the line has none
	SourceEventSeqs []int
	Ignorable       bool
	// Data is the payload as the line holds it.
	Data json.RawMessage
	// Line is the event's line number in the file (the header is line 1).
	Line int

	// Message is the message of a user/message, assistant/message or tool/result event.
	Message tinypi.Message
	// Call is the data of a tool/call or tool/start event.
	Call *Call
	// Request is the data of a model/request event.
	Request *Request
}

// Log is a session log that was read without damage, or the intact part of a torn one.
type Log struct {
	Header Header
	Events []Event
}

// DeriveMessages projects events into the message history a request is built from: the
// messages of user/message, assistant/message and tool/result events, in log order. Every other
// event contributes nothing. It is pure: the same events give the same messages.
func DeriveMessages(events []Event) []tinypi.Message {
	var out []tinypi.Message
	for _, e := range MessageEvents(events) {
		out = append(out, e.Message)
	}
	return out
}

// MessageEvents returns the events DeriveMessages projects, in the same order: a view that
// needs to know which event each derived message came from walks these.
func MessageEvents(events []Event) []Event {
	var out []Event
	for _, e := range events {
		switch e.Type {
		case TypeUserMessage, TypeAssistantMessage, TypeToolResult:
			if e.Message != nil {
				out = append(out, e)
			}
		}
	}
	return out
}

// ReadFile reads the log at path. On an *Error of KindTorn the intact events before the torn
// line come back too; on any other error the Log is nil.
func ReadFile(path string) (*Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the session log: %w", err)
	}
	defer f.Close()
	log, err := Read(f)
	var e *Error
	if errors.As(err, &e) {
		e.Path = path
	}
	return log, err
}

// Read reads a log from r; see ReadFile.
func Read(r io.Reader) (*Log, error) {
	lines, unterminated, err := splitLines(r)
	if err != nil {
		return nil, fmt.Errorf("reading the session log: %w", err)
	}
	if len(lines) == 0 {
		return nil, &Error{Kind: KindHeader, Line: 1, Detail: "the file is empty"}
	}
	log := &Log{}
	if err := readHeader(lines[0], &log.Header); err != nil {
		// A header cut off while it was written is the start of a JSON object; a file whose one
		// line is anything else is not a session log at all, and deleting its line repairs nothing.
		if len(lines) == 1 && bytes.HasPrefix(lines[0], []byte("{")) && !json.Valid(lines[0]) {
			return nil, &Error{Kind: KindTorn, Line: 1, Detail: err.Error()}
		}
		return nil, err
	}
	for i, line := range lines[1:] {
		lineNo := i + 2
		e, err := decodeEvent(line, lineNo, log.Events)
		if err != nil {
			var le *Error
			if errors.As(err, &le) && lineNo == len(lines) && !json.Valid(line) {
				// Only the last line is cut off: the writer stopped in the middle of it.
				return log, &Error{Kind: KindTorn, Line: lineNo, Detail: le.Detail, Intact: len(log.Events)}
			}
			return nil, err
		}
		if lineNo == len(lines) && unterminated {
			// Complete JSON but no "\n": the write may still have been cut short, and
			// tinypi.LoadSession cuts such a line off, so it is not an event of the log.
			return log, &Error{Kind: KindTorn, Line: lineNo, Detail: "the last line does not end with a newline", Intact: len(log.Events)}
		}
		log.Events = append(log.Events, e)
	}
	return log, nil
}

// splitLines returns the lines of r without their "\n", and whether the last one had none (it is
// kept). A blank last line (the file ends in "\n\n") is damage, reported by the caller.
func splitLines(r io.Reader) (lines [][]byte, unterminated bool, err error) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			unterminated = !bytes.HasSuffix(line, []byte("\n"))
			lines = append(lines, bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")))
		}
		if errors.Is(err, io.EOF) {
			return lines, unterminated, nil
		}
		if err != nil {
			return nil, false, err
		}
	}
}

func readHeader(line []byte, h *Header) error {
	if err := json.Unmarshal(line, h); err != nil {
		return &Error{Kind: KindHeader, Line: 1, Detail: "not a JSON object: " + err.Error()}
	}
	if h.Format != Format {
		return &Error{Kind: KindHeader, Line: 1, Detail: fmt.Sprintf("format %q, want %q", h.Format, Format)}
	}
	if h.Version != Version {
		return &Error{Kind: KindVersion, Line: 1, Version: h.Version, Detail: fmt.Sprintf("version %d, want %d", h.Version, Version)}
	}
	return nil
}

// envelope is one event line as it is written.
type envelope struct {
	Type            *Type           `json:"type"`
	Seq             *int            `json:"seq"`
	Time            string          `json:"time"`
	Data            json.RawMessage `json:"data"`
	SourceEventSeqs []int           `json:"sourceEventSeqs"`
	Ignorable       bool            `json:"ignorable"`
}

// decodeEvent decodes line lineNo; before holds the events of the lines before it.
func decodeEvent(line []byte, lineNo int, before []Event) (Event, error) {
	damaged := func(format string, args ...any) (Event, error) {
		return Event{}, &Error{Kind: KindDamaged, Line: lineNo, Detail: fmt.Sprintf(format, args...)}
	}
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		return damaged("not a JSON object: %v", err)
	}
	if env.Type == nil || *env.Type == "" {
		return damaged("no \"type\"")
	}
	if env.Seq == nil {
		return damaged("no \"seq\"")
	}
	e := Event{Type: *env.Type, Seq: *env.Seq, Data: env.Data, SourceEventSeqs: env.SourceEventSeqs, Ignorable: env.Ignorable, Line: lineNo}
	if want := len(before); e.Seq != want {
		return Event{}, &Error{Kind: KindSeq, Line: lineNo, Seq: e.Seq, WantSeq: want,
			Detail: fmt.Sprintf("seq %d, want %d (the number of events before it)", e.Seq, want)}
	}
	if env.Time != "" {
		t, err := time.Parse(time.RFC3339Nano, env.Time)
		if err != nil {
			return damaged("time %q is not an RFC 3339 time", env.Time)
		}
		e.Time = t
	}
	if !e.Type.Known() {
		if e.Ignorable {
			return e, nil
		}
		return Event{}, &Error{Kind: KindUnknownType, Line: lineNo, Type: string(e.Type),
			Detail: fmt.Sprintf("unknown event type %q, not marked ignorable", e.Type)}
	}
	switch e.Type {
	case TypeUserMessage, TypeAssistantMessage, TypeToolResult:
		m, err := decodeMessage(e.Data)
		if err != nil {
			return damaged("%s: %v", e.Type, err)
		}
		want := map[Type]tinypi.Role{TypeUserMessage: tinypi.RoleUser, TypeAssistantMessage: tinypi.RoleAssistant, TypeToolResult: tinypi.RoleToolResult}[e.Type]
		if m.MessageRole() != want {
			return damaged("%s holds a %s message, want %s", e.Type, m.MessageRole(), want)
		}
		e.Message = m
		if e.Type == TypeToolResult {
			if err := checkSource(e, before); err != nil {
				return damaged("%v", err)
			}
		}
	case TypeToolCall:
		var c Call
		if err := json.Unmarshal(e.Data, &c); err != nil || c.CallID == "" || c.Name == "" {
			return damaged("tool/call needs data {\"callId\",\"name\",\"arguments\"}")
		}
		e.Call = &c
	case TypeToolStart:
		var c Call
		if err := json.Unmarshal(e.Data, &c); err != nil || c.CallID == "" || c.Name == "" {
			return damaged("tool/start needs data {\"callId\",\"name\"}")
		}
		e.Call = &c
		if err := checkStart(e, before); err != nil {
			return damaged("%v", err)
		}
	case TypeModelRequest:
		var rq struct {
			ThroughSeq *int `json:"throughSeq"`
			Messages   *int `json:"messages"`
		}
		if err := json.Unmarshal(e.Data, &rq); err != nil || rq.ThroughSeq == nil || rq.Messages == nil {
			return damaged("model/request needs data {\"throughSeq\",\"messages\"}")
		}
		// -1 is a request frozen before any event: it holds no message.
		if *rq.ThroughSeq < -1 || *rq.ThroughSeq >= e.Seq {
			return damaged("model/request throughSeq %d, want an earlier event (-1 to %d)", *rq.ThroughSeq, e.Seq-1)
		}
		if n := len(DeriveMessages(before[:*rq.ThroughSeq+1])); n != *rq.Messages {
			return damaged("model/request says %d messages, but the events through seq %d derive %d", *rq.Messages, *rq.ThroughSeq, n)
		}
		e.Request = &Request{ThroughSeq: *rq.ThroughSeq, Messages: *rq.Messages}
	}
	return e, nil
}

// decodeMessage decodes data {"message": ...} with tinypi's own decoder.
func decodeMessage(data json.RawMessage) (tinypi.Message, error) {
	var d struct {
		Message json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(data, &d); err != nil || len(d.Message) == 0 {
		return nil, errors.New("needs data {\"message\"}")
	}
	return tinypi.UnmarshalMessage(d.Message)
}

// callOf returns the tool/call an event of type e.Type refers to: its sourceEventSeqs must be
// exactly [seq of an earlier tool/call].
func callOf(e Event, before []Event) (*Call, int, error) {
	if len(e.SourceEventSeqs) != 1 {
		return nil, 0, fmt.Errorf("%s needs sourceEventSeqs [seq of its tool/call], has %v", e.Type, e.SourceEventSeqs)
	}
	src := e.SourceEventSeqs[0]
	if src < 0 || src >= len(before) || before[src].Type != TypeToolCall {
		return nil, 0, fmt.Errorf("%s refers to seq %d, which is not an earlier tool/call", e.Type, src)
	}
	return before[src].Call, src, nil
}

// refersTo reports whether an earlier event of type t refers to the tool/call at src.
func refersTo(before []Event, t Type, src int) bool {
	return slices.ContainsFunc(before, func(o Event) bool {
		return o.Type == t && slices.Equal(o.SourceEventSeqs, []int{src})
	})
}

// checkStart checks that a tool/start refers to an earlier tool/call of the same id and name,
// which has neither a start nor a result yet.
func checkStart(e Event, before []Event) error {
	call, src, err := callOf(e, before)
	if err != nil {
		return err
	}
	if call.CallID != e.Call.CallID || call.Name != e.Call.Name {
		return fmt.Errorf("tool/start of %s %q refers to seq %d, the tool/call of %s %q", e.Call.Name, e.Call.CallID, src, call.Name, call.CallID)
	}
	if refersTo(before, TypeToolStart, src) {
		return fmt.Errorf("a second tool/start for the tool/call at seq %d", src)
	}
	if refersTo(before, TypeToolResult, src) {
		return fmt.Errorf("a tool/start for the tool/call at seq %d after its result", src)
	}
	return nil
}

// checkSource checks that a tool/result refers to exactly one earlier tool/call of the same id.
func checkSource(e Event, before []Event) error {
	call, src, err := callOf(e, before)
	if err != nil {
		return err
	}
	id := e.Message.(tinypi.ToolResultMessage).ToolCallID
	if call.CallID != id {
		return fmt.Errorf("tool/result for call %q refers to seq %d, the tool/call of %q", id, src, call.CallID)
	}
	if refersTo(before, TypeToolResult, src) {
		return fmt.Errorf("a second tool/result for the tool/call at seq %d", src)
	}
	return nil
}
