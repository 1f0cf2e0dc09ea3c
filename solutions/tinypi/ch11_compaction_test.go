package tinypi

// Focused tests of chapter 11, context compaction. Each test belongs to one lab:
//
//	go test -run '^TestLab11_1_' .   估算上下文
//	go test -run '^TestLab11_2_' .   切点
//	go test -run '^TestLab11_3_' .   文件清单
//	go test -run '^TestLab11_4_' .   从摘要投影
//	go test -run '^TestLab11_5_' .   生成摘要
//	go test -run '^TestLab11_6_' .   循环里的压缩
//
// Logs are spelled out one event a line as in chapter 10 ("3 tool/call c1"); a compaction
// event reads "7 compaction first=6 threshold tokens=1012 read=[a.go] changed=[]". Expected
// token counts are worked out by hand in the comments next to them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// --- helpers ----------------------------------------------------------------------------------

func ch11CallEvent(call ToolCall) SessionEvent {
	return SessionEvent{Type: EventToolCall, Call: &call}
}

// ch11ResultEvent answers the tool/call at callSeq; isError marks a failed call.
func ch11ResultEvent(callSeq int, id, text string, isError bool) SessionEvent {
	r := ToolResultMessage{ToolCallID: id, ToolName: "read", Content: []ContentBlock{Text(text)}, IsError: isError}
	return SessionEvent{Type: EventToolResult, SourceEventSeqs: []int{callSeq}, Message: r}
}

func ch11Compaction(summary string, first int, read, changed []string) SessionEvent {
	return SessionEvent{Type: EventCompaction, Compaction: &Compaction{Summary: summary, FirstKeptSeq: first,
		Reason: CompactionThreshold, ReadFiles: read, ChangedFiles: changed}}
}

