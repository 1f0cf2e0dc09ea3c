package tinypi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// DefaultMaxLineBytes is the longest line LoadSession reads when SessionOptions.MaxLineBytes is
// zero: 64 MiB, far more than an event of a conversation needs, and a bound on what one line of a
// hostile or broken file can make the reader hold.
const DefaultMaxLineBytes = 64 << 20

// ErrNotRegularFile is wrapped by the error of LoadSession for a path that is not a regular
// file (a directory, a named pipe, a device): a session log is a regular file.
var ErrNotRegularFile = errors.New("not a regular file")

// SessionDamageError reports a session file that cannot be loaded: damage before its last line,
// a bad header, an event that breaks a rule of the log, a line over the length limit. Line is the
// 1-based line number (the header is line 1).
type SessionDamageError struct {
	Path   string
	Line   int
	Reason string
}

// Error implements error.
func (e *SessionDamageError) Error() string {
	return fmt.Sprintf("tinypi: session %s is damaged at line %d: %s", e.Path, e.Line, e.Reason)
}

// SessionRepair says what LoadSession repaired.
type SessionRepair struct {
	// TornBytes is the length of the torn last line that was cut off (0 when none).
	TornBytes int
	// Appended are the seqs of the results crash repair appended for calls left without one, in
	// call order, then of the turn/end of an interrupted turn. The tool/calls it logged for calls
	// that had none are not listed.
	Appended []int
}

// LoadSession opens the session file at path, repairs what a crash left, and returns the session
// ready to append to, its background writer running. Close it when done.
//
// A path that is not a regular file (a directory, a named pipe, a device) is refused at once,
// without waiting for a writer, with an error that wraps ErrNotRegularFile.
//
// A last line without its "\n" is torn: a write the crash cut short. It is cut off the file.
// Any other damage is refused with a *SessionDamageError naming the line, and the file is left
// as it was: a line that is not an event, a seq out of step, an event that Append would refuse
// (the file is checked by the same rules, see checkLocked), a line longer than
// SessionOptions.MaxLineBytes (which is not kept in memory), a fork whose file ends before its
// fork point or whose fork point is not a turn/end (a fork's file is written whole when the fork
// is made, so a crash cannot cut it there).
//
// Crash repair then appends, in call order, a result for every logged call that has none: code
// TOOL_NOT_STARTED when its tool/start is missing, TOOL_OUTCOME_UNKNOWN when the body began (it
// may have had effects, so it must not silently run again). A call the last assistant message
// asked for that never got its tool/call (whatever the message's stop reason: the loop logs the
// calls of a cut-off answer too) is logged first, then answered as not started. Last, an
// interrupted turn gets its turn/end with reason "interrupted". The repairs are flushed before
// LoadSession returns.
func LoadSession(path string, opts SessionOptions) (*Session, SessionRepair, error) {
	var repair SessionRepair
	in, info, err := openRegular(path)
	if err != nil {
		return nil, repair, err
	}
	defer in.Close()
	opts.Path = path
	s, intact, size, err := readSessionFile(path, in, opts)
	if err != nil {
		return nil, repair, err
	}
	out, err := openForAppend(path, info)
	if err != nil {
		return nil, repair, err
	}
	if intact < size {
		repair.TornBytes = int(size - intact)
		if err := out.Truncate(intact); err != nil {
			out.Close()
			return nil, repair, fmt.Errorf("tinypi: session: cutting the torn last line of %s: %w", path, err)
		}
	}
	s.attach(opts, out, s.Len())
	// The writer runs from here on: stop it on every way out but success, a panic included.
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	repair.Appended, err = s.repairCrash()
	if err == nil {
		err = s.Flush(context.Background())
	}
	if err != nil {
		return nil, repair, err
	}
	ok = true
	return s, repair, nil
}

