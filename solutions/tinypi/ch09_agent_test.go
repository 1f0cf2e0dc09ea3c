package tinypi

// Focused tests of chapter 09, the stateful Agent. Each test belongs to one lab:
//
//	go test -run '^TestLab9_1_' .   状态与纯归约
//	go test -run '^TestLab9_2_' .   转向与后续
//	go test -run '^TestLab9_3_' .   运行周期
//	go test -run '^TestLab9_4_' .   失败与中止
//	go test -run '^TestLab9_5_' .   订阅者
//
// The tests synchronise only on what the agent reports (events, its model's and tools' calls,
// channels they close, the moments its lock is released), never on time. A few run in a
// synctest bubble, where synctest.Wait returns once every other goroutine of the test is
// blocked: that is how they tell "has not happened yet" from "cannot happen" (a WaitForIdle
// that returned too early, an Abort that waits, two subscribers called at once).
//
// A failure's first line says what was observed, with the value it should have had: two
// different mistakes give two different first lines.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// --- messages and models ---------------------------------------------------------------------

func ch09Answer(text string) AssistantMessage {
	return AssistantMessage{Content: []ContentBlock{Text(text)}, StopReason: StopReasonStop}
}

func ch09ToolUse(calls ...ToolCall) AssistantMessage {
	content := []ContentBlock{Text("我先查一下。")}
	for _, c := range calls {
		content = append(content, c)
	}
	return AssistantMessage{Content: content, StopReason: StopReasonToolUse}
}

func ch09Call(id string) ToolCall {
	return ToolCall{ID: id, Name: "wait", Arguments: `{}`}
}

// ch09Line renders a message for a readable diff: "user:你好", "assistant/stop:好的",
// "assistant/toolUse:c1,c2", "toolResult:c1".
func ch09Line(m Message) string {
	switch m := m.(type) {
	case UserMessage:
		return "user:" + TextOf(m.Content)
	case AssistantMessage:
		if calls := m.ToolCalls(); len(calls) > 0 {
			var ids []string
			for _, c := range calls {
				ids = append(ids, c.ID)
			}
			return fmt.Sprintf("assistant/%s:%v", m.StopReason, ids)
		}
		if m.ErrorMessage != "" {
			return fmt.Sprintf("assistant/%s!%s", m.StopReason, m.ErrorMessage)
		}
		return fmt.Sprintf("assistant/%s:%s", m.StopReason, TextOf(m.Content))
	case ToolResultMessage:
		return "toolResult:" + m.ToolCallID
	}
	return fmt.Sprintf("unknown:%T", m)
}

func ch09Lines(messages []Message) []string {
	out := []string{}
	for _, m := range messages {
		out = append(out, ch09Line(m))
	}
	return out
}

// ch09Blocks renders content blocks with everything they say: a text as it is, a tool call as
// call:ID, joined by "|".
func ch09Blocks(content []ContentBlock) string {
	var parts []string
	for _, b := range content {
		switch b := b.(type) {
		case TextContent:
			parts = append(parts, b.Text)
		case ToolCall:
			parts = append(parts, "call:"+b.ID)
		default:
			parts = append(parts, b.BlockType())
		}
	}
	return strings.Join(parts, "|")
}

// ch09Full renders a message with all its content: "user:你好", "assistant:我先查一下。|call:c1",
// "toolResult:ok".
func ch09Full(m Message) string {
	switch m := m.(type) {
	case UserMessage:
		return "user:" + ch09Blocks(m.Content)
	case AssistantMessage:
		return "assistant:" + ch09Blocks(m.Content)
	case ToolResultMessage:
		return "toolResult:" + ch09Blocks(m.Content)
	}
	return fmt.Sprintf("unknown:%T", m)
}

func ch09FullAll(messages []Message) string {
	var out []string
	for _, m := range messages {
		out = append(out, ch09Full(m))
	}
	return strings.Join(out, " / ")
}

// ch09At returns the i-th of a model's requests, as lines; nil when there are fewer.
func ch09At(requests [][]string, i int) []string {
	if i < len(requests) {
		return requests[i]
	}
	return nil
}

// ch09Model is a model whose n-th response (from 0) is made by respond. It records every
// request. respond runs inside Stream, so it may panic or return nil, as a broken model would.
type ch09Model struct {
	respond func(ctx context.Context, n int) *AssistantStream

	mu       sync.Mutex
	requests []Request
}

func (m *ch09Model) Stream(ctx context.Context, req Request) *AssistantStream {
	m.mu.Lock()
	n := len(m.requests)
	m.requests = append(m.requests, cloneRequest(req))
	m.mu.Unlock()
	return m.respond(ctx, n)
}

func (m *ch09Model) requestLines() [][]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out [][]string
	for _, r := range m.requests {
		out = append(out, ch09Lines(r.Messages))
	}
	return out
}

// ch09RequestLines are a scripted model's requests, as lines.
func ch09RequestLines(m *ScriptedModel) [][]string {
	var out [][]string
	for _, r := range m.Requests() {
		out = append(out, ch09Lines(r.Messages))
	}
	return out
}

// ch09Reply is a complete stream that answers msg.
func ch09Reply(msg AssistantMessage) *AssistantStream {
	s := NewAssistantStream()
	s.Push(StartEvent{})
	s.Push(DoneEvent{Message: msg})
	return s
}

// ch09Held is a stream that starts, says partial, calls started, and then waits for release
// (answering msg) or for ctx (ending aborted with "request aborted").
func ch09Held(ctx context.Context, partial string, started func(), release <-chan struct{}, msg AssistantMessage) *AssistantStream {
	s := NewAssistantStream()
	go func() {
		s.Push(StartEvent{})
		s.Push(TextDeltaEvent{ContentIndex: 0, Delta: partial})
		started()
		select {
		case <-release:
			s.Push(DoneEvent{Message: msg})
		case <-ctx.Done():
			s.Push(ErrorEvent{Message: AssistantMessage{
				Content:      []ContentBlock{Text(partial)},
				StopReason:   StopReasonAborted,
				ErrorMessage: "request aborted",
			}})
		}
	}()
	return s
}

// ch09WaitTool returns an executor whose calls report on started and wait for release (result
// "完成") or for ctx (result "已取消", an error).
func ch09WaitTool(started chan<- string, release <-chan struct{}) ToolExecutor {
	return func(ctx context.Context, call ToolCall, exec ToolExecContext) (ToolResultMessage, error) {
		started <- call.ID
		select {
		case <-release:
			return ToolResultMessage{Content: []ContentBlock{Text("完成")}}, nil
		case <-ctx.Done():
			return ToolResultMessage{Content: []ContentBlock{Text("已取消")}, IsError: true}, nil
		}
	}
}

// --- observing an agent ----------------------------------------------------------------------

// ch09Recorder is a subscriber that keeps every event it gets, as short strings such as
// "run_start#1", "assistant_message:stop#1", "run_end:stop#2". hook, when set, is called
// after the event was recorded.
type ch09Recorder struct {
	hook func(AgentEvent)

	mu     sync.Mutex
	events []string
}

func (rec *ch09Recorder) on(e AgentEvent) {
	rec.mu.Lock()
	rec.events = append(rec.events, ch09Kind(e))
	rec.mu.Unlock()
	if rec.hook != nil {
		rec.hook(e)
	}
}

func (rec *ch09Recorder) kinds() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.events)
}

// runKinds is kinds() without the model's stream events.
func (rec *ch09Recorder) runKinds() []string {
	var out []string
	for _, k := range rec.kinds() {
		if !strings.HasPrefix(k, "model_event") {
			out = append(out, k)
		}
	}
	return out
}

func ch09Kind(e AgentEvent) string {
	switch e := e.(type) {
	case RunStartEvent:
		return fmt.Sprintf("run_start#%d", e.RunID)
	case RunEndEvent:
		return fmt.Sprintf("run_end:%s#%d", e.Reason, e.RunID)
	case RunLoopEvent:
		return fmt.Sprintf("%s#%d", ch09LoopKind(e.Event), e.RunID)
	}
	return fmt.Sprintf("unknown:%T", e)
}

// ch09LoopKind is chapter 07's short form of a loop event, plus the event chapter 09 adds:
// "queued_message:user:转向".
func ch09LoopKind(e LoopEvent) string {
	if q, ok := e.(QueuedMessageEvent); ok {
		return "queued_message:" + ch09Line(q.Message)
	}
	return ch07Kind(e)
}

// ch09Settle waits until a is idle and returns its state. A lab that is still a stub may have
// panicked inside the agent's own goroutines; the agent records that in the state, and
// ch09Settle reports it as the lab's pending message.
func ch09Settle(t *testing.T, a *Agent) AgentState {
	t.Helper()
	runLab(t, func() {
		if err := a.WaitForIdle(t.Context()); err != nil {
			t.Fatalf("WaitForIdle: %v", err)
		}
	})
	st := callLab(t, a.State)
	ch09Pending(t, st)
	return st
}

// ch09Pending fails the test with a lab's pending message found in the state.
func ch09Pending(t *testing.T, st AgentState) {
	t.Helper()
	texts := append([]string{st.LastError}, st.SubscriberErrors...)
	for _, m := range st.Messages {
		if a, ok := m.(AssistantMessage); ok {
			texts = append(texts, a.ErrorMessage)
		}
	}
	for _, text := range texts {
		if msg := labPending(text); msg != "" {
			t.Fatal(msg)
		}
	}
}

// ch09PendingErr fails the test with a lab's pending message found in err (a stub's panic that
// ch09Go or ch09Try turned into an error).
func ch09PendingErr(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if msg := labPending(err.Error()); msg != "" {
		t.Fatal(msg)
	}
}

// ch09Try calls f and turns a panic (a stub) into an error holding its value.
func ch09Try(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}

// ch09Go runs f on a new goroutine; the channel receives f's error (or its panic, see ch09Try)
// once f returns.
func ch09Go(f func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- ch09Try(f) }()
	return done
}

// ch09NoPanic calls f and fails the test if it panics: with the lab's pending message for a
// stub, with what panicked otherwise.
func ch09NoPanic(t *testing.T, what string, f func()) {
	t.Helper()
	if err := ch09Try(func() error { f(); return nil }); err != nil {
		ch09PendingErr(t, err)
		t.Fatalf("%s: %v", what, err)
	}
}

// ch09Bubble runs f in a synctest bubble, where synctest.Wait returns once every other
// goroutine of the bubble is blocked (on a channel, a sync.Cond, a WaitGroup). A deadlock
// becomes a test failure instead of a crash.
func ch09Bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	defer func() {
		if p := recover(); p != nil {
			failOnPanic(t, p)
		}
		goleak.VerifyNone(t, ignore)
	}()
	synctest.Test(t, f)
}

// ch09Parallel calls f(0..n-1) on n goroutines at once and waits for all of them. A panic in f
// (a stub) fails the test, after every goroutine has returned.
func ch09Parallel(t *testing.T, n int, f func(i int)) {
	t.Helper()
	var wg sync.WaitGroup
	panics := make([]any, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			defer func() { panics[i] = recover() }()
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
	for _, p := range panics {
		if p != nil {
			failOnPanic(t, p)
		}
	}
}

func ch09NewAgent(t *testing.T, opts AgentOptions) *Agent {
	t.Helper()
	a, err := NewAgent(opts)
	if err != nil {
		t.Fatalf("NewAgent: %v", err)
	}
	return a
}

// ch09Signal returns a function that closes ch once, however often it is called.
func ch09Signal(ch chan struct{}) func() {
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// ch09Ends is a subscriber that keeps every run_end.
type ch09Ends struct {
	mu   sync.Mutex
	ends []RunEndEvent
}

func (c *ch09Ends) on(e AgentEvent) {
	if end, ok := e.(RunEndEvent); ok {
		c.mu.Lock()
		c.ends = append(c.ends, end)
		c.mu.Unlock()
	}
}

// last returns the last run_end so far; the zero event when there is none.
func (c *ch09Ends) last() RunEndEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ends) == 0 {
		return RunEndEvent{}
	}
	return c.ends[len(c.ends)-1]
}

// --- Lab 9.1 state and pure reducer ----------------------------------------------------------

// ch09Summary is the part of a state the reducer tests compare.
type ch09Summary struct {
	RunID     int
	Running   bool
	Messages  []string
	Streaming string
	Pending   []string
	LastError string
	Dropped   []string
}

func ch09Summarise(s AgentState) ch09Summary {
	out := ch09Summary{RunID: s.RunID, Running: s.Running, Messages: ch09Lines(s.Messages), LastError: s.LastError}
	if s.Streaming != nil {
		out.Streaming = ch09Line(*s.Streaming)
	}
	for _, c := range s.PendingToolCalls {
		out.Pending = append(out.Pending, c.ID)
	}
	for _, m := range s.Dropped {
		out.Dropped = append(out.Dropped, ch09Line(m))
	}
	return out
}

// ch09StateDiff names every field of got that differs from want, with both values, on one
// line ("LastError = "x", want """); empty when they agree.
func ch09StateDiff(want, got ch09Summary) string {
	var diffs []string
	if got.RunID != want.RunID {
		diffs = append(diffs, fmt.Sprintf("RunID = %d, want %d", got.RunID, want.RunID))
	}
	if got.Running != want.Running {
		diffs = append(diffs, fmt.Sprintf("Running = %v, want %v", got.Running, want.Running))
	}
	if !slices.Equal(got.Messages, want.Messages) {
		diffs = append(diffs, fmt.Sprintf("Messages = %q, want %q", got.Messages, want.Messages))
	}
	if got.Streaming != want.Streaming {
		diffs = append(diffs, fmt.Sprintf("Streaming = %q, want %q", got.Streaming, want.Streaming))
	}
	if !slices.Equal(got.Pending, want.Pending) {
		diffs = append(diffs, fmt.Sprintf("PendingToolCalls = %q, want %q", got.Pending, want.Pending))
	}
	if got.LastError != want.LastError {
		diffs = append(diffs, fmt.Sprintf("LastError = %q, want %q", got.LastError, want.LastError))
	}
	if !slices.Equal(got.Dropped, want.Dropped) {
		diffs = append(diffs, fmt.Sprintf("Dropped = %q, want %q", got.Dropped, want.Dropped))
	}
	return strings.Join(diffs, "; ")
}

// ch09Plus returns a new slice: lines followed by more.
func ch09Plus(lines []string, more ...string) []string {
	return append(slices.Clone(lines), more...)
}

