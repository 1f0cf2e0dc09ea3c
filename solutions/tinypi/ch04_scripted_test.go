package tinypi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"
)

// Focused tests of chapter 04 (scripted model). Every call into lab code goes through
// callLab, so a lab that is still a stub fails its own tests with its pending message.

// ch04Run sends one request and reads the whole response: its events in order and its result.
func ch04Run(t *testing.T, ctx context.Context, m *ScriptedModel, req Request) ([]AssistantEvent, AssistantMessage) {
	t.Helper()
	stream := callLab(t, func() *AssistantStream { return m.Stream(ctx, req) })
	var events []AssistantEvent
	for e := range stream.All() {
		events = append(events, e)
	}
	result, err := stream.Result()
	if err != nil {
		t.Fatalf("Result() error = %v; a scripted response must end with done or error", err)
	}
	return events, result
}

// ch04Requests reads the recorded requests through the lab code.
func ch04Requests(t *testing.T, m *ScriptedModel) []Request {
	t.Helper()
	return callLab(t, m.Requests)
}

// ch04SendBeyondScript sends a request the script has no answer for and ignores the response:
// lab 4.2 is about what was recorded, and the response is lab 4.3's, which may still be a stub.
func ch04SendBeyondScript(t *testing.T, m *ScriptedModel, req Request) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			if strings.Contains(fmt.Sprint(p), "Lab 4.3 ") {
				return // the record was made before the response was built
			}
			failOnPanic(t, p)
		}
	}()
	m.Stream(context.Background(), req)
}

func ch04Ask(text string) Request {
	return Request{SystemPrompt: "你是 tinypi。", Messages: []Message{UserText(text)}}
}

func TestLab4_1_内容顺序_事件序列(t *testing.T) {
	call := ToolCall{ID: "call-1", Name: "read", Arguments: `{"path":"README.md"}`}
	msg := AssistantMessage{
		Content: []ContentBlock{
			ThinkingContent{Thinking: "需要先看 README。"},
			Text("我先读取项目说明。"),
			call,
			Text("稍等。"),
		},
		StopReason: StopReasonToolUse,
		ID:         "resp-1",
		Model:      "scripted",
	}
	m := NewScriptedModel(msg, AssistantMessage{StopReason: StopReasonStop})

	events, _ := ch04Run(t, context.Background(), m, ch04Ask("请读取 README.md。"))
	want := []AssistantEvent{
		StartEvent{},
		ThinkingDeltaEvent{ContentIndex: 0, Delta: "需要先看 README。"},
		TextDeltaEvent{ContentIndex: 1, Delta: "我先读取项目说明。"},
		ToolCallDeltaEvent{ContentIndex: 2, Delta: `{"path":"README.md"}`},
		ToolCallEndEvent{ContentIndex: 2, ToolCall: call},
		TextDeltaEvent{ContentIndex: 3, Delta: "稍等。"},
		DoneEvent{Message: msg},
	}
	if got, wantTypes := ch04Types(events), ch04Types(want); !slices.Equal(got, wantTypes) {
		t.Errorf("event types of a toolUse response = %v, want %v", got, wantTypes)
	}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events of a toolUse response (-want +got):\n%s", diff)
	}

	// A message without content still opens and closes its stream.
	events, _ = ch04Run(t, context.Background(), m, ch04Ask("再来一次。"))
	want = []AssistantEvent{StartEvent{}, DoneEvent{Message: AssistantMessage{StopReason: StopReasonStop}}}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events of an empty stop response (-want +got):\n%s", diff)
	}
}

func TestLab4_1_内容顺序_结果等于脚本(t *testing.T) {
	script := []AssistantMessage{
		{
			Content:    []ContentBlock{Text("我先读取项目说明。"), ToolCall{ID: "call-1", Name: "read", Arguments: `{"path":"README.md"}`}},
			StopReason: StopReasonToolUse,
			Usage:      Usage{Input: 12, Output: 7, Total: 19},
		},
		{
			Content:    []ContentBlock{ToolCall{ID: "call-2", Name: "write", Arguments: `{"path":"a.txt","con`}},
			StopReason: StopReasonLength,
		},
		{
			Content:    []ContentBlock{ThinkingContent{Thinking: "README 第一行是标题。"}, Text("项目名是 tiny-pi。")},
			StopReason: StopReasonStop,
			ID:         "resp-3",
			Model:      "scripted",
			Timestamp:  3,
		},
	}
	m := NewScriptedModel(script...)
	for i, want := range script {
		events, got := ch04Run(t, context.Background(), m, ch04Ask(fmt.Sprintf("第 %d 次请求", i+1)))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("request %d: result (-want +got):\n%s", i+1, diff)
		}
		// stop, toolUse and length are all completed responses: they end with done.
		if last := events[len(events)-1]; last.EventType() != "done" {
			t.Errorf("request %d (stop reason %s): last event is %q, want \"done\"", i+1, want.StopReason, last.EventType())
		}
	}
}

