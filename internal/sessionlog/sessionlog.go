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
//   - "compaction" (chapter 11): data {"summary","firstKeptSeq","tokensBefore","reason",
//     "readFiles","changedFiles"}: the history before seq firstKeptSeq is replaced by a summary.
//     summary is not empty; reason is "threshold", "overflow" or "manual"; tokensBefore >= 0;
//     readFiles and changedFiles are lists of file names (present, possibly []); firstKeptSeq is
//     an earlier event. It may stand inside an open turn (an overflow compaction comes after the
//     turn's model/request).
//
// # The message history
//
// The messages a request holds (DeriveMessages) are the message of every user/message,
// assistant/message and tool/result event, in seq order, unless the events hold a compaction.
// Then, with C the latest compaction among them, they are C's summary message (SummaryMessage:
// a user message, its Timestamp C's time in milliseconds) followed by the messages of the events
// with seq >= C.firstKeptSeq; the events before it stay in the log but add nothing.
//
// # Reading
//
// ReadFile reads a log in one pass, in time and memory linear in its events: it checks every
// line as it goes (each reference is looked up in an index, each request's message count is a
// running count) and keeps an index of the events, not the events themselves. A Log hands out
// the events a caller shows (Log.Events) by reading their lines again. What it refuses before
// reading a byte: a path that is not a regular file (a FIFO, a device, a directory: opening
// them could block or never end) and a file above Options.MaxBytes. While reading, a line
// longer than MaxLineBytes (or Options.MaxLineBytes) is refused where it starts, without holding it.
//
// # Damage
//
// ReadFile returns an *Error whose Kind says what is wrong: a torn log (the last line is not
// complete JSON, as when the writer stopped in the middle of a line; the events before it are
// returned too), damage before the last line (bad JSON, a missing field, a seq out of step, an
// unknown type not marked ignorable, a result that refers to no call, a request whose count does
// not match the log, a tool/start that is not its call's first and only start before its result),
// a header of another format, or another version, a byte order mark, a line too long, a file too
// large or not a regular file. Of a compaction the reader checks the shape of its data and that
// firstKeptSeq is an earlier event, not that firstKeptSeq is one of the cut points chapter 11
// allows: the writer proves that (its tests and sessionproof), and a page that shows a log need
// not refuse one whose cut is in an odd place. Error.Explain says what is wrong and how to repair it, in either
// language.
package sessionlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// Format and Version are the header values this package reads.
const (
	Format  = "tinypi-session"
	Version = 1
)

// The reader's limits.
const (
	// DefaultMaxBytes is the largest log ReadFile reads unless Options.MaxBytes says otherwise:
	// 256 MiB, far more than a day of agent use writes, and small enough that a file that is
	// not a log (a disk image, a sparse file) is refused instead of read.
	DefaultMaxBytes int64 = 256 << 20
	// MaxLineBytes is the longest line, header or event, ReadFile accepts: 64 MiB, the same
	// limit as tinypi.DefaultMaxLineBytes, so that the page reads every log LoadSession loads.
	// An event holds one message; tinypi's tools cap what they return far below this.
	MaxLineBytes = 64 << 20
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
	// TypeCompaction is chapter 11's compaction event.
	TypeCompaction Type = "compaction"
)

// The reasons of a compaction.
const (
	// CompactionThreshold: the history grew past the threshold the agent compacts at.
	CompactionThreshold = "threshold"
	// CompactionOverflow: the model refused a request as too long for its context window.
	CompactionOverflow = "overflow"
	// CompactionManual: the user asked for it.
	CompactionManual = "manual"
)

// Known reports whether t is a type of version 1 this reader knows.
func (t Type) Known() bool { return codeOf(t) != codeOther }

// typeCode is a Type as the index keeps it: one byte an event.
type typeCode uint8

const (
	codeOther typeCode = iota // an ignorable type this reader does not know
	codeUserMessage
	codeAssistantMessage
	codeToolCall
	codeToolStart
	codeToolResult
	codeTurnStart
	codeTurnEnd
	codeModelRequest
	codeCompaction
)

var codeTypes = [...]Type{codeOther: "", codeUserMessage: TypeUserMessage, codeAssistantMessage: TypeAssistantMessage,
	codeToolCall: TypeToolCall, codeToolStart: TypeToolStart, codeToolResult: TypeToolResult,
	codeTurnStart: TypeTurnStart, codeTurnEnd: TypeTurnEnd, codeModelRequest: TypeModelRequest, codeCompaction: TypeCompaction}

