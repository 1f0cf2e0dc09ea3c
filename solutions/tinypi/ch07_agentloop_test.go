package tinypi

// Focused tests of chapter 07, the agent loop. Each test belongs to one lab:
//
//	go test -run '^TestLab7_1_' .   完成纯文本 stop
//	go test -run '^TestLab7_2_' .   闭合单工具往返
//	go test -run '^TestLab7_3_' .   处理所有非执行终态
//	go test -run '^TestLab7_4_' .   隔离并发完成与单项失败
//	go test -run '^TestLab7_5_' .   处理取消与回合上限

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"
)

// --- the README round trip of the chapter text --------------------------------------------------

func ch07ReadResult() ToolResultMessage {
	return ToolResultMessage{
		ToolCallID: "call-1",
		ToolName:   "read",
		Content:    []ContentBlock{Text("# tiny-pi\nA small agent runtime.")},
		Timestamp:  3,
	}
}

// ch07ReadTool is the in-memory read tool: it reports progress, then returns the README.
// executions counts how often it ran.
type ch07ReadTool struct {
	mu         sync.Mutex
	executions int
	sawValue   []any
}

type ch07CtxKey struct{}

func (rt *ch07ReadTool) tool() Tool {
	return Tool{
		ToolDefinition: ToolDefinition{
			Name:        "read",
			Description: "Read a file of the workspace.",
			Parameters:  `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		},
		Execute: func(ctx context.Context, args json.RawMessage, exec ToolExecContext) (ToolOutput, error) {
			rt.mu.Lock()
			rt.executions++
			rt.sawValue = append(rt.sawValue, ctx.Value(ch07CtxKey{}))
			rt.mu.Unlock()
			exec.Progress(Text("reading README.md"))
			return ToolOutput{Content: ch07ReadResult().Content}, nil
		},
	}
}

func (rt *ch07ReadTool) count() int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.executions
}

// --- observing a run ---------------------------------------------------------------------------

// ch07Run calls RunAgentLoop. A lab that is not implemented yet panics with its message; the
// panic is turned into this test's failure so the other tests still run.
func ch07Run(t *testing.T, ctx context.Context, opts AgentLoopOptions) AgentRunResult {
	t.Helper()
	end := ch07Record(t, &opts)
	defer func() {
		if p := recover(); p != nil {
			end(AgentRunResult{}, fmt.Sprint(p))
			failOnPanic(t, p)
		}
	}()
	res, err := RunAgentLoop(ctx, opts)
	if err != nil {
		end(res, err.Error())
		t.Fatalf("RunAgentLoop returned error %v; errors are only for invalid options", err)
	}
	end(res, "")
	return res
}

// ch07Record records the run when the environment variable RunRecordDirEnv names a directory
// (`course test` sets it), so that `course transcript` can show this test's run next to the
// reference run. It wraps opts and returns the function that records how the run ended; the
// record is written when the test ends. Without the variable nothing changes.
func ch07Record(t *testing.T, opts *AgentLoopOptions) (end func(res AgentRunResult, errText string)) {
	dir := os.Getenv(RunRecordDirEnv)
	if dir == "" {
		return func(AgentRunResult, string) {}
	}
	rec := NewRunRecorder(t.Name())
	*opts = rec.Wrap(*opts)
	t.Cleanup(func() {
		// A record that cannot be written must not change the test's outcome.
		if err := WriteRunRecord(dir, rec.Record(t.Failed())); err != nil {
			t.Logf("run record not written: %v", err)
		}
	})
	return rec.End
}

// ch07Cmp compares transcripts; timestamps of results made by the loop or the executor are
// wall-clock times, so tool result timestamps are ignored.
var ch07Cmp = []cmp.Option{cmpopts.IgnoreFields(ToolResultMessage{}, "Timestamp"), cmpopts.EquateEmpty()}

func ch07Roles(messages []Message) string {
	roles := make([]string, len(messages))
	for i, m := range messages {
		if m == nil {
			roles[i] = "<nil>"
			continue
		}
		roles[i] = string(m.MessageRole())
	}
	return strings.Join(roles, " → ")
}

// ch07CountingExecutor counts executions; it answers every call with a plain result.
type ch07CountingExecutor struct {
	mu    sync.Mutex
	calls []string
}

func (ce *ch07CountingExecutor) execute(ctx context.Context, call ToolCall, exec ToolExecContext) (ToolResultMessage, error) {
	ce.mu.Lock()
	ce.calls = append(ce.calls, call.ID)
	ce.mu.Unlock()
	return ToolResultMessage{ToolCallID: call.ID, ToolName: call.Name, Content: []ContentBlock{Text("ran " + call.ID)}}, nil
}

func (ce *ch07CountingExecutor) count() int {
	ce.mu.Lock()
	defer ce.mu.Unlock()
	return len(ce.calls)
}

// ch07CheckPaired asserts that every tool call in the transcript has a result with its ID.
func ch07CheckPaired(t *testing.T, messages []Message) {
	t.Helper()
	results := map[string]bool{}
	for _, m := range messages {
		if r, ok := m.(ToolResultMessage); ok {
			results[r.ToolCallID] = true
		}
	}
	for _, m := range messages {
		if a, ok := m.(AssistantMessage); ok {
			for _, call := range a.ToolCalls() {
				if !results[call.ID] {
					t.Errorf("tool call %s has no tool result with the same id", call.ID)
				}
			}
		}
	}
}

// ch07Latch is a signal that any goroutine may give, any number of times; waiters see the
// first.
type ch07Latch struct {
	once sync.Once
	ch   chan struct{}
}

func newCh07Latch() *ch07Latch { return &ch07Latch{ch: make(chan struct{})} }

func (l *ch07Latch) open() { l.once.Do(func() { close(l.ch) }) }

// wait blocks until the latch is open and reports true, or gives up after the guard and reports
// false. The guard only ends a test that would otherwise hang on a wrong solution; a correct
// one never meets it.
func (l *ch07Latch) wait() bool {
	select {
	case <-l.ch:
		return true
	case <-time.After(ch07Guard):
		return false
	}
}

// ch07Guard bounds every wait of a test double for something the loop must do.
const ch07Guard = 10 * time.Second

// --- Lab 7.1 -----------------------------------------------------------------------------------

func TestLab7_1_纯文本Stop(t *testing.T) {
	defer goleak.VerifyNone(t)
	read := &ch07ReadTool{}
	registry := MustRegistry(read.tool())
	model := NewScriptedModel(ch07FinalAnswer())
	rec := newCh07Recorder()

	// The caller's slice has spare capacity: a loop that appends to it instead of to its own
	// copy would write into the caller's array.
	input := make([]Message, 1, 8)
	copy(input, ch07Input())
	stale := ToolDefinition{Name: "stale", Description: "left over in the context; never sent"}
	res := ch07Run(t, context.Background(), AgentLoopOptions{
		Context: AgentContext{SystemPrompt: "你是 tinypi。", Messages: input, Tools: []ToolDefinition{stale}},
		Model:   model,
		Tools:   registry,
		OnEvent: rec.onEvent,
	})

	if res.Reason != RunStop || res.Steps != 1 {
		t.Errorf("result = %s/%d steps, want stop/1", res.Reason, res.Steps)
	}
	rec.checkOneTurnEnd(t, res)
	want := []Message{ch07Input()[0], ch07FinalAnswer()}
	if diff := cmp.Diff(want, res.Messages, ch07Cmp...); diff != "" {
		t.Errorf("result messages (-want +got):\n%s", diff)
	}
	if got := model.Calls(); got != 1 {
		t.Errorf("model requests = %d, want 1", got)
	}
	wantReq := []Request{{SystemPrompt: "你是 tinypi。", Messages: ch07Input(), Tools: registry.Definitions()}}
	if diff := cmp.Diff(wantReq, model.Requests(), ch07Cmp...); diff != "" {
		t.Errorf("model request (-want +got): system prompt, local messages and the registry's definitions (never the context's tools):\n%s", diff)
	}
	wantKinds := []string{"model_event:start", "model_event:text_delta", "model_event:done/stop", "assistant_message:stop", "turn_end:stop/1"}
	if diff := cmp.Diff(wantKinds, rec.kinds()); diff != "" {
		t.Errorf("events (-want +got): every model event forwarded, then assistant_message and one turn_end:\n%s", diff)
	}

	// Input ownership: the caller's messages are unchanged, also beyond their length, and the
	// result does not share content with them.
	if diff := cmp.Diff(append(ch07Input(), make([]Message, 7)...), input[:cap(input)]); diff != "" {
		t.Errorf("the caller's messages were modified (-want +got):\n%s", diff)
	}
	if len(res.Messages) > 0 {
		if u, ok := res.Messages[0].(UserMessage); ok && len(u.Content) > 0 {
			u.Content[0] = Text("changed by the caller of the result")
		}
	}
	if diff := cmp.Diff(ch07Input(), input[:1]); diff != "" {
		t.Errorf("changing the result changed the input: the loop must work on a deep copy (-want +got):\n%s", diff)
	}

	t.Run("nested details are not shared", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		// An earlier round trip is part of the input: its tool result has nested details.
		history := func() []Message {
			return []Message{
				UserMessage{Content: []ContentBlock{Text("README.md 有多大？")}, Timestamp: 1},
				AssistantMessage{Content: []ContentBlock{ToolCall{ID: "call-0", Name: "read", Arguments: `{"path":"README.md"}`}}, StopReason: StopReasonToolUse, Timestamp: 2},
				ToolResultMessage{
					ToolCallID: "call-0", ToolName: "read",
					Content:   []ContentBlock{Text("# tiny-pi")},
					Details:   map[string]any{"stat": map[string]any{"size": 12.0, "lines": []any{"# tiny-pi"}}},
					Timestamp: 3,
				},
				UserMessage{Content: []ContentBlock{Text(ch07Question)}, Timestamp: 4},
			}
		}
		input := history()
		res := ch07Run(t, context.Background(), AgentLoopOptions{
			Context: AgentContext{Messages: input},
			Model:   NewScriptedModel(ch07FinalAnswer()),
			Tools:   MustRegistry(),
		})
		if len(res.Messages) < 3 {
			t.Fatalf("transcript roles = %s, want the input followed by the answer", ch07Roles(res.Messages))
		}
		result, ok := res.Messages[2].(ToolResultMessage)
		if !ok {
			t.Fatalf("transcript message 3 = %T, want the input's tool result", res.Messages[2])
		}
		if stat, ok := result.Details["stat"].(map[string]any); ok {
			stat["size"] = 0.0
			if lines, ok := stat["lines"].([]any); ok && len(lines) > 0 {
				lines[0] = "changed by the caller of the result"
			}
		}
		if diff := cmp.Diff(history(), input); diff != "" {
			t.Errorf("changing the details of a result's tool result changed the input: copy details all the way down (-want +got):\n%s", diff)
		}
	})
}

// --- Lab 7.2 -----------------------------------------------------------------------------------

// ch07AppendingModel appends a note of its own to the messages of every request it receives and
// keeps the result, as a model that builds its own history from the request might.
type ch07AppendingModel struct {
	inner Model
	mu    sync.Mutex
	kept  [][]Message
}

func (m *ch07AppendingModel) Stream(ctx context.Context, req Request) *AssistantStream {
	own := append(req.Messages, UserMessage{Content: []ContentBlock{Text("the model's own note")}})
	m.mu.Lock()
	m.kept = append(m.kept, own)
	m.mu.Unlock()
	return m.inner.Stream(ctx, req)
}

// ch07RoundTrip is the script of one tool call followed by the final answer.
func ch07RoundTrip(call ToolCall) *ScriptedModel {
	return NewScriptedModel(AssistantMessage{Content: []ContentBlock{call}, StopReason: StopReasonToolUse, Timestamp: 2}, ch07FinalAnswer())
}

// ch07ResultOf returns the tool result for call id in messages, and whether there is one.
func ch07ResultOf(messages []Message, id string) (ToolResultMessage, bool) {
	for _, m := range messages {
		if r, ok := m.(ToolResultMessage); ok && r.ToolCallID == id {
			return r, true
		}
	}
	return ToolResultMessage{}, false
}

func TestLab7_2_单工具往返(t *testing.T) {
	defer goleak.VerifyNone(t)
	read := &ch07ReadTool{}
	registry := MustRegistry(read.tool())
	model := NewScriptedModel(ch07FirstAnswer(), ch07FinalAnswer())
	rec := newCh07Recorder()
	ctx := context.WithValue(context.Background(), ch07CtxKey{}, "the run's context")

	res := ch07Run(t, ctx, AgentLoopOptions{
		Context: AgentContext{SystemPrompt: "你是 tinypi。", Messages: ch07Input()},
		Model:   model,
		Tools:   registry, // no injected executor: the registry runs the call
		OnEvent: rec.onEvent,
	})

	if res.Reason != RunStop || res.Steps != 2 {
		t.Errorf("result = %s/%d steps, want stop/2", res.Reason, res.Steps)
	}
	if got := model.Calls(); got != 2 {
		t.Fatalf("model requests = %d, want 2", got)
	}
	if got := read.count(); got != 1 {
		t.Errorf("read executions = %d, want 1", got)
	}
	read.mu.Lock()
	if len(read.sawValue) == 1 && read.sawValue[0] != "the run's context" {
		t.Errorf("the tool did not receive the run's context (value %v)", read.sawValue[0])
	}
	read.mu.Unlock()

	// The second request sees the call and its paired result.
	second := model.Requests()[1]
	wantSecond := []Message{ch07Input()[0], ch07FirstAnswer(), ch07ReadResult()}
	if diff := cmp.Diff(wantSecond, second.Messages, ch07Cmp...); diff != "" {
		t.Errorf("second request messages (-want +got), want user → assistant → toolResult:\n%s", diff)
	}
	if diff := cmp.Diff(registry.Definitions(), second.Tools); diff != "" {
		t.Errorf("second request tools (-want +got):\n%s", diff)
	}
	want := append(wantSecond, ch07FinalAnswer())
	if diff := cmp.Diff(want, res.Messages, ch07Cmp...); diff != "" {
		t.Errorf("transcript (-want +got), want user → assistant → toolResult → assistant:\n%s", diff)
	}

	wantKinds := []string{
		"model_event:start", "model_event:text_delta", "model_event:toolcall_delta", "model_event:toolcall_end",
		"model_event:done/toolUse", "assistant_message:toolUse",
		"tool_start:call-1", "tool_progress:call-1", "tool_end:call-1",
		"model_event:start", "model_event:text_delta", "model_event:done/stop", "assistant_message:stop",
		"turn_end:stop/2",
	}
	if diff := cmp.Diff(wantKinds, rec.kinds()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for _, e := range rec.snapshot() {
		if p, ok := e.(ToolProgressEvent); ok {
			if diff := cmp.Diff([]ContentBlock{Text("reading README.md")}, p.Content); diff != "" {
				t.Errorf("tool_progress content (-want +got):\n%s", diff)
			}
		}
	}
	rec.checkOneTurnEnd(t, res)

	t.Run("unknown tool", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		res := ch07Run(t, context.Background(), AgentLoopOptions{
			Context: AgentContext{Messages: ch07Input()},
			Model:   ch07RoundTrip(ToolCall{ID: "call-1", Name: "nope", Arguments: `{}`}),
			Tools:   MustRegistry((&ch07ReadTool{}).tool()),
		})
		got, _ := ch07ResultOf(res.Messages, "call-1")
		want := ToolResultMessage{ToolCallID: "call-1", ToolName: "nope", Content: []ContentBlock{Text("Tool nope not found")}, IsError: true}
		if diff := cmp.Diff(want, got, ch07Cmp...); diff != "" {
			t.Errorf("result of a call to an unknown tool (-want +got): the default executor runs ExecuteToolCall, which looks the tool up:\n%s", diff)
		}
		if res.Reason != RunStop || res.Steps != 2 {
			t.Errorf("result = %s/%d steps, want stop/2: an unknown tool is the model's mistake, not the run's end", res.Reason, res.Steps)
		}
	})

	t.Run("arguments that fail the schema", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		read := &ch07ReadTool{}
		res := ch07Run(t, context.Background(), AgentLoopOptions{
			Context: AgentContext{Messages: ch07Input()},
			Model:   ch07RoundTrip(ToolCall{ID: "call-1", Name: "read", Arguments: `{"path":42}`}),
			Tools:   MustRegistry(read.tool()),
		})
		if got := read.count(); got != 0 {
			t.Errorf("read executions = %d, want 0: arguments that fail the schema never reach the tool (the default executor runs ExecuteToolCall)", got)
		}
		got, ok := ch07ResultOf(res.Messages, "call-1")
		if !ok || !got.IsError || !strings.HasPrefix(TextOf(got.Content), `Validation failed for tool "read"`) {
			t.Errorf("result of a call with invalid arguments = %q (isError %v), want an error result starting %q", TextOf(got.Content), got.IsError, `Validation failed for tool "read"`)
		}
	})

	t.Run("the executor's result answers its call", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		model := NewScriptedModel(
			AssistantMessage{Content: []ContentBlock{ch07ReadCall()}, StopReason: StopReasonToolUse},
			AssistantMessage{Content: []ContentBlock{ToolCall{ID: "call-2", Name: "read", Arguments: `{"path":"go.mod"}`}}, StopReason: StopReasonToolUse},
			ch07FinalAnswer(),
		)
		// An injected executor that gets the ids wrong: another call's id, then none at all.
		executor := func(_ context.Context, call ToolCall, _ ToolExecContext) (ToolResultMessage, error) {
			if call.ID == "call-1" {
				return ToolResultMessage{ToolCallID: "call-9", ToolName: "write", Content: []ContentBlock{Text("first")}}, nil
			}
			return ToolResultMessage{Content: []ContentBlock{Text("second")}}, nil
		}
		res := ch07Run(t, context.Background(), AgentLoopOptions{
			Context:         AgentContext{Messages: ch07Input()},
			Model:           model,
			Tools:           MustRegistry(),
			ExecuteToolCall: executor,
		})
		for _, want := range []ToolResultMessage{
			{ToolCallID: "call-1", ToolName: "read", Content: []ContentBlock{Text("first")}},
			{ToolCallID: "call-2", ToolName: "read", Content: []ContentBlock{Text("second")}},
		} {
			got, ok := ch07ResultOf(res.Messages, want.ToolCallID)
			if !ok {
				t.Errorf("tool call %s has no result: the result of an executor answers the call it was given (set its id and name from the call)", want.ToolCallID)
				continue
			}
			if diff := cmp.Diff(want, got, ch07Cmp...); diff != "" {
				t.Errorf("result of %s (-want +got):\n%s", want.ToolCallID, diff)
			}
		}
		if res.Reason != RunStop || res.Steps != 3 {
			t.Errorf("result = %s/%d steps, want stop/3", res.Reason, res.Steps)
		}
	})

	t.Run("a model that appends to its request", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		model := &ch07AppendingModel{inner: NewScriptedModel(ch07FirstAnswer(), ch07FinalAnswer())}
		ch07Run(t, context.Background(), AgentLoopOptions{
			Context: AgentContext{Messages: ch07Input()},
			Model:   model,
			Tools:   MustRegistry((&ch07ReadTool{}).tool()),
		})
		model.mu.Lock()
		defer model.mu.Unlock()
		for i, kept := range model.kept {
			if u, ok := kept[len(kept)-1].(UserMessage); !ok || TextOf(u.Content) != "the model's own note" {
				t.Errorf("request %d: what the model appended to the request's messages was overwritten by the loop: hand the model a clipped slice (slices.Clip)", i+1)
			}
		}
		if len(model.kept) != 2 {
			t.Errorf("model requests = %d, want 2", len(model.kept))
		}
	})

	t.Run("progress after the executor returned", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		release := newCh07Latch() // opened when the loop reports turn_end
		lateDone := make(chan struct{})
		late := Tool{
			ToolDefinition: ToolDefinition{Name: "late", Description: "Reports once while it runs and once more after it returned."},
			Execute: func(_ context.Context, _ json.RawMessage, exec ToolExecContext) (ToolOutput, error) {
				exec.Progress(Text("while running"))
				go func() { // left behind by the tool: reports after the tool returned
					defer close(lateDone)
					if release.wait() {
						exec.Progress(Text("after returning"))
					}
				}()
				return ToolOutput{Content: []ContentBlock{Text("started in the background")}}, nil
			},
		}
		rec := newCh07Recorder()
		rec.hook = func(e LoopEvent) {
			if _, ok := e.(TurnEndEvent); ok {
				release.open()
			}
		}
		res := ch07Run(t, context.Background(), AgentLoopOptions{
			Context: AgentContext{Messages: ch07Input()},
			Model:   ch07RoundTrip(ToolCall{ID: "call-1", Name: "late", Arguments: `{}`}),
			Tools:   MustRegistry(late),
			OnEvent: rec.onEvent,
		})
		release.open()
		select {
		case <-lateDone: // the late report has been made (and dropped, or delivered)
		case <-time.After(ch07Guard):
			t.Fatalf("the tool \"late\" never ran: a registry tool must run when the model calls it")
		}

		want := []string{"tool_start:call-1", "tool_progress:call-1", "tool_end:call-1"}
		if diff := cmp.Diff(want, rec.kindsWithPrefix("tool_")); diff != "" {
			t.Errorf("tool events (-want +got): progress reported after the executor returned must be dropped:\n%s", diff)
		}
		rec.checkOneTurnEnd(t, res)
	})
}

// --- Lab 7.3 -----------------------------------------------------------------------------------

// ch07RunTerminal runs one scripted assistant message (followed by a final answer the loop must
// never ask for) with a counting executor, and returns what the tests of lab 7.3 observe.
func ch07RunTerminal(t *testing.T, assistant AssistantMessage) (AgentRunResult, *ScriptedModel, *ch07CountingExecutor, *ch07Recorder) {
	t.Helper()
	model := NewScriptedModel(assistant, ch07FinalAnswer())
	exec := &ch07CountingExecutor{}
	rec := newCh07Recorder()
	res := ch07Run(t, context.Background(), AgentLoopOptions{
		Context:         AgentContext{Messages: ch07Input()},
		Model:           model,
		Tools:           MustRegistry((&ch07ReadTool{}).tool()),
		ExecuteToolCall: exec.execute,
		OnEvent:         rec.onEvent,
	})
	return res, model, exec, rec
}

// ch07SkipTexts are the texts of skipped results, by reason, spelled out.
var ch07SkipTexts = map[string]string{
	"length":          "Tool call was not executed because the model response was truncated.",
	"error":           "Tool call was not executed because the model response ended with an error.",
	"aborted":         "Tool call was not executed because the model response was aborted.",
	"unexpected-stop": "Tool call was not executed because the model stopped without asking for tool use.",
}

// ch07CheckSkipped checks the text and the error flag of the skipped result of each call of
// assistant, before the whole transcript is compared, so that the first failure names the part
// that is wrong.
func ch07CheckSkipped(t *testing.T, messages []Message, assistant AssistantMessage, reason string) {
	t.Helper()
	for _, call := range assistant.ToolCalls() {
		got, ok := ch07ResultOf(messages, call.ID)
		if !ok {
			continue // the transcript comparison reports it
		}
		if text := TextOf(got.Content); text != ch07SkipTexts[reason] {
			t.Errorf("skipped result text for reason %s = %q, want %q", reason, text, ch07SkipTexts[reason])
		}
		if !got.IsError {
			t.Errorf("skipped result of %s has isError false, want true: a call that did not run must not look like tool output", call.ID)
		}
		if got.Timestamp == 0 {
			t.Errorf("skipped result of %s has no timestamp: like every message it carries the time it was made", call.ID)
		}
	}
}

func TestLab7_3_非执行终态_Length(t *testing.T) {
	defer goleak.VerifyNone(t)
	truncated := AssistantMessage{
		Content: []ContentBlock{
			Text("我先读取两个文件。"),
			ch07ReadCall(),
			ToolCall{ID: "call-2", Name: "read", Arguments: `{"path":"go.m`},
		},
		StopReason: StopReasonLength,
		Timestamp:  2,
	}
	res, model, exec, rec := ch07RunTerminal(t, truncated)

	if got := exec.count(); got != 0 {
		t.Errorf("executor calls = %d, want 0: a truncated call must never run", got)
	}
	if res.Reason != RunLength || res.Steps != 1 {
		t.Errorf("result = %s/%d steps, want length/1", res.Reason, res.Steps)
	}
	if got := model.Calls(); got != 1 {
		t.Errorf("model requests = %d, want 1", got)
	}
	ch07CheckSkipped(t, res.Messages, truncated, "length")
	skipped := func(id string) ToolResultMessage {
		return ToolResultMessage{
			ToolCallID: id,
			ToolName:   "read",
			Content:    []ContentBlock{Text("Tool call was not executed because the model response was truncated.")},
			Details:    map[string]any{"skipped": true, "reason": "length"},
			IsError:    true,
		}
	}
	want := []Message{ch07Input()[0], truncated, skipped("call-1"), skipped("call-2")}
	if diff := cmp.Diff(want, res.Messages, ch07Cmp...); diff != "" {
		t.Errorf("transcript (-want +got):\n%s", diff)
	}
	wantKinds := []string{
		"model_event:start", "model_event:text_delta",
		"model_event:toolcall_delta", "model_event:toolcall_end",
		"model_event:toolcall_delta", "model_event:toolcall_end",
		"model_event:done/length", "assistant_message:length",
		"tool_skipped:call-1", "tool_skipped:call-2", "turn_end:length/1",
	}
	if diff := cmp.Diff(wantKinds, rec.kinds()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	rec.checkOneTurnEnd(t, res)
}

// ch07CutModel streams a start and a text delta, then ends its stream without a final event.
type ch07CutModel struct{}

func (ch07CutModel) Stream(ctx context.Context, req Request) *AssistantStream {
	stream := NewAssistantStream()
	stream.Push(StartEvent{})
	stream.Push(TextDeltaEvent{ContentIndex: 0, Delta: "项目名是"})
	stream.Close()
	return stream
}

func TestLab7_3_非执行终态_其余分支(t *testing.T) {
	twoCalls := []ContentBlock{Text("…"), ch07ReadCall(), ToolCall{ID: "call-2", Name: "read", Arguments: `{"path":"go.mod"}`}}
	tests := []struct {
		name       string
		assistant  AssistantMessage
		wantReason RunReason
		wantSkip   string // the reason in each skipped result; "" when there are no calls
	}{
		{"error with calls", AssistantMessage{Content: twoCalls, StopReason: StopReasonError, ErrorMessage: "upstream 500"}, RunError, "error"},
		{"aborted with calls", AssistantMessage{Content: twoCalls, StopReason: StopReasonAborted, ErrorMessage: "cancelled"}, RunAborted, "aborted"},
		{"stop with calls", AssistantMessage{Content: twoCalls, StopReason: StopReasonStop}, RunError, "unexpected-stop"},
		{"toolUse without calls", AssistantMessage{Content: []ContentBlock{Text("我要用工具……")}, StopReason: StopReasonToolUse}, RunError, ""},
		{"error without calls", AssistantMessage{StopReason: StopReasonError, ErrorMessage: "upstream 500"}, RunError, ""},
		{"length without calls", AssistantMessage{Content: []ContentBlock{Text("项目名是 tin")}, StopReason: StopReasonLength}, RunLength, ""},
		{"aborted without calls", AssistantMessage{Content: []ContentBlock{Text("项目")}, StopReason: StopReasonAborted, ErrorMessage: "cancelled"}, RunAborted, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			res, model, exec, rec := ch07RunTerminal(t, tt.assistant)
			calls := tt.assistant.ToolCalls()
			if got := exec.count(); got != 0 {
				t.Errorf("executor calls = %d, want 0", got)
			}
			if res.Reason != tt.wantReason || res.Steps != 1 {
				t.Errorf("stop reason %s with %d calls: result = %s/%d steps, want %s/1",
					tt.assistant.StopReason, len(calls), res.Reason, res.Steps, tt.wantReason)
			}
			if got := model.Calls(); got != 1 {
				t.Errorf("model requests = %d, want 1", got)
			}
			ch07CheckSkipped(t, res.Messages, tt.assistant, tt.wantSkip)
			want := []Message{ch07Input()[0], tt.assistant}
			var wantKinds []string
			for _, call := range calls {
				want = append(want, ToolResultMessage{
					ToolCallID: call.ID,
					ToolName:   call.Name,
					Content:    []ContentBlock{Text(ch07SkipTexts[tt.wantSkip])},
					Details:    map[string]any{"skipped": true, "reason": tt.wantSkip},
					IsError:    true,
				})
				wantKinds = append(wantKinds, "tool_skipped:"+call.ID)
			}
			if diff := cmp.Diff(want, res.Messages, ch07Cmp...); diff != "" {
				t.Errorf("transcript (-want +got):\n%s", diff)
			}
			ch07CheckPaired(t, res.Messages)
			if diff := cmp.Diff(wantKinds, rec.kindsWithPrefix("tool_"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("tool events (-want +got): only tool_skipped, one per call:\n%s", diff)
			}
			rec.checkOneTurnEnd(t, res)
		})
	}

	t.Run("stream without a final event", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		exec := &ch07CountingExecutor{}
		rec := newCh07Recorder()
		res := ch07Run(t, context.Background(), AgentLoopOptions{
			Context:         AgentContext{Messages: ch07Input()},
			Model:           ch07CutModel{},
			Tools:           MustRegistry(),
			ExecuteToolCall: exec.execute,
			OnEvent:         rec.onEvent,
		})
		if res.Reason != RunError || res.Steps != 1 {
			t.Errorf("a stream without a final event: result = %s/%d steps, want error/1", res.Reason, res.Steps)
		}
		if got := ch07Roles(res.Messages); got != "user → assistant" {
			t.Fatalf("transcript roles = %s, want user → assistant: the failed turn's assistant is appended like any other", got)
		}
		got, _ := res.Messages[1].(AssistantMessage)
		if got.StopReason != StopReasonError || !strings.Contains(got.ErrorMessage, "stream ended without a terminal event") {
			t.Errorf("assistant of a stream without a final event: stop reason %q, ErrorMessage %q; want error, with the stream's error (%q)",
				got.StopReason, got.ErrorMessage, "tinypi: stream ended without a terminal event")
		}
		if got.Timestamp == 0 {
			t.Errorf("assistant of a stream without a final event has no timestamp: like every message it carries the time it was made")
		}
		want := []string{"model_event:start", "model_event:text_delta", "assistant_message:error", "turn_end:error/1"}
		if diff := cmp.Diff(want, rec.kinds()); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		rec.checkOneTurnEnd(t, res)
	})
}

// --- Lab 7.4 -----------------------------------------------------------------------------------

func TestLab7_4_并发工具_完成顺序(t *testing.T) {
	defer goleak.VerifyNone(t)
	batch := AssistantMessage{
		Content: []ContentBlock{
			Text("两个一起查。"),
			ToolCall{ID: "slow-call", Name: "slow", Arguments: `{}`},
			ToolCall{ID: "fast-call", Name: "fast", Arguments: `{}`},
		},
		StopReason: StopReasonToolUse,
	}
	model := NewScriptedModel(batch, ch07FinalAnswer())
	rec := newCh07Recorder()

	// slow returns only after the loop has reported fast's tool_end, so fast completes first
	// whatever the scheduler does. A loop that runs the calls one after another never reports
	// it while slow runs; the guard turns that into a failure instead of a hung test.
	fastEnded := newCh07Latch()
	rec.hook = func(e LoopEvent) {
		if end, ok := e.(ToolEndEvent); ok && end.Result.ToolCallID == "fast-call" {
			fastEnded.open()
		}
	}
	var mu sync.Mutex
	startsSeen := map[string]int{}
	executor := func(ctx context.Context, call ToolCall, exec ToolExecContext) (ToolResultMessage, error) {
		n := len(rec.kindsWithPrefix("tool_start:"))
		mu.Lock()
		startsSeen[call.ID] = n
		mu.Unlock()
		text := "done " + call.ID
		switch call.ID {
		case "fast-call":
			exec.Progress(Text("fast-call working"))
		case "slow-call":
			if n < 2 || !fastEnded.wait() {
				text = "slow-call gave up: fast-call's tool_end never came while slow-call ran (calls are not concurrent)"
			}
			exec.Progress(Text("slow-call working"))
		}
		return ToolResultMessage{ToolCallID: call.ID, ToolName: call.Name, Content: []ContentBlock{Text(text)}}, nil
	}

	res := ch07Run(t, context.Background(), AgentLoopOptions{
		Context:         AgentContext{Messages: ch07Input()},
		Model:           model,
		Tools:           MustRegistry(),
		ExecuteToolCall: executor,
		OnEvent:         rec.onEvent,
	})

	mu.Lock()
	if startsSeen["slow-call"] != 2 || startsSeen["fast-call"] != 2 {
		t.Errorf("tool_start events seen when each call began = %v, want 2 for both: announce the whole batch first", startsSeen)
	}
	mu.Unlock()
	wantToolKinds := []string{
		"tool_start:slow-call", "tool_start:fast-call",
		"tool_progress:fast-call", "tool_end:fast-call",
		"tool_progress:slow-call", "tool_end:slow-call",
	}
	if diff := cmp.Diff(wantToolKinds, rec.kindsWithPrefix("tool_")); diff != "" {
		t.Errorf("tool events (-want +got): starts in call order, progress under its own call, ends in completion order:\n%s", diff)
	}
	result := func(id, name string) ToolResultMessage {
		return ToolResultMessage{ToolCallID: id, ToolName: name, Content: []ContentBlock{Text("done " + id)}}
	}
	want := []Message{ch07Input()[0], batch, result("slow-call", "slow"), result("fast-call", "fast"), ch07FinalAnswer()}
	if diff := cmp.Diff(want, res.Messages, ch07Cmp...); diff != "" {
		t.Errorf("transcript (-want +got): results in call order (slow, fast), whatever finished first:\n%s", diff)
	}
	if res.Reason != RunStop || res.Steps != 2 || model.Calls() != 2 {
		t.Errorf("result = %s/%d steps with %d model requests, want stop/2 with 2", res.Reason, res.Steps, model.Calls())
	}
	if model.Calls() == 2 {
		if diff := cmp.Diff(want[:4], model.Requests()[1].Messages, ch07Cmp...); diff != "" {
			t.Errorf("second request (-want +got):\n%s", diff)
		}
	}
	rec.checkOneTurnEnd(t, res)

	t.Run("two calls report progress at once", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		batch := AssistantMessage{
			Content: []ContentBlock{
				ToolCall{ID: "call-a", Name: "read", Arguments: `{"path":"a.md"}`},
				ToolCall{ID: "call-b", Name: "read", Arguments: `{"path":"b.md"}`},
			},
			StopReason: StopReasonToolUse,
		}
		rec := newCh07Recorder()
		// The first tool_progress stays inside OnEvent until a second OnEvent call overlaps it:
		// with OnEvent serialised that never happens, and the bounded wait ends. It only gives
		// an overlap the chance to show; a correct loop passes whatever the timing.
		var held atomic.Bool
		rec.hook = func(e LoopEvent) {
			if _, ok := e.(ToolProgressEvent); ok && held.CompareAndSwap(false, true) {
				select {
				case <-rec.overlapped():
				case <-time.After(200 * time.Millisecond):
				}
			}
		}
		running := map[string]*ch07Latch{"call-a": newCh07Latch(), "call-b": newCh07Latch()}
		executor := func(_ context.Context, call ToolCall, exec ToolExecContext) (ToolResultMessage, error) {
			other := map[string]string{"call-a": "call-b", "call-b": "call-a"}[call.ID]
			running[call.ID].open()
			text := "read " + call.ID
			if !running[other].wait() {
				text = call.ID + " gave up: " + other + " never ran at the same time"
			}
			exec.Progress(Text("progress of " + call.ID))
			return ToolResultMessage{ToolCallID: call.ID, ToolName: call.Name, Content: []ContentBlock{Text(text)}}, nil
		}
		res := ch07Run(t, context.Background(), AgentLoopOptions{
			Context:         AgentContext{Messages: ch07Input()},
			Model:           NewScriptedModel(batch, ch07FinalAnswer()),
			Tools:           MustRegistry(),
			ExecuteToolCall: executor,
			OnEvent:         rec.onEvent,
		})
		rec.checkSerial(t)
		var progress int
		for _, e := range rec.snapshot() {
			if p, ok := e.(ToolProgressEvent); ok {
				progress++
				if want := "progress of " + p.CallID; TextOf(p.Content) != want {
					t.Errorf("tool_progress %q reported under call id %q: each call's progress carries its own id", TextOf(p.Content), p.CallID)
				}
			}
		}
		if progress != 2 {
			t.Errorf("tool_progress events = %d, want 2", progress)
		}
		if res.Reason != RunStop || res.Steps != 2 {
			t.Errorf("result = %s/%d steps, want stop/2", res.Reason, res.Steps)
		}
		ch07CheckPaired(t, res.Messages)
		rec.checkOneTurnEnd(t, res)
	})
}

