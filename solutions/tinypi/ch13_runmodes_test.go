package tinypi

// Chapter 13's focused tests: the runtime, its three run modes and the proxy.
//
// The modes are driven as a learner's program would be: the test binary runs itself as a child
// process (see init below), with a script file for its model, a workspace holding hello.txt and a
// session file, and the test reads the child's stdout, stderr and exit status. A stub's pending
// message reaches the test through the child's stderr (a panic) or through what the mode writes
// (an RPC response, an HTTP body, an error event): ch13Pending turns it into the test's first
// failure. Every wait is bounded by ch13Deadline and synchronised on what the child or the server
// writes, never on a sleep.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/learn-tinypi/course/solutions/tinypi/internal/labtest"
)

// ch13Deadline bounds every wait of these tests: nothing here takes a second, and a mode that
// hangs must fail its test, not the binary's timeout.
const ch13Deadline = 5 * time.Second

// init turns the test binary into chapter 13's program when TINYPI_CH13_MODE is set: the mode
// tests run it as a child process. Without the variable it does nothing.
func init() {
	if mode := os.Getenv("TINYPI_CH13_MODE"); mode != "" {
		os.Exit(ch13ChildMain(mode))
	}
}

// ch13ChildMain is the child's main: a runtime over the script file (or a model that waits to be
// aborted) in the workspace, with a session file, run in the mode given.
func ch13ChildMain(mode string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 3
	}
	var model Model = ch13BlockingModel{started: os.Stderr, windDown: 100 * time.Millisecond}
	if path := os.Getenv("TINYPI_CH13_SCRIPT"); path != "" {
		script, err := LoadScript(path)
		if err != nil {
			return fail(err)
		}
		model = NewScriptedModel(script...)
	}
	session, err := CreateSession(SessionOptions{ID: "ch13", Path: os.Getenv("TINYPI_CH13_SESSION")})
	if err != nil {
		return fail(err)
	}
	defer session.Close()
	rt, err := NewRuntime(RuntimeOptions{Model: model, Workspace: os.Getenv("TINYPI_CH13_WORKSPACE"),
		SystemPrompt: "You are tinypi.", Session: session, MaxSteps: 3})
	if err != nil {
		return fail(err)
	}
	defer rt.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	prompt := os.Getenv("TINYPI_CH13_PROMPT")
	switch mode {
	case "print":
		return RunPrintMode(ctx, rt, prompt, os.Stdout, os.Stderr)
	case "json":
		return RunJSONMode(ctx, rt, prompt, os.Stdout)
	case "rpc":
		if err := ServeRPC(ctx, rt, os.Stdin, os.Stdout); err != nil {
			return fail(err)
		}
		return 0
	}
	return fail(fmt.Errorf("unknown mode %q", mode))
}

// ch13BlockingModel starts an answer, says so on started, and then waits for its context, as a
// model does while it thinks: only an abort ends its stream, windDown after the abort, as a
// provider's stream takes a moment to close. (The wind-down makes a program that does not wait
// for the aborted run to end lose its last events every time, not only now and then.)
type ch13BlockingModel struct {
	started  io.Writer
	windDown time.Duration
}

func (m ch13BlockingModel) Stream(ctx context.Context, req Request) *AssistantStream {
	s := NewAssistantStream()
	go func() {
		defer s.Close()
		s.Push(StartEvent{})
		s.Push(TextDeltaEvent{Delta: "Thinking"})
		if m.started != nil {
			fmt.Fprintln(m.started, "model: started")
		}
		<-ctx.Done()
		time.Sleep(m.windDown)
		s.Push(ErrorEvent{Message: AssistantMessage{Content: []ContentBlock{Text("Thinking")},
			StopReason: StopReasonAborted, ErrorMessage: "blocking model: " + ctx.Err().Error()}})
	}()
	return s
}

// ch13Pending fails the test with a stub's pending message when one of texts holds one, so that
// the first failure of a test whose lab is a stub names the lab.
func ch13Pending(t *testing.T, texts ...string) {
	t.Helper()
	for _, text := range texts {
		if msg := labPending(text); msg != "" {
			t.Fatal(msg)
		}
	}
}