func TestLab9_1_状态与纯归约_Reducer(t *testing.T) {
	reduce := func(s AgentState, e AgentEvent) AgentState {
		t.Helper()
		return callLab(t, func() AgentState { return ReduceAgentState(s, e) })
	}
	// A state of run 1 whose transcript has room to grow in place.
	base := AgentState{RunID: 1, Running: true, Messages: make([]Message, 1, 8)}
	base.Messages[0] = UserText("你好")

	left := reduce(base, RunLoopEvent{RunID: 1, Event: AssistantMessageEvent{Message: ch09Answer("甲")}})
	right := reduce(base, RunLoopEvent{RunID: 1, Event: AssistantMessageEvent{Message: ch09Answer("乙")}})
	if got, want := ch09Lines(left.Messages), []string{"user:你好", "assistant/stop:甲"}; !slices.Equal(got, want) {
		t.Fatalf("the reducer is not pure: reducing the same state a second time (乙) made the first result's transcript %q, want %q", got, want)
	}
	if got, want := ch09Lines(right.Messages), []string{"user:你好", "assistant/stop:乙"}; !slices.Equal(got, want) {
		t.Fatalf("the second result's transcript = %q, want %q", got, want)
	}
	if got := ch09Lines(base.Messages); !slices.Equal(got, []string{"user:你好"}) {
		t.Fatalf("the reducer changed its input state: its transcript is now %q", got)
	}

	// Run 2 begins; an old run_start and late events of run 1 must not touch it.
	s := reduce(left, RunEndEvent{RunID: 1, Reason: RunStop, Messages: left.Messages})
	s = reduce(s, RunStartEvent{RunID: 2, Messages: append(CloneMessages(s.Messages), UserText("再来"))})
	run2 := []string{"user:你好", "assistant/stop:甲", "user:再来"}
	started2 := ch09Summary{RunID: 2, Running: true, Messages: run2}
	if diff := ch09StateDiff(started2, ch09Summarise(s)); diff != "" {
		t.Fatalf("state after run_start#2: %s", diff)
	}
	if diff := ch09StateDiff(started2, ch09Summarise(reduce(s, RunStartEvent{RunID: 1, Messages: []Message{UserText("旧的")}}))); diff != "" {
		t.Errorf("a run_start of the older run 1 changed the state of run 2: %s", diff)
	}
	for _, late := range []AgentEvent{
		RunLoopEvent{RunID: 1, Event: AssistantMessageEvent{Message: ch09Answer("迟到")}},
		RunLoopEvent{RunID: 1, Event: ModelEvent{Event: StartEvent{}}},
		RunEndEvent{RunID: 1, Reason: RunAborted, Error: "旧的错误"},
	} {
		if diff := ch09StateDiff(started2, ch09Summarise(reduce(s, late))); diff != "" {
			t.Errorf("a late %s of run 1 changed the state of run 2: %s", late.EventType(), diff)
		}
	}

	step := func(e AgentEvent, want ch09Summary) {
		t.Helper()
		s = reduce(s, e)
		if diff := ch09StateDiff(want, ch09Summarise(s)); diff != "" {
			t.Errorf("state after %s: %s", ch09Kind(e), diff)
		}
	}
	// One turn of run 2: the streaming message grows, the call is pending while it runs, and
	// the run ends aborted with a steering message it never took.
	withCall := ch09Plus(run2, "assistant/toolUse:[c1]")
	withResult := ch09Plus(withCall, "toolResult:c1")
	step(RunLoopEvent{RunID: 2, Event: ModelEvent{Event: StartEvent{}}},
		ch09Summary{RunID: 2, Running: true, Messages: run2, Streaming: "assistant/:"})
	step(RunLoopEvent{RunID: 2, Event: ModelEvent{Event: TextDeltaEvent{ContentIndex: 0, Delta: "正在"}}},
		ch09Summary{RunID: 2, Running: true, Messages: run2, Streaming: "assistant/:正在"})
	step(RunLoopEvent{RunID: 2, Event: ModelEvent{Event: TextDeltaEvent{ContentIndex: 0, Delta: "查"}}},
		ch09Summary{RunID: 2, Running: true, Messages: run2, Streaming: "assistant/:正在查"})
	step(RunLoopEvent{RunID: 2, Event: ModelEvent{Event: ToolCallEndEvent{ContentIndex: 1, ToolCall: ch09Call("c1")}}},
		ch09Summary{RunID: 2, Running: true, Messages: run2, Streaming: "assistant/:[c1]"})
	step(RunLoopEvent{RunID: 2, Event: AssistantMessageEvent{Message: ch09ToolUse(ch09Call("c1"))}},
		ch09Summary{RunID: 2, Running: true, Messages: withCall})
	step(RunLoopEvent{RunID: 2, Event: ToolStartEvent{Call: ch09Call("c1")}},
		ch09Summary{RunID: 2, Running: true, Messages: withCall, Pending: []string{"c1"}})
	step(RunLoopEvent{RunID: 2, Event: ToolEndEvent{Result: ToolResultMessage{ToolCallID: "c1", ToolName: "wait"}}},
		ch09Summary{RunID: 2, Running: true, Messages: withResult})
	step(RunEndEvent{RunID: 2, Reason: RunAborted, Error: "run ended: aborted", Dropped: []Message{UserText("插话")}},
		ch09Summary{RunID: 2, Messages: withResult, LastError: "run ended: aborted", Dropped: []string{"user:插话"}})

	// Run 3 starts from a clean slate: neither the LastError nor the Dropped of run 2 carry over.
	// Its goroutine fails in the middle of a stream: run_end has no transcript, so the one the
	// events built stands, and nothing streams any more.
	run3 := ch09Plus(withResult, "user:第三轮")
	step(RunStartEvent{RunID: 3, Messages: append(CloneMessages(s.Messages), UserText("第三轮"))},
		ch09Summary{RunID: 3, Running: true, Messages: run3})
	step(RunLoopEvent{RunID: 3, Event: ModelEvent{Event: StartEvent{}}},
		ch09Summary{RunID: 3, Running: true, Messages: run3, Streaming: "assistant/:"})
	step(RunLoopEvent{RunID: 3, Event: ModelEvent{Event: TextDeltaEvent{ContentIndex: 0, Delta: "写到"}}},
		ch09Summary{RunID: 3, Running: true, Messages: run3, Streaming: "assistant/:写到"})
	step(RunEndEvent{RunID: 3, Reason: RunError, Error: "tinypi: agent run 3 panicked: 坏了"},
		ch09Summary{RunID: 3, Messages: run3, LastError: "tinypi: agent run 3 panicked: 坏了"})

	// Run 4 ends while its call is still pending: nothing is pending after run_end.
	run4 := ch09Plus(run3, "user:第四轮")
	step(RunStartEvent{RunID: 4, Messages: append(CloneMessages(s.Messages), UserText("第四轮"))},
		ch09Summary{RunID: 4, Running: true, Messages: run4})
	step(RunLoopEvent{RunID: 4, Event: AssistantMessageEvent{Message: ch09ToolUse(ch09Call("c2"))}},
		ch09Summary{RunID: 4, Running: true, Messages: ch09Plus(run4, "assistant/toolUse:[c2]")})
	step(RunLoopEvent{RunID: 4, Event: ToolStartEvent{Call: ch09Call("c2")}},
		ch09Summary{RunID: 4, Running: true, Messages: ch09Plus(run4, "assistant/toolUse:[c2]"), Pending: []string{"c2"}})
	step(RunEndEvent{RunID: 4, Reason: RunAborted, Error: "run ended: aborted"},
		ch09Summary{RunID: 4, Messages: ch09Plus(run4, "assistant/toolUse:[c2]"), LastError: "run ended: aborted"})
	ended4 := ch09Summarise(s)
	for _, old := range []int{2, 4} {
		if diff := ch09StateDiff(ended4, ch09Summarise(reduce(s, RunStartEvent{RunID: old, Messages: []Message{UserText("旧的")}}))); diff != "" {
			t.Errorf("after run 4 ended, a run_start of run %d (not newer than 4) changed the state: %s", old, diff)
		}
	}

	// run_start changes only what step 1 names. Run 5 begins while run 4 is still streaming with
	// a call pending (its run_end was never reduced): nothing streams or is pending any more, and
	// the prompt, tools and subscriber errors stay. A second run_start of run 4 changes nothing.
	partial := ch09Answer("写到一半")
	mid := AgentState{
		SystemPrompt: "你是助手。", Tools: []ToolDefinition{{Name: "wait"}}, SubscriberErrors: []string{"旧的"},
		RunID: 4, Running: true, Messages: []Message{UserText("第四轮")},
		Streaming: &partial, PendingToolCalls: []ToolCall{ch09Call("c3")},
	}
	midSummary := ch09Summarise(mid)
	if diff := ch09StateDiff(midSummary, ch09Summarise(reduce(mid, RunStartEvent{RunID: 4, Messages: []Message{UserText("重来")}}))); diff != "" {
		t.Errorf("a second run_start of the current run 4 changed its state: %s", diff)
	}
	jumped := reduce(mid, RunStartEvent{RunID: 5, Messages: []Message{UserText("第五轮")}})
	if diff := ch09StateDiff(ch09Summary{RunID: 5, Running: true, Messages: []string{"user:第五轮"}}, ch09Summarise(jumped)); diff != "" {
		t.Errorf("run_start#5 over a run 4 still streaming with call c3 pending: %s", diff)
	}
	if jumped.SystemPrompt != "你是助手。" || len(jumped.Tools) != 1 || !slices.Equal(jumped.SubscriberErrors, []string{"旧的"}) {
		t.Errorf("run_start#5 changed what it does not set: prompt %q, tools %v, subscriber errors %q; want 你是助手。, [wait], [旧的]",
			jumped.SystemPrompt, jumped.Tools, jumped.SubscriberErrors)
	}
	ch09CheckNothingShared(t)
}

// Nothing a new state holds is shared with the event it came from or with the old state: the
// owner of an event may change it afterwards, and an old state may be reduced along another path.
func ch09CheckNothingShared(t *testing.T) {
	t.Helper()
	reduce := func(s AgentState, e AgentEvent) AgentState {
		t.Helper()
		return callLab(t, func() AgentState { return ReduceAgentState(s, e) })
	}
	// Old states whose transcripts have room for the new ones in their own arrays.
	idle := AgentState{RunID: 5, Messages: make([]Message, 1, 8)}
	idle.Messages[0] = UserText("旧的")
	running := AgentState{RunID: 6, Running: true, Messages: make([]Message, 1, 8)}
	running.Messages[0] = UserText("第六轮")

	startA := []Message{UserText("甲"), ch09Answer("甲答")}
	startedA := reduce(idle, RunStartEvent{RunID: 6, Messages: startA})
	startedB := reduce(idle, RunStartEvent{RunID: 6, Messages: []Message{UserText("乙"), ch09Answer("乙答")}})
	startA[0] = UserText("被换掉")
	startA[1].(AssistantMessage).Content[0] = Text("被改掉")
	if got, want := ch09Lines(startedA.Messages), []string{"user:甲", "assistant/stop:甲答"}; !slices.Equal(got, want) {
		t.Errorf("run_start's transcript = %q after the event's messages were changed and the old state was reduced again, want %q: run_start keeps a deep copy in a new array", got, want)
	}
	if got, want := ch09Lines(startedB.Messages), []string{"user:乙", "assistant/stop:乙答"}; !slices.Equal(got, want) {
		t.Errorf("the second run_start's transcript = %q, want %q", got, want)
	}
	if got := ch09Lines(idle.Messages); !slices.Equal(got, []string{"user:旧的"}) {
		t.Errorf("run_start changed the old state's transcript to %q", got)
	}

	answer := ch09Answer("回答")
	answered := reduce(running, RunLoopEvent{RunID: 6, Event: AssistantMessageEvent{Message: answer}})
	answer.Content[0] = Text("被改掉")
	if got, want := ch09Lines(answered.Messages), []string{"user:第六轮", "assistant/stop:回答"}; !slices.Equal(got, want) {
		t.Errorf("after the event's assistant message was changed, the transcript = %q, want %q: appendMessage appends a deep copy", got, want)
	}

	endA := []Message{UserText("甲"), ch09Answer("甲答")}
	dropped := []Message{UserText("没取")}
	endedA := reduce(running, RunEndEvent{RunID: 6, Reason: RunAborted, Messages: endA, Dropped: dropped})
	endedB := reduce(running, RunEndEvent{RunID: 6, Reason: RunStop, Messages: []Message{UserText("乙"), ch09Answer("乙答")}})
	endA[0] = UserText("被换掉")
	endA[1].(AssistantMessage).Content[0] = Text("被改掉")
	dropped[0].(UserMessage).Content[0] = Text("被改掉")
	dropped[0] = UserText("被换掉")
	if got, want := ch09Lines(endedA.Messages), []string{"user:甲", "assistant/stop:甲答"}; !slices.Equal(got, want) {
		t.Errorf("run_end's transcript = %q after the event's messages were changed and the old state was reduced again, want %q: run_end keeps a deep copy in a new array", got, want)
	}
	if got, want := ch09Lines(endedA.Dropped), []string{"user:没取"}; !slices.Equal(got, want) {
		t.Errorf("run_end's Dropped = %q after the event's Dropped was changed, want %q: Dropped is deep-copied", got, want)
	}
	if got, want := ch09Lines(endedB.Messages), []string{"user:乙", "assistant/stop:乙答"}; !slices.Equal(got, want) {
		t.Errorf("the second run_end's transcript = %q, want %q", got, want)
	}
	if got := ch09Lines(running.Messages); !slices.Equal(got, []string{"user:第六轮"}) {
		t.Errorf("run_end changed the old state's transcript to %q", got)
	}
}

func TestLab9_1_状态与纯归约_DeepCopy(t *testing.T) {
	streaming := ch09Answer("写到一半")
	s := AgentState{
		Tools:            []ToolDefinition{{Name: "wait"}},
		Messages:         []Message{UserText("你好"), ch09Answer("好的")},
		RunID:            3,
		Running:          true,
		Streaming:        &streaming,
		PendingToolCalls: []ToolCall{ch09Call("c1")},
		Dropped:          []Message{UserText("插话"), UserText("再说")},
		SubscriberErrors: []string{"旧的"},
	}
	want := ch09Summarise(s)
	c := callLab(t, s.Clone)

	c.Messages[0] = UserText("被换掉")
	if got := ch09Lines(s.Messages); got[0] != "user:你好" {
		t.Fatalf("replacing a message in the copy replaced it in the original: the copy shares the transcript's array")
	}
	c.Messages[1].(AssistantMessage).Content[0] = Text("被改掉")
	if got := ch09Lines(s.Messages); got[1] != "assistant/stop:好的" {
		t.Fatalf("changing a content block of a copied message changed the original: messages must be copied deeply")
	}
	c.Streaming.Content[0] = Text("被改掉")
	c.Streaming.StopReason = StopReasonError
	if diff := ch09StateDiff(want, ch09Summarise(s)); diff != "" {
		t.Fatalf("changing the copy's streaming message changed the original: %s", diff)
	}
	c.Dropped[0] = UserText("被换掉")
	if got := ch09Lines(s.Dropped); !slices.Equal(got, []string{"user:插话", "user:再说"}) {
		t.Fatalf("replacing a dropped message in the copy made the original's Dropped %q: Dropped must be copied too", got)
	}
	c.Dropped[1].(UserMessage).Content[0] = Text("被改掉")
	if got := ch09Lines(s.Dropped); !slices.Equal(got, []string{"user:插话", "user:再说"}) {
		t.Fatalf("changing a content block of a dropped message in the copy made the original's Dropped %q: Dropped must be copied deeply (CloneMessages)", got)
	}
	c.PendingToolCalls[0].ID = "x"
	c.Tools[0].Name = "x"
	c.SubscriberErrors[0] = "x"
	if s.PendingToolCalls[0].ID != "c1" || s.Tools[0].Name != "wait" || s.SubscriberErrors[0] != "旧的" {
		t.Fatalf("changing the copy's pending calls, tools or subscriber errors changed the original: %v %v %v",
			s.PendingToolCalls, s.Tools, s.SubscriberErrors)
	}

	// Agent.State is such a copy.
	a := ch09NewAgent(t, AgentOptions{
		SystemPrompt: "你是助手。",
		Model:        NewScriptedModel(),
		Messages:     []Message{UserText("你好"), ch09Answer("好的")},
	})
	first := callLab(t, a.State)
	first.Messages[1].(AssistantMessage).Content[0] = Text("被改掉")
	first.Messages = append(first.Messages[:1], UserText("多出来"))
	second := callLab(t, a.State)
	if diff := cmp.Diff([]string{"user:你好", "assistant/stop:好的"}, ch09Lines(second.Messages)); diff != "" {
		t.Errorf("changing what State returned changed the agent's transcript (-want +got):\n%s", diff)
	}
	if second.SystemPrompt != "你是助手。" || second.Running || second.RunID != 0 {
		t.Errorf("a new agent's state = prompt %q, running %v, run %d; want 你是助手。, false, 0", second.SystemPrompt, second.Running, second.RunID)
	}
}