func TestLab7_4_并发工具_单项失败(t *testing.T) {
	defer goleak.VerifyNone(t)
	batch := AssistantMessage{
		Content: []ContentBlock{
			ToolCall{ID: "ok-call", Name: "read", Arguments: `{"path":"README.md"}`},
			ToolCall{ID: "err-call", Name: "read", Arguments: `{"path":"missing.md"}`},
			ToolCall{ID: "panic-call", Name: "read", Arguments: `{"path":"bad.md"}`},
		},
		StopReason: StopReasonToolUse,
	}
	model := NewScriptedModel(batch, ch07FinalAnswer())
	rec := newCh07Recorder()
	var executions atomic.Int32
	executor := func(ctx context.Context, call ToolCall, exec ToolExecContext) (ToolResultMessage, error) {
		executions.Add(1)
		switch call.ID {
		case "err-call":
			return ToolResultMessage{}, errors.New("missing.md: no such file")
		case "panic-call":
			panic("executor bug")
		}
		return ToolResultMessage{ToolCallID: call.ID, ToolName: call.Name, Content: []ContentBlock{Text("# tiny-pi")}}, nil
	}

	res := ch07Run(t, context.Background(), AgentLoopOptions{
		Context:         AgentContext{Messages: ch07Input()},
		Model:           model,
		Tools:           MustRegistry(),
		ExecuteToolCall: executor,
		OnEvent:         rec.onEvent,
	})

	if got := executions.Load(); got != 3 {
		t.Errorf("executor calls = %d, want 3: every call of the batch runs", got)
	}
	if res.Reason != RunStop || res.Steps != 2 || model.Calls() != 2 {
		t.Errorf("result = %s/%d steps with %d model requests, want stop/2 with 2: one failed call does not end the run", res.Reason, res.Steps, model.Calls())
	}
	ch07CheckPaired(t, res.Messages)
	if len(res.Messages) != 6 {
		t.Fatalf("transcript roles = %s, want user → assistant → toolResult ×3 → assistant", ch07Roles(res.Messages))
	}
	// Each result is looked up by its call: the order of results is the completion-order test's
	// business.
	gotOK, _ := ch07ResultOf(res.Messages, "ok-call")
	wantOK := ToolResultMessage{ToolCallID: "ok-call", ToolName: "read", Content: []ContentBlock{Text("# tiny-pi")}}
	if diff := cmp.Diff(wantOK, gotOK, ch07Cmp...); diff != "" {
		t.Errorf("the successful call's result must be kept (-want +got):\n%s", diff)
	}
	gotErr, _ := ch07ResultOf(res.Messages, "err-call")
	wantErr := ToolResultMessage{ToolCallID: "err-call", ToolName: "read", Content: []ContentBlock{Text("missing.md: no such file")}, IsError: true}
	if diff := cmp.Diff(wantErr, gotErr, ch07Cmp...); diff != "" {
		t.Errorf("a failed execution becomes an error result with the error's message (-want +got):\n%s", diff)
	}
	panicked, ok := ch07ResultOf(res.Messages, "panic-call")
	if !ok || panicked.ToolName != "read" || !panicked.IsError {
		t.Errorf("result for the panicking executor = %+v, want an error result for panic-call", panicked)
	} else {
		text := TextOf(panicked.Content)
		if !strings.Contains(text, "executor bug") || strings.Contains(text, "goroutine") || strings.Contains(text, ".go:") {
			t.Errorf("panic result text = %q, want the panic value and no stack", text)
		}
	}
	rec.checkOneTurnEnd(t, res)
}

