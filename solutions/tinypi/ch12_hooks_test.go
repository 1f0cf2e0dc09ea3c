package tinypi

// Focused tests of chapter 12, resources and extensions. Each test belongs to one lab:
//
//	go test -run '^TestLab12_1_' .   上下文文件
//	go test -run '^TestLab12_2_' .   提示模板
//	go test -run '^TestLab12_3_' .   准备调用
//	go test -run '^TestLab12_4_' .   结果钩子
//	go test -run '^TestLab12_5_' .   执行模式
//	go test -run '^TestLab12_6_' .   请求与回合钩子
//
// Runs are spelled out as traces, one line per thing that happened ("start c1", "before c1
// {"path":"a.md"}", "body c1", "end c1"), and results as "c1 error=false 读到 a.md".

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// --- helpers ----------------------------------------------------------------------------------

// ch12Trace collects lines from any goroutine.
type ch12Trace struct {
	mu    sync.Mutex
	lines []string
}

func (tr *ch12Trace) add(format string, args ...any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.lines = append(tr.lines, fmt.Sprintf(format, args...))
}

func (tr *ch12Trace) all() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string{}, tr.lines...)
}

// ch12PathSchema is the schema of the tools below: {"path": string}, nothing else.
const ch12PathSchema = `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`

// ch12Path returns the path of arguments the schema accepted.
func ch12Path(args json.RawMessage) string {
	var a struct{ Path string }
	_ = json.Unmarshal(args, &a)
	return a.Path
}

// ch12ReadTool is a tool named name taking {"path"}: its body adds "body ID ARGS" to tr (when
// tr is not nil) and answers "读到 PATH".
func ch12ReadTool(name string, tr *ch12Trace) Tool {
	return Tool{
		ToolDefinition: ToolDefinition{Name: name, Parameters: ch12PathSchema},
		Execute: func(_ context.Context, args json.RawMessage, _ ToolExecContext) (ToolOutput, error) {
			if tr != nil {
				tr.add("body %s", args)
			}
			return ToolOutput{Content: []ContentBlock{Text("读到 " + ch12Path(args))}}, nil
		},
	}
}

// ch12Call is a call of tool name with the given arguments.
func ch12Call(id, name, args string) ToolCall {
	return ToolCall{ID: id, Name: name, Arguments: args}
}

// ch12ToolUse is an assistant message asking for calls.
func ch12ToolUse(calls ...ToolCall) AssistantMessage {
	var content []ContentBlock
	for _, c := range calls {
		content = append(content, c)
	}
	return AssistantMessage{Content: content, StopReason: StopReasonToolUse}
}

// ch12Results renders the tool results of a transcript, in transcript order:
// "c1 error=false 读到 a.md".
func ch12Results(messages []Message) []string {
	out := []string{}
	for _, m := range messages {
		if r, ok := m.(ToolResultMessage); ok {
			out = append(out, fmt.Sprintf("%s error=%v %s", r.ToolCallID, r.IsError, TextOf(r.Content)))
		}
	}
	return out
}

// ch12Run runs the loop with opts (OnEvent is set here) and returns its result and what it
// reported: "start c1", "end c1", "turn_end stop 2". It fails the test when the run does not
// return within ch10Patience or returns an error.
func ch12Run(t *testing.T, opts AgentLoopOptions) (AgentRunResult, []string) {
	t.Helper()
	result, _, events := ch12RunWith(t, opts, nil)
	return result, events
}

// ch12RunWith is ch12Run that also adds each reported event to tr, when tr is set, as it
// happens, and returns the error of RunAgentLoop instead of failing on it. An OnEvent already in
// opts is called too, first.
func ch12RunWith(t *testing.T, opts AgentLoopOptions, tr *ch12Trace) (AgentRunResult, error, []string) {
	t.Helper()
	var events []string
	also := opts.OnEvent
	opts.OnEvent = func(e LoopEvent) {
		if also != nil {
			also(e)
		}
		line := ""
		switch e := e.(type) {
		case ToolStartEvent:
			line = "start " + e.Call.ID
		case ToolEndEvent:
			line = "end " + e.Result.ToolCallID
		case TurnEndEvent:
			line = fmt.Sprintf("turn_end %s %d", e.Reason, e.Steps)
		default:
			return
		}
		events = append(events, line)
		if tr != nil {
			tr.add("%s", line)
		}
	}
	type outcome struct {
		result AgentRunResult
		err    error
	}
	returned := false
	o := ch10Within(t, "RunAgentLoop", "a tool body, a hook or the loop waits for something that never comes", func() outcome {
		var o outcome
		runLab(t, func() { o.result, o.err = RunAgentLoop(context.Background(), opts) })
		returned = true
		return o
	})
	if !returned {
		t.FailNow() // the run did not return (its failure is reported above)
	}
	if o.err != nil && tr == nil {
		t.Fatalf("RunAgentLoop: %v", o.err)
	}
	return o.result, o.err, events
}

