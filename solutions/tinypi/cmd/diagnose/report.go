package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// runJSON is one run as the report gives it: the lines a person reads, and the facts a program
// compares (`course diagnose` prints a table of them). With -json the program prints one
// runJSON a line; otherwise it prints the lines, a blank line between runs.
type runJSON struct {
	Scenario string   `json:"scenario"`
	Lines    []string `json:"lines"`
	// Rounds is the number of model requests.
	Rounds int `json:"rounds"`
	// Steps, Executions and Unpaired are absent when the run did not return (End is then
	// timeout, panic or invalid).
	Steps      *int   `json:"steps,omitempty"`
	Executions *int   `json:"executions,omitempty"`
	Unpaired   *int   `json:"unpaired,omitempty"`
	End        string `json:"end"`
	// Checks are the facts the final answer should state, in the scenario's order.
	Checks []checkJSON `json:"checks,omitempty"`
}

// checkJSON is one fact of the final answer: Key names it, Label is its name in the report's
// language, OK says whether the answer states it.
type checkJSON struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	OK    bool   `json:"ok"`
}

// writeText prints the run's lines, after a blank line unless it is the first run.
func (r runJSON) writeText(w io.Writer, blankFirst bool) error {
	var b strings.Builder
	if blankFirst {
		b.WriteString("\n")
	}
	for _, line := range r.Lines {
		b.WriteString(line + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// report describes one run.
func report(l labels, sc scenario, out outcome) runJSON {
	var b strings.Builder
	fmt.Fprintf(&b, l.header+"\n", sc.name, sc.title)
	fmt.Fprintf(&b, l.question+"\n", tinypi.TextOf(out.input0Content()))
	v := out.w.view()
	segments := resultSegments(out.result.Messages)
	for i, r := range v.rounds {
		writeRound(&b, l, i+1, r, segments)
	}
	for _, e := range v.early {
		fmt.Fprintf(&b, "  "+l.early+"\n", e.EventType())
	}

	r := runJSON{Scenario: sc.name, Rounds: len(v.rounds)}
	var ran []string
	for _, r := range v.rounds {
		ran = append(ran, inCallOrder(r.ran, r.reply.ToolCalls())...)
	}
	switch {
	case out.timedOut:
		fmt.Fprintf(&b, l.timedOut+"\n", runTimeout)
		r.End = "timeout"
	case out.panicked != "":
		fmt.Fprintf(&b, l.panicked+"\n", out.panicked)
		r.End = "panic"
	case out.err != nil:
		fmt.Fprintf(&b, l.runError+"\n", out.err)
		r.End = "invalid"
	default:
		res := out.result
		unpaired := unique(tinypi.UnpairedToolCalls(res.Messages))
		fmt.Fprintf(&b, l.roles+"\n", roleSequence(res.Messages))
		if len(unpaired) == 0 {
			b.WriteString(l.unpairedNone + "\n")
		} else {
			fmt.Fprintf(&b, l.unpaired+"\n", strings.Join(unpaired, ", "))
		}
		if len(ran) == 0 {
			b.WriteString(l.executionsNone + "\n")
		} else {
			fmt.Fprintf(&b, l.executions+"\n", len(ran), strings.Join(ran, ", "))
		}
		fmt.Fprintf(&b, l.turnEnds+"\n", v.turnEnds)
		writeRequestTools(&b, l, v.rounds)
		fmt.Fprintf(&b, l.ending+"\n", ending(l, res, len(v.rounds)), res.Reason, res.Steps)
		final := finalAnswer(res.Messages)
		shown := final
		if shown == "" {
			shown = l.none
		}
		fmt.Fprintf(&b, l.final+"\n", shown)
		var facts []string
		for _, c := range sc.checks {
			ok := strings.Contains(final, c.text)
			facts = append(facts, fmt.Sprintf("%s=%t", c.label, ok))
			r.Checks = append(r.Checks, checkJSON{Key: c.key, Label: c.label, OK: ok})
		}
		b.WriteString(strings.Join(facts, " ") + "\n")
		// Last, because it changes the result: does the run share anything with its caller?
		fmt.Fprintf(&b, l.caller+"\n", callerIsolation(l, out.input, res.Messages))
		steps, executions, unpairedN := res.Steps, len(ran), len(unpaired)
		r.Steps, r.Executions, r.Unpaired, r.End = &steps, &executions, &unpairedN, string(res.Reason)
	}
	r.Lines = strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	return r
}

// unique returns ids without repeats, in the order of their first appearance: a model that asks
// again with the same id leaves one unpaired call, not one per request.
func unique(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func (out outcome) input0Content() []tinypi.ContentBlock {
	if len(out.input) == 0 {
		return nil
	}
	if u, ok := out.input[0].(tinypi.UserMessage); ok {
		return u.Content
	}
	return nil
}

// writeRound prints round n: the reply, then each call's fate in call order, the progress the
// tools reported, and the result ids the transcript holds for this round.
func writeRound(b *strings.Builder, l labels, n int, r roundView, segments [][]string) {
	text := tinypi.TextOf(r.reply.Content)
	if r.reply.ErrorMessage != "" {
		text = strings.TrimSpace(text + " " + fmt.Sprintf(l.modelError, r.reply.ErrorMessage))
	}
	fmt.Fprintf(b, l.round+"\n", n, r.reply.StopReason, text)
	calls := r.reply.ToolCalls()
	if len(calls) == 0 {
		b.WriteString("  " + l.callsNone + "\n")
	} else {
		names := make([]string, len(calls))
		for i, c := range calls {
			names[i] = fmt.Sprintf("%s(%s)", c.Name, c.ID)
		}
		fmt.Fprintf(b, "  "+l.calls+"\n", strings.Join(names, ", "))
	}
	ids := map[string]bool{}
	for _, c := range calls {
		ids[c.ID] = true
		fmt.Fprintf(b, "  %s\n", callFate(l, c, r.events))
	}
	for _, e := range r.events {
		switch e := e.(type) {
		case tinypi.ToolEndEvent:
			if !ids[e.Result.ToolCallID] {
				fmt.Fprintf(b, "  "+l.orphanResult+"\n", e.Result.ToolName, e.Result.ToolCallID, resultText(l, e.Result))
			}
		case tinypi.ToolSkippedEvent:
			if !ids[e.Result.ToolCallID] {
				fmt.Fprintf(b, "  "+l.orphanResult+"\n", e.Result.ToolName, e.Result.ToolCallID, resultText(l, e.Result))
			}
		case tinypi.ToolProgressEvent:
			id := e.CallID
			if id == "" {
				id = l.noCallID
			}
			fmt.Fprintf(b, "  "+l.progress+"\n", id, tinypi.TextOf(e.Content))
		}
	}
	if len(calls) > 0 {
		written := l.none
		if n <= len(segments) && len(segments[n-1]) > 0 {
			written = strings.Join(segments[n-1], ", ")
		}
		fmt.Fprintf(b, "  "+l.written+"\n", written)
	}
}

// callFate says what the loop did with one call, judged by its events.
func callFate(l labels, c tinypi.ToolCall, events []tinypi.LoopEvent) string {
	started := false
	for _, e := range events {
		switch e := e.(type) {
		case tinypi.ToolEndEvent:
			if e.Result.ToolCallID == c.ID {
				if e.Result.IsError {
					return fmt.Sprintf(l.ranError, c.Name, c.ID, oneLine(e.Result.Content))
				}
				return fmt.Sprintf(l.ran, c.Name, c.ID, oneLine(e.Result.Content))
			}
		case tinypi.ToolSkippedEvent:
			if e.Result.ToolCallID == c.ID {
				return fmt.Sprintf(l.skipped, c.Name, c.ID, e.Result.IsError, oneLine(e.Result.Content))
			}
		case tinypi.ToolStartEvent:
			started = started || e.Call.ID == c.ID
		}
	}
	if started {
		return fmt.Sprintf(l.startedNoResult, c.Name, c.ID)
	}
	return fmt.Sprintf(l.dropped, c.Name, c.ID)
}

func resultText(l labels, r tinypi.ToolResultMessage) string {
	if r.IsError {
		return fmt.Sprintf(l.errorText, oneLine(r.Content))
	}
	return oneLine(r.Content)
}

// oneLine is the text of content with its line breaks written as \n, so each result stays on
// its line of the report.
func oneLine(content []tinypi.ContentBlock) string {
	return strings.ReplaceAll(tinypi.TextOf(content), "\n", `\n`)
}

// resultSegments returns, for each assistant message of the transcript, the call ids of the
// tool results that follow it, in transcript order.
func resultSegments(messages []tinypi.Message) [][]string {
	var segments [][]string
	for _, m := range messages {
		switch m := m.(type) {
		case tinypi.AssistantMessage:
			segments = append(segments, nil)
		case tinypi.ToolResultMessage:
			if len(segments) > 0 {
				id := m.ToolCallID
				if id == "" {
					id = `""`
				}
				segments[len(segments)-1] = append(segments[len(segments)-1], id)
			}
		}
	}
	return segments
}

// inCallOrder sorts the names of the tools that ran in a round by their call's position, so that
// tools finishing in a different order print the same way every time.
func inCallOrder(ran []string, calls []tinypi.ToolCall) []string {
	position := func(name string) int {
		return slices.IndexFunc(calls, func(c tinypi.ToolCall) bool { return c.Name == name })
	}
	sorted := slices.Clone(ran)
	slices.SortStableFunc(sorted, func(a, b string) int { return position(a) - position(b) })
	return sorted
}

func roleSequence(messages []tinypi.Message) string {
	roles := make([]string, len(messages))
	for i, m := range messages {
		roles[i] = string(m.MessageRole())
	}
	return strings.Join(roles, " ")
}

// writeRequestTools prints the tool names the requests offered: once when every request offered
// the same, per request otherwise.
func writeRequestTools(b *strings.Builder, l labels, rounds []roundView) {
	if len(rounds) == 0 {
		return
	}
	same := true
	for _, r := range rounds[1:] {
		same = same && slices.Equal(r.tools, rounds[0].tools)
	}
	if same {
		fmt.Fprintf(b, l.requestTools+"\n", namesOrNone(l, rounds[0].tools))
		return
	}
	for i, r := range rounds {
		fmt.Fprintf(b, l.requestToolsN+"\n", i+1, namesOrNone(l, r.tools))
	}
}

func namesOrNone(l labels, names []string) string {
	if len(names) == 0 {
		return l.none
	}
	return strings.Join(names, ", ")
}

// ending says in words why the run ended.
func ending(l labels, res tinypi.AgentRunResult, rounds int) string {
	switch res.Reason {
	case tinypi.RunStop:
		return fmt.Sprintf(l.endStop, rounds)
	case tinypi.RunMaxSteps:
		return fmt.Sprintf(l.endMaxSteps, res.Steps)
	case tinypi.RunLength:
		return fmt.Sprintf(l.endLength, rounds)
	case tinypi.RunError:
		return fmt.Sprintf(l.endError, rounds)
	case tinypi.RunAborted:
		return fmt.Sprintf(l.endAborted, res.Steps)
	default:
		return l.endOther
	}
}

// finalAnswer is the text of the transcript's last assistant message.
func finalAnswer(messages []tinypi.Message) string {
	for i := len(messages) - 1; i >= 0; i-- {
		if a, ok := messages[i].(tinypi.AssistantMessage); ok {
			return tinypi.TextOf(a.Content)
		}
	}
	return ""
}

// callerIsolation checks that the run shares nothing with the caller's messages: nothing was
// written past the end of the caller's slice, and changing the result's first user message does
// not change the caller's.
func callerIsolation(l labels, input, transcript []tinypi.Message) string {
	var problems []string
	for _, m := range input[len(input):cap(input)] {
		if m != nil {
			problems = append(problems, l.callerAppended)
			break
		}
	}
	before := tinypi.TextOf(input[0].(tinypi.UserMessage).Content)
	for _, m := range transcript {
		if u, ok := m.(tinypi.UserMessage); ok && len(u.Content) > 0 {
			u.Content[0] = tinypi.Text("（诊断程序改写了结果里的这条消息）")
			break
		}
	}
	if tinypi.TextOf(input[0].(tinypi.UserMessage).Content) != before {
		problems = append(problems, l.callerShared)
	}
	if len(problems) == 0 {
		return l.callerIntact
	}
	return strings.Join(problems, l.separator)
}