// --- Lab 7.5 -----------------------------------------------------------------------------------

// ch07CancelAwareModel streams a start event and then waits for its request's ctx: when ctx is
// cancelled it ends the response aborted, as a real provider does. A ctx that can never be
// cancelled gets an immediate answer that says so, and the guard ends a wait that would hang.
type ch07CancelAwareModel struct{ calls atomic.Int32 }

func (m *ch07CancelAwareModel) Stream(ctx context.Context, req Request) *AssistantStream {
	m.calls.Add(1)
	stream := NewAssistantStream()
	answer := func(text string) {
		stream.Push(DoneEvent{Message: AssistantMessage{Content: []ContentBlock{Text(text)}, StopReason: StopReasonStop}})
	}
	if ctx.Done() == nil {
		stream.Push(StartEvent{})
		answer("the model's context can never be cancelled")
		return stream
	}
	go func() {
		defer stream.Close()
		stream.Push(StartEvent{})
		select {
		case <-ctx.Done():
			stream.Push(ErrorEvent{Message: AssistantMessage{StopReason: StopReasonAborted, ErrorMessage: "request cancelled"}})
		case <-time.After(ch07Guard):
			answer("the model's context was never cancelled")
		}
	}()
	return stream
}

func TestLab7_5_取消与上限_预取消(t *testing.T) {
	defer goleak.VerifyNone(t)
	model := NewScriptedModel(ch07FinalAnswer())
	rec := newCh07Recorder()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	res := ch07Run(t, ctx, AgentLoopOptions{
		Context: AgentContext{Messages: ch07Input()},
		Model:   model,
		Tools:   MustRegistry(),
		OnEvent: rec.onEvent,
	})

	if got := model.Calls(); got != 0 {
		t.Errorf("model requests = %d, want 0: a cancelled run starts no request", got)
	}
	if res.Reason != RunAborted || res.Steps != 0 {
		t.Errorf("result = %s/%d steps, want aborted/0", res.Reason, res.Steps)
	}
	if diff := cmp.Diff(ch07Input(), res.Messages, ch07Cmp...); diff != "" {
		t.Errorf("messages (-want +got): the input and nothing else:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"turn_end:aborted/0"}, rec.kinds()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	rec.checkOneTurnEnd(t, res)

	t.Run("during the model's stream", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rec := newCh07Recorder()
		rec.hook = func(e LoopEvent) {
			if m, ok := e.(ModelEvent); ok && m.Event.EventType() == "start" {
				cancel() // Ctrl-C while the model is answering
			}
		}
		model := &ch07CancelAwareModel{}
		res := ch07Run(t, ctx, AgentLoopOptions{
			Context: AgentContext{Messages: ch07Input()},
			Model:   model,
			Tools:   MustRegistry(),
			OnEvent: rec.onEvent,
		})
		if res.Reason != RunAborted || res.Steps != 1 {
			t.Errorf("cancelled during the model's stream: result = %s/%d steps, want aborted/1 (the model gets the run's ctx)", res.Reason, res.Steps)
		}
		if got := model.calls.Load(); got != 1 {
			t.Errorf("model requests = %d, want 1", got)
		}
		want := []Message{ch07Input()[0], AssistantMessage{StopReason: StopReasonAborted, ErrorMessage: "request cancelled"}}
		if diff := cmp.Diff(want, res.Messages, ch07Cmp...); diff != "" {
			t.Errorf("transcript (-want +got): the aborted answer is kept:\n%s", diff)
		}
		rec.checkOneTurnEnd(t, res)
	})

	t.Run("after the model asked for tools", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rec := newCh07Recorder()
		rec.hook = func(e LoopEvent) {
			if _, ok := e.(AssistantMessageEvent); ok {
				cancel() // Ctrl-C after the model's answer arrived, before its call ran
			}
		}
		model := NewScriptedModel(ch07FirstAnswer(), ch07FinalAnswer())
		exec := &ch07CountingExecutor{}
		res := ch07Run(t, ctx, AgentLoopOptions{
			Context:         AgentContext{Messages: ch07Input()},
			Model:           model,
			Tools:           MustRegistry(),
			ExecuteToolCall: exec.execute,
			OnEvent:         rec.onEvent,
		})
		if got := ch07Roles(res.Messages); got != "user → assistant → toolResult" {
			t.Errorf("transcript roles = %s, want user → assistant → toolResult: the call of the cancelled turn still gets its result", got)
		}
		ch07CheckPaired(t, res.Messages)
		if res.Reason != RunAborted || res.Steps != 1 {
			t.Errorf("result = %s/%d steps, want aborted/1", res.Reason, res.Steps)
		}
		if got := model.Calls(); got != 1 {
			t.Errorf("model requests = %d, want 1", got)
		}
		rec.checkOneTurnEnd(t, res)
	})
}