func codeOf(t Type) typeCode {
	for c, name := range codeTypes {
		if c != int(codeOther) && name == t {
			return typeCode(c)
		}
	}
	return codeOther
}

// isMessage reports whether events of type c derive a message.
func (c typeCode) isMessage() bool {
	return c == codeUserMessage || c == codeAssistantMessage || c == codeToolResult
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

// Compaction is the data of a compaction event.
type Compaction struct {
	// Summary replaces the messages of the events before FirstKeptSeq.
	Summary string `json:"summary"`
	// FirstKeptSeq is the seq of the first event whose message the history keeps.
	FirstKeptSeq int `json:"firstKeptSeq"`
	// TokensBefore is the size of the history, in tokens, before the compaction.
	TokensBefore int `json:"tokensBefore"`
	// Reason is CompactionThreshold, CompactionOverflow or CompactionManual.
	Reason string `json:"reason"`
	// ReadFiles and ChangedFiles are the files the summarized part read and changed (never nil
	// in a decoded event).
	ReadFiles    []string `json:"readFiles"`
	ChangedFiles []string `json:"changedFiles"`
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
	// Bytes is the length of the event's line in the file, without its newline.
	Bytes int

	// Message is the message of a user/message, assistant/message or tool/result event.
	Message tinypi.Message
	// Call is the data of a tool/call or tool/start event.
	Call *Call
	// Request is the data of a model/request event.
	Request *Request
	// Compaction is the data of a compaction event.
	Compaction *Compaction
}

// CallInfo is what the index knows of one tool/call: where its round trip is in the log.
type CallInfo struct {
	// Seq is the seq of the tool/call; ID and Name its callId and name.
	Seq  int
	ID   string
	Name string
	// Asker is the seq of the assistant/message that asked for the call: the last one before
	// it with a toolCall block of the call's id; -1 when there is none.
	Asker int
	// Start and Result are the seqs of its tool/start and tool/result; -1 when the log has none.
	Start, Result int
}

// entry is one event in the index: where its line is and what the checks of later events need.
type entry struct {
	off  int64 // where the line starts in the file
	size int32 // the line's length without its newline
	typ  typeCode
	// msgs is the number of events with a message up to and including this one.
	msgs int32
	// ref is, for a tool/call, its index in Log.calls; for a tool/start or tool/result, the seq
	// of its tool/call; for a model/request, its throughSeq.
	ref int32
	// requested is, for a model/request, its message count.
	requested int32
	// compaction is 1 + the index in Log.compactions of the latest compaction at or before
	// this event; 0 when there is none. (The entry has room for it: 32 bytes either way.)
	compaction int32
}

// compactionInfo is what the index knows of one compaction: where it is, where its cut is, and
// how many message events come before the cut.
type compactionInfo struct {
	seq, firstKept, keptFrom int32
}

// Log is a session log that was read without damage, or the intact part of a torn one: its
// header and an index of its events. The events themselves are read again from the file when
// asked for (Events), so a Log holds a few dozen bytes an event, whatever their size.
//
// A Log is not changed after ReadFile returns it: any number of goroutines may use it at once.
type Log struct {
	Header Header
	// Path is the file the log was read from.
	Path string
	// Size is the length in bytes of what was read: the header and the events, a torn last line
	// left out.
	Size int64

	info    fs.FileInfo // the file as it was read, to notice a replaced file
	entries []entry
	calls   []CallInfo
	msgSeqs []int32 // the seqs of the events with a message, in order
	// compactions are the compaction events, in order.
	compactions []compactionInfo
}

// Len returns the number of events.
func (l *Log) Len() int { return len(l.entries) }

// TypeOf returns the type of the event at seq, or "" for an ignorable type this reader does not
// know (Events has its name).
func (l *Log) TypeOf(seq int) Type { return codeTypes[l.entries[seq].typ] }

// Calls returns every tool/call of the log, in log order. The slice is the log's own: do not
// change it.
func (l *Log) Calls() []CallInfo { return l.calls }

// CallAt returns the tool/call at seq, and whether the event at seq is one.
func (l *Log) CallAt(seq int) (CallInfo, bool) {
	if seq < 0 || seq >= len(l.entries) || l.entries[seq].typ != codeToolCall {
		return CallInfo{}, false
	}
	return l.calls[l.entries[seq].ref], true
}

// CallIndex returns the position in Calls of the tool/call at seq, or -1.
func (l *Log) CallIndex(seq int) int {
	if seq < 0 || seq >= len(l.entries) || l.entries[seq].typ != codeToolCall {
		return -1
	}
	return int(l.entries[seq].ref)
}

// MessagesThrough returns how many messages the events with seq <= seq derive (0 for -1): the
// length of DeriveMessages of those events, a compaction's summary counted.
func (l *Log) MessagesThrough(seq int) int { return l.HistoryThrough(seq).Len() }

// History says where the messages DeriveMessages gives for the events through some seq come
// from, without reading them: the summary of a compaction, then a run of message events.
type History struct {
	// Compaction is the seq of the latest compaction among the events, whose summary message
	// comes first; -1 when there is none. FirstKept is its firstKeptSeq (0 without one).
	Compaction, FirstKept int
	// From and To are positions among the log's message events (MessageSeq): the messages of
	// those at From <= i < To follow the summary.
	From, To int
}

// Len returns the number of messages of h.
func (h History) Len() int {
	if h.Compaction >= 0 {
		return 1 + h.To - h.From
	}
	return h.To - h.From
}

// HistoryThrough returns where the messages the events with seq <= seq derive come from (an
// empty History for -1).
func (l *Log) HistoryThrough(seq int) History {
	h := History{Compaction: -1}
	if seq < 0 || len(l.entries) == 0 {
		return h
	}
	e := l.entries[min(seq, len(l.entries)-1)]
	h.To = int(e.msgs)
	if e.compaction > 0 {
		c := l.compactions[e.compaction-1]
		h.Compaction, h.FirstKept, h.From = int(c.seq), int(c.firstKept), int(c.keptFrom)
	}
	return h
}

// HistorySeq returns the seq of the event the i-th message (from 0) of h comes from: the
// compaction's for its summary.
func (l *Log) HistorySeq(h History, i int) int {
	if h.Compaction >= 0 {
		if i == 0 {
			return h.Compaction
		}
		i--
	}
	return int(l.msgSeqs[h.From+i])
}

// MessageSeq returns the seq of the i-th event (from 0) of the log that holds a message
// (user/message, assistant/message, tool/result). Without a compaction the i-th derived message
// comes from it; with one, see HistoryThrough.
func (l *Log) MessageSeq(i int) int { return int(l.msgSeqs[i]) }

// RequestAt returns the data of the model/request at seq, and whether the event is one.
func (l *Log) RequestAt(seq int) (Request, bool) {
	if seq < 0 || seq >= len(l.entries) || l.entries[seq].typ != codeModelRequest {
		return Request{}, false
	}
	e := l.entries[seq]
	return Request{ThroughSeq: int(e.ref), Messages: int(e.requested)}, true
}

// NextRequest returns the seq of the first model/request after the event at seq after whose
// ThroughSeq is at least through, or -1.
func (l *Log) NextRequest(after, through int) int {
	for seq := after + 1; seq < len(l.entries); seq++ {
		if e := l.entries[seq]; e.typ == codeModelRequest && int(e.ref) >= through {
			return seq
		}
	}
	return -1
}

// ErrChanged means the file of a Log was replaced or cut since it was read: the events asked
// for are no longer where the index says. Read the log again.
var ErrChanged = errors.New("the session log changed since it was read")

// Events reads the events with seqs from <= seq < to from the log's file again and decodes
// them. The file may have grown since (a writer appends); a file that was replaced or whose
// indexed part changed gives ErrChanged.
func (l *Log) Events(ctx context.Context, from, to int) ([]Event, error) {
	seqs := make([]int, 0, max(0, to-from))
	for seq := max(from, 0); seq < min(to, len(l.entries)); seq++ {
		seqs = append(seqs, seq)
	}
	return l.EventsAt(ctx, seqs)
}

// EventsAt is Events for any seqs, in the order given; each must be a seq of the log.
func (l *Log) EventsAt(ctx context.Context, seqs []int) ([]Event, error) {
	out := make([]Event, 0, len(seqs))
	err := l.Each(ctx, seqs, func(e Event) error {
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Each reads the events with seqs again from the file, in the order given, and calls f with
// each; it stops at f's first error and returns it. Unlike EventsAt it holds one event at a
// time.
func (l *Log) Each(ctx context.Context, seqs []int, f func(Event) error) error {
	if len(seqs) == 0 {
		return nil
	}
	file, info, err := openRegular(l.Path)
	if err != nil {
		return fmt.Errorf("reading the session log again: %w", err)
	}
	defer file.Close()
	if !os.SameFile(info, l.info) || info.Size() < l.Size {
		return ErrChanged
	}
	var buf []byte
	for i, seq := range seqs {
		if i%256 == 255 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if seq < 0 || seq >= len(l.entries) {
			return fmt.Errorf("sessionlog: no event at seq %d", seq)
		}
		e := l.entries[seq]
		if cap(buf) < int(e.size) {
			buf = make([]byte, e.size)
		}
		buf = buf[:e.size]
		if _, err := file.ReadAt(buf, e.off); err != nil {
			return fmt.Errorf("reading the session log again: %w", err)
		}
		ev, err := decodeLine(buf, seq+2, true)
		if err != nil || ev.Seq != seq || codeOf(ev.Type) != e.typ {
			return ErrChanged
		}
		if err := f(ev); err != nil {
			return err
		}
	}
	return nil
}

// LineSize returns the length in bytes of the line of the event at seq: the bytes before its
// "\n" (a "\r" before it included), so that a reader can tell a line too long to decode for
// its purpose before reading it.
func (l *Log) LineSize(seq int) int { return int(l.entries[seq].size) }

// LinePrefix reads again the first n bytes of the line of the event at seq (the whole line when
// it is shorter, without a "\r" at its end), as the file holds them and undecoded: what a page shows of a line too long to
// decode whole holds n bytes, not the line. A file that was replaced or cut gives ErrChanged.
func (l *Log) LinePrefix(ctx context.Context, seq, n int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if seq < 0 || seq >= len(l.entries) {
		return nil, fmt.Errorf("sessionlog: no event at seq %d", seq)
	}
	file, info, err := openRegular(l.Path)
	if err != nil {
		return nil, fmt.Errorf("reading the session log again: %w", err)
	}
	defer file.Close()
	if !os.SameFile(info, l.info) || info.Size() < l.Size {
		return nil, ErrChanged
	}
	e := l.entries[seq]
	buf := make([]byte, min(max(n, 0), int(e.size)))
	if _, err := file.ReadAt(buf, e.off); err != nil {
		return nil, fmt.Errorf("reading the session log again: %w", err)
	}
	if len(buf) == int(e.size) {
		buf = trimLine(buf)
	}
	return buf, nil
}

// DeriveMessages projects events (in seq order) into the message history a request is built
// from: the messages of user/message, assistant/message and tool/result events, in log order;
// when the events hold a compaction, the latest one's summary message (SummaryMessage) and then
// the messages of the events with seq >= its firstKeptSeq. Every other event contributes
// nothing. It is pure: the same events give the same messages.
func DeriveMessages(events []Event) []tinypi.Message {
	var out []tinypi.Message
	for _, e := range MessageEvents(events) {
		if e.Compaction != nil {
			out = append(out, SummaryMessage(e))
		} else {
			out = append(out, e.Message)
		}
	}
	return out
}

// MessageEvents returns the events DeriveMessages projects, in the same order (the latest
// compaction first, for its summary): a view that needs to know which event each derived
// message came from walks these.
func MessageEvents(events []Event) []Event {
	from, kept := 0, -1
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Compaction != nil && codeOf(events[i].Type) == codeCompaction {
			from, kept = i, events[i].Compaction.FirstKeptSeq
			break
		}
	}
	var out []Event
	if kept >= 0 {
		out = append(out, events[from])
	}
	for _, e := range events {
		if codeOf(e.Type).isMessage() && e.Message != nil && e.Seq >= kept {
			out = append(out, e)
		}
	}
	return out
}

// SummaryMessage returns the message a compaction event e stands for in the history: a user
// message with one text block,
//
//	The conversation before this point was compacted into the summary below.
//
//	<summary>
//	{Summary}
//	</summary>
//
//	Files read: {ReadFiles joined by ", ", or "(none)"}
//	Files changed: {ChangedFiles joined by ", ", or "(none)"}
//
// (no newline at the end), its Timestamp e's time in milliseconds since the Unix epoch (0 when
// the event has no time). It returns nil when e is no compaction.
func SummaryMessage(e Event) tinypi.Message {
	c := e.Compaction
	if c == nil {
		return nil
	}
	files := func(names []string) string {
		if len(names) == 0 {
			return "(none)"
		}
		return strings.Join(names, ", ")
	}
	text := "The conversation before this point was compacted into the summary below.\n\n<summary>\n" + c.Summary +
		"\n</summary>\n\nFiles read: " + files(c.ReadFiles) + "\nFiles changed: " + files(c.ChangedFiles)
	var ms int64
	if !e.Time.IsZero() {
		ms = e.Time.UnixMilli()
	}
	return tinypi.UserMessage{Content: []tinypi.ContentBlock{tinypi.Text(text)}, Timestamp: ms}
}
