package tinypi

// Focused tests of chapter 10, the session as an event log. Each test belongs to one lab:
//
//	go test -run '^TestLab10_1_' .   记录与投影
//	go test -run '^TestLab10_2_' .   提交游标
//	go test -run '^TestLab10_3_' .   写盘与屏障
//	go test -run '^TestLab10_4_' .   模型可见即已记录
//	go test -run '^TestLab10_5_' .   崩溃修复
//	go test -run '^TestLab10_6_' .   分叉与会话树
//
// The expected logs are spelled out one event a line: "<seq> <type> <what>", for example
// "3 tool/call c1", "5 tool/result c1 <-3" (the result points at seq 3) or
// "6 model/request through=5 messages=3". The tests synchronise on what the code reports (tool
// calls they observe, loop events, channels), never on time.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// --- helpers ----------------------------------------------------------------------------------

func ch10Lines(events []SessionEvent) []string {
	out := []string{}
	for _, e := range events {
		out = append(out, ch10Line(e))
	}
	return out
}

func ch10Result(id, text string) ToolResultMessage {
	return ToolResultMessage{ToolCallID: id, ToolName: "read", Content: []ContentBlock{Text(text)}}
}

// ch10Inherited returns what a fork taken at the first turn/end of its parent inherits: one
// finished turn, seq 0–3, numbered and stamped as Append leaves them.
func ch10Inherited() []SessionEvent {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	return []SessionEvent{
		{Type: EventUserMessage, Seq: 0, Time: at, Message: UserText("你好")},
		{Type: EventTurnStart, Seq: 1, Time: at, Turn: 1},
		{Type: EventAssistantMessage, Seq: 2, Time: at, Message: ch10Answer("你好！")},
		{Type: EventTurnEnd, Seq: 3, Time: at, Turn: 1, Reason: "stop"},
	}
}

// ch10NewFork returns the fork of "root" that inherited ch10Inherited(), built as Fork builds it
// once it has the inherited events (Fork gets them from lab 10.6's historyThrough, so the tests
// of earlier labs build the fork directly). With opts.Path set, its file is created.
func ch10NewFork(t *testing.T, opts SessionOptions) *Session {
	t.Helper()
	fork, err := newFork("root", ch10Inherited(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return fork
}

// ch10Begin calls s.BeginToolBatch(calls), failing the test on an error, or at once when it does
// not return.
func ch10Begin(t *testing.T, s *Session, calls []ToolCall) *ToolBatchLog {
	t.Helper()
	type begun struct {
		batch *ToolBatchLog
		err   error
	}
	b := ch10Within(t, "BeginToolBatch", ch10LockWhy, func() begun {
		batch, err := s.BeginToolBatch(calls)
		return begun{batch, err}
	})
	ch10NoErr(t, b.err, "BeginToolBatch")
	return b.batch
}

// ch10NoLeaks checks, after every cleanup of the test (sessions are closed in cleanups), that no
// goroutine the test started is left; goroutines that were there before it started are not its
// own. A test that failed is not checked: it may have left behind the goroutine it reported
// stuck, and saying so twice helps nobody.
func ch10NoLeaks(t *testing.T) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		if !t.Failed() {
			goleak.VerifyNone(t, before)
		}
	})
}

// ch10Await returns the next value from ch, failing the test at once when none comes within
// ch10Patience: what names what the test waited for, why says what it means that it never came.
// The patience bounds a failure; it never orders anything: a correct run sends long before.
func ch10Await[T any](t *testing.T, ch <-chan T, what, why string) T {
	t.Helper()
	timer := time.NewTimer(ch10Patience)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s did not come within %v: %s", what, ch10Patience, why)
		panic("unreachable")
	}
}

// ch10Close closes s when the test ends. Close takes the session's lock for its last write, so
// it is guarded like every other call: a lock that a lab function left held would otherwise keep
// the test waiting in its cleanup until go test gives up, without a word about why.
// ch10HourSession creates session s-01 in a file of the test's temporary directory, with a
// flush window of an hour: nothing reaches the file unless a barrier writes it. The caller
// closes it (ch10Close, or its own cleanup when Close is expected to fail).
func ch10HourSession(t *testing.T) (*Session, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s-01.jsonl")
	s, err := CreateSession(SessionOptions{ID: "s-01", Path: path, FlushWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return s, path
}

// ch10Request is what ModelRequest returned.
type ch10Request struct {
	messages []Message
	err      error
}

// ch10ModelRequest calls s.ModelRequest, guarded like ch10Flush against a lock that is never
// released.
func ch10ModelRequest(t *testing.T, s *Session) ch10Request {
	t.Helper()
	return ch10Within(t, "ModelRequest", ch10LockWhy, func() ch10Request {
		m, err := s.ModelRequest(context.Background())
		return ch10Request{m, err}
	})
}

// ch10FileEvents renders the events written to the file at path (header skipped).
func ch10FileEvents(t *testing.T, path string) []string {
	t.Helper()
	out := []string{}
	for i, line := range ch10FileLines(t, path)[1:] {
		e, err := DecodeSessionEvent([]byte(strings.TrimSuffix(line, "\n")))
		if err != nil {
			t.Fatalf("line %d of the session file is not an event: %v\n%s", i+2, err, line)
		}
		out = append(out, ch10Line(e))
	}
	return out
}

// --- 10.1 ------------------------------------------------------------------------------------

func TestLab10_1_记录与投影_AppendNumbersAndKeepsCopies(t *testing.T) {
	ch10NoLeaks(t)
	s := NewSession("s-01")
	prompt := UserText("读 README")
	before := time.Now()
	// The caller's seq and time are not the log's: the log numbers and stamps every event.
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Seq: 41, Time: time.Date(2001, 2, 3, 0, 0, 0, 0, time.UTC), Message: prompt})
	ch10Append(t, s, SessionEvent{Type: EventTurnStart, Turn: 1})
	assistant := ch10ToolUse("c1")
	ch10Append(t, s, SessionEvent{Type: EventAssistantMessage, Seq: 7, Message: assistant})
	call := ch10Call("c1")
	callSeq := ch10Append(t, s, SessionEvent{Type: EventToolCall, Call: &call})
	sources := []int{callSeq}
	ch10Append(t, s, SessionEvent{Type: EventToolResult, Message: ch10Result("c1", "# tinypi"), SourceEventSeqs: sources})
	after := time.Now()

	// What the caller still holds is not the log's: changing it changes nothing logged.
	prompt.Content[0] = Text("改掉了")
	assistant.Content[0] = ch10Call("c9")
	call.ID = "c9"
	sources[0] = 0

	events := s.Events()
	want := []string{
		"0 user/message user:读 README",
		"1 turn/start 1",
		"2 assistant/message assistant:[c1]",
		"3 tool/call c1",
		"4 tool/result c1 <-3",
	}
	if diff := cmp.Diff(want, ch10Lines(events)); diff != "" {
		t.Fatalf("the log (-want +got): seq is the log's length at append, whatever the event said, and the log keeps its own copies:\n%s", diff)
	}
	for _, e := range events {
		if e.Time.Before(before) || e.Time.After(after) {
			t.Errorf("event %d (%s) has no time, or one it was not appended at (the caller of event 0 gave it 2001-02-03): Append stamps every event with s.now(), whatever the event said", e.Seq, e.Type)
		}
	}
	if got := s.Len(); got != 5 {
		t.Errorf("Len() = %d, want 5", got)
	}
	// Events returns a copy too.
	events[0].Message.(UserMessage).Content[0] = Text("又改了")
	if got := ch10Line(s.Events()[0]); got != "0 user/message user:读 README" {
		t.Errorf("changing what Events returned changed the log: event 0 is now %q", got)
	}

	// What Append refuses, it does not log.
	refused := []struct {
		name string
		e    SessionEvent
	}{
		{"an unknown type", SessionEvent{Type: "tool/progress"}},
		{"a user/message holding an assistant message", SessionEvent{Type: EventUserMessage, Message: ch10Answer("好")}},
		{"a tool/result pointing at a user/message", SessionEvent{Type: EventToolResult, Message: ch10Result("c1", "x"), SourceEventSeqs: []int{0}}},
		{"a tool/result pointing nowhere", SessionEvent{Type: EventToolResult, Message: ch10Result("c1", "x"), SourceEventSeqs: []int{99}}},
		{"a tool/result of another call", SessionEvent{Type: EventToolResult, Message: ch10Result("c2", "x"), SourceEventSeqs: []int{3}}},
		{"a tool/result without its call's seq", SessionEvent{Type: EventToolResult, Message: ch10Result("c1", "x")}},
		{"a second tool/result for c1", SessionEvent{Type: EventToolResult, Message: ch10Result("c1", "again"), SourceEventSeqs: []int{3}}},
		{"a tool/start of c1 after its result", SessionEvent{Type: EventToolStart, Call: &ToolCall{ID: "c1", Name: "read"}, SourceEventSeqs: []int{3}}},
		{"a tool/call without an ID", SessionEvent{Type: EventToolCall, Call: &ToolCall{Name: "read"}}},
	}
	for _, c := range refused {
		err := ch10Within(t, "Append of "+c.name, ch10LockWhy, func() error { _, err := s.Append(c.e); return err })
		if err == nil {
			t.Errorf("Append accepted %s; want an error", c.name)
		}
	}
	if got := s.Len(); got != 5 {
		t.Errorf("after the refused appends Len() = %d, want 5: a refused event is not logged", got)
	}
	// An unknown type marked ignorable is logged: a newer writer may add types an older reader skips.
	seq := ch10Append(t, s, SessionEvent{Type: "tool/progress", Ignorable: true, Raw: []byte(`{"callId":"c1"}`)})
	if seq != 5 {
		t.Errorf("the ignorable event got seq %d, want 5", seq)
	}
}

