package sessionproof

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// logModel is the tests' own account of what a session log must hold after a sequence of
// operations: the events (Time left zero) and the messages a model request built from them
// must carry. It is written from the chapter's rules, not with the code under test, so that
// the log can be compared with it.
type logModel struct {
	events   []tinypi.SessionEvent
	messages []tinypi.Message
}

// batchModel is the account of one tool batch: the seqs of its tool/calls, the results
// finished but not committed, and the commit cursor.
type batchModel struct {
	calls    []tinypi.ToolCall
	callSeqs []int
	finished map[int]tinypi.ToolResultMessage
	next     int
}

func (m *logModel) add(e tinypi.SessionEvent) int {
	e.Seq = len(m.events)
	m.events = append(m.events, e)
	return e.Seq
}

func (m *logModel) user(u tinypi.UserMessage) {
	m.add(tinypi.SessionEvent{Type: tinypi.EventUserMessage, Message: u})
	m.messages = append(m.messages, u)
}

func (m *logModel) assistant(a tinypi.AssistantMessage) {
	m.add(tinypi.SessionEvent{Type: tinypi.EventAssistantMessage, Message: a})
	m.messages = append(m.messages, a)
}

func (m *logModel) turnStart(turn int) {
	m.add(tinypi.SessionEvent{Type: tinypi.EventTurnStart, Turn: turn})
}

func (m *logModel) turnEnd(turn int, reason string) {
	m.add(tinypi.SessionEvent{Type: tinypi.EventTurnEnd, Turn: turn, Reason: reason})
}

// modelRequest logs a model/request and returns the messages the request must carry: every
// message logged so far.
func (m *logModel) modelRequest() []tinypi.Message {
	m.add(tinypi.SessionEvent{Type: tinypi.EventModelRequest, ThroughSeq: len(m.events) - 1, Count: len(m.messages)})
	return slices.Clone(m.messages)
}

func (m *logModel) beginBatch(calls []tinypi.ToolCall) *batchModel {
	b := &batchModel{calls: calls, finished: map[int]tinypi.ToolResultMessage{}}
	for _, c := range calls {
		b.callSeqs = append(b.callSeqs, m.add(tinypi.SessionEvent{Type: tinypi.EventToolCall, Call: &c}))
	}
	return b
}

func (m *logModel) start(b *batchModel, i int) {
	c := b.calls[i]
	m.add(tinypi.SessionEvent{Type: tinypi.EventToolStart, Call: &tinypi.ToolCall{ID: c.ID, Name: c.Name}, SourceEventSeqs: []int{b.callSeqs[i]}})
}

// finish records the result of call i and returns what the commit cursor passes: the results
// of the contiguous run of finished calls from the cursor on, in call order.
func (m *logModel) finish(b *batchModel, i int, r tinypi.ToolResultMessage) []tinypi.ToolResultMessage {
	r.ToolCallID, r.ToolName = b.calls[i].ID, b.calls[i].Name
	b.finished[i] = r
	var committed []tinypi.ToolResultMessage
	for {
		r, ok := b.finished[b.next]
		if !ok {
			return committed
		}
		delete(b.finished, b.next)
		m.add(tinypi.SessionEvent{Type: tinypi.EventToolResult, Message: r, SourceEventSeqs: []int{b.callSeqs[b.next]}})
		m.messages = append(m.messages, r)
		committed = append(committed, r)
		b.next++
	}
}

// withoutTimes returns events with Time cleared: the stamp is informational and not part of
// what the tests compare.
func withoutTimes(events []tinypi.SessionEvent) []tinypi.SessionEvent {
	out := slices.Clone(events)
	for i := range out {
		out[i].Time = time.Time{}
	}
	return out
}

// diffEvents returns "" when got equals want (Time ignored), else a cmp.Diff (-want +got).
// reflect.DeepEqual decides first: cmp is slow, and the property test compares thousands of logs.
func diffEvents(want, got []tinypi.SessionEvent) string {
	if reflect.DeepEqual(withoutTimes(want), withoutTimes(got)) {
		return ""
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(tinypi.SessionEvent{}, "Time")); d != "" {
		return d
	}
	return "the events differ in a way cmp does not show (reflect.DeepEqual says unequal)"
}

