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
// # Reading
//
// ReadFile reads a log in one pass, in time and memory linear in its events: it checks every
// line as it goes (each reference is looked up in an index, each request's message count is a
// running count) and keeps an index of the events, not the events themselves. A Log hands out
// the events a caller shows (Log.Events) by reading their lines again. What it refuses before
// reading a byte: a path that is not a regular file (a FIFO, a device, a directory: opening
// them could block or never end) and a file above Options.MaxBytes. While reading, a line
// longer than MaxLineBytes is refused where it starts, without holding it.
//
// # Damage
//
// ReadFile returns an *Error whose Kind says what is wrong: a torn log (the last line is not
// complete JSON, as when the writer stopped in the middle of a line; the events before it are
// returned too), damage before the last line (bad JSON, a missing field, a seq out of step, an
// unknown type not marked ignorable, a result that refers to no call, a request whose count does
// not match the log, a tool/start that is not its call's first and only start before its result),
// a header of another format, or another version, a byte order mark, a line too long, a file too
// large or not a regular file. Error.Explain says what is wrong and how to repair it, in either
// language.
package sessionlog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
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
	// MaxLineBytes is the longest line, header or event, ReadFile accepts: 16 MiB. An event
	// holds one message; tinypi's tools cap what they return far below this.
	MaxLineBytes = 16 << 20
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
)

var codeTypes = [...]Type{codeOther: "", codeUserMessage: TypeUserMessage, codeAssistantMessage: TypeAssistantMessage,
	codeToolCall: TypeToolCall, codeToolStart: TypeToolStart, codeToolResult: TypeToolResult,
	codeTurnStart: TypeTurnStart, codeTurnEnd: TypeTurnEnd, codeModelRequest: TypeModelRequest}

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

// MessagesThrough returns how many messages the events with seq <= seq derive (0 for -1).
func (l *Log) MessagesThrough(seq int) int {
	if seq < 0 {
		return 0
	}
	return int(l.entries[min(seq, len(l.entries)-1)].msgs)
}

// MessageSeq returns the seq of the event the i-th derived message (from 0) comes from.
func (l *Log) MessageSeq(i int) int { return int(l.msgSeqs[i]) }

// RequestAt returns the data of the model/request at seq, and whether the event is one.
func (l *Log) RequestAt(seq int) (Request, bool) {
	if seq < 0 || seq >= len(l.entries) || l.entries[seq].typ != codeModelRequest {
		return Request{}, false
	}
	e := l.entries[seq]
	return Request{ThroughSeq: int(e.ref), Messages: int(e.requested)}, true
}

// NextRequest returns the seq of the first model/request after seq after whose ThroughSeq is at
// least through, or -1.
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

// Options configure ReadFile.
type Options struct {
	// MaxBytes is the largest file ReadFile reads: 0 means DefaultMaxBytes, a negative value no
	// limit.
	MaxBytes int64
	// Visit, when set, is called with every event in log order as the pass reads it, after the
	// event passed every check. The event is the caller's to keep.
	Visit func(Event)
	// Progress, when set, is called with the number of bytes read so far after about every
	// MiB the pass reads.
	Progress func(read int64)
}

func (o Options) maxBytes() int64 {
	switch {
	case o.MaxBytes == 0:
		return DefaultMaxBytes
	case o.MaxBytes < 0:
		return -1
	}
	return o.MaxBytes
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
		if codeOf(e.Type).isMessage() && e.Message != nil {
			out = append(out, e)
		}
	}
	return out
}

// openRegular opens path for reading when it is a regular file (symbolic links followed), and
// refuses anything else without blocking: the mode is checked before the file is opened, the
// file is opened non-blocking (a FIFO put in its place meanwhile does not wait for a writer),
// and checked again once open.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil, &Error{Kind: KindNotRegular, Path: path, Mode: info.Mode()}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err = f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = &Error{Kind: KindNotRegular, Path: path, Mode: info.Mode()}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// ReadFile reads the log at path in one pass (see the package comment). On an *Error of
// KindTorn the intact events before the torn line come back too; on any other error the Log is
// nil. It stops with ctx's error when ctx ends, within one batch of lines (at most 512 lines or
// 256 KiB, or one long line). The lines are decoded on up to GOMAXPROCS goroutines, checked and
// indexed in order; all of them have ended when ReadFile returns.
func ReadFile(ctx context.Context, path string, opts Options) (*Log, error) {
	log, err := readFile(ctx, path, opts)
	var e *Error
	if errors.As(err, &e) {
		e.Path = path
	}
	return log, err
}