// ch04DeepRequest builds a request with every kind of nested value a caller could change later.
func ch04DeepRequest() Request {
	return Request{
		SystemPrompt: "你是 tinypi。",
		Messages: []Message{
			UserMessage{Content: []ContentBlock{Text("请读取 README.md。")}, Timestamp: 1},
			AssistantMessage{
				Content:    []ContentBlock{ToolCall{ID: "call-1", Name: "read", Arguments: `{"path":"README.md"}`}},
				StopReason: StopReasonToolUse,
			},
			ToolResultMessage{
				ToolCallID: "call-1",
				ToolName:   "read",
				Content:    []ContentBlock{Text("# tiny-pi")},
				Details:    map[string]any{"lines": []any{1.0, 2.0}, "file": map[string]any{"path": "README.md"}},
			},
		},
		Tools: []ToolDefinition{{Name: "read", Description: "读取文件", Parameters: `{"type":"object"}`}},
	}
}

// ch04Scribble changes every nested value of a request built by ch04DeepRequest in place.
func ch04Scribble(r Request) {
	r.Messages[0].(UserMessage).Content[0] = Text("被改掉了")
	r.Messages[1].(AssistantMessage).Content[0] = Text("被改掉了")
	result := r.Messages[2].(ToolResultMessage)
	result.Content[0] = Text("被改掉了")
	result.Details["lines"].([]any)[0] = 99.0
	result.Details["file"].(map[string]any)["path"] = "/etc/passwd"
	result.Details["extra"] = true
	r.Messages[0] = UserText("整条换掉")
	r.Tools[0].Name = "bash"
}

func TestLab4_2_记录请求_按序计数(t *testing.T) {
	m := NewScriptedModel(
		AssistantMessage{StopReason: StopReasonStop},
		AssistantMessage{StopReason: StopReasonStop},
	)
	if got := ch04Requests(t, m); len(got) != 0 || m.Calls() != 0 {
		t.Fatalf("before any request: Requests() = %v, Calls() = %d; want none", got, m.Calls())
	}
	sent := []Request{
		ch04Ask("第一次"),
		{SystemPrompt: "另一个系统提示", Messages: []Message{UserText("第二次")}, Tools: []ToolDefinition{{Name: "read"}, {Name: "write"}}},
		ch04DeepRequest(), // the script has run out: answered with an error, and still recorded
	}
	for _, req := range sent[:2] {
		ch04Run(t, context.Background(), m, req)
	}
	ch04SendBeyondScript(t, m, sent[2])
	recorded := ch04Requests(t, m)
	if len(recorded) != len(sent) {
		t.Errorf("Requests() holds %d requests after %d calls (the last one after the script ran out); every request received is recorded",
			len(recorded), len(sent))
	}
	// A nil slice and an empty one mean the same here: either copy of a missing tool list is right.
	if diff := cmp.Diff(sent, recorded, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("recorded requests (-sent +recorded):\n%s", diff)
	}
	if got := m.Calls(); got != len(sent) {
		t.Errorf("Calls() = %d, want %d", got, len(sent))
	}
}

func TestLab4_2_记录请求_调用者改动(t *testing.T) {
	m := NewScriptedModel(AssistantMessage{StopReason: StopReasonStop})
	req := ch04DeepRequest()
	ch04Run(t, context.Background(), m, req)

	// The caller reuses its request after the call: the record must not follow.
	ch04Scribble(req)
	got := ch04Requests(t, m)
	if len(got) != 1 {
		t.Fatalf("Requests() holds %d requests after one call, want 1", len(got))
	}
	want := ch04DeepRequest()
	if diff := cmp.Diff(want.Messages, got[0].Messages); diff != "" {
		t.Fatalf("after the caller changed its request, the recorded messages changed too (-sent +recorded):\n%s", diff)
	}
	if diff := cmp.Diff(want.Tools, got[0].Tools); diff != "" {
		t.Fatalf("after the caller changed its request, the recorded tools changed too (-sent +recorded):\n%s", diff)
	}

	// Whoever reads the record may change what it got without changing the record.
	ch04Scribble(got[0])
	again := ch04Requests(t, m)
	if diff := cmp.Diff(want.Messages, again[0].Messages); diff != "" {
		t.Errorf("changing the messages returned by Requests() changed the record (-sent +recorded):\n%s", diff)
	}
	if diff := cmp.Diff(want.Tools, again[0].Tools); diff != "" {
		t.Errorf("changing the tools returned by Requests() changed the record (-sent +recorded):\n%s", diff)
	}
}