// --- Lab 9.2 steering and follow-up in the loop ----------------------------------------------

// ch09Polls counts how often a hook was polled and serves messages from a queue.
type ch09Polls struct {
	mu    sync.Mutex
	polls int
	queue messageQueue
}

func (p *ch09Polls) push(m Message) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queue.items = append(p.queue.items, m)
}

func (p *ch09Polls) poll() []Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.polls++
	return p.queue.take()
}

func (p *ch09Polls) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.polls
}

// ch09LoopLog records a run's loop events as short strings (ch09LoopKind), without the
// model's stream events. hook, when set, is called after the event was recorded.
type ch09LoopLog struct {
	hook func(LoopEvent)

	mu     sync.Mutex
	events []string
}

func (l *ch09LoopLog) on(e LoopEvent) {
	if _, ok := e.(ModelEvent); !ok {
		l.mu.Lock()
		l.events = append(l.events, ch09LoopKind(e))
		l.mu.Unlock()
	}
	if l.hook != nil {
		l.hook(e)
	}
}

func (l *ch09LoopLog) withPrefix(prefix string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []string{}
	for _, k := range l.events {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

func TestLab9_2_转向与后续_SteeringBeforeFirstRequest(t *testing.T) {
	defer goleak.VerifyNone(t)
	model := NewScriptedModel(ch09Answer("两件都记下了"))
	steering := &ch09Polls{}
	steering.push(UserText("先看这个")) // queued before the run starts
	log := &ch09LoopLog{}
	var res AgentRunResult
	runLab(t, func() {
		var err error
		res, err = RunAgentLoop(t.Context(), AgentLoopOptions{
			Context:  AgentContext{Messages: []Message{UserText("开始")}},
			Model:    model,
			OnEvent:  log.on,
			Steering: steering.poll,
		})
		if err != nil {
			t.Fatalf("RunAgentLoop: %v", err)
		}
	})
	requests := ch09RequestLines(model)
	if got, want := ch09At(requests, 0), []string{"user:开始", "user:先看这个"}; !slices.Equal(got, want) {
		t.Fatalf("first request = %q, want %q: steering is polled before the first request, so a message queued before the run starts is in it", got, want)
	}
	if got, want := log.withPrefix(""), []string{"queued_message:user:先看这个", "assistant_message:stop", "turn_end:stop/1"}; !slices.Equal(got, want) {
		t.Errorf("events = %q, want %q: every message taken from a hook is reported by a queued_message event, before the request that holds it", got, want)
	}
	if got, want := ch09Lines(res.Messages), []string{"user:开始", "user:先看这个", "assistant/stop:两件都记下了"}; !slices.Equal(got, want) {
		t.Errorf("transcript = %q, want %q", got, want)
	}
	if res.Reason != RunStop || res.Steps != 1 {
		t.Errorf("result = %s/%d, want stop/1", res.Reason, res.Steps)
	}
	if got := steering.count(); got != 2 {
		t.Errorf("steering polls = %d, want 2 (before the first request, and at the stop)", got)
	}

	// A hook that returns an empty slice (not nil) gave nothing: the run stops after one request.
	model = NewScriptedModel(ch09Answer("好了"))
	runLab(t, func() {
		var err error
		res, err = RunAgentLoop(t.Context(), AgentLoopOptions{
			Context:  AgentContext{Messages: []Message{UserText("开始")}},
			Model:    model,
			Steering: func() []Message { return []Message{} },
		})
		if err != nil {
			t.Fatalf("RunAgentLoop: %v", err)
		}
	})
	if got := len(ch09RequestLines(model)); res.Reason != RunStop || res.Steps != 1 || got != 1 {
		t.Errorf("with a Steering hook that returns an empty slice: result %s/%d after %d requests, want stop/1 after 1: takeSteering reports whether a message was appended, not whether the hook returned a slice", res.Reason, res.Steps, got)
	}
}

func TestLab9_2_转向与后续_SteeringAfterBatch(t *testing.T) {
	defer goleak.VerifyNone(t)
	model := NewScriptedModel(ch09ToolUse(ch09Call("c1"), ch09Call("c2")), ch09Answer("查完了"), ch09Answer("补充也看到了"), ch09Answer("总结好了"))
	steering := &ch09Polls{queue: messageQueue{mode: QueueAll}}
	followUp := &ch09Polls{}
	followUp.push(UserText("最后总结一下")) // waits for the first stop at which steering has nothing
	var mu sync.Mutex
	var executed []string
	log := &ch09LoopLog{hook: func(e LoopEvent) {
		// The user adds a remark while the model gives its first final answer.
		if m, ok := e.(AssistantMessageEvent); ok && TextOf(m.Message.Content) == "查完了" {
			steering.push(UserText("补充"))
		}
	}}
	var res AgentRunResult
	runLab(t, func() {
		var err error
		res, err = RunAgentLoop(t.Context(), AgentLoopOptions{
			Context: AgentContext{Messages: []Message{UserText("查两样东西")}},
			Model:   model,
			ExecuteToolCall: func(ctx context.Context, call ToolCall, exec ToolExecContext) (ToolResultMessage, error) {
				if call.ID == "c1" {
					steering.push(UserText("顺便看看第三样")) // steering arrives while the batch runs
				}
				mu.Lock()
				executed = append(executed, call.ID)
				mu.Unlock()
				return ToolResultMessage{Content: []ContentBlock{Text("ok")}}, nil
			},
			OnEvent:  log.on,
			Steering: steering.poll,
			FollowUp: followUp.poll,
		})
		if err != nil {
			t.Fatalf("RunAgentLoop: %v", err)
		}
	})
	requests := ch09RequestLines(model)
	batch := []string{"user:查两样东西", "assistant/toolUse:[c1 c2]", "toolResult:c1", "toolResult:c2", "user:顺便看看第三样"}
	if got := ch09At(requests, 1); !slices.Equal(got, batch) {
		t.Fatalf("second request = %q, want %q: a steering message that arrives while the batch runs follows every result of the batch", got, batch)
	}
	mu.Lock()
	sort.Strings(executed)
	if !slices.Equal(executed, []string{"c1", "c2"}) {
		t.Errorf("executed calls = %v, want [c1 c2]: steering never skips a call of the current batch", executed)
	}
	mu.Unlock()
	if got, want := ch09At(requests, 2), ch09Plus(batch, "assistant/stop:查完了", "user:补充"); !slices.Equal(got, want) {
		t.Fatalf("third request = %q, want %q: at a stop, steering is taken first (the follow-up waits) and the run goes on", got, want)
	}
	wantFinal := ch09Plus(batch, "assistant/stop:查完了", "user:补充", "assistant/stop:补充也看到了", "user:最后总结一下", "assistant/stop:总结好了")
	if got := ch09Lines(res.Messages); !slices.Equal(got, wantFinal) {
		t.Errorf("transcript = %q, want %q", got, wantFinal)
	}
	if res.Reason != RunStop || res.Steps != 4 {
		t.Errorf("result = %s/%d, want stop/4", res.Reason, res.Steps)
	}
	if got, want := log.withPrefix("queued_message"), []string{"queued_message:user:顺便看看第三样", "queued_message:user:补充", "queued_message:user:最后总结一下"}; !slices.Equal(got, want) {
		t.Errorf("queued_message events = %q, want %q: one for every message taken from a hook", got, want)
	}
	if got := steering.count(); got != 5 {
		t.Errorf("steering polls = %d, want 5 (before the first request, after the batch, and at each of the three stops)", got)
	}
	if got := followUp.count(); got != 2 {
		t.Errorf("follow-up polls = %d, want 2 (only at the stops where steering had nothing)", got)
	}
}

// ch09Placed says where each user message with one of texts sits in a transcript: "然后一 after
// assistant/stop:一", "然后二 never".
func ch09Placed(transcript []Message, texts ...string) string {
	lines := ch09Lines(transcript)
	var out []string
	for _, text := range texts {
		switch i := slices.Index(lines, "user:"+text); {
		case i < 0:
			out = append(out, text+" never")
		case i == 0:
			out = append(out, text+" first")
		default:
			out = append(out, text+" after "+lines[i-1])
		}
	}
	return strings.Join(out, ", ")
}

func TestLab9_2_转向与后续_FollowUpOnlyAtStop(t *testing.T) {
	defer goleak.VerifyNone(t)
	run := func(mode QueueMode, script ...AssistantMessage) (AgentRunResult, int) {
		t.Helper()
		followUp := &ch09Polls{queue: messageQueue{mode: mode}}
		followUp.push(UserText("然后一"))
		followUp.push(UserText("然后二"))
		var res AgentRunResult
		runLab(t, func() {
			var err error
			res, err = RunAgentLoop(t.Context(), AgentLoopOptions{
				Context: AgentContext{Messages: []Message{UserText("开始")}},
				Model:   NewScriptedModel(script...),
				ExecuteToolCall: func(context.Context, ToolCall, ToolExecContext) (ToolResultMessage, error) {
					return ToolResultMessage{Content: []ContentBlock{Text("ok")}}, nil
				},
				FollowUp: followUp.poll,
			})
			if err != nil {
				t.Fatalf("RunAgentLoop: %v", err)
			}
		})
		return res, followUp.count()
	}

	res, polls := run(QueueOneAtATime, ch09ToolUse(ch09Call("c1")), ch09Answer("一"), ch09Answer("二"), ch09Answer("三"))
	if got, want := ch09Placed(res.Messages, "然后一", "然后二"), "然后一 after assistant/stop:一, 然后二 after assistant/stop:二"; got != want {
		t.Errorf("one-at-a-time: follow-ups placed %s; want %s (taken only when the model answered without tools, the oldest first, one per stop)", got, want)
	}
	if polls != 3 {
		t.Errorf("one-at-a-time: follow-up polls = %d, want 3 (once at each stop, never after a tool batch)", polls)
	}
	want := []string{"user:开始", "assistant/toolUse:[c1]", "toolResult:c1", "assistant/stop:一", "user:然后一", "assistant/stop:二", "user:然后二", "assistant/stop:三"}
	if got := ch09Lines(res.Messages); !slices.Equal(got, want) {
		t.Errorf("one-at-a-time: transcript = %q, want %q", got, want)
	}
	if res.Reason != RunStop || res.Steps != 4 {
		t.Errorf("one-at-a-time: result = %s/%d, want stop/4", res.Reason, res.Steps)
	}

	res, polls = run(QueueAll, ch09Answer("一"), ch09Answer("二"))
	if got, want := ch09Placed(res.Messages, "然后一", "然后二"), "然后一 after assistant/stop:一, 然后二 after user:然后一"; got != want {
		t.Errorf("all: follow-ups placed %s; want %s (both taken at the first stop, in order)", got, want)
	}
	want = []string{"user:开始", "assistant/stop:一", "user:然后一", "user:然后二", "assistant/stop:二"}
	if got := ch09Lines(res.Messages); !slices.Equal(got, want) {
		t.Errorf("all: transcript = %q, want %q", got, want)
	}
	if polls != 2 || res.Reason != RunStop || res.Steps != 2 {
		t.Errorf("all: follow-up polls = %d, result = %s/%d; want 2, stop/2", polls, res.Reason, res.Steps)
	}

	// The empty mode is QueueOneAtATime (AgentOptions), and what a poll took has left the
	// queue: a message queued afterwards changes nothing of it.
	for _, mode := range []QueueMode{"", QueueOneAtATime, QueueAll} {
		q := &ch09Polls{queue: messageQueue{mode: mode}}
		q.push(UserText("甲"))
		q.push(UserText("乙"))
		want := []string{"user:甲"}
		if mode == QueueAll {
			want = []string{"user:甲", "user:乙"}
		}
		var taken []Message
		runLab(t, func() { taken = q.poll() })
		q.push(UserText("丙"))
		q.push(UserText("丁"))
		if got := ch09Lines(taken); !slices.Equal(got, want) {
			t.Errorf("mode %q: a poll of [甲 乙] took %q once 丙 and 丁 were queued after it, want %q (empty means QueueOneAtATime; what is taken leaves the queue)", mode, got, want)
		}
	}
}

// --- Lab 9.3 run lifecycle -------------------------------------------------------------------

func TestLab9_3_运行周期_PromptAndRunIDs(t *testing.T) {
	defer goleak.VerifyNone(t)
	started, release := make(chan struct{}), make(chan struct{})
	model := &ch09Model{respond: func(ctx context.Context, n int) *AssistantStream {
		if n == 0 {
			return ch09Held(ctx, "嗯", ch09Signal(started), release, ch09Answer("你好"))
		}
		return ch09Reply(ch09Answer("再见"))
	}}
	a := ch09NewAgent(t, AgentOptions{Model: model})
	rec := &ch09Recorder{}
	a.Subscribe(rec.on)

	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("嗨")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	<-started
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("插队")); !errors.Is(err, ErrAgentBusy) {
			t.Fatalf("a second Prompt while run 1 is active returned %v, want ErrAgentBusy", err)
		}
		if err := a.Continue(t.Context()); !errors.Is(err, ErrAgentBusy) {
			t.Fatalf("Continue while run 1 is active returned %v, want ErrAgentBusy", err)
		}
		if err := a.Reset(); !errors.Is(err, ErrAgentBusy) {
			t.Fatalf("Reset while run 1 is active returned %v, want ErrAgentBusy", err)
		}
	})
	if st := a.State(); !st.Running || st.RunID != 1 {
		t.Errorf("while run 1 is active: running %v, run %d; want true, 1", st.Running, st.RunID)
	}
	close(release)
	st := ch09Settle(t, a)
	if diff := cmp.Diff([]string{"user:嗨", "assistant/stop:你好"}, ch09Lines(st.Messages)); diff != "" {
		t.Errorf("transcript after run 1 (-want +got):\n%s", diff)
	}
	want := []string{"run_start#1", "assistant_message:stop#1", "turn_end:stop/1#1", "run_end:stop#1"}
	if diff := cmp.Diff(want, rec.runKinds()); diff != "" {
		t.Errorf("events of run 1, every one with its run id, run_end last (-want +got):\n%s", diff)
	}

	runLab(t, func() {
		if err := a.Continue(t.Context()); !errors.Is(err, ErrNothingToContinue) {
			t.Fatalf("Continue after an answer returned %v, want ErrNothingToContinue", err)
		}
		if err := a.Prompt(t.Context(), UserText("再问")); err != nil {
			t.Fatalf("Prompt after run 1: %v", err)
		}
	})
	st = ch09Settle(t, a)
	want = append(want, "run_start#2", "assistant_message:stop#2", "turn_end:stop/1#2", "run_end:stop#2")
	if diff := cmp.Diff(want, rec.runKinds()); diff != "" {
		t.Errorf("events of runs 1 and 2 (-want +got):\n%s", diff)
	}
	if st.RunID != 2 || st.Running || len(st.Messages) != 4 {
		t.Errorf("after run 2: run %d, running %v, %d messages; want 2, false, 4", st.RunID, st.Running, len(st.Messages))
	}

	runLab(t, func() {
		if err := a.Reset(); err != nil {
			t.Fatalf("Reset when idle: %v", err)
		}
		if err := a.Continue(t.Context()); !errors.Is(err, ErrNothingToContinue) {
			t.Fatalf("Continue after Reset returned %v, want ErrNothingToContinue", err)
		}
	})
	if st := a.State(); len(st.Messages) != 0 || st.RunID != 2 {
		t.Errorf("after Reset: %d messages, run %d; want 0 and 2 (run ids are never reused)", len(st.Messages), st.RunID)
	}

	// Continue answers a transcript that ends with a user message, or with a tool result.
	b := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("好")), Messages: []Message{UserText("继续这个")}})
	runLab(t, func() {
		if err := b.Continue(t.Context()); err != nil {
			t.Fatalf("Continue from a transcript that ends with a user message returned %v, want nil", err)
		}
	})
	if got, want := ch09Lines(ch09Settle(t, b).Messages), []string{"user:继续这个", "assistant/stop:好"}; !slices.Equal(got, want) {
		t.Errorf("transcript after Continue = %q, want %q", got, want)
	}
	result := ToolResultMessage{ToolCallID: "c1", ToolName: "wait", Content: []ContentBlock{Text("完成")}}
	c := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("结果看到了")),
		Messages: []Message{UserText("查一下"), ch09ToolUse(ch09Call("c1")), result}})
	runLab(t, func() {
		if err := c.Continue(t.Context()); err != nil {
			t.Fatalf("Continue from a transcript that ends with a tool result returned %v, want nil: the model has not answered that result yet", err)
		}
	})
	if got, want := ch09Lines(ch09Settle(t, c).Messages), []string{"user:查一下", "assistant/toolUse:[c1]", "toolResult:c1", "assistant/stop:结果看到了"}; !slices.Equal(got, want) {
		t.Errorf("transcript after Continue from a tool result = %q, want %q", got, want)
	}

	// A second Prompt at the first moment the first one releases the agent's lock (the test
	// gives the agent a lock that reports every release, see Agent.mu): one run starts, the
	// other Prompt returns ErrAgentBusy.
	d := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("一"), ch09Answer("二"))})
	errNotCalled := errors.New("not called")
	second, armed := errNotCalled, true
	d.mu = &ch09ReleaseLock{afterRelease: func() {
		if armed { // only the test's goroutine runs until the first release
			armed = false
			second = ch09Try(func() error { return d.Prompt(t.Context(), UserText("同时")) })
		}
	}}
	var first error
	runLab(t, func() { first = d.Prompt(t.Context(), UserText("先")) })
	last := ch09Settle(t, d)
	ch09PendingErr(t, second)
	if first != nil || !errors.Is(second, ErrAgentBusy) || last.RunID != 1 {
		t.Errorf("a Prompt at the first release of the lock by another Prompt returned %v, the other %v, and the last run is %d; want ErrAgentBusy, nil and 1: checking that no run is active and starting one happen in one hold of the lock", second, first, last.RunID)
	}
}

