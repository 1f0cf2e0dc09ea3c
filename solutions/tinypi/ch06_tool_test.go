package tinypi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Focused tests of chapter 06 (tool contract). Every call into lab code goes through callLab,
// so a lab that is still a stub fails its own tests with its pending message.

// ch06Registry builds a registry that must be valid.
func ch06Registry(t *testing.T, tools ...Tool) *Registry {
	t.Helper()
	type built struct {
		r   *Registry
		err error
	}
	b := callLab(t, func() built {
		r, err := NewRegistry(tools...)
		return built{r, err}
	})
	if b.err != nil {
		t.Fatalf("NewRegistry: %v", b.err)
	}
	return b.r
}

// ch06Execute runs one call. A stub that panics inside a tool is turned into an error result
// by the executor itself, so that case is reported with the stub's message as well.
func ch06Execute(t *testing.T, ctx context.Context, call ToolCall, r *Registry, exec ToolExecContext) ToolResultMessage {
	t.Helper()
	result := callLab(t, func() ToolResultMessage { return ExecuteToolCall(ctx, call, r, exec) })
	if text := TextOf(result.Content); result.IsError && strings.Contains(text, "尚未实现") {
		t.Fatal(text)
	}
	return result
}

// ch06Probe is a tool that counts its runs and answers with fixed content.
type ch06Probe struct{ runs int }

func (p *ch06Probe) tool(name, schema string) Tool {
	return Tool{
		ToolDefinition: ToolDefinition{Name: name, Description: "probe " + name, Parameters: schema},
		Execute: func(context.Context, json.RawMessage, ToolExecContext) (ToolOutput, error) {
			p.runs++
			return ToolOutput{Content: []ContentBlock{Text("ran " + name)}}, nil
		},
	}
}

const ch06ReadSchema = `{
	"type": "object",
	"properties": {
		"path": {"type": "string"},
		"limit": {"type": "integer", "minimum": 1}
	},
	"required": ["path"],
	"additionalProperties": false
}`

// ch06CheckError checks the shape every error result shares: it answers the call (same ID and
// name), is marked as an error and carries one line of text.
func ch06CheckError(t *testing.T, call ToolCall, result ToolResultMessage) string {
	t.Helper()
	if result.ToolCallID != call.ID || result.ToolName != call.Name {
		t.Errorf("result answers (%q, %q), want the call's (%q, %q)", result.ToolCallID, result.ToolName, call.ID, call.Name)
	}
	if !result.IsError {
		t.Errorf("IsError = false, want true")
	}
	text := TextOf(result.Content)
	if len(result.Content) != 1 || text == "" {
		t.Errorf("content = %#v, want one text block with the reason", result.Content)
	}
	if strings.Contains(text, "\n") {
		t.Errorf("error text spans several lines, want one line:\n%s", text)
	}
	return text
}

func TestLab6_1_注册表_定义按注册顺序(t *testing.T) {
	probe := &ch06Probe{}
	names := []string{"write", "read", "bash", "edit", "grep", "ls"}
	var tools []Tool
	var want []ToolDefinition
	for _, name := range names {
		tool := probe.tool(name, `{"type":"object"}`)
		tools = append(tools, tool)
		want = append(want, tool.ToolDefinition)
	}
	r := ch06Registry(t, tools...)

	defs := callLab(t, r.Definitions)
	if diff := cmp.Diff(want, defs); diff != "" {
		t.Errorf("Definitions() in registration order (-want +got):\n%s", diff)
	}
	defs[0].Name = "changed"
	if got := callLab(t, r.Definitions)[0].Name; got != "write" {
		t.Errorf("changing the result of Definitions() renamed a tool to %q", got)
	}

	for _, name := range names {
		tool, ok := r.Lookup(name)
		if !ok || tool.Name != name || tool.Execute == nil {
			t.Errorf("Lookup(%q) = (%q, execute set %v, %v), want the registered tool", name, tool.Name, tool.Execute != nil, ok)
		}
	}
	if _, ok := r.Lookup("nope"); ok {
		t.Errorf("Lookup(\"nope\") found a tool that was never registered")
	}

	empty := ch06Registry(t)
	if defs := callLab(t, empty.Definitions); len(defs) != 0 {
		t.Errorf("an empty registry has definitions %v", defs)
	}
	var none *Registry
	if defs := none.Definitions(); len(defs) != 0 {
		t.Errorf("a nil registry has definitions %v", defs)
	}
}

