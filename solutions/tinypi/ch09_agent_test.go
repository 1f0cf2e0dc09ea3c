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
// channels they close), never on time.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"

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
		if len(k) < len("model_event") || k[:len("model_event")] != "model_event" {
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
		return fmt.Sprintf("%s#%d", ch07Kind(e.Event), e.RunID)
	}
	return fmt.Sprintf("unknown:%T", e)
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
		if msg := labPendingRE.FindString(text); msg != "" {
			t.Fatal(msg)
		}
	}
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

// --- Lab 9.1 state and pure reducer ----------------------------------------------------------

// ch09Summary is the part of a state the reducer test compares.
type ch09Summary struct {
	RunID     int
	Running   bool
	Messages  []string
	Streaming string
	Pending   []string
	LastError string
}

func ch09Summarise(s AgentState) ch09Summary {
	out := ch09Summary{RunID: s.RunID, Running: s.Running, Messages: ch09Lines(s.Messages), LastError: s.LastError}
	if s.Streaming != nil {
		out.Streaming = ch09Line(*s.Streaming)
	}
	for _, c := range s.PendingToolCalls {
		out.Pending = append(out.Pending, c.ID)
	}
	return out
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
	if diff := cmp.Diff([]string{"user:你好", "assistant/stop:甲"}, ch09Lines(left.Messages)); diff != "" {
		t.Fatalf("the reducer is not pure: reducing the same state along a second path changed the first result's transcript (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"user:你好", "assistant/stop:乙"}, ch09Lines(right.Messages)); diff != "" {
		t.Fatalf("second path's transcript (-want +got):\n%s", diff)
	}
	if got := ch09Lines(base.Messages); !slices.Equal(got, []string{"user:你好"}) {
		t.Fatalf("the reducer changed its input state: transcript is now %v", got)
	}

	// Run 2 begins; an old run_start and late events of run 1 must not touch it.
	s := reduce(left, RunEndEvent{RunID: 1, Reason: RunStop, Messages: left.Messages})
	s = reduce(s, RunStartEvent{RunID: 2, Messages: append(CloneMessages(s.Messages), UserText("再来"))})
	run2 := ch09Summary{RunID: 2, Running: true, Messages: []string{"user:你好", "assistant/stop:甲", "user:再来"}}
	if diff := cmp.Diff(run2, ch09Summarise(s)); diff != "" {
		t.Fatalf("state after run_start#2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(run2, ch09Summarise(reduce(s, RunStartEvent{RunID: 1, Messages: []Message{UserText("旧的")}}))); diff != "" {
		t.Errorf("a run_start of the older run 1 changed the state of run 2 (-want +got):\n%s", diff)
	}
	for _, late := range []AgentEvent{
		RunLoopEvent{RunID: 1, Event: AssistantMessageEvent{Message: ch09Answer("迟到")}},
		RunLoopEvent{RunID: 1, Event: ModelEvent{Event: StartEvent{}}},
		RunEndEvent{RunID: 1, Reason: RunAborted, Error: "旧的错误"},
	} {
		if diff := cmp.Diff(run2, ch09Summarise(reduce(s, late))); diff != "" {
			t.Errorf("a late %s of run 1 changed the state of run 2 (-want +got):\n%s", late.EventType(), diff)
		}
	}

	// One turn of run 2: the streaming message, the pending calls, the transcript.
	steps := []struct {
		event AgentEvent
		want  ch09Summary
	}{
		{RunLoopEvent{RunID: 2, Event: ModelEvent{Event: StartEvent{}}},
			ch09Summary{RunID: 2, Running: true, Messages: run2.Messages, Streaming: "assistant/:"}},
		{RunLoopEvent{RunID: 2, Event: ModelEvent{Event: TextDeltaEvent{ContentIndex: 0, Delta: "正在"}}},
			ch09Summary{RunID: 2, Running: true, Messages: run2.Messages, Streaming: "assistant/:正在"}},
		{RunLoopEvent{RunID: 2, Event: ModelEvent{Event: TextDeltaEvent{ContentIndex: 0, Delta: "查"}}},
			ch09Summary{RunID: 2, Running: true, Messages: run2.Messages, Streaming: "assistant/:正在查"}},
		{RunLoopEvent{RunID: 2, Event: ModelEvent{Event: ToolCallEndEvent{ContentIndex: 1, ToolCall: ch09Call("c1")}}},
			ch09Summary{RunID: 2, Running: true, Messages: run2.Messages, Streaming: "assistant/:[c1]"}},
		{RunLoopEvent{RunID: 2, Event: AssistantMessageEvent{Message: ch09ToolUse(ch09Call("c1"))}},
			ch09Summary{RunID: 2, Running: true, Messages: append(slices.Clone(run2.Messages), "assistant/toolUse:[c1]")}},
		{RunLoopEvent{RunID: 2, Event: ToolStartEvent{Call: ch09Call("c1")}},
			ch09Summary{RunID: 2, Running: true, Messages: append(slices.Clone(run2.Messages), "assistant/toolUse:[c1]"), Pending: []string{"c1"}}},
		{RunLoopEvent{RunID: 2, Event: ToolEndEvent{Result: ToolResultMessage{ToolCallID: "c1", ToolName: "wait"}}},
			ch09Summary{RunID: 2, Running: true, Messages: append(slices.Clone(run2.Messages), "assistant/toolUse:[c1]", "toolResult:c1")}},
		{RunEndEvent{RunID: 2, Reason: RunAborted, Error: "run ended: aborted"},
			ch09Summary{RunID: 2, Messages: append(slices.Clone(run2.Messages), "assistant/toolUse:[c1]", "toolResult:c1"), LastError: "run ended: aborted"}},
	}
	for _, step := range steps {
		s = reduce(s, step.event)
		if diff := cmp.Diff(step.want, ch09Summarise(s)); diff != "" {
			t.Errorf("state after %s (-want +got):\n%s", ch09Kind(step.event), diff)
		}
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
	if diff := cmp.Diff(want, ch09Summarise(s)); diff != "" {
		t.Fatalf("changing the copy's streaming message changed the original (-want +got):\n%s", diff)
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

func TestLab9_2_转向与后续_SteeringAfterBatch(t *testing.T) {
	defer goleak.VerifyNone(t)
	model := NewScriptedModel(ch09ToolUse(ch09Call("c1"), ch09Call("c2")), ch09Answer("查完了"), ch09Answer("补充也看到了"))
	steering := &ch09Polls{queue: messageQueue{mode: QueueAll}}
	followUp := &ch09Polls{}
	var mu sync.Mutex
	var executed []string
	rec := newCh07Recorder()
	rec.hook = func(e LoopEvent) {
		// The user adds a remark while the model gives its final answer.
		if m, ok := e.(AssistantMessageEvent); ok && TextOf(m.Message.Content) == "查完了" {
			steering.push(UserText("补充"))
		}
	}
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
			OnEvent:  rec.onEvent,
			Steering: steering.poll,
			FollowUp: followUp.poll,
		})
		if err != nil {
			t.Fatalf("RunAgentLoop: %v", err)
		}
	})
	requests := model.Requests()
	if len(requests) < 2 {
		t.Fatalf("model requests = %d, want 3", len(requests))
	}
	if diff := cmp.Diff([]string{"user:查两样东西", "assistant/toolUse:[c1 c2]", "toolResult:c1", "toolResult:c2", "user:顺便看看第三样"},
		ch09Lines(requests[1].Messages)); diff != "" {
		t.Fatalf("second request: the steering message must follow every result of the batch (-want +got):\n%s", diff)
	}
	mu.Lock()
	sort.Strings(executed)
	if !slices.Equal(executed, []string{"c1", "c2"}) {
		t.Errorf("executed calls = %v, want [c1 c2]: steering never skips a call of the current batch", executed)
	}
	mu.Unlock()
	if len(requests) != 3 {
		t.Fatalf("model requests = %d, want 3: a steering message that arrives with the final answer is taken at the stop, and the run goes on", len(requests))
	}
	wantFinal := []string{"user:查两样东西", "assistant/toolUse:[c1 c2]", "toolResult:c1", "toolResult:c2", "user:顺便看看第三样",
		"assistant/stop:查完了", "user:补充", "assistant/stop:补充也看到了"}
	if diff := cmp.Diff(wantFinal, ch09Lines(res.Messages)); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
	if res.Reason != RunStop || res.Steps != 3 {
		t.Errorf("result = %s/%d, want stop/3", res.Reason, res.Steps)
	}
	if got := steering.count(); got != 3 {
		t.Errorf("steering polls = %d, want 3 (after the batch and at each of the two stops)", got)
	}
	if got := followUp.count(); got != 1 {
		t.Errorf("follow-up polls = %d, want 1 (only at the stop where steering had nothing)", got)
	}
	queued := rec.kindsWithPrefix("tool_end")
	if len(queued) != 2 {
		t.Errorf("tool_end events = %v, want one per call", queued)
	}
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
	if polls != 3 {
		t.Errorf("one-at-a-time: follow-up polls = %d, want 3 (once at each stop, never after a tool batch)", polls)
	}
	want := []string{"user:开始", "assistant/toolUse:[c1]", "toolResult:c1", "assistant/stop:一", "user:然后一", "assistant/stop:二", "user:然后二", "assistant/stop:三"}
	if diff := cmp.Diff(want, ch09Lines(res.Messages)); diff != "" {
		t.Errorf("one-at-a-time: transcript (-want +got):\n%s", diff)
	}
	if res.Reason != RunStop || res.Steps != 4 {
		t.Errorf("one-at-a-time: result = %s/%d, want stop/4", res.Reason, res.Steps)
	}

	res, polls = run(QueueAll, ch09Answer("一"), ch09Answer("二"))
	want = []string{"user:开始", "assistant/stop:一", "user:然后一", "user:然后二", "assistant/stop:二"}
	if diff := cmp.Diff(want, ch09Lines(res.Messages)); diff != "" {
		t.Errorf("all: transcript, both follow-ups taken at the first stop (-want +got):\n%s", diff)
	}
	if polls != 2 || res.Reason != RunStop || res.Steps != 2 {
		t.Errorf("all: follow-up polls = %d, result = %s/%d; want 2, stop/2", polls, res.Reason, res.Steps)
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

	// Continue answers a transcript that ends with a user message.
	b := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("好")), Messages: []Message{UserText("继续这个")}})
	runLab(t, func() {
		if err := b.Continue(t.Context()); err != nil {
			t.Fatalf("Continue from a user message: %v", err)
		}
	})
	if diff := cmp.Diff([]string{"user:继续这个", "assistant/stop:好"}, ch09Lines(ch09Settle(t, b).Messages)); diff != "" {
		t.Errorf("transcript after Continue (-want +got):\n%s", diff)
	}
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