// ch09GatedTool returns an executor whose calls report their id on started and wait for the
// gate of their id (result "完成") or for ctx (result "已取消", an error).
func ch09GatedTool(started chan<- string, gates map[string]chan struct{}) ToolExecutor {
	return func(ctx context.Context, call ToolCall, exec ToolExecContext) (ToolResultMessage, error) {
		started <- call.ID
		select {
		case <-gates[call.ID]:
			return ToolResultMessage{Content: []ContentBlock{Text("完成")}}, nil
		case <-ctx.Done():
			return ToolResultMessage{Content: []ContentBlock{Text("已取消")}, IsError: true}, nil
		}
	}
}

// ch09StateCheck is a subscriber that, at every assistant_message, compares State() with what
// the model was really sent: the state is reduced before an event is delivered, so inside a
// subscriber State().Messages already begins with the request that produced the answer,
// followed by the answer. It keeps the first disagreement.
type ch09StateCheck struct {
	a        *Agent
	requests func() [][]string

	mu       sync.Mutex
	mismatch string
}

func (c *ch09StateCheck) on(e AgentEvent) {
	le, ok := e.(RunLoopEvent)
	if !ok {
		return
	}
	am, ok := le.Event.(AssistantMessageEvent)
	if !ok {
		return
	}
	got := ch09Lines(c.a.State().Messages)
	requests := c.requests()
	if len(requests) == 0 {
		return
	}
	want := ch09Plus(requests[len(requests)-1], ch09Line(am.Message))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mismatch == "" && (len(got) < len(want) || !slices.Equal(got[:len(want)], want)) {
		c.mismatch = fmt.Sprintf("State() inside %s has the transcript %q, want it to begin with %q (the request the model answered, then its answer)", ch09Kind(e), got, want)
	}
}

func (c *ch09StateCheck) first() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mismatch
}

func TestLab9_3_运行周期_SteerAndFollowUp(t *testing.T) {
	defer goleak.VerifyNone(t)
	model := NewScriptedModel(ch09ToolUse(ch09Call("c1")), ch09Answer("一"), ch09Answer("二"), ch09ToolUse(ch09Call("c2")), ch09Answer("三"))
	started := make(chan string, 1)
	gates := map[string]chan struct{}{"c1": make(chan struct{}), "c2": make(chan struct{})}
	a := ch09NewAgent(t, AgentOptions{Model: model, ExecuteToolCall: ch09GatedTool(started, gates)})
	var mu sync.Mutex
	var earlyErr error
	lateErrs := map[int]error{}
	secondPrompt := UserText("第二轮")
	rec := &ch09Recorder{hook: func(e AgentEvent) {
		switch e := e.(type) {
		case RunStartEvent:
			if e.RunID == 2 {
				secondPrompt.Content[0] = Text("被改掉") // Prompt copied what it took
			}
			if e.RunID == 1 {
				m := UserText("先说一句")
				err := a.Steer(m)          // before the run's first request
				m.Content[0] = Text("被改掉") // the caller's message is its own again once Steer returned
				mu.Lock()
				earlyErr = err
				mu.Unlock()
			}
		case RunLoopEvent:
			if e.Event.EventType() == "turn_end" {
				err := a.Steer(UserText("太晚了")) // the run has decided to stop
				mu.Lock()
				lateErrs[e.RunID] = err
				mu.Unlock()
			}
		}
	}}
	a.Subscribe(rec.on)
	check := &ch09StateCheck{a: a, requests: func() [][]string { return ch09RequestLines(model) }}
	a.Subscribe(check.on)

	runLab(t, func() {
		if err := a.Steer(UserText("没人听")); !errors.Is(err, ErrAgentIdle) {
			t.Fatalf("Steer with no run returned %v, want ErrAgentIdle", err)
		}
		if err := a.FollowUp(UserText("没人听")); !errors.Is(err, ErrAgentIdle) {
			t.Fatalf("FollowUp with no run returned %v, want ErrAgentIdle", err)
		}
		if err := a.Prompt(t.Context(), UserText("开始")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	<-started
	runLab(t, func() {
		if err := a.Steer(UserText("转向")); err != nil {
			t.Fatalf("Steer during a tool: %v", err)
		}
		if err := a.FollowUp(UserText("然后")); err != nil {
			t.Fatalf("FollowUp during a tool: %v", err)
		}
	})
	close(gates["c1"])
	st := ch09Settle(t, a)
	mu.Lock()
	early, late1 := earlyErr, lateErrs[1]
	mu.Unlock()
	if early != nil {
		t.Fatalf("Steer inside run_start#1 returned %v, want nil: a run that has started takes steering", early)
	}
	if mismatch := check.first(); mismatch != "" {
		t.Fatal(mismatch)
	}
	requests := ch09RequestLines(model)
	if got, want := ch09At(requests, 0), []string{"user:开始", "user:先说一句"}; !slices.Equal(got, want) {
		t.Fatalf("first request = %q, want %q: a steering message queued at run_start is in the run's first request", got, want)
	}
	if got, want := ch09At(requests, 1), []string{"user:开始", "user:先说一句", "assistant/toolUse:[c1]", "toolResult:c1", "user:转向"}; !slices.Equal(got, want) {
		t.Errorf("second request = %q, want %q: the steering message follows the tool's result", got, want)
	}
	run1 := []string{"user:开始", "user:先说一句", "assistant/toolUse:[c1]", "toolResult:c1", "user:转向", "assistant/stop:一", "user:然后", "assistant/stop:二"}
	if got := ch09Lines(st.Messages); !slices.Equal(got, run1) {
		t.Errorf("transcript after run 1 = %q, want %q: the follow-up follows the first answer", got, run1)
	}
	if !errors.Is(late1, ErrAgentIdle) {
		t.Errorf("Steer after run 1 decided to stop (at its turn_end) returned %v, want ErrAgentIdle: nothing would take the message", late1)
	}
	runLab(t, func() {
		if err := a.FollowUp(UserText("结束以后")); !errors.Is(err, ErrAgentIdle) {
			t.Errorf("FollowUp after the run returned %v, want ErrAgentIdle", err)
		}
	})

	// A second run takes steering again. A subscriber changes the caller's prompt message at
	// run_start#2: the run took a copy.
	runLab(t, func() {
		if err := a.Prompt(t.Context(), secondPrompt); err != nil {
			t.Fatalf("Prompt for run 2: %v", err)
		}
	})
	<-started
	// The run's final poll (takeFollowUp, called here while the run waits for its tool) takes
	// steering first, alone; then a follow-up; a poll that took something leaves the queues open.
	runLab(t, func() {
		if err := a.Steer(UserText("甲")); err != nil {
			t.Fatalf("Steer during a tool of run 2: %v", err)
		}
		if err := a.FollowUp(UserText("乙")); err != nil {
			t.Fatalf("FollowUp during a tool of run 2: %v", err)
		}
		if got, want := ch09Lines(a.takeFollowUp()), []string{"user:甲"}; !slices.Equal(got, want) {
			t.Errorf("with steering 甲 and follow-up 乙 queued, the final poll took %q, want %q (the steering queue or, when it is empty, the follow-up queue)", got, want)
		}
		if got, want := ch09Lines(a.takeFollowUp()), []string{"user:乙"}; !slices.Equal(got, want) {
			t.Errorf("with follow-up 乙 queued, the next final poll took %q, want %q", got, want)
		}
		if err := a.Steer(UserText("丙")); err != nil {
			t.Errorf("Steer after a final poll that took a follow-up returned %v, want nil: the run goes on, so it still takes messages", err)
		}
		if got, want := ch09Lines(a.takeFollowUp()), []string{"user:丙"}; !slices.Equal(got, want) {
			t.Errorf("with steering 丙 queued, the final poll took %q, want %q", got, want)
		}
	})
	runLab(t, func() {
		if err := a.Steer(UserText("再转向")); err != nil {
			t.Errorf("Steer during a tool of run 2 returned %v, want nil: every new run takes steering again", err)
		}
	})
	close(gates["c2"])
	st = ch09Settle(t, a)
	want := ch09Plus(run1, "user:第二轮", "assistant/toolUse:[c2]", "toolResult:c2", "user:再转向", "assistant/stop:三")
	if got := ch09Lines(st.Messages); !slices.Equal(got, want) {
		t.Errorf("transcript after run 2 = %q, want %q", got, want)
	}
	mu.Lock()
	late2 := lateErrs[2]
	mu.Unlock()
	if !errors.Is(late2, ErrAgentIdle) {
		t.Errorf("Steer after run 2 decided to stop (at its turn_end) returned %v, want ErrAgentIdle", late2)
	}
}

func TestLab9_3_运行周期_WaitForIdleWaitsForSubscribers(t *testing.T) {
	ch09Bubble(t, func(t *testing.T) {
		a := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("好"))})
		entered, release := make(chan struct{}), make(chan struct{})
		a.Subscribe(func(e AgentEvent) {
			if _, ok := e.(RunEndEvent); ok {
				close(entered)
				<-release // still handling run_end
			}
		})
		runLab(t, func() {
			if err := a.Prompt(t.Context(), UserText("你好")); err != nil {
				t.Fatalf("Prompt: %v", err)
			}
		})
		<-entered
		waited := ch09Go(func() error { return a.WaitForIdle(context.Background()) })
		synctest.Wait() // every other goroutine is blocked now: WaitForIdle too, unless it returned
		select {
		case err := <-waited:
			close(release)
			ch09PendingErr(t, err)
			t.Fatalf("WaitForIdle returned (%v) while a subscriber was still handling run_end: it waits until every event has reached every subscriber", err)
		default:
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		cancelled := ch09Go(func() error { return a.WaitForIdle(ctx) })
		synctest.Wait()
		select {
		case err := <-cancelled:
			if !errors.Is(err, context.Canceled) {
				close(release)
				ch09PendingErr(t, err)
				t.Fatalf("WaitForIdle with a cancelled ctx, while a subscriber was still handling run_end, returned %v, want context.Canceled", err)
			}
		default:
			close(release)
			t.Fatalf("WaitForIdle with a cancelled ctx did not return while a subscriber was still handling run_end: it returns ctx's error when ctx ends")
		}
		close(release)
		if err := <-waited; err != nil {
			ch09PendingErr(t, err)
			t.Fatalf("WaitForIdle after the subscriber returned: %v, want nil", err)
		}
		if st := a.State(); st.Running || st.RunID != 1 {
			t.Errorf("after WaitForIdle: running %v, run %d; want false, 1", st.Running, st.RunID)
		}

		// run_start reaches the subscribers before the run's goroutine starts: a subscriber
		// that lets every other goroutine go as far as it can and then steers is still in time
		// for the first request.
		model := NewScriptedModel(ch09Answer("好"))
		b := ch09NewAgent(t, AgentOptions{Model: model})
		var steerErr error
		b.Subscribe(func(e AgentEvent) {
			if _, ok := e.(RunStartEvent); ok {
				synctest.Wait()
				steerErr = ch09Try(func() error { return b.Steer(UserText("先说一句")) })
			}
		})
		runLab(t, func() {
			if err := b.Prompt(t.Context(), UserText("你好")); err != nil {
				t.Fatalf("Prompt: %v", err)
			}
		})
		ch09Settle(t, b)
		ch09PendingErr(t, steerErr)
		if got, want := ch09At(ch09RequestLines(model), 0), []string{"user:你好", "user:先说一句"}; steerErr != nil || !slices.Equal(got, want) {
			t.Errorf("a subscriber that let every other goroutine run inside run_start, then steered: Steer returned %v and the first request is %q, want nil and %q: deliver run_start before the run's goroutine starts", steerErr, got, want)
		}
	})
}

// ch09ReleaseLock replaces an agent's lock (Agent.mu is a sync.Locker for this): a sync.Mutex
// that calls afterRelease, on the releasing goroutine, each time it is released. The agent
// holds no lock while afterRelease runs, so afterRelease may call the agent.
type ch09ReleaseLock struct {
	sync.Mutex
	afterRelease func()
}

func (l *ch09ReleaseLock) Unlock() {
	l.Mutex.Unlock()
	l.afterRelease()
}

// ch09PauseAt is a lock for a probe: the releasing goroutine calls pause at the at-th release
// counted once the probe is armed (Arm), and only there.
type ch09PauseAt struct {
	ch09ReleaseLock
	mu       sync.Mutex
	armed    bool
	released int
	fired    bool
}

// newCh09PauseAt returns a ch09PauseAt that pauses at release at, armed from the start when
// armed is true.
func newCh09PauseAt(at int, armed bool, pause func()) *ch09PauseAt {
	l := &ch09PauseAt{armed: armed}
	l.afterRelease = func() {
		l.mu.Lock()
		if !l.armed || l.released >= at {
			l.mu.Unlock()
			return
		}
		l.released++
		fire := l.released == at
		l.fired = l.fired || fire
		l.mu.Unlock()
		if fire {
			pause()
		}
	}
	return l
}

// Arm starts counting releases.
func (l *ch09PauseAt) Arm() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = true
}