func TestLab6_1_注册表_拒绝坏定义(t *testing.T) {
	probe := &ch06Probe{}
	noFunc := probe.tool("read", "")
	noFunc.Execute = nil
	for _, tc := range []struct {
		name  string
		tools []Tool
		want  []string // the error must contain each of these
	}{
		{"empty name", []Tool{probe.tool("read", ""), probe.tool("", "")}, []string{"#2", "empty name"}},
		{"duplicate", []Tool{probe.tool("read", ""), probe.tool("write", ""), probe.tool("read", "")}, []string{`"read"`, "twice"}},
		{"no function", []Tool{noFunc}, []string{`"read"`, "Execute"}},
		{"schema is not JSON", []Tool{probe.tool("read", `{"type":`)}, []string{`"read"`, "schema"}},
		{"type is not a type", []Tool{probe.tool("read", `{"type":"strin"}`)}, []string{`"read"`, "schema"}},
		{"required is not a list", []Tool{probe.tool("read", `{"type":"object","required":"path"}`)}, []string{`"read"`, "schema"}},
		{"dangling reference", []Tool{probe.tool("read", `{"$ref":"#/$defs/missing"}`)}, []string{`"read"`, "schema"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type built struct {
				r   *Registry
				err error
			}
			b := callLab(t, func() built {
				r, err := NewRegistry(tc.tools...)
				return built{r, err}
			})
			if b.err == nil {
				t.Fatalf("%s: NewRegistry accepted the tools; want an error", tc.name)
			}
			if b.r != nil {
				t.Errorf("%s: NewRegistry returned a registry together with its error", tc.name)
			}
			for _, want := range tc.want {
				if !strings.Contains(b.err.Error(), want) {
					t.Errorf("error %q does not mention %q", b.err, want)
				}
			}
		})
	}

	t.Run("MustRegistry", func(t *testing.T) {
		defer func() {
			if p := recover(); p == nil {
				t.Errorf("MustRegistry accepted a duplicate name; want a panic")
			} else if s, ok := p.(string); ok && strings.Contains(s, "尚未实现") {
				t.Fatal(s)
			}
		}()
		MustRegistry(probe.tool("read", ""), probe.tool("read", ""))
	})
}

func TestLab6_2_参数校验_不合模式(t *testing.T) {
	probe := &ch06Probe{}
	r := ch06Registry(t, probe.tool("read", ch06ReadSchema))
	for _, tc := range []struct {
		name, args string
		want       []string
	}{
		{"missing required", `{}`, []string{"missing", "path"}},
		{"wrong type", `{"path":3}`, []string{"/path", "string"}},
		{"below minimum", `{"path":"README.md","limit":0}`, []string{"/limit", "minimum"}},
		{"unknown property", `{"path":"README.md","mode":"fast"}`, []string{"mode"}},
		{"not an object", `["README.md"]`, []string{"object"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := ToolCall{ID: "call-" + tc.name, Name: "read", Arguments: tc.args}
			text := ch06CheckError(t, call, ch06Execute(t, context.Background(), call, r, ToolExecContext{}))
			if prefix := `Validation failed for tool "read": `; !strings.HasPrefix(text, prefix) {
				t.Errorf("text %q does not start with %q", text, prefix)
			}
			// The validator's own wording names the schema's internal URL, which tells the
			// model nothing: the text is the one line describeSchemaError makes.
			if strings.Contains(text, "jsonschema") || strings.Contains(text, "validation failed with") {
				t.Errorf("text passes on the validator's own message and the schema's internal URL; want the one line describeSchemaError makes:\n%s", text)
			}
			for _, want := range tc.want {
				if !strings.Contains(text, want) {
					t.Errorf("text %q does not mention %q", text, want)
				}
			}
		})
	}
	if probe.runs != 0 {
		t.Errorf("the tool ran %d times with arguments its schema rejects", probe.runs)
	}
}