// ch11ReadmeLog is a session of two runs. Its cut points are 8 (the second turn of the first
// run) and 12 (the second prompt); 1 and 13 are first turns after a prompt, which start at the
// prompt.
//
//	0 user 读 README             7 turn/end 1 toolUse       12 user 再短一点
//	1 turn/start 1               8 turn/start 2             13 turn/start 1
//	2 model/request              9 model/request            14 model/request
//	3 assistant [c1]            10 assistant 好的           15 assistant 短的
//	4 tool/call c1              11 turn/end 2 stop          16 turn/end 1 stop
//	5 tool/start c1
//	6 tool/result c1 <-4
func ch11ReadmeLog() []SessionEvent {
	c1 := ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"README.md"}`}
	return ch11Log(
		ch11User("读 README"), ch11TurnStart(1), ch11Request(1, 1),
		ch11Assistant(AssistantMessage{Content: []ContentBlock{c1}, StopReason: StopReasonToolUse}),
		ch11CallEvent(c1), SessionEvent{Type: EventToolStart, Call: &ToolCall{ID: "c1", Name: "read"}, SourceEventSeqs: []int{4}},
		ch11ResultEvent(4, "c1", "# tinypi", false), ch11TurnEnd(1, "toolUse"),
		ch11TurnStart(2), ch11Request(7, 3), ch11Assistant(ch10Answer("好的")), ch11TurnEnd(2, "stop"),
		ch11User("再短一点"), ch11TurnStart(1), ch11Request(12, 5), ch11Assistant(ch10Answer("短的")), ch11TurnEnd(1, "stop"),
	)
}

// ch11Summary is the exact text of the summary message of a compaction.
func ch11Summary(summary, read, changed string) string {
	return "The conversation before this point was compacted into the summary below.\n\n<summary>\n" +
		summary + "\n</summary>\n\nFiles read: " + read + "\nFiles changed: " + changed
}

// --- Lab 11.1 估算上下文 ----------------------------------------------------------------------

func TestLab11_1_估算上下文_EstimateTokens(t *testing.T) {
	cases := []struct {
		name string
		m    Message
		want int
	}{
		{"empty user message", UserMessage{}, 0},
		{"4 bytes", UserText("abcd"), 1},
		{"5 bytes round up", UserText("abcde"), 2},
		{"你好 is 6 bytes, 2 runes", UserText("你好"), 2},
		{"你好吗 is 9 bytes", UserText("你好吗"), 3},
		// "a" and "b" are 2 bytes in all: one token, not one per block.
		{"two blocks summed before rounding", UserMessage{Content: []ContentBlock{Text("a"), Text("b")}}, 1},
		// thinking 8 + text 4 = 12 bytes.
		{"thinking counts", AssistantMessage{Content: []ContentBlock{ThinkingContent{Thinking: "12345678"}, Text("abcd")}}, 3},
		// name "read" 4 + arguments {"path":"a.go"} 15 = 19 bytes, 5 tokens.
		{"tool call name and arguments", AssistantMessage{Content: []ContentBlock{ToolCall{ID: "call-with-a-long-id", Name: "read", Arguments: `{"path":"a.go"}`}}}, 5},
		{"tool result content", ToolResultMessage{ToolCallID: "c1", ToolName: "read", Content: []ContentBlock{Text("123456789")}}, 3},
		// The error message of a failed turn is not context the model sees.
		{"assistant error text is not content", AssistantMessage{StopReason: StopReasonError, ErrorMessage: "boom boom boom"}, 0},
	}
	for _, c := range cases {
		got := callLab(t, func() int { return EstimateTokens(c.m) })
		if got != c.want {
			t.Errorf("EstimateTokens(%s) = %d, want %d (UTF-8 bytes of text, thinking, call name and arguments, result content, divided by 4, rounded up)", c.name, got, c.want)
		}
	}
}

func TestLab11_1_估算上下文_ContextTokens(t *testing.T) {
	usage := Usage{Input: 100, Output: 20, CacheRead: 30, CacheWrite: 5, Total: 7}
	counted := AssistantMessage{Content: []ContentBlock{Text("answer")}, StopReason: StopReasonStop, Usage: usage}
	older := AssistantMessage{Content: []ContentBlock{Text("older")}, StopReason: StopReasonStop, Usage: Usage{Input: 5000, Output: 10}}
	failed := AssistantMessage{Content: []ContentBlock{Text("abcd")}, StopReason: StopReasonError, ErrorMessage: "overloaded", Usage: Usage{Input: 9000}}
	aborted := AssistantMessage{Content: []ContentBlock{Text("abcd")}, StopReason: StopReasonAborted, Usage: Usage{Input: 9000}}
	result := ToolResultMessage{ToolCallID: "c1", ToolName: "read", Content: []ContentBlock{Text("12345678")}}
	cases := []struct {
		name       string
		messages   []Message
		usableFrom int
		want       int
	}{
		{"no messages", nil, 0, 0},
		// 8 bytes + 8 bytes: estimates only.
		{"no assistant", []Message{UserText("12345678"), result}, 0, 4},
		// usage 100+30+5+20 = 155 covers everything through the assistant; then 8 bytes (2) and 4 bytes (1).
		{"usage of the last assistant", []Message{UserText("12345678"), older, UserText("x"), counted, result, UserText("abcd")}, 0, 158},
		// failed and aborted turns counted nothing: 155 + result 2 + the turn's "abcd" 1.
		{"a failed turn is estimated", []Message{UserText("12345678"), counted, result, failed}, 0, 158},
		{"an aborted turn is estimated", []Message{UserText("12345678"), counted, result, aborted}, 0, 158},
		// the assistant at index 1 is before usableFrom 2: every message is estimated,
		// 2 + 2 ("answer" is 6 bytes) + 2 + 1 = 7.
		{"usage before usableFrom is not used", []Message{UserText("12345678"), counted, result, UserText("abcd")}, 2, 7},
		// an answer whose usage is all zero counted nothing (a model that does not report usage):
		// 155 + "answer" (2) + "abcd" (1).
		{"zero usage is not a count", []Message{UserText("12345678"), counted, AssistantMessage{Content: []ContentBlock{Text("answer")}, StopReason: StopReasonStop}, UserText("abcd")}, 0, 158},
		// usableFrom 1 includes it.
		{"usage at usableFrom is used", []Message{UserText("12345678"), counted, result, UserText("abcd")}, 1, 158},
	}
	for _, c := range cases {
		got := callLab(t, func() int { return ContextTokens(c.messages, c.usableFrom) })
		if got != c.want {
			t.Errorf("ContextTokens(%s, usableFrom %d) = %d, want %d", c.name, c.usableFrom, got, c.want)
		}
	}
}

func TestLab11_1_估算上下文_ShouldCompact(t *testing.T) {
	cases := []struct {
		opts   CompactionOptions
		tokens int
		want   bool
	}{
		// default reserve 16384: the threshold is 100000 - 16384 = 83616.
		{CompactionOptions{ContextWindow: 100000}, 83616, false},
		{CompactionOptions{ContextWindow: 100000}, 83617, true},
		{CompactionOptions{ContextWindow: 100000, ReserveTokens: 1000}, 99000, false},
		{CompactionOptions{ContextWindow: 100000, ReserveTokens: 1000}, 99001, true},
		{CompactionOptions{ContextWindow: 100000, ReserveTokens: 1000, KeepRecentTokens: 99000}, 99001, true},
		{CompactionOptions{}, 1 << 40, false},
		{CompactionOptions{ReserveTokens: 1000}, 1 << 40, false},
	}
	for _, c := range cases {
		got := callLab(t, func() bool { return c.opts.ShouldCompact(c.tokens) })
		if got != c.want {
			t.Errorf("CompactionOptions{ContextWindow: %d, ReserveTokens: %d}.ShouldCompact(%d) = %v, want %v",
				c.opts.ContextWindow, c.opts.ReserveTokens, c.tokens, got, c.want)
		}
	}
}

// --- Lab 11.2 切点 ----------------------------------------------------------------------------

func TestLab11_2_切点_CutPoints(t *testing.T) {
	check := func(what string, events []SessionEvent, want []int) {
		t.Helper()
		got := callLab(t, func() []int { return CutPoints(events) })
		if !slices.Equal(got, want) {
			t.Errorf("CutPoints(%s) = %v, want %v\nlog:\n%s", what, got, want, strings.Join(ch11Lines(events), "\n"))
		}
	}
	check("the README log", ch11ReadmeLog(), []int{8, 12})
	check("an empty log", nil, nil)
	check("a prompt alone", ch11Log(ch11User("hi")), nil)

	// A user message logged while a turn is open (an Agent logs a steering message when it is
	// queued) is inside the turn: no cut there. After turn/end 1, the next user message is one.
	//	0 user a  1 turn/start 1  2 model/request  3 user steer  4 assistant b  5 turn/end 1 stop  6 user c
	steered := ch11Log(ch11User("a"), ch11TurnStart(1), ch11Request(1, 1), ch11User("steer"),
		ch11Assistant(ch10Answer("b")), ch11TurnEnd(1, "stop"), ch11User("c"))
	check("a user message inside a turn", steered, []int{6})

	// A call whose result was logged only later (crash repair appends it after the turn/end) is
	// not answered before 7 or 8: cutting there would separate it from its result.
	//	0 user a  1 turn/start 1  2 model/request  3 assistant [c1]  4 tool/call c1  5 turn/end 1 toolUse
	//	6 user b  7 tool/result c1 <-4  8 user c
	c1 := ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a.go"}`}
	late := ch11Log(ch11User("a"), ch11TurnStart(1), ch11Request(1, 1),
		ch11Assistant(AssistantMessage{Content: []ContentBlock{c1}, StopReason: StopReasonToolUse}), ch11CallEvent(c1),
		ch11TurnEnd(1, "toolUse"), ch11User("b"), ch11ResultEvent(4, "c1", "ok", false), ch11User("c"))
	check("a result logged after a later user message", late, []int{8})

	// A provider gave two calls of one batch the same ID. The first is answered in the turn; the
	// second only after the next prompt (crash repair). Calls are told apart by their seq.
	//	0 user a  1 turn/start 1  2 model/request  3 assistant [c1 c1]  4 tool/call c1  5 tool/call c1
	//	6 tool/result c1 <-4  7 turn/end 1 toolUse  8 user b  9 tool/result c1 <-5  10 user c
	twice := ch11Log(ch11User("a"), ch11TurnStart(1), ch11Request(1, 1),
		ch11Assistant(AssistantMessage{Content: []ContentBlock{c1, c1}, StopReason: StopReasonToolUse}), ch11CallEvent(c1), ch11CallEvent(c1),
		ch11ResultEvent(4, "c1", "ok", false), ch11TurnEnd(1, "toolUse"), ch11User("b"), ch11ResultEvent(5, "c1", "ok", false), ch11User("c"))
	check("two calls with one ID, the second answered late", twice, []int{10})
}

func TestLab11_2_切点_AfterACompaction(t *testing.T) {
	// The README log compacted at 12, then one more turn and prompt:
	//	17 compaction first=12  18 user 继续  19 turn/start 1  20 model/request  21 assistant 好
	//	22 turn/end 1 stop  23 turn/start 2  24 model/request  25 assistant 完  26 turn/end 2 stop  27 user 再来
	events := append(ch11ReadmeLog(), ch11Compaction("S1", 12, nil, nil), ch11User("继续"), ch11TurnStart(1),
		ch11Request(18, 2), ch11Assistant(ch10Answer("好")), ch11TurnEnd(1, "stop"), ch11TurnStart(2), ch11Request(22, 4),
		ch11Assistant(ch10Answer("完")), ch11TurnEnd(2, "stop"), ch11User("再来"))
	events = ch11Log(events...)
	got := callLab(t, func() []int { return CutPoints(events) })
	// 8 and 12 are not after the compaction's FirstKeptSeq; 18 is (messages 12 and 15 lie before it).
	want := []int{18, 23, 27}
	if !slices.Equal(got, want) {
		t.Errorf("CutPoints after a compaction with firstKeptSeq 12 = %v, want %v (only cuts after 12)", got, want)
	}

	// The README log compacted at 17 with firstKeptSeq 8: 12 lies after 8 (though before the
	// compaction event itself), so it can be cut again.
	again := ch11Log(append(ch11ReadmeLog(), ch11Compaction("S1", 8, nil, nil))...)
	if got := callLab(t, func() []int { return CutPoints(again) }); !slices.Equal(got, []int{12}) {
		t.Errorf("CutPoints of the README log compacted at 17 with firstKeptSeq 8 = %v, want [12] (cuts come after firstKeptSeq, not after the compaction event)", got)
	}

	// Right after a compaction whose kept part starts at the last prompt, nothing new can be cut.
	//	0 user a  1 turn/start 1  2 model/request  3 assistant b  4 turn/end 1 stop  5 user c  6 compaction first=5
	short := ch11Log(ch11User("a"), ch11TurnStart(1), ch11Request(1, 1), ch11Assistant(ch10Answer("b")),
		ch11TurnEnd(1, "stop"), ch11User("c"), ch11Compaction("S", 5, nil, nil))
	if got := callLab(t, func() []int { return CutPoints(short) }); len(got) != 0 {
		t.Errorf("CutPoints of a log compacted at its last prompt = %v, want none", got)
	}
	// One more user message: 7 is after 5 with the message 5 before it.
	more := ch11Log(append(short, ch11User("d"))...)
	if got := callLab(t, func() []int { return CutPoints(more) }); !slices.Equal(got, []int{7}) {
		t.Errorf("CutPoints after the compacted log gets a new prompt at 7 = %v, want [7]", got)
	}
}