// Fired reports whether the at-th release came.
func (l *ch09PauseAt) Fired() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fired
}

// ch09Probe steers once, at the at-th release of the agent's lock after the answer "一" was
// delivered. From that answer on, the run decides whether it stops, and each release of the
// lock is a moment at which a Steer can slip in; the test tries them all, one per run.
type ch09Probe struct {
	a  *Agent
	at int

	mu       sync.Mutex
	armed    bool
	released int
	fired    bool
	err      error
	last     string // the last event delivered so far
	after    string // the last event delivered before the probe
}

func (p *ch09Probe) afterRelease() {
	p.mu.Lock()
	if !p.armed || p.fired {
		p.mu.Unlock()
		return
	}
	p.released++
	if p.released < p.at {
		p.mu.Unlock()
		return
	}
	p.fired, p.after = true, p.last
	p.mu.Unlock()
	err := ch09Try(func() error { return p.a.Steer(UserText("插话")) })
	p.mu.Lock()
	p.err = err
	p.mu.Unlock()
}

func (p *ch09Probe) on(e AgentEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = ch09Kind(e)
	switch e := e.(type) {
	case RunLoopEvent:
		if am, ok := e.Event.(AssistantMessageEvent); ok && TextOf(am.Message.Content) == "一" {
			p.armed = true
		}
	case RunEndEvent:
		p.armed = false
	}
}

// ch09ProbeResult is one run of ch09ProbeStop.
type ch09ProbeResult struct {
	fired      bool   // a release number at came, and Steer was called
	err        error  // what Steer returned
	after      string // the last event delivered before Steer
	reason     RunReason
	transcript []string
	dropped    []string
}

// ch09ProbeStop runs "问" → "一" on a new agent and steers at the at-th release of its lock after
// "一" was delivered.
func ch09ProbeStop(t *testing.T, at int) ch09ProbeResult {
	t.Helper()
	a := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("一"), ch09Answer("收到"))})
	p := &ch09Probe{a: a, at: at}
	a.mu = &ch09ReleaseLock{afterRelease: p.afterRelease}
	ends := make(chan RunEndEvent, 1)
	a.Subscribe(func(e AgentEvent) {
		p.on(e)
		if end, ok := e.(RunEndEvent); ok {
			ends <- end
		}
	})
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("问")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	end := <-ends
	st := ch09Settle(t, a)
	p.mu.Lock()
	defer p.mu.Unlock()
	return ch09ProbeResult{fired: p.fired, err: p.err, after: p.after, reason: end.Reason,
		transcript: ch09Lines(st.Messages), dropped: ch09Lines(end.Dropped)}
}

func TestLab9_3_运行周期_SteerWhileDecidingToStop(t *testing.T) {
	defer goleak.VerifyNone(t)
	var lost []ch09ProbeResult
	moments, refused := 0, 0
	for at := 1; ; at++ {
		if at > 1000 {
			t.Fatal("the agent's lock was released more than 1000 times between the final answer and run_end")
		}
		r := ch09ProbeStop(t, at)
		if !r.fired {
			break // the run was over before the at-th release
		}
		moments++
		switch {
		case r.err == nil && !slices.Contains(r.transcript, "user:插话"):
			lost = append(lost, r)
		case r.err == nil:
			if want := []string{"user:问", "assistant/stop:一", "user:插话", "assistant/stop:收到"}; !slices.Equal(r.transcript, want) || r.reason != RunStop {
				t.Fatalf("Steer accepted right after %s: the run ended %s with the transcript %q, want stop with %q", r.after, r.reason, r.transcript, want)
			}
		case errors.Is(r.err, ErrAgentIdle):
			refused++
			if want := []string{"user:问", "assistant/stop:一"}; !slices.Equal(r.transcript, want) {
				t.Fatalf("Steer refused right after %s, yet the transcript is %q, want %q", r.after, r.transcript, want)
			}
		default:
			ch09PendingErr(t, r.err)
			t.Fatalf("Steer right after %s returned %v, want nil or ErrAgentIdle", r.after, r.err)
		}
	}
	if len(lost) > 0 {
		t.Fatalf("Steer returned nil at %d of the %d moments the agent's lock was released after the final answer (the first right after %s), yet the run ended %s without taking the message (transcript %q, run_end Dropped %q): the final poll must close the queues in the same hold of the lock in which it finds them empty",
			len(lost), moments, lost[0].after, lost[0].reason, lost[0].transcript, lost[0].dropped)
	}
	if refused == 0 {
		t.Fatalf("Steer was accepted at all %d moments the agent's lock was released after the final answer, up to run_end: once the final poll found both queues empty, Steer must return ErrAgentIdle", moments)
	}

	// A Steer from the test's goroutine while the run waits in a subscriber at the final answer:
	// from the first moment Steer releases the agent's lock, the test lets the run go on to its
	// end before Steer returns. A Steer that returns nil has its message taken.
	a := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("一"), ch09Answer("收到"))})
	atAnswer, hold, ended := make(chan struct{}), make(chan struct{}), make(chan struct{})
	release := ch09Signal(hold)
	var mu sync.Mutex
	armed := false
	a.mu = &ch09ReleaseLock{afterRelease: func() {
		mu.Lock()
		fire := armed
		armed = false
		mu.Unlock()
		if fire {
			release()
			<-ended
		}
	}}
	a.Subscribe(func(e AgentEvent) {
		switch e := e.(type) {
		case RunLoopEvent:
			if am, ok := e.Event.(AssistantMessageEvent); ok && TextOf(am.Message.Content) == "一" {
				close(atAnswer)
				<-hold
			}
		case RunEndEvent:
			close(ended)
		}
	})
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("问")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	<-atAnswer
	mu.Lock()
	armed = true
	mu.Unlock()
	err := ch09Try(func() error { return a.Steer(UserText("插话")) })
	release()
	st := ch09Settle(t, a)
	ch09PendingErr(t, err)
	if want := []string{"user:问", "assistant/stop:一", "user:插话", "assistant/stop:收到"}; err != nil || !slices.Equal(ch09Lines(st.Messages), want) {
		t.Errorf("Steer while the run waited at its final answer returned %v, and the run (let go on from Steer's first release of the lock) ended with %q, want nil and %q: deciding that a run can take the message and queueing it happen in one hold of the lock", err, ch09Lines(st.Messages), want)
	}
}

// --- Lab 9.4 failure encoding and abort ------------------------------------------------------

func TestLab9_4_失败与中止_ModelFailure(t *testing.T) {
	defer goleak.VerifyNone(t)
	model := &ch09Model{respond: func(ctx context.Context, n int) *AssistantStream {
		switch n {
		case 0:
			panic("磁盘坏了")
		case 1:
			return nil
		case 2:
			return ch09Reply(AssistantMessage{StopReason: StopReasonError, ErrorMessage: "上游 503"})
		}
		return ch09Reply(ch09Answer("恢复了"))
	}}
	a := ch09NewAgent(t, AgentOptions{Model: model})
	rec := &ch09Recorder{}
	a.Subscribe(rec.on)
	prompt := func(text string) AgentState {
		t.Helper()
		runLab(t, func() {
			if err := a.Prompt(t.Context(), UserText(text)); err != nil {
				t.Fatalf("Prompt(%q) returned %v: model trouble never comes back as an error", text, err)
			}
		})
		return ch09Settle(t, a)
	}

	st := prompt("第一次")
	if st.LastError != "model panicked: 磁盘坏了" {
		t.Fatalf("a model that panics: last error = %q, want %q", st.LastError, "model panicked: 磁盘坏了")
	}
	if diff := cmp.Diff([]string{"user:第一次", "assistant/error!model panicked: 磁盘坏了"}, ch09Lines(st.Messages)); diff != "" {
		t.Fatalf("a model that panics: the failure must become an assistant message with stop reason error (-want +got):\n%s", diff)
	}
	st = prompt("第二次")
	if st.LastError != "model returned no stream" {
		t.Fatalf("a model that returns no stream: last error = %q, want %q", st.LastError, "model returned no stream")
	}
	st = prompt("第三次")
	if st.LastError != "上游 503" {
		t.Fatalf("a model that answers with an error: last error = %q, want %q", st.LastError, "上游 503")
	}
	st = prompt("第四次")
	want := []string{"user:第一次", "assistant/error!model panicked: 磁盘坏了", "user:第二次", "assistant/error!model returned no stream",
		"user:第三次", "assistant/error!上游 503", "user:第四次", "assistant/stop:恢复了"}
	if diff := cmp.Diff(want, ch09Lines(st.Messages)); diff != "" {
		t.Errorf("transcript after four prompts (-want +got):\n%s", diff)
	}
	if st.LastError != "" || st.Running {
		t.Errorf("after a good run: last error %q, running %v; want empty, false", st.LastError, st.Running)
	}
	var ends []string
	for _, k := range rec.kinds() {
		if len(k) > 8 && k[:8] == "run_end:" {
			ends = append(ends, k)
		}
	}
	if diff := cmp.Diff([]string{"run_end:error#1", "run_end:error#2", "run_end:error#3", "run_end:stop#4"}, ends); diff != "" {
		t.Errorf("run_end events (-want +got):\n%s", diff)
	}
	if st.Dropped != nil {
		t.Errorf("after a run that left nothing queued, State().Dropped = %#v, want nil", st.Dropped)
	}
	// The stream failedStream makes ends with one error event, never done.
	var failures []string
	for _, k := range rec.kinds() {
		if strings.HasPrefix(k, "model_event:") && (strings.HasSuffix(k, "#1") || strings.HasSuffix(k, "#2")) {
			failures = append(failures, k)
		}
	}
	if diff := cmp.Diff([]string{"model_event:error#1", "model_event:error#2"}, failures); diff != "" {
		t.Errorf("model events of the panicking model's run and the nil stream's run (-want +got):\n%s\nfailedStream pushes one ErrorEvent", diff)
	}

	// runError: only error and aborted have an error, taken from the transcript's last
	// assistant, which may be followed by tool results.
	tools := ch09ToolUse(ch09Call("c1"))
	failedTools := ch09ToolUse(ch09Call("c1"))
	failedTools.StopReason, failedTools.ErrorMessage = StopReasonError, "流断了"
	older := AssistantMessage{StopReason: StopReasonError, ErrorMessage: "旧的错误"}
	result := ToolResultMessage{ToolCallID: "c1", ToolName: "wait"}
	for _, c := range []struct {
		name   string
		result AgentRunResult
		want   string
	}{
		{"error, the last assistant failed and its calls were skipped", AgentRunResult{Reason: RunError, Messages: []Message{UserText("开始"), failedTools, result}}, "流断了"},
		{"aborted during the tools, an older assistant failed", AgentRunResult{Reason: RunAborted, Messages: []Message{UserText("开始"), older, UserText("再来"), tools, result}}, "run ended: aborted"},
		{"length", AgentRunResult{Reason: RunLength, Messages: []Message{UserText("开始"), AssistantMessage{StopReason: StopReasonLength}}}, ""},
		{"maxSteps", AgentRunResult{Reason: RunMaxSteps, Messages: []Message{UserText("开始"), tools, result}}, ""},
		{"stop after an older failure", AgentRunResult{Reason: RunStop, Messages: []Message{UserText("开始"), older, UserText("再来"), ch09Answer("好了")}}, ""},
	} {
		var got string
		runLab(t, func() { got = runError(c.result) })
		if got != c.want {
			t.Errorf("runError(%s) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestLab9_4_失败与中止_AbortDuringStream(t *testing.T) {
	ch09Bubble(t, ch09AbortDuringStream)
}

// ch09AbortDuringStream runs in a synctest bubble: a run that Abort does not end is reported,
// not waited for.
func ch09AbortDuringStream(t *testing.T) {
	model := &ch09Model{respond: func(ctx context.Context, n int) *AssistantStream {
		if n == 0 {
			return ch09Held(ctx, "正在想", func() {}, nil, AssistantMessage{})
		}
		if n == 1 {
			return ch09Reply(ch09Answer("新的回答"))
		}
		return ch09Reply(ch09Answer("多余的回答"))
	}}
	a := ch09NewAgent(t, AgentOptions{Model: model})
	streaming := make(chan struct{})
	seen := ch09Signal(streaming)
	a.Subscribe(func(e AgentEvent) {
		if le, ok := e.(RunLoopEvent); ok {
			if me, ok := le.Event.(ModelEvent); ok && me.Event.EventType() == "text_delta" {
				seen()
			}
		}
	})
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("问")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	<-streaming
	if st := a.State(); !st.Running || st.Streaming == nil || TextOf(st.Streaming.Content) != "正在想" {
		t.Errorf("during the stream: running %v, streaming %v; want true and the partial text 正在想", st.Running, st.Streaming)
	}
	runLab(t, func() {
		if err := a.Steer(UserText("别管了")); err != nil {
			t.Fatalf("Steer during the stream: %v", err)
		}
		if err := a.FollowUp(UserText("之后")); err != nil {
			t.Fatalf("FollowUp during the stream: %v", err)
		}
		a.Abort()
	})
	synctest.Wait() // everything the run can do without the test has happened
	if st := a.State(); st.Running {
		t.Fatalf("after Abort during the stream the run is still running (last error %q): Abort cancels the context the run runs under", st.LastError)
	}
	st := ch09Settle(t, a)
	if st.LastError != "request aborted" {
		t.Fatalf("after Abort during the stream: last error = %q, want %q (the aborted assistant's message)", st.LastError, "request aborted")
	}
	if diff := cmp.Diff([]string{"user:问", "assistant/aborted!request aborted"}, ch09Lines(st.Messages)); diff != "" {
		t.Errorf("transcript after Abort (-want +got):\n%s", diff)
	}
	if st.Running || st.Streaming != nil {
		t.Errorf("after Abort: running %v, streaming %v; want false, nil", st.Running, st.Streaming)
	}
	if got, want := ch09Lines(st.Dropped), []string{"user:别管了", "user:之后"}; !slices.Equal(got, want) {
		t.Errorf("after Abort: State().Dropped = %q, want %q: what the aborted run accepted and never took is reported, steering first", got, want)
	}
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("重新开始")); err != nil {
			t.Fatalf("Prompt after Abort: %v", err)
		}
	})
	st = ch09Settle(t, a)
	if got := model.requestLines(); len(got) != 2 {
		t.Fatalf("model requests = %q, want 2: the aborted run's queued messages are dropped, never taken by the next run", got)
	}
	if diff := cmp.Diff([]string{"user:问", "assistant/aborted!request aborted", "user:重新开始", "assistant/stop:新的回答"}, ch09Lines(st.Messages)); diff != "" {
		t.Errorf("transcript of the next run (-want +got):\n%s", diff)
	}
	if len(st.Dropped) != 0 {
		t.Errorf("State().Dropped after the next run = %q, want none", ch09Lines(st.Dropped))
	}
}