func TestLab10_1_记录与投影_DeriveMessagesIsACachedProjection(t *testing.T) {
	ch10NoLeaks(t)
	call := ch10Call("c1")
	events := []SessionEvent{
		{Type: EventUserMessage, Seq: 0, Message: UserText("读 README")},
		{Type: EventTurnStart, Seq: 1, Turn: 1},
		{Type: EventModelRequest, Seq: 2, ThroughSeq: 1, Count: 1},
		{Type: EventAssistantMessage, Seq: 3, Message: ch10ToolUse("c1")},
		{Type: EventToolCall, Seq: 4, Call: &call},
		{Type: EventToolStart, Seq: 5, Call: &call, SourceEventSeqs: []int{4}},
		{Type: EventToolResult, Seq: 6, Message: ch10Result("c1", "# tinypi"), SourceEventSeqs: []int{4}},
		{Type: EventTurnEnd, Seq: 7, Turn: 1, Reason: "toolUse"},
		// An event of a type this version does not know projects nothing, even one that holds a
		// message: only the three message types do.
		{Type: "note", Seq: 8, Ignorable: true, Raw: []byte(`{}`), Message: UserText("注释")},
	}
	want := []string{"user:读 README", "assistant:[c1]", "toolResult:c1=# tinypi"}
	got := callLab(t, func() []Message { return DeriveMessages(events) })
	if diff := cmp.Diff(want, ch10Messages(got)); diff != "" {
		t.Fatalf("DeriveMessages (-want +got): the messages of user/message, assistant/message and tool/result events, in seq order, nothing else:\n%s", diff)
	}
	got[0].(UserMessage).Content[0] = Text("改掉了")
	if diff := cmp.Diff(want, ch10Messages(DeriveMessages(events))); diff != "" {
		t.Fatalf("changing what DeriveMessages returned changed the events it read (-want +got): it must be pure:\n%s", diff)
	}

	s := NewSession("s-01")
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读 README")})
	first := ch10SessionMessages(t, s)
	if diff := cmp.Diff([]string{"user:读 README"}, ch10Messages(first)); diff != "" {
		t.Fatalf("Messages after one prompt (-want +got):\n%s", diff)
	}
	// A request holds what Messages returned: it is frozen, whatever happens next.
	first[0].(UserMessage).Content[0] = Text("模型改了请求")
	ch10Append(t, s, SessionEvent{Type: EventAssistantMessage, Message: ch10ToolUse("c1")})
	seq := ch10Append(t, s, SessionEvent{Type: EventToolCall, Call: &call})
	ch10Append(t, s, SessionEvent{Type: EventToolResult, Message: ch10Result("c1", "# tinypi"), SourceEventSeqs: []int{seq}})
	after := ch10Messages(ch10SessionMessages(t, s))
	if len(after) != 3 {
		t.Fatalf("after 3 more events Messages returns %d messages, want 3: the cache grows by exactly the events appended since the last call\n%q", len(after), after)
	}
	if after[0] != "user:读 README" {
		t.Fatalf("Messages' first message became %q after a caller changed its copy: the change reached the cache; hand out a deep copy", after[0])
	}
	if diff := cmp.Diff(want, after); diff != "" {
		t.Fatalf("Messages after the result (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, ch10Messages(ch10SessionMessages(t, s))); diff != "" {
		t.Fatalf("Messages called twice with nothing appended in between (-want +got):\n%s", diff)
	}
	if got := ch10Messages(first); got[0] != "user:模型改了请求" || len(got) != 1 {
		t.Errorf("an earlier Messages result changed after later appends: %v", got)
	}

	// The cache is what keeps a request cheap: with nothing appended since the last call,
	// Messages projects nothing again; it only copies what it has. So it allocates about what
	// copying its result does, not twice that (project everything, then copy).
	long := NewSession("s-02")
	for i := range 50 {
		ch10Append(t, long, SessionEvent{Type: EventUserMessage, Message: UserText(fmt.Sprintf("第 %d 问", i))})
		ch10Append(t, long, SessionEvent{Type: EventTurnStart, Turn: i + 1})
		ch10Append(t, long, SessionEvent{Type: EventAssistantMessage, Message: ch10Answer(fmt.Sprintf("第 %d 答", i))})
	}
	messages := ch10SessionMessages(t, long)
	copying := testing.AllocsPerRun(20, func() { CloneMessages(messages) })
	asking := callLab(t, func() float64 { return testing.AllocsPerRun(20, func() { long.Messages() }) })
	if asking > copying+25 {
		t.Errorf("Messages, called again with nothing appended to a log of 150 events (100 messages), allocates far more than copying its result does: the cache is extended only by the events appended since the last call (s.events[s.derivedThrough:]), never projected again from the start\n(Messages: %.0f allocations; CloneMessages of its result: %.0f)", asking, copying)
	}
}

func TestLab10_1_记录与投影_AForkGoesOnFromWhatItInherited(t *testing.T) {
	ch10NoLeaks(t)
	// A fork's log starts with the events it inherited from its parent (s.base), seq 0–3 here;
	// its own events (s.events) come after them.
	fork := ch10NewFork(t, SessionOptions{ID: "b1"})
	inherited := []string{"user:你好", "assistant:你好！"}
	if diff := cmp.Diff(inherited, ch10Messages(ch10SessionMessages(t, fork))); diff != "" {
		t.Fatalf("the messages of a fork without events of its own yet (-want +got): the inherited events (s.base) are projected too, first:\n%s", diff)
	}
	if diff := cmp.Diff(inherited, ch10Messages(ch10SessionMessages(t, fork))); diff != "" {
		t.Fatalf("Messages called again on the fork, still without events of its own (-want +got): the inherited events are projected once, on the first call (baseDerived), never again:\n%s", diff)
	}
	if seq := ch10Append(t, fork, SessionEvent{Type: EventUserMessage, Message: UserText("读 go.mod")}); seq != 4 {
		t.Fatalf("the fork's first event of its own got seq %d, want 4: a seq is the length of the whole log, its 4 inherited events included (len(s.base) + len(s.events))", seq)
	}
	ch10Append(t, fork, SessionEvent{Type: EventAssistantMessage, Message: ch10Answer("go.mod 说……")})
	if diff := cmp.Diff(append(inherited, "user:读 go.mod", "assistant:go.mod 说……"), ch10Messages(ch10SessionMessages(t, fork))); diff != "" {
		t.Fatalf("the fork's messages after two events of its own (-want +got): the cache goes on with the fork's own events (derivedThrough counts s.events, not the inherited ones):\n%s", diff)
	}
	want := []string{
		"0 user/message user:你好",
		"1 turn/start 1",
		"2 assistant/message assistant:你好！",
		"3 turn/end 1 stop",
		"4 user/message user:读 go.mod",
		"5 assistant/message assistant:go.mod 说……",
	}
	if diff := cmp.Diff(want, ch10Lines(fork.Events())); diff != "" {
		t.Fatalf("the fork's log (-want +got):\n%s", diff)
	}
}

// --- 10.2 ------------------------------------------------------------------------------------

func TestLab10_2_提交游标_CallsAreLoggedBeforeResults(t *testing.T) {
	ch10NoLeaks(t)
	s := NewSession("s-01")
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读三个文件")})
	ch10Append(t, s, SessionEvent{Type: EventAssistantMessage, Message: ch10ToolUse("c1", "c2", "c3")})
	calls := []ToolCall{ch10Call("c1"), ch10Call("c2"), ch10Call("c3")}
	batch := ch10Begin(t, s, calls)
	want := []string{
		"0 user/message user:读三个文件",
		"1 assistant/message assistant:[c1 c2 c3]",
		"2 tool/call c1",
		"3 tool/call c2",
		"4 tool/call c3",
	}
	if diff := cmp.Diff(want, ch10Lines(s.Events())); diff != "" {
		t.Fatalf("after BeginToolBatch (-want +got): one tool/call per call, in call order, before any result:\n%s", diff)
	}
	for i, wantSeq := range []int{2, 3, 4} {
		if got := batch.CallSeq(i); got != wantSeq {
			t.Errorf("CallSeq(%d) = %d, want %d", i, got, wantSeq)
		}
	}
	if got := s.Events()[3].Call; got == nil || got.Name != "read" || got.Arguments != `{"path":"c2.md"}` {
		t.Errorf("the tool/call of c2 holds %+v, want the call's name and arguments", got)
	}

	// A call the log refuses (it has no ID) makes BeginToolBatch fail: no batch for it.
	refused := ch10Within(t, "BeginToolBatch", ch10LockWhy, func() error {
		_, err := s.BeginToolBatch([]ToolCall{ch10Call("c4"), {Name: "read", Arguments: `{}`}})
		return err
	})
	if refused == nil {
		t.Errorf("BeginToolBatch of c4 and a call without an ID returned a batch and no error: the log refuses the tool/call of a call without an ID, and BeginToolBatch returns that error")
	}

	// In a fork, the 4 inherited events come first: the seqs of its tool/calls count them.
	fork := ch10NewFork(t, SessionOptions{ID: "b1"})
	ch10Append(t, fork, SessionEvent{Type: EventAssistantMessage, Message: ch10ToolUse("c1", "c2")})
	forked := ch10Begin(t, fork, []ToolCall{ch10Call("c1"), ch10Call("c2")})
	if got := []int{forked.CallSeq(0), forked.CallSeq(1)}; !slices.Equal(got, []int{5, 6}) {
		t.Errorf("in a fork with 4 inherited events and its assistant at seq 4, CallSeq gives %v, want [5 6]: keep exactly the seq appendLocked returns", got)
	}
}

func TestLab10_2_提交游标_ResultsCommitInCallOrder(t *testing.T) {
	ch10NoLeaks(t)
	cases := []struct {
		order []int
		// committed[k] renders what Finish returned for the k-th call to finish.
		committed []string
	}{
		{order: []int{0, 1, 2}, committed: []string{"c1", "c2", "c3"}},
		{order: []int{2, 1, 0}, committed: []string{"", "", "c1 c2 c3"}},
		{order: []int{1, 0, 2}, committed: []string{"", "c1 c2", "c3"}},
		{order: []int{2, 0, 1}, committed: []string{"", "c1", "c2 c3"}},
	}
	for _, c := range cases {
		// One order that fails is enough: the next would only say it again (or wait again).
		if !t.Run(fmt.Sprint(c.order), func(t *testing.T) {
			s := NewSession("s-01")
			ch10Append(t, s, SessionEvent{Type: EventAssistantMessage, Message: ch10ToolUse("c1", "c2", "c3")})
			calls := []ToolCall{ch10Call("c1"), ch10Call("c2"), ch10Call("c3")}
			batch := ch10Begin(t, s, calls)
			for k, i := range c.order {
				type finished struct {
					committed []ToolResultMessage
					err       error
				}
				f := ch10Within(t, "Finish", ch10LockWhy, func() finished {
					// The executor's result may name no call at all: the batch pairs it.
					r, err := batch.Finish(i, ToolResultMessage{Content: []ContentBlock{Text("内容" + calls[i].ID)}})
					return finished{r, err}
				})
				ch10NoErr(t, f.err, "Finish")
				done := f.committed
				var ids []string
				for _, r := range done {
					ids = append(ids, r.ToolCallID)
				}
				if got := strings.Join(ids, " "); got != c.committed[k] {
					t.Errorf("finishing %s committed %q, want %q: a result is committed only when every call before it is", calls[i].ID, got, c.committed[k])
				}
			}
			want := []string{
				"0 assistant/message assistant:[c1 c2 c3]",
				"1 tool/call c1",
				"2 tool/call c2",
				"3 tool/call c3",
				"4 tool/result c1 <-1",
				"5 tool/result c2 <-2",
				"6 tool/result c3 <-3",
			}
			if diff := cmp.Diff(want, ch10Lines(s.Events())); diff != "" {
				t.Fatalf("the log (-want +got): results in call order, each pointing at its own tool/call:\n%s", diff)
			}
			if diff := cmp.Diff([]string{"assistant:[c1 c2 c3]", "toolResult:c1=内容c1", "toolResult:c2=内容c2", "toolResult:c3=内容c3"}, ch10Messages(s.Messages())); diff != "" {
				t.Errorf("derived messages (-want +got):\n%s", diff)
			}
			if got := batch.Committed(); got != 3 {
				t.Errorf("Committed() = %d, want 3", got)
			}
			if err := ch10Within(t, "Finish", ch10LockWhy, func() error { _, err := batch.Finish(1, ch10Result("c2", "again")); return err }); err == nil {
				t.Errorf("a second result for c2 was accepted; want an error")
			}
			if got := s.Len(); got != 7 {
				t.Errorf("after the refused second result Len() = %d, want 7", got)
			}
		}) {
			break
		}
	}
}

// --- 10.3 ------------------------------------------------------------------------------------

func TestLab10_3_写盘与屏障_EncodeOneEventALine(t *testing.T) {
	ch10NoLeaks(t)
	cases := []struct {
		e    SessionEvent
		want string
	}{
		{
			SessionEvent{Type: EventUserMessage, Seq: 0, Message: UserText("读 README")},
			`{"type":"user/message","seq":0,"data":{"message":{"role":"user","content":[{"type":"text","text":"读 README"}],"timestamp":0}}}`,
		},
		{
			SessionEvent{Type: EventToolCall, Seq: 2, Time: time.Date(2026, 12, 1, 10, 0, 1, 500000000, time.FixedZone("UTC+8", 8*3600)), Call: &ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"README.md"}`}},
			`{"type":"tool/call","seq":2,"time":"2026-12-01T02:00:01.5Z","data":{"callId":"c1","name":"read","arguments":"{\"path\":\"README.md\"}"}}`,
		},
		{
			SessionEvent{Type: EventToolResult, Seq: 4, Time: time.Date(2026, 12, 1, 10, 0, 2, 0, time.UTC), SourceEventSeqs: []int{2}, Message: ToolResultMessage{ToolCallID: "c1", ToolName: "read", Content: []ContentBlock{Text("# tinypi")}}},
			`{"type":"tool/result","seq":4,"time":"2026-12-01T10:00:02Z","data":{"message":{"role":"toolResult","content":[{"type":"text","text":"# tinypi"}],"toolCallId":"c1","toolName":"read","timestamp":0}},"sourceEventSeqs":[2]}`,
		},
		{
			SessionEvent{Type: EventModelRequest, Seq: 5, ThroughSeq: 4, Count: 3},
			`{"type":"model/request","seq":5,"data":{"throughSeq":4,"messages":3}}`,
		},
		{
			SessionEvent{Type: EventTurnEnd, Seq: 6, Turn: 1, Reason: "toolUse"},
			`{"type":"turn/end","seq":6,"data":{"turn":1,"reason":"toolUse"}}`,
		},
		// An ignorable event of a type this version does not know keeps its data as it came,
		// and an empty one is written as {}: every line has a "data" object.
		{
			SessionEvent{Type: "tool/progress", Seq: 7, Ignorable: true, Raw: []byte(`{"callId":"c1"}`)},
			`{"type":"tool/progress","seq":7,"data":{"callId":"c1"},"ignorable":true}`,
		},
		{
			SessionEvent{Type: "tool/progress", Seq: 8, Ignorable: true},
			`{"type":"tool/progress","seq":8,"data":{},"ignorable":true}`,
		},
	}
	for _, c := range cases {
		got := callLab(t, func() string {
			b, err := EncodeSessionEvent(c.e)
			ch10NoErr(t, err, "EncodeSessionEvent")
			return string(b)
		})
		if got != c.want+"\n" {
			t.Errorf("EncodeSessionEvent(%s):\n got %q\nwant %q\n(one JSON object, times in UTC, ending in a newline)", c.e.Type, got, c.want+"\n")
		}
	}
}

func TestLab10_3_写盘与屏障_FlushIsTheBarrier(t *testing.T) {
	ch10NoLeaks(t)
	s, path := ch10HourSession(t) // nothing reaches the file unless a barrier writes it
	ch10Close(t, s)
	if got := ch10FileLines(t, path); len(got) != 1 || got[0] != `{"format":"tinypi-session","version":1,"session":"s-01"}`+"\n" {
		t.Fatalf("a new session file holds %q, want only the header line", got)
	}
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读 README")})
	ch10Append(t, s, SessionEvent{Type: EventTurnStart, Turn: 1})
	ch10Flush(t, s)
	want := []string{"0 user/message user:读 README", "1 turn/start 1"}
	if diff := cmp.Diff(want, ch10FileEvents(t, path)); diff != "" {
		t.Fatalf("the file after Flush (-want +got): Flush returns once every event appended before it is written:\n%s", diff)
	}
	ch10Flush(t, s)
	if diff := cmp.Diff(want, ch10FileEvents(t, path)); diff != "" {
		t.Fatalf("the file after a second Flush with nothing new (-want +got): each event is written once:\n%s", diff)
	}

	// The barrier before a model request: everything the request holds is on disk first.
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("再读 go.mod")})
	req := ch10ModelRequest(t, s)
	ch10NoErr(t, req.err, "ModelRequest")
	messages := req.messages
	if diff := cmp.Diff([]string{"user:读 README", "user:再读 go.mod"}, ch10Messages(messages)); diff != "" {
		t.Errorf("ModelRequest's messages (-want +got):\n%s", diff)
	}
	want = append(want, "2 user/message user:再读 go.mod")
	if diff := cmp.Diff(want, ch10FileEvents(t, path)); diff != "" {
		t.Fatalf("the file when ModelRequest returned (-want +got): the log is flushed before the request is frozen:\n%s", diff)
	}
	if diff := cmp.Diff(append(want, "3 model/request through=2 messages=2"), ch10Lines(s.Events())); diff != "" {
		t.Fatalf("the log after ModelRequest (-want +got): a model/request event says which events the request holds:\n%s", diff)
	}

	// The barrier before a tool body: its tool/start is on disk before the body may run.
	ch10Append(t, s, SessionEvent{Type: EventAssistantMessage, Message: ch10ToolUse("c1", "c2")})
	batch := ch10Begin(t, s, []ToolCall{ch10Call("c1"), ch10Call("c2")})
	ch10NoErr(t, callLab(t, func() error { return batch.Start(context.Background(), 1) }), "Start")
	want = append(want, "3 model/request through=2 messages=2", "4 assistant/message assistant:[c1 c2]", "5 tool/call c1", "6 tool/call c2", "7 tool/start c2 <-6")
	if diff := cmp.Diff(want, ch10FileEvents(t, path)); diff != "" {
		t.Fatalf("the file when Start returned (-want +got): the call's tool/start, and all before it, are written before its body runs:\n%s", diff)
	}
	if line := ch10FileLines(t, path)[8]; !strings.Contains(line, `"data":{"callId":"c2","name":"read"},"sourceEventSeqs":[6]`) {
		t.Errorf("the tool/start of c2 is written as\n%s\nwant its data to be {\"callId\":\"c2\",\"name\":\"read\"}: a tool/start keeps only the call's ID and name", line)
	}

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := callLab(t, func() error { return batch.Start(cancelled, 0) }); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a cancelled context returned %v, want context.Canceled: an aborted run starts no tool body", err)
	}
	if got := s.Len(); got != 8 {
		t.Errorf("after Start with a cancelled context Len() = %d, want 8: no tool/start is logged for a call that will not run", got)
	}

	// A fork's file holds its inherited events (seq 0–3) from the moment it is created; the
	// barriers write only the fork's own events, each once.
	forkPath := filepath.Join(t.TempDir(), "b1.jsonl")
	fork := ch10NewFork(t, SessionOptions{ID: "b1", Path: forkPath, FlushWindow: time.Hour})
	ch10Close(t, fork)
	ch10Append(t, fork, SessionEvent{Type: EventUserMessage, Message: UserText("读 go.mod")})
	ch10NoErr(t, ch10Within(t, "Flush", ch10LockWhy, func() error { return fork.Flush(context.Background()) }), "the fork's first Flush")
	ch10Append(t, fork, SessionEvent{Type: EventAssistantMessage, Message: ch10Answer("go.mod 说……")})
	ch10NoErr(t, ch10Within(t, "Flush", ch10LockWhy, func() error { return fork.Flush(context.Background()) }), "the fork's second Flush (written counts the inherited events too)")
	forkWant := []string{"0 user/message user:你好", "1 turn/start 1", "2 assistant/message assistant:你好！", "3 turn/end 1 stop", "4 user/message user:读 go.mod", "5 assistant/message assistant:go.mod 说……"}
	if diff := cmp.Diff(forkWant, ch10FileEvents(t, forkPath)); diff != "" {
		t.Fatalf("the fork's file after two barriers (-want +got): the inherited events, then the fork's own, each once:\n%s", diff)
	}
}

func TestLab10_3_写盘与屏障_AWriteErrorIsFinal(t *testing.T) {
	ch10NoLeaks(t)
	s, path := ch10HourSession(t)
	// Close returns the write error of this test: only its return is checked.
	t.Cleanup(func() { ch10Within(t, "Close (in the test's cleanup)", ch10LockWhy, s.Close) })
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读 README")})
	ch10Append(t, s, SessionEvent{Type: EventAssistantMessage, Message: ch10ToolUse("c1")})
	batch := ch10Begin(t, s, []ToolCall{ch10Call("c1")})
	ch10Flush(t, s)
	want := []string{"0 user/message user:读 README", "1 assistant/message assistant:[c1]", "2 tool/call c1"}

	// One write fails, as on a full disk, and the next could succeed, as once space is freed:
	// the test lends the writer a descriptor of the file that cannot be written, for one write.
	readOnly, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer readOnly.Close()
	w := s.file
	w.mu.Lock()
	writable := w.f
	w.f = readOnly
	w.mu.Unlock()
	startErr := callLab(t, func() error { return batch.Start(context.Background(), 0) })
	w.mu.Lock()
	w.f = writable
	w.mu.Unlock()
	if startErr == nil {
		t.Fatalf("Start returned nil although the write of its tool/start failed: after logging, a write error is the one error Start returns, and the call's body must not run")
	}
	if err := ch10Within(t, "Flush", ch10LockWhy, func() error { return s.Flush(context.Background()) }); err == nil {
		t.Fatalf("Flush succeeded after a write had failed: a write error is final; keep it in w.err and return it from every later barrier, so that nothing reaches the file after a failed write (the file would then say that c1 started, while the loop, told that Start failed, never ran it)")
	}
	if diff := cmp.Diff(want, ch10FileEvents(t, path)); diff != "" {
		t.Fatalf("the file after the failed write (-want +got): nothing is written after a write error, so the file never holds the tool/start whose write failed:\n%s", diff)
	}
	req := ch10ModelRequest(t, s)
	if req.err == nil {
		t.Fatalf("ModelRequest returned a request although the barrier before it failed (the log cannot be written): it returns the flush's error, wrapped, and no request")
	}
	if got := s.Len(); got != 4 {
		t.Errorf("after ModelRequest failed Len() = %d, want 4 (three events and the tool/start): a request that is not made is not logged", got)
	}
}

// ch10LockProbe is a value of a tool result's Details; encoding it, as a write does, records
// whether the session's lock was held at that moment.
type ch10LockProbe struct {
	s    *Session
	held *atomic.Bool
}

// MarshalJSON implements json.Marshaler.
func (p ch10LockProbe) MarshalJSON() ([]byte, error) {
	if p.s.mu.(interface{ TryLock() bool }).TryLock() {
		p.s.mu.Unlock()
	} else {
		p.held.Store(true)
	}
	return []byte(`"probe"`), nil
}

// ch10WatchedLock is a session lock that lets a test watch the session's critical sections: held
// runs just before each release, with the lock still held, and released just after it, on the
// goroutine that releases it. A test installs it on a session no other goroutine uses yet.
type ch10WatchedLock struct {
	mu       sync.Mutex
	held     func()
	released func()
}

// Lock locks l.
func (l *ch10WatchedLock) Lock() { l.mu.Lock() }

// TryLock tries to lock l, as sync.Mutex.TryLock does.
func (l *ch10WatchedLock) TryLock() bool { return l.mu.TryLock() }

// Unlock runs held, unlocks l, then runs released.
func (l *ch10WatchedLock) Unlock() {
	if l.held != nil {
		l.held()
	}
	l.mu.Unlock()
	if l.released != nil {
		l.released()
	}
}

func TestLab10_3_写盘与屏障_ARequestIsFrozenInOneStep(t *testing.T) {
	ch10NoLeaks(t)
	// Other goroutines may append while ModelRequest runs (an Agent's Steer, a tool logging its
	// start). What they append lands before the request or after it, never between the messages
	// it freezes and its model/request. The probe appends a message right after ModelRequest
	// releases the session's lock for the at-th time, for each at in turn, until ModelRequest
	// returns having released it fewer times.
	for at := 1; ; at++ {
		if at > 20 {
			t.Fatalf("ModelRequest released the session's lock more than 20 times: take the messages and append the model/request under the lock once")
		}
		s := NewSession("s-01")
		ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读 README")})
		var releases atomic.Int32
		var fired atomic.Bool
		var appendErr error
		s.mu = &ch10WatchedLock{released: func() {
			if releases.Add(1) == int32(at) && fired.CompareAndSwap(false, true) {
				_, appendErr = s.Append(SessionEvent{Type: EventUserMessage, Message: UserText("顺便看看 go.mod")})
			}
		}}
		req := ch10ModelRequest(t, s)
		ch10NoErr(t, req.err, "ModelRequest")
		if !fired.Load() {
			return // every moment ModelRequest released the lock was probed
		}
		ch10NoErr(t, appendErr, "the probe's Append")
		outcomes := []struct {
			log      []string
			messages []string
		}{
			{[]string{"0 user/message user:读 README", "1 user/message user:顺便看看 go.mod", "2 model/request through=1 messages=2"}, []string{"user:读 README", "user:顺便看看 go.mod"}},
			{[]string{"0 user/message user:读 README", "1 model/request through=0 messages=1", "2 user/message user:顺便看看 go.mod"}, []string{"user:读 README"}},
		}
		log, messages := ch10Lines(s.Events()), ch10Messages(req.messages)
		ok := false
		for _, o := range outcomes {
			ok = ok || (cmp.Equal(o.log, log) && cmp.Equal(o.messages, messages))
		}
		if !ok {
			t.Fatalf("another goroutine appended \"顺便看看 go.mod\" right after release %d of the session's lock in ModelRequest; ModelRequest returned %q and the log became\n%s\nwant the message before the request (the request holds it: through=1 messages=2) or after it (through=0 messages=1): take the messages and append the model/request under one hold of the lock (card 10.3 step 3), so nothing comes between them", at, messages, strings.Join(log, "\n"))
		}
	}
}

func TestLab10_3_写盘与屏障_WritingHoldsTheLockOnlyToTakeEvents(t *testing.T) {
	ch10NoLeaks(t)
	s, _ := ch10HourSession(t)
	ch10Close(t, s)
	// Encoding and writing are the slow part of a write: Append must not wait for them. The
	// probe in this result's details looks at the session's lock while it is encoded.
	var held atomic.Bool
	ch10Append(t, s, SessionEvent{Type: EventAssistantMessage, Message: ch10ToolUse("c1")})
	callSeq := ch10Append(t, s, SessionEvent{Type: EventToolCall, Call: &ToolCall{ID: "c1", Name: "read", Arguments: `{}`}})
	result := ch10Result("c1", "# tinypi")
	result.Details = map[string]any{"probe": ch10LockProbe{s: s, held: &held}}
	ch10Append(t, s, SessionEvent{Type: EventToolResult, Message: result, SourceEventSeqs: []int{callSeq}})
	ch10Flush(t, s)
	if held.Load() {
		t.Fatalf("the session's lock was held while the events were encoded for the file: take the events to write under w.s.mu, unlock, then encode and write; an Append (a tool goroutine logging its start) must never wait for the disk")
	}

	// The background writer (the default window of 2 ms) takes the events under the lock too.
	// Run with -race: the second Append and the background write of the first event meet nowhere
	// but on the session's lock (the test learns from the file, not from the writer, that the
	// first is written), so a writer that reads the events without it races with that Append.
	// Each event is written by a background write of its own, so that a writer that writes an
	// event twice does so in every run, however fast the appends follow each other.
	bgPath := filepath.Join(t.TempDir(), "s-02.jsonl")
	bg, err := CreateSession(SessionOptions{ID: "s-02", Path: bgPath})
	if err != nil {
		t.Fatal(err)
	}
	ch10Close(t, bg)
	// written waits until the file holds the header and at least n lines more.
	written := func(what string, n int) {
		ch10Within(t, what, "the background writer never wrote them, although its window is 2 ms", func() bool {
			for {
				if raw, err := os.ReadFile(bgPath); err == nil && bytes.Count(raw, []byte("\n")) >= 1+n {
					return true
				}
				runtime.Gosched()
			}
		})
	}
	ch10Append(t, bg, SessionEvent{Type: EventUserMessage, Message: UserText("读 README")})
	written("the background write of the first event", 1)
	ch10Append(t, bg, SessionEvent{Type: EventUserMessage, Message: UserText("再读 go.mod")})
	written("the background write of two events", 2)
	if diff := cmp.Diff([]string{"0 user/message user:读 README", "1 user/message user:再读 go.mod"}, ch10FileEvents(t, bgPath)); diff != "" {
		t.Fatalf("the file written in the background, then by Flush (-want +got):\n%s", diff)
	}
}

func TestLab10_3_写盘与屏障_ALoggedStartHasStarted(t *testing.T) {
	ch10NoLeaks(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The seam: Append stamps each event with SessionOptions.Now, so a Now that cancels ctx
	// cancels the run exactly while Start logs the tool/start: after Start's check of ctx, before
	// its flush, on every run.
	var armed atomic.Bool
	path := filepath.Join(t.TempDir(), "s-01.jsonl")
	s, err := CreateSession(SessionOptions{ID: "s-01", Path: path, FlushWindow: time.Hour, Now: func() time.Time {
		if armed.Swap(false) {
			cancel()
		}
		return time.Now()
	}})
	if err != nil {
		t.Fatal(err)
	}
	ch10Close(t, s)
	ch10Append(t, s, SessionEvent{Type: EventAssistantMessage, Message: ch10ToolUse("c1")})
	batch := ch10Begin(t, s, []ToolCall{ch10Call("c1")})
	armed.Store(true)
	err = callLab(t, func() error { return batch.Start(ctx, 0) })
	if ctx.Err() == nil {
		t.Fatalf("Start returned %v without logging anything: with a live ctx it logs the call's tool/start", err)
	}
	if err != nil {
		t.Fatalf("Start returned %q although the run was cancelled only after the call's tool/start was logged: once its tool/start is logged the call has started, so Start waits for the write all the same (flush with context.WithoutCancel(ctx)) and returns nil, and the body runs", err)
	}
	want := []string{"0 assistant/message assistant:[c1]", "1 tool/call c1", "2 tool/start c1 <-1"}
	if diff := cmp.Diff(want, ch10FileEvents(t, path)); diff != "" {
		t.Fatalf("the file when Start returned (-want +got): the tool/start is written although the run was cancelled while it was logged:\n%s", diff)
	}
}

// --- 10.4 ------------------------------------------------------------------------------------

// ch10MustHave fails the test with msg when events hold no event of type typ.
func ch10MustHave(t *testing.T, events []SessionEvent, typ SessionEventType, msg string) {
	t.Helper()
	for _, e := range events {
		if e.Type == typ {
			return
		}
	}
	t.Fatalf("%s\n%s", msg, strings.Join(ch10Lines(events), "\n"))
}

// ch10Model answers from a script and records every request. It can also scribble on the
// messages it was given, as a careless adapter might.
type ch10Model struct {
	replies  []AssistantMessage
	scribble bool
	onStream func(n int) // called before answering request n (0-based), on the loop's goroutine

	mu       sync.Mutex
	requests [][]string
}

func (m *ch10Model) Stream(ctx context.Context, req Request) *AssistantStream {
	m.mu.Lock()
	n := len(m.requests)
	m.requests = append(m.requests, ch10Messages(req.Messages))
	m.mu.Unlock()
	if m.onStream != nil {
		m.onStream(n)
	}
	if m.scribble {
		for _, msg := range req.Messages {
			if u, ok := msg.(UserMessage); ok && len(u.Content) > 0 {
				u.Content[0] = Text("被模型改写")
			}
		}
	}
	s := NewAssistantStream()
	s.Push(StartEvent{})
	if n >= len(m.replies) {
		s.Push(ErrorEvent{Message: AssistantMessage{StopReason: StopReasonError, ErrorMessage: "script exhausted"}})
		return s
	}
	s.Push(DoneEvent{Message: m.replies[n]})
	return s
}

func (m *ch10Model) seen() [][]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]string(nil), m.requests...)
}

// ch10Requests returns, for every model/request event of events, the derived messages of the
// events up to its ThroughSeq, checking its count.
func ch10Requests(t *testing.T, events []SessionEvent) [][]string {
	t.Helper()
	var out [][]string
	for _, e := range events {
		if e.Type != EventModelRequest {
			continue
		}
		held := ch10Messages(DeriveMessages(events[:e.ThroughSeq+1]))
		if len(held) != e.Count {
			t.Errorf("model/request %d says %d messages; the events through seq %d derive %d", e.Seq, e.Count, e.ThroughSeq, len(held))
		}
		if e.ThroughSeq != e.Seq-1 {
			t.Errorf("model/request %d holds the events through seq %d, want through %d (every event before it)", e.Seq, e.ThroughSeq, e.Seq-1)
		}
		out = append(out, held)
	}
	return out
}

func TestLab10_4_模型可见即已记录_RequestsComeFromTheLog(t *testing.T) {
	ch10NoLeaks(t)
	s := NewSession("s-01")
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读两个文件")})
	model := &ch10Model{scribble: true, replies: []AssistantMessage{ch10ToolUse("c1", "c2"), ch10Answer("读完了")}}
	// Which goroutine appends each event, seen while the appending goroutine holds the lock: the
	// loop's goroutine logs every turn/start, and it alone commits results (a tool goroutine that
	// commits may add what it committed to the transcript after a later call's results).
	var loopG string
	var foreign []string // tool/results a goroutine other than the loop's appended
	seen := 0
	s.mu = &ch10WatchedLock{held: func() {
		for ; seen < len(s.events); seen++ {
			switch e := s.events[seen]; e.Type {
			case EventTurnStart:
				loopG = ch10Goroutine()
			case EventToolResult:
				if g := ch10Goroutine(); g != loopG {
					foreign = append(foreign, ch10Line(e))
				}
			}
		}
	}}

	// The tools finish in reverse order: c2 first, then c1. Each checks, when its body starts,
	// that the log already holds every call of the batch and its own tool/start.
	release := map[string]chan struct{}{"c1": make(chan struct{}), "c2": make(chan struct{})}
	started := make(chan string, 2)
	ended := make(chan string, 2)
	var announced []string // the calls of the run's tool_start events, in order
	// What each body saw when it started: call ID -> the problems, reported after the run.
	early := map[string]bool{}     // ran before every call of the batch was logged
	unstarted := map[string]bool{} // ran before its own tool/start was logged
	var mu sync.Mutex
	exec := func(ctx context.Context, call ToolCall, _ ToolExecContext) (ToolResultMessage, error) {
		lines := ch10Lines(s.Events())
		joined := strings.Join(lines, "\n")
		mu.Lock()
		if !strings.Contains(joined, "tool/call c1") || !strings.Contains(joined, "tool/call c2") {
			early[call.ID] = true
		}
		if !strings.Contains(joined, "tool/start "+call.ID) {
			unstarted[call.ID] = true
		}
		mu.Unlock()
		started <- call.ID
		<-release[call.ID]
		return ch10Result(call.ID, "内容"+call.ID), nil
	}
	done := make(chan AgentRunResult, 1)
	go func() {
		defer close(done)
		runLab(t, func() {
			res, err := RunAgentLoop(context.Background(), AgentLoopOptions{
				Context:         AgentContext{Messages: []Message{UserText("这条不该被用到：有会话时输入来自日志")}},
				Model:           model,
				ExecuteToolCall: exec,
				Session:         s,
				OnEvent: func(e LoopEvent) {
					switch e := e.(type) {
					case ToolStartEvent:
						announced = append(announced, e.Call.ID) // OnEvent is never called concurrently
					case ToolEndEvent:
						ended <- e.Result.ToolCallID
					}
				},
			})
			if err != nil {
				t.Errorf("RunAgentLoop: %v", err)
			}
			done <- res
		})
	}()
	// Whatever happens, the tools are released and the run ends before the test does.
	t.Cleanup(func() {
		for _, id := range []string{"c1", "c2"} {
			select {
			case <-release[id]:
			default:
				close(release[id])
			}
		}
		ch10Await(t, done, "the end of the run (in the test's cleanup)", "the run did not end once both tools were released")
	})
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case id := <-started:
			got[id] = true
		case <-done:
			t.Fatalf("the run ended before both tools started: %v", ch10Lines(s.Events()))
		}
	}
	close(release["c2"])
	if id := ch10Await(t, ended, "a tool_end once c2 finished (c1 still running)", "the loop's goroutine receives each call as it completes, reports its tool_end and hands its result to Finish at once; it does not wait for the rest of the batch"); id != "c2" {
		t.Fatalf("first tool_end is %s, want c2", id)
	}
	ch10MustHave(t, s.Events(), EventModelRequest, "the log has no model/request event: build each request with Session.ModelRequest, which flushes and logs it")
	ch10MustHave(t, s.Events(), EventAssistantMessage, "the log has no assistant/message: every message the run adds to its transcript is logged")
	if diff := cmp.Diff([]string{"0 user/message user:读两个文件", "1 turn/start 1", "2 model/request through=1 messages=1", "3 assistant/message assistant:[c1 c2]", "4 tool/call c1", "5 tool/call c2"},
		ch10Lines(s.Events())[:6]); diff != "" {
		t.Errorf("the log's head (-want +got):\n%s", diff)
	}
	for _, e := range s.Events() {
		if e.Type == EventToolResult {
			t.Fatalf("c2 finished first and %s was committed at once: the cursor waits for c1\n%s", ch10Line(e), strings.Join(ch10Lines(s.Events()), "\n"))
		}
	}
	close(release["c1"])
	res := ch10Await(t, done, "the end of the run", "the run did not end once both tools had finished")
	if len(foreign) > 0 { // the run has returned: nothing appends any more
		t.Errorf("%q appended by a tool goroutine, not by the loop's: the loop's goroutine receives each finished call and calls batch.Finish itself (card 10.4 step 4); a tool goroutine that commits can add its results to the transcript after those of a later call", foreign)
	}
	// The tool goroutines are done (the run returned), so the maps are read without the lock.
	if early["c1"] || early["c2"] {
		t.Fatalf("a tool body ran before every tool/call of its batch was logged (c1: %v, c2: %v): log the whole batch first", early["c1"], early["c2"])
	}
	if unstarted["c1"] || unstarted["c2"] {
		t.Fatalf("a tool body ran before its own tool/start was logged (c1: %v, c2: %v): Start each call, and wait for it, before its body runs", unstarted["c1"], unstarted["c2"])
	}

	events := s.Events()
	lines := ch10Lines(events)
	// The two tool/starts may come in either order: the tools run in parallel.
	starts := []string{lines[6], lines[7]}
	if !(starts[0] == "6 tool/start c1 <-4" && starts[1] == "7 tool/start c2 <-5") && !(starts[0] == "6 tool/start c2 <-5" && starts[1] == "7 tool/start c1 <-4") {
		t.Errorf("events 6 and 7 are %q, want the tool/start of c1 (<-4) and of c2 (<-5), in either order", starts)
	}
	lines[6], lines[7] = "6 tool/start", "7 tool/start"
	want := []string{
		"0 user/message user:读两个文件",
		"1 turn/start 1",
		"2 model/request through=1 messages=1",
		"3 assistant/message assistant:[c1 c2]",
		"4 tool/call c1",
		"5 tool/call c2",
		"6 tool/start",
		"7 tool/start",
		"8 tool/result c1 <-4",
		"9 tool/result c2 <-5",
		"10 turn/end 1 toolUse",
		"11 turn/start 2",
		"12 model/request through=11 messages=4",
		"13 assistant/message assistant:读完了",
		"14 turn/end 2 stop",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Fatalf("the log of the run (-want +got):\n%s", diff)
	}
	// Model-visible means logged: every request the model got is what the log derives up to
	// its model/request event, even though the model scribbled on the first one.
	if diff := cmp.Diff(ch10Requests(t, events), model.seen()); diff != "" {
		t.Errorf("requests rebuilt from the log (-) and what the model got (+):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{
		{"user:读两个文件"},
		{"user:读两个文件", "assistant:[c1 c2]", "toolResult:c1=内容c1", "toolResult:c2=内容c2"},
	}, model.seen()); diff != "" {
		t.Errorf("the model's requests (-want +got):\n%s", diff)
	}
	if res.Reason != RunStop {
		t.Errorf("the run ended %s, want stop", res.Reason)
	}
	if diff := cmp.Diff(ch10Messages(s.Messages()), ch10Messages(res.Messages)); diff != "" {
		t.Errorf("the run's transcript (+) against the log's messages (-): they must agree, results in call order:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c1", "c2"}, announced); diff != "" {
		t.Errorf("the run's tool_start events (-want +got): the logged batch reports a ToolStartEvent for every call, in call order, before any runs:\n%s", diff)
	}
}

// ch10Goroutine returns the ID of the calling goroutine, from the first line of its stack
// ("goroutine 7 [running]:"). The tests compare IDs; they never look one up.
func ch10Goroutine() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// ch10NotStarted is how the tests render the result of call id that did not start because of
// err: the text notStarted writes, and its code.
func ch10NotStarted(id, err string) string {
	return "toolResult:" + id + "=Tool call was not started: " + err + " [" + ToolNotStarted + "]"
}

// ch10ResultsOf renders the tool results of messages with their code, if any:
// "toolResult:c1=# tinypi" or "toolResult:c1=Tool call was not started: … [TOOL_NOT_STARTED]".
// A result that is not an error is marked "(not an error)".
func ch10ResultsOf(messages []Message) []string {
	out := []string{}
	for _, m := range messages {
		r, ok := m.(ToolResultMessage)
		if !ok {
			continue
		}
		line := ch10Message(r)
		if code, ok := r.Details["code"]; ok {
			line += fmt.Sprintf(" [%v]", code)
		}
		if !r.IsError {
			line += " (not an error)"
		}
		out = append(out, line)
	}
	return out
}

func TestLab10_4_模型可见即已记录_EveryLoggedCallGetsAResult(t *testing.T) {
	ch10NoLeaks(t)
	t.Run("cancelled while the model answered", func(t *testing.T) {
		s := NewSession("s-01")
		ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读三个文件")})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The run is cancelled while the model answers with three calls: the batch begins with a
		// cancelled ctx, so no call starts, and each still gets its result.
		model := &ch10Model{replies: []AssistantMessage{ch10ToolUse("c1", "c2", "c3")}, onStream: func(int) { cancel() }}
		var mu sync.Mutex
		var ran []string
		var res AgentRunResult
		var reported []string // "tool_start c1", "tool_end c2", …
		runLab(t, func() {
			res, _ = RunAgentLoop(ctx, AgentLoopOptions{Model: model, Session: s,
				ExecuteToolCall: func(_ context.Context, call ToolCall, _ ToolExecContext) (ToolResultMessage, error) {
					mu.Lock()
					ran = append(ran, call.ID)
					mu.Unlock()
					return ToolResultMessage{}, nil
				},
				OnEvent: func(e LoopEvent) {
					switch e := e.(type) {
					case ToolStartEvent:
						reported = append(reported, "tool_start "+e.Call.ID)
					case ToolEndEvent:
						reported = append(reported, "tool_end "+e.Result.ToolCallID)
					}
				}})
		})
		if len(ran) > 0 {
			slices.Sort(ran)
			t.Fatalf("%v ran although the run was cancelled before its batch began: a call whose Start fails does not run", ran)
		}
		wantResults := []string{
			ch10NotStarted("c1", "context canceled"),
			ch10NotStarted("c2", "context canceled"),
			ch10NotStarted("c3", "context canceled"),
		}
		if diff := cmp.Diff(wantResults, ch10ResultsOf(res.Messages)); diff != "" {
			t.Fatalf("the results in the run's transcript (-want +got): a call that never started gets notStarted's result, an error with the code TOOL_NOT_STARTED:\n%s", diff)
		}
		want := []string{
			"0 user/message user:读三个文件",
			"1 turn/start 1",
			"2 model/request through=1 messages=1",
			"3 assistant/message assistant:[c1 c2 c3]",
			"4 tool/call c1",
			"5 tool/call c2",
			"6 tool/call c3",
			"7 tool/result c1 <-4 TOOL_NOT_STARTED",
			"8 tool/result c2 <-5 TOOL_NOT_STARTED",
			"9 tool/result c3 <-6 TOOL_NOT_STARTED",
			"10 turn/end 1 aborted",
		}
		if diff := cmp.Diff(want, ch10Lines(s.Events())); diff != "" {
			t.Fatalf("the log (-want +got): no tool/start for calls that never start, every call answered in call order, then the turn closed as aborted:\n%s", diff)
		}
		if diff := cmp.Diff(wantResults, ch10ResultsOf(s.Messages())); diff != "" {
			t.Errorf("the results the log derives (-want +got):\n%s", diff)
		}
		if res.Reason != RunAborted {
			t.Errorf("the run ended %q, want aborted", res.Reason)
		}
		// The three tool_ends come in the order the calls completed; sort them.
		if len(reported) >= 3 {
			slices.Sort(reported[3:])
		}
		if diff := cmp.Diff([]string{"tool_start c1", "tool_start c2", "tool_start c3", "tool_end c1", "tool_end c2", "tool_end c3"}, reported); diff != "" {
			t.Errorf("the run's tool events (-want +got): every call of the batch gets its tool_start, and its tool_end when its result is in, also a call that never started:\n%s", diff)
		}
	})
	t.Run("the log cannot be written", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "s-01.jsonl")
		s, err := CreateSession(SessionOptions{ID: "s-01", Path: path})
		if err != nil {
			t.Fatal(err)
		}
		ch10Close(t, s)
		ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读两个文件")})
		// The session is closed while the model answers: from then on every flush fails, so no
		// tool/start can be written and no call may start.
		model := &ch10Model{replies: []AssistantMessage{ch10ToolUse("c1", "c2"), ch10Answer("读完了")}, onStream: func(n int) {
			if n == 0 {
				s.Close()
			}
		}}
		var mu sync.Mutex
		var ran []string
		var res AgentRunResult
		runLab(t, func() {
			res, _ = RunAgentLoop(context.Background(), AgentLoopOptions{Model: model, Session: s,
				ExecuteToolCall: func(_ context.Context, call ToolCall, _ ToolExecContext) (ToolResultMessage, error) {
					mu.Lock()
					ran = append(ran, call.ID)
					mu.Unlock()
					return ch10Result(call.ID, "内容"+call.ID), nil
				}})
		})
		if len(ran) > 0 {
			slices.Sort(ran)
			t.Fatalf("%v ran although their tool/start could not be written (the session was closed, so every flush fails): a call whose Start returns an error, whatever the error, does not run", ran)
		}
		wantResults := []string{
			ch10NotStarted("c1", "tinypi: session: the file is closed"),
			ch10NotStarted("c2", "tinypi: session: the file is closed"),
		}
		if diff := cmp.Diff(wantResults, ch10ResultsOf(res.Messages)); diff != "" {
			t.Fatalf("the results in the run's transcript (-want +got): a call whose tool/start could not be written gets notStarted's result:\n%s", diff)
		}
		want := []string{"0 user/message user:读两个文件", "1 turn/start 1", "2 model/request through=1 messages=1"}
		if diff := cmp.Diff(want, ch10FileEvents(t, path)); diff != "" {
			t.Errorf("the file (-want +got): nothing reaches it after the session was closed:\n%s", diff)
		}
		if res.Reason != RunError {
			t.Errorf("the run ended %q, want error: the next request's barrier fails", res.Reason)
		}
	})
	t.Run("abort during the batch", func(t *testing.T) {
		s := NewSession("s-01")
		ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读三个文件")})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		model := &ch10Model{replies: []AssistantMessage{ch10ToolUse("c1", "c2", "c3")}}
		started := make(chan string, 3)
		giveUp := make(chan struct{}) // closed when the test ends: no tool waits beyond it
		exec := func(ctx context.Context, call ToolCall, _ ToolExecContext) (ToolResultMessage, error) {
			started <- call.ID
			select {
			case <-ctx.Done():
			case <-giveUp:
			}
			return ToolResultMessage{}, ctx.Err()
		}
		done := make(chan AgentRunResult, 1)
		go func() {
			defer close(done)
			runLab(t, func() {
				res, _ := RunAgentLoop(ctx, AgentLoopOptions{Model: model, ExecuteToolCall: exec, Session: s})
				done <- res
			})
		}()
		t.Cleanup(func() {
			close(giveUp)
			ch10Await(t, done, "the end of the run (in the test's cleanup)", "the run did not end once its tools returned")
		})
		// The abort comes once all three tools are running.
		for range 3 {
			select {
			case <-started:
			case <-done:
				t.Fatalf("the run ended before its three tools started: %v", ch10Lines(s.Events()))
			}
		}
		cancel()
		res := ch10Await(t, done, "the end of the run, cancelled while its three tools waited for their ctx to be done,", "each tool body runs with the run's ctx and sees the cancellation itself; a ctx detached from it (context.WithoutCancel, context.Background) is never cancelled, so the tools never return")
		if res.Reason != RunAborted {
			t.Errorf("the run ended %q, want aborted", res.Reason)
		}
		events := s.Events()
		results := map[int]int{}
		for _, e := range events {
			if e.Type == EventToolResult {
				results[e.SourceEventSeqs[0]]++
			}
		}
		var unpaired []string
		for _, e := range events {
			if e.Type == EventToolCall && results[e.Seq] != 1 {
				unpaired = append(unpaired, fmt.Sprintf("%s has %d results", ch10Line(e), results[e.Seq]))
			}
		}
		if len(unpaired) > 0 {
			t.Fatalf("after the abort every logged call needs exactly one result:\n%s\nthe log:\n%s", strings.Join(unpaired, "\n"), strings.Join(ch10Lines(events), "\n"))
		}
		// The three tool/starts come in the order the tool goroutines logged them; everything
		// else is fixed.
		var lines []string
		for _, e := range events {
			if e.Type != EventToolStart {
				lines = append(lines, strings.SplitN(ch10Line(e), " ", 2)[1])
			}
		}
		want := []string{
			"user/message user:读三个文件",
			"turn/start 1",
			"model/request through=1 messages=1",
			"assistant/message assistant:[c1 c2 c3]",
			"tool/call c1",
			"tool/call c2",
			"tool/call c3",
			"tool/result c1 <-4",
			"tool/result c2 <-5",
			"tool/result c3 <-6",
			"turn/end 1 aborted",
		}
		if diff := cmp.Diff(want, lines); diff != "" {
			t.Errorf("the log without its tool/starts (-want +got): every call answered, in call order, then the turn closed as aborted:\n%s", diff)
		}
		// The tools saw the abort and returned its error: that is their result, not TOOL_NOT_STARTED.
		wantResults := []string{"toolResult:c1=context canceled", "toolResult:c2=context canceled", "toolResult:c3=context canceled"}
		if diff := cmp.Diff(wantResults, ch10ResultsOf(res.Messages)); diff != "" {
			t.Errorf("the results of the three started calls (-want +got):\n%s", diff)
		}
	})
	t.Run("calls of a cut-off answer", func(t *testing.T) {
		s := NewSession("s-01")
		ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读两个文件")})
		cut := ch10ToolUse("c1", "c2")
		cut.StopReason = StopReasonLength
		model := &ch10Model{replies: []AssistantMessage{cut}}
		var res AgentRunResult
		runLab(t, func() {
			res, _ = RunAgentLoop(context.Background(), AgentLoopOptions{Model: model, Session: s,
				ExecuteToolCall: func(context.Context, ToolCall, ToolExecContext) (ToolResultMessage, error) {
					t.Error("a call of a cut-off answer ran")
					return ToolResultMessage{}, nil
				}})
		})
		want := []string{
			"0 user/message user:读两个文件",
			"1 turn/start 1",
			"2 model/request through=1 messages=1",
			"3 assistant/message assistant:[c1 c2]",
			"4 tool/call c1",
			"5 tool/call c2",
			"6 tool/result c1 <-4",
			"7 tool/result c2 <-5",
			"8 turn/end 1 length",
		}
		if diff := cmp.Diff(want, ch10Lines(s.Events())); diff != "" {
			t.Fatalf("the log (-want +got): a skipped call is logged and answered like any other:\n%s", diff)
		}
		if res.Reason != RunLength {
			t.Errorf("the run ended %q, want length", res.Reason)
		}
	})
	t.Run("the agent logs its prompts and steering", func(t *testing.T) {
		s := NewSession("s-01")
		gate := make(chan struct{})
		var a *Agent
		model := &ch10Model{replies: []AssistantMessage{ch10ToolUse("c1"), ch10Answer("好的，改读 go.mod。")}}
		var err error
		runLab(t, func() {
			a, err = NewAgent(AgentOptions{Model: model, Session: s,
				ExecuteToolCall: func(context.Context, ToolCall, ToolExecContext) (ToolResultMessage, error) {
					if err := a.Steer(UserText("改读 go.mod")); err != nil {
						t.Errorf("Steer: %v", err)
					}
					close(gate)
					return ch10Result("c1", "# tinypi"), nil
				}})
		})
		ch10NoErr(t, err, "NewAgent")
		runLab(t, func() { err = a.Prompt(context.Background(), UserText("读 README")) })
		ch10NoErr(t, err, "Prompt")
		if err := a.WaitForIdle(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st := a.State(); st.LastError != "" {
			if msg := labPending(st.LastError); msg != "" {
				t.Fatal(msg)
			}
			t.Fatalf("the run failed: %s", st.LastError)
		}
		select {
		case <-gate:
		default:
			t.Fatal("the tool never ran")
		}
		want := []string{
			"0 user/message user:读 README",
			"1 turn/start 1",
			"2 model/request through=1 messages=1",
			"3 assistant/message assistant:[c1]",
			"4 tool/call c1",
			"5 tool/start c1 <-4",
			"6 tool/result c1 <-4",
			"7 turn/end 1 toolUse",
			"8 user/message user:改读 go.mod",
			"9 turn/start 2",
			"10 model/request through=9 messages=4",
			"11 assistant/message assistant:好的，改读 go.mod。",
			"12 turn/end 2 stop",
		}
		if diff := cmp.Diff(want, ch10Lines(s.Events())); diff != "" {
			t.Fatalf("the log of an agent run (-want +got): the prompt and the steering message are logged before a request holds them:\n%s", diff)
		}
		if diff := cmp.Diff(ch10Messages(s.Messages()), ch10Messages(a.State().Messages)); diff != "" {
			t.Errorf("the agent's transcript (+) against the log's messages (-):\n%s", diff)
		}
	})
}

func TestLab10_4_模型可见即已记录_WhatTheLogRefusesStopsTheRun(t *testing.T) {
	ch10NoLeaks(t)
	s := NewSession("s-01")
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读 README")})
	model := &ch10Model{replies: []AssistantMessage{ch10Answer("好的")}}
	// A Steering hook hands the run a tool result: the log refuses it (a result enters the log
	// only through its batch), so the run cannot go on with it in its transcript.
	polled := false
	var stopped any
	func() {
		defer func() { stopped = recover() }()
		RunAgentLoop(context.Background(), AgentLoopOptions{Model: model, Session: s, Steering: func() []Message {
			if polled {
				return nil
			}
			polled = true
			return []Message{ch10Result("c9", "一个没有调用的结果")}
		}})
	}()
	if stopped == nil {
		t.Fatalf("the run went on with a steering message the log refused (a tool result): its transcript holds a message the log does not, so the model never sees it; logMessage passes AppendMessage's error to mustLog, which stops the run with a panic")
	}
	if msg := labPending(fmt.Sprint(stopped)); msg != "" {
		t.Fatal(msg)
	}
	if !strings.Contains(fmt.Sprint(stopped), "could not log its own event") {
		t.Fatalf("the run stopped with %q, want mustLog's panic (\"tinypi: the agent loop could not log its own event: …\")", fmt.Sprint(stopped))
	}
	if diff := cmp.Diff([]string{"0 user/message user:读 README"}, ch10Lines(s.Events())); diff != "" {
		t.Errorf("the log (-want +got): the refused message is not in it, and no request was made:\n%s", diff)
	}
}

func TestLab10_4_模型可见即已记录_AStartedCallRuns(t *testing.T) {
	ch10NoLeaks(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The seam: Append stamps each event with SessionOptions.Now. This Now cancels the run while
	// the first tool/start is being logged (the 9th event: the prompt, turn/start, model/request,
	// the assistant and four tool/calls come first), after its Start checked ctx and before it
	// flushed: the window in which a call could be logged as started and then not run.
	var stamps atomic.Int32
	path := filepath.Join(t.TempDir(), "s-01.jsonl")
	s, err := CreateSession(SessionOptions{ID: "s-01", Path: path, Now: func() time.Time {
		if stamps.Add(1) == 9 {
			cancel()
		}
		return time.Now()
	}})
	if err != nil {
		t.Fatal(err)
	}
	ch10Close(t, s)
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读四个文件")})
	model := &ch10Model{replies: []AssistantMessage{ch10ToolUse("c1", "c2", "c3", "c4"), ch10Answer("读完了")}}
	var mu sync.Mutex
	ran := map[string]bool{}
	exec := func(_ context.Context, call ToolCall, _ ToolExecContext) (ToolResultMessage, error) {
		mu.Lock()
		ran[call.ID] = true
		mu.Unlock()
		return ch10Result(call.ID, "内容"+call.ID), nil
	}
	var res AgentRunResult
	runLab(t, func() {
		res, _ = RunAgentLoop(ctx, AgentLoopOptions{Model: model, ExecuteToolCall: exec, Session: s})
	})
	events := s.Events()
	if len(events) < 9 || events[8].Type != EventToolStart {
		t.Fatalf("event 8 of the log is not the first tool/start, so the cancellation did not land where this test wants it:\n%s", strings.Join(ch10Lines(events), "\n"))
	}
	mu.Lock()
	defer mu.Unlock()
	startSeqs := map[int]bool{}
	for _, e := range events {
		if e.Type == EventToolStart {
			startSeqs[e.SourceEventSeqs[0]] = true
		}
	}
	// Which calls got past Start before the cancellation depends on the tool goroutines; the
	// first line of each failure does not, so that it names the mistake, not the interleaving.
	problems := map[string][]string{}
	for _, e := range events {
		if e.Type != EventToolResult {
			continue
		}
		r := e.Message.(ToolResultMessage)
		started, code := startSeqs[e.SourceEventSeqs[0]], r.Details["code"]
		var what string
		switch {
		case started && !ran[r.ToolCallID]:
			what = "a call has a tool/start in the log but its body never ran: once Start logged the tool/start the call has started, and a cancellation that comes after does not stop it"
		case !started && ran[r.ToolCallID]:
			what = "a call ran without a tool/start in the log"
		case started && code == ToolNotStarted:
			what = "a call has a tool/start in the log and a result with code TOOL_NOT_STARTED: a call either started or did not"
		case !started && code != ToolNotStarted:
			what = "a call that never started has a result without the code TOOL_NOT_STARTED: give it notStarted's result"
		default:
			continue
		}
		problems[what] = append(problems[what], fmt.Sprintf("%s: tool/start logged %v, body ran %v, result %q, code %v", r.ToolCallID, started, ran[r.ToolCallID], TextOf(r.Content), code))
	}
	for _, what := range slices.Sorted(maps.Keys(problems)) {
		t.Errorf("%s\n%s\nthe log:\n%s", what, strings.Join(problems[what], "\n"), strings.Join(ch10Lines(events), "\n"))
	}
	if res.Reason != RunAborted {
		t.Errorf("the run ended %q, want aborted", res.Reason)
	}
}

// --- 10.5 ------------------------------------------------------------------------------------

// ch10WriteFile writes a session file by hand: the header, then lines.
func ch10WriteFile(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s-01.jsonl")
	text := `{"format":"tinypi-session","version":1,"session":"s-01"}` + "\n" + strings.Join(lines, "")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The lines of a crashed run: c1 finished, c2 started, c3 never started.
const (
	ch10LineUser      = `{"type":"user/message","seq":0,"data":{"message":{"role":"user","content":[{"type":"text","text":"读三个文件"}]}}}` + "\n"
	ch10LineTurn      = `{"type":"turn/start","seq":1,"data":{"turn":1}}` + "\n"
	ch10LineAssistant = `{"type":"assistant/message","seq":2,"data":{"message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":"{}"},{"type":"toolCall","id":"c2","name":"read","arguments":"{}"},{"type":"toolCall","id":"c3","name":"read","arguments":"{}"}],"stopReason":"toolUse"}}}` + "\n"
	ch10LineCall1     = `{"type":"tool/call","seq":3,"data":{"callId":"c1","name":"read","arguments":"{}"}}` + "\n"
	ch10LineCall2     = `{"type":"tool/call","seq":4,"data":{"callId":"c2","name":"read","arguments":"{}"}}` + "\n"
	ch10LineCall3     = `{"type":"tool/call","seq":5,"data":{"callId":"c3","name":"read","arguments":"{}"}}` + "\n"
	ch10LineStart1    = `{"type":"tool/start","seq":6,"data":{"callId":"c1","name":"read"},"sourceEventSeqs":[3]}` + "\n"
	ch10LineStart2    = `{"type":"tool/start","seq":7,"data":{"callId":"c2","name":"read"},"sourceEventSeqs":[4]}` + "\n"
	ch10LineResult1   = `{"type":"tool/result","seq":8,"data":{"message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"# tinypi"}]}},"sourceEventSeqs":[3]}` + "\n"
)

// ch10CallLine, ch10StartLine and ch10ResultLine write the lines of a call's events by hand.
func ch10CallLine(seq int, id string) string {
	return fmt.Sprintf(`{"type":"tool/call","seq":%d,"data":{"callId":%q,"name":"read","arguments":"{}"}}`+"\n", seq, id)
}

func ch10StartLine(seq int, id string, callSeq int) string {
	return fmt.Sprintf(`{"type":"tool/start","seq":%d,"data":{"callId":%q,"name":"read"},"sourceEventSeqs":[%d]}`+"\n", seq, id, callSeq)
}

func ch10ResultLine(seq int, id string, callSeq int) string {
	return fmt.Sprintf(`{"type":"tool/result","seq":%d,"data":{"message":{"role":"toolResult","toolCallId":%q,"toolName":"read","content":[{"type":"text","text":"内容%s"}]}},"sourceEventSeqs":[%d]}`+"\n", seq, id, id, callSeq)
}

func TestLab10_5_崩溃修复_TornLastLineIsCutDamageIsRefused(t *testing.T) {
	ch10NoLeaks(t)
	torn := `{"type":"tool/result","seq":4,"data":{"mess`
	path := ch10WriteFile(t, ch10LineUser, ch10LineTurn, `{"type":"turn/end","seq":2,"data":{"turn":1,"reason":"stop"}}`+"\n", torn)
	s, rep := ch10Load(t, path)
	if rep.TornBytes != len(torn) {
		t.Errorf("TornBytes = %d, want %d (the torn line's length)", rep.TornBytes, len(torn))
	}
	want := []string{"0 user/message user:读三个文件", "1 turn/start 1", "2 turn/end 1 stop"}
	if diff := cmp.Diff(want, ch10Lines(s.Events())); diff != "" {
		t.Fatalf("the loaded log (-want +got): a torn last line is cut, everything before it kept:\n%s", diff)
	}
	if diff := cmp.Diff(want, ch10FileEvents(t, path)); diff != "" {
		t.Fatalf("the file after loading (-want +got): the torn line is cut from the file too, so the next append starts a clean line:\n%s", diff)
	}
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("继续")})
	ch10NoErr(t, s.Flush(context.Background()), "Flush")
	if diff := cmp.Diff(append(want, "3 user/message user:继续"), ch10FileEvents(t, path)); diff != "" {
		t.Fatalf("the file after appending to the loaded session (-want +got):\n%s", diff)
	}
	// Only the newline is missing: the line holds a whole event, and it is torn all the same.
	// A write ends with its newline; one that did not reach it did not finish.
	whole := `{"type":"user/message","seq":3,"data":{"message":{"role":"user","content":[{"type":"text","text":"继续"}]}}}`
	path = ch10WriteFile(t, ch10LineUser, ch10LineTurn, `{"type":"turn/end","seq":2,"data":{"turn":1,"reason":"stop"}}`+"\n", whole)
	s, rep = ch10Load(t, path)
	if got := ch10Lines(s.Events()); rep.TornBytes != len(whole) || !slices.Equal(got, want) {
		t.Fatalf("a last line that is a whole event without its newline was kept: loading gave TornBytes %d and the log below, want TornBytes %d and the 3 events before it: a last line without its newline is torn, whatever it holds\n%s", rep.TornBytes, len(whole), strings.Join(got, "\n"))
	}

	damaged := []struct {
		name  string
		lines []string
		line  int
	}{
		{"bad JSON before the last line", []string{ch10LineUser, `{"type":"turn/start",` + "\n", ch10LineAssistant}, 3},
		{"a complete last line that is not JSON", []string{ch10LineUser, "not json\n"}, 3},
		{"a seq out of step", []string{ch10LineUser, ch10LineAssistant}, 3},
		{"an unknown type not marked ignorable", []string{ch10LineUser, `{"type":"tool/progress","seq":1,"data":{}}` + "\n"}, 3},
		{"a result that answers no call", []string{ch10LineUser, ch10LineTurn, ch10LineAssistant, strings.Replace(ch10LineResult1, `"seq":8`, `"seq":3`, 1)}, 5},
		// Every rule Append follows, LoadSession follows too: the last line of each log below is
		// an event Append refuses after the ones before it.
		{"a second result for one call, its seq renumbered", []string{ch10LineUser, ch10LineTurn, ch10LineAssistant, ch10CallLine(3, "c1"), ch10ResultLine(4, "c1", 3), ch10ResultLine(5, "c1", 3)}, 7},
		{"a result whose toolCallId is another call's", []string{ch10LineUser, ch10LineTurn, ch10LineAssistant, ch10CallLine(3, "c1"), ch10CallLine(4, "c2"), ch10ResultLine(5, "c2", 3)}, 7},
		{"a tool/call without an ID", []string{ch10LineUser, `{"type":"tool/call","seq":1,"data":{"name":"read","arguments":"{}"}}` + "\n"}, 3},
		{"a tool/start whose callId is another call's", []string{ch10LineUser, ch10LineTurn, ch10LineAssistant, ch10CallLine(3, "c1"), ch10CallLine(4, "c2"), ch10StartLine(5, "c2", 3)}, 7},
		{"a second tool/start of one call", []string{ch10LineUser, ch10LineTurn, ch10LineAssistant, ch10CallLine(3, "c1"), ch10StartLine(4, "c1", 3), ch10StartLine(5, "c1", 3)}, 7},
		{"a tool/start after the call's result", []string{ch10LineUser, ch10LineTurn, ch10LineAssistant, ch10CallLine(3, "c1"), ch10ResultLine(4, "c1", 3), ch10StartLine(5, "c1", 3)}, 7},
		{"a tool/result holding a user message", []string{ch10LineUser, ch10LineTurn, ch10LineAssistant, ch10CallLine(3, "c1"), `{"type":"tool/result","seq":4,"data":{"message":{"role":"user","content":[{"type":"text","text":"x"}]}},"sourceEventSeqs":[3]}` + "\n"}, 6},
	}
	for _, c := range damaged {
		path := ch10WriteFile(t, c.lines...)
		before, _ := os.ReadFile(path)
		err := ch10Within(t, "LoadSession", ch10LockWhy, func() error {
			s, _, err := LoadSession(path, SessionOptions{})
			if err == nil {
				s.Close()
			}
			return err
		})
		var damage *SessionDamageError
		if !errors.As(err, &damage) {
			t.Errorf("%s: LoadSession returned no *SessionDamageError\n%v", c.name, err)
			continue
		}
		if damage.Line != c.line {
			t.Errorf("%s: the error names line %d, want line %d\n%v", c.name, damage.Line, c.line, err)
		}
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Errorf("%s: loading changed the damaged file; it must be left as it was", c.name)
		}
	}
	// The same events, appended one by one: Append refuses exactly the event LoadSession refused.
	for _, c := range damaged[3:] {
		s := NewSession("s-01")
		for i, line := range c.lines {
			e, err := DecodeSessionEvent([]byte(strings.TrimSuffix(line, "\n")))
			if err != nil {
				t.Fatalf("%s: line %d of the test's log: %v", c.name, i+2, err)
			}
			err = ch10Within(t, "Append", ch10LockWhy, func() error { _, err := s.Append(e); return err })
			if last := i == len(c.lines)-1; last && err == nil {
				t.Errorf("%s: Append accepted the event LoadSession refuses at line %d", c.name, c.line)
			} else if !last && err != nil {
				t.Errorf("%s: Append refused the event of line %d: %v", c.name, i+2, err)
			}
		}
	}
	ok := ch10WriteFile(t, ch10LineUser, `{"type":"tool/progress","seq":1,"data":{},"ignorable":true}`+"\n")
	if s, _ := ch10Load(t, ok); s.Len() != 2 {
		t.Errorf("a log with an ignorable unknown event loads with %d events, want 2", s.Len())
	}
}

