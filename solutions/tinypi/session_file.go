package tinypi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// SessionFormat and SessionVersion are the header values of the JSONL file.
const (
	SessionFormat  = "tinypi-session"
	SessionVersion = 1
)

// SessionHeader is the first line of a session file. A fork names its parent and the seq of the
// turn/end it was forked at; its file still holds the whole branch, so it loads on its own.
type SessionHeader struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Session string `json:"session"`
	Parent  string `json:"parent,omitempty"`
	ForkSeq *int   `json:"forkSeq,omitempty"`
}

// sessionLine is the envelope of one event line.
type sessionLine struct {
	Type            SessionEventType `json:"type"`
	Seq             int              `json:"seq"`
	Time            string           `json:"time,omitempty"`
	Data            json.RawMessage  `json:"data"`
	SourceEventSeqs []int            `json:"sourceEventSeqs,omitempty"`
	Ignorable       bool             `json:"ignorable,omitempty"`
}

// The data objects of the event types.
type (
	messageData struct {
		Message json.RawMessage `json:"message"`
	}
	callData struct {
		CallID    string `json:"callId"`
		Name      string `json:"name"`
		Arguments string `json:"arguments,omitempty"`
	}
	turnData struct {
		Turn   int    `json:"turn"`
		Reason string `json:"reason,omitempty"`
	}
	requestData struct {
		ThroughSeq int `json:"throughSeq"`
		Messages   int `json:"messages"`
	}
	//chapter:begin 11
	compactionData struct {
		Summary      string   `json:"summary"`
		FirstKeptSeq int      `json:"firstKeptSeq"`
		TokensBefore int      `json:"tokensBefore"`
		Reason       string   `json:"reason"`
		ReadFiles    []string `json:"readFiles"`
		ChangedFiles []string `json:"changedFiles"`
	}
	//chapter:end
)