func TestLab9_3_运行周期_SteerAndFollowUp(t *testing.T) {
	defer goleak.VerifyNone(t)
	model := NewScriptedModel(ch09ToolUse(ch09Call("c1")), ch09Answer("一"), ch09Answer("二"))
	started, release := make(chan string, 1), make(chan struct{})
	a := ch09NewAgent(t, AgentOptions{Model: model, ExecuteToolCall: ch09WaitTool(started, release)})
	var lateErr error
	rec := &ch09Recorder{hook: func(e AgentEvent) {
		if le, ok := e.(RunLoopEvent); ok && le.Event.EventType() == "turn_end" {
			lateErr = a.Steer(UserText("太晚了")) // the run has decided to stop
		}
	}}
	a.Subscribe(rec.on)

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
	close(release)
	st := ch09Settle(t, a)
	requests := model.Requests()
	if len(requests) != 3 {
		t.Fatalf("model requests = %d, want 3 (the steering message after the tool, the follow-up after the first answer)", len(requests))
	}
	if diff := cmp.Diff([]string{"user:开始", "assistant/toolUse:[c1]", "toolResult:c1", "user:转向"}, ch09Lines(requests[1].Messages)); diff != "" {
		t.Errorf("second request (-want +got):\n%s", diff)
	}
	want := []string{"user:开始", "assistant/toolUse:[c1]", "toolResult:c1", "user:转向", "assistant/stop:一", "user:然后", "assistant/stop:二"}
	if diff := cmp.Diff(want, ch09Lines(st.Messages)); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
	if !errors.Is(lateErr, ErrAgentIdle) {
		t.Errorf("Steer after the run decided to stop (at its turn_end) returned %v, want ErrAgentIdle: nothing would take the message", lateErr)
	}
	runLab(t, func() {
		if err := a.FollowUp(UserText("结束以后")); !errors.Is(err, ErrAgentIdle) {
			t.Errorf("FollowUp after the run returned %v, want ErrAgentIdle", err)
		}
	})
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
}