func TestLab7_5_取消与上限_工具后取消(t *testing.T) {
	// With the default limit and on the last allowed batch: either way the run reports the
	// cancellation, not the step limit, and starts no new request.
	for _, maxSteps := range []int{0, 1} {
		t.Run(fmt.Sprintf("MaxSteps %d", maxSteps), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			model := NewScriptedModel(ch07FirstAnswer(), ch07FinalAnswer())
			rec := newCh07Recorder()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var executions atomic.Int32
			executor := func(_ context.Context, call ToolCall, exec ToolExecContext) (ToolResultMessage, error) {
				executions.Add(1)
				cancel() // the user presses Ctrl-C while read runs; read still completes
				return ch07ReadResult(), nil
			}

			res := ch07Run(t, ctx, AgentLoopOptions{
				Context:         AgentContext{Messages: ch07Input()},
				Model:           model,
				Tools:           MustRegistry(),
				ExecuteToolCall: executor,
				MaxSteps:        maxSteps,
				OnEvent:         rec.onEvent,
			})

			if got := executions.Load(); got != 1 {
				t.Errorf("executions = %d, want 1", got)
			}
			if got := model.Calls(); got != 1 {
				t.Errorf("model requests = %d, want 1: no request after the cancelled batch", got)
			}
			if res.Reason != RunAborted || res.Steps != 1 {
				t.Errorf("result = %s/%d steps, want aborted/1", res.Reason, res.Steps)
			}
			want := []Message{ch07Input()[0], ch07FirstAnswer(), ch07ReadResult()}
			if diff := cmp.Diff(want, res.Messages, ch07Cmp...); diff != "" {
				t.Errorf("transcript (-want +got): the finished tool's result is kept:\n%s", diff)
			}
			rec.checkOneTurnEnd(t, res)
		})
	}

	t.Run("parallel batch", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		batch := AssistantMessage{
			Content: []ContentBlock{
				ToolCall{ID: "call-a", Name: "read", Arguments: `{"path":"a.md"}`},
				ToolCall{ID: "call-b", Name: "read", Arguments: `{"path":"b.md"}`},
			},
			StopReason: StopReasonToolUse,
		}
		model := NewScriptedModel(batch, ch07FinalAnswer())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// call-a cancels the run and returns; call-b is still running and returns only after
		// the loop has reported call-a's tool_end, looking at its own ctx first.
		aEnded := newCh07Latch()
		rec := newCh07Recorder()
		rec.hook = func(e LoopEvent) {
			if end, ok := e.(ToolEndEvent); ok && end.Result.ToolCallID == "call-a" {
				aEnded.open()
			}
		}
		var bSawCancel atomic.Bool
		bDone := newCh07Latch()
		executor := func(ctx context.Context, call ToolCall, _ ToolExecContext) (ToolResultMessage, error) {
			if call.ID == "call-a" {
				cancel()
			} else {
				defer bDone.open()
				aEnded.wait()
				bSawCancel.Store(ctx.Err() != nil)
			}
			return ToolResultMessage{ToolCallID: call.ID, ToolName: call.Name, Content: []ContentBlock{Text("read " + call.ID)}}, nil
		}
		res := ch07Run(t, ctx, AgentLoopOptions{
			Context:         AgentContext{Messages: ch07Input()},
			Model:           model,
			Tools:           MustRegistry(),
			ExecuteToolCall: executor,
			OnEvent:         rec.onEvent,
		})
		aEnded.open()
		if !slices.Contains(rec.kindsWithPrefix("tool_start"), "tool_start:call-b") {
			t.Fatalf("call-b was never started: every call of a parallel batch runs, also when the run is cancelled while the batch runs")
		}
		if !bDone.wait() {
			t.Fatalf("call-b never ran: every call of a parallel batch runs, also when the run is cancelled while the batch runs")
		}

		if !bSawCancel.Load() {
			t.Errorf("call-b's context was not cancelled when the run's was: every call of a parallel batch runs with the run's ctx")
		}
		wantKinds := []string{"tool_start:call-a", "tool_start:call-b", "tool_end:call-a", "tool_end:call-b"}
		if diff := cmp.Diff(wantKinds, rec.kindsWithPrefix("tool_")); diff != "" {
			t.Errorf("tool events (-want +got): after a cancel the loop still waits for every running call:\n%s", diff)
		}
		result := func(id string) ToolResultMessage {
			return ToolResultMessage{ToolCallID: id, ToolName: "read", Content: []ContentBlock{Text("read " + id)}}
		}
		want := []Message{ch07Input()[0], batch, result("call-a"), result("call-b")}
		if diff := cmp.Diff(want, res.Messages, ch07Cmp...); diff != "" {
			t.Errorf("transcript (-want +got): both results kept, no new request:\n%s", diff)
		}
		if res.Reason != RunAborted || res.Steps != 1 || model.Calls() != 1 {
			t.Errorf("result = %s/%d steps with %d model requests, want aborted/1 with 1", res.Reason, res.Steps, model.Calls())
		}
		rec.checkOneTurnEnd(t, res)
	})
}