// ch13ReadHello is a script: the model reads hello.txt, then answers.
var ch13ReadHello = []AssistantMessage{
	{Content: []ContentBlock{Text("Let me read it."), ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"hello.txt"}`}}, StopReason: StopReasonToolUse},
	{Content: []ContentBlock{Text("It says hello.")}, StopReason: StopReasonStop},
}

// ch13Workspace makes a workspace directory holding hello.txt.
func ch13Workspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello from the workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

// ch13Child is one run of the program in a mode, as a child process.
type ch13Child struct {
	mode, prompt string
	script       string // the script file; "" for the blocking model
	session      string // the session file the child writes (set by command)
}

// command returns the child's command, in a new workspace holding hello.txt.
func (c *ch13Child) command(t *testing.T) *exec.Cmd {
	t.Helper()
	// The child lives twice as long as any one wait of the test, so that a wait that times out
	// says so before the child is killed.
	ctx, cancel := context.WithTimeout(context.Background(), 2*ch13Deadline)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	c.session = filepath.Join(t.TempDir(), "session.jsonl")
	// GORACE: a child built with -race would otherwise sleep a second before it exits.
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "TINYPI_CH13_MODE="+c.mode, "TINYPI_CH13_SCRIPT="+c.script,
		"TINYPI_CH13_WORKSPACE="+ch13Workspace(t), "TINYPI_CH13_PROMPT="+c.prompt,
		"TINYPI_CH13_SESSION="+c.session)
	return cmd
}

// run runs the child to its end and returns stdout, stderr and the exit status.
func (c *ch13Child) run(t *testing.T) (stdout, stderr string, code int) {
	t.Helper()
	cmd := c.command(t)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	ch13Pending(t, errOut.String())
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errOut.String(), 0
	case errors.As(err, &exit) && exit.Exited():
		return out.String(), errOut.String(), exit.ExitCode()
	}
	t.Fatalf("%s mode: %v (killed after %v?)\nstderr:\n%s", c.mode, err, ch13Deadline, errOut.String())
	return "", "", 0
}

// ch13SessionTypes is the types of the session file's events.
func ch13SessionTypes(t *testing.T, path string) []SessionEventType {
	t.Helper()
	s, _, err := LoadSession(path, SessionOptions{})
	if err != nil {
		t.Fatalf("LoadSession: %v", err)
	}
	defer s.Close()
	var types []SessionEventType
	for _, e := range s.Events() {
		types = append(types, e.Type)
	}
	return types
}

// ch13ReadHelloSession is what the session file holds after the ch13ReadHello run.
var ch13ReadHelloSession = []SessionEventType{
	EventUserMessage,
	EventTurnStart, EventModelRequest, EventAssistantMessage, EventToolCall, EventToolStart, EventToolResult, EventTurnEnd,
	EventTurnStart, EventModelRequest, EventAssistantMessage, EventTurnEnd,
}

// --- Lab 13.1: the runtime -----------------------------------------------------------------------

// ch13Requests is a model that answers with script and keeps every request it was given.
type ch13Requests struct {
	mu       sync.Mutex
	requests []Request
	model    Model
}

func (m *ch13Requests) Stream(ctx context.Context, req Request) *AssistantStream {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()
	return m.model.Stream(ctx, req)
}

func (m *ch13Requests) all() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}

// ch13NewRuntime is NewRuntime(opts) under the lab guard; it fails the test on an error.
func ch13NewRuntime(t *testing.T, opts RuntimeOptions) *Runtime {
	t.Helper()
	return callLab(t, func() *Runtime {
		rt, err := NewRuntime(opts)
		if err != nil {
			t.Fatalf("NewRuntime: %v", err)
		}
		return rt
	})
}

// ch13Run prompts rt and returns the run's run_end, failing when it does not come in time.
func ch13Run(t *testing.T, rt *Runtime, prompt string) RunEndEvent {
	t.Helper()
	ends := make(chan RunEndEvent, 1)
	unsubscribe := rt.Agent.Subscribe(func(e AgentEvent) {
		if e, ok := e.(RunEndEvent); ok {
			ends <- e
		}
	})
	defer unsubscribe()
	if err := rt.Agent.Prompt(context.Background(), UserText(prompt)); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	select {
	case end := <-ends:
		return end
	case <-time.After(ch13Deadline):
		t.Fatalf("no run_end within %v", ch13Deadline)
	}
	return RunEndEvent{}
}

func TestLab13_1_组装运行时_Compose(t *testing.T) {
	// base/AGENTS.md is outside ContextRoot (base/home): it must not be read.
	base := t.TempDir()
	root := filepath.Join(base, "home")
	ws := filepath.Join(root, "shop", "api")
	for path, content := range map[string]string{
		"AGENTS.md":               "Outside the context root.",
		"home/AGENTS.md":          "Write tests first.",
		"home/shop/AGENTS.md":     strings.Repeat("x", MaxResourceBytes+1),
		"home/shop/api/AGENTS.md": "Use Go 1.26.",
		"home/shop/api/hello.txt": "hello from the workspace\n",
	} {
		p := filepath.Join(base, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shout := Tool{ToolDefinition: ToolDefinition{Name: "shout", Description: "Shout a word.",
		Parameters: `{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`},
		Execute: func(ctx context.Context, raw json.RawMessage, exec ToolExecContext) (ToolOutput, error) {
			return ToolOutput{Content: []ContentBlock{Text("HEY")}}, nil
		}}
	var asked []string
	hooks := &LoopHooks{BeforeToolCall: func(ctx context.Context, call ToolCall, args json.RawMessage) (ToolCallDecision, error) {
		asked = append(asked, call.ID)
		return ToolCallDecision{}, nil
	}}
	model := &ch13Requests{model: NewScriptedModel(
		AssistantMessage{Content: []ContentBlock{
			ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"hello.txt"}`},
			ToolCall{ID: "c2", Name: "shout", Arguments: `{"word":"hey"}`},
		}, StopReason: StopReasonToolUse},
		AssistantMessage{Content: []ContentBlock{Text("Done.")}, StopReason: StopReasonStop},
	)}
	session := NewSession("compose")
	rt := ch13NewRuntime(t, RuntimeOptions{Model: model, Workspace: ws, ContextRoot: root,
		SystemPrompt: "You are tinypi.", Tools: []Tool{shout}, Session: session, Hooks: hooks,
		ToolExecution: ToolSequential, MaxSteps: 5})
	defer rt.Close()

	var files []string // relative to base, so that the message is the same from run to run
	for _, f := range rt.ContextFiles {
		rel, err := filepath.Rel(base, f.Path)
		if err != nil {
			rel = f.Path
		}
		files = append(files, filepath.ToSlash(rel))
	}
	if want := []string{"home/AGENTS.md", "home/shop/api/AGENTS.md"}; !slices.Equal(want, files) {
		t.Errorf("Runtime.ContextFiles, relative to the test's directory: %q; want %q: the search runs from ContextRoot down to the workspace", files, want)
	}
	wantPrompt := "You are tinypi.\n\n" +
		"<context-file path=\"" + filepath.Join(root, "AGENTS.md") + "\">\nWrite tests first.\n</context-file>\n\n" +
		"<context-file path=\"" + filepath.Join(ws, "AGENTS.md") + "\">\nUse Go 1.26.\n</context-file>"
	if rt.SystemPrompt != wantPrompt {
		t.Errorf("Runtime.SystemPrompt:\n%s\nwant the base prompt and the two usable context files, outermost first:\n%s", rt.SystemPrompt, wantPrompt)
	}
	if len(rt.Problems) != 1 || rt.Problems[0].Path != filepath.Join(root, "shop", "AGENTS.md") {
		t.Errorf("Runtime.Problems = %v; want one, for the oversized %s", rt.Problems, filepath.Join(root, "shop", "AGENTS.md"))
	}
	if rt.Session != session {
		t.Errorf("Runtime.Session is not the session of the options")
	}

	end := ch13Run(t, rt, "read hello.txt and shout")
	if end.Reason != RunStop {
		t.Fatalf("the run ended with %s (%s), want stop", end.Reason, end.Error)
	}
	requests := model.all()
	if len(requests) != 2 {
		t.Fatalf("the model was asked %d times, want 2", len(requests))
	}
	if requests[0].SystemPrompt != wantPrompt {
		t.Errorf("the model's system prompt:\n%s\nwant Runtime.SystemPrompt:\n%s", requests[0].SystemPrompt, wantPrompt)
	}
	var tools []string
	for _, d := range requests[0].Tools {
		tools = append(tools, d.Name)
	}
	if diff := cmp.Diff([]string{"read", "write", "edit", "bash", "shout"}, tools); diff != "" {
		t.Errorf("the tools the model was offered: the coding tools, then the options' (-want +got):\n%s", diff)
	}
	var results []string
	for _, m := range requests[1].Messages {
		if r, ok := m.(ToolResultMessage); ok {
			results = append(results, r.ToolCallID+" "+TextOf(r.Content))
		}
	}
	if diff := cmp.Diff([]string{"c1 hello from the workspace\n", "c2 HEY"}, results); diff != "" {
		t.Errorf("the tool results (-want +got): read must read the workspace's hello.txt\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c1", "c2"}, asked); diff != "" {
		t.Errorf("BeforeToolCall was asked about (-want +got): the options' hooks must reach the agent\n%s", diff)
	}
	// MaxSteps reaches the agent too: with 1, a model that keeps calling tools is stopped after one step.
	looping := NewScriptedModel(slices.Repeat([]AssistantMessage{{Content: []ContentBlock{
		ToolCall{ID: "c", Name: "read", Arguments: `{"path":"hello.txt"}`}}, StopReason: StopReasonToolUse}}, 3)...)
	short := ch13NewRuntime(t, RuntimeOptions{Model: looping, Workspace: ws, ContextRoot: root, MaxSteps: 1})
	defer short.Close()
	if end := ch13Run(t, short, "read hello.txt for ever"); end.Reason != RunMaxSteps {
		t.Errorf("with MaxSteps 1, the run ended with %s; want maxSteps: the options' MaxSteps must reach the agent", end.Reason)
	}

	var types []SessionEventType
	for _, e := range session.Events() {
		types = append(types, e.Type)
	}
	wantTypes := []SessionEventType{
		EventUserMessage,
		EventTurnStart, EventModelRequest, EventAssistantMessage,
		EventToolCall, EventToolCall, EventToolStart, EventToolResult, EventToolStart, EventToolResult, EventTurnEnd,
		EventTurnStart, EventModelRequest, EventAssistantMessage, EventTurnEnd,
	}
	switch {
	case len(types) == 0:
		t.Errorf("the options' session has no events: the run must be logged in it")
	case !cmp.Equal(wantTypes, types):
		// Parallel calls end in any order: the message says only that they overlapped.
		t.Errorf("the session's events are not %v: with ToolSequential, a call starts only after the call before it has its result", wantTypes)
	}
}

func TestLab13_1_组装运行时_Refusals(t *testing.T) {
	ws := ch13Workspace(t)
	model := NewScriptedModel()
	dup := Tool{ToolDefinition: ToolDefinition{Name: "read", Parameters: `{"type":"object"}`},
		Execute: func(context.Context, json.RawMessage, ToolExecContext) (ToolOutput, error) { return ToolOutput{}, nil }}
	for _, tt := range []struct {
		name string
		opts RuntimeOptions
		want string
	}{
		{"no model", RuntimeOptions{Workspace: ws}, "no model"},
		{"no workspace", RuntimeOptions{Model: model}, "no workspace"},
		{"missing workspace", RuntimeOptions{Model: model, Workspace: filepath.Join(ws, "nope")}, "nope"},
		{"a tool named twice", RuntimeOptions{Model: model, Workspace: ws, Tools: []Tool{dup}}, "read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var rt *Runtime
			var err error
			open := labtest.OpenFiles(t)
			runLab(t, func() { rt, err = NewRuntime(tt.opts) })
			if now := labtest.OpenFiles(t); now > open {
				t.Errorf("NewRuntime failed and left %d more file(s) open: a step that fails closes what the steps before it opened (the workspace)", now-open)
			}
			if rt != nil || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewRuntime = %v, %v; want no runtime and an error naming %q", rt, err, tt.want)
			}
		})
	}
}