func TestLab10_5_崩溃修复_EveryCallGetsAResult(t *testing.T) {
	ch10NoLeaks(t)
	path := ch10WriteFile(t, ch10LineUser, ch10LineTurn, ch10LineAssistant, ch10LineCall1, ch10LineCall2, ch10LineCall3, ch10LineStart1, ch10LineStart2, ch10LineResult1)
	s, rep := ch10Load(t, path)
	codes := map[string]any{}
	for _, e := range s.Events() {
		if r, ok := e.Message.(ToolResultMessage); ok && e.Type == EventToolResult {
			codes[r.ToolCallID] = r.Details["code"]
		}
	}
	if codes["c2"] != ToolOutcomeUnknown {
		t.Fatalf("the repair result of c2 has code %v, want TOOL_OUTCOME_UNKNOWN: its tool/start is in the log, so it may have run", codes["c2"])
	}
	if codes["c3"] != ToolNotStarted {
		t.Fatalf("the repair result of c3 has code %v, want TOOL_NOT_STARTED: it has no tool/start", codes["c3"])
	}
	if events := s.Events(); ch10Line(events[len(events)-1]) != fmt.Sprintf("%d turn/end 1 interrupted", len(events)-1) {
		t.Fatalf("the repaired log ends with %q: the interrupted turn 1 needs its turn/end, reason interrupted", ch10Line(events[len(events)-1]))
	}
	want := []string{
		"0 user/message user:读三个文件",
		"1 turn/start 1",
		"2 assistant/message assistant:[c1 c2 c3]",
		"3 tool/call c1",
		"4 tool/call c2",
		"5 tool/call c3",
		"6 tool/start c1 <-3",
		"7 tool/start c2 <-4",
		"8 tool/result c1 <-3",
		"9 tool/result c2 <-4 TOOL_OUTCOME_UNKNOWN",
		"10 tool/result c3 <-5 TOOL_NOT_STARTED",
		"11 turn/end 1 interrupted",
	}
	if diff := cmp.Diff(want, ch10Lines(s.Events())); diff != "" {
		t.Fatalf("the repaired log (-want +got): c2 started without a result (outcome unknown), c3 never started; results in call order, then the turn is closed:\n%s", diff)
	}
	if diff := cmp.Diff([]int{9, 10, 11}, rep.Appended); diff != "" {
		t.Errorf("SessionRepair.Appended (-want +got):\n%s", diff)
	}
	for _, e := range s.Events()[9:11] {
		if r := e.Message.(ToolResultMessage); !r.IsError || TextOf(r.Content) == "" {
			t.Errorf("the repair result of %s is not an error with a text for the model: %+v", r.ToolCallID, r)
		}
	}
	if diff := cmp.Diff(want, ch10FileEvents(t, path)); diff != "" {
		t.Fatalf("the file after loading (-want +got): repairs are written before LoadSession returns:\n%s", diff)
	}

	// The model asked for c2 and c3, but the crash came before their tool/calls were written.
	path = ch10WriteFile(t, ch10LineUser, ch10LineTurn, ch10LineAssistant, ch10LineCall1)
	s, rep = ch10Load(t, path)
	want = []string{
		"0 user/message user:读三个文件",
		"1 turn/start 1",
		"2 assistant/message assistant:[c1 c2 c3]",
		"3 tool/call c1",
		"4 tool/call c2",
		"5 tool/call c3",
		"6 tool/result c1 <-3 TOOL_NOT_STARTED",
		"7 tool/result c2 <-4 TOOL_NOT_STARTED",
		"8 tool/result c3 <-5 TOOL_NOT_STARTED",
		"9 turn/end 1 interrupted",
	}
	if diff := cmp.Diff(want, ch10Lines(s.Events())); diff != "" {
		t.Fatalf("the repaired log (-want +got): every call the last assistant asked for is logged and answered:\n%s", diff)
	}
	if diff := cmp.Diff([]int{6, 7, 8, 9}, rep.Appended); diff != "" {
		t.Errorf("SessionRepair.Appended when repair also logged two tool/calls (-want +got): the seqs of the results and of the turn/end, not of the tool/calls:\n%s", diff)
	}

	// Only c2 started: the results still follow the order of the tool/calls, whatever their codes.
	path = ch10WriteFile(t, ch10LineUser, ch10LineTurn, ch10LineAssistant, ch10LineCall1, ch10LineCall2, ch10LineCall3, ch10StartLine(6, "c2", 4))
	s, _ = ch10Load(t, path)
	want = []string{
		"7 tool/result c1 <-3 TOOL_NOT_STARTED",
		"8 tool/result c2 <-4 TOOL_OUTCOME_UNKNOWN",
		"9 tool/result c3 <-5 TOOL_NOT_STARTED",
		"10 turn/end 1 interrupted",
	}
	if diff := cmp.Diff(want, ch10Lines(s.Events())[7:]); diff != "" {
		t.Fatalf("the repaired end of a log where only c2 started (-want +got): one result per call, in the order of the tool/calls:\n%s", diff)
	}

	// The crash came after the answer and before its turn/end: no call needs a result, and the
	// turn is closed all the same.
	answered := `{"type":"assistant/message","seq":2,"data":{"message":{"role":"assistant","content":[{"type":"text","text":"好"}],"stopReason":"stop"}}}` + "\n"
	path = ch10WriteFile(t, ch10LineUser, ch10LineTurn, answered)
	s, rep = ch10Load(t, path)
	if diff := cmp.Diff([]string{"0 user/message user:读三个文件", "1 turn/start 1", "2 assistant/message assistant:好", "3 turn/end 1 interrupted"}, ch10Lines(s.Events())); diff != "" {
		t.Fatalf("the repaired log of a turn cut before its turn/end, with no call in it (-want +got): an open turn is closed even when no call needed a result:\n%s", diff)
	}

	// A log that ended cleanly needs no repair, and loading it twice changes nothing.
	clean := []string{ch10LineUser, ch10LineTurn, answered, `{"type":"turn/end","seq":3,"data":{"turn":1,"reason":"stop"}}` + "\n"}
	path = ch10WriteFile(t, clean...)
	if _, rep := ch10Load(t, path); len(rep.Appended) != 0 || rep.TornBytes != 0 {
		t.Errorf("a clean log was repaired: %+v", rep)
	}
}

