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
	"sync"
	"syscall"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

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
	// MaxLineBytes is the longest line ReadFile accepts: 0 means MaxLineBytes, the limit every
	// caller of the kit uses; tests set a small one to exercise the limit cheaply.
	MaxLineBytes int
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

func (o Options) maxLineBytes() int {
	if o.MaxLineBytes <= 0 {
		return MaxLineBytes
	}
	return o.MaxLineBytes
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
// 256 KiB) or 64 KiB of a long line. The lines are decoded on up to GOMAXPROCS goroutines, checked and
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
		maxLine:  opts.maxLineBytes(),
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
	maxLine  int // the longest line accepted
	visit    func(Event)
	progress func(int64)
	reported int64 // the bytes read when progress was last called
	size     int64 // the file's size when it was opened

	off    int64  // where the next line starts
	long   []byte // a line longer than the bufio buffer, assembled
	lineNo int    // the number of the line last read
	askers map[string]int
	names  map[string]string // tool names, kept once
	log    *Log
}

// nextLine returns the next line, which starts at off in the file, with its "\n" if it has one
// (valid until the next call), whether it has one, and io.EOF after the last line. A line longer
// than r.maxLine is an error, found without holding more than r.maxLine of it; so is a line that
// ends beyond the size limit. A long line is read in pieces, and reading it stops when r.ctx
// ends. Only one goroutine at a time calls it.
func (r *reader) nextLine(off int64) (line []byte, terminated bool, err error) {
	r.long = r.long[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if len(r.long)+len(chunk) > r.maxLine {
				return nil, false, &Error{Kind: KindLongLine, Line: r.lineNo + 1, Limit: int64(r.maxLine)}
			}
			if err := r.ctx.Err(); err != nil {
				return nil, false, err
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
		if n := len(chunk); n > r.maxLine+1 || (n > r.maxLine && !terminated) {
			return nil, false, &Error{Kind: KindLongLine, Line: r.lineNo, Limit: int64(r.maxLine)}
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
// large slices by a quarter, which copies a 64 MiB line about five times its size.
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
		en.msgs, en.compaction = log.entries[n-1].msgs, log.entries[n-1].compaction
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
	case codeCompaction:
		// decodeLine made sure that 0 <= FirstKeptSeq < e.Seq: the event before the cut is indexed.
		kept := e.Compaction.FirstKeptSeq
		c := compactionInfo{seq: int32(e.Seq), firstKept: int32(kept)}
		if kept > 0 {
			c.keptFrom = log.entries[kept-1].msgs
		}
		en.ref = int32(kept)
		log.compactions = append(log.compactions, c)
		en.compaction = int32(len(log.compactions))
	}
	log.entries = append(log.entries, en)
	log.Size = r.off
	if r.visit != nil {
		r.visit(*e)
	}
}