// ReadSession reads and checks the session file at path by the rules of LoadSession and changes
// nothing: a torn last line is left out of the session but stays in the file (TornBytes says how
// long it is), no crash repair is made (Appended is empty) and no writer is attached: what is
// appended to the session stays in memory. It is for a log that is only read, such as the parent
// of a fork: forking a session must never write it.
func ReadSession(path string, opts SessionOptions) (*Session, SessionRepair, error) {
	var repair SessionRepair
	in, _, err := openRegular(path)
	if err != nil {
		return nil, repair, err
	}
	defer in.Close()
	opts.Path = path
	s, intact, size, err := readSessionFile(path, in, opts)
	if err != nil {
		return nil, repair, err
	}
	repair.TornBytes = int(size - intact)
	return s, repair, nil
}

// openRegular opens path for reading and refuses what is not a regular file. It opens without
// blocking: opening a named pipe for reading would otherwise wait for a writer.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("tinypi: session: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("tinypi: session: %w", err)
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("tinypi: session: %s is a %s, %w; a session log is one", path, fileKind(info.Mode()), ErrNotRegularFile)
	}
	return f, info, nil
}

// openForAppend opens the file that was read as info for appending, refusing a path that was
// replaced by another file meanwhile.
func openForAppend(path string, info fs.FileInfo) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("tinypi: session: %w", err)
	}
	if now, err := f.Stat(); err != nil || !os.SameFile(info, now) {
		f.Close()
		return nil, fmt.Errorf("tinypi: session: %s was replaced by another file while it was loaded", path)
	}
	return f, nil
}

// fileKind names the kind of a file that is not regular.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// readSessionFile reads and checks the session file r and returns its session, its events loaded
// but no file attached, the length of its intact part (everything but a torn last line) and the
// length read.
func readSessionFile(path string, r *os.File, opts SessionOptions) (*Session, int64, int64, error) {
	damage := func(line int, format string, args ...any) (*Session, int64, int64, error) {
		return nil, 0, 0, &SessionDamageError{Path: path, Line: line, Reason: fmt.Sprintf(format, args...)}
	}
	maxLine := opts.MaxLineBytes
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	lines := &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: maxLine}
	head, err := lines.next(true)
	switch {
	case errors.Is(err, errLineTooLong):
		return damage(1, "the header line is longer than %d bytes, the limit of SessionOptions.MaxLineBytes", maxLine)
	case err == io.EOF || err == nil && head.torn:
		return damage(1, "the header line is incomplete (the file was not created by CreateSession)")
	case err != nil:
		return nil, 0, 0, fmt.Errorf("tinypi: session: reading %s: %w", path, err)
	}
	var h SessionHeader
	if err := json.Unmarshal(head.text, &h); err != nil {
		return damage(1, "the header is not JSON: %v", err)
	}
	if h.Format != SessionFormat || h.Version != SessionVersion {
		return damage(1, "format %q version %d; this reader knows %q version %d", h.Format, h.Version, SessionFormat, SessionVersion)
	}
	forkSeq := -1
	switch {
	case h.Parent == "" && h.ForkSeq == nil:
	case h.Parent != "" && h.ForkSeq != nil && *h.ForkSeq >= 0:
		forkSeq = *h.ForkSeq
	default:
		return damage(1, "a fork's header names its parent and the seq (0 or more) it was forked at; this one has parent %q and forkSeq %s", h.Parent, forkSeqText(h.ForkSeq))
	}
	opts.ID = h.Session
	s := newSession(opts, h.Parent, forkSeq)
	if n, err := eventLines(r, head.end); err == nil {
		s.events = make([]SessionEvent, 0, n)
	}
	intact := head.end
	for line := 2; ; line++ {
		l, err := lines.next(false)
		if err == io.EOF {
			break
		}
		if errors.Is(err, errLineTooLong) {
			return damage(line, "the line is longer than %d bytes, the limit of SessionOptions.MaxLineBytes (DefaultMaxLineBytes when zero)", maxLine)
		}
		if err != nil {
			return nil, 0, 0, fmt.Errorf("tinypi: session: reading %s: %w", path, err)
		}
		//lab:begin 10.5
		if l.torn {
			break // torn: the crash cut the last write short; the line is not part of the log
		}
		//lab:stub
		//	if l.torn {
		//		panic(LAB_PENDING)
		//	}
		//lab:end
		e, err := DecodeSessionEvent(l.text)
		if err != nil {
			return damage(line, "%v", err)
		}
		if err := s.loadEvent(e); err != nil {
			return damage(line, "%s", refusal(err))
		}
		intact = l.end
	}
	if forkSeq >= 0 {
		n := len(s.events)
		if n <= forkSeq {
			return damage(n+2, "the header says this fork was taken at seq %d, but the file holds only %d events; a fork's file is written whole when the fork is made, so this is damage, not a crash", forkSeq, n)
		}
		if at := s.events[forkSeq]; at.Type != EventTurnEnd {
			return damage(forkSeq+2, "the header says this fork was taken at seq %d, which is a %s, not a turn/end", forkSeq, at.Type)
		}
		s.base, s.events = s.events[:forkSeq+1:forkSeq+1], s.events[forkSeq+1:]
	}
	return s, intact, lines.offset, nil
}