// ch12Answer is an assistant message that answers without tools.
func ch12Answer(text string) AssistantMessage {
	return AssistantMessage{Content: []ContentBlock{Text(text)}, StopReason: StopReasonStop}
}

// ch12End checks how a run ended.
func ch12End(t *testing.T, result AgentRunResult, reason RunReason, steps int) {
	t.Helper()
	if result.Reason != reason || result.Steps != steps {
		t.Errorf("the run ended with reason %q after %d steps, want %q after %d", result.Reason, result.Steps, reason, steps)
	}
}

// --- Lab 12.3 准备调用 ---------------------------------------------------------------------------

// ch12OldShapeTool is ch12ReadTool whose PrepareArguments accepts the old shape {"file": …} and
// adds "prepare ARGS" to tr for every call it prepares.
func ch12OldShapeTool(tr *ch12Trace) Tool {
	tool := ch12ReadTool("read", tr)
	tool.PrepareArguments = func(args json.RawMessage) (json.RawMessage, error) {
		tr.add("prepare %s", args)
		var old struct {
			File *string `json:"file"`
		}
		if json.Unmarshal(args, &old) == nil && old.File != nil {
			return json.RawMessage(`{"path":"` + *old.File + `"}`), nil
		}
		return args, nil
	}
	return tool
}

func TestLab12_3_准备调用_Order(t *testing.T) {
	tr := &ch12Trace{}
	model := NewScriptedModel(ch12ToolUse(
		ch12Call("c1", "read", `{"file":"a.md"}`), // the old shape: PrepareArguments turns it into {"path":"a.md"}
		ch12Call("c2", "nope", `{"path":"x"}`),    // no such tool
		ch12Call("c3", "read", `{"path":7}`),      // prepared as it is, then refused by the schema
		ch12Call("c4", "read", `{"path":"b.md"}`),
		ch12Call("c5", "read", ""), // no arguments: prepared as {}, then refused (path is required)
	), ch12Answer("好的"))
	result, _ := ch12Run(t, AgentLoopOptions{
		Model: model,
		Tools: MustRegistry(ch12OldShapeTool(tr)),
		Hooks: &LoopHooks{BeforeToolCall: func(_ context.Context, call ToolCall, args json.RawMessage) (ToolCallDecision, error) {
			tr.add("before %s %s", call.ID, args)
			return ToolCallDecision{}, nil
		}},
	})
	ch12End(t, result, RunStop, 2)
	// Every call is prepared on the run's goroutine, in call order; the bodies run afterwards
	// (in parallel: their order among themselves is not fixed, so they are listed last, sorted).
	trace := tr.all()
	var bodies []string
	prepared := []string{}
	for _, line := range trace {
		if strings.HasPrefix(line, "body ") {
			bodies = append(bodies, line)
		} else {
			prepared = append(prepared, line)
		}
	}
	slices.Sort(bodies)
	ch11Diff(t, "PrepareArguments and BeforeToolCall, in the order they were called", []string{
		`prepare {"file":"a.md"}`,
		`before c1 {"path":"a.md"}`,
		`prepare {"path":7}`,
		`prepare {"path":"b.md"}`,
		`before c4 {"path":"b.md"}`,
		`prepare {}`,
	}, prepared)
	ch11Diff(t, "the tool bodies (sorted)", []string{`body {"path":"a.md"}`, `body {"path":"b.md"}`}, bodies)
	got := ch12Results(result.Messages)
	if len(got) != 5 {
		t.Fatalf("the transcript holds %d tool results, want 5 (one per call): %q", len(got), got)
	}
	ch11Diff(t, "the results of c1, c2 and c4", []string{
		"c1 error=false 读到 a.md",
		"c2 error=true Tool nope not found",
		"c4 error=false 读到 b.md",
	}, []string{got[0], got[1], got[3]})
	for _, i := range []int{2, 4} {
		if want := fmt.Sprintf(`c%d error=true Validation failed for tool "read": `, i+1); !strings.HasPrefix(got[i], want) {
			t.Errorf("result %d is %q, want it to start with %q", i+1, got[i], want)
		}
	}
}