func TestLab11_2_切点_FindCut(t *testing.T) {
	events := ch11ReadmeLog()
	// Kept estimates: from 12, "再短一点" 12 bytes (3) + "短的" 6 bytes (2) = 5; from 8, 5 + "好的" (2) = 7.
	cases := []struct {
		keep    int
		want    int
		wantOK  bool
		explain string
	}{
		{0, 12, true, "every cut keeps 0 tokens: the latest cut summarises the most"},
		{5, 12, true, "the cut at 12 keeps exactly 5"},
		{6, 8, true, "12 keeps 5 < 6, 8 keeps 7"},
		{7, 8, true, "8 keeps exactly 7"},
		{1000, 8, true, "no cut keeps 1000: the earliest cut"},
	}
	for _, c := range cases {
		type cut struct {
			seq int
			ok  bool
		}
		got := callLab(t, func() cut { s, ok := FindCut(events, c.keep); return cut{s, ok} })
		if got.seq != c.want || got.ok != c.wantOK {
			t.Errorf("FindCut(README log, keep %d) = %d, %v; want %d, %v (%s)", c.keep, got.seq, got.ok, c.want, c.wantOK, c.explain)
		}
	}
	noCut := ch11Log(ch11User("hi"), ch11TurnStart(1))
	if ok := callLab(t, func() bool { _, ok := FindCut(noCut, 0); return ok }); ok {
		t.Errorf("FindCut of a log without cut points reports ok true, want false")
	}
}

// --- Lab 11.3 文件清单 ------------------------------------------------------------------------

// ch11FilesLog is a user message (0), turn/start (1), an assistant asking for eight calls (2),
// their tool/calls (3 to 10) and then the results (11 on) of all but c5:
//
//	3 c1 read a.go           ok      7 c5 read e.go            no result
//	4 c2 read ./src/../b.go  ok      8 c6 bash (a "path" too)  ok
//	5 c3 edit a.go           ok      9 c7 read without path    ok
//	6 c4 write c.go          failed 10 c8 write d.go           ok
func ch11FilesLog() []SessionEvent {
	calls := []ToolCall{
		{ID: "c1", Name: "read", Arguments: `{"path":"a.go"}`},
		{ID: "c2", Name: "read", Arguments: `{"path":"./src/../b.go"}`},
		{ID: "c3", Name: "edit", Arguments: `{"path":"a.go","old":"x","new":"y"}`},
		{ID: "c4", Name: "write", Arguments: `{"path":"c.go","content":"package c"}`},
		{ID: "c5", Name: "read", Arguments: `{"path":"e.go"}`},
		{ID: "c6", Name: "bash", Arguments: `{"command":"cat f.go","path":"f.go"}`},
		{ID: "c7", Name: "read", Arguments: `{"offset":3}`},
		{ID: "c8", Name: "write", Arguments: `{"path":"d.go","content":""}`},
	}
	var content []ContentBlock
	for _, c := range calls {
		content = append(content, c)
	}
	events := []SessionEvent{ch11User("改 a.go"), ch11TurnStart(1),
		ch11Assistant(AssistantMessage{Content: content, StopReason: StopReasonToolUse})}
	for _, c := range calls {
		events = append(events, ch11CallEvent(c))
	}
	for i, c := range calls {
		if c.ID == "c5" {
			continue
		}
		events = append(events, ch11ResultEvent(3+i, c.ID, "ok", c.ID == "c4"))
	}
	return ch11Log(events...)
}

func TestLab11_3_文件清单_FilesTouched(t *testing.T) {
	events := ch11FilesLog()
	type lists struct{ Read, Changed []string }
	files := func(from, to int, read, changed []string) lists {
		return callLab(t, func() lists { r, c := FilesTouched(events, from, to, read, changed); return lists{r, c} })
	}
	check := func(what string, got, want lists) {
		t.Helper()
		if !slices.Equal(got.Changed, want.Changed) {
			t.Errorf("FilesTouched(%s) changed = %v, want %v", what, got.Changed, want.Changed)
		}
		if !slices.Equal(got.Read, want.Read) {
			t.Errorf("FilesTouched(%s) read = %v, want %v", what, got.Read, want.Read)
		}
	}
	// a.go was read, then edited: changed only. b.go is cleaned. c.go's write failed, e.go has
	// no result, bash and a read without a path name no file, d.go (seq 10) is outside [3, 10).
	check("calls 3 to 9, no earlier lists", files(0, 10, nil, nil), lists{Read: []string{"b.go"}, Changed: []string{"a.go"}})
	check("all calls", files(0, len(events), nil, nil), lists{Read: []string{"b.go"}, Changed: []string{"a.go", "d.go"}})
	check("no calls in range", files(0, 3, nil, nil), lists{})

	// The previous compaction's lists are carried: x.go stays read and y.go changed; a.go, read
	// before, is changed now and leaves the read list; b.go, read again, is listed once.
	prevRead, prevChanged := []string{"x.go", "a.go", "b.go"}, []string{"y.go"}
	check("with earlier lists", files(3, 10, prevRead, prevChanged),
		lists{Read: []string{"b.go", "x.go"}, Changed: []string{"a.go", "y.go"}})
	if !slices.Equal(prevRead, []string{"x.go", "a.go", "b.go"}) || !slices.Equal(prevChanged, []string{"y.go"}) {
		t.Errorf("FilesTouched changed its inputs: prevRead = %v, prevChanged = %v", prevRead, prevChanged)
	}
}

