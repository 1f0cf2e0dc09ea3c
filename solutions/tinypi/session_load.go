package tinypi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// SessionDamageError reports a session file that cannot be loaded: damage before its last line,
// a bad header, a seq out of step. Line is the 1-based line number (the header is line 1).
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
	// Appended are the seqs of the events crash repair appended: results for calls left without
	// one, then the turn/end of an interrupted turn.
	Appended []int
}

// LoadSession opens the session file at path, repairs what a crash left, and returns the session
// ready to append to, its background writer running. Close it when done.
//
// A last line without its "\n" is torn: a write the crash cut short. It is cut off the file.
// Any other damage (a line that is not an event, a seq out of step, an unknown type that is not
// ignorable, a result that answers no call) is refused with a *SessionDamageError naming the
// line; the file is left as it was.
//
// Crash repair then appends, in call order, a result for every logged call that has none: code
// TOOL_NOT_STARTED when its tool/start is missing, TOOL_OUTCOME_UNKNOWN when the body began (it
// may have had effects, so it must not silently run again). A call the last assistant message
// asked for that never got its tool/call is logged first, then answered as not started. Last, an
// interrupted turn gets its turn/end with reason "interrupted". The repairs are flushed before
// LoadSession returns.
func LoadSession(path string, opts SessionOptions) (*Session, SessionRepair, error) {
	var repair SessionRepair
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, repair, fmt.Errorf("tinypi: session: %w", err)
	}
	header, events, good, err := parseSessionFile(path, raw)
	if err != nil {
		return nil, repair, err
	}
	if good < len(raw) {
		repair.TornBytes = len(raw) - good
		if err := os.Truncate(path, int64(good)); err != nil {
			return nil, repair, fmt.Errorf("tinypi: session: cutting the torn last line of %s: %w", path, err)
		}
	}
	opts.Path = path
	opts.ID = header.Session
	forkSeq := -1
	if header.ForkSeq != nil {
		forkSeq = *header.ForkSeq
	}
	s := newSession(opts, header.Parent, forkSeq)
	split := min(forkSeq+1, len(events))
	s.base, s.events = events[:split:split], events[split:]
	if err := s.attach(opts, len(events)); err != nil {
		return nil, repair, err
	}
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

// parseSessionFile checks raw and returns its header, its events and the length of its intact
// part (everything but a torn last line).
func parseSessionFile(path string, raw []byte) (SessionHeader, []SessionEvent, int, error) {
	var h SessionHeader
	damage := func(line int, format string, args ...any) error {
		return &SessionDamageError{Path: path, Line: line, Reason: fmt.Sprintf(format, args...)}
	}
	end := bytes.IndexByte(raw, '\n')
	if end < 0 {
		return h, nil, 0, damage(1, "the header line is incomplete (the file was not created by CreateSession)")
	}
	if err := json.Unmarshal(raw[:end], &h); err != nil {
		return h, nil, 0, damage(1, "the header is not JSON: %v", err)
	}
	if h.Format != SessionFormat || h.Version != SessionVersion {
		return h, nil, 0, damage(1, "format %q version %d; this reader knows %q version %d", h.Format, h.Version, SessionFormat, SessionVersion)
	}
	var events []SessionEvent
	calls := map[int]bool{}
	pos := end + 1
	for line := 2; pos < len(raw); line++ {
		n := bytes.IndexByte(raw[pos:], '\n')
		//lab:begin 10.5
		if n < 0 {
			return h, events, pos, nil // torn: the crash cut the last write short
		}
		//lab:stub
		//	if n < 0 {
		//		panic(LAB_PENDING)
		//	}
		//lab:end
		e, err := DecodeSessionEvent(raw[pos : pos+n])
		if err != nil {
			return h, nil, 0, damage(line, "%v", err)
		}
		if e.Seq != len(events) {
			return h, nil, 0, damage(line, "seq %d where %d was due", e.Seq, len(events))
		}
		if !e.Type.Known() && !e.Ignorable {
			return h, nil, 0, damage(line, "unknown event type %q, not marked ignorable", e.Type)
		}
		if want, ok := messageRole(e.Type); ok && e.Message.MessageRole() != want {
			return h, nil, 0, damage(line, "a %s event holds a %s message", e.Type, e.Message.MessageRole())
		}
		if e.Type == EventToolCall {
			calls[e.Seq] = true
		}
		if e.Type == EventToolStart || e.Type == EventToolResult {
			if len(e.SourceEventSeqs) != 1 || !calls[e.SourceEventSeqs[0]] {
				return h, nil, 0, damage(line, "%s does not point at a tool/call (sourceEventSeqs %v)", e.Type, e.SourceEventSeqs)
			}
		}
		events = append(events, e)
		pos += n + 1
	}
	return h, events, pos, nil
}

// repairCrash appends what a crash left out (see LoadSession) and returns the seqs it appended.
func (s *Session) repairCrash() ([]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	//lab:begin 10.5
	all := append(append([]SessionEvent(nil), s.base...), s.events...)
	type callState struct {
		call    ToolCall
		started bool
	}
	var open []int // seqs of tool/calls without a result, in log order
	state := map[int]*callState{}
	logged := map[string]bool{}
	turnOpen, turn := false, 0
	var lastAssistant *AssistantMessage
	for _, e := range all {
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
			logged = map[string]bool{}
		case EventTurnStart:
			turnOpen, turn = true, e.Turn
		case EventTurnEnd:
			turnOpen = false
		}
	}
	if lastAssistant != nil && lastAssistant.StopReason == StopReasonToolUse {
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
	var appended []int
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