func TestLab12_3_准备调用_Block(t *testing.T) {
	tr := &ch12Trace{}
	s := NewSession("s")
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("整理 docs")})
	model := NewScriptedModel(ch12ToolUse(
		ch12Call("c1", "write", `{"path":"a.md"}`),
		ch12Call("c2", "write", `{"path":"b.md"}`),
		ch12Call("c3", "read", `{"path":"c.md"}`),
		ch12Call("c4", "read", `{"path":"d.md"}`),
	), ch12Answer("好的"))
	result, _ := ch12Run(t, AgentLoopOptions{
		Model:   model,
		Session: s,
		Tools:   MustRegistry(ch12ReadTool("read", tr), ch12ReadTool("write", tr)),
		Hooks: &LoopHooks{BeforeToolCall: func(_ context.Context, call ToolCall, _ json.RawMessage) (ToolCallDecision, error) {
			switch call.ID {
			case "c1":
				return ToolCallDecision{Block: true, Reason: "计划模式下不能写文件"}, nil
			case "c2":
				return ToolCallDecision{Block: true}, nil
			case "c4":
				return ToolCallDecision{Reason: "只是说明，不阻拦"}, nil // a reason without Block does not block
			}
			return ToolCallDecision{}, nil
		}},
	})
	ch12End(t, result, RunStop, 2)
	ch11Diff(t, "the results", []string{
		"c1 error=true 计划模式下不能写文件",
		"c2 error=true Tool execution was blocked",
		"c3 error=false 读到 c.md",
		"c4 error=false 读到 d.md",
	}, ch12Results(result.Messages))
	bodies := tr.all()
	slices.Sort(bodies)
	ch11Diff(t, "the tool bodies that ran (sorted)", []string{`body {"path":"c.md"}`, `body {"path":"d.md"}`}, bodies)
	// A blocked call never starts: no tool/start; its result points at its tool/call.
	ch11Diff(t, "the log", []string{
		"0 user/message user:整理 docs",
		"1 turn/start 1",
		"2 model/request through=1 messages=1",
		"3 assistant/message assistant:[c1 c2 c3 c4]",
		"4 tool/call c1",
		"5 tool/call c2",
		"6 tool/call c3",
		"7 tool/call c4",
	}, ch11Lines(ch11Events(t, s))[:min(8, len(ch11Events(t, s)))])
	var starts, results []string
	for _, line := range ch11Lines(ch11Events(t, s)) {
		if strings.Contains(line, " tool/start ") {
			starts = append(starts, line[strings.Index(line, " ")+1:])
		}
		if strings.Contains(line, " tool/result ") {
			results = append(results, line[strings.Index(line, " ")+1:])
		}
	}
	slices.Sort(starts)
	ch11Diff(t, "the tool/start events (sorted, without their seq)", []string{"tool/start c3 <-6", "tool/start c4 <-7"}, starts)
	ch11Diff(t, "the tool/result events (without their seq)", []string{"tool/result c1 <-4", "tool/result c2 <-5", "tool/result c3 <-6", "tool/result c4 <-7"}, results)
}

func TestLab12_3_准备调用_FailingHooks(t *testing.T) {
	tr := &ch12Trace{}
	tool := ch12ReadTool("read", tr)
	tool.PrepareArguments = func(args json.RawMessage) (json.RawMessage, error) {
		switch ch12Path(args) {
		case "bad":
			return nil, errors.New("参数形状不对")
		case "boom":
			panic("boom")
		}
		return args, nil
	}
	model := NewScriptedModel(ch12ToolUse(
		ch12Call("c1", "read", `{"path":"bad"}`),
		ch12Call("c2", "read", `{"path":"boom"}`),
		ch12Call("c3", "read", `{"path":"deny"}`),
		ch12Call("c4", "read", `{"path":"crash"}`),
		ch12Call("c5", "read", `{"path":"fine"}`),
	), ch12Answer("好的"))
	result, _ := ch12Run(t, AgentLoopOptions{
		Model: model,
		Tools: MustRegistry(tool),
		Hooks: &LoopHooks{BeforeToolCall: func(_ context.Context, _ ToolCall, args json.RawMessage) (ToolCallDecision, error) {
			switch ch12Path(args) {
			case "deny":
				return ToolCallDecision{}, errors.New("策略服务不可用")
			case "crash":
				panic("oops")
			}
			return ToolCallDecision{}, nil
		}},
	})
	// A failing hook answers its own call with an error result; the run goes on.
	ch12End(t, result, RunStop, 2)
	ch11Diff(t, "the results", []string{
		`c1 error=true Preparing arguments failed for tool "read": 参数形状不对`,
		`c2 error=true Preparing arguments failed for tool "read": prepareArguments panicked: boom`,
		`c3 error=true beforeToolCall failed for tool "read": 策略服务不可用`,
		`c4 error=true beforeToolCall failed for tool "read": beforeToolCall panicked: oops`,
		"c5 error=false 读到 fine",
	}, ch12Results(result.Messages))
	ch11Diff(t, "the tool bodies that ran", []string{`body {"path":"fine"}`}, tr.all())
}

// --- Lab 12.4 结果钩子 ---------------------------------------------------------------------------

// ch12RawTool answers every call with content "raw", details {"n": 1} and Terminate as given;
// a call whose path is "fail" fails with "磁盘满了".
func ch12RawTool(name string, terminate bool) Tool {
	return Tool{
		ToolDefinition: ToolDefinition{Name: name, Parameters: ch12PathSchema},
		Execute: func(_ context.Context, args json.RawMessage, _ ToolExecContext) (ToolOutput, error) {
			if ch12Path(args) == "fail" {
				return ToolOutput{}, errors.New("磁盘满了")
			}
			return ToolOutput{Content: []ContentBlock{Text("raw")}, Details: map[string]any{"n": 1}, Terminate: terminate}, nil
		},
	}
}