func readFile(ctx context.Context, path string, opts Options) (*Log, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, info, err := openRegular(path)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, err
		}
		return nil, fmt.Errorf("reading the session log: %w", err)
	}
	defer f.Close()
	limit := opts.maxBytes()
	if limit >= 0 && info.Size() > limit {
		return nil, &Error{Kind: KindTooLarge, Size: info.Size(), Limit: limit}
	}
	var r io.Reader = f
	if limit >= 0 {
		r = io.LimitReader(f, limit+1) // a file that grows past the limit while it is read
	}
	rd := &reader{
		ctx:      ctx,
		br:       bufio.NewReaderSize(r, 64<<10),
		limit:    limit,
		visit:    opts.Visit,
		progress: opts.Progress,
		size:     info.Size(),
		askers:   map[string]int{},
		names:    map[string]string{},
		log:      &Log{Path: path, info: info},
	}
	// A guess from the size of the shape most logs have, never more than a few MB: a file that
	// turns out to be no log must not cost its size in memory before its first line is read.
	rd.log.entries = make([]entry, 0, min(info.Size()/150, 1<<16))
	return rd.read()
}

// reader is one pass over a log. After the header, one goroutine cuts lines (br, long, lineNo,
// limit: nextLine's) and the goroutine of ReadFile checks and indexes them (everything else).
type reader struct {
	ctx      context.Context
	br       *bufio.Reader
	limit    int64
	visit    func(Event)
	progress func(int64)
	reported int64 // the bytes read when progress was last called
	size     int64 // the file's size when it was opened

	off     int64  // where the next line starts
	long    []byte // a line longer than the bufio buffer, assembled
	lineNo  int    // the number of the line last read
	askers  map[string]int
	names   map[string]string // tool names, kept once
	log     *Log
	pending *Error // a torn last line, reported after the events before it
}

// nextLine returns the next line, which starts at off in the file, with its "\n" if it has one
// (valid until the next call), whether it has one, and io.EOF after the last line. A line longer
// than MaxLineBytes is an error, found without holding more than MaxLineBytes of it; so is a
// line that ends beyond the size limit. Only one goroutine at a time calls it.
func (r *reader) nextLine(off int64) (line []byte, terminated bool, err error) {
	r.long = r.long[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if len(r.long)+len(chunk) > MaxLineBytes {
				return nil, false, &Error{Kind: KindLongLine, Line: r.lineNo + 1, Limit: MaxLineBytes}
			}
			r.long = appendDoubling(r.long, chunk)
			continue
		case err == nil:
			terminated = true
		case errors.Is(err, io.EOF):
			if len(chunk) == 0 && len(r.long) == 0 {
				return nil, false, io.EOF
			}
		default:
			return nil, false, fmt.Errorf("reading the session log: %w", err)
		}
		if len(r.long) > 0 {
			r.long = appendDoubling(r.long, chunk)
			chunk = r.long
		}
		r.lineNo++
		if n := len(chunk); n > MaxLineBytes+1 || (n > MaxLineBytes && !terminated) {
			return nil, false, &Error{Kind: KindLongLine, Line: r.lineNo, Limit: MaxLineBytes}
		}
		if r.limit >= 0 && off+int64(len(chunk)) > r.limit {
			return nil, false, &Error{Kind: KindTooLarge, Size: off + int64(len(chunk)), Limit: r.limit}
		}
		return chunk, terminated, nil
	}
}

// trimLine is a line without its "\n" or "\r\n".
func trimLine(line []byte) []byte {
	return bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
}

// at sets where the line of a line's *Error starts.
func at(err error, off int64) error {
	var le *Error
	if errors.As(err, &le) && le.Line > 0 {
		le.Offset = off
	}
	return err
}

// appendDoubling is append that at least doubles the capacity when it grows: append grows
// large slices by a quarter, which copies a 16 MiB line about five times its size.
func appendDoubling(buf, more []byte) []byte {
	if need := len(buf) + len(more); need > cap(buf) {
		grown := make([]byte, len(buf), max(need, 2*cap(buf), 4096))
		copy(grown, buf)
		buf = grown
	}
	return append(buf, more...)
}

// atEOF reports whether nothing follows the line last read.
func (r *reader) atEOF() bool {
	_, err := r.br.Peek(1)
	return err != nil
}