func TestLab9_4_失败与中止_AbortAtRunStart(t *testing.T) {
	ch09Bubble(t, ch09AbortAtRunStart)
}

// ch09AbortAtRunStart runs in a synctest bubble: an Abort that waits inside the subscriber is
// reported, not waited for.
func ch09AbortAtRunStart(t *testing.T) {
	model := NewScriptedModel(ch09Answer("第一个回答"), ch09Answer("第二个回答"))
	a := ch09NewAgent(t, AgentOptions{Model: model})
	ch09NoPanic(t, "Abort with no run", a.Abort)
	a.Subscribe(func(e AgentEvent) {
		if start, ok := e.(RunStartEvent); ok && start.RunID == 1 {
			a.Abort()
		}
	})
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("问")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	st := ch09Settle(t, a)
	if got, want := ch09Lines(st.Messages), []string{"user:问"}; !slices.Equal(got, want) || st.LastError != "run ended: aborted" {
		t.Fatalf("a subscriber called Abort at run_start: transcript %q, LastError %q; want %q, %q: Abort cancels the run from its first event on, before its first request", got, st.LastError, want, "run ended: aborted")
	}
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("重新开始")); err != nil {
			t.Fatalf("Prompt after the abort: %v", err)
		}
	})
	st = ch09Settle(t, a)
	want := []string{"user:问", "user:重新开始", "assistant/stop:第一个回答"}
	if got := ch09Lines(st.Messages); !slices.Equal(got, want) || st.LastError != "" {
		t.Errorf("the run after the abort: transcript %q, LastError %q; want %q and none", got, st.LastError, want)
	}
}

func TestLab9_4_失败与中止_AbortDuringTools(t *testing.T) {
	ch09Bubble(t, ch09AbortDuringTools)
}

// ch09AbortDuringTools runs in a synctest bubble: a run that Abort does not end is reported,
// not waited for.
func ch09AbortDuringTools(t *testing.T) {
	model := NewScriptedModel(ch09ToolUse(ch09Call("c1"), ch09Call("c2")), ch09Answer("不该有"))
	started := make(chan string, 2)
	a := ch09NewAgent(t, AgentOptions{Model: model, ExecuteToolCall: ch09WaitTool(started, nil)})
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("查两样")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	<-started
	<-started
	if st := a.State(); len(st.PendingToolCalls) != 2 {
		t.Errorf("while both tools run: pending calls = %v, want c1 and c2", st.PendingToolCalls)
	}
	runLab(t, func() {
		if err := a.Steer(UserText("插一句")); err != nil {
			t.Fatalf("Steer during the tools: %v", err)
		}
		a.Abort()
	})
	synctest.Wait() // everything the run can do without the test has happened
	if st := a.State(); st.Running {
		t.Fatalf("after Abort during the tools the run is still running (pending calls %v): Abort cancels the context the run runs under", st.PendingToolCalls)
	}
	st := ch09Settle(t, a)
	if st.LastError != "run ended: aborted" {
		t.Fatalf("after Abort during the tools: last error = %q, want %q", st.LastError, "run ended: aborted")
	}
	if diff := cmp.Diff([]string{"user:查两样", "assistant/toolUse:[c1 c2]", "toolResult:c1", "toolResult:c2"}, ch09Lines(st.Messages)); diff != "" {
		t.Errorf("transcript after Abort: every call still answered, nothing steered in (-want +got):\n%s", diff)
	}
	if len(st.PendingToolCalls) != 0 || st.Running {
		t.Errorf("after Abort: pending calls %v, running %v; want none, false", st.PendingToolCalls, st.Running)
	}
	if got, want := ch09Lines(st.Dropped), []string{"user:插一句"}; !slices.Equal(got, want) {
		t.Errorf("after Abort during the tools: State().Dropped = %q, want %q", got, want)
	}
	if got := model.Calls(); got != 1 {
		t.Errorf("model requests = %d, want 1: no request after an abort", got)
	}
	runLab(t, func() {
		if err := a.Steer(UserText("太晚了")); !errors.Is(err, ErrAgentIdle) {
			t.Errorf("Steer after the aborted run returned %v, want ErrAgentIdle", err)
		}
	})
}