// ch12Detailed renders the tool results of a transcript with their details:
// "a error=false raw map[n:1]".
func ch12Detailed(messages []Message) []string {
	out := []string{}
	for _, m := range messages {
		if r, ok := m.(ToolResultMessage); ok {
			out = append(out, fmt.Sprintf("%s error=%v %s %v", r.ToolCallID, r.IsError, TextOf(r.Content), r.Details))
		}
	}
	return out
}

func ch12Bool(b bool) *bool { return &b }

func TestLab12_4_结果钩子_Overrides(t *testing.T) {
	tr := &ch12Trace{}
	model := NewScriptedModel(ch12ToolUse(
		ch12Call("a", "t", `{"path":"a"}`),
		ch12Call("b", "t", `{"path":"b"}`),
		ch12Call("c", "t", `{"path":"c"}`),
		ch12Call("d", "t", `{"path":"d"}`),
		ch12Call("e", "nope", `{}`),
		ch12Call("f", "t", `{"path":"fail"}`),
	), ch12Answer("好的"))
	result, _ := ch12Run(t, AgentLoopOptions{
		Model: model,
		Tools: MustRegistry(ch12RawTool("t", false)),
		Hooks: &LoopHooks{AfterToolCall: func(_ context.Context, call ToolCall, out ToolCallOutcome) (ToolResultOverride, error) {
			tr.add("%s got %s %v error=%v terminate=%v", call.ID, TextOf(out.Content), out.Details, out.IsError, out.Terminate)
			switch call.ID {
			case "a":
				return ToolResultOverride{Content: []ContentBlock{Text("已脱敏")}}, nil
			case "b":
				return ToolResultOverride{IsError: ch12Bool(true)}, nil
			case "c":
				return ToolResultOverride{Details: map[string]any{"m": 2}}, nil
			case "d":
				out.Details["n"] = 99 // the hook's own copy: what it does not return does not count
				out.Content[0] = Text("改了")
			}
			return ToolResultOverride{}, nil
		}},
	})
	ch12End(t, result, RunStop, 2)
	// Each field the hook set replaces the tool's; the others stay.
	ch11Diff(t, "the results", []string{
		"a error=false 已脱敏 map[n:1]",
		"b error=true raw map[n:1]",
		"c error=false raw map[m:2]",
		"d error=false raw map[n:1]",
		"e error=true Tool nope not found map[]",
		"f error=true 磁盘满了 map[]",
	}, ch12Detailed(result.Messages))
	got := tr.all()
	slices.Sort(got)
	// The hook sees every call whose tool ran, a failed one too, and not a refused call (e).
	ch11Diff(t, "what AfterToolCall was given (sorted)", []string{
		"a got raw map[n:1] error=false terminate=false",
		"b got raw map[n:1] error=false terminate=false",
		"c got raw map[n:1] error=false terminate=false",
		"d got raw map[n:1] error=false terminate=false",
		"f got 磁盘满了 map[] error=true terminate=false",
	}, got)
}

func TestLab12_4_结果钩子_FailingHook(t *testing.T) {
	model := NewScriptedModel(ch12ToolUse(
		ch12Call("a", "finish", `{"path":"a"}`),
		ch12Call("b", "finish", `{"path":"b"}`),
		ch12Call("c", "finish", `{"path":"c"}`),
	), ch12Answer("好的"))
	result, _ := ch12Run(t, AgentLoopOptions{
		Model: model,
		Tools: MustRegistry(ch12RawTool("finish", true)),
		Hooks: &LoopHooks{AfterToolCall: func(_ context.Context, call ToolCall, _ ToolCallOutcome) (ToolResultOverride, error) {
			switch call.ID {
			case "a":
				return ToolResultOverride{Terminate: ch12Bool(true)}, errors.New("审计日志写不进去")
			case "b":
				panic("boom")
			}
			return ToolResultOverride{}, nil
		}},
	})
	// A failed hook turns its call's result into an error result that does not ask to terminate,
	// so the batch does not end the run: the model is asked again.
	ch12End(t, result, RunStop, 2)
	ch11Diff(t, "the results", []string{
		`a error=true afterToolCall failed for tool "finish": 审计日志写不进去 map[]`,
		`b error=true afterToolCall failed for tool "finish": afterToolCall panicked: boom map[]`,
		"c error=false raw map[n:1]",
	}, ch12Detailed(result.Messages))
}

