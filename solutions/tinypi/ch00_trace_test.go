package tinypi

// Focused tests of chapter 00, the prologue. Nothing here is to be written: the tests state what
// a complete run of the finished runtime always looks like, and the lab cards ask questions
// about it.
//
//	go test -run '^TestLab0_1_' .   运行一次完整 trace
//	go test -run '^TestLab0_2_' .   核对配对不变量
//	go test -run '^TestLab0_3_' .   区分事件与消息
//
// go test -run '^TestLab0_1_' . -ch00.update rewrites testdata/readme-trace.golden.

import (
	"bytes"
	"context"
	"flag"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"
)

var ch00Update = flag.Bool("ch00.update", false, "rewrite testdata/readme-trace.golden")

// ch00Trace runs the README round trip through the lab guard: in a practice directory of
// chapter 07 the agent loop's labs may still be stubs, and the test then fails with the
// pending lab's own message instead of a panic that stops the whole run.
func ch00Trace(t *testing.T) Trace {
	t.Helper()
	type outcome struct {
		tr  Trace
		err error
	}
	o := callLab(t, func() outcome {
		tr, err := TraceREADMERoundTrip(context.Background())
		return outcome{tr, err}
	})
	tr, err := o.tr, o.err
	if err != nil {
		t.Fatalf("TraceREADMERoundTrip: %v", err)
	}
	return tr
}

func TestLab0_1_运行Trace(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out bytes.Buffer
	if _, err := ch00Trace(t).WriteTo(&out); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	const golden = "testdata/readme-trace.golden"
	if *ch00Update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("reading %s: %v (run with -ch00.update to create it)", golden, err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("`go run ./cmd/readme-trace` output changed (-golden +now):\n%s", diff)
	}
	// The same run twice prints the same text: the trace is offline and deterministic.
	var again bytes.Buffer
	if _, err := ch00Trace(t).WriteTo(&again); err != nil {
		t.Fatal(err)
	}
	if again.String() != out.String() {
		t.Errorf("two runs printed different traces")
	}
}

func TestLab0_2_配对不变量(t *testing.T) {
	tr := ch00Trace(t)
	messages := tr.Result.Messages
	if unpaired := UnpairedToolCalls(messages); len(unpaired) != 0 {
		t.Errorf("unpaired tool calls %v: every tool call must have a result with the same id", unpaired)
	}
	// Before each request after the first, every call already in the request has its result:
	// the model never sees a dangling call.
	for i, req := range tr.Requests {
		if unpaired := UnpairedToolCalls(req.Messages); len(unpaired) != 0 {
			t.Errorf("request %d carries unpaired tool calls %v", i+1, unpaired)
		}
	}
	// Each result follows the assistant message that made the call, before the next assistant.
	var open []string
	for i, m := range messages {
		switch m := m.(type) {
		case AssistantMessage:
			if len(open) > 0 {
				t.Errorf("message %d: a new assistant message while calls %v are still open", i, open)
			}
			open = nil
			for _, call := range m.ToolCalls() {
				open = append(open, call.ID)
			}
		case ToolResultMessage:
			found := false
			for j, id := range open {
				if id == m.ToolCallID {
					open = append(open[:j], open[j+1:]...)
					found = true
					break
				}
			}
			if !found {
				t.Errorf("message %d: result for %s answers no open call", i, m.ToolCallID)
			}
		}
	}
	// The checker itself: a transcript with a dropped call (seed 002's mistake) is caught.
	broken := []Message{
		UserText("查天气和汇率"),
		AssistantMessage{Content: []ContentBlock{
			ToolCall{ID: "toolu_w1", Name: "get_weather"}, ToolCall{ID: "toolu_f1", Name: "get_fx_rate"},
		}, StopReason: StopReasonToolUse},
		ToolResultMessage{ToolCallID: "toolu_w1", ToolName: "get_weather"},
	}
	if diff := cmp.Diff([]string{"toolu_f1"}, UnpairedToolCalls(broken)); diff != "" {
		t.Errorf("UnpairedToolCalls on a transcript with a dropped call (-want +got):\n%s", diff)
	}
}

func TestLab0_3_事件与消息(t *testing.T) {
	tr := ch00Trace(t)
	var turnEnds, assistantEvents, requestsSeen int
	for i, e := range tr.Events {
		switch e := e.(type) {
		case TurnEndEvent:
			turnEnds++
			if i != len(tr.Events)-1 {
				t.Errorf("turn_end is event %d of %d; it must be the last", i+1, len(tr.Events))
			}
			if e.Reason != tr.Result.Reason || e.Steps != tr.Result.Steps {
				t.Errorf("turn_end %s/%d disagrees with the result %s/%d", e.Reason, e.Steps, tr.Result.Reason, tr.Result.Steps)
			}
		case AssistantMessageEvent:
			assistantEvents++
		case ModelEvent:
			if _, ok := e.Event.(StartEvent); ok {
				requestsSeen++
			}
		}
	}
	if turnEnds != 1 {
		t.Errorf("turn_end events = %d, want 1", turnEnds)
	}
	var assistants int
	for _, m := range tr.Result.Messages {
		if _, ok := m.(AssistantMessage); ok {
			assistants++
		}
	}
	if assistantEvents != assistants {
		t.Errorf("assistant_message events = %d, assistant messages in the transcript = %d: each complete message is appended and announced once", assistantEvents, assistants)
	}
	if len(tr.Requests) != tr.Result.Steps || requestsSeen != tr.Result.Steps {
		t.Errorf("requests = %d, model streams started = %d, steps = %d: they must agree", len(tr.Requests), requestsSeen, tr.Result.Steps)
	}
	// Every request saw a prefix of the final transcript: messages are only ever appended.
	for i, req := range tr.Requests {
		if len(req.Messages) > len(tr.Result.Messages) {
			t.Errorf("request %d has more messages than the transcript", i+1)
			continue
		}
		if diff := cmp.Diff(tr.Result.Messages[:len(req.Messages)], req.Messages, ch00Cmp...); diff != "" {
			t.Errorf("request %d is not a prefix of the transcript (-transcript +request):\n%s", i+1, diff)
		}
	}
	if got, want := roleList(tr.Result.Messages), "user → assistant → toolResult → assistant"; got != want {
		t.Errorf("transcript roles = %s, want %s", got, want)
	}
}

var ch00Cmp = []cmp.Option{cmpopts.IgnoreFields(ToolResultMessage{}, "Timestamp")}
