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
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// --- helpers ----------------------------------------------------------------------------------

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

func ch10Lines(events []SessionEvent) []string {
	out := []string{}
	for _, e := range events {
		out = append(out, ch10Line(e))
	}
	return out
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

func ch10Result(id, text string) ToolResultMessage {
	return ToolResultMessage{ToolCallID: id, ToolName: "read", Content: []ContentBlock{Text(text)}}
}

// ch10NoErr fails the test on err; a stub's pending message inside the error is reported alone.
func ch10NoErr(t *testing.T, err error, doing string) {
	t.Helper()
	if err == nil {
		return
	}
	if msg := labPendingRE.FindString(err.Error()); msg != "" {
		t.Fatal(msg)
	}
	t.Fatalf("%s failed:\n%v", doing, err)
}

// ch10Append appends e and returns its seq, failing the test on an error.
func ch10Append(t *testing.T, s *Session, e SessionEvent) int {
	t.Helper()
	var seq int
	var err error
	runLab(t, func() { seq, err = s.Append(e) })
	ch10NoErr(t, err, "Append")
	return seq
}

// ch10NoLeaks checks, after every cleanup of the test (sessions are closed in cleanups), that no
// goroutine the test started is left.
func ch10NoLeaks(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

// ch10Close closes s when the test ends.
func ch10Close(t *testing.T, s *Session) {
	t.Helper()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			if msg := labPendingRE.FindString(err.Error()); msg != "" {
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
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Seq: 41, Message: prompt})
	ch10Append(t, s, SessionEvent{Type: EventTurnStart, Turn: 1})
	assistant := ch10ToolUse("c1")
	ch10Append(t, s, SessionEvent{Type: EventAssistantMessage, Seq: 7, Message: assistant})
	call := ch10Call("c1")
	callSeq := ch10Append(t, s, SessionEvent{Type: EventToolCall, Call: &call})
	sources := []int{callSeq}
	ch10Append(t, s, SessionEvent{Type: EventToolResult, Message: ch10Result("c1", "# tinypi"), SourceEventSeqs: sources})

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
		if e.Time.IsZero() {
			t.Errorf("event %d (%s) has no time: Append stamps every event", e.Seq, e.Type)
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
	}
	for _, c := range refused {
		if err := callLab(t, func() error { _, err := s.Append(c.e); return err }); err == nil {
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
		{Type: "note", Seq: 8, Ignorable: true, Raw: []byte(`{}`)},
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
	first := callLab(t, s.Messages)
	if diff := cmp.Diff([]string{"user:读 README"}, ch10Messages(first)); diff != "" {
		t.Fatalf("Messages after one prompt (-want +got):\n%s", diff)
	}
	// A request holds what Messages returned: it is frozen, whatever happens next.
	first[0].(UserMessage).Content[0] = Text("模型改了请求")
	ch10Append(t, s, SessionEvent{Type: EventAssistantMessage, Message: ch10ToolUse("c1")})
	seq := ch10Append(t, s, SessionEvent{Type: EventToolCall, Call: &call})
	ch10Append(t, s, SessionEvent{Type: EventToolResult, Message: ch10Result("c1", "# tinypi"), SourceEventSeqs: []int{seq}})
	after := ch10Messages(callLab(t, s.Messages))
	if len(after) != 3 {
		t.Fatalf("after 3 more events Messages returns %d messages, want 3: the cache grows by exactly the events appended since the last call\n%q", len(after), after)
	}
	if after[0] != "user:读 README" {
		t.Fatalf("Messages' first message became %q after a caller changed its copy: the change reached the cache; hand out a deep copy", after[0])
	}
	if diff := cmp.Diff(want, after); diff != "" {
		t.Fatalf("Messages after the result (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, ch10Messages(callLab(t, s.Messages))); diff != "" {
		t.Fatalf("Messages called twice with nothing appended in between (-want +got):\n%s", diff)
	}
	if got := ch10Messages(first); got[0] != "user:模型改了请求" || len(got) != 1 {
		t.Errorf("an earlier Messages result changed after later appends: %v", got)
	}
}

// --- 10.2 ------------------------------------------------------------------------------------

func TestLab10_2_提交游标_CallsAreLoggedBeforeResults(t *testing.T) {
	ch10NoLeaks(t)
	s := NewSession("s-01")
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读三个文件")})
	ch10Append(t, s, SessionEvent{Type: EventAssistantMessage, Message: ch10ToolUse("c1", "c2", "c3")})
	calls := []ToolCall{ch10Call("c1"), ch10Call("c2"), ch10Call("c3")}
	batch := callLab(t, func() *ToolBatchLog {
		b, err := s.BeginToolBatch(calls)
		ch10NoErr(t, err, "BeginToolBatch")
		return b
	})
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
		t.Run(fmt.Sprint(c.order), func(t *testing.T) {
			s := NewSession("s-01")
			ch10Append(t, s, SessionEvent{Type: EventAssistantMessage, Message: ch10ToolUse("c1", "c2", "c3")})
			calls := []ToolCall{ch10Call("c1"), ch10Call("c2"), ch10Call("c3")}
			batch := callLab(t, func() *ToolBatchLog {
				b, err := s.BeginToolBatch(calls)
				ch10NoErr(t, err, "BeginToolBatch")
				return b
			})
			for k, i := range c.order {
				done := callLab(t, func() []ToolResultMessage {
					// The executor's result may name no call at all: the batch pairs it.
					r, err := batch.Finish(i, ToolResultMessage{Content: []ContentBlock{Text("内容" + calls[i].ID)}})
					ch10NoErr(t, err, "Finish")
					return r
				})
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
			if err := callLab(t, func() error { _, err := batch.Finish(1, ch10Result("c2", "again")); return err }); err == nil {
				t.Errorf("a second result for c2 was accepted; want an error")
			}
			if got := s.Len(); got != 7 {
				t.Errorf("after the refused second result Len() = %d, want 7", got)
			}
		})
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
	path := filepath.Join(t.TempDir(), "s-01.jsonl")
	// A window of an hour: nothing reaches the file unless a barrier writes it.
	s, err := CreateSession(SessionOptions{ID: "s-01", Path: path, FlushWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ch10Close(t, s)
	if got := ch10FileLines(t, path); len(got) != 1 || got[0] != `{"format":"tinypi-session","version":1,"session":"s-01"}`+"\n" {
		t.Fatalf("a new session file holds %q, want only the header line", got)
	}
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读 README")})
	ch10Append(t, s, SessionEvent{Type: EventTurnStart, Turn: 1})
	ch10NoErr(t, callLab(t, func() error { return s.Flush(context.Background()) }), "Flush")
	want := []string{"0 user/message user:读 README", "1 turn/start 1"}
	if diff := cmp.Diff(want, ch10FileEvents(t, path)); diff != "" {
		t.Fatalf("the file after Flush (-want +got): Flush returns once every event appended before it is written:\n%s", diff)
	}
	ch10NoErr(t, callLab(t, func() error { return s.Flush(context.Background()) }), "Flush")
	if diff := cmp.Diff(want, ch10FileEvents(t, path)); diff != "" {
		t.Fatalf("the file after a second Flush with nothing new (-want +got): each event is written once:\n%s", diff)
	}

	// The barrier before a model request: everything the request holds is on disk first.
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("再读 go.mod")})
	messages := callLab(t, func() []Message {
		m, err := s.ModelRequest(context.Background())
		ch10NoErr(t, err, "ModelRequest")
		return m
	})
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
	batch := callLab(t, func() *ToolBatchLog {
		b, err := s.BeginToolBatch([]ToolCall{ch10Call("c1"), ch10Call("c2")})
		ch10NoErr(t, err, "BeginToolBatch")
		return b
	})
	ch10NoErr(t, callLab(t, func() error { return batch.Start(context.Background(), 1) }), "Start")
	want = append(want, "3 model/request through=2 messages=2", "4 assistant/message assistant:[c1 c2]", "5 tool/call c1", "6 tool/call c2", "7 tool/start c2 <-6")
	if diff := cmp.Diff(want, ch10FileEvents(t, path)); diff != "" {
		t.Fatalf("the file when Start returned (-want +got): the call's tool/start, and all before it, are written before its body runs:\n%s", diff)
	}

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := callLab(t, func() error { return batch.Start(cancelled, 0) }); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a cancelled context returned %v, want context.Canceled: an aborted run starts no tool body", err)
	}
	if got := s.Len(); got != 8 {
		t.Errorf("after Start with a cancelled context Len() = %d, want 8: no tool/start is logged for a call that will not run", got)
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

	// The tools finish in reverse order: c2 first, then c1. Each checks, when its body starts,
	// that the log already holds every call of the batch and its own tool/start.
	release := map[string]chan struct{}{"c1": make(chan struct{}), "c2": make(chan struct{})}
	started := make(chan string, 2)
	ended := make(chan string, 2)
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
					if end, ok := e.(ToolEndEvent); ok {
						ended <- end.Result.ToolCallID
					}
				},
			})
			if err != nil {
				t.Errorf("RunAgentLoop: %v", err)
			}
			done <- res
		})
	}()
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
	if id := <-ended; id != "c2" {
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
	res := <-done
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
}