// ch10AssistantLine writes, by hand, the line of an assistant message asking for calls ids.
func ch10AssistantLine(seq int, ids ...string) string {
	var blocks []string
	for _, id := range ids {
		blocks = append(blocks, fmt.Sprintf(`{"type":"toolCall","id":%q,"name":"read","arguments":"{}"}`, id))
	}
	return fmt.Sprintf(`{"type":"assistant/message","seq":%d,"data":{"message":{"role":"assistant","content":[%s],"stopReason":"toolUse"}}}`+"\n", seq, strings.Join(blocks, ","))
}

func TestLab10_5_崩溃修复_CallIDsReusedInALaterTurn(t *testing.T) {
	ch10NoLeaks(t)
	// Providers number calls per response, so turn 2 asks for c1 and c2 again. In turn 1 both
	// started and have their results; in turn 2 only c1's tool/call was written before the crash.
	path := ch10WriteFile(t,
		ch10LineUser,
		ch10LineTurn,
		ch10AssistantLine(2, "c1", "c2"),
		ch10CallLine(3, "c1"),
		ch10CallLine(4, "c2"),
		ch10StartLine(5, "c1", 3),
		ch10StartLine(6, "c2", 4),
		ch10ResultLine(7, "c1", 3),
		ch10ResultLine(8, "c2", 4),
		`{"type":"turn/end","seq":9,"data":{"turn":1,"reason":"toolUse"}}`+"\n",
		`{"type":"turn/start","seq":10,"data":{"turn":2}}`+"\n",
		ch10AssistantLine(11, "c1", "c2"),
		ch10CallLine(12, "c1"),
	)
	s, _ := ch10Load(t, path)
	events := s.Events()
	lines := ch10Lines(events)
	if !slices.Contains(lines[12:], "13 tool/call c2") {
		t.Fatalf("the repair logged no tool/call for turn 2's c2: the c2 logged in turn 1 does not count, only the calls logged since the last assistant message do\n%s", strings.Join(lines, "\n"))
	}
	for _, e := range events[12:] {
		if r, ok := e.Message.(ToolResultMessage); ok && e.SourceEventSeqs[0] == 12 && r.Details["code"] != ToolNotStarted {
			t.Fatalf("the repair result of turn 2's c1 (tool/call seq 12) has code %v, want TOOL_NOT_STARTED: the c1 that started was turn 1's; a call is known by the seq of its tool/call, not by its ID", r.Details["code"])
		}
	}
	want := []string{
		"12 tool/call c1",
		"13 tool/call c2",
		"14 tool/result c1 <-12 TOOL_NOT_STARTED",
		"15 tool/result c2 <-13 TOOL_NOT_STARTED",
		"16 turn/end 2 interrupted",
	}
	if diff := cmp.Diff(want, lines[12:]); diff != "" {
		t.Fatalf("the repaired end of the log (-want +got): turn 1 is complete; turn 2's two calls are logged, answered as not started, and the turn is closed:\n%s", diff)
	}

	// Nothing stops one answer from naming two calls alike: the tool/start of the first c1
	// (seq 3) is not the second's (seq 4).
	path = ch10WriteFile(t,
		ch10LineUser,
		ch10LineTurn,
		ch10AssistantLine(2, "c1", "c1"),
		ch10CallLine(3, "c1"),
		ch10CallLine(4, "c1"),
		ch10StartLine(5, "c1", 3),
	)
	s, _ = ch10Load(t, path)
	want = []string{
		"6 tool/result c1 <-3 TOOL_OUTCOME_UNKNOWN",
		"7 tool/result c1 <-4 TOOL_NOT_STARTED",
		"8 turn/end 1 interrupted",
	}
	if diff := cmp.Diff(want, ch10Lines(s.Events())[6:]); diff != "" {
		t.Fatalf("the repaired end of a log whose answer named two calls c1, the first started (-want +got): a call is known by the seq of its tool/call, not by its ID:\n%s", diff)
	}
}