func TestLab13_1_组装运行时_Close(t *testing.T) {
	ws := ch13Workspace(t)
	started := make(chan struct{})
	model := ch13ModelFunc(func(ctx context.Context, req Request) *AssistantStream {
		close(started)
		return ch13BlockingModel{}.Stream(ctx, req)
	})
	rt := ch13NewRuntime(t, RuntimeOptions{Model: model, Workspace: ws})
	if rt.Session == nil {
		t.Fatal("Runtime.Session is nil; without a session in the options the runtime makes its own")
	}
	ends := make(chan RunEndEvent, 1)
	rt.Agent.Subscribe(func(e AgentEvent) {
		if e, ok := e.(RunEndEvent); ok {
			ends <- e
		}
	})
	if err := rt.Agent.Prompt(context.Background(), UserText("think")); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	select {
	case <-started:
	case <-time.After(ch13Deadline):
		t.Fatalf("the model was not asked within %v", ch13Deadline)
	}
	closed := make(chan error, 1)
	go func() { closed <- rt.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(ch13Deadline):
		t.Fatalf("Close did not return within %v: it must abort the run", ch13Deadline)
	}
	select {
	case end := <-ends:
		if end.Reason != RunAborted {
			t.Errorf("the run ended with %s, want aborted", end.Reason)
		}
	default:
		t.Errorf("Close returned before the run's run_end was delivered")
	}
	if n := rt.Session.Len(); n == 0 || rt.Session.Events()[n-1].Type != EventTurnEnd {
		t.Errorf("the runtime's own session does not end with the aborted turn's turn/end: %d events", n)
	}
}

// --- Lab 13.2: print mode ------------------------------------------------------------------------

func TestLab13_2_打印模式_Answer(t *testing.T) {
	c := &ch13Child{mode: "print", prompt: "what does hello.txt say?", script: ch13Script(t, ch13ReadHello...)}
	stdout, stderr, code := c.run(t)
	if stdout != "It says hello.\n" || code != ExitOK || stderr != "" {
		t.Errorf("print mode: exit %d, stdout %q, stderr %q; want exit 0, stdout %q (the last answer only), nothing on stderr",
			code, stdout, stderr, "It says hello.\n")
	}
	if diff := cmp.Diff(ch13ReadHelloSession, ch13SessionTypes(t, c.session)); diff != "" {
		t.Errorf("the session file (-want +got):\n%s", diff)
	}
}

// ch13BusyRuntime is a runtime whose agent is busy with a run that waits to be aborted: a mode
// started on it cannot start its own run.
func ch13BusyRuntime(t *testing.T) *Runtime {
	t.Helper()
	started := make(chan struct{})
	model := ch13ModelFunc(func(ctx context.Context, req Request) *AssistantStream {
		close(started)
		return ch13BlockingModel{}.Stream(ctx, req)
	})
	rt := ch13NewRuntime(t, RuntimeOptions{Model: model, Workspace: ch13Workspace(t)})
	t.Cleanup(func() { rt.Close() })
	if err := rt.Agent.Prompt(context.Background(), UserText("think")); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	<-started
	return rt
}

func TestLab13_2_打印模式_ExitStatus(t *testing.T) {
	for _, tt := range []struct {
		reason RunReason
		want   int
	}{{RunStop, 0}, {RunError, 1}, {RunAborted, 130}, {RunLength, 2}, {RunMaxSteps, 2}, {RunTerminated, 2}, {RunStopRequested, 2}} {
		if got := callLab(t, func() int { return ExitStatus(tt.reason) }); got != tt.want {
			t.Errorf("ExitStatus(%s) = %d, want %d", tt.reason, got, tt.want)
		}
	}
	// A run that cannot start: the agent is busy.
	var stdout, stderr bytes.Buffer
	code := callLab(t, func() int { return RunPrintMode(context.Background(), ch13BusyRuntime(t), "hi", &stdout, &stderr) })
	wantErr := "tinypi: tinypi: agent is busy: a run is active (run 1)\n"
	if code != ExitRunFailed || stdout.String() != "" || stderr.String() != wantErr {
		t.Errorf("print mode on a busy agent: exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout, stderr %q",
			code, stdout.String(), stderr.String(), wantErr)
	}
	for _, tt := range []struct {
		name       string
		script     []AssistantMessage
		wantCode   int
		wantStderr string
	}{
		{"model error", []AssistantMessage{{Content: []ContentBlock{Text("It says")}, StopReason: StopReasonError, ErrorMessage: "rate limited"}}, 1,
			"tinypi: the run ended with error: rate limited\n"},
		{"length", []AssistantMessage{{Content: []ContentBlock{Text("It says")}, StopReason: StopReasonLength}}, 2,
			"tinypi: the run ended with length\n"},
		{"step limit", slices.Repeat([]AssistantMessage{ch13ReadHello[0]}, 4), 2,
			"tinypi: the run ended with maxSteps\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &ch13Child{mode: "print", prompt: "hi", script: ch13Script(t, tt.script...)}
			stdout, stderr, code := c.run(t)
			if code != tt.wantCode || stdout != "" || stderr != tt.wantStderr {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, nothing on stdout, stderr %q",
					code, stdout, stderr, tt.wantCode, tt.wantStderr)
			}
		})
	}
}

func TestLab13_2_打印模式_Interrupt(t *testing.T) {
	c := &ch13Child{mode: "print", prompt: "think hard"}
	cmd := c.command(t)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var seen []string
	for lines.Scan() && lines.Text() != "model: started" {
		seen = append(seen, lines.Text())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
		seen = append(seen, lines.Text())
	}
	err = cmd.Wait()
	ch13Pending(t, strings.Join(seen, "\n"))
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	}
	want := []string{"tinypi: the run ended with aborted: blocking model: context canceled"}
	if code != ExitAborted || stdout.String() != "" || !cmp.Equal(want, seen) {
		t.Errorf("after SIGINT: exit %d (%v), stdout %q, stderr %q; want exit 130, nothing on stdout, stderr %q",
			code, err, stdout.String(), seen, want)
	}
	if types := ch13SessionTypes(t, c.session); len(types) == 0 || types[len(types)-1] != EventTurnEnd {
		t.Errorf("the session file holds %v; want it to end with the aborted turn's turn/end", types)
	}
}

// --- Lab 13.3: JSON mode -------------------------------------------------------------------------

// ch13JSONLines decodes stdout's lines, failing on a line that is not one JSON object.
func ch13JSONLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	if !strings.HasSuffix(stdout, "\n") {
		t.Fatalf("stdout does not end with a newline: %q", stdout)
	}
	var out []map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %d is not one JSON object (%v):\n%s", i+1, err, line)
		}
		out = append(out, v)
	}
	return out
}

func TestLab13_3_JSON模式_Lines(t *testing.T) {
	c := &ch13Child{mode: "json", prompt: "what does hello.txt say?", script: ch13Script(t, ch13ReadHello...)}
	stdout, stderr, code := c.run(t)
	if code != ExitOK || stderr != "" {
		t.Fatalf("json mode: exit %d, stderr %q; want 0 and nothing", code, stderr)
	}
	var types []string
	for i, v := range ch13JSONLines(t, stdout) {
		if v["run"] != 1.0 {
			t.Errorf("line %d is not an event of run 1: %v", i+1, v)
		}
		types = append(types, fmt.Sprint(v["type"]))
	}
	want := []string{"run_start",
		"model_event", "model_event", "model_event", "model_event", "model_event", "assistant_message",
		"tool_start", "tool_end",
		"model_event", "model_event", "model_event", "assistant_message",
		"turn_end", "run_end"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("event types, one per line (-want +got):\n%s", diff)
	}
	lines := strings.Split(stdout, "\n")
	if len(lines) > 14 {
		wantTool := `{"call":{"arguments":"{\"path\":\"hello.txt\"}","id":"c1","name":"read"},"run":1,"type":"tool_start"}`
		if lines[7] != wantTool {
			t.Errorf("line 8:\n%s\nwant\n%s", lines[7], wantTool)
		}
		wantEnd := `{"reason":"stop","run":1,"steps":2,"type":"turn_end"}`
		if lines[13] != wantEnd {
			t.Errorf("line 14:\n%s\nwant\n%s", lines[13], wantEnd)
		}
	}
}