// ch04Gate is a ScriptedModel's lock as the test sees it: while armed, the second Lock call
// waits until the test lets it go, after saying so on waiting. A model that counts, records and
// chooses in one hold takes the lock once per request, and is never held up.
type ch04Gate struct {
	mu      sync.Mutex
	state   sync.Mutex // guards calls and armed
	calls   int
	armed   bool
	waiting chan struct{}
	release chan struct{}
}

func (g *ch04Gate) Lock() {
	g.state.Lock()
	g.calls++
	hold := g.armed && g.calls == 2
	g.state.Unlock()
	if hold {
		g.waiting <- struct{}{}
		<-g.release
	}
	g.mu.Lock()
}

func (g *ch04Gate) Unlock() { g.mu.Unlock() }

func (g *ch04Gate) disarm() {
	g.state.Lock()
	g.armed = false
	g.state.Unlock()
}

func TestLab4_2_记录请求_一次加锁(t *testing.T) {
	defer goleak.VerifyNone(t)
	m := NewScriptedModel(
		AssistantMessage{Content: []ContentBlock{Text("回答一")}, StopReason: StopReasonStop},
		AssistantMessage{Content: []ContentBlock{Text("回答二")}, StopReason: StopReasonStop},
	)
	gate := &ch04Gate{armed: true, waiting: make(chan struct{}), release: make(chan struct{})}
	m.mu = gate

	// The first caller's request. A model that takes the lock a second time for it is held up
	// there, and a second caller is served in between, as another goroutine could be at any time.
	first := []Message{UserText("第一个请求")}
	type outcome struct {
		answer   string
		panicked any
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{panicked: p}
			}
		}()
		result, _ := m.Stream(context.Background(), Request{Messages: first}).Result()
		done <- outcome{answer: TextOf(result.Content)}
	}()
	var firstAnswer string
	heldUp := false
	select {
	case o := <-done:
		if o.panicked != nil {
			callLab(t, func() any { panic(o.panicked) })
		}
		firstAnswer = o.answer
		gate.disarm()
	case <-gate.waiting:
		heldUp = true
		// While it waits, its caller's message changes: a record copied before this second hold
		// keeps the first text, one copied during it shows the new one.
		first[0] = UserText("第一个请求（等第二次加锁时改过）")
	}
	_, second := ch04Run(t, context.Background(), m, Request{Messages: []Message{UserText("第二个请求")}})
	if heldUp {
		close(gate.release)
		o := <-done
		if o.panicked != nil {
			callLab(t, func() any { panic(o.panicked) })
		}
		firstAnswer = o.answer
	}

	var recorded []string
	for _, req := range ch04Requests(t, m) {
		recorded = append(recorded, TextOf(req.Messages[0].(UserMessage).Content))
	}
	got := fmt.Sprintf("recorded %q; the first caller was answered %q, the second %q", recorded, firstAnswer, TextOf(second.Content))
	want := `recorded ["第一个请求" "第二个请求"]; the first caller was answered "回答一", the second "回答二"`
	if got != want {
		t.Fatalf("%s; want %s: count, record and choose the answer in one hold of the lock, so that the i-th record is the request that got the i-th answer", got, want)
	}
}

func TestLab4_2_记录请求_并发(t *testing.T) {
	// The check with the wide window first, so that its message is the first failure.
	t.Run("counted means recorded", ch04CountedMeansRecorded)
	t.Run("sixteen callers", ch04SixteenCallers)
}

