package tinypi

// Helpers of chapter 07's focused tests that later chapters' tests use too. They live apart
// from the tests so that, in a later chapter's directory, a plain `go test` compiles them
// without the earlier chapter's tests, which are behind the build tag allchapters there.

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

const ch07Question = "请读取 README.md，并告诉我项目名。"

func ch07ReadCall() ToolCall {
	return ToolCall{ID: "call-1", Name: "read", Arguments: `{"path":"README.md"}`}
}

func ch07FirstAnswer() AssistantMessage {
	return AssistantMessage{
		Content:    []ContentBlock{Text("我先读取项目说明。"), ch07ReadCall()},
		StopReason: StopReasonToolUse,
		Timestamp:  2,
	}
}

func ch07FinalAnswer() AssistantMessage {
	return AssistantMessage{Content: []ContentBlock{Text("项目名是 tiny-pi。")}, StopReason: StopReasonStop, Timestamp: 4}
}

func ch07Input() []Message {
	return []Message{UserMessage{Content: []ContentBlock{Text(ch07Question)}, Timestamp: 1}}
}

// ch07Recorder collects the events of a run and notices when OnEvent is entered concurrently.
// A test may set hook before the run: it is called inside OnEvent, after the event was
// recorded, so a test can react to what the loop reports (release a tool, cancel the run).
type ch07Recorder struct {
	hook func(LoopEvent)

	mu         sync.Mutex
	events     []LoopEvent
	inside     int
	concurrent bool
	overlap    chan struct{} // closed when an overlapping call is first seen
}

func newCh07Recorder() *ch07Recorder {
	return &ch07Recorder{overlap: make(chan struct{})}
}

func (rec *ch07Recorder) onEvent(e LoopEvent) {
	rec.mu.Lock()
	if rec.overlap == nil {
		rec.overlap = make(chan struct{})
	}
	rec.inside++
	if rec.inside > 1 && !rec.concurrent {
		rec.concurrent = true
		close(rec.overlap)
	}
	rec.events = append(rec.events, e)
	rec.mu.Unlock()
	if rec.hook != nil {
		rec.hook(e)
	}
	rec.mu.Lock()
	rec.inside--
	rec.mu.Unlock()
}

// overlapped returns a channel that is closed once two OnEvent calls overlapped.
func (rec *ch07Recorder) overlapped() <-chan struct{} {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.overlap == nil {
		rec.overlap = make(chan struct{})
	}
	return rec.overlap
}

// checkSerial asserts that OnEvent was never entered while another call was inside.
func (rec *ch07Recorder) checkSerial(t *testing.T) {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.concurrent {
		t.Errorf("OnEvent was called concurrently (two tools reported progress at once): events must form one total order")
	}
}

func (rec *ch07Recorder) snapshot() []LoopEvent {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]LoopEvent(nil), rec.events...)
}

// kinds renders events as short strings, e.g. "model_event:start", "tool_end:call-1",
// "turn_end:stop/1", so that a wrong order shows up in a readable diff.
func (rec *ch07Recorder) kinds() []string {
	var out []string
	for _, e := range rec.snapshot() {
		out = append(out, ch07Kind(e))
	}
	return out
}

// kindsWithPrefix is kinds() restricted to the kinds that start with prefix, e.g. "tool_".
func (rec *ch07Recorder) kindsWithPrefix(prefix string) []string {
	var out []string
	for _, k := range rec.kinds() {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

func ch07Kind(e LoopEvent) string {
	switch e := e.(type) {
	case ModelEvent:
		if done, ok := e.Event.(DoneEvent); ok {
			return "model_event:done/" + string(done.Message.StopReason)
		}
		return "model_event:" + e.Event.EventType()
	case AssistantMessageEvent:
		return "assistant_message:" + string(e.Message.StopReason)
	case ToolStartEvent:
		return "tool_start:" + e.Call.ID
	case ToolProgressEvent:
		return "tool_progress:" + e.CallID
	case ToolEndEvent:
		return "tool_end:" + e.Result.ToolCallID
	case ToolSkippedEvent:
		return "tool_skipped:" + e.Result.ToolCallID
	case TurnEndEvent:
		return fmt.Sprintf("turn_end:%s/%d", e.Reason, e.Steps)
	default:
		return fmt.Sprintf("unknown:%T", e)
	}
}

// checkOneTurnEnd asserts the run's last event is its only turn_end and matches the result.
func (rec *ch07Recorder) checkOneTurnEnd(t *testing.T, res AgentRunResult) {
	t.Helper()
	events := rec.snapshot()
	var ends int
	for _, e := range events {
		if _, ok := e.(TurnEndEvent); ok {
			ends++
		}
	}
	if ends != 1 {
		t.Errorf("turn_end events = %d, want exactly 1 (every return path goes through one finish)", ends)
	}
	if len(events) == 0 {
		return
	}
	last, ok := events[len(events)-1].(TurnEndEvent)
	if !ok {
		t.Errorf("last event = %s, want turn_end", ch07Kind(events[len(events)-1]))
		return
	}
	if last.Reason != res.Reason || last.Steps != res.Steps {
		t.Errorf("turn_end = %s/%d, result = %s/%d; they must agree", last.Reason, last.Steps, res.Reason, res.Steps)
	}
}
