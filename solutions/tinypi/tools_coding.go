package tinypi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// MaxCommandTimeout is the longest time limit a bash call may ask for.
const MaxCommandTimeout = 10 * time.Minute

// Tools returns the coding tools of the workspace, in this order: read, write, edit, bash.
// They follow the chapter-06 contract: each has a JSON schema, gets arguments that passed it,
// and reports failures as errors, which ExecuteToolCall turns into error results. Register them
// with NewRegistry, alone or next to other tools.
func (w *Workspace) Tools() []Tool {
	return []Tool{
		{ToolDefinition: ToolDefinition{
			Name:        "read",
			Description: "Read a text file of the workspace. offset is the first line (from 1), limit the number of lines. Long output is cut; the note at its end says how to read on.",
			Parameters:  `{"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace"},"offset":{"type":"integer","minimum":1},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`,
		}, Execute: w.readTool},
		{ToolDefinition: ToolDefinition{
			Name:        "write",
			Description: "Write a file of the workspace, replacing it if it exists and creating missing directories.",
			Parameters:  `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`,
		}, Execute: w.writeTool},
		{ToolDefinition: ToolDefinition{
			Name:        "edit",
			Description: "Replace old_text with new_text in a file of the workspace. old_text must match exactly one place in the file. Returns a unified diff.",
			Parameters:  `{"type":"object","properties":{"path":{"type":"string"},"old_text":{"type":"string","minLength":1},"new_text":{"type":"string"}},"required":["path","old_text","new_text"],"additionalProperties":false}`,
		}, Execute: w.editTool},
		{ToolDefinition: ToolDefinition{
			Name:        "bash",
			Description: "Run a bash command in the workspace directory. timeout is in seconds. Long output keeps its head and its tail.",
			Parameters:  `{"type":"object","properties":{"command":{"type":"string","minLength":1},"timeout":{"type":"number","exclusiveMinimum":0,"maximum":600}},"required":["command"],"additionalProperties":false}`,
		}, Execute: w.bashTool},
	}
}

// readTool is the read tool's function: the window's text, then the note when the file goes on.
func (w *Workspace) readTool(ctx context.Context, raw json.RawMessage, exec ToolExecContext) (ToolOutput, error) {
	var args struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return ToolOutput{}, err
	}
	//lab:begin 8.5
	res, err := w.Read(args.Path, args.Offset, args.Limit)
	if err != nil {
		return ToolOutput{}, fmt.Errorf("read %s: %w", args.Path, err)
	}
	text := res.Text
	if res.Note != "" {
		text += "\n\n" + res.Note
	}
	return ToolOutput{
		Content: []ContentBlock{Text(text)},
		Details: map[string]any{"path": args.Path, "firstLine": res.FirstLine, "lastLine": res.LastLine, "truncated": res.Truncated, "nextOffset": res.NextOffset},
	}, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// writeTool is the write tool's function.
func (w *Workspace) writeTool(ctx context.Context, raw json.RawMessage, exec ToolExecContext) (ToolOutput, error) {
	var args struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return ToolOutput{}, err
	}
	//lab:begin 8.5
	if err := w.WriteFile(args.Path, []byte(args.Content)); err != nil {
		return ToolOutput{}, fmt.Errorf("write %s: %w", args.Path, err)
	}
	return ToolOutput{
		Content: []ContentBlock{Text(fmt.Sprintf("Wrote %d bytes to %s.", len(args.Content), args.Path))},
		Details: map[string]any{"path": args.Path, "bytes": len(args.Content)},
	}, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// editTool is the edit tool's function: a line that says what changed, then the diff.
func (w *Workspace) editTool(ctx context.Context, raw json.RawMessage, exec ToolExecContext) (ToolOutput, error) {
	var args struct {
		Path    string `json:"path"`
		OldText string `json:"old_text"`
		NewText string `json:"new_text"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return ToolOutput{}, err
	}
	//lab:begin 8.5
	res, err := w.Edit(args.Path, args.OldText, args.NewText)
	if err != nil {
		return ToolOutput{}, fmt.Errorf("edit %s: %w", args.Path, err)
	}
	return ToolOutput{
		Content: []ContentBlock{Text(fmt.Sprintf("Edited %s at line %d.\n%s", args.Path, res.FirstChangedLine, res.Diff))},
		Details: map[string]any{"path": args.Path, "diff": res.Diff, "firstChangedLine": res.FirstChangedLine},
	}, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// bashTool is the bash tool's function. Output arrives as progress while the command runs; a
// command that failed, timed out or was cancelled is an error whose message is the whole result
// text, so the model reads the output and how the command ended either way.
func (w *Workspace) bashTool(ctx context.Context, raw json.RawMessage, exec ToolExecContext) (ToolOutput, error) {
	var args struct {
		Command string  `json:"command"`
		Timeout float64 `json:"timeout"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return ToolOutput{}, err
	}
	//lab:begin 8.5
	timeout := min(time.Duration(args.Timeout*float64(time.Second)), MaxCommandTimeout)
	res, err := w.RunCommand(ctx, args.Command, timeout, func(text string) { exec.Progress(Text(text)) })
	if err != nil {
		return ToolOutput{}, fmt.Errorf("bash: %w", err)
	}
	if res.Failed() {
		return ToolOutput{}, errors.New(res.Text())
	}
	return ToolOutput{
		Content: []ContentBlock{Text(res.Text())},
		Details: map[string]any{"exitCode": res.ExitCode, "totalBytes": res.TotalBytes, "omittedBytes": res.OmittedBytes},
	}, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}