// ch04SixteenCallers sends 16 requests at once and checks that the i-th recorded request is
// the one that got the i-th scripted answer.
func ch04SixteenCallers(t *testing.T) {
	defer goleak.VerifyNone(t)
	const n = 16
	script := make([]AssistantMessage, n)
	for i := range script {
		script[i] = AssistantMessage{Content: []ContentBlock{Text(fmt.Sprint("answer ", i))}, StopReason: StopReasonStop}
	}
	m := NewScriptedModel(script...)

	// Each goroutine remembers which answer its prompt got. A panic (a stub) is carried back to
	// the test goroutine, because t.Fatal must not be called from another goroutine.
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		answer  = map[string]string{} // system prompt → answer text
		panicky any
	)
	for i := range n {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					mu.Lock()
					panicky = p
					mu.Unlock()
				}
			}()
			prompt := fmt.Sprint("prompt ", i)
			result, err := m.Stream(context.Background(), Request{SystemPrompt: prompt}).Result()
			if err != nil {
				panic(err)
			}
			mu.Lock()
			answer[prompt] = TextOf(result.Content)
			mu.Unlock()
		})
	}
	wg.Wait()
	if panicky != nil {
		callLab(t, func() any { panic(panicky) })
	}

	recorded := ch04Requests(t, m)
	if len(recorded) != n || m.Calls() != n {
		t.Fatalf("recorded %d requests, Calls() = %d; want %d of each", len(recorded), m.Calls(), n)
	}
	// Recording and choosing the response are one step: the i-th recorded request is the one
	// that was answered with the i-th scripted message.
	for i, req := range recorded {
		if got, want := answer[req.SystemPrompt], fmt.Sprint("answer ", i); got != want {
			t.Errorf("recorded request %d (%q) was answered with %q, want %q", i+1, req.SystemPrompt, got, want)
		}
	}
}

// ch04CountedMeansRecorded checks that a request is counted and recorded in one step. Its
// request is large, so copying it takes a while: a model that copies it after counting, outside
// the lock, shows a counted request that is not recorded yet. Whether this goroutine looks while
// the copy runs is up to the scheduler, and on a busy machine one look can miss it; so the
// scenario is repeated, each time with a new model, ch04CountAttempts times or until one shows
// the mistake. Together the attempts do not miss it; a correct model passes every one.
func ch04CountedMeansRecorded(t *testing.T) {
	defer goleak.VerifyNone(t)
	details := make(map[string]any, 1<<15)
	for i := range 1 << 15 {
		details[strconv.Itoa(i)] = true
	}
	big := Request{SystemPrompt: "big", Messages: []Message{ToolResultMessage{
		ToolCallID: "call-1", ToolName: "read", Details: details,
	}}}
	for range ch04CountAttempts {
		if !ch04CountedMeansRecordedOnce(t, big) {
			return
		}
	}
}

// ch04CountAttempts is how often ch04CountedMeansRecorded tries to look inside the copy.
const ch04CountAttempts = 10

// ch04CountedMeansRecordedOnce sends big to a new model and looks at the record as soon as the
// request is counted. It reports whether the model passed.
func ch04CountedMeansRecordedOnce(t *testing.T, big Request) bool {
	t.Helper()
	m := NewScriptedModel(AssistantMessage{StopReason: StopReasonStop})
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		m.Stream(context.Background(), big)
	}()
	// Wait until the model reports the request as counted (or the call is over). The loop keeps
	// this goroutine running, so that it looks at the record as soon as the count changes.
	for m.Calls() == 0 {
		select {
		case p := <-done:
			if p != nil {
				callLab(t, func() any { panic(p) })
			}
			if m.Calls() == 0 {
				t.Fatal("Stream returned and Calls() = 0: every request received is counted")
			}
			done <- nil // counted just now; the wait below takes this back
		default:
		}
	}
	n := len(ch04Requests(t, m))
	if n != 1 {
		t.Errorf("Calls() = 1 but Requests() holds %d requests: count and record each request in one step, under the lock that chooses its response", n)
	}
	if p := <-done; p != nil {
		callLab(t, func() any { panic(p) })
	}
	return n == 1
}