// ch10TurnLine and ch10UserLine write a turn/start or turn/end line and a user/message line by
// hand.
func ch10TurnLine(seq int, typ SessionEventType, turn int, reason string) string {
	if typ == EventTurnStart {
		return fmt.Sprintf(`{"type":"turn/start","seq":%d,"data":{"turn":%d}}`+"\n", seq, turn)
	}
	return fmt.Sprintf(`{"type":"turn/end","seq":%d,"data":{"turn":%d,"reason":%q}}`+"\n", seq, turn, reason)
}

func ch10UserLine(seq int, text string) string {
	return fmt.Sprintf(`{"type":"user/message","seq":%d,"data":{"message":{"role":"user","content":[{"type":"text","text":%q}]}}}`+"\n", seq, text)
}

func TestLab10_5_崩溃修复_RepairReadsTheWholeLog(t *testing.T) {
	ch10NoLeaks(t)
	// A second run on a session numbers its turns from 1 again: the turn/end closes the open
	// turn, with the number its turn/start gave it.
	path := ch10WriteFile(t,
		ch10LineUser,
		ch10TurnLine(1, EventTurnStart, 1, ""),
		`{"type":"assistant/message","seq":2,"data":{"message":{"role":"assistant","content":[{"type":"text","text":"好"}],"stopReason":"stop"}}}`+"\n",
		ch10TurnLine(3, EventTurnEnd, 1, "stop"),
		ch10UserLine(4, "再来"),
		ch10TurnLine(5, EventTurnStart, 1, ""),
	)
	s, _ := ch10Load(t, path)
	if got := ch10Lines(s.Events())[6:]; !slices.Equal(got, []string{"6 turn/end 1 interrupted"}) {
		t.Fatalf("a log whose second run (turn/start 1 at seq 5) was cut is repaired with %q, want [\"6 turn/end 1 interrupted\"]: the turn/end carries the number of the open turn's turn/start, not a count of turns", got)
	}

	// A call left without a result in an earlier turn (a log another program wrote, say) is
	// answered too: every logged call gets a result, not only the last answer's.
	path = ch10WriteFile(t,
		ch10LineUser,
		ch10TurnLine(1, EventTurnStart, 1, ""),
		ch10AssistantLine(2, "c1"),
		ch10CallLine(3, "c1"),
		ch10TurnLine(4, EventTurnEnd, 1, "aborted"),
		ch10UserLine(5, "再来"),
		ch10TurnLine(6, EventTurnStart, 2, ""),
		ch10AssistantLine(7, "c2"),
		ch10CallLine(8, "c2"),
	)
	s, _ = ch10Load(t, path)
	want := []string{"9 tool/result c1 <-3 TOOL_NOT_STARTED", "10 tool/result c2 <-8 TOOL_NOT_STARTED", "11 turn/end 2 interrupted"}
	if diff := cmp.Diff(want, ch10Lines(s.Events())[9:]); diff != "" {
		t.Fatalf("the repaired end of a log whose turn 1 left c1 without a result (-want +got): repair walks the whole log, and every call without a result gets one, in the order of the tool/calls:\n%s", diff)
	}

	// A fork's inherited events are part of its log: a call they left without a result is
	// answered too. The fork was taken at seq 4; its own events are the prompt and turn/start 2.
	path = filepath.Join(t.TempDir(), "b1.jsonl")
	text := `{"format":"tinypi-session","version":1,"session":"b1","parent":"root","forkSeq":4}` + "\n" +
		ch10LineUser +
		ch10TurnLine(1, EventTurnStart, 1, "") +
		ch10AssistantLine(2, "c1") +
		ch10CallLine(3, "c1") +
		ch10TurnLine(4, EventTurnEnd, 1, "aborted") +
		ch10UserLine(5, "再来") +
		ch10TurnLine(6, EventTurnStart, 2, "")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ = ch10Load(t, path)
	want = []string{"7 tool/result c1 <-3 TOOL_NOT_STARTED", "8 turn/end 2 interrupted"}
	if diff := cmp.Diff(want, ch10Lines(s.Events())[7:]); diff != "" {
		t.Fatalf("the repaired end of a fork whose inherited events left c1 without a result (-want +got): repair walks the inherited events (s.base) first, then the fork's own:\n%s", diff)
	}

	// The loop logs and answers the calls of every answer that has any, a cut-off one too: when
	// the crash came before the tool/calls of a cut-off (length) answer, repair logs them.
	path = ch10WriteFile(t,
		ch10LineUser,
		ch10TurnLine(1, EventTurnStart, 1, ""),
		`{"type":"assistant/message","seq":2,"data":{"message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":"{}"},{"type":"toolCall","id":"c2","name":"read","arguments":"{\"pa"}],"stopReason":"length"}}}`+"\n",
	)
	s, _ = ch10Load(t, path)
	want = []string{"3 tool/call c1", "4 tool/call c2", "5 tool/result c1 <-3 TOOL_NOT_STARTED", "6 tool/result c2 <-4 TOOL_NOT_STARTED", "7 turn/end 1 interrupted"}
	if diff := cmp.Diff(want, ch10Lines(s.Events())[3:]); diff != "" {
		t.Fatalf("the repaired end of a log cut after an answer that ran out of tokens (stop reason length) with two calls (-want +got): the calls of the last answer are logged and answered whatever its stop reason, as the loop does:\n%s", diff)
	}
}

