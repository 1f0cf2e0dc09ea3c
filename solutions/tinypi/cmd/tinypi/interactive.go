package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// maxInputLine bounds one line typed at the prompt.
const maxInputLine = 1 << 20

// interactive reads prompts from stdin, one per line (a line starting with / is a command or a
// prompt template: slashCommands), and runs each (with a prompt, "› ", when
// stdin is a terminal), showing the answer as it
// streams and each tool call and its result as they happen. Ctrl-C during a run aborts the run
// and returns to the prompt; a second Ctrl-C before it has ended, or one at the prompt, ends the
// program with 130. At the end of stdin (or after /quit) it returns the exit status of the last
// run, 0 when there was none. When ctx ends (SIGTERM, SIGHUP) it aborts the run and returns.
// After each run it says the run's tokens (meter) and asks check about the session file; an error ends the program with 1.
func interactive(ctx context.Context, rt *tinypi.Runtime, e env, lines lineSource, meter *usageMeter, commands *slashCommands, check func() error) int {
	view := &terminalView{out: e.stdout, errOut: e.stderr, atLineStart: true}
	unsubscribe := rt.Agent.Subscribe(func(ev tinypi.AgentEvent) {
		view.show(ev)
		meter.show(ev)
	})
	defer unsubscribe()
	defer lines.restore()

	status := 0
	for {
		var line string
		select {
		case l := <-lines.read("› "):
			if l.interrupted {
				return exitInterrupted
			}
			if !l.ok {
				return status
			}
			line = strings.TrimSpace(l.text)
		case <-e.interrupts:
			fmt.Fprintln(e.stdout)
			return exitInterrupted
		case <-ctx.Done():
			lines.restore()
			fmt.Fprintln(e.stdout)
			return exitInterrupted
		}
		if line == "" {
			continue
		}
		line, quit := commands.handle(ctx, line)
		if quit {
			return status
		}
		if line == "" {
			continue
		}
		if err := rt.Agent.Prompt(ctx, tinypi.UserText(line)); err != nil {
			fmt.Fprintf(e.stderr, "tinypi: %v\n", err)
			status = exitCannotStart
			continue
		}
		idle := make(chan struct{})
		go func() {
			rt.Agent.WaitForIdle(context.Background())
			close(idle)
		}()
		aborting := false
	wait:
		for {
			select {
			case <-idle:
				break wait
			case <-ctx.Done():
				rt.Agent.Abort()
				<-idle
				view.endLine()
				return exitInterrupted
			case <-e.interrupts:
				if aborting {
					view.endLine()
					return exitInterrupted
				}
				aborting = true
				rt.Agent.Abort()
				view.note("^C: aborting the run; press Ctrl-C again to quit")
			}
		}
		status = tinypi.ExitStatus(view.lastReason)
		meter.report()
		if err := check(); err != nil {
			return e.failf(exitCannotStart, "%v", err)
		}
	}
}

// readLines reads r's lines in the background, each at most maxInputLine bytes; the channel is
// closed at the end of r.
func readLines(r io.Reader) <-chan string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, maxInputLine)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

// terminalView shows a run's events as text. Its methods are called on the agent's delivery
// goroutine, one at a time, and by interactive only while no run is active.
type terminalView struct {
	out, errOut io.Writer
	atLineStart bool
	lastReason  tinypi.RunReason
}

// show renders one event.
func (v *terminalView) show(ev tinypi.AgentEvent) {
	switch ev := ev.(type) {
	case tinypi.RunLoopEvent:
		switch le := ev.Event.(type) {
		case tinypi.ModelEvent:
			if d, ok := le.Event.(tinypi.TextDeltaEvent); ok && d.Delta != "" {
				fmt.Fprint(v.out, d.Delta)
				v.atLineStart = strings.HasSuffix(d.Delta, "\n")
			}
		case tinypi.ToolStartEvent:
			v.endLine()
			fmt.Fprintf(v.out, "→ %s %s\n", le.Call.Name, callSummary(le.Call))
		case tinypi.ToolEndEvent:
			v.result("←", le.Result)
		case tinypi.ToolSkippedEvent:
			v.result("skipped", le.Result)
		}
	case tinypi.RunEndEvent:
		v.endLine()
		v.lastReason = ev.Reason
		if ev.Reason != tinypi.RunStop {
			msg := "tinypi: the run ended with " + string(ev.Reason)
			if ev.Error != "" {
				msg += ": " + ev.Error
			}
			fmt.Fprintln(v.errOut, msg)
		}
	}
}

// result shows a tool result in one line: ok or error, and the first line of its text.
func (v *terminalView) result(prefix string, r tinypi.ToolResultMessage) {
	v.endLine()
	mark := "ok"
	if r.IsError {
		mark = "error"
	}
	fmt.Fprintf(v.out, "%s %s %s: %s\n", prefix, r.ToolName, mark, clipLine(tinypi.TextOf(r.Content)))
	if diff, ok := r.Details["diff"].(string); ok && !r.IsError {
		v.diff(diff)
	}
}

// diff shows an edit's change: the hunk lines of its unified diff, indented, at most
// maxPreviewLines of them.
func (v *terminalView) diff(diff string) {
	var shown []string
	for _, l := range strings.Split(strings.TrimSuffix(diff, "\n"), "\n") {
		if strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") || l == "" {
			continue
		}
		shown = append(shown, l)
	}
	for i, l := range shown {
		if i == maxPreviewLines {
			fmt.Fprintf(v.out, "  … %d more lines\n", len(shown)-i)
			break
		}
		fmt.Fprintf(v.out, "  %s\n", quoteControl(l))
	}
}

// note writes a line of the program's own.
func (v *terminalView) note(text string) {
	v.endLine()
	fmt.Fprintln(v.errOut, text)
}

// endLine ends a line of streamed text, so that what follows starts a line of its own.
func (v *terminalView) endLine() {
	if !v.atLineStart {
		fmt.Fprintln(v.out)
		v.atLineStart = true
	}
}

// callSummary is what a call works on: bash's command, the other tools' path.
func callSummary(c tinypi.ToolCall) string {
	var args struct {
		Command string `json:"command"`
		Path    string `json:"path"`
	}
	if json.Unmarshal([]byte(c.Arguments), &args) != nil {
		return ""
	}
	if args.Command != "" {
		return clipLine(args.Command)
	}
	return clipLine(args.Path)
}

// clipLine is the first line of s, at most 100 characters.
func clipLine(s string) string {
	line, _, more := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(line); len(r) > 100 {
		return string(r[:100]) + "…"
	} else if more {
		return line + " …"
	}
	return line
}