func TestLab13_3_JSON模式_Failure(t *testing.T) {
	c := &ch13Child{mode: "json", prompt: "hi", script: ch13Script(t,
		AssistantMessage{Content: []ContentBlock{Text("line one\nline two")}, StopReason: StopReasonError, ErrorMessage: "overloaded"})}
	stdout, stderr, code := c.run(t)
	if code != ExitRunFailed || stderr != "" {
		t.Errorf("json mode after a model error: exit %d, stderr %q; want exit 1 and nothing on stderr", code, stderr)
	}
	var types []string
	for _, v := range ch13JSONLines(t, stdout) {
		types = append(types, fmt.Sprint(v["type"]))
	}
	want := []string{"run_start", "model_event", "model_event", "model_event", "assistant_message", "turn_end", "run_end"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("event types, one per line (-want +got): a text with a line break is still one line\n%s", diff)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	wantEnd := `{"error":"overloaded","messages":[` +
		`{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":0},` +
		`{"role":"assistant","content":[{"type":"text","text":"line one\nline two"}],"stopReason":"error","errorMessage":"overloaded","usage":{"input":0,"output":0,"total":0},"timestamp":0}` +
		`],"reason":"error","run":1,"type":"run_end"}`
	if last := lines[len(lines)-1]; last != wantEnd {
		t.Errorf("the last line:\n%s\nwant\n%s", last, wantEnd)
	}
	ch13JSONInProcess(t)
}

// ch13BrokenWriter accepts ok writes, then fails every write, and counts them all.
type ch13BrokenWriter struct {
	ok, writes int
}

func (w *ch13BrokenWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes > w.ok {
		return 0, errors.New("broken pipe")
	}
	return len(p), nil
}

// ch13JSONInProcess checks, in this process, what a child cannot show: JSON mode on a stdout that
// breaks, and on an agent that cannot start a run.
func ch13JSONInProcess(t *testing.T) {
	t.Helper()
	rt := ch13NewRuntime(t, RuntimeOptions{Model: NewScriptedModel(ch13ReadHello...), Workspace: ch13Workspace(t)})
	defer rt.Close()
	out := &ch13BrokenWriter{ok: 2}
	if code := callLab(t, func() int { return RunJSONMode(context.Background(), rt, "hi", out) }); code != ExitRunFailed || out.writes != 3 {
		t.Errorf("json mode on a stdout that fails from its third write: exit %d after %d writes; want exit 1, and no write after the failed one", code, out.writes)
	}
	var busy bytes.Buffer
	code := callLab(t, func() int { return RunJSONMode(context.Background(), ch13BusyRuntime(t), "hi", &busy) })
	want := `{"error":"tinypi: agent is busy: a run is active (run 1)","type":"error"}` + "\n"
	if code != ExitRunFailed || busy.String() != want {
		t.Errorf("json mode on a busy agent: exit %d, stdout %q; want exit 1 and %q", code, busy.String(), want)
	}
}

// --- Labs 13.4 and 13.5: RPC mode ----------------------------------------------------------------

// ch13RPC is an RPC child: send writes a line to its stdin, next reads a line of its stdout.
type ch13RPC struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *bytes.Buffer
	child  *ch13Child
	waited bool
}

func ch13StartRPC(t *testing.T, c *ch13Child) *ch13RPC {
	t.Helper()
	c.mode = "rpc"
	cmd := c.command(t)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &ch13RPC{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 64), stderr: &bytes.Buffer{}, child: c}
	cmd.Stderr = r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		r.wait()
	})
	return r
}

// wait waits for the child to exit (once) and returns how it exited.
func (r *ch13RPC) wait() error {
	if r.waited {
		return nil
	}
	r.waited = true
	for range r.lines {
	}
	return r.cmd.Wait()
}

func (r *ch13RPC) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.stdin, line+"\n"); err != nil {
		r.wait()
		ch13Pending(r.t, r.stderr.String())
		r.t.Fatalf("writing a %d-byte line to the RPC child: %v; stderr:\n%s", len(line)+1, err, r.stderr.String())
	}
}

// next returns the next line as a map, failing when none comes within the deadline.
func (r *ch13RPC) next() map[string]any {
	r.t.Helper()
	select {
	case line, ok := <-r.lines:
		if !ok {
			r.wait()
			ch13Pending(r.t, r.stderr.String())
			r.t.Fatalf("the RPC child closed stdout; stderr:\n%s", r.stderr.String())
		}
		ch13Pending(r.t, line)
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			r.t.Fatalf("not a JSON object: %q", line)
		}
		return v
	case <-time.After(ch13Deadline):
		r.t.Fatalf("no line from the RPC child within %v", ch13Deadline)
	}
	return nil
}

// response reads the next line and checks that it is the response wanted.
func (r *ch13RPC) response(id, command string, success bool) map[string]any {
	r.t.Helper()
	v := r.next()
	if v["type"] != "response" || v["id"] != id || v["command"] != command || v["success"] != success {
		r.t.Fatalf("got %v; want a response to %s %q with success %v", v, command, id, success)
	}
	return v
}

// until reads events up to the first of type typ and returns their types.
func (r *ch13RPC) until(typ string) []string {
	r.t.Helper()
	var types []string
	for {
		v := r.next()
		if v["type"] != "event" {
			r.t.Fatalf("got %v; want events until %s", v, typ)
		}
		e, _ := v["event"].(map[string]any)
		types = append(types, fmt.Sprint(e["type"]))
		if e["type"] == typ {
			return types
		}
	}
}

// events reads n events and returns their types.
func (r *ch13RPC) events(n int) []string {
	r.t.Helper()
	var types []string
	for range n {
		v := r.next()
		if v["type"] != "event" {
			r.t.Fatalf("got %v; want an event", v)
		}
		e, _ := v["event"].(map[string]any)
		types = append(types, fmt.Sprint(e["type"]))
	}
	return types
}

func TestLab13_4_RPC命令_Commands(t *testing.T) {
	r := ch13StartRPC(t, &ch13Child{script: ch13Script(t, ch13ReadHello...)})
	r.send(`{"id":"1","type":"state"}`)
	if v := r.response("1", "state", true); !cmp.Equal(v["data"], map[string]any{"running": false, "messages": 0.0, "lastError": ""}) {
		t.Errorf("state before any run: data %v; want running false, 0 messages, no last error", v["data"])
	}
	r.send(`this is not json`)
	if v := r.next(); v["type"] != "response" || v["id"] != "" || v["success"] != false || v["error"] == nil {
		t.Errorf("a malformed line: %v; want a failed response with an empty id and an error", v)
	}
	r.send(`{"id":"2","type":"dance"}`)
	if v := r.response("2", "dance", false); !strings.Contains(fmt.Sprint(v["error"]), "dance") {
		t.Errorf("an unknown command: error %v; want it named", v["error"])
	}
	r.send(`{"id":"7","type":"prompt","mesage":"x"}`)
	if v := r.next(); v["type"] != "response" || v["id"] != "" || v["success"] != false || !strings.Contains(fmt.Sprint(v["error"]), `unknown field "mesage"`) {
		t.Errorf("a command with a misspelt field: %v; want a failed response with an empty id, naming the unknown field", v)
	}
	r.send(`{"id":"3","type":"steer","message":"faster"}`)
	if v := r.response("3", "steer", false); v["error"] == nil {
		t.Errorf("steer with no run: %v; want the agent's refusal as the error", v)
	}
	r.send(`{"id":"4","type":"prompt","message":"what does hello.txt say?"}`)
	r.response("4", "prompt", true)
	want := []string{"run_start",
		"model_event", "model_event", "model_event", "model_event", "model_event", "assistant_message",
		"tool_start", "tool_end",
		"model_event", "model_event", "model_event", "assistant_message",
		"turn_end", "run_end"}
	if diff := cmp.Diff(want, r.until("run_end")); diff != "" {
		t.Errorf("the run's events after the prompt's response (-want +got):\n%s", diff)
	}
	r.send(`{"id":"5","type":"state"}`)
	if v := r.response("5", "state", true); !cmp.Equal(v["data"], map[string]any{"running": false, "messages": 4.0, "lastError": ""}) {
		t.Errorf("state after the run: data %v; want running false, 4 messages, no last error", v["data"])
	}
}

func TestLab13_4_RPC命令_SteerAndAbort(t *testing.T) {
	r := ch13StartRPC(t, &ch13Child{})
	r.send(`{"id":"p","type":"prompt","message":"think hard"}`)
	r.response("p", "prompt", true)
	if diff := cmp.Diff([]string{"run_start", "model_event", "model_event"}, r.events(3)); diff != "" {
		t.Fatalf("the run's first events (-want +got):\n%s", diff)
	}
	r.send(`{"id":"f","type":"follow_up","message":"then summarise"}`)
	r.response("f", "follow_up", true)
	r.send(`{"id":"s","type":"steer","message":"faster"}`)
	r.response("s", "steer", true)
	r.send(`{"id":"q","type":"state"}`)
	if v := r.response("q", "state", true); !cmp.Equal(v["data"], map[string]any{"running": true, "messages": 1.0, "lastError": ""}) {
		t.Errorf("state during the run: data %v; want running true, 1 message, no last error", v["data"])
	}
	r.send(`{"id":"a","type":"abort"}`)
	r.response("a", "abort", true)
	var end map[string]any
	for {
		v := r.next()
		e, _ := v["event"].(map[string]any)
		if e["type"] == "run_end" {
			end = e
			break
		}
	}
	if end["reason"] != "aborted" {
		t.Errorf("run_end after abort: %v; want reason aborted", end)
	}
	var dropped []string
	if ms, ok := end["dropped"].([]any); ok {
		for _, m := range ms {
			content, _ := m.(map[string]any)["content"].([]any)
			for _, b := range content {
				dropped = append(dropped, fmt.Sprint(b.(map[string]any)["text"]))
			}
		}
	}
	// Dropped: the steering messages first, then the follow-ups, though the follow-up came first.
	if want := []string{"faster", "then summarise"}; !slices.Equal(want, dropped) {
		t.Errorf("run_end after abort drops %q; want %q: steer queues steering, follow_up a follow-up", dropped, want)
	}
	r.send(`{"id":"q2","type":"state"}`)
	if v := r.response("q2", "state", true); !cmp.Equal(v["data"], map[string]any{"running": false, "messages": 2.0, "lastError": "blocking model: context canceled"}) {
		t.Errorf("state after the abort: data %v; want running false, 2 messages, the abort as the last error", v["data"])
	}
}

