package tinypi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ToolFunc runs a tool. args is the call's argument JSON, already validated against the tool's
// schema. A returned error becomes an error result whose text is the error's message.
type ToolFunc func(ctx context.Context, args json.RawMessage, exec ToolExecContext) (ToolOutput, error)

// ToolOutput is what a tool produced.
type ToolOutput struct {
	Content []ContentBlock
	Details map[string]any
	//chapter:begin 12
	// Terminate asks the run to end after this call's batch. The run ends only when every result
	// of the batch asks for it (chapter 12): one call alone cannot end a run the others want to
	// go on with.
	Terminate bool
	//chapter:end
}

// ToolExecContext is what a running tool may use besides its context.
type ToolExecContext struct {
	// ReportProgress, when not nil, publishes partial output while the tool runs.
	ReportProgress func(content []ContentBlock)
}

// Progress publishes partial output while the tool runs. It does nothing when no reporter is
// set, so a tool may always call it. The reporter gets its own copy of the blocks: a tool may
// reuse its buffer for the next report, and the reporter may keep what it was given.
func (e ToolExecContext) Progress(content ...ContentBlock) {
	//lab:begin 6.4
	if e.ReportProgress != nil {
		e.ReportProgress(slices.Clone(content))
	}
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// Tool is a definition and the function that runs it.
type Tool struct {
	ToolDefinition
	Execute ToolFunc
	//chapter:begin 12
	// PrepareArguments, when set, rewrites a call's raw arguments before they are checked against
	// the schema: the place to accept an older shape of the arguments. An error (or a panic)
	// becomes the call's error result and the tool does not run.
	PrepareArguments func(args json.RawMessage) (json.RawMessage, error)
	// ExecutionMode is ToolParallel (or empty) when calls of this tool may run alongside other
	// calls of their batch, ToolSequential when they may not: a batch holding such a call runs
	// one call after the other.
	ExecutionMode ToolExecutionMode
	//chapter:end
}

// Registry holds the tools a run may call, in registration order. It is read-only after
// NewRegistry, so it is safe for concurrent use.
type Registry struct {
	tools   []Tool
	schemas []*jsonschema.Schema // schemas[i] checks the arguments of tools[i]
	index   map[string]int       // name → position in tools
}

// NewRegistry checks every tool and compiles its schema, so that a broken definition fails
// here, once, and not in the middle of a run. It fails on an empty or duplicate name, a missing
// Execute function or a schema that is not JSON or does not compile. An empty Parameters means
// "an object with any properties".
func NewRegistry(tools ...Tool) (*Registry, error) {
	//lab:begin 6.1
	r := &Registry{index: make(map[string]int, len(tools))}
	for i, t := range tools {
		if t.Name == "" {
			return nil, fmt.Errorf("tinypi: tool #%d has an empty name", i+1)
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
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// MustRegistry is NewRegistry for tools known to be valid; it panics on an error.
func MustRegistry(tools ...Tool) *Registry {
	r, err := NewRegistry(tools...)
	if err != nil {
		panic(err)
	}
	return r
}

// compileSchema compiles one tool's parameter schema. Each tool gets its own compiler and its
// own resource name, so one tool's schema can never refer to another's.
func compileSchema(name, text string) (*jsonschema.Schema, error) {
	//lab:begin 6.1
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
		return nil, fmt.Errorf("tinypi: tool %q: schema: %w", name, err)
	}
	schema, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tinypi: tool %q: schema does not compile: %w", name, err)
	}
	return schema, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// Definitions returns the definitions of all tools, in registration order: the order the model
// is shown them is the order the program registered them. The slice is the caller's to change.
// A nil registry has none.
func (r *Registry) Definitions() []ToolDefinition {
	if r == nil {
		return nil
	}
	//lab:begin 6.1
	defs := make([]ToolDefinition, len(r.tools))
	for i, t := range r.tools {
		defs[i] = t.ToolDefinition
	}
	return defs
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
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

// ValidateArguments checks a call's raw argument JSON against the schema of the named tool.
// Empty (or all blank) arguments mean an empty object, because some providers send nothing for
// a call without parameters. Anything else must parse as it is: text that is not JSON is an
// error, also when it looks like an object that was merely cut off. Arguments are never
// repaired, since a guess about what the model meant would run a tool with input nobody wrote.
func (r *Registry) ValidateArguments(name, arguments string) error {
	if r == nil {
		return fmt.Errorf("tool %s not found", name)
	}
	//lab:begin 6.2
	i, ok := r.index[name]
	if !ok {
		return fmt.Errorf("tool %s not found", name)
	}
	if strings.TrimSpace(arguments) == "" {
		arguments = "{}"
	}
	value, err := jsonschema.UnmarshalJSON(strings.NewReader(arguments))
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return errors.New("arguments are not valid JSON: the text ends in the middle of a value")
		}
		return fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	if err := r.schemas[i].Validate(value); err != nil {
		return errors.New(describeSchemaError(err))
	}
	return nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// describeSchemaError turns a schema validation error into one line: each failing value with
// its JSON Pointer ("/" is the arguments object itself) and what is wrong with it, joined by
// "; ". The library's own text spans several lines and names the schema's internal URL, which
// says nothing to the model that has to fix its call.
func describeSchemaError(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return oneLine(err.Error())
	}
	printer := message.NewPrinter(language.English)
	var problems []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			problems = append(problems, fmt.Sprintf("at %s: %s", jsonPointer(e.InstanceLocation),
				oneLine(e.ErrorKind.LocalizedString(printer))))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(problems, "; ")
}

// jsonPointer writes a value's location as a JSON Pointer, with "/" for the root.
func jsonPointer(tokens []string) string {
	if len(tokens) == 0 {
		return "/"
	}
	escape := strings.NewReplacer("~", "~0", "/", "~1")
	var b strings.Builder
	for _, tok := range tokens {
		b.WriteByte('/')
		b.WriteString(escape.Replace(tok))
	}
	return b.String()
}

// ExecuteToolCall runs one call and always returns its result: it is a closed contract. An
// unknown tool, arguments that fail the schema, a tool that returns an error and a tool that
// panics each become a result with IsError set and a one-line message (never a stack trace),
// so the model can read what went wrong and the run goes on. The result always carries the
// call's ID and name.
func ExecuteToolCall(ctx context.Context, call ToolCall, registry *Registry, exec ToolExecContext) ToolResultMessage {
	tool, ok := registry.Lookup(call.Name)
	if !ok {
		//lab:begin 6.3
		return ErrorToolResult(call, fmt.Sprintf("Tool %s not found", call.Name))
		//lab:stub
		//	panic(LAB_PENDING)
		//lab:end
	}
	if err := registry.ValidateArguments(call.Name, call.Arguments); err != nil {
		return ErrorToolResult(call, fmt.Sprintf("Validation failed for tool %q: %v", call.Name, err))
	}
	return runCall(ctx, call, tool, exec)
}

// runCall runs a call whose arguments passed the schema and turns what the tool did into the
// call's result: its content and details, or an error result with the error's message.
func runCall(ctx context.Context, call ToolCall, tool Tool, exec ToolExecContext) ToolResultMessage {
	//lab:begin 6.3
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
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// runTool calls the tool's function, turning a panic into an error that carries the panic
// value but not the stack: the message goes to the model, which cannot use a Go stack trace.
func runTool(ctx context.Context, tool Tool, args json.RawMessage, exec ToolExecContext) (out ToolOutput, err error) {
	//lab:begin 6.3
	defer func() {
		if p := recover(); p != nil {
			out, err = ToolOutput{}, fmt.Errorf("tool %s panicked: %v", tool.Name, p)
		}
	}()
	return tool.Execute(ctx, args, exec)
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
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

// oneLine folds all runs of white space, newlines included, into single spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