// EncodeSessionEvent returns e as one line of the file, "\n" included.
func EncodeSessionEvent(e SessionEvent) ([]byte, error) {
	//lab:begin 10.3
	var data any
	switch e.Type {
	case EventUserMessage, EventAssistantMessage, EventToolResult:
		m, err := MarshalMessage(e.Message)
		if err != nil {
			return nil, fmt.Errorf("tinypi: session: encoding event %d: %w", e.Seq, err)
		}
		data = messageData{Message: m}
	case EventToolCall, EventToolStart:
		data = callData{CallID: e.Call.ID, Name: e.Call.Name, Arguments: e.Call.Arguments}
	case EventTurnStart, EventTurnEnd:
		data = turnData{Turn: e.Turn, Reason: e.Reason}
	case EventModelRequest:
		data = requestData{ThroughSeq: e.ThroughSeq, Messages: e.Count}
	//chapter:begin 11
	case EventCompaction:
		data = encodeCompaction(e.Compaction)
	//chapter:end
	default:
		data = json.RawMessage(e.Raw)
		if len(e.Raw) == 0 {
			data = struct{}{}
		}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("tinypi: session: encoding event %d: %w", e.Seq, err)
	}
	line := sessionLine{Type: e.Type, Seq: e.Seq, Data: raw, SourceEventSeqs: e.SourceEventSeqs, Ignorable: e.Ignorable}
	if !e.Time.IsZero() {
		line.Time = e.Time.UTC().Format(time.RFC3339Nano)
	}
	out, err := json.Marshal(line)
	if err != nil {
		return nil, fmt.Errorf("tinypi: session: encoding event %d: %w", e.Seq, err)
	}
	return append(out, '\n'), nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// DecodeSessionEvent parses one line (without its "\n") back into an event.
func DecodeSessionEvent(line []byte) (SessionEvent, error) {
	var l sessionLine
	// json.Unmarshal takes the line as it is; a json.Decoder would copy it into a buffer of its
	// own, allocated per line. A line Unmarshal refuses is read again by the Decoder, whose
	// errors (and whose tolerance of a stray closing bracket after the value) are the rule.
	if json.Unmarshal(line, &l) != nil {
		l = sessionLine{}
		dec := json.NewDecoder(bytes.NewReader(line))
		if err := dec.Decode(&l); err != nil {
			return SessionEvent{}, fmt.Errorf("not a JSON event: %w", err)
		}
		if dec.More() {
			return SessionEvent{}, errors.New("more than one JSON value on the line")
		}
	}
	if l.Type == "" || len(l.Data) == 0 {
		return SessionEvent{}, errors.New(`the event has no "type" or no "data"`)
	}
	e := SessionEvent{Type: knownType(l.Type), Seq: l.Seq, SourceEventSeqs: l.SourceEventSeqs, Ignorable: l.Ignorable}
	if l.Time != "" {
		t, err := time.Parse(time.RFC3339Nano, l.Time)
		if err != nil {
			return SessionEvent{}, fmt.Errorf("time: %w", err)
		}
		e.Time = t
	}
	var err error
	switch l.Type {
	case EventUserMessage, EventAssistantMessage, EventToolResult:
		var d messageData
		if err = json.Unmarshal(l.Data, &d); err == nil {
			e.Message, err = UnmarshalMessage(d.Message)
		}
	case EventToolCall, EventToolStart:
		var d callData
		if err = json.Unmarshal(l.Data, &d); err == nil {
			e.Call = &ToolCall{ID: d.CallID, Name: d.Name, Arguments: d.Arguments}
		}
	case EventTurnStart, EventTurnEnd:
		var d turnData
		if err = json.Unmarshal(l.Data, &d); err == nil {
			e.Turn, e.Reason = d.Turn, d.Reason
		}
	case EventModelRequest:
		var d requestData
		if err = json.Unmarshal(l.Data, &d); err == nil {
			e.ThroughSeq, e.Count = d.ThroughSeq, d.Messages
		}
	//chapter:begin 11
	case EventCompaction:
		e.Compaction, err = decodeCompaction(l.Data)
	//chapter:end
	default:
		e.Raw = l.Data
	}
	if err != nil {
		return SessionEvent{}, fmt.Errorf("%s data: %w", l.Type, err)
	}
	return e, nil
}

// knownType is t, a known type spelled by its constant, so that a loaded log does not keep a copy
// of the type's name per event; an unknown type is t itself.
func knownType(t SessionEventType) SessionEventType {
	switch t {
	case EventUserMessage:
		return EventUserMessage
	case EventAssistantMessage:
		return EventAssistantMessage
	case EventToolCall:
		return EventToolCall
	case EventToolStart:
		return EventToolStart
	case EventToolResult:
		return EventToolResult
	case EventTurnStart:
		return EventTurnStart
	case EventTurnEnd:
		return EventTurnEnd
	case EventModelRequest:
		return EventModelRequest
	//chapter:begin 11
	case EventCompaction:
		return EventCompaction
		//chapter:end
	}
	return t
}

// sessionFile writes a session's events to its JSONL file: in the background, a batch at a time,
// and at once on flush. Only one write runs at a time; written counts the events on disk.
type sessionFile struct {
	s      *Session
	f      *os.File
	window time.Duration

	wakeCh chan struct{} // buffered: an append asks for a background write
	stop   chan struct{}
	done   chan struct{}

	mu      sync.Mutex // held for a whole write
	written int
	err     error // the first write error; every later flush returns it
	closed  bool

	closeOnce sync.Once
	closeErr  error
}

// CreateSession creates the session file opts.Path (which must not exist) with its header and
// returns the session, empty, with its background writer running. Close it when done.
func CreateSession(opts SessionOptions) (*Session, error) {
	s := newSession(opts, "", -1)
	if err := s.createFile(opts, nil); err != nil {
		return nil, err
	}
	return s, nil
}

// createFile writes the header and the events first, all at once, and attaches the writer. The
// file appears complete or not at all: it is written under a temporary name and linked into
// place, which also refuses to replace a file that exists.
func (s *Session) createFile(opts SessionOptions, first []SessionEvent) error {
	if opts.Path == "" {
		return errors.New("tinypi: session: SessionOptions.Path is empty")
	}
	h := SessionHeader{Format: SessionFormat, Version: SessionVersion, Session: s.id, Parent: s.parent}
	if s.forkSeq >= 0 {
		h.ForkSeq = &s.forkSeq
	}
	head, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("tinypi: session: %w", err)
	}
	buf := append(head, '\n')
	for _, e := range first {
		line, err := EncodeSessionEvent(e)
		if err != nil {
			return err
		}
		buf = append(buf, line...)
	}
	tmp, err := os.CreateTemp(filepath.Dir(opts.Path), ".session-*.tmp")
	if err != nil {
		return fmt.Errorf("tinypi: session: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf); err != nil {
		tmp.Close()
		return fmt.Errorf("tinypi: session: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("tinypi: session: %w", err)
	}
	if err := os.Link(tmp.Name(), opts.Path); err != nil {
		return fmt.Errorf("tinypi: session: creating %s: %w", opts.Path, err)
	}
	f, err := os.OpenFile(opts.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("tinypi: session: %w", err)
	}
	s.attach(opts, f, len(first))
	return nil
}

// attach makes f, open for appending, the session's file and starts the background writer;
// written events are already in it.
func (s *Session) attach(opts SessionOptions, f *os.File, written int) {
	w := &sessionFile{s: s, f: f, window: opts.FlushWindow, written: written,
		wakeCh: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if w.window <= 0 {
		w.window = DefaultFlushWindow
	}
	s.file = w
	go w.loop()
}

// wake asks the background writer for a write; it never blocks (Append holds the session lock).
func (w *sessionFile) wake() {
	select {
	case w.wakeCh <- struct{}{}:
	default:
	}
}

// loop is the write-behind: after a wake it waits one window, so that a burst of appends is
// written by one write, then writes what is pending.
func (w *sessionFile) loop() {
	defer close(w.done)
	timer := time.NewTimer(0)
	<-timer.C
	for {
		select {
		case <-w.stop:
			return
		case <-w.wakeCh:
		}
		timer.Reset(w.window)
		select {
		case <-w.stop:
			timer.Stop()
			return
		case <-timer.C:
		}
		w.write()
	}
}

// write writes every event appended and not yet written. A panic in writeBatch (a bug, or a
// stub) becomes the sticky write error, so it reaches the next barrier's caller instead of
// taking the process down from the background goroutine.
func (w *sessionFile) write() (err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			w.err = fmt.Errorf("tinypi: session: writing the log panicked: %v", p)
			err = w.err
		}
	}()
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("tinypi: session: the file is closed")
	}
	return w.writeBatch()
}