func TestLab12_4_结果钩子_Terminate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		calls  []ToolCall
		after  func(ToolCall) ToolResultOverride // nil: no hook
		reason RunReason
		steps  int
	}{
		{"one call that terminates", []ToolCall{ch12Call("a", "finish", `{"path":"a"}`)}, nil, RunTerminated, 1},
		{"every call terminates", []ToolCall{ch12Call("a", "finish", `{"path":"a"}`), ch12Call("b", "finish", `{"path":"b"}`)}, nil, RunTerminated, 1},
		{"one of two terminates", []ToolCall{ch12Call("a", "finish", `{"path":"a"}`), ch12Call("b", "plain", `{"path":"b"}`)}, nil, RunStop, 2},
		{"only the last call terminates", []ToolCall{ch12Call("a", "plain", `{"path":"a"}`), ch12Call("b", "finish", `{"path":"b"}`)}, nil, RunStop, 2},
		{"the other call is refused", []ToolCall{ch12Call("a", "finish", `{"path":"a"}`), ch12Call("b", "nope", `{}`)}, nil, RunStop, 2},
		{"the other call fails", []ToolCall{ch12Call("a", "finish", `{"path":"a"}`), ch12Call("b", "finish", `{"path":"fail"}`)}, nil, RunStop, 2},
		{"the hook asks every call to terminate", []ToolCall{ch12Call("a", "plain", `{"path":"a"}`), ch12Call("b", "plain", `{"path":"b"}`)},
			func(ToolCall) ToolResultOverride { return ToolResultOverride{Terminate: ch12Bool(true)} }, RunTerminated, 1},
		{"the hook takes one call's terminate back", []ToolCall{ch12Call("a", "finish", `{"path":"a"}`), ch12Call("b", "finish", `{"path":"b"}`)},
			func(c ToolCall) ToolResultOverride {
				if c.ID == "b" {
					return ToolResultOverride{Terminate: ch12Bool(false)}
				}
				return ToolResultOverride{}
			}, RunStop, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := NewScriptedModel(ch12ToolUse(tc.calls...), ch12Answer("好的"))
			s := NewSession("s")
			ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("收尾")})
			opts := AgentLoopOptions{Model: model, Session: s, Tools: MustRegistry(ch12RawTool("finish", true), ch12RawTool("plain", false))}
			if tc.after != nil {
				opts.Hooks = &LoopHooks{AfterToolCall: func(_ context.Context, call ToolCall, _ ToolCallOutcome) (ToolResultOverride, error) {
					return tc.after(call), nil
				}}
			}
			result, events := ch12Run(t, opts)
			ch12End(t, result, tc.reason, tc.steps)
			if model.Calls() != tc.steps {
				t.Errorf("the model was asked %d times, want %d", model.Calls(), tc.steps)
			}
			if want := fmt.Sprintf("turn_end %s %d", tc.reason, tc.steps); len(events) == 0 || events[len(events)-1] != want {
				t.Errorf("the last event is %q, want %q", events[len(events)-1:], want)
			}
			lines := ch11Lines(ch11Events(t, s))
			want := "turn/end 1 terminated"
			if tc.reason != RunTerminated {
				want = "turn/end 2 stop"
			}
			if last := lines[len(lines)-1]; !strings.HasSuffix(last, want) {
				t.Errorf("the log ends with %q, want a %q", last, want)
			}
		})
	}
}

// --- Lab 12.5 执行模式 ---------------------------------------------------------------------------

func TestLab12_5_执行模式_ParallelPreparesFirst(t *testing.T) {
	for _, logged := range []bool{false, true} {
		t.Run(fmt.Sprintf("session=%v", logged), func(t *testing.T) { ch12ParallelBatch(t, logged) })
	}
}