func (r *reader) read() (*Log, error) {
	log := r.log
	chunk, _, err := r.nextLine(0)
	if errors.Is(err, io.EOF) {
		return nil, &Error{Kind: KindHeader, Line: 1, Detail: "the file is empty"}
	}
	if err != nil {
		return nil, err
	}
	size, line := len(chunk), trimLine(chunk)
	if bytes.HasPrefix(line, []byte("\xef\xbb\xbf")) {
		return nil, &Error{Kind: KindBOM, Line: 1, Detail: "the file starts with a UTF-8 byte order mark"}
	}
	if err := readHeader(line, &log.Header); err != nil {
		// A header cut off while it was written is the start of a JSON object; a file whose one
		// line is anything else is not a session log at all, and deleting its line repairs nothing.
		if r.atEOF() && bytes.HasPrefix(line, []byte("{")) && !json.Valid(line) {
			return nil, &Error{Kind: KindTorn, Line: 1, Detail: err.Error()}
		}
		return nil, err
	}
	r.off += int64(size)
	log.Size = r.off
	return r.events()
}

// A batch is a run of consecutive event lines: cut from the file in order by the reading
// goroutine, decoded by a worker (the JSON work, most of a read's time), then checked and
// indexed in order by the goroutine that called ReadFile.
type batch struct {
	first int    // the line number of its first line
	data  []byte // the lines, newlines included
	// lines are where each line is: its start in data, its length without the newline, and
	// whether it has one; off is where data starts in the file.
	lines []lineSpan
	off   int64
	// last is set on the batch that ends the file; err on a batch cut short by an error of
	// reading (its lines before the error are good).
	last bool
	err  error

	events []Event // decoded, one per line, filled by the worker
	errs   []error
	done   chan struct{} // closed when events and errs are filled
}

type lineSpan struct {
	start, size int
	terminated  bool
}

// batchLines and batchBytes bound a batch; a longer line makes a batch of its own.
const (
	batchLines = 512
	batchBytes = 256 << 10
)

// events reads the event lines after the header: cutting (this goroutine's helper), decoding
// (workers) and checking (this goroutine) overlap. Every goroutine it starts has ended when it
// returns.
func (r *reader) events() (*Log, error) {
	stop := make(chan struct{})
	ordered := make(chan *batch, 2)
	jobs := make(chan *batch, 2)
	// The buffers of batches already indexed, for the next ones: nothing an event holds points
	// into them.
	free := make(chan []byte, 4)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ordered)
		defer close(jobs)
		r.cut(stop, ordered, jobs, free)
	}()
	for range max(1, min(runtime.GOMAXPROCS(0), 8)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range jobs {
				b.events = make([]Event, len(b.lines))
				b.errs = make([]error, len(b.lines))
				for i, l := range b.lines {
					b.events[i], b.errs[i] = decodeLine(b.text(l), b.first+i, false)
				}
				close(b.done)
			}
		}()
	}
	log := r.log
	for b := range ordered {
		select {
		case <-b.done:
		case <-r.ctx.Done():
			return nil, r.ctx.Err()
		}
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
		off := b.off
		for i, l := range b.lines {
			lineNo := b.first + i
			if len(log.entries) == math.MaxInt32 {
				return nil, &Error{Kind: KindTooLarge, Size: off, Limit: off}
			}
			e, err := b.events[i], b.errs[i]
			if err == nil {
				err = r.check(&e)
			}
			last := b.last && i == len(b.lines)-1
			raw := b.text(l)
			if err != nil {
				var le *Error
				if errors.As(err, &le) && last && !json.Valid(raw) {
					// Only the last line is cut off: the writer stopped in the middle of it.
					return log, &Error{Kind: KindTorn, Line: lineNo, Offset: off, Detail: le.Detail, Intact: len(log.entries), Unterminated: !l.terminated}
				}
				return nil, at(err, off)
			}
			if last && !l.terminated {
				// Complete JSON but no "\n": the write may still have been cut short, and
				// tinypi.LoadSession cuts such a line off, so it is not an event of the log.
				return log, &Error{Kind: KindTorn, Line: lineNo, Offset: off, Detail: "the last line does not end with a newline", Intact: len(log.entries), Unterminated: true}
			}
			size := l.size
			if l.terminated {
				size--
			}
			r.off = off + int64(l.size)
			r.add(&e, off, size)
			off += int64(l.size)
		}
		if r.progress != nil && r.off-r.reported >= 1<<20 {
			r.reported = r.off
			r.progress(r.off)
		}
		if b.err != nil {
			return nil, b.err
		}
		select {
		case free <- b.data[:0]:
		default:
		}
	}
	return log, nil
}

