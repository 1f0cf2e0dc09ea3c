package sessionproof

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// loopRuns is the number of random runs TestCommitOrderPropertyLoop drives through
// RunAgentLoop; one in loopFileEvery writes its session to a file.
const (
	loopRuns      = 300
	loopFileEvery = 10
)

// TestCommitOrderPropertyLoop: the same property through the real loop. The executor blocks
// every call until the test releases it, and the test releases the calls of each batch in a
// random order, one at a time, waiting for the loop to report each tool_end before releasing
// the next: the completion order is the test's, without sleeps.
func TestCommitOrderPropertyLoop(t *testing.T) {
	seed := baseSeed()
	dir := t.TempDir()
	for run := range loopRuns {
		rng := rand.New(rand.NewPCG(seed, uint64(run)))
		path := ""
		if run%loopFileEvery == 0 {
			path = filepath.Join(dir, fmt.Sprintf("run-%d.jsonl", run))
		}
		if err := loopRun(rng, path); err != nil {
			t.Fatalf("seed %d, run %d (replay with -seed %d): %v", seed, run, seed, err)
		}
	}
}

// loopRun is one run of the loop: one to three turns asking for a random batch each, then a
// text answer. The session is in memory, or in the file path when path is not empty.
func loopRun(rng *rand.Rand, path string) (err error) {
	ctx := context.Background()
	session := tinypi.NewSession("loop")
	if path != "" {
		if session, err = tinypi.CreateSession(tinypi.SessionOptions{ID: "loop", Path: path, FlushWindow: 50_000}); err != nil {
			return fmt.Errorf("CreateSession: %w", err)
		}
		defer func() {
			if cerr := session.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("Close: %w", cerr)
			}
		}()
	}
	var m logModel
	user := tinypi.UserMessage{Content: []tinypi.ContentBlock{tinypi.Text("go")}, Timestamp: 1}
	if _, err := session.AppendMessage(user); err != nil {
		return fmt.Errorf("AppendMessage: %w", err)
	}
	m.user(user)

	// The script, the release order and the model's expected log.
	var script []tinypi.AssistantMessage
	var batches [][]tinypi.ToolCall
	index := map[string]int{} // call ID → index in its batch
	turns := 1 + rng.IntN(3)
	for turn := 1; turn <= turns; turn++ {
		calls := randomCalls(rng, fmt.Sprint("t", turn))
		content := []tinypi.ContentBlock{tinypi.Text(fmt.Sprint("turn ", turn))}
		for i, c := range calls {
			content = append(content, c)
			index[c.ID] = i
		}
		script = append(script, tinypi.AssistantMessage{Content: content, StopReason: tinypi.StopReasonToolUse, Timestamp: int64(10 * turn)})
		batches = append(batches, calls)
	}
	final := tinypi.AssistantMessage{Content: []tinypi.ContentBlock{tinypi.Text("done")}, StopReason: tinypi.StopReasonStop, Timestamp: 999}
	script = append(script, final)
	var wantRequests [][]tinypi.Message
	var order [][]int
	for turn, calls := range batches {
		m.turnStart(turn + 1)
		wantRequests = append(wantRequests, m.modelRequest())
		m.assistant(script[turn])
		mb := m.beginBatch(calls)
		perm := rng.Perm(len(calls))
		for _, i := range perm {
			m.finish(mb, i, toolOutput(calls[i]))
		}
		m.turnEnd(turn+1, "toolUse")
		order = append(order, perm)
	}
	m.turnStart(len(batches) + 1)
	wantRequests = append(wantRequests, m.modelRequest())
	m.assistant(final)
	m.turnEnd(len(batches)+1, string(tinypi.RunStop))

	// The executor: it records whether its call's tool/start was in the log when the body began,
	// then waits for its release.
	release := map[string]chan struct{}{}
	for _, calls := range batches {
		for _, c := range calls {
			release[c.ID] = make(chan struct{})
		}
	}
	startLogged := map[string]bool{}
	startSeen := make(chan string, len(release))
	execute := func(ctx context.Context, call tinypi.ToolCall, _ tinypi.ToolExecContext) (tinypi.ToolResultMessage, error) {
		if slices.ContainsFunc(session.Events(), func(e tinypi.SessionEvent) bool {
			return e.Type == tinypi.EventToolStart && e.Call.ID == call.ID
		}) {
			startSeen <- call.ID
		}
		<-release[call.ID]
		return toolOutput(call), nil
	}
	ends := make(chan string, len(release))
	model := tinypi.NewScriptedModel(script...)
	type outcome struct {
		res tinypi.AgentRunResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := tinypi.RunAgentLoop(ctx, tinypi.AgentLoopOptions{
			Model: model, Tools: tinypi.MustRegistry(), ExecuteToolCall: execute, Session: session,
			OnEvent: func(e tinypi.LoopEvent) {
				if end, ok := e.(tinypi.ToolEndEvent); ok {
					ends <- end.Result.ToolCallID
				}
			},
		})
		done <- outcome{res, err}
	}()
	var out *outcome
	for turn, perm := range order {
		for _, i := range perm {
			id := batches[turn][i].ID
			close(release[id])
			var got string
			if out == nil {
				select {
				case got = <-ends:
				case o := <-done:
					out = &o
				}
			}
			if out != nil {
				// The run has ended: its last tool_end, if any, is already in the buffer.
				select {
				case got = <-ends:
				default:
					return fmt.Errorf("the run ended (%s, %v) while call %s was due", out.res.Reason, out.err, id)
				}
			}
			if got != id {
				return fmt.Errorf("released %s, the loop reported tool_end of %s", id, got)
			}
		}
	}
	if out == nil {
		o := <-done
		out = &o
	}
	if out.err != nil {
		return fmt.Errorf("RunAgentLoop: %w", out.err)
	}
	res := out.res
	close(startSeen)
	for id := range startSeen {
		startLogged[id] = true
	}
	if res.Reason != tinypi.RunStop {
		return fmt.Errorf("the run ended with %s, want %s", res.Reason, tinypi.RunStop)
	}
	for id := range release {
		if !startLogged[id] {
			return fmt.Errorf("call %s: its body began before its tool/start was in the log", id)
		}
	}

	events := session.Events()
	requests, err := checkLog(events)
	if err != nil {
		return err
	}
	// Tool goroutines log their starts in an order the test does not control: the log without
	// them must be the expected one, and checkLog has already placed each start before its
	// result.
	withoutStarts := slices.DeleteFunc(slices.Clone(events), func(e tinypi.SessionEvent) bool { return e.Type == tinypi.EventToolStart })
	if d := diffEvents(m.events, renumber(withoutStarts)); d != "" {
		return fmt.Errorf("the log without its tool/starts differs from the expected one (-want +got):\n%s", d)
	}
	if starts := len(events) - len(withoutStarts); starts != len(release) {
		return fmt.Errorf("the log holds %d tool/starts, want %d", starts, len(release))
	}
	if d := diffMessages(tinypi.DeriveMessages(events), session.Messages()); d != "" {
		return fmt.Errorf("Messages() differs from DeriveMessages(Events()) (-derived +cached):\n%s", d)
	}
	if d := diffMessages(session.Messages(), res.Messages); d != "" {
		return fmt.Errorf("the run's transcript differs from the session's messages (-session +run):\n%s", d)
	}
	got := model.Requests()
	if len(got) != len(requests) || len(got) != len(wantRequests) {
		return fmt.Errorf("the model got %d requests, the log has %d model/request events, want %d", len(got), len(requests), len(wantRequests))
	}
	for i := range got {
		if d := diffMessages(requests[i], got[i].Messages); d != "" {
			return fmt.Errorf("request %d: the model got other messages than its model/request froze (-frozen +sent):\n%s", i+1, d)
		}
		if d := diffMessages(wantRequests[i], got[i].Messages); d != "" {
			return fmt.Errorf("request %d: the model got other messages than expected (-want +got):\n%s", i+1, d)
		}
	}
	return nil
}

// toolOutput is what the executor returns for call.
func toolOutput(call tinypi.ToolCall) tinypi.ToolResultMessage {
	return tinypi.ToolResultMessage{ToolCallID: call.ID, ToolName: call.Name, Content: []tinypi.ContentBlock{tinypi.Text("ran " + call.ID)}, Timestamp: 7}
}

// renumber returns events whose Seq and seq references are their index in the slice, as if the
// removed events had never been logged.
func renumber(events []tinypi.SessionEvent) []tinypi.SessionEvent {
	newSeq := map[int]int{}
	out := make([]tinypi.SessionEvent, len(events))
	for i, e := range events {
		newSeq[e.Seq] = i
		e.Seq = i
		if e.SourceEventSeqs != nil {
			src := make([]int, len(e.SourceEventSeqs))
			for j, s := range e.SourceEventSeqs {
				src[j] = newSeq[s]
			}
			e.SourceEventSeqs = src
		}
		if e.Type == tinypi.EventModelRequest {
			e.ThroughSeq = i - 1
		}
		out[i] = e
	}
	return out
}