func TestLab13_4_RPC命令_LongLine(t *testing.T) {
	r := ch13StartRPC(t, &ch13Child{script: ch13Script(t, ch13ReadHello...)})
	r.send(`{"id":"big","type":"prompt","message":"` + strings.Repeat("x", MaxRPCLineBytes) + `"}`)
	if v := r.next(); v["type"] != "response" || v["id"] != "" || v["success"] != false || !strings.Contains(fmt.Sprint(v["error"]), "longer than") {
		t.Errorf("a line over MaxRPCLineBytes: %v; want a failed response with an empty id, saying the line is too long", v)
	}
	r.send(`{"id":"1","type":"state"}`)
	r.response("1", "state", true)
}

func TestLab13_4_RPC命令_OneLineOneCommand(t *testing.T) {
	r := ch13StartRPC(t, &ch13Child{})
	notACommand := func(line, why string) {
		t.Helper()
		r.send(line)
		if v := r.next(); v["type"] != "response" || v["id"] != "" || v["success"] != false || v["error"] == nil {
			t.Errorf("%s: %v; want one failed response with an empty id: a line is one command or an error", why, v)
		}
	}
	notACommand(`{"id":"t1","type":"state"} {"id":"t2","type":"abort"}`, "two JSON values on one line")
	notACommand(`{"id":"t3","type":"prompt","message":"hi"}garbage`, "a command followed by garbage")
	notACommand(`{"id":"t4","type":"prompt","message":"hi"}{}`, "a command followed by {}")
	for _, line := range []string{`{"id":"e1","type":"prompt","message":""}`, `{"id":"e1","type":"prompt","message":null}`, `{"id":"e1","type":"prompt"}`} {
		r.send(line)
		if v := r.response("e1", "prompt", false); v["error"] == nil {
			t.Errorf("%s: %v; want a refusal with an error: an empty prompt starts no run", line, v)
		}
	}
	// Nothing above started a run: the first line after them is the state's response, no event.
	r.send(`{"id":"s","type":"state"}`)
	if v := r.response("s", "state", true); !cmp.Equal(v["data"], map[string]any{"running": false, "messages": 0.0, "lastError": ""}) {
		t.Errorf("state after the refused lines: data %v; want running false and 0 messages: none of them may run", v["data"])
	}
}

func TestLab13_4_RPC命令_QueueBound(t *testing.T) {
	r := ch13StartRPC(t, &ch13Child{})
	r.send(`{"id":"p","type":"prompt","message":"think hard"}`)
	r.response("p", "prompt", true)
	if diff := cmp.Diff([]string{"run_start", "model_event", "model_event"}, r.events(3)); diff != "" {
		t.Fatalf("the run's first events (-want +got):\n%s", diff)
	}
	// The model waits: nothing queued is taken, so the bound is reached after exactly
	// MaxRPCQueuedMessages accepted messages, steer and follow_up together.
	for i := range MaxRPCQueuedMessages {
		kind := []string{"follow_up", "steer"}[i%2]
		id := fmt.Sprint("q", i)
		r.send(fmt.Sprintf(`{"id":%q,"type":%q,"message":"more %d"}`, id, kind, i))
		r.response(id, kind, true)
	}
	for _, kind := range []string{"follow_up", "steer"} {
		r.send(fmt.Sprintf(`{"id":"over","type":%q,"message":"one too many"}`, kind))
		if v := r.response("over", kind, false); v["error"] == nil {
			t.Errorf("%s past MaxRPCQueuedMessages (%d) waiting: %v; want a refusal with an error", kind, MaxRPCQueuedMessages, v)
		}
	}
	r.send(`{"id":"a","type":"abort"}`)
	r.response("a", "abort", true)
	r.until("run_end")
}

func TestLab13_5_RPC收尾_EOFAborts(t *testing.T) {
	c := &ch13Child{}
	r := ch13StartRPC(t, c)
	r.send(`{"id":"1","type":"prompt","message":"think hard"}`)
	r.response("1", "prompt", true)
	r.until("model_event")
	r.stdin.Close()
	var last string
	for line := range r.lines {
		last = line
	}
	err := r.wait()
	ch13Pending(t, r.stderr.String())
	if err != nil {
		t.Fatalf("the child did not exit cleanly after stdin closed (%v): was the run aborted?\nstderr:\n%s", err, r.stderr.String())
	}
	var v struct {
		Type  string `json:"type"`
		Event struct {
			Type, Reason string
		} `json:"event"`
	}
	if json.Unmarshal([]byte(last), &v); v.Type != "event" || v.Event.Type != "run_end" || v.Event.Reason != "aborted" {
		t.Errorf("the last line after stdin closed: %s\nwant the aborted run's run_end", last)
	}
	want := []SessionEventType{EventUserMessage, EventTurnStart, EventModelRequest, EventAssistantMessage, EventTurnEnd}
	if diff := cmp.Diff(want, ch13SessionTypes(t, c.session)); diff != "" {
		t.Errorf("the session file after stdin closed (-want +got): the aborted run must be logged whole\n%s", diff)
	}
}

func TestLab13_5_RPC收尾_EOFWhenIdle(t *testing.T) {
	c := &ch13Child{script: ch13Script(t, ch13ReadHello...)}
	r := ch13StartRPC(t, c)
	r.send(`{"id":"1","type":"prompt","message":"what does hello.txt say?"}`)
	r.response("1", "prompt", true)
	r.until("run_end")
	r.stdin.Close()
	var rest []string
	for line := range r.lines {
		rest = append(rest, line)
	}
	err := r.wait()
	ch13Pending(t, r.stderr.String())
	if err != nil || len(rest) != 0 {
		t.Errorf("stdin closed after the run: exit %v, more lines %q; want a clean exit and nothing more\nstderr:\n%s", err, rest, r.stderr.String())
	}
	if diff := cmp.Diff(ch13ReadHelloSession, ch13SessionTypes(t, c.session)); diff != "" {
		t.Errorf("the session file (-want +got):\n%s", diff)
	}

	// In this process: a stdout that breaks is what ServeRPC returns at the end of stdin.
	rt := ch13NewRuntime(t, RuntimeOptions{Model: NewScriptedModel(), Workspace: ch13Workspace(t)})
	defer rt.Close()
	out := &ch13BrokenWriter{ok: 1}
	stdin := strings.NewReader(`{"id":"1","type":"state"}` + "\n" + `{"id":"2","type":"state"}` + "\n")
	if err := callLab(t, func() error { return ServeRPC(context.Background(), rt, stdin, out) }); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("ServeRPC on a stdout that fails from its second write returned %v; want the write's error", err)
	}
}

// --- Lab 13.6: the proxy server ------------------------------------------------------------------

// ch13ProxyRequestBody is a request for the proxy: one user message.
const ch13ProxyRequestBody = `{"systemPrompt":"Be brief.","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`