// ch12ParallelBatch runs a batch of three calls in parallel mode, with or without a session.
func ch12ParallelBatch(t *testing.T, logged bool) {
	const n = 3
	tr := &ch12Trace{}
	var bodiesStarted atomic.Int32
	started := make(chan struct{}, n)
	allStarted := make(chan struct{})
	var once sync.Once
	ended := map[string]chan struct{}{"c1": make(chan struct{}), "c2": make(chan struct{}), "c3": make(chan struct{})}
	// Each body waits until every body has started (they run at the same time), then c3
	// returns first, c2 once c3's tool_end was reported, c1 once c2's was.
	tool := Tool{
		ToolDefinition: ToolDefinition{Name: "slow", Parameters: ch12PathSchema},
		Execute: func(ctx context.Context, args json.RawMessage, _ ToolExecContext) (ToolOutput, error) {
			id := ch12Path(args)
			bodiesStarted.Add(1)
			started <- struct{}{}
			if len(started) == n {
				once.Do(func() { close(allStarted) })
			}
			select {
			case <-allStarted:
			case <-time.After(ch10Patience / 5):
				return ToolOutput{}, errors.New("the other bodies never started: the calls did not run at the same time")
			}
			switch id {
			case "c1":
				<-ended["c2"]
			case "c2":
				<-ended["c3"]
			}
			return ToolOutput{Content: []ContentBlock{Text("完成 " + id)}}, nil
		},
	}
	var s *Session
	if logged {
		s = NewSession("s")
		ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("并行")})
	}
	model := NewScriptedModel(ch12ToolUse(ch12Call("c1", "slow", `{"path":"c1"}`), ch12Call("c2", "slow", `{"path":"c2"}`), ch12Call("c3", "slow", `{"path":"c3"}`)), ch12Answer("好的"))
	early := false
	result, events := ch12Run(t, AgentLoopOptions{
		Model: model, Session: s, Tools: MustRegistry(tool),
		OnEvent: func(e LoopEvent) {
			if end, ok := e.(ToolEndEvent); ok {
				close(ended[end.Result.ToolCallID])
			}
		},
		Hooks: &LoopHooks{BeforeToolCall: func(_ context.Context, call ToolCall, _ json.RawMessage) (ToolCallDecision, error) {
			tr.add("before %s", call.ID)
			// Let any body that was already set going run, so that one started too early shows.
			for range 100 {
				runtime.Gosched()
			}
			if bodiesStarted.Load() > 0 {
				early = true
			}
			return ToolCallDecision{}, nil
		}},
	})
	ch12End(t, result, RunStop, 2)
	if early {
		t.Fatalf("a tool body started while the batch was still being prepared: every call is prepared, in call order, before any body starts")
	}
	if got := tr.all(); !slices.Equal(got, []string{"before c1", "before c2", "before c3"}) {
		t.Fatalf("BeforeToolCall was called for %d calls, not once for each of c1, c2, c3 in call order", len(got))
	}
	ch11Diff(t, "the events", []string{"start c1", "start c2", "start c3", "end c3", "end c2", "end c1", "turn_end stop 2"}, events)
	ch11Diff(t, "the results (in call order, whatever order they finished in)", []string{
		"c1 error=false 完成 c1", "c2 error=false 完成 c2", "c3 error=false 完成 c3",
	}, ch12Results(result.Messages))
	if !logged {
		return
	}
	var results []string
	for _, line := range ch11Lines(ch11Events(t, s)) {
		if strings.Contains(line, " tool/result ") {
			results = append(results, line)
		}
	}
	ch11Diff(t, "the tool/result events (the commit cursor keeps call order)", []string{"10 tool/result c1 <-4", "11 tool/result c2 <-5", "12 tool/result c3 <-6"}, results)
}