// ch10LoadError returns the error LoadSession gives for path, failing the test at once when it
// does not return, or when it loads the file.
func ch10LoadError(t *testing.T, what, why, path string, opts SessionOptions) error {
	t.Helper()
	err := ch10Within(t, "LoadSession of "+what, why, func() error {
		s, _, err := LoadSession(path, opts)
		if err == nil {
			s.Close()
		}
		return err
	})
	if err == nil {
		t.Fatalf("LoadSession loaded %s; want an error", what)
	}
	return err
}

func TestLab10_5_崩溃修复_ReadingIsBounded(t *testing.T) {
	ch10NoLeaks(t)
	// A torn last line longer than the limit is a torn line all the same: cut off.
	torn := strings.Repeat("x", 5000)
	path := ch10WriteFile(t, ch10LineUser, torn)
	s, rep := ch10LoadWith(t, path, SessionOptions{MaxLineBytes: 1024})
	if rep.TornBytes != 5000 || s.Len() != 1 {
		t.Fatalf("a log whose torn last line (5000 bytes) is longer than MaxLineBytes (1024) loaded with TornBytes %d and %d events, want 5000 and 1: a torn line is cut whatever its length", rep.TornBytes, s.Len())
	}

	// A complete line longer than the limit is refused, and the error names the limit.
	long := `{"type":"user/message","seq":1,"data":{"message":{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("长", 700) + `"}]}}}` + "\n"
	path = ch10WriteFile(t, ch10LineUser, long)
	err := ch10LoadError(t, "a log with a line of 2,200 bytes and MaxLineBytes 1024", ch10LockWhy, path, SessionOptions{MaxLineBytes: 1024})
	var damage *SessionDamageError
	if !errors.As(err, &damage) || damage.Line != 3 || !strings.Contains(damage.Reason, "1024") {
		t.Fatalf("LoadSession of a log whose line 3 is longer than MaxLineBytes (1024) did not return a *SessionDamageError for line 3 whose reason names the limit, 1024:\n%v", err)
	}
	if s, _ := ch10Load(t, path); s.Len() != 2 {
		t.Errorf("with the default limit the log of 2,200-byte lines loads %d events, want 2", s.Len())
	}

	// A line of 8 MiB (a sparse file: its bytes cost no disk) with a limit of 1024 bytes: the
	// reader refuses it without holding it.
	path = filepath.Join(t.TempDir(), "huge.jsonl")
	head := `{"format":"tinypi-session","version":1,"session":"s-01"}` + "\n" + ch10LineUser
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(head); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("\n"), int64(len(head))+8<<20); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = ch10LoadError(t, "a log with a line of 8 MiB and MaxLineBytes 1024", "reading one line never ends", path, SessionOptions{MaxLineBytes: 1024})
	runtime.ReadMemStats(&after)
	if !errors.As(err, &damage) || damage.Line != 3 || !strings.Contains(damage.Reason, "1024") {
		t.Fatalf("LoadSession of a log whose line 3 holds 8 MiB, with MaxLineBytes 1024, did not return a *SessionDamageError for line 3 whose reason names the limit, 1024:\n%v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 2<<20 {
		t.Errorf("LoadSession allocated more than 2 MiB to refuse a line of 8 MiB with MaxLineBytes 1024: read a line in pieces and keep no more of it than the limit\n(it allocated %.1f MiB)", float64(grew)/(1<<20))
	}

	// What is not a regular file is refused at once, without waiting for a writer.
	fifo := filepath.Join(t.TempDir(), "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A LoadSession stuck opening the pipe is released by a writer that comes and goes.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	for _, c := range []struct{ what, path string }{
		{"a named pipe", fifo},
		{"a directory", t.TempDir()},
		{"a device (/dev/null)", os.DevNull},
	} {
		if err := ch10LoadError(t, c.what, "opening a named pipe for reading waits for a writer; open the file without blocking (syscall.O_NONBLOCK) and refuse what is not a regular file", c.path, SessionOptions{}); !errors.Is(err, ErrNotRegularFile) {
			t.Errorf("LoadSession of %s returned an error that does not wrap ErrNotRegularFile:\n%v", c.what, err)
		}
	}
}