func TestLab11_3_文件清单_ResultsBySourceSeq(t *testing.T) {
	// A provider reused the ID c1 in a later turn. The first read of old.go failed; the second,
	// of new.go, succeeded. Results are matched to their call by sourceEventSeqs.
	//	0 user  1 assistant [c1]  2 tool/call c1 read old.go  3 tool/result c1 <-2 (error)
	//	4 assistant [c1]  5 tool/call c1 read new.go  6 tool/result c1 <-5
	first := ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"old.go"}`}
	second := ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"new.go"}`}
	events := ch11Log(ch11User("读"),
		ch11Assistant(AssistantMessage{Content: []ContentBlock{first}, StopReason: StopReasonToolUse}), ch11CallEvent(first),
		ch11ResultEvent(2, "c1", "no such file", true),
		ch11Assistant(AssistantMessage{Content: []ContentBlock{second}, StopReason: StopReasonToolUse}), ch11CallEvent(second),
		ch11ResultEvent(5, "c1", "package new", false))
	type lists struct{ Read, Changed []string }
	got := callLab(t, func() lists { r, c := FilesTouched(events, 0, len(events), nil, nil); return lists{r, c} })
	if !slices.Equal(got.Read, []string{"new.go"}) || len(got.Changed) != 0 {
		t.Errorf("FilesTouched with the call ID c1 used twice = read %v, changed %v; want read [new.go], changed [] (each result belongs to the tool/call its sourceEventSeqs names)", got.Read, got.Changed)
	}
	// Only the first call in range: its read failed.
	got = callLab(t, func() lists { r, c := FilesTouched(events, 0, 4, nil, nil); return lists{r, c} })
	if len(got.Read) != 0 || len(got.Changed) != 0 {
		t.Errorf("FilesTouched(events, 0, 4) = read %v, changed %v; want none (the call at seq 2 failed)", got.Read, got.Changed)
	}
}

// --- Lab 11.4 从摘要投影 ----------------------------------------------------------------------

func TestLab11_4_从摘要投影_DeriveMessages(t *testing.T) {
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	compaction := ch11Compaction("读了 README。", 12, []string{"README.md"}, nil)
	compaction.Time = at
	events := ch11Log(append(ch11ReadmeLog(), compaction, ch11User("继续"))...)
	got := callLab(t, func() []Message { return DeriveMessages(events) })
	want := []string{
		"user:" + ch11Summary("读了 README。", "README.md", "(none)"),
		"user:再短一点", "assistant:短的", "user:继续",
	}
	ch11Diff(t, "DeriveMessages of the README log compacted at 12, then 继续", want, ch10Messages(got))
	if len(got) > 0 {
		if u, ok := got[0].(UserMessage); !ok || u.Timestamp != at.UnixMilli() {
			t.Errorf("the summary message is %#v, want a UserMessage with Timestamp %d (the compaction event's time in ms)", got[0], at.UnixMilli())
		}
	}

	// Two compactions: only the latest counts; its summary already holds the first one's.
	second := ch11Compaction("第二次摘要", 18, []string{"README.md"}, []string{"a.go"})
	events = ch11Log(append(events, ch11TurnStart(1), second, ch11User("最后"))...)
	got = callLab(t, func() []Message { return DeriveMessages(events) })
	want = []string{"user:" + ch11Summary("第二次摘要", "README.md", "a.go"), "user:继续", "user:最后"}
	ch11Diff(t, "DeriveMessages after a second compaction with firstKeptSeq 18", want, ch10Messages(got))

	// A part of a log, from seq 10 on: the kept messages are found by seq, not by index.
	part := callLab(t, func() []Message { return DeriveMessages(events[10:20]) })
	ch11Diff(t, "DeriveMessages(events[10:20]) (seq 10 to 19, the first compaction at 17 with firstKeptSeq 12)", []string{
		"user:" + ch11Summary("读了 README。", "README.md", "(none)"), "user:再短一点", "assistant:短的", "user:继续",
	}, ch10Messages(part))

	// The events before the compaction are not changed: the log keeps them.
	if e := events[0]; e.Type != EventUserMessage || TextOf(e.Message.(UserMessage).Content) != "读 README" {
		t.Errorf("DeriveMessages changed event 0 to %s", ch11Line(e))
	}
}

func TestLab11_4_从摘要投影_SessionMessages(t *testing.T) {
	s := ch11SessionOf(t, ch11ReadmeLog())
	before := ch10SessionMessages(t, s) // fills the cache through seq 16
	if len(before) != 6 {
		t.Fatalf("Messages() before the compaction has %d messages, want 6", len(before))
	}
	ch10Append(t, s, ch11Compaction("S1", 8, []string{"README.md"}, nil))
	ch10Append(t, s, ch11User("继续"))
	summary := "user:" + ch11Summary("S1", "README.md", "(none)")
	want := []string{summary, "assistant:好的", "user:再短一点", "assistant:短的", "user:继续"}
	ch11Diff(t, "Messages() after a compaction with firstKeptSeq 8 (the cache held seq 0 to 16)", want, ch10Messages(ch10SessionMessages(t, s)))
	// Later events extend the new projection, once each.
	ch10Append(t, s, ch11User("还有"))
	ch11Diff(t, "Messages() after one more user message", append(want, "user:还有"), ch10Messages(ch10SessionMessages(t, s)))
	ch11Diff(t, "Messages() called again", append(want, "user:还有"), ch10Messages(ch10SessionMessages(t, s)))

	// A fork at a turn/end after the compaction inherits it: its messages start from the summary.
	ch10Append(t, s, ch11TurnStart(1))
	ch10Append(t, s, ch11TurnEnd(1, "stop"))
	fork := ch10Fork(t, s, 21, SessionOptions{ID: "f"})
	ch10Append(t, fork, ch11User("分支"))
	ch11Diff(t, "Messages() of a fork at seq 21, after the compaction", append(want, "user:还有", "user:分支"),
		ch10Messages(ch10SessionMessages(t, fork)))

	// A fork compacted on its own, its kept part starting in what it inherited: a fork of the
	// README log at 16 (17 events inherited), then 17 user 分支, 18 compaction first=12, 19 user 再来.
	own := ch10Fork(t, ch11SessionOf(t, ch11ReadmeLog()), 16, SessionOptions{ID: "own"})
	ch10Append(t, own, ch11User("分支"))
	ch10SessionMessages(t, own) // fills the cache
	ch10Append(t, own, ch11Compaction("S2", 12, nil, []string{"a.go"}))
	ch10Append(t, own, ch11User("再来"))
	ch11Diff(t, "Messages() of a fork compacted at firstKeptSeq 12, inside what it inherited", []string{
		"user:" + ch11Summary("S2", "(none)", "a.go"), "user:再短一点", "assistant:短的", "user:分支", "user:再来",
	}, ch10Messages(ch10SessionMessages(t, own)))
}

func TestLab11_4_从摘要投影_FileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s, err := CreateSession(SessionOptions{ID: "s", Path: path})
	ch10NoErr(t, err, "CreateSession")
	for _, e := range ch11ReadmeLog() {
		ch10Append(t, s, e)
	}
	ch10Append(t, s, ch11Compaction("S1", 12, []string{"README.md"}, []string{}))
	ch10Close(t, s)
	ch10Flush(t, s)
	lines := ch10FileLines(t, path)
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\n")
	}
	want := `{"type":"compaction","seq":17,` // the time follows
	if len(lines) != 19 || !strings.HasPrefix(lines[18], want) ||
		!strings.HasSuffix(lines[18], `"data":{"summary":"S1","firstKeptSeq":12,"tokensBefore":0,"reason":"threshold","readFiles":["README.md"],"changedFiles":[]}}`) {
		t.Fatalf("the compaction's line is\n%s\nwant %s…\"data\":{\"summary\":\"S1\",\"firstKeptSeq\":12,\"tokensBefore\":0,\"reason\":\"threshold\",\"readFiles\":[\"README.md\"],\"changedFiles\":[]}}", lines[len(lines)-1], want)
	}
	loaded, _ := ch10Load(t, path)
	defer ch10Close(t, loaded)
	ch11Diff(t, "Messages() of the loaded session",
		[]string{"user:" + ch11Summary("S1", "README.md", "(none)"), "user:再短一点", "assistant:短的"},
		ch10Messages(ch10SessionMessages(t, loaded)))
}