func TestLab12_5_执行模式_Sequential(t *testing.T) {
	traced := func(tr *ch12Trace, name string, mode ToolExecutionMode) Tool {
		tool := ch12ReadTool(name, nil)
		tool.ExecutionMode = mode
		tool.Execute = func(_ context.Context, args json.RawMessage, _ ToolExecContext) (ToolOutput, error) {
			tr.add("body %s", ch12Path(args))
			return ToolOutput{Content: []ContentBlock{Text("ok")}}, nil
		}
		return tool
	}
	for _, tc := range []struct {
		name  string
		mode  ToolExecutionMode
		tools func(*ch12Trace) []Tool
		calls []ToolCall
	}{
		{"the run is sequential", ToolSequential,
			func(tr *ch12Trace) []Tool { return []Tool{traced(tr, "plain", "")} },
			[]ToolCall{ch12Call("c1", "plain", `{"path":"c1"}`), ch12Call("c2", "plain", `{"path":"c2"}`)}},
		{"one tool of the batch is sequential", "",
			func(tr *ch12Trace) []Tool {
				return []Tool{traced(tr, "plain", ToolParallel), traced(tr, "careful", ToolSequential)}
			},
			[]ToolCall{ch12Call("c1", "plain", `{"path":"c1"}`), ch12Call("c2", "careful", `{"path":"c2"}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &ch12Trace{}
			model := NewScriptedModel(ch12ToolUse(tc.calls...), ch12Answer("好的"))
			result, _, _ := ch12RunWith(t, AgentLoopOptions{
				Model: model, Tools: MustRegistry(tc.tools(tr)...), ToolExecution: tc.mode,
				Hooks: &LoopHooks{
					BeforeToolCall: func(_ context.Context, call ToolCall, _ json.RawMessage) (ToolCallDecision, error) {
						tr.add("before %s", call.ID)
						return ToolCallDecision{}, nil
					},
					AfterToolCall: func(_ context.Context, call ToolCall, _ ToolCallOutcome) (ToolResultOverride, error) {
						tr.add("after %s", call.ID)
						return ToolResultOverride{}, nil
					},
				},
			}, tr)
			ch12End(t, result, RunStop, 2)
			ch11Diff(t, "what happened, in order", []string{
				"start c1", "before c1", "body c1", "after c1", "end c1",
				"start c2", "before c2", "body c2", "after c2", "end c2",
				"turn_end stop 2",
			}, tr.all())
		})
	}
}

func TestLab12_5_执行模式_Pool(t *testing.T) {
	const calls, limit = 5, 2
	var active, most atomic.Int32
	started := make(chan string, calls)
	release := make(chan struct{})
	tool := Tool{
		ToolDefinition: ToolDefinition{Name: "wait", Parameters: ch12PathSchema},
		Execute: func(_ context.Context, args json.RawMessage, _ ToolExecContext) (ToolOutput, error) {
			now := active.Add(1)
			for {
				m := most.Load()
				if now <= m || most.CompareAndSwap(m, now) {
					break
				}
			}
			started <- ch12Path(args)
			<-release
			active.Add(-1)
			return ToolOutput{Content: []ContentBlock{Text("ok")}}, nil
		},
	}
	var batch []ToolCall
	for i := range calls {
		id := fmt.Sprintf("c%d", i+1)
		batch = append(batch, ch12Call(id, "wait", `{"path":"`+id+`"}`))
	}
	model := NewScriptedModel(ch12ToolUse(batch...), ch12Answer("好的"))
	runDone := make(chan AgentRunResult, 1)
	go func() {
		defer func() { _ = recover() }() // a stub's panic: the waits below report it
		r, _ := RunAgentLoop(context.Background(), AgentLoopOptions{Model: model, Tools: MustRegistry(tool), MaxParallelTools: limit})
		runDone <- r
	}()
	// Let the bodies through one at a time: each release lets one body end and the next begin.
	for i := range calls {
		if i >= limit {
			// Give any body that was set going too early the chance to show itself, then let one end.
			for range 100 {
				runtime.Gosched()
			}
			release <- struct{}{}
		}
		select {
		case <-started:
		case <-time.After(ch10Patience):
			close(release)
			t.Fatalf("only %d of %d tool bodies ever started with MaxParallelTools %d: a finished body must let the next one start", i, calls, limit)
		}
	}
	for range limit {
		release <- struct{}{}
	}
	select {
	case r := <-runDone:
		ch12End(t, r, RunStop, 2)
	case <-time.After(ch10Patience):
		close(release)
		t.Fatalf("the run did not return after every body ended")
	}
	if got := most.Load(); got > limit {
		t.Errorf("more tool bodies ran at once than MaxParallelTools %d allows", limit)
	}
	// Options a run cannot honour are refused before anything runs.
	for _, bad := range []AgentLoopOptions{
		{Model: NewScriptedModel(), MaxParallelTools: -1},
		{Model: NewScriptedModel(), ToolExecution: "random"},
	} {
		if _, err := RunAgentLoop(context.Background(), bad); err == nil {
			t.Errorf("RunAgentLoop with MaxParallelTools %d and ToolExecution %q: no error, want one", bad.MaxParallelTools, bad.ToolExecution)
		}
	}
}

// --- Lab 12.6 请求与回合钩子 -----------------------------------------------------------------------

// ch12Requests renders the messages of every request a scripted model received.
func ch12Requests(model *ScriptedModel) [][]string {
	out := [][]string{}
	for _, req := range model.Requests() {
		out = append(out, ch10Messages(req.Messages))
	}
	return out
}

func TestLab12_6_请求与回合钩子_TransformContext(t *testing.T) {
	for _, logged := range []bool{false, true} {
		t.Run(fmt.Sprintf("session=%v", logged), func(t *testing.T) { ch12Transform(t, logged) })
	}
}

// ch12Transform runs two turns with a TransformContext hook, with or without a session.
func ch12Transform(t *testing.T, logged bool) {
	var s *Session
	var input []Message
	if logged {
		s = NewSession("s")
		ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读 a.md")})
	} else {
		input = []Message{UserText("读 a.md")}
	}
	model := NewScriptedModel(ch12ToolUse(ch12Call("c1", "read", `{"path":"a.md"}`)), ch12Answer("好的"))
	tr := &ch12Trace{}
	result, _ := ch12Run(t, AgentLoopOptions{
		Model: model, Session: s, Tools: MustRegistry(ch12ReadTool("read", nil)), Context: AgentContext{Messages: input},
		Hooks: &LoopHooks{TransformContext: func(_ context.Context, messages []Message) ([]Message, error) {
			tr.add("%q", ch10Messages(messages))
			last := messages[len(messages)-1]
			messages[0] = UserText("改掉了") // the hook's own copy: the log and the transcript keep theirs
			return []Message{UserText("[前文已省略]"), last}, nil
		}},
	})
	ch12End(t, result, RunStop, 2)
	ch11Diff(t, "what TransformContext was given, request by request", []string{
		`["user:读 a.md"]`,
		`["user:读 a.md" "assistant:[c1]" "toolResult:c1=读到 a.md"]`,
	}, tr.all())
	requests := ch12Requests(model)
	if len(requests) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(requests))
	}
	ch11Diff(t, "the first request", []string{"user:[前文已省略]", "user:读 a.md"}, requests[0])
	ch11Diff(t, "the second request", []string{"user:[前文已省略]", "toolResult:c1=读到 a.md"}, requests[1])
	ch11Diff(t, "the run's transcript", []string{"user:读 a.md", "assistant:[c1]", "toolResult:c1=读到 a.md", "assistant:好的"}, ch10Messages(result.Messages))
	if !logged {
		ch11Diff(t, "the caller's messages", []string{"user:读 a.md"}, ch10Messages(input))
		return
	}
	events := ch11Events(t, s)
	ch11Diff(t, "the log", []string{
		"0 user/message user:读 a.md",
		"1 turn/start 1",
		"2 model/request through=1 messages=1",
		"3 model/context <-2",
		"4 assistant/message assistant:[c1]",
		"5 tool/call c1",
		"6 tool/start c1 <-5",
		"7 tool/result c1 <-5",
		"8 turn/end 1 toolUse",
		"9 turn/start 2",
		"10 model/request through=9 messages=3",
		"11 model/context <-10",
		"12 assistant/message assistant:好的",
		"13 turn/end 2 stop",
	}, ch11Lines(events))
	// The model/context event holds what the model saw, and is ignorable.
	for _, seq := range []int{3, 11} {
		if seq >= len(events) {
			break
		}
		e := events[seq]
		var data struct{ Messages json.RawMessage }
		if err := json.Unmarshal(e.Raw, &data); err != nil || !e.Ignorable {
			t.Errorf("event %d: ignorable=%v, data %s (%v); want an ignorable event whose data is {\"messages\": [...]}", seq, e.Ignorable, e.Raw, err)
			continue
		}
		got, err := UnmarshalMessages(data.Messages)
		if err != nil {
			t.Errorf("event %d: the messages do not decode: %v", seq, err)
			continue
		}
		ch11Diff(t, fmt.Sprintf("the messages of event %d", seq), requests[(seq-3)/8], ch10Messages(got))
	}
}

func TestLab12_6_请求与回合钩子_TransformFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		hook func() ([]Message, error)
		want string
	}{
		{"error", func() ([]Message, error) { return nil, errors.New("摘要服务不可用") }, "transformContext failed: 摘要服务不可用"},
		{"panic", func() ([]Message, error) { panic("boom") }, "transformContext failed: transformContext panicked: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := NewScriptedModel(ch12Answer("不该被问到"))
			result, _ := ch12Run(t, AgentLoopOptions{
				Model:   model,
				Context: AgentContext{Messages: []Message{UserText("你好")}},
				Hooks:   &LoopHooks{TransformContext: func(context.Context, []Message) ([]Message, error) { return tc.hook() }},
			})
			ch12End(t, result, RunError, 1)
			if model.Calls() != 0 {
				t.Errorf("the model was asked %d times, want 0: a failed transform fails the turn before the request", model.Calls())
			}
			last, _ := result.Messages[len(result.Messages)-1].(AssistantMessage)
			if last.StopReason != StopReasonError || last.ErrorMessage != tc.want {
				t.Errorf("the turn's assistant message has stop reason %q and error %q, want %q and %q", last.StopReason, last.ErrorMessage, StopReasonError, tc.want)
			}
		})
	}
}

func TestLab12_6_请求与回合钩子_ShouldStopAfterTurn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tool   string
		stop   func() bool
		reason RunReason
		steps  int
		asked  []string
	}{
		{"stop", "read", func() bool { return true }, RunStopRequested, 1,
			[]string{"steps=1 assistant:[c1 c2] results=[toolResult:c1=读到 a.md toolResult:c2=读到 b.md]"}},
		{"go on", "read", func() bool { return false }, RunStop, 2,
			[]string{"steps=1 assistant:[c1 c2] results=[toolResult:c1=读到 a.md toolResult:c2=读到 b.md]"}},
		{"panic", "read", func() bool { panic("boom") }, RunError, 1,
			[]string{"steps=1 assistant:[c1 c2] results=[toolResult:c1=读到 a.md toolResult:c2=读到 b.md]"}},
		{"the batch terminated", "finish", func() bool { return false }, RunTerminated, 1, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := []string{}
			model := NewScriptedModel(ch12ToolUse(ch12Call("c1", tc.tool, `{"path":"a.md"}`), ch12Call("c2", tc.tool, `{"path":"b.md"}`)), ch12Answer("好的"))
			result, events := ch12Run(t, AgentLoopOptions{
				Model: model, Tools: MustRegistry(ch12ReadTool("read", nil), ch12RawTool("finish", true)),
				Hooks: &LoopHooks{ShouldStopAfterTurn: func(_ context.Context, turn TurnSummary) bool {
					var results []string
					for _, r := range turn.Results {
						results = append(results, ch10Message(r))
					}
					asked = append(asked, fmt.Sprintf("steps=%d %s results=%v", turn.Steps, ch10Message(turn.Assistant), results))
					return tc.stop()
				}},
			})
			ch12End(t, result, tc.reason, tc.steps)
			ch11Diff(t, "what ShouldStopAfterTurn was asked (it is not asked after a turn without tools)", tc.asked, asked)
			if model.Calls() != tc.steps {
				t.Errorf("the model was asked %d times, want %d", model.Calls(), tc.steps)
			}
			if want := fmt.Sprintf("turn_end %s %d", tc.reason, tc.steps); len(events) == 0 || events[len(events)-1] != want {
				t.Errorf("the last event is %q, want %q", events[len(events)-1:], want)
			}
		})
	}
}
