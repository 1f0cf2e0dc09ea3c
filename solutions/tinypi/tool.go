package tinypi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ToolFunc runs a tool. args is the call's argument JSON, already validated against the tool's
// schema. A returned error becomes an error result whose text is the error's message.
type ToolFunc func(ctx context.Context, args json.RawMessage, exec ToolExecContext) (ToolOutput, error)

// ToolOutput is what a tool produced.
type ToolOutput struct {
	Content []ContentBlock
	Details map[string]any
}

// ToolExecContext is what a running tool may use besides its context.
type ToolExecContext struct {
	// ReportProgress, when not nil, publishes partial output while the tool runs.
	ReportProgress func(content []ContentBlock)
}

// Progress reports partial output if a reporter is set.
func (e ToolExecContext) Progress(content ...ContentBlock) {
	if e.ReportProgress != nil {
		e.ReportProgress(content)
	}
}

// Tool is a definition and the function that runs it.
type Tool struct {
	ToolDefinition
	Execute ToolFunc
}

// Registry holds the tools a run may call, in registration order.
type Registry struct {
	tools   []Tool
	schemas []*jsonschema.Schema
	index   map[string]int
}

// NewRegistry compiles every tool's schema. It fails on a duplicate or empty name, a missing
// function or a schema that does not compile.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{index: make(map[string]int, len(tools))}
	for _, t := range tools {
		if t.Name == "" {
			return nil, errors.New("tinypi: tool with empty name")
		}
		if _, dup := r.index[t.Name]; dup {
			return nil, fmt.Errorf("tinypi: tool %q registered twice", t.Name)
		}
		if t.Execute == nil {
			return nil, fmt.Errorf("tinypi: tool %q has no Execute function", t.Name)
		}
		schema, err := compileSchema(t.Name, t.Parameters)
		if err != nil {
			return nil, err
		}
		r.index[t.Name] = len(r.tools)
		r.tools = append(r.tools, t)
		r.schemas = append(r.schemas, schema)
	}
	return r, nil
}

// MustRegistry is NewRegistry for tools known to be valid; it panics on an error.
func MustRegistry(tools ...Tool) *Registry {
	r, err := NewRegistry(tools...)
	if err != nil {
		panic(err)
	}
	return r
}

func compileSchema(name, text string) (*jsonschema.Schema, error) {
	if strings.TrimSpace(text) == "" {
		text = `{"type":"object"}`
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("tinypi: tool %q: schema is not JSON: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	url := "tool:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("tinypi: tool %q: %w", name, err)
	}
	schema, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tinypi: tool %q: schema does not compile: %w", name, err)
	}
	return schema, nil
}

// Definitions returns the definitions of all tools, in registration order. A nil registry has
// none.
func (r *Registry) Definitions() []ToolDefinition {
	if r == nil {
		return nil
	}
	defs := make([]ToolDefinition, len(r.tools))
	for i, t := range r.tools {
		defs[i] = t.ToolDefinition
	}
	return defs
}

// Lookup returns the tool with the given name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	if r == nil {
		return Tool{}, false
	}
	i, ok := r.index[name]
	if !ok {
		return Tool{}, false
	}
	return r.tools[i], true
}

// validate checks a call's raw arguments against the tool's schema.
func (r *Registry) validate(name, args string) error {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	value, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
	if err != nil {
		return fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	if err := r.schemas[r.index[name]].Validate(value); err != nil {
		return err
	}
	return nil
}

// ExecuteToolCall runs one call and always returns its result: it is a closed contract. An
// unknown tool, arguments that fail the schema, a tool that returns an error and a tool that
// panics each become a result with IsError set and a one-line message (never a stack trace).
// The result always carries the call's ID and name.
func ExecuteToolCall(ctx context.Context, call ToolCall, registry *Registry, exec ToolExecContext) ToolResultMessage {
	tool, ok := registry.Lookup(call.Name)
	if !ok {
		return ErrorToolResult(call, fmt.Sprintf("Tool %s not found", call.Name))
	}
	if err := registry.validate(call.Name, call.Arguments); err != nil {
		return ErrorToolResult(call, fmt.Sprintf("Validation failed for tool %q: %s", call.Name, oneLine(err.Error())))
	}
	args := json.RawMessage(call.Arguments)
	if strings.TrimSpace(call.Arguments) == "" {
		args = json.RawMessage("{}")
	}
	out, err := runTool(ctx, tool, args, exec)
	if err != nil {
		return ErrorToolResult(call, err.Error())
	}
	return ToolResultMessage{
		ToolCallID: call.ID,
		ToolName:   call.Name,
		Content:    out.Content,
		Details:    out.Details,
		Timestamp:  time.Now().UnixMilli(),
	}
}

// runTool calls the tool's function, turning a panic into an error.
func runTool(ctx context.Context, tool Tool, args json.RawMessage, exec ToolExecContext) (out ToolOutput, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool %s panicked: %v", tool.Name, p)
		}
	}()
	return tool.Execute(ctx, args, exec)
}

// ErrorToolResult returns an error result for call with text as its only content.
func ErrorToolResult(call ToolCall, text string) ToolResultMessage {
	return ToolResultMessage{
		ToolCallID: call.ID,
		ToolName:   call.Name,
		Content:    []ContentBlock{Text(text)},
		IsError:    true,
		Timestamp:  time.Now().UnixMilli(),
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