// diffMessages is diffEvents for messages.
func diffMessages(want, got []tinypi.Message) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	if d := cmp.Diff(want, got); d != "" {
		return d
	}
	return "the messages differ in a way cmp does not show (reflect.DeepEqual says unequal)"
}

// checkLog checks the invariants every log must keep, from the events alone: seqs are indexes;
// every tool/call has exactly one tool/result (SourceEventSeqs [its seq], the same ToolCallID),
// and at most one tool/start, logged before that result; results appear in call order; every
// model/request has ThroughSeq = seq-1 and Count = the number of messages derived from the
// events through ThroughSeq. It returns the messages each model/request froze, in log order.
func checkLog(events []tinypi.SessionEvent) ([][]tinypi.Message, error) {
	results := map[int][]int{} // call seq → seqs of its results
	starts := map[int][]int{}  // call seq → seqs of its starts
	var calls, resultCalls []int
	var requests [][]tinypi.Message
	for i, e := range events {
		if e.Seq != i {
			return nil, fmt.Errorf("event %d has seq %d", i, e.Seq)
		}
		switch e.Type {
		case tinypi.EventToolCall:
			calls = append(calls, e.Seq)
		case tinypi.EventToolStart, tinypi.EventToolResult:
			if len(e.SourceEventSeqs) != 1 {
				return nil, fmt.Errorf("%s %d: SourceEventSeqs %v, want one call seq", e.Type, e.Seq, e.SourceEventSeqs)
			}
			src := e.SourceEventSeqs[0]
			if src < 0 || src >= e.Seq || events[src].Type != tinypi.EventToolCall {
				return nil, fmt.Errorf("%s %d points at seq %d, not an earlier tool/call", e.Type, e.Seq, src)
			}
			if e.Type == tinypi.EventToolStart {
				starts[src] = append(starts[src], e.Seq)
				if e.Call == nil || e.Call.ID != events[src].Call.ID {
					return nil, fmt.Errorf("tool/start %d names call %+v, its tool/call is %q", e.Seq, e.Call, events[src].Call.ID)
				}
				continue
			}
			results[src] = append(results[src], e.Seq)
			resultCalls = append(resultCalls, src)
			r, ok := e.Message.(tinypi.ToolResultMessage)
			if !ok || r.ToolCallID != events[src].Call.ID {
				return nil, fmt.Errorf("tool/result %d answers %+v, its tool/call is %q", e.Seq, e.Message, events[src].Call.ID)
			}
		case tinypi.EventModelRequest:
			if e.ThroughSeq != e.Seq-1 {
				return nil, fmt.Errorf("model/request %d: ThroughSeq %d, want %d", e.Seq, e.ThroughSeq, e.Seq-1)
			}
			frozen := tinypi.DeriveMessages(events[:e.ThroughSeq+1])
			if e.Count != len(frozen) {
				return nil, fmt.Errorf("model/request %d: Count %d, but %d messages derive from the events through seq %d", e.Seq, e.Count, len(frozen), e.ThroughSeq)
			}
			requests = append(requests, frozen)
		}
	}
	for _, c := range calls {
		if len(results[c]) != 1 {
			return nil, fmt.Errorf("tool/call %d (%s) has %d results %v, want exactly one", c, events[c].Call.ID, len(results[c]), results[c])
		}
		if len(starts[c]) > 1 || len(starts[c]) == 1 && starts[c][0] > results[c][0] {
			return nil, fmt.Errorf("tool/call %d (%s): starts %v, result %d; want at most one start, before the result", c, events[c].Call.ID, starts[c], results[c][0])
		}
	}
	if !slices.IsSorted(resultCalls) {
		return nil, fmt.Errorf("tool/results answer the calls at seqs %v, not in call order", resultCalls)
	}
	return requests, nil
}