func TestLab9_4_失败与中止_AbortDuringStream(t *testing.T) {
	defer goleak.VerifyNone(t)
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
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("重新开始")); err != nil {
			t.Fatalf("Prompt after Abort: %v", err)
		}
	})
	st = ch09Settle(t, a)
	if got := len(model.requestLines()); got != 2 {
		t.Fatalf("model requests = %d, want 2: the aborted run's queued messages must be dropped, not taken by the next run", got)
	}
	if diff := cmp.Diff([]string{"user:问", "assistant/aborted!request aborted", "user:重新开始", "assistant/stop:新的回答"}, ch09Lines(st.Messages)); diff != "" {
		t.Errorf("transcript of the next run (-want +got):\n%s", diff)
	}
}

func TestLab9_4_失败与中止_AbortDuringTools(t *testing.T) {
	defer goleak.VerifyNone(t)
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
	if got := model.Calls(); got != 1 {
		t.Errorf("model requests = %d, want 1: no request after an abort", got)
	}
	runLab(t, func() {
		if err := a.Steer(UserText("太晚了")); !errors.Is(err, ErrAgentIdle) {
			t.Errorf("Steer after the aborted run returned %v, want ErrAgentIdle", err)
		}
	})
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

func TestLab9_5_订阅者_OwnCopies(t *testing.T) {
	defer goleak.VerifyNone(t)
	a := ch09NewAgent(t, AgentOptions{Model: NewScriptedModel(ch09Answer("好"))})
	// The first subscriber scribbles over the transcript run_end carries, then panics; the
	// second must still see the run as it was: every subscriber gets its own copy of an event.
	a.Subscribe(func(e AgentEvent) {
		if end, ok := e.(RunEndEvent); ok {
			for i := range end.Messages {
				end.Messages[i] = UserText("改掉了")
			}
			panic("改完就崩")
		}
	})
	seen := make(chan []string, 1)
	a.Subscribe(func(e AgentEvent) {
		if end, ok := e.(RunEndEvent); ok {
			seen <- ch09Lines(end.Messages)
		}
	})
	runLab(t, func() {
		if err := a.Prompt(t.Context(), UserText("你好")); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	})
	st := ch09Settle(t, a)
	select {
	case got := <-seen:
		if diff := cmp.Diff([]string{"user:你好", "assistant/stop:好"}, got); diff != "" {
			t.Errorf("run_end seen by the second subscriber after the first changed its copy (-want +got):\n%s", diff)
		}
	default:
		t.Fatal("the second subscriber never got run_end")
	}
	if diff := cmp.Diff([]string{"user:你好", "assistant/stop:好"}, ch09Lines(st.Messages)); diff != "" {
		t.Errorf("state transcript after a subscriber changed its copy of run_end (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"subscriber 1 panicked on run_end: 改完就崩"}, st.SubscriberErrors); diff != "" {
		t.Errorf("subscriber errors (-want +got):\n%s", diff)
	}
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
