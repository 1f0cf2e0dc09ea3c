package tinypi

// Helpers of chapter 10's focused tests that later chapters' tests use too. They live apart
// from the tests so that, in a later chapter's directory, a plain `go test` compiles them
// without the earlier chapter's tests, which are behind the build tag allchapters there.

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// ch10Line renders one event for a readable diff.
func ch10Line(e SessionEvent) string {
	head := fmt.Sprintf("%d %s", e.Seq, e.Type)
	from := ""
	if len(e.SourceEventSeqs) > 0 {
		from = fmt.Sprintf(" <-%d", e.SourceEventSeqs[0])
		for _, s := range e.SourceEventSeqs[1:] {
			from += fmt.Sprintf(",%d", s)
		}
	}
	switch e.Type {
	case EventUserMessage, EventAssistantMessage:
		return head + " " + ch10Message(e.Message)
	case EventToolCall:
		return head + " " + e.Call.ID
	case EventToolStart:
		return head + " " + e.Call.ID + from
	case EventToolResult:
		r := e.Message.(ToolResultMessage)
		line := head + " " + r.ToolCallID + from
		if code, ok := r.Details["code"]; ok {
			line += fmt.Sprintf(" %v", code)
		}
		return line
	case EventTurnStart:
		return fmt.Sprintf("%s %d", head, e.Turn)
	case EventTurnEnd:
		return fmt.Sprintf("%s %d %s", head, e.Turn, e.Reason)
	case EventModelRequest:
		return fmt.Sprintf("%s through=%d messages=%d", head, e.ThroughSeq, e.Count)
	}
	return head + from
}

// ch10Message renders a message: "user:读 README", "assistant:[c1 c2]", "assistant:好的",
// "toolResult:c1=# tinypi".
func ch10Message(m Message) string {
	switch m := m.(type) {
	case UserMessage:
		return "user:" + TextOf(m.Content)
	case AssistantMessage:
		if calls := m.ToolCalls(); len(calls) > 0 {
			var ids []string
			for _, c := range calls {
				ids = append(ids, c.ID)
			}
			return fmt.Sprintf("assistant:%v", ids)
		}
		return "assistant:" + TextOf(m.Content)
	case ToolResultMessage:
		return "toolResult:" + m.ToolCallID + "=" + TextOf(m.Content)
	}
	return fmt.Sprintf("%T", m)
}

func ch10Messages(messages []Message) []string {
	out := []string{}
	for _, m := range messages {
		out = append(out, ch10Message(m))
	}
	return out
}

func ch10Call(id string) ToolCall {
	return ToolCall{ID: id, Name: "read", Arguments: `{"path":"` + id + `.md"}`}
}

func ch10ToolUse(ids ...string) AssistantMessage {
	var content []ContentBlock
	for _, id := range ids {
		content = append(content, ch10Call(id))
	}
	return AssistantMessage{Content: content, StopReason: StopReasonToolUse}
}

func ch10Answer(text string) AssistantMessage {
	return AssistantMessage{Content: []ContentBlock{Text(text)}, StopReason: StopReasonStop}
}

// ch10NoErr fails the test on err; a stub's pending message inside the error is reported alone.
func ch10NoErr(t *testing.T, err error, doing string) {
	t.Helper()
	if err == nil {
		return
	}
	if msg := labPending(err.Error()); msg != "" {
		t.Fatal(msg)
	}
	t.Fatalf("%s failed:\n%v", doing, err)
}

// ch10Append appends e and returns its seq, failing the test on an error, or at once when Append
// does not return.
func ch10Append(t *testing.T, s *Session, e SessionEvent) int {
	t.Helper()
	type appended struct {
		seq int
		err error
	}
	a := ch10Within(t, fmt.Sprintf("Append(%s)", e.Type), ch10LockWhy, func() appended {
		seq, err := s.Append(e)
		return appended{seq, err}
	})
	ch10NoErr(t, a.err, "Append")
	return a.seq
}

// ch10SessionMessages returns s.Messages(), failing the test at once when it does not return.
func ch10SessionMessages(t *testing.T, s *Session) []Message {
	t.Helper()
	return ch10Within(t, "Messages()", ch10LockWhy, s.Messages)
}