// --- 10.6 ------------------------------------------------------------------------------------

// ch10Turn logs one finished turn: a prompt, a request, an answer, turn/end. It returns the
// seq of the turn/end.
func ch10Turn(t *testing.T, s *Session, n int, prompt, answer string) int {
	t.Helper()
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText(prompt)})
	ch10Append(t, s, SessionEvent{Type: EventTurnStart, Turn: n})
	ch10Append(t, s, SessionEvent{Type: EventAssistantMessage, Message: ch10Answer(answer)})
	return ch10Append(t, s, SessionEvent{Type: EventTurnEnd, Turn: n, Reason: "stop"})
}

// ch10Tree calls NewSessionTree(sessions...), failing the test at once when it does not return.
func ch10Tree(t *testing.T, why string, sessions ...*Session) (*SessionTree, error) {
	t.Helper()
	var ids []string
	for _, s := range sessions {
		ids = append(ids, s.ID())
	}
	type built struct {
		tree *SessionTree
		err  error
	}
	b := ch10Within(t, fmt.Sprintf("NewSessionTree(%s)", strings.Join(ids, ", ")), why, func() built {
		tree, err := NewSessionTree(sessions...)
		return built{tree, err}
	})
	return b.tree, b.err
}

func TestLab10_6_分叉与会话树_ForkAtATurnBoundary(t *testing.T) {
	ch10NoLeaks(t)
	root := NewSession("root")
	end1 := ch10Turn(t, root, 1, "你好", "你好！")
	ch10Turn(t, root, 2, "读 README", "README 说……")

	// Every call on root goes through ch10Within: a Fork that returned without releasing the
	// session's lock makes the next call wait forever.
	for _, at := range []int{0, 1, 2, 99, -1} {
		err := ch10Within(t, fmt.Sprintf("root.Fork(%d)", at), ch10LockWhy, func() error { _, err := root.Fork(at, SessionOptions{ID: "bad"}); return err })
		if err == nil {
			t.Errorf("Fork(%d) succeeded; forks are taken only at a turn/end event (seq %d or 7)", at, end1)
		}
	}
	fork := ch10Fork(t, root, end1, SessionOptions{ID: "b1"})
	if parent, seq := fork.Parent(); parent != "root" || seq != 3 {
		t.Errorf("fork.Parent() = %q, %d; want \"root\", 3", parent, seq)
	}
	if diff := cmp.Diff([]string{"user:你好", "assistant:你好！"}, ch10Messages(fork.Messages())); diff != "" {
		t.Fatalf("the fork's messages (-want +got): the parent's history through the turn/end, nothing after:\n%s", diff)
	}
	ch10Turn(t, fork, 2, "读 go.mod", "go.mod 说……")
	want := []string{
		"0 user/message user:你好",
		"1 turn/start 1",
		"2 assistant/message assistant:你好！",
		"3 turn/end 1 stop",
		"4 user/message user:读 go.mod",
		"5 turn/start 2",
		"6 assistant/message assistant:go.mod 说……",
		"7 turn/end 2 stop",
	}
	if diff := cmp.Diff(want, ch10Lines(fork.Events())); diff != "" {
		t.Fatalf("the fork's log (-want +got): its own events go on from seq 4:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"user:你好", "assistant:你好！", "user:读 README", "assistant:README 说……"}, ch10Messages(ch10SessionMessages(t, root))); diff != "" {
		t.Fatalf("the parent's messages after the fork appended (-want +got): a fork never changes its parent:\n%s", diff)
	}

	// A fork with a file holds its whole branch and names its parent.
	path := filepath.Join(t.TempDir(), "b2.jsonl")
	onDisk := ch10Fork(t, root, 7, SessionOptions{ID: "b2", Path: path})
	ch10Close(t, onDisk)
	lines := ch10FileLines(t, path)
	if lines[0] != `{"format":"tinypi-session","version":1,"session":"b2","parent":"root","forkSeq":7}`+"\n" {
		t.Errorf("the fork's header is %q", lines[0])
	}
	if got := len(ch10FileEvents(t, path)); got != 8 {
		t.Errorf("the fork's file holds %d events, want the 8 of its branch", got)
	}

	// Every turn/end is a turn boundary, whatever the turn's reason: an aborted turn ended too.
	ch10Append(t, root, SessionEvent{Type: EventUserMessage, Message: UserText("再读一遍")})
	ch10Append(t, root, SessionEvent{Type: EventTurnStart, Turn: 3})
	aborted := ch10Append(t, root, SessionEvent{Type: EventTurnEnd, Turn: 3, Reason: "aborted"})
	err := ch10Within(t, fmt.Sprintf("root.Fork(%d)", aborted), ch10LockWhy, func() error { _, err := root.Fork(aborted, SessionOptions{ID: "b3"}); return err })
	if err != nil {
		t.Errorf("Fork at seq 10, the turn/end of an aborted turn, failed: every turn/end is a turn boundary, whatever the reason the turn ended\n%v", err)
	}
}

func TestLab10_6_分叉与会话树_PathToALeaf(t *testing.T) {
	ch10NoLeaks(t)
	root := NewSession("root")
	end1 := ch10Turn(t, root, 1, "你好", "你好！")
	ch10Turn(t, root, 2, "读 README", "README 说……")
	a := ch10Fork(t, root, end1, SessionOptions{ID: "a"})
	endA := ch10Turn(t, a, 2, "读 go.mod", "go.mod 说……")
	ch10Turn(t, a, 3, "再读 Makefile", "Makefile 说……")
	b := ch10Fork(t, a, endA, SessionOptions{ID: "b"})
	ch10Turn(t, b, 3, "读 docs", "docs 说……")
	c := ch10Fork(t, root, end1, SessionOptions{ID: "c"})

	tree, err := ch10Tree(t, "PathTo never reaches a root", c, b, root, a)
	ch10NoErr(t, err, "NewSessionTree")
	paths := []struct {
		leaf string
		want []string
	}{
		{"root", []string{"root"}},
		{"a", []string{"root", "a"}},
		{"b", []string{"root", "a", "b"}},
		{"c", []string{"root", "c"}},
	}
	for _, p := range paths {
		got := callLab(t, func() []string {
			path, err := tree.PathTo(p.leaf)
			ch10NoErr(t, err, "PathTo")
			return path
		})
		if diff := cmp.Diff(p.want, got); diff != "" {
			t.Errorf("PathTo(%q) (-want +got): the sessions from the root to the leaf:\n%s", p.leaf, diff)
		}
	}
	if err := callLab(t, func() error { _, err := tree.PathTo("nope"); return err }); err == nil {
		t.Errorf("PathTo of a session not in the tree succeeded")
	}
	type branch struct {
		messages []Message
		err      error
	}
	br := callLab(t, func() branch { m, err := tree.BranchMessages("b"); return branch{m, err} })
	ch10NoErr(t, br.err, "BranchMessages")
	got := br.messages
	if diff := cmp.Diff([]string{"user:你好", "assistant:你好！", "user:读 go.mod", "assistant:go.mod 说……", "user:读 docs", "assistant:docs 说……"}, ch10Messages(got)); diff != "" {
		t.Errorf("BranchMessages(b) (-want +got): a's turn 3 is not on b's branch:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "c"}, tree.Children("root")); diff != "" {
		t.Errorf("Children(root) (-want +got):\n%s", diff)
	}
	if _, err := ch10Tree(t, "PathTo never reaches a root", b, root); err == nil {
		t.Errorf("a tree without b's parent a was accepted")
	}
}

// ch10ForkFile writes, by hand, the file of session id forked from parent at forkSeq: one finished
// turn (seq 0–3), the turn/end at seq 3.
func ch10ForkFile(t *testing.T, dir, id, parent string, forkSeq int) string {
	t.Helper()
	path := filepath.Join(dir, id+".jsonl")
	text := fmt.Sprintf(`{"format":"tinypi-session","version":1,"session":%q,"parent":%q,"forkSeq":%d}`+"\n", id, parent, forkSeq) +
		`{"type":"user/message","seq":0,"data":{"message":{"role":"user","content":[{"type":"text","text":"你好"}]}}}` + "\n" +
		`{"type":"turn/start","seq":1,"data":{"turn":1}}` + "\n" +
		`{"type":"assistant/message","seq":2,"data":{"message":{"role":"assistant","content":[{"type":"text","text":"你好！"}],"stopReason":"stop"}}}` + "\n" +
		`{"type":"turn/end","seq":3,"data":{"turn":1,"reason":"stop"}}` + "\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLab10_6_分叉与会话树_OnlyWholeForksAndTrees(t *testing.T) {
	ch10NoLeaks(t)
	root := NewSession("root")
	end1 := ch10Turn(t, root, 1, "你好", "你好！")
	ch10Turn(t, root, 2, "读 README", "README 说……")
	dir := t.TempDir()
	path := filepath.Join(dir, "b.jsonl")
	ch10Close(t, ch10Fork(t, root, 7, SessionOptions{ID: "b", Path: path}))

	// A fork's file is written whole when the fork is made: a file that ends before its fork
	// point (here inside seq 4, line 6, while the header says seq 7) is damage, not a crash.
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(whole, []byte("\n"))
	cut := len(bytes.Join(lines[:5], nil)) + len(lines[5])/2
	if err := os.WriteFile(path, whole[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	err = ch10LoadError(t, "a fork file cut before its fork point", ch10LockWhy, path, SessionOptions{})
	var damage *SessionDamageError
	if !errors.As(err, &damage) || damage.Line != 6 {
		t.Fatalf("LoadSession of a fork file cut inside line 6, before its fork point seq 7, did not return a *SessionDamageError for line 6: a fork's file never ends before its fork point\n%v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(whole[:cut]) {
		t.Errorf("loading changed the damaged fork file; it must be left as it was")
	}
	// The fork point must be a turn/end: seq 6 of the branch is the assistant's answer.
	notAtTurnEnd := bytes.Replace(whole, []byte(`"forkSeq":7`), []byte(`"forkSeq":6`), 1)
	if err := os.WriteFile(path, notAtTurnEnd, 0o644); err != nil {
		t.Fatal(err)
	}
	err = ch10LoadError(t, "a fork file whose fork point is not a turn/end", ch10LockWhy, path, SessionOptions{})
	if !errors.As(err, &damage) || damage.Line != 8 {
		t.Fatalf("LoadSession of a fork file whose header names seq 6, an assistant/message, as its fork point did not return a *SessionDamageError for line 8\n%v", err)
	}

	// A fork must share its parent's history through its fork point.
	b := ch10Fork(t, root, end1, SessionOptions{ID: "b"})
	other := NewSession("root")
	ch10Turn(t, other, 1, "您好", "您好！")
	if _, err := ch10Tree(t, "PathTo never reaches a root", other, b); err == nil {
		t.Errorf("NewSessionTree accepted a fork whose first 4 events differ from its parent's (the parent says 您好, the fork 你好): a fork shares its parent's history through its fork point")
	}
	long := ch10Fork(t, root, 7, SessionOptions{ID: "long"})
	if _, err := ch10Tree(t, "PathTo never reaches a root", other, long); err == nil {
		t.Errorf("NewSessionTree accepted a fork at seq 7 of a parent with 4 events")
	}

	// Sessions loaded from files can name each other as parents: that is no tree.
	x, _ := ch10Load(t, ch10ForkFile(t, dir, "x", "y", 3))
	y, _ := ch10Load(t, ch10ForkFile(t, dir, "y", "x", 3))
	self, _ := ch10Load(t, ch10ForkFile(t, dir, "self", "self", 3))
	cycleWhy := "PathTo never ends on a cycle: a session met twice on the way up is an error"
	if _, err := ch10Tree(t, cycleWhy, self); err == nil {
		t.Errorf("NewSessionTree accepted a session that is its own parent")
	}
	if _, err := ch10Tree(t, cycleWhy, x, y); err == nil {
		t.Errorf("NewSessionTree accepted x and y, each the other's parent: a tree has no cycle, and PathTo says so")
	}
	// z is a fork of x: the walk up from z meets x twice without ever coming back to z.
	z, _ := ch10Load(t, ch10ForkFile(t, dir, "z", "x", 3))
	if _, err := ch10Tree(t, cycleWhy, z, x, y); err == nil {
		t.Errorf("NewSessionTree accepted z, a fork of x, where x and y are each the other's parent: the walk up from z meets x twice, a cycle, although it never comes back to z")
	}
}