func TestLab7_5_取消与上限_MaxSteps(t *testing.T) {
	t.Run("MaxSteps 1", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		model := NewScriptedModel(ch07FirstAnswer(), ch07FinalAnswer())
		exec := &ch07CountingExecutor{}
		rec := newCh07Recorder()
		res := ch07Run(t, context.Background(), AgentLoopOptions{
			Context:         AgentContext{Messages: ch07Input()},
			Model:           model,
			Tools:           MustRegistry(),
			ExecuteToolCall: exec.execute,
			MaxSteps:        1,
			OnEvent:         rec.onEvent,
		})
		if got := model.Calls(); got != 1 {
			t.Errorf("model requests = %d, want 1", got)
		}
		if got := exec.count(); got != 1 {
			t.Errorf("executions = %d, want 1: the first batch still runs", got)
		}
		if res.Reason != RunMaxSteps || res.Steps != 1 {
			t.Errorf("result = %s/%d steps, want maxSteps/1", res.Reason, res.Steps)
		}
		if got, want := ch07Roles(res.Messages), "user → assistant → toolResult"; got != want {
			t.Errorf("roles = %s, want %s", got, want)
		}
		ch07CheckPaired(t, res.Messages)
		rec.checkOneTurnEnd(t, res)
	})
	t.Run("default is 32", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		script := make([]AssistantMessage, DefaultMaxSteps+1)
		for i := range script {
			script[i] = ch07FirstAnswer()
		}
		model := NewScriptedModel(script...)
		exec := &ch07CountingExecutor{}
		rec := newCh07Recorder()
		res := ch07Run(t, context.Background(), AgentLoopOptions{
			Context:         AgentContext{Messages: ch07Input()},
			Model:           model,
			Tools:           MustRegistry(),
			ExecuteToolCall: exec.execute,
			OnEvent:         rec.onEvent,
		})
		if got := model.Calls(); got != 32 {
			t.Errorf("model requests = %d, want 32", got)
		}
		if res.Reason != RunMaxSteps || res.Steps != 32 {
			t.Errorf("result = %s/%d steps, want maxSteps/32", res.Reason, res.Steps)
		}
		rec.checkOneTurnEnd(t, res)
	})
}