// ch10Patience is how long a test waits for a call that takes microseconds before it reports that
// the call never returned: far longer than any correct call needs, and far shorter than the time
// after which `course test` (a minute) or `go test` (ten) stops the whole run.
const ch10Patience = 5 * time.Second

// ch10LockWhy is what a call that never returns most likely means in this chapter.
const ch10LockWhy = "a lock was never released: a function that takes the session's lock returned on some path without unlocking it, or locked it again while holding it (a sync.Mutex is not reentrant), so every later call waits forever"

// ch10Within runs f on a goroutine of its own, under the lab guard, and returns its result. When
// f has not returned after ch10Patience, the test fails at once, saying that what did not return
// and why (the first line), followed by the stack of the goroutine that is stuck. f must not call
// t's methods: it runs on another goroutine.
func ch10Within[T any](t *testing.T, what, why string, f func() T) T {
	t.Helper()
	type outcome struct {
		value T
		panic any
		stack []byte
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if p := recover(); p != nil {
				o.panic, o.stack = p, debug.Stack()
			}
			done <- o
		}()
		o.value = f()
	}()
	timer := time.NewTimer(ch10Patience)
	defer timer.Stop()
	var o outcome
	select {
	case o = <-done:
	case <-timer.C:
		select {
		case o = <-done: // it returned just in time
		default:
			t.Fatalf("%s did not return within %v: %s\n\nthe goroutine that is stuck:\n%s", what, ch10Patience, why, ch10StuckStacks())
		}
	}
	if o.panic != nil {
		if msg := labPending(fmt.Sprint(o.panic)); msg != "" {
			t.Fatal(msg)
		}
		t.Fatalf("panic: %v\n%s", o.panic, o.stack)
	}
	return o.value
}

// ch10StuckStacks returns the stacks of the goroutines ch10Within started that are still running.
func ch10StuckStacks() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var stuck []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "ch10Within") && !strings.Contains(g, "ch10StuckStacks") {
			stuck = append(stuck, g)
		}
	}
	return strings.Join(stuck, "\n\n")
}

// ch10Flush calls s.Flush, guarded against a lock never released, and fails the test on an error.
func ch10Flush(t *testing.T, s *Session) {
	t.Helper()
	ch10NoErr(t, ch10Within(t, "Flush", ch10LockWhy, func() error { return s.Flush(context.Background()) }), "Flush")
}

func ch10Close(t *testing.T, s *Session) {
	t.Helper()
	t.Cleanup(func() {
		if err := ch10Within(t, "Close (in the test's cleanup)", ch10LockWhy, s.Close); err != nil {
			if msg := labPending(err.Error()); msg != "" {
				t.Error(msg)
				return
			}
			t.Errorf("Close: %v", err)
		}
	})
}

// ch10FileLines returns the lines of the file at path, the header's first. A test reads the file
// only after a barrier returned, so what it sees is what the barrier promised.
func ch10FileLines(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// ch10Load loads the session file at path, failing the test on an error, or at once when
// LoadSession does not return. The session is closed when the test ends.
func ch10Load(t *testing.T, path string) (*Session, SessionRepair) {
	t.Helper()
	return ch10LoadWith(t, path, SessionOptions{})
}

func ch10LoadWith(t *testing.T, path string, opts SessionOptions) (*Session, SessionRepair) {
	t.Helper()
	type loaded struct {
		s   *Session
		rep SessionRepair
		err error
	}
	l := ch10Within(t, "LoadSession", ch10LockWhy, func() loaded {
		s, rep, err := LoadSession(path, opts)
		return loaded{s, rep, err}
	})
	ch10NoErr(t, l.err, "LoadSession")
	ch10Close(t, l.s)
	return l.s, l.rep
}

// ch10Fork forks s at atSeq, failing the test on an error, or at once when Fork does not return.
func ch10Fork(t *testing.T, s *Session, atSeq int, opts SessionOptions) *Session {
	t.Helper()
	type forked struct {
		s   *Session
		err error
	}
	f := ch10Within(t, fmt.Sprintf("%s.Fork(%d)", s.ID(), atSeq), ch10LockWhy, func() forked {
		child, err := s.Fork(atSeq, opts)
		return forked{child, err}
	})
	ch10NoErr(t, f.err, "Fork")
	return f.s
}