func TestLab9_4_失败与中止_DroppedMessages(t *testing.T) {
	defer goleak.VerifyNone(t)
	// A run that ends with a model error while a steering and a follow-up message wait.
	started, release := make(chan struct{}), make(chan struct{})
	model := &ch09Model{respond: func(ctx context.Context, n int) *AssistantStream {
		if n == 0 {
			return ch09Held(ctx, "正在", func() {}, release, AssistantMessage{StopReason: StopReasonError, ErrorMessage: "上游 503"})
		}
		return ch09Reply(ch09Answer("重新回答"))
	}}
	a := ch09NewAgent(t, AgentOptions{Model: model})
	ends := &ch09Ends{}
	a.Subscribe(ends.on)
	// The test steers once the agent has delivered the partial answer: the run has published
	// it and waits for the rest of the stream, changing nothing meanwhile. (Had the stream
	// signalled, the run could still be publishing while Steer runs, and a Steer that reads the
	// state without the lock would race in some runs and not in others.)
	streaming := ch09Signal(started)
	a.Subscribe(func(e AgentEvent) {
		if run, ok := e.(RunLoopEvent); ok {
			if model, ok := run.Event.(ModelEvent); ok {
				if _, ok := model.Event.(TextDeltaEvent); ok {
					streaming()
				}
			}
		}
	})
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("问")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	<-started
	runLab(t, func() {
		if err := a.Steer(UserText("补一句")); err != nil {
			t.Fatalf("Steer during the stream: %v", err)
		}
		if err := a.FollowUp(UserText("再总结")); err != nil {
			t.Fatalf("FollowUp during the stream: %v", err)
		}
	})
	close(release)
	failed := ch09Settle(t, a)
	failedEnd := ends.last()
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("再问")); err != nil {
			t.Fatalf("Prompt after the failed run: %v", err)
		}
	})
	next := ch09Settle(t, a)
	if got, want := ch09At(model.requestLines(), 1), []string{"user:问", "assistant/error!上游 503", "user:再问"}; !slices.Equal(got, want) {
		t.Fatalf("the request of the run after a failed one = %q, want %q: what the failed run accepted and never took must not reach the next run", got, want)
	}
	wantDropped := []string{"user:补一句", "user:再总结"}
	if got := ch09Lines(failed.Dropped); !slices.Equal(got, wantDropped) {
		t.Fatalf("State().Dropped after a run that ended with a model error = %q, want %q: the messages it accepted and never took are reported, steering first", got, wantDropped)
	}
	if got := ch09Lines(failedEnd.Dropped); failedEnd.Reason != RunError || !slices.Equal(got, wantDropped) {
		t.Errorf("run_end of the failed run: %s with Dropped %q, want error with %q", failedEnd.Reason, got, wantDropped)
	}
	if len(next.Dropped) != 0 {
		t.Errorf("State().Dropped after the next run = %q, want none", ch09Lines(next.Dropped))
	}

	// A run that reaches MaxSteps: the steering message that arrived during its last batch is
	// taken (after the batch's result); the follow-up never is, since the run never stopped.
	toolStarted, toolRelease := make(chan string, 1), make(chan struct{})
	bModel := NewScriptedModel(ch09ToolUse(ch09Call("c1")), ch09Answer("看到转向了"))
	b := ch09NewAgent(t, AgentOptions{Model: bModel, MaxSteps: 1, ExecuteToolCall: ch09WaitTool(toolStarted, toolRelease)})
	bEnds := &ch09Ends{}
	b.Subscribe(bEnds.on)
	runLab(t, func() {
		if err := b.Prompt(t.Context(), UserText("查")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	<-toolStarted
	runLab(t, func() {
		if err := b.Steer(UserText("改查这个")); err != nil {
			t.Fatalf("Steer during the tool: %v", err)
		}
		if err := b.FollowUp(UserText("然后总结")); err != nil {
			t.Fatalf("FollowUp during the tool: %v", err)
		}
	})
	close(toolRelease)
	st := ch09Settle(t, b)
	end := bEnds.last()
	if end.Reason != RunMaxSteps {
		t.Fatalf("the run with MaxSteps 1 ended %q, want maxSteps", end.Reason)
	}
	if got, want := ch09Lines(st.Messages), []string{"user:查", "assistant/toolUse:[c1]", "toolResult:c1", "user:改查这个"}; !slices.Equal(got, want) {
		t.Errorf("transcript of the run that reached MaxSteps = %q, want %q: the steering message polled after the last batch is taken", got, want)
	}
	if got, want := ch09Lines(end.Dropped), []string{"user:然后总结"}; !slices.Equal(got, want) {
		t.Errorf("run_end of the run that reached MaxSteps: Dropped = %q, want %q: the follow-up it accepted and never took is reported", got, want)
	}
	if got, want := ch09Lines(st.Dropped), []string{"user:然后总结"}; !slices.Equal(got, want) {
		t.Errorf("State().Dropped after the run that reached MaxSteps = %q, want %q", got, want)
	}
	if st.LastError != "" {
		t.Errorf("LastError after maxSteps = %q, want empty (only error and aborted set it)", st.LastError)
	}
	// Continue answers the steering message; the dropped follow-up is gone.
	runLab(t, func() {
		if err := b.Continue(t.Context()); err != nil {
			t.Fatalf("Continue after maxSteps: %v", err)
		}
	})
	ch09Settle(t, b)
	if got, want := ch09At(ch09RequestLines(bModel), 1), []string{"user:查", "assistant/toolUse:[c1]", "toolResult:c1", "user:改查这个"}; !slices.Equal(got, want) {
		t.Errorf("the request of Continue after maxSteps = %q, want %q", got, want)
	}
}

func TestLab9_4_失败与中止_AbortFromSubscriber(t *testing.T) {
	ch09Bubble(t, func(t *testing.T) {
		model := &ch09Model{respond: func(ctx context.Context, n int) *AssistantStream {
			if n == 0 {
				return ch09Held(ctx, "正在想", func() {}, nil, AssistantMessage{})
			}
			return ch09Reply(ch09Answer("新的回答"))
		}}
		a := ch09NewAgent(t, AgentOptions{Model: model})
		ch09NoPanic(t, "Abort with no run", a.Abort)

		returned := make(chan struct{})
		a.Subscribe(func(e AgentEvent) {
			switch e := e.(type) {
			case RunLoopEvent:
				if me, ok := e.Event.(ModelEvent); ok && me.Event.EventType() == "text_delta" && e.RunID == 1 {
					a.Abort()
					close(returned)
				}
			case RunEndEvent:
				a.Abort() // the run is over: there is nothing to abort
			}
		})
		runLab(t, func() {
			if err := a.Prompt(t.Context(), UserText("问")); err != nil {
				t.Fatalf("Prompt: %v", err)
			}
		})
		synctest.Wait() // everything that can happen without the test has happened
		select {
		case <-returned:
		default:
			t.Fatal("Abort called from a subscriber did not return: Abort only cancels and never waits (the run cannot end while its own subscriber waits for it)")
		}
		st := ch09Settle(t, a)
		if got, want := ch09Lines(st.Messages), []string{"user:问", "assistant/aborted!request aborted"}; !slices.Equal(got, want) || st.LastError != "request aborted" {
			t.Errorf("after Abort from a subscriber: transcript %q, LastError %q; want %q, %q", got, st.LastError, want, "request aborted")
		}
		if len(st.SubscriberErrors) != 0 {
			t.Errorf("Abort from a subscriber after the run ended panicked: %q", st.SubscriberErrors)
		}
		runLab(t, func() {
			if err := a.Prompt(t.Context(), UserText("重新开始")); err != nil {
				t.Fatalf("Prompt after the aborts: %v", err)
			}
		})
		st = ch09Settle(t, a)
		want := []string{"user:问", "assistant/aborted!request aborted", "user:重新开始", "assistant/stop:新的回答"}
		if got := ch09Lines(st.Messages); !slices.Equal(got, want) || st.LastError != "" {
			t.Errorf("the run after the aborts: transcript %q, LastError %q; want %q and none: an Abort with no run changes nothing", got, st.LastError, want)
		}
	})
}

// TestLab9_4_失败与中止_SteerFromAnotherGoroutine steers from a goroutine of its own until the
// agent says it is idle. The goroutine begins once the run's first request was made, and the
// run (MaxSteps 1) gets its first answer only once a message was accepted, so it ends at
// MaxSteps with steering still queued. Every message Steer accepted is
// taken or reported dropped. Steer reads whether a run can take a message, which the run changes
// under the agent's lock: read it under the lock too (lab 9.3's enqueue), or go test -race
// reports a data race.
func TestLab9_4_失败与中止_SteerFromAnotherGoroutine(t *testing.T) {
	requested, firstSteer := make(chan struct{}), make(chan struct{})
	steered := ch09Signal(firstSteer)
	model := &ch09Model{respond: func(ctx context.Context, n int) *AssistantStream {
		if n == 0 {
			close(requested)
			select {
			case <-firstSteer:
			case <-ctx.Done():
			}
		}
		return ch09Reply(ch09Answer("好"))
	}}
	a := ch09NewAgent(t, AgentOptions{Model: model, MaxSteps: 1})
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("开始")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	var accepted int
	steering := ch09Go(func() error {
		defer steered()
		<-requested
		for {
			switch err := a.Steer(UserText("插话")); {
			case errors.Is(err, ErrAgentIdle):
				return nil
			case err != nil:
				return err
			}
			accepted++
			steered()
			runtime.Gosched()
		}
	})
	err := <-steering
	ch09PendingErr(t, err)
	if err != nil {
		t.Fatalf("Steer during the run: %v; want nil until the run can take no message, then ErrAgentIdle", err)
	}
	st := ch09Settle(t, a)
	taken := 0
	for _, m := range st.Messages {
		if ch09Line(m) == "user:插话" {
			taken++
		}
	}
	if accepted == 0 || taken+len(st.Dropped) != accepted {
		t.Errorf("Steer accepted %d messages during a run that ended at MaxSteps; the transcript has %d of them and Dropped %d: every accepted message is taken or reported dropped", accepted, taken, len(st.Dropped))
	}
}

// TestLab9_4_失败与中止_AbortFromAnotherGoroutine calls Abort over and over from a goroutine of
// its own while runs start and end. Abort reads the run's cancel function, which start and the
// end of a run change under the agent's lock: read it under the lock too, or go test -race
// reports a data race (no assertion can see one).
func TestLab9_4_失败与中止_AbortFromAnotherGoroutine(t *testing.T) {
	model := &ch09Model{respond: func(ctx context.Context, n int) *AssistantStream { return ch09Reply(ch09Answer("好")) }}
	a := ch09NewAgent(t, AgentOptions{Model: model})
	var stop atomic.Bool
	first := make(chan struct{})
	aborted := ch09Signal(first)
	aborting := ch09Go(func() error {
		defer aborted()
		for {
			a.Abort()
			aborted()
			if stop.Load() {
				return nil
			}
			runtime.Gosched()
		}
	})
	<-first // the goroutine's first Abort has returned (or panicked: a stub)
	for i := range 5 {
		runLab(t, func() {
			if err := a.Prompt(t.Context(), UserText(fmt.Sprintf("第 %d 次", i+1))); err != nil {
				t.Fatalf("Prompt %d while another goroutine calls Abort: %v", i+1, err)
			}
		})
		ch09Settle(t, a)
	}
	stop.Store(true)
	ch09PendingErr(t, <-aborting)
}

// ch09CancelAttempts is how many runs TestLab9_4_失败与中止_AbortCancelsAtOnce makes, each
// with a new agent, until one shows the mistake. With one P the goroutine that `go cancel()`
// starts waits until the tool lets go of the P, so nearly every attempt shows it; the attempts
// cover a preemption that lands just between Abort's return and the check.
const ch09CancelAttempts = 5

func TestLab9_4_失败与中止_AbortCancelsAtOnce(t *testing.T) {
	// One P: a goroutine that Abort leaves the cancelling to runs only once the tool blocks.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	ch09Bubble(t, ch09AbortCancelsAtOnce)
}

// ch09AbortCancelsAtOnce runs in a synctest bubble: an Abort that waits for the run, which
// waits for the tool that called Abort, is reported as a deadlock at once.
func ch09AbortCancelsAtOnce(t *testing.T) {
	for attempt := 1; attempt <= ch09CancelAttempts; attempt++ {
		var a *Agent
		var cancelled, aborting error
		tool := func(ctx context.Context, call ToolCall, exec ToolExecContext) (ToolResultMessage, error) {
			aborting = ch09Try(func() error { a.Abort(); return nil }) // a stub's panic, kept for the test
			cancelled = ctx.Err()                                      // read before anything else can run
			return ToolResultMessage{Content: []ContentBlock{Text("完成")}}, nil
		}
		model := NewScriptedModel(ch09ToolUse(ch09Call("c1")), ch09Answer("不该有"))
		a = ch09NewAgent(t, AgentOptions{Model: model, ExecuteToolCall: tool})
		runLab(t, func() {
			if err := a.Prompt(t.Context(), UserText("查一下")); err != nil {
				t.Fatalf("Prompt: %v", err)
			}
		})
		st := ch09Settle(t, a)
		ch09PendingErr(t, aborting)
		if cancelled == nil {
			t.Fatalf("attempt %d: a tool called Abort, and right after it returned the run's context was not cancelled yet: Abort cancels before it returns (call the cancel function, do not leave it to a goroutine)", attempt)
		}
		if st.LastError != "run ended: aborted" {
			t.Fatalf("attempt %d: a tool called Abort: last error = %q, want %q", attempt, st.LastError, "run ended: aborted")
		}
	}
}

// --- Lab 9.5 subscribers ---------------------------------------------------------------------

func TestLab9_5_订阅者_UnsubscribeAndPanic(t *testing.T) {
	defer goleak.VerifyNone(t)
	a := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("好"))})
	first, gone, third := &ch09Recorder{}, &ch09Recorder{}, &ch09Recorder{}
	a.Subscribe(first.on)
	unsubscribe := a.Subscribe(gone.on)
	a.Subscribe(func(AgentEvent) { panic("订阅者坏了") })
	a.Subscribe(third.on)
	runLab(t, func() {
		unsubscribe()
		unsubscribe() // a second call does nothing
		if err := a.Prompt(t.Context(), UserText("你好")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	st := ch09Settle(t, a)
	want := []string{"run_start#1", "model_event:start#1", "model_event:text_delta#1", "model_event:done/stop#1", "assistant_message:stop#1", "turn_end:stop/1#1", "run_end:stop#1"}
	if got := gone.kinds(); len(got) != 0 {
		t.Errorf("the unsubscribed subscriber still got %v", got)
	}
	if diff := cmp.Diff(want, third.kinds()); diff != "" {
		t.Errorf("the subscriber after the broken one (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, first.kinds()); diff != "" {
		t.Errorf("the first subscriber (-want +got):\n%s", diff)
	}
	if len(st.SubscriberErrors) != len(want) {
		t.Fatalf("subscriber errors = %d %q, want %d: every panic of the broken subscriber is recorded, and it stays subscribed", len(st.SubscriberErrors), st.SubscriberErrors, len(want))
	}
	if got, wantErr := st.SubscriberErrors[0], "subscriber 3 panicked on run_start: 订阅者坏了"; got != wantErr {
		t.Errorf("first subscriber error = %q, want %q", got, wantErr)
	}
}

// ch09Deface overwrites, in place, every content block of every message an event carries with
// "被<event type>改掉": what a careless subscriber might do to the event it was given.
func ch09Deface(e AgentEvent) {
	mark := Text("被" + e.EventType() + "改掉")
	blocks := func(content []ContentBlock) {
		for i := range content {
			content[i] = mark
		}
	}
	message := func(m Message) {
		switch m := m.(type) {
		case UserMessage:
			blocks(m.Content)
		case AssistantMessage:
			blocks(m.Content)
		case ToolResultMessage:
			blocks(m.Content)
		}
	}
	switch e := e.(type) {
	case RunStartEvent:
		for _, m := range e.Messages {
			message(m)
		}
	case RunEndEvent:
		for _, m := range append(slices.Clip(e.Messages), e.Dropped...) {
			message(m)
		}
	case RunLoopEvent:
		switch le := e.Event.(type) {
		case ModelEvent:
			if done, ok := le.Event.(DoneEvent); ok {
				blocks(done.Message.Content)
			}
		case AssistantMessageEvent:
			blocks(le.Message.Content)
		case ToolProgressEvent:
			blocks(le.Content)
		case ToolEndEvent:
			blocks(le.Result.Content)
		case QueuedMessageEvent:
			message(le.Message)
		}
	}
}

// ch09Render renders the content an event carries (false for an event that carries none):
// "assistant_message:我先查一下。|call:c1".
func ch09Render(e AgentEvent) (string, bool) {
	switch e := e.(type) {
	case RunStartEvent:
		return "run_start:" + ch09FullAll(e.Messages), true
	case RunEndEvent:
		return "run_end:" + ch09FullAll(e.Messages) + " dropped:" + ch09FullAll(e.Dropped), true
	case RunLoopEvent:
		switch le := e.Event.(type) {
		case ModelEvent:
			if done, ok := le.Event.(DoneEvent); ok {
				return "model_event:done:" + ch09Blocks(done.Message.Content), true
			}
		case AssistantMessageEvent:
			return "assistant_message:" + ch09Blocks(le.Message.Content), true
		case ToolProgressEvent:
			return "tool_progress:" + ch09Blocks(le.Content), true
		case ToolEndEvent:
			return "tool_end:" + ch09Blocks(le.Result.Content), true
		case QueuedMessageEvent:
			return "queued_message:" + ch09Full(le.Message), true
		}
	}
	return "", false
}

// ch09Edits says whose edits a rendering shows: "run_end←assistant_message+run_start" for a
// run_end whose content was overwritten by ch09Deface at assistant_message and at run_start.
func ch09Edits(rendered string) (string, bool) {
	var marks []string
	for rest := rendered; ; {
		i := strings.Index(rest, "被")
		if i < 0 {
			break
		}
		rest = rest[i+len("被"):]
		j := strings.Index(rest, "改掉")
		if j < 0 {
			break
		}
		if mark := rest[:j]; !slices.Contains(marks, mark) {
			marks = append(marks, mark)
		}
		rest = rest[j:]
	}
	if len(marks) == 0 {
		return "", false
	}
	sort.Strings(marks)
	kind, _, _ := strings.Cut(rendered, ":")
	return kind + "←" + strings.Join(marks, "+"), true
}

// ch09CopiesScenario runs "你好" → a tool call that reports progress and steers → "好" on an
// agent with the given subscribers, and returns the agent's state and the model's requests.
func ch09CopiesScenario(t *testing.T, subscribers ...func(AgentEvent)) (AgentState, *ScriptedModel) {
	t.Helper()
	model := NewScriptedModel(ch09ToolUse(ch09Call("c1")), ch09Answer("好"))
	var a *Agent
	a = ch09NewAgent(t, AgentOptions{Model: model,
		ExecuteToolCall: func(ctx context.Context, call ToolCall, exec ToolExecContext) (ToolResultMessage, error) {
			exec.ReportProgress([]ContentBlock{Text("进行中")})
			if err := a.Steer(UserText("顺便")); err != nil {
				return ToolResultMessage{}, err
			}
			return ToolResultMessage{Content: []ContentBlock{Text("ok")}}, nil
		}})
	for _, s := range subscribers {
		a.Subscribe(s)
	}
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("你好")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	return ch09Settle(t, a), model
}

// ch09Pristine is what every subscriber of ch09CopiesScenario must see, whatever the others do.
var ch09Pristine = []string{
	"run_start:user:你好",
	"model_event:done:我先查一下。|call:c1",
	"assistant_message:我先查一下。|call:c1",
	"tool_progress:进行中",
	"tool_end:ok",
	"queued_message:user:顺便",
	"model_event:done:好",
	"assistant_message:好",
	"run_end:user:你好 / assistant:我先查一下。|call:c1 / toolResult:ok / user:顺便 / assistant:好 dropped:",
}

func TestLab9_5_订阅者_PanicRecordedUnderLock(t *testing.T) {
	// A reader calls State over and over. The first subscriber panics at run_start; the second
	// waits there until the reader has begun a State call after the panic was recorded. Nothing
	// orders that record before the reader's read but the agent's lock: record it under the
	// lock, or go test -race reports a data race. Five rounds, each with a new agent, make sure
	// the detector sees it.
	for round := 1; round <= 5; round++ {
		ch09PanicRecordedUnderLock(t, round)
	}
}

func ch09PanicRecordedUnderLock(t *testing.T, round int) {
	a := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("好"))})
	var reads atomic.Int64
	var stop, readerDone atomic.Bool
	reader := ch09Go(func() error {
		defer readerDone.Store(true)
		for !stop.Load() {
			a.State()
			reads.Add(1)
			runtime.Gosched()
		}
		return nil
	})
	a.Subscribe(func(e AgentEvent) {
		if _, ok := e.(RunStartEvent); ok {
			panic("先崩")
		}
	})
	a.Subscribe(func(e AgentEvent) {
		if _, ok := e.(RunStartEvent); !ok {
			return
		}
		// Two more finished calls: the second began after this subscriber was called.
		for from := reads.Load(); reads.Load() < from+2 && !readerDone.Load(); {
			runtime.Gosched()
		}
	})
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("问")); err != nil {
			t.Fatalf("round %d: Prompt: %v", round, err)
		}
	})
	st := ch09Settle(t, a)
	stop.Store(true)
	ch09PendingErr(t, <-reader)
	if diff := cmp.Diff([]string{"subscriber 1 panicked on run_start: 先崩"}, st.SubscriberErrors); diff != "" {
		t.Fatalf("round %d: SubscriberErrors (-want +got):\n%s", round, diff)
	}
}

func TestLab9_5_订阅者_OwnCopies(t *testing.T) {
	defer goleak.VerifyNone(t)
	// The first subscriber overwrites the content of every event it gets (and panics at
	// run_end); the second must still see every event as it happened: every subscriber gets
	// its own deep copy of every event.
	var mu sync.Mutex
	var seen []string
	st, _ := ch09CopiesScenario(t,
		func(e AgentEvent) {
			ch09Deface(e)
			if _, ok := e.(RunEndEvent); ok {
				panic("改完就崩")
			}
		},
		func(e AgentEvent) {
			if r, ok := ch09Render(e); ok {
				mu.Lock()
				seen = append(seen, r)
				mu.Unlock()
			}
		})
	mu.Lock()
	defer mu.Unlock()
	var edits []string
	for _, r := range seen {
		if e, ok := ch09Edits(r); ok {
			edits = append(edits, e)
		}
	}
	if len(edits) > 0 {
		t.Fatalf("the second subscriber saw the first one's edits (event←where they were made): %s; every subscriber gets its own deep copy of every event", strings.Join(edits, ", "))
	}
	if diff := cmp.Diff(ch09Pristine, seen); diff != "" {
		t.Errorf("events the second subscriber saw (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"subscriber 1 panicked on run_end: 改完就崩"}, st.SubscriberErrors); diff != "" {
		t.Errorf("subscriber errors (-want +got):\n%s", diff)
	}
}

func TestLab9_5_订阅者_RunUnchangedBySubscriber(t *testing.T) {
	defer goleak.VerifyNone(t)
	// A single subscriber overwrites the content of every event it gets (and panics at
	// run_end): neither the run nor the agent's state may change.
	st, model := ch09CopiesScenario(t, func(e AgentEvent) {
		ch09Deface(e)
		if _, ok := e.(RunEndEvent); ok {
			panic("改完就崩")
		}
	})
	var requests []string
	for _, r := range model.Requests() {
		requests = append(requests, ch09FullAll(r.Messages))
	}
	want := []string{"user:你好", "user:你好 / assistant:我先查一下。|call:c1 / toolResult:ok / user:顺便"}
	if !slices.Equal(requests, want) {
		t.Fatalf("the model was asked %q, want %q: a subscriber changed the run through the event it was given (it must get a copy)", requests, want)
	}
	if got, want := ch09FullAll(st.Messages), "user:你好 / assistant:我先查一下。|call:c1 / toolResult:ok / user:顺便 / assistant:好"; got != want {
		t.Errorf("the agent's transcript = %q, want %q", got, want)
	}
}

func TestLab9_5_订阅者_ChangesDuringDelivery(t *testing.T) {
	defer goleak.VerifyNone(t)
	a := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("好"))})
	first, second, third, late := &ch09Recorder{}, &ch09Recorder{}, &ch09Recorder{}, &ch09Recorder{}
	var unsubscribeSecond func()
	first.hook = func(e AgentEvent) {
		if _, ok := e.(RunStartEvent); ok {
			unsubscribeSecond()  // removed while run_start is delivered
			a.Subscribe(late.on) // added while run_start is delivered
		}
	}
	a.Subscribe(first.on)
	unsubscribeSecond = a.Subscribe(second.on)
	a.Subscribe(third.on)
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("你好")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	ch09Settle(t, a)
	all := []string{"run_start#1", "model_event:start#1", "model_event:text_delta#1", "model_event:done/stop#1", "assistant_message:stop#1", "turn_end:stop/1#1", "run_end:stop#1"}
	if got, want := second.kinds(), all[:1]; !slices.Equal(got, want) {
		t.Errorf("the subscriber removed while run_start#1 was delivered got %q, want %q: an event goes to every subscription that existed when its delivery began, and a removed one gets nothing later", got, want)
	}
	if got, want := late.kinds(), all[1:]; !slices.Equal(got, want) {
		t.Errorf("the subscriber added while run_start#1 was delivered got %q, want %q: it begins with the next event", got, want)
	}
	if got := third.kinds(); !slices.Equal(got, all) {
		t.Errorf("the subscriber after them got %q, want %q", got, all)
	}
	if got := first.kinds(); !slices.Equal(got, all) {
		t.Errorf("the first subscriber got %q, want %q", got, all)
	}
}