// ch13ServeProxy runs h on a loopback server for the test and returns its URL.
func ch13ServeProxy(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// ch13Post posts body to url's stream path with token and returns the response.
func ch13Post(t *testing.T, ctx context.Context, url, token, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+ProxyStreamPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if ctx.Err() != nil {
		t.Fatalf("POST %s: no response before the deadline (were the headers and the first event flushed?)", ProxyStreamPath)
	}
	if err != nil {
		t.Fatalf("POST %s: %v", ProxyStreamPath, errors.Unwrap(err)) // the *url.Error without the URL, whose port changes
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestLab13_6_代理服务端_Stream(t *testing.T) {
	var got Request
	model := ch13ModelFunc(func(ctx context.Context, req Request) *AssistantStream {
		got = req
		return NewScriptedModel(AssistantMessage{ID: "msg_1", Model: "m-1", Timestamp: 1700000000000,
			Content:    []ContentBlock{Text("Hi"), ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}},
			StopReason: StopReasonToolUse, Usage: Usage{Input: 3, Output: 5, Total: 8}}).Stream(ctx, req)
	})
	h, err := NewProxyHandler(model, ProxyServerOptions{Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	resp := ch13Post(t, context.Background(), ch13ServeProxy(t, h), "secret", ch13ProxyRequestBody)
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	ch13Pending(t, string(body))
	if h := resp.Header; resp.StatusCode != http.StatusOK || h.Get("Content-Type") != "text/event-stream" || h.Get("Cache-Control") != "no-cache" {
		t.Errorf("status %d, Content-Type %q, Cache-Control %q; want 200, text/event-stream and no-cache",
			resp.StatusCode, h.Get("Content-Type"), h.Get("Cache-Control"))
	}
	want := `data: {"type":"start"}

data: {"type":"text_delta","delta":"Hi"}

data: {"type":"toolcall_delta","contentIndex":1,"delta":"{\"path\":\"a\"}"}

data: {"type":"toolcall_end","contentIndex":1,"id":"c1","name":"read"}

data: {"type":"done","stopReason":"toolUse","usage":{"input":3,"output":5,"total":8},"messageId":"msg_1","model":"m-1","timestamp":1700000000000,"calls":[{"contentIndex":1,"id":"c1","name":"read"}]}

`
	if diff := cmp.Diff(want, string(body)); diff != "" {
		t.Errorf("the SSE body (-want +got): every event a data line of the wire format, done without the content\n%s", diff)
	}
	wantReq := Request{SystemPrompt: "Be brief.", Messages: []Message{UserText("hi")}}
	if diff := cmp.Diff(wantReq, got); diff != "" {
		t.Errorf("the request the model was given (-want +got):\n%s", diff)
	}
}

func TestLab13_6_代理服务端_Flush(t *testing.T) {
	// The model sends its next event only after the client has read the one before: a server
	// that does not flush each event holds it in its buffer, and the two wait for each other.
	read := make(chan struct{})
	model := ch13ModelFunc(func(ctx context.Context, req Request) *AssistantStream {
		s := NewAssistantStream()
		go func() {
			defer s.Close()
			s.Push(StartEvent{})
			for _, word := range []string{"one", "two"} {
				select {
				case <-read:
				case <-ctx.Done():
					s.Push(ErrorEvent{Message: AssistantMessage{StopReason: StopReasonAborted, ErrorMessage: ctx.Err().Error()}})
					return
				}
				s.Push(TextDeltaEvent{Delta: word})
			}
			s.Push(DoneEvent{Message: AssistantMessage{Content: []ContentBlock{Text("onetwo")}, StopReason: StopReasonStop}})
		}()
		return s
	})
	h, err := NewProxyHandler(model, ProxyServerOptions{Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ch13Deadline)
	defer cancel()
	resp := ch13Post(t, ctx, ch13ServeProxy(t, h), "secret", ch13ProxyRequestBody)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		ch13Pending(t, string(body))
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var got []string
	for ev, err := range ReadSSE(resp.Body) {
		if err != nil {
			ch13Pending(t, strings.Join(got, "\n"))
			t.Fatalf("after %q: %v; each event must be flushed as it is written", got, err)
		}
		ch13Pending(t, ev.Data)
		got = append(got, ev.Data)
		if len(got) <= 2 {
			read <- struct{}{}
		}
	}
	want := []string{`{"type":"start"}`, `{"type":"text_delta","delta":"one"}`, `{"type":"text_delta","delta":"two"}`,
		`{"type":"done","stopReason":"stop","usage":{"input":0,"output":0,"total":0}}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// A client that goes away ends the model's stream: its context is the request's.
	left, gaveUp := make(chan struct{}), make(chan struct{})
	waiting := ch13ModelFunc(func(ctx context.Context, req Request) *AssistantStream {
		s := NewAssistantStream()
		go func() {
			defer s.Close()
			s.Push(StartEvent{})
			select {
			case <-ctx.Done():
				close(left)
			case <-gaveUp: // the test failed: end, so that the server can close
			}
			s.Push(ErrorEvent{Message: AssistantMessage{StopReason: StopReasonAborted, ErrorMessage: "the client left"}})
		}()
		return s
	})
	h, err = NewProxyHandler(waiting, ProxyServerOptions{Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	leave, cancelLeave := context.WithTimeout(context.Background(), ch13Deadline)
	defer cancelLeave()
	resp = ch13Post(t, leave, ch13ServeProxy(t, h), "secret", ch13ProxyRequestBody)
	for range ReadSSE(resp.Body) {
		cancelLeave() // the first event has come: leave
	}
	select {
	case <-left:
	case <-time.After(ch13Deadline):
		close(gaveUp)
		t.Errorf("the client went away and the model's context was not cancelled within %v: ask the model with r.Context()", ch13Deadline)
	}
}

func TestLab13_6_代理服务端_Refusals(t *testing.T) {
	asked := make(chan struct{}, 10)
	model := ch13ModelFunc(func(ctx context.Context, req Request) *AssistantStream {
		asked <- struct{}{}
		return NewScriptedModel(AssistantMessage{StopReason: StopReasonStop}).Stream(ctx, req)
	})
	h, err := NewProxyHandler(model, ProxyServerOptions{Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, method, path, host, auth, body string
		want                                 int
	}{
		{"other path", "POST", "/api/other", "127.0.0.1:8181", "Bearer secret", ch13ProxyRequestBody, 404},
		{"a path below", "POST", ProxyStreamPath + "/x", "127.0.0.1:8181", "Bearer secret", ch13ProxyRequestBody, 404},
		{"GET", "GET", ProxyStreamPath, "127.0.0.1:8181", "Bearer secret", "", 405},
		{"foreign host", "POST", ProxyStreamPath, "evil.example:8181", "Bearer secret", ch13ProxyRequestBody, 403},
		{"foreign host, no token", "POST", ProxyStreamPath, "evil.example:8181", "", ch13ProxyRequestBody, 403},
		{"a name that resolves to loopback", "POST", ProxyStreamPath, "localtest.me", "Bearer secret", ch13ProxyRequestBody, 403},
		{"no token", "POST", ProxyStreamPath, "localhost:8181", "", ch13ProxyRequestBody, 401},
		{"wrong token", "POST", ProxyStreamPath, "[::1]:8181", "Bearer secreT", ch13ProxyRequestBody, 401},
		{"token prefix", "POST", ProxyStreamPath, "127.0.0.1", "Bearer secretsecret", ch13ProxyRequestBody, 401},
		{"not JSON", "POST", ProxyStreamPath, "127.0.0.1", "Bearer secret", "{", 400},
		{"too big", "POST", ProxyStreamPath, "127.0.0.1", "Bearer secret", `{"systemPrompt":"` + strings.Repeat("x", MaxProxyRequestBytes) + `"}`, 413},
	} {
		req := httptest.NewRequest(tt.method, "http://"+tt.host+tt.path, strings.NewReader(tt.body))
		req.Host = tt.host
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		ch13Pending(t, rec.Body.String())
		if rec.Code != tt.want || rec.Header().Get("X-Frame-Options") != "DENY" || rec.Header().Get("Content-Security-Policy") != "frame-ancestors 'none'" {
			t.Errorf("%s: status %d, X-Frame-Options %q, Content-Security-Policy %q; want %d, DENY and frame-ancestors 'none'",
				tt.name, rec.Code, rec.Header().Get("X-Frame-Options"), rec.Header().Get("Content-Security-Policy"), tt.want)
		}
		if h := rec.Header(); tt.want == 405 && h.Get("Allow") != "POST" || tt.want == 401 && h.Get("WWW-Authenticate") != `Bearer realm="tinypi"` {
			t.Errorf("%s: Allow %q, WWW-Authenticate %q; want Allow: POST on a 405 and WWW-Authenticate: Bearer realm=\"tinypi\" on a 401",
				tt.name, h.Get("Allow"), h.Get("WWW-Authenticate"))
		}
	}
	if len(asked) != 0 {
		t.Errorf("the model was asked %d times for refused requests, want 0", len(asked))
	}
}

func TestLab13_6_代理服务端_HostileClients(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// The model pushes 128 deltas of 64 KiB, far more than the connection's buffers hold, and
	// then waits for its context: cancelled says the handler let it go.
	cancelled := make(chan struct{})
	big := strings.Repeat("x", 64<<10)
	model := ch13ModelFunc(func(ctx context.Context, req Request) *AssistantStream {
		s := NewAssistantStream()
		go func() {
			defer s.Close()
			s.Push(StartEvent{})
			for range 128 {
				s.Push(TextDeltaEvent{Delta: big})
			}
			<-ctx.Done()
			close(cancelled)
			s.Push(ErrorEvent{Message: AssistantMessage{StopReason: StopReasonAborted, ErrorMessage: ctx.Err().Error()}})
		}()
		return s
	})
	h, err := NewProxyHandler(model, ProxyServerOptions{Token: "secret", WriteTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewProxyServer(ln.Addr().String(), h)
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("NewProxyServer: ReadHeaderTimeout %v, ReadTimeout %v, IdleTimeout %v; want all three set", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.IdleTimeout)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		srv.Close()
		<-served
	}()
	dial := func() net.Conn {
		t.Helper()
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(ch13Deadline)) // a guard against a hang, not a wait
		return conn
	}

	// A wrong token with a whole body: 401 (and the stub's message, when the lab is not done).
	first := dial()
	defer first.Close()
	fmt.Fprintf(first, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		ProxyStreamPath, len(ch13ProxyRequestBody), ch13ProxyRequestBody)
	if resp, err := http.ReadResponse(bufio.NewReader(first), nil); err == nil {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		ch13Pending(t, string(body))
	}
	first.Close()

	// A wrong token with a chunked body that never ends: 401 at once, the body unread.
	conn := dial()
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer wrong\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n", ProxyStreamPath)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a wrong token with a body that never ends: no response within %v; want a 401 without the body being read", ch13Deadline)
	}
	if err != nil {
		t.Fatalf("a wrong token with a body that never ends: the connection failed before a response (%T); want a 401", errors.Unwrap(err))
	}
	ch13Pending(t, resp.Status)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong token with a body that never ends: %s; want 401", resp.Status)
	}

	// A client that sends a request and then reads nothing: the write of an event times out, the
	// handler returns, and the model's stream is cancelled.
	stalled := dial()
	defer stalled.Close()
	stalled.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(stalled, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer secret\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		ProxyStreamPath, len(ch13ProxyRequestBody), ch13ProxyRequestBody)
	select {
	case <-cancelled:
	case <-time.After(ch13Deadline):
		t.Errorf("a client that stopped reading: the model's stream still runs after %v; want the write timeout (200ms) to end the handler and cancel it", ch13Deadline)
	}
	stalled.Close()
}

// --- Lab 13.7: rebuilding the message ------------------------------------------------------------

// ch13Rebuild applies wire events (JSON, as the server sends them) to a new rebuild and returns
// the events they stand for, and the error of the first one refused.
func ch13Rebuild(t *testing.T, wire ...string) ([]AssistantEvent, error) {
	t.Helper()
	var b proxyRebuild
	var events []AssistantEvent
	for _, w := range wire {
		var pe proxyEvent
		if err := json.Unmarshal([]byte(w), &pe); err != nil {
			t.Fatalf("bad test data %s: %v", w, err)
		}
		var e AssistantEvent
		var err error
		runLab(t, func() { e, err = b.apply(pe) })
		if err != nil {
			ch13Pending(t, err.Error())
			return events, err
		}
		events = append(events, e)
	}
	return events, nil
}

// ch13RecordingNames are the names of chapter 05's recordings of the OpenAI and Anthropic APIs,
// sorted.
func ch13RecordingNames() []string {
	return slices.Sorted(func(yield func(string) bool) {
		for name, rec := range ch05Recordings {
			if (rec.api == APIOpenAI || rec.api == APIAnthropic) && !yield(name) {
				return
			}
		}
	})
}

func TestLab13_7_重建消息_Recordings(t *testing.T) {
	for _, name := range ch13RecordingNames() {
		rec := ch05Recordings[name]
		upstream, _ := ch05Serve(t, http.StatusOK, ch05RecordingBody(t, name))
		direct, _ := ch05Collect(t, ch05Provider(t, rec.api, upstream).Stream(context.Background(), Request{Messages: []Message{UserText("hi")}}))
		upstream.Close()
		var wire []string
		for _, e := range direct {
			data, err := json.Marshal(wireEvent(e))
			if err != nil {
				t.Fatal(err)
			}
			wire = append(wire, string(data))
		}
		rebuilt, err := ch13Rebuild(t, wire...)
		if err != nil {
			t.Errorf("%s: the rebuild refused an event: %v", name, err)
			continue
		}
		if diff := cmp.Diff(direct, rebuilt); diff != "" {
			t.Errorf("%s: the events rebuilt from the wire (-direct +rebuilt):\n%s", name, diff)
		}
	}
}

func TestLab13_7_重建消息_Refusals(t *testing.T) {
	for _, tt := range []struct {
		name string
		wire []string
		want string
	}{
		{"no start", []string{`{"type":"text_delta","delta":"x"}`}, `a "text_delta" event before start`},
		{"done without start", []string{`{"type":"done","stopReason":"stop"}`}, `a "done" event before start`},
		{"two starts", []string{`{"type":"start"}`, `{"type":"start"}`}, "a second start event"},
		{"a gap", []string{`{"type":"start"}`, `{"type":"text_delta","contentIndex":1,"delta":"x"}`}, "content block 1 of 0"},
		{"a huge index", []string{`{"type":"start"}`, `{"type":"thinking_delta","contentIndex":1000000000,"delta":"x"}`}, "content block 1000000000 of 0"},
		{"a negative index", []string{`{"type":"start"}`, `{"type":"toolcall_delta","contentIndex":-1,"delta":"x"}`}, "content block -1 of 0"},
		{"an unknown type", []string{`{"type":"start"}`, `{"type":"telepathy"}`}, `unknown type "telepathy"`},
		{"a call out of range", []string{`{"type":"start"}`, `{"type":"done","calls":[{"contentIndex":2,"id":"c","name":"read"}]}`}, "content block 2 of 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			events, err := ch13Rebuild(t, tt.wire...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || len(events) != len(tt.wire)-1 {
				t.Errorf("after %d events: %v; want the last event refused with an error containing %q", len(events), err, tt.want)
			}
		})
	}
}

// --- Lab 13.8: a client that never hangs ---------------------------------------------------------

func TestLab13_8_不挂起的客户端_Recordings(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, name := range ch13RecordingNames() {
		rec := ch05Recordings[name]
		upstream, _ := ch05Serve(t, http.StatusOK, ch05RecordingBody(t, name))
		defer upstream.Close() // deferred: goleak, deferred first, runs after them even when a check fails
		h, err := NewProxyHandler(ch05Provider(t, rec.api, upstream), ProxyServerOptions{Token: "tok"})
		if err != nil {
			t.Fatal(err)
		}
		proxy := httptest.NewServer(h)
		defer proxy.Close()
		m := &ProxyModel{URL: proxy.URL, Token: "tok", Client: proxy.Client()}
		_, got := ch05Collect(t, m.Stream(context.Background(), Request{Messages: []Message{UserText("hi")}}))
		if got.Timestamp == 0 {
			t.Errorf("%s: the message through the proxy has no timestamp", name)
		}
		got.Timestamp, got.ErrorMessage = 0, ""
		if diff := cmp.Diff(rec.want, got); diff != "" {
			t.Errorf("%s: the message through the proxy (-sidecar +through the proxy):\n%s", name, diff)
		}
	}
}

func TestLab13_8_不挂起的客户端_Faults(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// Each handler reads the request first: a server notices that its client went away (and
	// cancels r.Context()) only once the request body has been read.
	sse := func(w http.ResponseWriter, r *http.Request, lines ...string) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, l := range lines {
			fmt.Fprintf(w, "data: %s\n\n", l)
		}
		w.(http.Flusher).Flush()
	}
	for _, tt := range []struct {
		name     string
		handler  http.HandlerFunc
		cancel   bool
		want     StopReason
		wantText string
		wantMsg  string
	}{
		{"stalled", func(w http.ResponseWriter, r *http.Request) {
			sse(w, r, `{"type":"start"}`, `{"type":"text_delta","delta":"Hel"}`)
			<-r.Context().Done()
		}, false, StopReasonError, "Hel?", "proxy: no event for 200ms: the server stalled"},
		{"no terminal event", func(w http.ResponseWriter, r *http.Request) {
			sse(w, r, `{"type":"start"}`, `{"type":"text_delta","delta":"Hel"}`)
		}, false, StopReasonError, "Hel", "proxy: the stream ended without done or error"},
		{"wrong token", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		}, false, StopReasonError, "", "proxy: the server refused the token (401 Unauthorized): unauthorized"},
		{"server error", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			http.Error(w, "upstream down", http.StatusBadGateway)
		}, false, StopReasonError, "", "proxy: the server answered 502 Bad Gateway: upstream down"},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) {
			sse(w, r, `{"type":"start"}`, `{"type":`)
		}, false, StopReasonError, "", "proxy: an event is not JSON"},
		{"a refused event", func(w http.ResponseWriter, r *http.Request) {
			sse(w, r, `{"type":"start"}`, `{"type":"text_delta","delta":"Hel"}`, `{"type":"text_delta","contentIndex":7,"delta":"x"}`)
		}, false, StopReasonError, "Hel", "proxy: a text_delta event for content block 7 of 1"},
		{"server dies", func(w http.ResponseWriter, r *http.Request) {
			sse(w, r, `{"type":"start"}`, `{"type":"text_delta","delta":"Hel"}`)
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}, false, StopReasonError, "Hel", "proxy: the stream broke"},
		{"silent server", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
		}, false, StopReasonError, "", "proxy: no event for 200ms: the server stalled"},
		{"caller cancels", func(w http.ResponseWriter, r *http.Request) {
			sse(w, r, `{"type":"start"}`, `{"type":"text_delta","delta":"Hel"}`)
			<-r.Context().Done()
		}, true, StopReasonAborted, "Hel", "proxy: request cancelled: context canceled"},
		{"slow but alive", func(w http.ResponseWriter, r *http.Request) {
			// An event every 250 ms for 1.25 s: the idle timeout (1 s here) bounds the wait for
			// each event, not the whole answer. Each wait is a quarter of the bound, so that a
			// busy machine that delays an event does not make it look stalled.
			sse(w, r, `{"type":"start"}`)
			for range 5 {
				time.Sleep(250 * time.Millisecond)
				sse(w, r, `{"type":"text_delta","delta":"a"}`)
			}
			sse(w, r, `{"type":"done","stopReason":"stop"}`)
		}, false, StopReasonStop, "aaaaa", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			m := &ProxyModel{URL: srv.URL, Token: "tok", IdleTimeout: 200 * time.Millisecond}
			switch tt.name {
			case "caller cancels":
				m.IdleTimeout = 4 * ch13Deadline // a cancel must end the stream at once, not at the idle timeout
			case "slow but alive":
				m.IdleTimeout = time.Second
			}
			before := time.Now().UnixMilli()
			s := m.Stream(ctx, Request{Messages: []Message{UserText("hi")}})
			type outcome struct {
				msg    AssistantMessage
				err    error
				events int
			}
			result := make(chan outcome, 1)
			go func() {
				n := 0
				for e := range s.All() {
					n++
					if _, ok := e.(TextDeltaEvent); ok && tt.cancel {
						cancel()
					}
				}
				msg, err := s.Result()
				result <- outcome{msg, err, n}
			}()
			var got outcome
			select {
			case got = <-result:
			case <-time.After(ch13Deadline):
				t.Fatalf("%s: the stream did not end within %v", tt.name, ch13Deadline)
			}
			ch13Pending(t, got.msg.ErrorMessage)
			if got.err != nil {
				t.Fatalf("the stream ended without a terminal event: %v", got.err)
			}
			msg := got.msg
			// "Hel?": on a busy machine the idle timeout may end the stream before the events
			// the server sent have been read; the message then holds nothing, never anything else.
			wantText, maybe := strings.CutSuffix(tt.wantText, "?")
			text := TextOf(msg.Content)
			if maybe && text == "" {
				text = wantText
			}
			if after := time.Now().UnixMilli(); tt.want != StopReasonStop && (msg.Timestamp < before || msg.Timestamp > after) {
				t.Errorf("timestamp %d; want the failure's time in milliseconds, between %d and %d", msg.Timestamp, before, after)
			}
			if msg.StopReason != tt.want {
				// How much text came before a wrong end depends on the timing: it is not shown.
				t.Errorf("stop %s, error %q; want stop %s, an error starting %q", msg.StopReason, msg.ErrorMessage, tt.want, tt.wantMsg)
			} else if text != wantText || !strings.HasPrefix(msg.ErrorMessage, tt.wantMsg) || tt.want != StopReasonStop && msg.Timestamp == 0 {
				t.Errorf("stop %s, text %q, error %q, timestamp %d; want stop %s, text %q, an error starting %q, a timestamp",
					msg.StopReason, TextOf(msg.Content), msg.ErrorMessage, msg.Timestamp, tt.want, tt.wantText, tt.wantMsg)
			}
			srv.CloseClientConnections()
		})
	}
}

func TestLab13_8_不挂起的客户端_Bounds(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const limit = 64 << 10
	kb := strings.Repeat("x", 1024)
	// endless writes frames after a start event until the client goes away: for ever, as far
	// as a client with a bound of limit bytes can tell, since it stops writing only after 64
	// times that (a client without the bound then waits at the test's deadline, and its memory
	// stays small).
	endless := func(frame string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"type\":\"start\"}\n\n")
			for written := 0; r.Context().Err() == nil && written < 64*limit; written += len(frame) {
				if _, err := io.WriteString(w, frame); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
			<-r.Context().Done()
		}
	}
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		model   ProxyModel
		want    StopReason
		wantMsg string
	}{
		{"one event that never ends", endless("data: " + kb + "\n"),
			ProxyModel{MaxEventBytes: limit, IdleTimeout: 4 * ch13Deadline},
			StopReasonError, "proxy: the stream broke: proxy: an event over 65536 bytes"},
		{"deltas for ever", endless(`data: {"type":"text_delta","delta":"` + kb + "\"}\n\n"),
			ProxyModel{MaxMessageBytes: limit, IdleTimeout: 4 * ch13Deadline},
			StopReasonError, "proxy: a message over 65536 bytes"},
		{"keep-alives only", endless(": keep-alive\n\n"),
			ProxyModel{IdleTimeout: 200 * time.Millisecond},
			StopReasonError, "proxy: no event for 200ms: the server stalled"},
		{"many events, each under the bound", func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"type\":\"start\"}\n\n")
			for range 4 * limit / len(kb) {
				fmt.Fprintf(w, "data: {\"type\":\"text_delta\",\"delta\":%q}\n\n", kb)
			}
			io.WriteString(w, "data: {\"type\":\"done\",\"stopReason\":\"stop\"}\n\n")
		}, ProxyModel{MaxEventBytes: limit, IdleTimeout: 4 * ch13Deadline}, StopReasonStop, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			m := tt.model
			m.URL, m.Token = srv.URL, "tok"
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel() // before srv.Close: a client still reading would keep its handler
			s := m.Stream(ctx, Request{Messages: []Message{UserText("hi")}})
			done := make(chan AssistantMessage, 1)
			go func() {
				for range s.All() {
				}
				msg, _ := s.Result()
				done <- msg
			}()
			var msg AssistantMessage
			select {
			case msg = <-done:
			case <-time.After(ch13Deadline):
				cancel()
				<-done
				t.Fatalf("%s: the stream did not end within %v", tt.name, ch13Deadline)
			}
			ch13Pending(t, msg.ErrorMessage)
			if msg.StopReason != tt.want || !strings.HasPrefix(msg.ErrorMessage, tt.wantMsg) {
				t.Errorf("stop %s, error %q; want stop %s, an error starting %q", msg.StopReason, msg.ErrorMessage, tt.want, tt.wantMsg)
			}
			text := TextOf(msg.Content)
			switch tt.name {
			case "deltas for ever":
				if len(text) == 0 || len(text) > limit || strings.Trim(text, "x") != "" {
					t.Errorf("the message holds %d bytes of text; want the deltas rebuilt until the bound, at most %d", len(text), limit)
				}
			case "many events, each under the bound":
				if len(text) != 4*limit {
					t.Errorf("the message holds %d bytes of text; want %d: the bound is for one event, not the stream", len(text), 4*limit)
				}
			}
			srv.CloseClientConnections()
		})
	}
}

// ch13ModelFunc is a function as a Model.
type ch13ModelFunc func(ctx context.Context, req Request) *AssistantStream

func (f ch13ModelFunc) Stream(ctx context.Context, req Request) *AssistantStream { return f(ctx, req) }

// ch13Script writes msgs as a script file (LoadScript's format) and returns its path.
func ch13Script(t *testing.T, msgs ...AssistantMessage) string {
	t.Helper()
	var b bytes.Buffer
	for _, m := range msgs {
		line, err := MarshalMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	p := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