// --- Lab 11.5 生成摘要 ------------------------------------------------------------------------

// ch11Compact calls s.Compact with a deadline, so that a lock never released fails the test.
func ch11Compact(t *testing.T, s *Session, opts CompactionOptions, reason string) (Compaction, error) {
	t.Helper()
	type out struct {
		c   Compaction
		err error
	}
	got := ch10Within(t, "Compact", ch10LockWhy, func() out {
		var o out
		runLab(t, func() { o.c, o.err = s.Compact(context.Background(), opts, reason) })
		return o
	})
	return got.c, got.err
}

// ch11CountedLog is the README log whose last assistant (seq 15) counted its context: usage
// input 1000 + output 10.
func ch11CountedLog() []SessionEvent {
	events := ch11ReadmeLog()
	a := ch10Answer("短的")
	a.Usage = Usage{Input: 1000, Output: 10}
	events[15].Message = a
	return events
}

// ch11Conversation is the one user message of a summary request holding text.
func ch11Conversation(text string) string {
	return "user:<conversation>\n" + text + "\n</conversation>\n\n" + CompactionInstruction
}

// ch11RequestLines renders a request: its system prompt, tools and messages.
func ch11RequestLines(r Request) []string {
	out := []string{"system:" + r.SystemPrompt, fmt.Sprintf("tools:%d", len(r.Tools))}
	return append(out, ch10Messages(r.Messages)...)
}

// ch11ModelThatAppends appends an event to s when it is asked, before it answers: the session's
// lock must be free while a model works.
type ch11ModelThatAppends struct {
	Model
	s    *Session
	e    SessionEvent
	errs chan error
}

func (m ch11ModelThatAppends) Stream(ctx context.Context, req Request) *AssistantStream {
	_, err := m.s.Append(m.e)
	m.errs <- err
	return m.Model.Stream(ctx, req)
}

func TestLab11_5_生成摘要_Compact(t *testing.T) {
	s := ch11SessionOf(t, ch11CountedLog())
	// The summary comes in two text blocks: the summary is all of its text, in order.
	answer := ch10Answer("  用户要读 README；")
	answer.Content = append(answer.Content, Text("已读。\n"))
	summarizer := NewScriptedModel(answer)
	// While the summary is written, a user message is appended (an Agent logs a queued message
	// at once): it comes after the cut and is kept.
	appending := ch11ModelThatAppends{Model: summarizer, s: s, e: ch11User("顺便"), errs: make(chan error, 1)}
	got, err := ch11Compact(t, s, CompactionOptions{Model: appending, KeepRecentTokens: 6}, CompactionThreshold)
	if err != nil {
		t.Fatalf("Compact: %v", err)
	}
	// keep 6: the cut at 12 keeps 5 tokens, the cut at 8 keeps 7. TokensBefore: the usage of
	// the last assistant, 1000 + 10, with nothing after it.
	want := Compaction{Summary: "用户要读 README；已读。", FirstKeptSeq: 8, TokensBefore: 1010, Reason: CompactionThreshold,
		ReadFiles: []string{"README.md"}}
	format := func(c Compaction) string {
		return fmt.Sprintf("summary %q, first %d, tokens %d, reason %s, read %v, changed %v",
			c.Summary, c.FirstKeptSeq, c.TokensBefore, c.Reason, c.ReadFiles, c.ChangedFiles)
	}
	if g, w := format(got), format(want); g != w {
		t.Errorf("Compact returned %s\nwant            %s", g, w)
	}
	requests := summarizer.Requests()
	if len(requests) != 1 {
		t.Fatalf("the summary model got %d requests, want 1", len(requests))
	}
	ch11Diff(t, "the summary request", []string{
		"system:" + CompactionSystemPrompt, "tools:0",
		ch11Conversation("[user]\n读 README\n\n[assistant]\n(call read {\"path\":\"README.md\"})\n\n[result of read]\n# tinypi"),
	}, ch11RequestLines(requests[0]))
	if err := <-appending.errs; err != nil {
		t.Errorf("appending a user message while the summary model worked: %v", err)
	}
	ch11Diff(t, "the log's last events", []string{
		"16 turn/end 1 stop",
		"17 user/message user:顺便",
		"18 compaction first=8 threshold tokens=1010 read=[README.md] changed=[]",
	}, ch11Lines(ch11Events(t, s)[16:]))
	ch11Diff(t, "Messages() after Compact", []string{
		"user:" + ch11Summary("用户要读 README；已读。", "README.md", "(none)"),
		"assistant:好的", "user:再短一点", "assistant:短的", "user:顺便",
	}, ch10Messages(ch10SessionMessages(t, s)))

	// KeepRecentTokens 0 means DefaultKeepRecentTokens: no cut keeps 20000 tokens, so the
	// earliest, 8.
	s = ch11SessionOf(t, ch11ReadmeLog())
	got, err = ch11Compact(t, s, CompactionOptions{Model: NewScriptedModel(ch10Answer("S"))}, CompactionManual)
	if err != nil || got.FirstKeptSeq != 8 {
		t.Errorf("Compact with KeepRecentTokens 0 cut at %d (error %v), want 8 (the default keeps 20000 tokens)", got.FirstKeptSeq, err)
	}

	// The file lists cover only the part summarised: b.go is read after the cut, in the kept part,
	// and is not listed yet. A long tool result is cut in the summary request to its first 2000
	// characters (CompactionResultChars).
	//	0–16 the README log, whose read of README.md (seq 6) answered 2004 characters
	//	17 user 再读 b.go  18 turn/start 1  19 model/request  20 assistant [c3]  21 tool/call c3 read b.go
	//	22 tool/result c3 <-21  23 turn/end 1 toolUse  24 turn/start 2  25 model/request
	//	26 assistant 读完了  27 turn/end 2 stop
	// Cut points 8, 12, 17 and 24; none keeps the default 20000 tokens, so the earliest, 8.
	events := ch11ReadmeLog()
	events[6] = ch11ResultEvent(4, "c1", strings.Repeat("日志", 1002), false)
	c3 := ToolCall{ID: "c3", Name: "read", Arguments: `{"path":"b.go"}`}
	events = append(events, ch11User("再读 b.go"), ch11TurnStart(1), ch11Request(18, 7),
		ch11Assistant(AssistantMessage{Content: []ContentBlock{c3}, StopReason: StopReasonToolUse}), ch11CallEvent(c3),
		ch11ResultEvent(21, "c3", "package b", false), ch11TurnEnd(1, "toolUse"), ch11TurnStart(2), ch11Request(24, 9),
		ch11Assistant(ch10Answer("读完了")), ch11TurnEnd(2, "stop"))
	s = ch11SessionOf(t, ch11Log(events...))
	summarizer = NewScriptedModel(ch10Answer("S"))
	got, err = ch11Compact(t, s, CompactionOptions{Model: summarizer}, CompactionManual)
	if err != nil {
		t.Fatalf("Compact of the README log with a read of b.go after it: %v", err)
	}
	if got.FirstKeptSeq != 8 || !slices.Equal(got.ReadFiles, []string{"README.md"}) || len(got.ChangedFiles) != 0 {
		t.Errorf("Compact with b.go read in the kept part = first %d, read %v, changed %v; want first 8, read [README.md], changed [] (the lists cover the calls before the cut)",
			got.FirstKeptSeq, got.ReadFiles, got.ChangedFiles)
	}
	if requests := summarizer.Requests(); len(requests) == 1 {
		ch11Diff(t, "the summary request with a result of 2004 characters", []string{
			"system:" + CompactionSystemPrompt, "tools:0",
			ch11Conversation("[user]\n读 README\n\n[assistant]\n(call read {\"path\":\"README.md\"})\n\n[result of read]\n" +
				strings.Repeat("日志", 1000) + "\n[... 4 more characters left out]"),
		}, ch11RequestLines(requests[0]))
	}
}

