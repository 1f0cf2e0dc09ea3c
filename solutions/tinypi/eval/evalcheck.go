package eval

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// This file holds the judges of chapter 14: each looks at one thing a run left behind (the
// workspace, the session log) and says pass or fail, with a detail a person can act on. None of
// them looks at what the agent said it did: only at what is on disk and in the log.

// CheckWorkspace judges the final workspace: it must be exactly the fixture with the expected
// changes. Every file of want.Files exists with exactly that content, no path of want.Absent
// exists, and every other file is as it was in the fixture, and no other file was created. The
// check is named "workspace"; its Detail lists each difference, in the order of the paths,
// separated by "; ".
func CheckWorkspace(fixture, final string, want EvalExpect) EvalCheck {
	//lab:begin 14.1
	before, err := ReadWorkspaceFiles(fixture)
	if err != nil {
		return EvalCheck{Name: "workspace", Detail: "the fixture: " + err.Error()}
	}
	after, err := ReadWorkspaceFiles(final)
	if err != nil {
		return EvalCheck{Name: "workspace", Detail: err.Error()}
	}
	expected := before
	for _, p := range want.Absent {
		delete(expected, p)
	}
	for p, content := range want.Files {
		expected[p] = content
	}
	paths := make([]string, 0, len(expected)+len(after))
	for p := range expected {
		paths = append(paths, p)
	}
	for p := range after {
		if _, ok := expected[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var problems []string
	for _, p := range paths {
		wantContent, wanted := expected[p]
		gotContent, got := after[p]
		switch {
		case wanted && !got:
			problems = append(problems, p+": missing")
		case !wanted && slices.Contains(want.Absent, p):
			problems = append(problems, p+": should have been deleted")
		case !wanted:
			problems = append(problems, p+": not expected")
		case gotContent != wantContent:
			problems = append(problems, fmt.Sprintf("%s: got %q, want %q", p, gotContent, wantContent))
		}
	}
	if len(problems) > 0 {
		return EvalCheck{Name: "workspace", Detail: strings.Join(problems, "; ")}
	}
	return EvalCheck{Name: "workspace", Pass: true}
	//lab:end
}

// CheckPairedCalls judges the session log's tool calls: every tool/call event has exactly one
// tool/result event whose SourceEventSeqs is [the call's seq] and whose ToolCallID is the call's
// ID, and no tool/result answers a call that is not in the log. The check is named "paired"; its
// Detail names the first call or result that breaks the rule, by seq.
func CheckPairedCalls(events []tinypi.SessionEvent) EvalCheck {
	//lab:begin 14.2
	calls := map[int]string{} // seq of a tool/call -> its call ID
	answered := map[int]int{} // seq of a tool/call -> how many results answer it
	var order []int
	for _, e := range events {
		switch e.Type {
		case tinypi.EventToolCall:
			calls[e.Seq] = e.Call.ID
			order = append(order, e.Seq)
		case tinypi.EventToolResult:
			result, _ := e.Message.(tinypi.ToolResultMessage)
			if len(e.SourceEventSeqs) != 1 {
				return EvalCheck{Name: "paired", Detail: fmt.Sprintf("the result at seq %d names %d calls, want 1", e.Seq, len(e.SourceEventSeqs))}
			}
			src := e.SourceEventSeqs[0]
			id, ok := calls[src]
			if !ok {
				return EvalCheck{Name: "paired", Detail: fmt.Sprintf("the result at seq %d answers seq %d, which is not a call before it", e.Seq, src)}
			}
			if result.ToolCallID != id {
				return EvalCheck{Name: "paired", Detail: fmt.Sprintf("the result at seq %d has call ID %q, its call at seq %d has %q", e.Seq, result.ToolCallID, src, id)}
			}
			answered[src]++
		}
	}
	for _, seq := range order {
		switch n := answered[seq]; {
		case n == 0:
			return EvalCheck{Name: "paired", Detail: fmt.Sprintf("the call at seq %d (%s) has no result", seq, calls[seq])}
		case n > 1:
			return EvalCheck{Name: "paired", Detail: fmt.Sprintf("the call at seq %d (%s) has %d results", seq, calls[seq], n)}
		}
	}
	return EvalCheck{Name: "paired", Pass: true}
	//lab:end
}

// CheckCommands judges the commands the agent ran: the "command" argument of each bash call in
// the log's tool/call events that has a result (a tool/result whose SourceEventSeqs is [the
// call's seq]) and whose result is not an error, in the order of the calls, must hold
// want in the same order (other commands may come before, between and after). The check is named
// "commands"; its Detail names the first command of want that was not found after the ones
// before it, and lists the commands that did run.
func CheckCommands(events []tinypi.SessionEvent, want []string) EvalCheck {
	//lab:begin 14.2
	answered := map[int]bool{} // seq of a call -> a result answers it
	failed := map[int]bool{}   // seq of a call -> its result is an error
	for _, e := range events {
		if e.Type == tinypi.EventToolResult && len(e.SourceEventSeqs) == 1 {
			answered[e.SourceEventSeqs[0]] = true
			if result, ok := e.Message.(tinypi.ToolResultMessage); ok && result.IsError {
				failed[e.SourceEventSeqs[0]] = true
			}
		}
	}
	var ran []string
	for _, e := range events {
		if e.Type != tinypi.EventToolCall || e.Call.Name != "bash" || !answered[e.Seq] || failed[e.Seq] {
			continue
		}
		var args struct {
			Command string `json:"command"`
		}
		if json.Unmarshal([]byte(e.Call.Arguments), &args) == nil {
			ran = append(ran, args.Command)
		}
	}
	next := 0
	for _, command := range ran {
		if next < len(want) && command == want[next] {
			next++
		}
	}
	if next < len(want) {
		return EvalCheck{Name: "commands", Detail: fmt.Sprintf("%q was not run (successfully) in order; ran %q", want[next], ran)}
	}
	return EvalCheck{Name: "commands", Pass: true}
	//lab:end
}

// CheckBudget judges what the run spent: steps are the assistant/message events of the log and
// tokens the sum of their Usage.Total. A run within the budget (equal counts) passes; a zero
// limit is no limit. It returns the check, named "budget", with the steps and tokens it counted.
func CheckBudget(events []tinypi.SessionEvent, budget EvalBudget) (check EvalCheck, steps, tokens int) {
	//lab:begin 14.3
	for _, e := range events {
		if e.Type != tinypi.EventAssistantMessage {
			continue
		}
		steps++
		if m, ok := e.Message.(tinypi.AssistantMessage); ok {
			tokens += m.Usage.Total
		}
	}
	var over []string
	if budget.Steps > 0 && steps > budget.Steps {
		over = append(over, fmt.Sprintf("%d steps, budget %d", steps, budget.Steps))
	}
	if budget.Tokens > 0 && tokens > budget.Tokens {
		over = append(over, fmt.Sprintf("%d tokens, budget %d", tokens, budget.Tokens))
	}
	if len(over) > 0 {
		return EvalCheck{Name: "budget", Detail: strings.Join(over, "; ")}, steps, tokens
	}
	return EvalCheck{Name: "budget", Pass: true}, steps, tokens
	//lab:end
}
