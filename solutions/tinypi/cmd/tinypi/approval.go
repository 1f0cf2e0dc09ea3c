package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// mutating are the tools that change the workspace or run a command: in interactive mode at a
// terminal, each call of one is shown and asked about first (unless -yes).
var mutating = map[string]bool{"write": true, "edit": true, "bash": true}

// approver asks the user, at the terminal, before a mutating call: y runs it once, a runs it and
// every later call of the session without asking, n refuses it (the model gets a result saying
// the user refused it). Ctrl-C while it asks aborts the run, and the call with it. Calls of one
// batch are asked about one at a time.
type approver struct {
	mu    sync.Mutex
	lines lineSource // interactive's
	out   io.Writer
	// abort aborts the run: Ctrl-C typed while a line is read at a terminal (in raw mode) is a
	// key, not SIGINT.
	abort func()
	all   bool
}

// ask returns the hook's decision for call.
func (a *approver) ask(ctx context.Context, call tinypi.ToolCall, args json.RawMessage, preview func(tinypi.ToolCall, json.RawMessage) string) tinypi.ToolCallDecision {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.all {
		return tinypi.ToolCallDecision{}
	}
	fmt.Fprintf(a.out, "\n? %s\n", preview(call, args))
	for {
		select {
		case <-ctx.Done():
			a.lines.restore()
			fmt.Fprintln(a.out)
			return tinypi.ToolCallDecision{Block: true, Reason: "the run was aborted before the user answered"}
		case line := <-a.lines.read("allow? y = yes, once · a = all calls this session · n = no › "):
			if line.interrupted {
				a.abort()
				return tinypi.ToolCallDecision{Block: true, Reason: "the user pressed Ctrl-C: the run is aborted"}
			}
			if !line.ok {
				return tinypi.ToolCallDecision{Block: true, Reason: "the user did not answer (end of input): " + call.Name + " is refused"}
			}
			switch strings.ToLower(strings.TrimSpace(line.text)) {
			case "y", "yes":
				return tinypi.ToolCallDecision{}
			case "a", "all":
				a.all = true
				return tinypi.ToolCallDecision{}
			case "n", "no":
				return tinypi.ToolCallDecision{Block: true, Reason: "the user refused this " + call.Name + " call; ask what they want instead"}
			}
		}
	}
}

// maxPreviewLines bounds what a call's preview shows of its command or change.
const maxPreviewLines = 20

// callPreview shows a mutating call for the question: bash's command, write's path and size,
// edit's change as lines removed (-) and added (+).
func callPreview(call tinypi.ToolCall, args json.RawMessage) string {
	var a struct {
		Command string `json:"command"`
		Path    string `json:"path"`
		Content string `json:"content"`
		OldText string `json:"old_text"`
		NewText string `json:"new_text"`
	}
	json.Unmarshal(args, &a)
	var b strings.Builder
	switch call.Name {
	case "bash":
		b.WriteString("bash")
		writeIndented(&b, "  $ ", a.Command)
	case "write":
		fmt.Fprintf(&b, "write %s (%d bytes, %d lines)", quoteControl(a.Path), len(a.Content), strings.Count(a.Content, "\n")+1)
	case "edit":
		fmt.Fprintf(&b, "edit %s", quoteControl(a.Path))
		writeIndented(&b, "  -", a.OldText)
		writeIndented(&b, "  +", a.NewText)
	default:
		b.WriteString(call.Name)
	}
	return b.String()
}

// writeIndented writes each line of text on a line of its own after prefix, at most
// maxPreviewLines of them.
func writeIndented(b *strings.Builder, prefix, text string) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		if i == maxPreviewLines {
			fmt.Fprintf(b, "\n%s… %d more lines", prefix, len(lines)-i)
			break
		}
		b.WriteString("\n" + prefix + quoteControl(l))
	}
}

// quoteControl is s with its control characters escaped: what a model writes must not drive
// the terminal.
func quoteControl(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	q := fmt.Sprintf("%q", s)
	return q[1 : len(q)-1]
}

func isControl(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f || (r >= 0x80 && r < 0xa0) }