func TestLab11_5_生成摘要_FailureChangesNothing(t *testing.T) {
	failures := []struct {
		name   string
		answer AssistantMessage
	}{
		// A failed or aborted answer may hold a part of a summary: it is not a summary.
		{"the model fails", AssistantMessage{Content: []ContentBlock{Text("用户要")}, StopReason: StopReasonError, ErrorMessage: "overloaded"}},
		{"the request is aborted", AssistantMessage{Content: []ContentBlock{Text("用户要")}, StopReason: StopReasonAborted, ErrorMessage: "aborted"}},
		{"the answer has no text", AssistantMessage{Content: []ContentBlock{Text(" \n ")}, StopReason: StopReasonStop}},
	}
	for _, f := range failures {
		s := ch11SessionOf(t, ch11ReadmeLog())
		c, err := ch11Compact(t, s, CompactionOptions{Model: NewScriptedModel(f.answer)}, CompactionManual)
		if err == nil {
			t.Errorf("Compact when %s returned %+v and no error, want an error", f.name, c)
		}
		if n := len(ch11Events(t, s)); n != 17 {
			t.Errorf("Compact when %s: the log has %d events, want the 17 it had (a failed compaction logs nothing):\n%s",
				f.name, n, strings.Join(ch11Lines(ch11Events(t, s)[17:]), "\n"))
		}
	}

	// Nothing to compact: no cut point, no summary request.
	s := ch11SessionOf(t, ch11Log(ch11User("hi"), ch11TurnStart(1), ch11Request(0, 1)))
	model := NewScriptedModel(ch10Answer("S"))
	if _, err := ch11Compact(t, s, CompactionOptions{Model: model}, CompactionManual); !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("Compact of a log without cut points returned %v, want ErrNothingToCompact", err)
	}
	if n := model.Calls(); n != 0 {
		t.Errorf("Compact of a log without cut points asked the model %d times, want 0", n)
	}

	// The flush fails (the session's file is closed): no summary request, nothing logged.
	path := filepath.Join(t.TempDir(), "s.jsonl")
	fs, err := CreateSession(SessionOptions{ID: "s", Path: path})
	ch10NoErr(t, err, "CreateSession")
	for _, e := range ch11ReadmeLog() {
		ch10Append(t, fs, e)
	}
	if err := ch10Within(t, "Close", ch10LockWhy, fs.Close); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ch10Append(t, fs, ch11User("after Close")) // stays in memory: the next flush fails
	model = NewScriptedModel(ch10Answer("S"))
	if _, err := ch11Compact(t, fs, CompactionOptions{Model: model}, CompactionManual); err == nil {
		t.Errorf("Compact of a session whose flush fails returned no error")
	}
	if n := model.Calls(); n != 0 {
		t.Errorf("Compact of a session whose flush fails asked the model %d times, want 0 (flush first: what the model sees is on disk)", n)
	}
	if n := len(ch11Events(t, fs)); n != 18 {
		t.Errorf("Compact of a session whose flush fails: the log has %d events, want 18", n)
	}
}

func TestLab11_5_生成摘要_SecondCompaction(t *testing.T) {
	// First compaction at 8, reading README.md; then a turn that edits a.go and a new prompt.
	//	17 compaction first=8  18 user 改 a.go  19 turn/start 1  20 model/request  21 assistant [c2]
	//	22 tool/call c2  23 tool/result c2 <-22  24 turn/end 1 toolUse  25 turn/start 2
	//	26 model/request  27 assistant 改好了 (usage 40+2)  28 turn/end 2 stop  29 user 谢谢
	events := ch11ReadmeLog()
	c2 := ToolCall{ID: "c2", Name: "edit", Arguments: `{"path":"a.go","old":"x","new":"y"}`}
	done := ch10Answer("改好了")
	done.Usage = Usage{Input: 40, Output: 2}
	events = append(events, ch11Compaction("S1", 8, []string{"README.md"}, nil),
		ch11User("改 a.go"), ch11TurnStart(1), ch11Request(18, 5),
		ch11Assistant(AssistantMessage{Content: []ContentBlock{c2}, StopReason: StopReasonToolUse}), ch11CallEvent(c2),
		SessionEvent{Type: EventToolResult, SourceEventSeqs: []int{22}, Message: ToolResultMessage{ToolCallID: "c2", ToolName: "edit",
			Content: []ContentBlock{Text("edited")}}}, ch11TurnEnd(1, "toolUse"), ch11TurnStart(2), ch11Request(24, 7),
		ch11Assistant(done), ch11TurnEnd(2, "stop"), ch11User("谢谢"))
	s := ch11SessionOf(t, ch11Log(events...))
	summarizer := NewScriptedModel(ch10Answer("S2"))
	got, err := ch11Compact(t, s, CompactionOptions{Model: summarizer, KeepRecentTokens: 1}, CompactionOverflow)
	if err != nil {
		t.Fatalf("the second Compact: %v", err)
	}
	// keep 1: the latest cut, 29 ("谢谢", 2 tokens). TokensBefore: the usage of seq 27 (42; the
	// assistant at 10 is kept from before the compaction, its usage is not used) + "谢谢" (2).
	if got.FirstKeptSeq != 29 || got.TokensBefore != 44 || !slices.Equal(got.ReadFiles, []string{"README.md"}) ||
		!slices.Equal(got.ChangedFiles, []string{"a.go"}) || got.Reason != CompactionOverflow {
		t.Errorf("the second compaction = first %d, tokens %d, read %v, changed %v, reason %s; want first 29, tokens 44, read [README.md], changed [a.go], reason overflow",
			got.FirstKeptSeq, got.TokensBefore, got.ReadFiles, got.ChangedFiles, got.Reason)
	}
	requests := summarizer.Requests()
	if len(requests) != 1 {
		t.Fatalf("the summary model got %d requests, want 1", len(requests))
	}
	ch11Diff(t, "the second summary request (the previous summary first, then what was kept and added)", []string{
		"system:" + CompactionSystemPrompt, "tools:0",
		ch11Conversation("[user]\n" + ch11Summary("S1", "README.md", "(none)") +
			"\n\n[assistant]\n好的\n\n[user]\n再短一点\n\n[assistant]\n短的\n\n[user]\n改 a.go" +
			"\n\n[assistant]\n(call edit {\"path\":\"a.go\",\"old\":\"x\",\"new\":\"y\"})\n\n[result of edit]\nedited\n\n[assistant]\n改好了"),
	}, ch11RequestLines(requests[0]))

	// A cut before the latest compaction: compacting the README log again at 12 summarises the
	// first summary and the messages it kept before 12.
	// The answer at seq 15 counted its context (1000 + 10) before the first compaction, which kept
	// it: that context no longer exists, and no answer after the compaction has usage, so every
	// message is estimated. TokensBefore: the summary message (142 bytes, 36) + "好的" (2) +
	// "再短一点" (3) + "短的" (2) = 43.
	s = ch11SessionOf(t, ch11Log(append(ch11CountedLog(), ch11Compaction("S1", 8, []string{"README.md"}, nil))...))
	summarizer = NewScriptedModel(ch10Answer("S2"))
	got, err = ch11Compact(t, s, CompactionOptions{Model: summarizer, KeepRecentTokens: 1}, CompactionManual)
	if err != nil {
		t.Fatalf("Compact at 12: %v", err)
	}
	if got.FirstKeptSeq != 12 {
		t.Errorf("Compact of the README log compacted at 8 cut at %d, want 12", got.FirstKeptSeq)
	}
	if got.TokensBefore != 43 {
		t.Errorf("Compact of the README log compacted at 8: TokensBefore %d, want 43 (every message estimated: the only usage is that of seq 15, kept across the compaction)", got.TokensBefore)
	}
	if requests := summarizer.Requests(); len(requests) == 1 {
		ch11Diff(t, "the summary request when the cut (12) comes before the latest compaction (17)", []string{
			"system:" + CompactionSystemPrompt, "tools:0",
			ch11Conversation("[user]\n" + ch11Summary("S1", "README.md", "(none)") + "\n\n[assistant]\n好的"),
		}, ch11RequestLines(requests[0]))
	}
}