// minEventLine is the length of the shortest line that can hold an event, {"type":"x","data":0}.
const minEventLine = 21

// eventLines counts the lines of f after offset from that are long enough to hold an event, so
// that the loader allocates the log once at its size: growing it an event at a time copies it a
// dozen times over, and a copy of the whole log is garbage as large as the log. Counting is a
// pass over bytes the page cache holds, with ReadAt (the reading offset stays where it is), and
// is cheap next to decoding them; a file of short lines cannot make the loader allocate more
// than a log of its size would need. A last line without its newline is not counted.
func eventLines(f *os.File, from int64) (int, error) {
	buf := make([]byte, 256<<10)
	n, length := 0, 0
	for off := from; ; {
		read, err := f.ReadAt(buf, off)
		off += int64(read)
		for chunk := buf[:read]; len(chunk) > 0; {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				length += len(chunk)
				break
			}
			if length+i >= minEventLine {
				n++
			}
			length, chunk = 0, chunk[i+1:]
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// forkSeqText shows a header's forkSeq: its value, or "missing".
func forkSeqText(seq *int) string {
	if seq == nil {
		return "missing"
	}
	return fmt.Sprint(*seq)
}

// loadEvent adds e, read from a file, to a session nobody else knows yet, by the rules of Append:
// its seq must be the log's length and it must pass checkLocked. Its time is kept.
func (s *Session) loadEvent(e SessionEvent) error {
	if want := len(s.events); e.Seq != want {
		return refuse("seq %d where %d was due", e.Seq, want)
	}
	if err := s.checkLocked(e); err != nil {
		return err
	}
	s.events = append(s.events, e)
	s.noteLocked(e)
	return nil
}

// refusal is the reason of an error of checkLocked, without the package's prefix.
func refusal(err error) string {
	var r *refusedEvent
	if errors.As(err, &r) {
		return r.reason
	}
	return err.Error()
}

// errLineTooLong is what lineReader.next returns for a line over its limit.
var errLineTooLong = errors.New("tinypi: session: line too long")

// lineReader reads the lines of a session file, linearly and in bounded memory: it never keeps
// more than max bytes of a line.
type lineReader struct {
	r      *bufio.Reader
	max    int
	offset int64 // the bytes read so far
	buf    []byte
}

// logLine is one line that lineReader read.
type logLine struct {
	text []byte // without its "\n"; valid until the next call; nil for a torn line over the limit
	end  int64  // the offset just after the line
	torn bool   // the file ends inside the line: it has no "\n"
}

// next reads the next line; at the end of the file it returns io.EOF. A complete line of more than
// max bytes is errLineTooLong; a torn one is read to the end of the file without being kept.
// With stopEarly, a line is errLineTooLong as soon as it passes the limit, torn or not.
func (lr *lineReader) next(stopEarly bool) (logLine, error) {
	lr.buf = lr.buf[:0]
	read, over := 0, false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		read += len(chunk)
		lr.offset += int64(len(chunk))
		body := chunk
		if err == nil {
			body = chunk[:len(chunk)-1]
		}
		if !over && len(lr.buf)+len(body) > lr.max {
			over, lr.buf = true, lr.buf[:0]
		}
		if !over {
			lr.buf = append(lr.buf, body...)
		}
		switch {
		case err == nil && over:
			return logLine{end: lr.offset}, errLineTooLong
		case err == nil:
			return logLine{text: lr.buf, end: lr.offset}, nil
		case over && stopEarly:
			return logLine{end: lr.offset}, errLineTooLong
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && read == 0:
			return logLine{}, io.EOF
		case err == io.EOF:
			l := logLine{end: lr.offset, torn: true}
			if !over {
				l.text = lr.buf
			}
			return l, nil
		default:
			return logLine{}, err
		}
	}
}

// repairCrash appends what a crash left out (see LoadSession) and returns the seqs it appended.
func (s *Session) repairCrash() ([]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	//lab:begin 10.5
	type callState struct {
		call    ToolCall
		started bool
	}
	var open []int // seqs of tool/calls without a result, in log order
	state := map[int]*callState{}
	logged := map[string]bool{}
	turnOpen, turn := false, 0
	var lastAssistant *AssistantMessage
	// The whole log, inherited events first, walked where it is: joining s.base and s.events
	// into one slice would copy a long log only to read it once.
	for _, events := range [][]SessionEvent{s.base, s.events} {
		for _, e := range events {
			switch e.Type {
			case EventToolCall:
				state[e.Seq] = &callState{call: *e.Call}
				open = append(open, e.Seq)
				logged[e.Call.ID] = true
			case EventToolStart:
				state[e.SourceEventSeqs[0]].started = true
			case EventToolResult:
				delete(state, e.SourceEventSeqs[0])
			case EventAssistantMessage:
				a := e.Message.(AssistantMessage)
				lastAssistant = &a
				clear(logged)
			case EventTurnStart:
				turnOpen, turn = true, e.Turn
			case EventTurnEnd:
				turnOpen = false
			}
		}
	}
	var appended []int // the results and the turn/end, not the tool/calls logged first
	// The loop logs the calls of every assistant that has any, whatever its stop reason (a
	// cut-off answer's calls are logged and answered too): a crash may have come in between.
	if lastAssistant != nil {
		for _, call := range lastAssistant.ToolCalls() {
			if !logged[call.ID] {
				seq, err := s.appendLocked(SessionEvent{Type: EventToolCall, Call: &call})
				if err != nil {
					return nil, err
				}
				state[seq] = &callState{call: call}
				open = append(open, seq)
			}
		}
	}
	for _, callSeq := range open {
		st, ok := state[callSeq]
		if !ok {
			continue // answered
		}
		code := ToolNotStarted
		if st.started {
			code = ToolOutcomeUnknown
		}
		seq, err := s.appendLocked(SessionEvent{Type: EventToolResult, Message: repairedResult(st.call, code), SourceEventSeqs: []int{callSeq}})
		if err != nil {
			return nil, err
		}
		appended = append(appended, seq)
	}
	if turnOpen {
		seq, err := s.appendLocked(SessionEvent{Type: EventTurnEnd, Turn: turn, Reason: "interrupted"})
		if err != nil {
			return nil, err
		}
		appended = append(appended, seq)
	}
	return appended, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// repairedResult is the result crash repair writes for a call left without one.
func repairedResult(call ToolCall, code string) ToolResultMessage {
	text := "The session ended before this tool call started; it was not run."
	if code == ToolOutcomeUnknown {
		text = "The session ended while this tool call was running; its outcome is unknown and it may have had effects."
	}
	return ToolResultMessage{
		ToolCallID: call.ID,
		ToolName:   call.Name,
		Content:    []ContentBlock{Text(text)},
		Details:    map[string]any{"code": code},
		IsError:    true,
		Timestamp:  time.Now().UnixMilli(),
	}
}