func TestLab6_2_参数校验_坏JSON不修复(t *testing.T) {
	// The schema accepts any object, so a "repaired" argument text would pass it and run the tool.
	probe := &ch06Probe{}
	r := ch06Registry(t, probe.tool("write", `{"type":"object"}`))
	for _, tc := range []struct{ name, args string }{
		{"cut off in a string", `{"path":"READ`},
		{"missing brace", `{"path":"README.md"`},
		{"unquoted key", `{path: "README.md"}`},
		{"single quotes", `{'path': 'README.md'}`},
		{"trailing text", `{"path":"README.md"} and more`},
		{"two objects", `{"path":"a"}{"path":"b"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := ToolCall{ID: "call-1", Name: "write", Arguments: tc.args}
			text := ch06CheckError(t, call, ch06Execute(t, context.Background(), call, r, ToolExecContext{}))
			if !strings.Contains(text, `Validation failed for tool "write"`) || !strings.Contains(text, "not valid JSON") {
				t.Errorf("text %q should say the arguments of \"write\" are not valid JSON", text)
			}
		})
	}
	if probe.runs != 0 {
		t.Errorf("the tool ran %d times with arguments that are not JSON; they must never be repaired", probe.runs)
	}
}

func TestLab6_2_参数校验_合法参数通过(t *testing.T) {
	probe := &ch06Probe{}
	r := ch06Registry(t, probe.tool("read", ch06ReadSchema), probe.tool("ls", ""))
	for _, tc := range []struct {
		tool, args string
		ok         bool
	}{
		{"read", `{"path":"README.md"}`, true},
		{"read", ` {"path":"README.md","limit":3} `, true},
		{"read", `{"path":"README.md","limit":2.5}`, false},
		{"ls", ``, true}, // no text at all means "no arguments"
		{"ls", "  \n", true},
		{"ls", `{}`, true},
		{"ls", `{"anything":[1,2]}`, true},
		{"ls", `[]`, false}, // a tool without a schema still takes an object
		{"ls", `null`, false},
	} {
		err := callLab(t, func() error { return r.ValidateArguments(tc.tool, tc.args) })
		if (err == nil) != tc.ok {
			t.Errorf("ValidateArguments(%q, %q): ok=%v, want ok=%v\nerror: %v", tc.tool, tc.args, err == nil, tc.ok, err)
		}
	}
	if err := r.ValidateArguments("nope", `{}`); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("ValidateArguments of an unknown tool: want a \"not found\" error, got:\n%v", err)
	}
}

func TestLab6_3_封闭契约_未知工具(t *testing.T) {
	probe := &ch06Probe{}
	r := ch06Registry(t, probe.tool("read", ch06ReadSchema))
	call := ToolCall{ID: "call-7", Name: "nope", Arguments: `{"path":"README.md"}`}
	for _, reg := range []*Registry{r, nil} {
		text := ch06CheckError(t, call, ch06Execute(t, context.Background(), call, reg, ToolExecContext{}))
		if text != "Tool nope not found" {
			t.Errorf("text = %q, want %q", text, "Tool nope not found")
		}
	}
	if probe.runs != 0 {
		t.Errorf("a registered tool ran for a call to an unknown one")
	}
}

func TestLab6_3_封闭契约_工具失败(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func() (ToolOutput, error)
		want string
	}{
		{"error", func() (ToolOutput, error) {
			return ToolOutput{Content: []ContentBlock{Text("half written")}}, errors.New("disk full")
		}, "disk full"},
		{"wrapped error", func() (ToolOutput, error) {
			return ToolOutput{}, fmt.Errorf("read README.md: %w", io.ErrUnexpectedEOF)
		}, "read README.md: unexpected EOF"},
		{"panic with a string", func() (ToolOutput, error) { panic("boom") }, "boom"},
		{"panic with an error", func() (ToolOutput, error) { panic(fmt.Errorf("bad state: %w", io.EOF)) }, "bad state: EOF"},
		{"runtime panic", func() (ToolOutput, error) {
			var lines []string
			_ = lines[3]
			return ToolOutput{}, nil
		}, "index out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := Tool{
				ToolDefinition: ToolDefinition{Name: "fragile"},
				Execute: func(context.Context, json.RawMessage, ToolExecContext) (ToolOutput, error) {
					return tc.run()
				},
			}
			r := ch06Registry(t, tool)
			call := ToolCall{ID: "call-3", Name: "fragile", Arguments: `{}`}
			result := ch06Execute(t, context.Background(), call, r, ToolExecContext{})
			text := ch06CheckError(t, call, result)
			if !strings.Contains(text, tc.want) {
				t.Errorf("text = %q, want it to contain %q", text, tc.want)
			}
			for _, trace := range []string{"goroutine ", ".go:", "runtime/debug"} {
				if strings.Contains(text, trace) {
					t.Errorf("text %q contains %q: a stack trace must not reach the model", text, trace)
				}
			}
			if result.Details != nil {
				t.Errorf("an error result has details %v", result.Details)
			}
		})
	}
}

type ch06CtxKey struct{}

func TestLab6_3_封闭契约_成功结果(t *testing.T) {
	var gotArgs []string
	var gotValue any
	read := Tool{
		ToolDefinition: ToolDefinition{Name: "read", Parameters: ch06ReadSchema},
		Execute: func(ctx context.Context, args json.RawMessage, _ ToolExecContext) (ToolOutput, error) {
			gotArgs = append(gotArgs, string(args))
			gotValue = ctx.Value(ch06CtxKey{})
			return ToolOutput{
				Content: []ContentBlock{Text("# tiny-pi\nA small agent runtime.")},
				Details: map[string]any{"path": "README.md", "lines": 2},
			}, nil
		},
	}
	ls := Tool{
		ToolDefinition: ToolDefinition{Name: "ls"},
		Execute: func(_ context.Context, args json.RawMessage, _ ToolExecContext) (ToolOutput, error) {
			gotArgs = append(gotArgs, string(args))
			return ToolOutput{Content: []ContentBlock{Text("README.md")}}, nil
		},
	}
	r := ch06Registry(t, read, ls)
	ctx := context.WithValue(context.Background(), ch06CtxKey{}, "from the caller")

	call := ToolCall{ID: "call-1", Name: "read", Arguments: `{"path":"README.md"}`}
	got := ch06Execute(t, ctx, call, r, ToolExecContext{})
	want := ToolResultMessage{
		ToolCallID: "call-1",
		ToolName:   "read",
		Content:    []ContentBlock{Text("# tiny-pi\nA small agent runtime.")},
		Details:    map[string]any{"path": "README.md", "lines": 2},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(ToolResultMessage{}, "Timestamp")); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if got.Timestamp == 0 {
		t.Errorf("result has no timestamp")
	}
	if gotValue != "from the caller" {
		t.Errorf("the tool saw context value %v, want the caller's context", gotValue)
	}

	// A call without argument text reaches the tool as an empty object.
	call = ToolCall{ID: "call-2", Name: "ls"}
	if got := ch06Execute(t, ctx, call, r, ToolExecContext{}); got.IsError || got.ToolCallID != "call-2" || TextOf(got.Content) != "README.md" {
		t.Errorf("ls result = %+v, want a success for call-2", got)
	}
	if diff := cmp.Diff([]string{`{"path":"README.md"}`, `{}`}, gotArgs); diff != "" {
		t.Errorf("arguments the tools received (-want +got):\n%s", diff)
	}
}

// ch06Reporter collects progress reports.
type ch06Reporter struct{ reports [][]ContentBlock }

func (r *ch06Reporter) exec() ToolExecContext {
	return ToolExecContext{ReportProgress: func(content []ContentBlock) { r.reports = append(r.reports, content) }}
}

func TestLab6_4_进度报告_按序送达(t *testing.T) {
	tool := Tool{
		ToolDefinition: ToolDefinition{Name: "slow"},
		Execute: func(_ context.Context, _ json.RawMessage, exec ToolExecContext) (ToolOutput, error) {
			exec.Progress(Text("读取中 1/2"))
			exec.Progress(Text("读取中 2/2"), Text("（快好了）"))
			return ToolOutput{Content: []ContentBlock{Text("完成")}}, nil
		},
	}
	r := ch06Registry(t, tool)
	call := ToolCall{ID: "call-1", Name: "slow", Arguments: `{}`}

	var rep ch06Reporter
	result := ch06Execute(t, context.Background(), call, r, rep.exec())
	want := [][]ContentBlock{
		{Text("读取中 1/2")},
		{Text("读取中 2/2"), Text("（快好了）")},
	}
	if diff := cmp.Diff(want, rep.reports); diff != "" {
		t.Errorf("progress reports (-want +got):\n%s", diff)
	}
	if result.IsError || TextOf(result.Content) != "完成" {
		t.Errorf("result = %+v, want the tool's success", result)
	}

	// Without a reporter, reporting progress does nothing and the tool still succeeds.
	result = ch06Execute(t, context.Background(), call, r, ToolExecContext{})
	if result.IsError || TextOf(result.Content) != "完成" {
		t.Errorf("without a reporter: result = %+v, want the tool's success", result)
	}
}

func TestLab6_4_进度报告_各自副本(t *testing.T) {
	tool := Tool{
		ToolDefinition: ToolDefinition{Name: "counter"},
		Execute: func(_ context.Context, _ json.RawMessage, exec ToolExecContext) (ToolOutput, error) {
			buf := []ContentBlock{Text("1 行")}
			exec.Progress(buf...)
			buf[0] = Text("2 行") // the tool reuses its buffer for the next report
			exec.Progress(buf...)
			return ToolOutput{Content: buf}, nil
		},
	}
	r := ch06Registry(t, tool)
	var rep ch06Reporter
	ch06Execute(t, context.Background(), ToolCall{ID: "call-1", Name: "counter"}, r, rep.exec())
	want := [][]ContentBlock{{Text("1 行")}, {Text("2 行")}}
	if diff := cmp.Diff(want, rep.reports); diff != "" {
		t.Errorf("progress reports (-want +got); a report must not change after it was made:\n%s", diff)
	}
}