// --- Lab 11.6 循环里的压缩 --------------------------------------------------------------------

// ch11ReadTool is the registry of ch11Run: the "read" tool the calls of ch10Call name, which
// answers "ok".
func ch11ReadTool() *Registry {
	return MustRegistry(Tool{ToolDefinition: ToolDefinition{Name: "read"}, Execute: func(context.Context, json.RawMessage, ToolExecContext) (ToolOutput, error) {
		return ToolOutput{Content: []ContentBlock{Text("ok")}}, nil
	}})
}

// ch11Run runs the loop on s with the given models and options and returns the result, the
// events it reported (model events by their type) and the log.
func ch11Run(t *testing.T, s *Session, model Model, compaction *CompactionOptions) (AgentRunResult, []string, []string) {
	t.Helper()
	var events []string
	returned := false
	result := ch10Within(t, "RunAgentLoop", ch10LockWhy, func() AgentRunResult {
		var res AgentRunResult
		runLab(t, func() {
			var err error
			res, err = RunAgentLoop(context.Background(), AgentLoopOptions{
				Context: AgentContext{SystemPrompt: "你是 tinypi"}, Model: model, Session: s, Compaction: compaction,
				Tools: ch11ReadTool(),
				OnEvent: func(e LoopEvent) {
					switch e := e.(type) {
					case ModelEvent:
						switch e.Event.(type) {
						case DoneEvent:
							events = append(events, "model done")
						case ErrorEvent:
							events = append(events, "model error")
						}
					case CompactionEvent:
						line := "compaction " + e.Reason
						if e.Compaction != nil {
							line += fmt.Sprintf(" first=%d", e.Compaction.FirstKeptSeq)
						}
						if e.Error != "" {
							line += " failed"
						}
						events = append(events, line)
					case AssistantMessageEvent:
						events = append(events, "assistant "+ch10Message(e.Message))
					case TurnEndEvent:
						events = append(events, "turn_end "+string(e.Reason))
					}
				},
			})
			if err != nil {
				t.Errorf("RunAgentLoop: %v", err)
			}
			returned = true
		})
		return res
	})
	if !returned {
		t.FailNow() // the run did not return (its failure is reported above): nothing to compare
	}
	return result, events, ch11Lines(ch11Events(t, s))
}

func TestLab11_6_循环里的压缩_Threshold(t *testing.T) {
	s := ch11History(t)
	model := NewScriptedModel(ch10ToolUse("c1"), ch10Answer("done"))
	summarizer := NewScriptedModel(ch10Answer("S"))
	// The context is 1010 (a1's usage) + u2 (1) + u3 (1) = 1012 > 2000 - 1000. Before the second
	// turn the session's context is the summary and three small messages, far below the
	// threshold (the run's transcript, which still holds a1, is not what is measured).
	opts := &CompactionOptions{Model: summarizer, ContextWindow: 2000, ReserveTokens: 1000, KeepRecentTokens: 1}
	result, events, log := ch11Run(t, s, model, opts)
	ch11Diff(t, "the log", []string{
		"0 user/message user:u1", "1 turn/start 1", "2 model/request through=1 messages=1", "3 assistant/message assistant:a1",
		"4 turn/end 1 stop", "5 user/message user:u2", "6 user/message user:u3",
		"7 compaction first=6 threshold tokens=1012 read=[] changed=[]",
		"8 turn/start 1", "9 model/request through=8 messages=2", "10 assistant/message assistant:[c1]",
		"11 tool/call c1", "12 tool/start c1 <-11", "13 tool/result c1 <-11", "14 turn/end 1 toolUse",
		"15 turn/start 2", "16 model/request through=15 messages=4", "17 assistant/message assistant:done", "18 turn/end 2 stop",
	}, log)
	ch11Diff(t, "the events the run reported", []string{
		"compaction threshold first=6", "model done", "assistant assistant:[c1]", "model done", "assistant assistant:done", "turn_end stop",
	}, events)
	if requests := model.Requests(); len(requests) == 2 {
		ch11Diff(t, "the model's first request", []string{"user:" + ch11Summary("S", "(none)", "(none)"), "user:u3"}, ch10Messages(requests[0].Messages))
	}
	// The run's transcript keeps every message; only requests are built from the summary.
	ch11Diff(t, "the run's transcript", []string{"user:u1", "assistant:a1", "user:u2", "user:u3", "assistant:[c1]",
		"toolResult:c1=ok", "assistant:done"}, ch10Messages(result.Messages))

	// Below the threshold (1012 is not > 2000 - 988): no compaction, no summary request.
	s = ch11History(t)
	summarizer = NewScriptedModel(ch10Answer("S"))
	_, events, _ = ch11Run(t, s, NewScriptedModel(ch10Answer("done")),
		&CompactionOptions{Model: summarizer, ContextWindow: 2000, ReserveTokens: 988})
	if summarizer.Calls() != 0 || slices.ContainsFunc(events, func(e string) bool { return strings.HasPrefix(e, "compaction") }) {
		t.Errorf("a context of 1012 with window 2000 and reserve 988 was compacted (events %v), want no compaction", events)
	}
}