func TestLab10_4_模型可见即已记录_EveryLoggedCallGetsAResult(t *testing.T) {
	ch10NoLeaks(t)
	t.Run("abort during the batch", func(t *testing.T) {
		s := NewSession("s-01")
		ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读三个文件")})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		model := &ch10Model{replies: []AssistantMessage{ch10ToolUse("c1", "c2", "c3")}}
		started := make(chan string, 3)
		exec := func(ctx context.Context, call ToolCall, _ ToolExecContext) (ToolResultMessage, error) {
			started <- call.ID
			<-ctx.Done()
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
		select {
		case <-started:
		case <-done:
			t.Fatalf("the run ended before a tool started: %v", ch10Lines(s.Events()))
		}
		cancel()
		res := <-done
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
		// Which tool/starts were logged depends on how far each tool goroutine got before the
		// abort; everything else is fixed.
		var lines []string
		for _, e := range events {
			switch e.Type {
			case EventToolStart:
			case EventToolResult:
				lines = append(lines, fmt.Sprintf("tool/result %s <-%d", e.Message.(ToolResultMessage).ToolCallID, e.SourceEventSeqs[0]))
			default:
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
			if msg := labPendingRE.FindString(st.LastError); msg != "" {
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

func ch10Load(t *testing.T, path string) (*Session, SessionRepair) {
	t.Helper()
	type loaded struct {
		s   *Session
		rep SessionRepair
		err error
	}
	l := callLab(t, func() loaded {
		s, rep, err := LoadSession(path, SessionOptions{})
		return loaded{s, rep, err}
	})
	ch10NoErr(t, l.err, "LoadSession")
	ch10Close(t, l.s)
	return l.s, l.rep
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
	}
	for _, c := range damaged {
		path := ch10WriteFile(t, c.lines...)
		before, _ := os.ReadFile(path)
		err := callLab(t, func() error {
			s, _, err := LoadSession(path, SessionOptions{})
			if err == nil {
				s.Close()
			}
			return err
		})
		var damage *SessionDamageError
		if !errors.As(err, &damage) {
			t.Errorf("%s: LoadSession returned %v, want a *SessionDamageError", c.name, err)
			continue
		}
		if damage.Line != c.line {
			t.Errorf("%s: the error names line %d, want line %d (%v)", c.name, damage.Line, c.line, err)
		}
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Errorf("%s: loading changed the damaged file; it must be left as it was", c.name)
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
	s, _ = ch10Load(t, path)
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

	// A log that ended cleanly needs no repair, and loading it twice changes nothing.
	clean := []string{ch10LineUser, ch10LineTurn, `{"type":"assistant/message","seq":2,"data":{"message":{"role":"assistant","content":[{"type":"text","text":"好"}],"stopReason":"stop"}}}` + "\n", `{"type":"turn/end","seq":3,"data":{"turn":1,"reason":"stop"}}` + "\n"}
	path = ch10WriteFile(t, clean...)
	if _, rep := ch10Load(t, path); len(rep.Appended) != 0 || rep.TornBytes != 0 {
		t.Errorf("a clean log was repaired: %+v", rep)
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

func TestLab10_6_分叉与会话树_ForkAtATurnBoundary(t *testing.T) {
	ch10NoLeaks(t)
	root := NewSession("root")
	end1 := ch10Turn(t, root, 1, "你好", "你好！")
	ch10Turn(t, root, 2, "读 README", "README 说……")

	for _, at := range []int{0, 1, 2, 99, -1} {
		if err := callLab(t, func() error { _, err := root.Fork(at, SessionOptions{ID: "bad"}); return err }); err == nil {
			t.Errorf("Fork(%d) succeeded; forks are taken only at a turn/end event (seq %d or 7)", at, end1)
		}
	}
	fork := callLab(t, func() *Session {
		f, err := root.Fork(end1, SessionOptions{ID: "b1"})
		ch10NoErr(t, err, "Fork")
		return f
	})
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
	if diff := cmp.Diff([]string{"user:你好", "assistant:你好！", "user:读 README", "assistant:README 说……"}, ch10Messages(root.Messages())); diff != "" {
		t.Fatalf("the parent's messages after the fork appended (-want +got): a fork never changes its parent:\n%s", diff)
	}

	// A fork with a file holds its whole branch and names its parent.
	path := filepath.Join(t.TempDir(), "b2.jsonl")
	onDisk := callLab(t, func() *Session {
		f, err := root.Fork(7, SessionOptions{ID: "b2", Path: path})
		ch10NoErr(t, err, "Fork")
		return f
	})
	ch10Close(t, onDisk)
	lines := ch10FileLines(t, path)
	if lines[0] != `{"format":"tinypi-session","version":1,"session":"b2","parent":"root","forkSeq":7}`+"\n" {
		t.Errorf("the fork's header is %q", lines[0])
	}
	if got := len(ch10FileEvents(t, path)); got != 8 {
		t.Errorf("the fork's file holds %d events, want the 8 of its branch", got)
	}
}

func TestLab10_6_分叉与会话树_PathToALeaf(t *testing.T) {
	ch10NoLeaks(t)
	root := NewSession("root")
	end1 := ch10Turn(t, root, 1, "你好", "你好！")
	ch10Turn(t, root, 2, "读 README", "README 说……")
	fork := func(s *Session, at int, id string) *Session {
		t.Helper()
		return callLab(t, func() *Session {
			f, err := s.Fork(at, SessionOptions{ID: id})
			ch10NoErr(t, err, "Fork")
			return f
		})
	}
	a := fork(root, end1, "a")
	endA := ch10Turn(t, a, 2, "读 go.mod", "go.mod 说……")
	ch10Turn(t, a, 3, "再读 Makefile", "Makefile 说……")
	b := fork(a, endA, "b")
	ch10Turn(t, b, 3, "读 docs", "docs 说……")
	c := fork(root, end1, "c")

	tree, err := NewSessionTree(c, b, root, a)
	if err != nil {
		t.Fatal(err)
	}
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
	got, err := tree.BranchMessages("b")
	ch10NoErr(t, err, "BranchMessages")
	if diff := cmp.Diff([]string{"user:你好", "assistant:你好！", "user:读 go.mod", "assistant:go.mod 说……", "user:读 docs", "assistant:docs 说……"}, ch10Messages(got)); diff != "" {
		t.Errorf("BranchMessages(b) (-want +got): a's turn 3 is not on b's branch:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "c"}, tree.Children("root")); diff != "" {
		t.Errorf("Children(root) (-want +got):\n%s", diff)
	}
	if _, err := NewSessionTree(b, root); err == nil {
		t.Errorf("a tree without b's parent a was accepted")
	}
}