// text is the line l of b without its newline (and a "\r" before it).
func (b *batch) text(l lineSpan) []byte { return trimLine(b.data[l.start : l.start+l.size]) }

// cut reads the event lines into batches and hands each to ordered (for checking, in order)
// and to jobs (for decoding), until the file ends, reading fails or stop is closed. It takes the
// buffers of batches from free when there are some.
func (r *reader) cut(stop <-chan struct{}, ordered, jobs chan<- *batch, free <-chan []byte) {
	off := r.off
	for {
		b := &batch{first: r.lineNo + 1, off: off, done: make(chan struct{})}
		select {
		case b.data = <-free:
		default:
			// A batch's bytes, and the line that passes the mark, without growing: as much as
			// is left of the file when that is less.
			b.data = make([]byte, 0, max(0, min(batchBytes+16<<10, r.size-off+1)))
		}
		for len(b.lines) < batchLines && len(b.data) < batchBytes {
			chunk, terminated, err := r.nextLine(off)
			if errors.Is(err, io.EOF) {
				b.last = true
				break
			}
			if err != nil {
				b.err = at(err, off)
				break
			}
			b.lines = append(b.lines, lineSpan{start: len(b.data), size: len(chunk), terminated: terminated})
			b.data = append(b.data, chunk...)
			off += int64(len(chunk))
		}
		if !b.last && b.err == nil && r.atEOF() {
			b.last = true
		}
		select {
		case ordered <- b:
		case <-stop:
			return
		}
		select {
		case jobs <- b:
		case <-stop:
			return
		}
		if b.last || b.err != nil {
			return
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

// decodeLine decodes line lineNo on its own: what one line must be whatever the lines before it.
// Event.Data is set when withData is.
func decodeLine(line []byte, lineNo int, withData bool) (Event, error) {
	if !withData {
		if e, ok := decodeFast(line, lineNo); ok {
			return e, nil
		}
	}
	return decodeSlow(line, lineNo)
}

// decodeSlow is decodeLine in the plain way: the envelope, then the payload its type wants. It
// is the definition of a valid line and of the error for an invalid one; decodeFast gives the
// same event for a valid line in one decoding of the line.
func decodeSlow(line []byte, lineNo int) (Event, error) {
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
	e := Event{Type: *env.Type, Seq: *env.Seq, Data: env.Data, SourceEventSeqs: env.SourceEventSeqs,
		Ignorable: env.Ignorable, Line: lineNo, Bytes: len(line)}
	if env.Time != "" {
		t, err := time.Parse(time.RFC3339Nano, env.Time)
		if err != nil {
			return damaged("time %q is not an RFC 3339 time", env.Time)
		}
		e.Time = t
	}
	switch codeOf(e.Type) {
	case codeUserMessage, codeAssistantMessage, codeToolResult:
		m, err := decodeMessage(e.Data)
		if err != nil {
			return damaged("%s: %v", e.Type, err)
		}
		want := map[Type]tinypi.Role{TypeUserMessage: tinypi.RoleUser, TypeAssistantMessage: tinypi.RoleAssistant, TypeToolResult: tinypi.RoleToolResult}[e.Type]
		if m.MessageRole() != want {
			return damaged("%s holds a %s message, want %s", e.Type, m.MessageRole(), want)
		}
		e.Message = m
	case codeToolCall:
		var c Call
		if err := json.Unmarshal(e.Data, &c); err != nil || c.CallID == "" || c.Name == "" {
			return damaged("tool/call needs data {\"callId\",\"name\",\"arguments\"}")
		}
		e.Call = &c
	case codeToolStart:
		var c Call
		if err := json.Unmarshal(e.Data, &c); err != nil || c.CallID == "" || c.Name == "" {
			return damaged("tool/start needs data {\"callId\",\"name\"}")
		}
		e.Call = &c
	case codeModelRequest:
		var rq struct {
			ThroughSeq *int `json:"throughSeq"`
			Messages   *int `json:"messages"`
		}
		if err := json.Unmarshal(e.Data, &rq); err != nil || rq.ThroughSeq == nil || rq.Messages == nil {
			return damaged("model/request needs data {\"throughSeq\",\"messages\"}")
		}
		e.Request = &Request{ThroughSeq: *rq.ThroughSeq, Messages: *rq.Messages}
	}
	return e, nil
}

// fastLine is an event line with the payloads of every known type in one struct, so that a
// valid line is decoded by one json.Unmarshal (the message inside by tinypi's decoder). Its
// fields need no allocation of their own: a missing field is a zero value or an unset flag.
type fastLine struct {
	Type            string    `json:"type"`
	Seq             intField  `json:"seq"`
	Time            timeField `json:"time"`
	SourceEventSeqs []int     `json:"sourceEventSeqs"`
	Ignorable       bool      `json:"ignorable"`
	Data            fastData  `json:"data"`
}

type fastData struct {
	Message    messageField `json:"message"`
	CallID     string       `json:"callId"`
	Name       string       `json:"name"`
	Arguments  string       `json:"arguments"`
	ThroughSeq intField     `json:"throughSeq"`
	Messages   intField     `json:"messages"`
}

// intField is an integer and whether the line had it.
type intField struct {
	v   int
	set bool
}

func (f *intField) UnmarshalJSON(data []byte) error {
	n, err := strconv.Atoi(string(data)) // no copy: the conversion does not escape
	if err != nil {
		return err // not an integer (a string, a fraction, null): decodeSlow explains it
	}
	f.v, f.set = n, true
	return nil
}

// timeField is the time of a line, parsed where the line holds it; set is false when the line
// has none.
type timeField struct {
	t   time.Time
	set bool
}

func (f *timeField) UnmarshalJSON(data []byte) error {
	f.set = true
	// time.Time reads RFC 3339 strictly, from the bytes; anything it refuses (an empty or
	// unusual time) is left to decodeSlow, which says whether it is a time at all.
	return f.t.UnmarshalJSON(data)
}

// messageField decodes a message with tinypi.UnmarshalMessage where the line holds it.
type messageField struct {
	m   tinypi.Message
	err error
	set bool
}

func (f *messageField) UnmarshalJSON(data []byte) error {
	f.set = true
	f.m, f.err = tinypi.UnmarshalMessage(data)
	return nil // an error is decodeFast's to see: it falls back to decodeSlow
}

// decodeFast decodes a valid line of a type with a decoded payload (a message, a call, a
// request) without its Data; ok is false for anything else (an invalid line, another type, a
// payload that is not an object), which decodeSlow then decodes and explains.
func decodeFast(line []byte, lineNo int) (Event, bool) {
	var l fastLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type == "" || !l.Seq.set {
		return Event{}, false
	}
	e := Event{Type: Type(l.Type), Seq: l.Seq.v, SourceEventSeqs: l.SourceEventSeqs, Ignorable: l.Ignorable, Line: lineNo, Bytes: len(line)}
	if l.Time.set {
		e.Time = l.Time.t
	}
	c := codeOf(e.Type)
	switch c {
	case codeOther, codeTurnStart, codeTurnEnd:
		// Their Data is all a reader shows of them (and compares): decodeSlow keeps it.
		return Event{}, false
	}
	d := &l.Data
	switch c {
	case codeUserMessage, codeAssistantMessage, codeToolResult:
		if !d.Message.set || d.Message.err != nil || d.Message.m == nil || d.Message.m.MessageRole() != roleOf[c] {
			return Event{}, false
		}
		e.Message = d.Message.m
	case codeToolCall, codeToolStart:
		if d.CallID == "" || d.Name == "" {
			return Event{}, false
		}
		e.Call = &Call{CallID: d.CallID, Name: d.Name, Arguments: d.Arguments}
	case codeModelRequest:
		if !d.ThroughSeq.set || !d.Messages.set {
			return Event{}, false
		}
		e.Request = &Request{ThroughSeq: d.ThroughSeq.v, Messages: d.Messages.v}
	}
	return e, true
}

// roleOf is the role of the message of each message type.
var roleOf = map[typeCode]tinypi.Role{codeUserMessage: tinypi.RoleUser, codeAssistantMessage: tinypi.RoleAssistant, codeToolResult: tinypi.RoleToolResult}

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

// check checks e, decoded from the next line, against the events before it: its seq, the
// references of a start or a result, the count of a request, a type this reader knows.
func (r *reader) check(e *Event) error {
	entries := r.log.entries
	if want := len(entries); e.Seq != want {
		return &Error{Kind: KindSeq, Line: e.Line, Seq: e.Seq, WantSeq: want,
			Detail: fmt.Sprintf("seq %d, want %d (the number of events before it)", e.Seq, want)}
	}
	damaged := func(format string, args ...any) error {
		return &Error{Kind: KindDamaged, Line: e.Line, Detail: fmt.Sprintf(format, args...)}
	}
	switch codeOf(e.Type) {
	case codeOther:
		if !e.Ignorable {
			return &Error{Kind: KindUnknownType, Line: e.Line, Type: string(e.Type),
				Detail: fmt.Sprintf("unknown event type %q, not marked ignorable", e.Type)}
		}
	case codeToolStart:
		call, src, err := r.callOf(e)
		if err != nil {
			return damaged("%v", err)
		}
		if call.ID != e.Call.CallID || call.Name != e.Call.Name {
			return damaged("tool/start of %s %q refers to seq %d, the tool/call of %s %q", e.Call.Name, e.Call.CallID, src, call.Name, call.ID)
		}
		if call.Start >= 0 {
			return damaged("a second tool/start for the tool/call at seq %d", src)
		}
		if call.Result >= 0 {
			return damaged("a tool/start for the tool/call at seq %d after its result", src)
		}
	case codeToolResult:
		call, src, err := r.callOf(e)
		if err != nil {
			return damaged("%v", err)
		}
		if id := e.Message.(tinypi.ToolResultMessage).ToolCallID; call.ID != id {
			return damaged("tool/result for call %q refers to seq %d, the tool/call of %q", id, src, call.ID)
		}
		if call.Result >= 0 {
			return damaged("a second tool/result for the tool/call at seq %d", src)
		}
	case codeModelRequest:
		rq := e.Request
		// -1 is a request frozen before any event: it holds no message.
		if rq.ThroughSeq < -1 || rq.ThroughSeq >= e.Seq {
			return damaged("model/request throughSeq %d, want an earlier event (-1 to %d)", rq.ThroughSeq, e.Seq-1)
		}
		if n := r.log.MessagesThrough(rq.ThroughSeq); n != rq.Messages {
			return damaged("model/request says %d messages, but the events through seq %d derive %d", rq.Messages, rq.ThroughSeq, n)
		}
	}
	return nil
}

// callOf returns the tool/call a tool/start or tool/result refers to: its sourceEventSeqs must be
// exactly [seq of an earlier tool/call].
func (r *reader) callOf(e *Event) (*CallInfo, int, error) {
	if len(e.SourceEventSeqs) != 1 {
		return nil, 0, fmt.Errorf("%s needs sourceEventSeqs [seq of its tool/call], has %v", e.Type, e.SourceEventSeqs)
	}
	src := e.SourceEventSeqs[0]
	entries := r.log.entries
	if src < 0 || src >= len(entries) || entries[src].typ != codeToolCall {
		return nil, 0, fmt.Errorf("%s refers to seq %d, which is not an earlier tool/call", e.Type, src)
	}
	return &r.log.calls[entries[src].ref], src, nil
}

// add puts e, checked, into the index; its line starts at off and is size bytes long.
func (r *reader) add(e *Event, off int64, size int) {
	log := r.log
	c := codeOf(e.Type)
	en := entry{off: off, size: int32(size), typ: c}
	if n := len(log.entries); n > 0 {
		en.msgs = log.entries[n-1].msgs
	}
	if c.isMessage() {
		en.msgs++
		log.msgSeqs = append(log.msgSeqs, int32(e.Seq))
	}
	switch c {
	case codeAssistantMessage:
		for _, b := range e.Message.(tinypi.AssistantMessage).Content {
			if tc, ok := b.(tinypi.ToolCall); ok {
				r.askers[tc.ID] = e.Seq
			}
		}
	case codeToolCall:
		name, ok := r.names[e.Call.Name]
		if !ok {
			name = e.Call.Name
			r.names[name] = name
		}
		asker, ok := r.askers[e.Call.CallID]
		if !ok {
			asker = -1
		}
		en.ref = int32(len(log.calls))
		log.calls = append(log.calls, CallInfo{Seq: e.Seq, ID: e.Call.CallID, Name: name, Asker: asker, Start: -1, Result: -1})
	case codeToolStart:
		en.ref = int32(e.SourceEventSeqs[0])
		log.calls[log.entries[en.ref].ref].Start = e.Seq
	case codeToolResult:
		en.ref = int32(e.SourceEventSeqs[0])
		log.calls[log.entries[en.ref].ref].Result = e.Seq
	case codeModelRequest:
		en.ref, en.requested = int32(e.Request.ThroughSeq), int32(e.Request.Messages)
	}
	log.entries = append(log.entries, en)
	log.Size = r.off
	if r.visit != nil {
		r.visit(*e)
	}
}