func TestLab9_5_订阅者_OneAtATime(t *testing.T) {
	ch09Bubble(t, func(t *testing.T) {
		a := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("好"))})
		gone := a.Subscribe(func(AgentEvent) { t.Error("a subscription removed before the run got an event") })
		runLab(t, gone)
		secondIn := make(chan struct{})
		var mu sync.Mutex
		var overlaps []string
		a.Subscribe(func(e AgentEvent) {
			if _, ok := e.(RunStartEvent); ok {
				synctest.Wait() // let every other goroutine go as far as it can
				select {
				case <-secondIn:
					mu.Lock()
					overlaps = append(overlaps, ch09Kind(e))
					mu.Unlock()
				default:
				}
			}
		})
		a.Subscribe(func(e AgentEvent) {
			if _, ok := e.(RunStartEvent); ok {
				close(secondIn)
			}
		})
		runLab(t, func() {
			if err := a.Prompt(t.Context(), UserText("你好")); err != nil {
				t.Fatalf("Prompt: %v", err)
			}
		})
		ch09Settle(t, a)
		mu.Lock()
		defer mu.Unlock()
		if len(overlaps) > 0 {
			t.Errorf("the second subscriber was called while the first was still handling %s: subscribers are called one at a time, never two at once", overlaps[0])
		}
	})

	// Two goroutines that publish at once: the run's, which ends run 1, and the test's, which
	// starts run 2 as soon as it may. At the at-th release of the agent's lock the releasing
	// goroutine pauses; the subscriber takes long over run_end#1. Still one delivery at a time.
	for at := 1; ; at++ {
		if at > 1000 {
			t.Fatal("the agent's lock was released more than 1000 times in two runs")
		}
		fired, overlap := ch09ProbeTwoPublishers(t, at)
		if !fired {
			break
		}
		if overlap != "" {
			t.Fatalf("pausing at release %d of the agent's lock while run 1 ended and run 2 started from another goroutine: the subscriber got %s while it was still handling another event: two goroutines delivered at once; checking that nobody delivers and becoming the deliverer happen in one hold of the lock", at, overlap)
		}
	}
}

// ch09ProbeTwoPublishers runs two runs on a new agent in a bubble: run 1 from the test, run 2
// from the test's goroutine, which tries Prompt every (bubble) millisecond until run 1 is over.
// At the at-th release of the agent's lock the releasing goroutine sleeps a (bubble) second; the
// subscriber sleeps an hour over run_end#1. It returns whether that release came, and the first
// event the subscriber got while another call of it had not returned ("" when none).
func ch09ProbeTwoPublishers(t *testing.T, at int) (fired bool, overlap string) {
	t.Helper()
	ch09Bubble(t, func(t *testing.T) {
		a := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("一"), ch09Answer("二"))})
		lock := newCh09PauseAt(at, true, func() { time.Sleep(time.Second) })
		defer func() { fired = lock.Fired() }()
		a.mu = lock
		var mu sync.Mutex
		var inside atomic.Int32
		a.Subscribe(func(e AgentEvent) {
			if inside.Add(1) > 1 {
				mu.Lock()
				if overlap == "" {
					overlap = ch09Kind(e)
				}
				mu.Unlock()
			}
			if end, ok := e.(RunEndEvent); ok && end.RunID == 1 {
				time.Sleep(time.Hour)
			}
			inside.Add(-1)
		})
		runLab(t, func() {
			if err := a.Prompt(t.Context(), UserText("第一轮")); err != nil {
				t.Fatalf("Prompt: %v", err)
			}
		})
		for {
			err := ch09Try(func() error { return a.Prompt(t.Context(), UserText("第二轮")) })
			ch09PendingErr(t, err)
			if err == nil {
				break
			}
			if !errors.Is(err, ErrAgentBusy) {
				t.Fatalf("Prompt after run 1: %v, want nil or ErrAgentBusy", err)
			}
			time.Sleep(time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Hour)
		defer cancel()
		err := ch09Try(func() error { return a.WaitForIdle(ctx) })
		ch09PendingErr(t, err)
		ch09Pending(t, a.State())
		if err != nil {
			t.Fatalf("WaitForIdle: %v", err)
		}
		// A goroutine may still pause after the last release (the bubble's clock is not the
		// wall's: this costs nothing).
		time.Sleep(2 * time.Second)
	})
	return fired, overlap
}

func TestLab9_5_订阅者_NestedEventsInOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	a := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("一"), ch09Answer("二"))})
	var nestedErr error
	var nestedState AgentState
	starter := &ch09Recorder{hook: func(e AgentEvent) {
		if end, ok := e.(RunEndEvent); ok && end.RunID == 1 {
			nestedState = a.State()
			nestedErr = a.Prompt(t.Context(), UserText("第二轮"))
		}
	}}
	watcher := &ch09Recorder{}
	a.Subscribe(starter.on)
	a.Subscribe(watcher.on)
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("第一轮")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	st := ch09Settle(t, a)
	if nestedErr != nil {
		t.Fatalf("Prompt from a subscriber at run_end returned %v, want nil", nestedErr)
	}
	kinds := watcher.runKinds()
	end1, start2 := slices.Index(kinds, "run_end:stop#1"), slices.Index(kinds, "run_start#2")
	if end1 < 0 || start2 < 0 || start2 < end1 {
		t.Fatalf("the second subscriber got run_start#2 before run_end#1: an event raised inside a subscriber must wait until the current event reached every subscriber")
	}
	want := []string{"run_start#1", "assistant_message:stop#1", "turn_end:stop/1#1", "run_end:stop#1",
		"run_start#2", "assistant_message:stop#2", "turn_end:stop/1#2", "run_end:stop#2"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("events the second subscriber got (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, starter.runKinds()); diff != "" {
		t.Errorf("events the first subscriber got (-want +got):\n%s", diff)
	}
	if nestedState.Running || nestedState.RunID != 1 {
		t.Errorf("State inside run_end#1: running %v, run %d; want false, 1", nestedState.Running, nestedState.RunID)
	}
	if diff := cmp.Diff([]string{"user:第一轮", "assistant/stop:一", "user:第二轮", "assistant/stop:二"}, ch09Lines(st.Messages)); diff != "" {
		t.Errorf("transcript after both runs (-want +got):\n%s", diff)
	}

	// Again in a bubble: inside run_end#1 the first subscriber starts run 2 and lets every other
	// goroutine go as far as it can, so all of run 2's events wait in the outbox at once. They
	// still go out oldest first, each to the subscriptions that exist when its delivery begins:
	// inside run_start#2 the first subscriber removes the second and adds a new one.
	ch09Bubble(t, func(t *testing.T) {
		a := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("一"), ch09Answer("二"))})
		var unsubscribeWatcher func()
		var nestedErr error
		watcher, late := &ch09Recorder{}, &ch09Recorder{}
		starter := &ch09Recorder{hook: func(e AgentEvent) {
			switch e := e.(type) {
			case RunEndEvent:
				if e.RunID == 1 {
					nestedErr = a.Prompt(t.Context(), UserText("第二轮"))
					synctest.Wait() // run 2 goes as far as it can while run_end#1 is delivered
				}
			case RunStartEvent:
				if e.RunID == 2 {
					unsubscribeWatcher()
					a.Subscribe(late.on)
				}
			}
		}}
		a.Subscribe(starter.on)
		unsubscribeWatcher = a.Subscribe(watcher.on)
		runLab(t, func() {
			if err := a.Prompt(t.Context(), UserText("第一轮")); err != nil {
				t.Fatalf("Prompt: %v", err)
			}
		})
		ch09Settle(t, a)
		if nestedErr != nil {
			t.Fatalf("Prompt from a subscriber at run_end returned %v, want nil", nestedErr)
		}
		if diff := cmp.Diff(want, starter.runKinds()); diff != "" {
			t.Errorf("with all of run 2's events waiting at once, the events the first subscriber got (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want[:5], watcher.runKinds()); diff != "" {
			t.Errorf("with all of run 2's events waiting at once, the events of the subscriber removed inside run_start#2 (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want[5:], late.runKinds()); diff != "" {
			t.Errorf("with all of run 2's events waiting at once, the events of the subscriber added inside run_start#2 (-want +got):\n%s", diff)
		}
	})

	// Once more, at every moment: at the at-th release of the agent's lock after run 2 started
	// inside run_end#1, the releasing goroutine lets every other goroutine go as far as it can
	// (one bubble per moment). Every event still reaches the subscriber, and the agent becomes idle.
	for at := 1; ; at++ {
		if at > 1000 {
			t.Fatal("the agent's lock was released more than 1000 times after run 2 started")
		}
		fired, kinds, err := ch09ProbeDelivery(t, at)
		if !fired {
			break
		}
		if err != nil || !slices.Equal(kinds, want) {
			t.Fatalf("letting every other goroutine run at release %d of the agent's lock after run 2 started inside run_end#1: WaitForIdle returned %v with the subscriber's events %q, want nil and %q: finding the outbox empty and ending the delivery happen in one hold of the lock", at, err, kinds, want)
		}
	}
}

// ch09ProbeDelivery runs "第一轮" on a new agent in a bubble; a subscriber starts run 2 inside
// run_end#1, and at the at-th release of the agent's lock after that the releasing goroutine
// calls synctest.Wait. It returns whether that release came, the subscriber's events without
// the model's stream events, and what WaitForIdle returned (with an hour's timeout: the bubble's
// clock only moves when every goroutine is blocked, so it ends only a wait that never would).
func ch09ProbeDelivery(t *testing.T, at int) (fired bool, kinds []string, err error) {
	t.Helper()
	ch09Bubble(t, func(t *testing.T) {
		a := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("一"), ch09Answer("二"))})
		var nestedErr error
		lock := newCh09PauseAt(at, false, synctest.Wait)
		defer func() { fired = lock.Fired() }()
		a.mu = lock
		rec := &ch09Recorder{hook: func(e AgentEvent) {
			if end, ok := e.(RunEndEvent); ok && end.RunID == 1 {
				nestedErr = a.Prompt(t.Context(), UserText("第二轮"))
				lock.Arm()
			}
		}}
		a.Subscribe(rec.on)
		runLab(t, func() {
			if err := a.Prompt(t.Context(), UserText("第一轮")); err != nil {
				t.Fatalf("Prompt: %v", err)
			}
		})
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		err = ch09Try(func() error { return a.WaitForIdle(ctx) })
		ch09PendingErr(t, err)
		ch09Pending(t, a.State())
		if nestedErr != nil {
			t.Fatalf("Prompt from a subscriber at run_end returned %v, want nil", nestedErr)
		}
		kinds = rec.runKinds()
	})
	return fired, kinds, err
}

func TestLab9_5_订阅者_ManyGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t)
	const n = 8
	gate1, gate2 := make(chan struct{}), make(chan struct{})
	started1, started2 := make(chan struct{}), make(chan struct{})
	model := &ch09Model{respond: func(ctx context.Context, k int) *AssistantStream {
		switch k {
		case 0:
			return ch09Held(ctx, "想", ch09Signal(started1), gate1, ch09Answer("一"))
		case 2:
			return ch09Held(ctx, "想", ch09Signal(started2), gate2, ch09Answer("不会到"))
		}
		return ch09Reply(ch09Answer("二"))
	}}
	a := ch09NewAgent(t, AgentOptions{Model: model, SteeringMode: QueueAll})
	rec := &ch09Recorder{}
	a.Subscribe(rec.on)

	// Subscribing and unsubscribing at once.
	var mu sync.Mutex
	strays := 0
	ch09Parallel(t, n, func(int) {
		unsubscribe := a.Subscribe(func(AgentEvent) {
			mu.Lock()
			strays++
			mu.Unlock()
		})
		unsubscribe()
	})

	// Many prompts at once: exactly one starts run 1, which holds until released.
	errs := make([]error, n)
	ch09Parallel(t, n, func(i int) { errs[i] = a.Prompt(t.Context(), UserText(fmt.Sprintf("问%d", i))) })
	started := 0
	for i, err := range errs {
		switch {
		case err == nil:
			started++
		case !errors.Is(err, ErrAgentBusy):
			t.Fatalf("Prompt %d returned %v, want nil or ErrAgentBusy", i, err)
		}
	}
	if started != 1 {
		t.Fatalf("%d of %d concurrent prompts started a run, want exactly 1", started, n)
	}
	<-started1

	// Many steering messages at once, while others read the state.
	steerErrs := make([]error, n)
	ch09Parallel(t, n, func(i int) {
		steerErrs[i] = a.Steer(UserText(fmt.Sprintf("转向%d", i)))
		_ = a.State()
	})
	for i, err := range steerErrs {
		if err != nil {
			t.Fatalf("Steer %d during run 1 returned %v", i, err)
		}
	}
	close(gate1)
	st := ch09Settle(t, a)
	requests := model.requestLines()
	if len(requests) != 2 {
		t.Fatalf("model requests after run 1 = %d, want 2", len(requests))
	}
	steered := slices.Clone(requests[1][2:])
	sort.Strings(steered)
	var wantSteered []string
	for i := range n {
		wantSteered = append(wantSteered, fmt.Sprintf("user:转向%d", i))
	}
	if diff := cmp.Diff(wantSteered, steered); diff != "" {
		t.Errorf("second request: every steering message once, after the first answer (-want +got):\n%s", diff)
	}

	// Many aborts at once, mixed with state reads.
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("再来")); err != nil {
			t.Fatalf("Prompt for run 2: %v", err)
		}
	})
	<-started2
	ch09Parallel(t, n, func(i int) {
		if i%2 == 0 {
			a.Abort()
			return
		}
		_ = a.State()
	})
	st = ch09Settle(t, a)
	if st.RunID != 2 || st.Running || st.LastError != "request aborted" {
		t.Errorf("after the aborts: run %d, running %v, last error %q; want 2, false, request aborted", st.RunID, st.Running, st.LastError)
	}
	var runs []string
	for _, k := range rec.kinds() {
		if len(k) > 4 && (k[:4] == "run_") {
			runs = append(runs, k)
		}
	}
	if diff := cmp.Diff([]string{"run_start#1", "run_end:stop#1", "run_start#2", "run_end:aborted#2"}, runs); diff != "" {
		t.Errorf("run events: each run starts and ends once (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if strays != 0 {
		t.Errorf("subscribers that unsubscribed at once still got %d events", strays)
	}
}