// flush is the barrier: it writes everything appended so far unless ctx is already done.
func (w *sessionFile) flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return w.write()
}

// writeBatch writes the events appended since the last write, all in one write call, and
// advances written. w.mu is held.
func (w *sessionFile) writeBatch() error {
	//lab:begin 10.3
	w.s.mu.Lock()
	total := len(w.s.base) + len(w.s.events)
	// Events are never changed once appended, so the slice can be read without the lock.
	pending := w.s.events[w.written-len(w.s.base) : total-len(w.s.base)]
	w.s.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	var buf []byte
	for _, e := range pending {
		line, err := EncodeSessionEvent(e)
		if err != nil {
			w.err = err
			return err
		}
		buf = append(buf, line...)
	}
	if _, err := w.f.Write(buf); err != nil {
		w.err = fmt.Errorf("tinypi: session: writing %s: %w", w.f.Name(), err)
		return w.err
	}
	w.written = total
	return nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// close writes what is pending, stops the writer and closes the file. Only the first call
// does anything.
func (w *sessionFile) close() error {
	w.closeOnce.Do(func() {
		err := w.write()
		close(w.stop)
		<-w.done
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		if cerr := w.f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("tinypi: session: %w", cerr)
		}
		w.closeErr = err
	})
	return w.closeErr
}

//chapter:begin 11

// encodeCompaction is the data of a compaction event; the file lists are never null.
func encodeCompaction(c *Compaction) compactionData {
	if c == nil {
		return compactionData{ReadFiles: []string{}, ChangedFiles: []string{}}
	}
	d := compactionData{Summary: c.Summary, FirstKeptSeq: c.FirstKeptSeq, TokensBefore: c.TokensBefore,
		Reason: c.Reason, ReadFiles: c.ReadFiles, ChangedFiles: c.ChangedFiles}
	if d.ReadFiles == nil {
		d.ReadFiles = []string{}
	}
	if d.ChangedFiles == nil {
		d.ChangedFiles = []string{}
	}
	return d
}

// decodeCompaction reads the data of a compaction event; the rules of the log (checkLocked)
// judge what it holds.
func decodeCompaction(raw json.RawMessage) (*Compaction, error) {
	var d compactionData
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, err
	}
	return &Compaction{Summary: d.Summary, FirstKeptSeq: d.FirstKeptSeq, TokensBefore: d.TokensBefore,
		Reason: d.Reason, ReadFiles: d.ReadFiles, ChangedFiles: d.ChangedFiles}, nil
}

//chapter:end