func TestLab11_6_循环里的压缩_OverflowRetriesOnce(t *testing.T) {
	refusal := AssistantMessage{StopReason: StopReasonError, ErrorMessage: "400: prompt is too long: 213000 tokens > 200000 maximum"}
	s := ch11History(t)
	// The summary model is the run's own model: no Model in the options, no window (no threshold).
	model := NewScriptedModel(refusal, ch10Answer("S"), ch10Answer("done"))
	result, events, log := ch11Run(t, s, model, &CompactionOptions{KeepRecentTokens: 1})
	if result.Reason != RunStop || result.Steps != 1 {
		t.Errorf("the run ended %s after %d steps, want stop after 1 (a retry is part of its turn)", result.Reason, result.Steps)
	}
	ch11Diff(t, "the log of an overflow retried", []string{
		"0 user/message user:u1", "1 turn/start 1", "2 model/request through=1 messages=1", "3 assistant/message assistant:a1",
		"4 turn/end 1 stop", "5 user/message user:u2", "6 user/message user:u3",
		"7 turn/start 1", "8 model/request through=7 messages=4",
		"9 compaction first=6 overflow tokens=1012 read=[] changed=[]",
		"10 model/request through=9 messages=2", "11 assistant/message assistant:done", "12 turn/end 1 stop",
	}, log)
	ch11Diff(t, "the events of an overflow retried", []string{
		"model error", "compaction overflow first=6", "model done", "assistant assistant:done", "turn_end stop",
	}, events)
	ch11Diff(t, "the transcript (the refusal is not kept)", []string{"user:u1", "assistant:a1", "user:u2", "user:u3", "assistant:done"},
		ch10Messages(result.Messages))
	if requests := model.Requests(); len(requests) == 3 {
		ch11Diff(t, "the retried request", []string{"system:你是 tinypi", "tools:1", "user:" + ch11Summary("S", "(none)", "(none)"), "user:u3"},
			ch11RequestLines(requests[2]))
	}

	// Refused again after the compaction: no second compaction, no third request.
	s = ch11History(t)
	model = NewScriptedModel(refusal, refusal)
	summarizer := NewScriptedModel(ch10Answer("S"), ch10Answer("S again"))
	result, events, log = ch11Run(t, s, model, &CompactionOptions{Model: summarizer, KeepRecentTokens: 1})
	ch11Diff(t, "the log's end when the retry is refused too", []string{
		"9 compaction first=6 overflow tokens=1012 read=[] changed=[]",
		"10 model/request through=9 messages=2", "11 assistant/message assistant:", "12 turn/end 1 error",
	}, ch11From(log, 9))
	if model.Calls() != 2 || summarizer.Calls() != 1 || result.Reason != RunError {
		t.Errorf("refused twice: the model was asked %d times, the summary model %d times, and the run ended %s; want 2, 1, error (one compaction, one retry)",
			model.Calls(), summarizer.Calls(), result.Reason)
	}
	ch11Diff(t, "the events when the retry is refused too", []string{
		"model error", "compaction overflow first=6", "model error", "assistant assistant:", "turn_end error",
	}, events)
}

func TestLab11_6_循环里的压缩_WhenNotToCompact(t *testing.T) {
	refusal := AssistantMessage{StopReason: StopReasonError, ErrorMessage: "context_length_exceeded: maximum context length is 8192 tokens"}
	// The summary request fails: the refusal stands, logged and kept, and the run ends with error.
	s := ch11History(t)
	summarizer := NewScriptedModel(AssistantMessage{StopReason: StopReasonError, ErrorMessage: "overloaded"})
	result, events, log := ch11Run(t, s, NewScriptedModel(refusal), &CompactionOptions{Model: summarizer})
	ch11Diff(t, "the log when the overflow's compaction fails", []string{
		"7 turn/start 1", "8 model/request through=7 messages=4", "9 assistant/message assistant:", "10 turn/end 1 error",
	}, ch11From(log, 7))
	ch11Diff(t, "the events when the overflow's compaction fails", []string{
		"model error", "compaction overflow failed", "assistant assistant:", "turn_end error",
	}, events)
	if n := len(result.Messages); result.Reason != RunError || n != 5 {
		t.Errorf("the run ended %s with %d messages, want error with 5 (the refusal kept)", result.Reason, n)
	}

	// Any other error is not an overflow: no compaction.
	s = ch11History(t)
	summarizer = NewScriptedModel(ch10Answer("S"))
	other := AssistantMessage{StopReason: StopReasonError, ErrorMessage: "429: rate limited"}
	_, events, _ = ch11Run(t, s, NewScriptedModel(other), &CompactionOptions{Model: summarizer})
	if summarizer.Calls() != 0 {
		t.Errorf("a rate limit error was compacted (events %v), want no compaction", events)
	}

	// Without a session there is nothing to compact: the refusal ends the run.
	model := NewScriptedModel(refusal, ch10Answer("done"))
	summarizer = NewScriptedModel(ch10Answer("S"))
	result = ch10Within(t, "RunAgentLoop", ch10LockWhy, func() AgentRunResult {
		var res AgentRunResult
		runLab(t, func() {
			res, _ = RunAgentLoop(context.Background(), AgentLoopOptions{Model: model,
				Context:    AgentContext{Messages: []Message{UserText("hi")}},
				Compaction: &CompactionOptions{Model: summarizer, ContextWindow: 10, ReserveTokens: 1}})
		})
		return res
	})
	if model.Calls() != 1 || summarizer.Calls() != 0 || result.Reason != RunError {
		t.Errorf("without a session: the model was asked %d times, the summary model %d times, the run ended %s; want 1, 0, error",
			model.Calls(), summarizer.Calls(), result.Reason)
	}

	// An agent takes the options to every run, and refuses them without a session.
	if _, err := NewAgent(AgentOptions{Model: model, Compaction: &CompactionOptions{}}); err == nil {
		t.Errorf("NewAgent with Compaction and no Session returned no error")
	}
	s = ch11History(t)
	summarizer = NewScriptedModel(ch10Answer("S"))
	agent, err := NewAgent(AgentOptions{Model: NewScriptedModel(ch10Answer("done")), Session: s,
		Compaction: &CompactionOptions{Model: summarizer, ContextWindow: 2000, ReserveTokens: 1000, KeepRecentTokens: 1}})
	ch10NoErr(t, err, "NewAgent")
	ch10NoErr(t, ch10Within(t, "Continue", ch10LockWhy, func() error { return ch11Continue(agent) }), "Continue")
	if summarizer.Calls() != 1 {
		t.Errorf("an Agent with Compaction over the threshold asked the summary model %d times, want 1", summarizer.Calls())
	}
}

// ch11Continue continues the agent's transcript and waits until the run is over.
func ch11Continue(agent *Agent) error {
	if err := agent.Continue(context.Background()); err != nil {
		return err
	}
	return agent.WaitForIdle(context.Background())
}