func TestLab4_3_失败终态_错误与中止(t *testing.T) {
	for _, reason := range []StopReason{StopReasonError, StopReasonAborted} {
		t.Run(string(reason), func(t *testing.T) {
			msg := AssistantMessage{
				Content:      []ContentBlock{Text("项目名是")},
				StopReason:   reason,
				ErrorMessage: "provider: connection reset",
				Usage:        Usage{Input: 12, Output: 3, Total: 15},
				ID:           "resp-1",
				Model:        "scripted",
				Timestamp:    7,
			}
			m := NewScriptedModel(msg)
			events, result := ch04Run(t, context.Background(), m, ch04Ask("项目名是什么？"))
			if got, want := ch04Types(events), []string{"start", "text_delta", "error"}; !slices.Equal(got, want) {
				t.Fatalf("event types = %v, want %v", got, want)
			}
			if diff := cmp.Diff(ErrorEvent{Message: msg}, events[2]); diff != "" {
				t.Errorf("the error event does not carry the scripted message (-want +got):\n%s\ncarry the message itself, with its ID, model and usage; do not build a new one", diff)
			}
			if diff := cmp.Diff(TextDeltaEvent{ContentIndex: 0, Delta: "项目名是"}, events[1]); diff != "" {
				t.Errorf("delta (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(msg, result); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLab4_3_失败终态_脚本耗尽(t *testing.T) {
	m := NewScriptedModel(AssistantMessage{Content: []ContentBlock{Text("只有一句。")}, StopReason: StopReasonStop})
	ch04Run(t, context.Background(), m, ch04Ask("第一次"))
	for number := 2; number <= 3; number++ {
		events, result := ch04Run(t, context.Background(), m, ch04Ask(fmt.Sprint("第 ", number, " 次")))
		if len(events) != 1 || events[0].EventType() != "error" {
			t.Fatalf("request %d after the script ran out: events %v, want exactly one error event", number, ch04Types(events))
		}
		if result.StopReason != StopReasonError || len(result.Content) != 0 {
			t.Errorf("request %d: result stop reason %q with %d blocks, want %q and no content",
				number, result.StopReason, len(result.Content), StopReasonError)
		}
		if want := fmt.Sprintf("request %d", number); !strings.Contains(result.ErrorMessage, want) {
			t.Errorf("request %d: ErrorMessage = %q, want it to name %q", number, result.ErrorMessage, want)
		}
	}
	if got := m.Calls(); got != 3 {
		t.Errorf("Calls() = %d, want 3: a request the script cannot answer still counts", got)
	}
}

func ch04Types(events []AssistantEvent) []string {
	types := make([]string, len(events))
	for i, e := range events {
		types[i] = e.EventType()
	}
	return types
}

func TestLab4_4_预先取消_中止事件(t *testing.T) {
	m := NewScriptedModel(
		AssistantMessage{Content: []ContentBlock{Text("不该出现")}, StopReason: StopReasonStop, ID: "resp-1", Model: "scripted"},
		AssistantMessage{Content: []ContentBlock{Text("第二条")}, StopReason: StopReasonStop},
	)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	events, result := ch04Run(t, ctx, m, ch04Ask("请读取 README.md。"))
	if len(events) != 1 || events[0].EventType() != "error" {
		t.Fatalf("pre-cancelled request: events %v, want exactly one error event (no start, no deltas)", ch04Types(events))
	}
	if result.StopReason != StopReasonAborted {
		t.Errorf("result stop reason = %q, want %q", result.StopReason, StopReasonAborted)
	}
	if len(result.Content) != 0 {
		t.Errorf("result content = %v, want none: nothing was streamed", result.Content)
	}
	if result.ID != "resp-1" || result.Model != "scripted" {
		t.Errorf("result ID, Model = %q, %q; want \"resp-1\", \"scripted\": the aborted message keeps the scripted message's ID and model", result.ID, result.Model)
	}
	if !strings.Contains(result.ErrorMessage, "cancel") {
		t.Errorf("ErrorMessage = %q, want it to say the request was cancelled", result.ErrorMessage)
	}

	// The cancelled request was still received and used up the first scripted message.
	if got := m.Calls(); got != 1 {
		t.Errorf("Calls() = %d, want 1", got)
	}
	_, next := ch04Run(t, context.Background(), m, ch04Ask("再试一次"))
	if got := TextOf(next.Content); got != "第二条" {
		t.Errorf("the request after a cancelled one got %q, want the second scripted message", got)
	}
}

func TestLab4_4_预先取消_说明原因(t *testing.T) {
	withCause, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("用户按下了停止"))
	expired, stop := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer stop()

	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"cause", withCause, "用户按下了停止"},
		{"deadline", expired, context.DeadlineExceeded.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewScriptedModel(AssistantMessage{Content: []ContentBlock{Text("不该出现")}, StopReason: StopReasonStop})
			events, result := ch04Run(t, tc.ctx, m, ch04Ask("请读取 README.md。"))
			if len(events) != 1 || result.StopReason != StopReasonAborted {
				t.Fatalf("events %v, stop reason %q; want one error event with stop reason %q",
					ch04Types(events), result.StopReason, StopReasonAborted)
			}
			if !strings.Contains(result.ErrorMessage, tc.want) {
				t.Errorf("ErrorMessage = %q, want it to carry the cancellation cause %q", result.ErrorMessage, tc.want)
			}
		})
	}
}
