package perf

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// drain reads a stream to its end.
func drain(t *testing.T, s *tinypi.AssistantStream) {
	t.Helper()
	for range s.All() {
	}
	if _, err := s.Result(); err != nil {
		t.Fatalf("stream failed: %v", err)
	}
}

func userText(i int) tinypi.Message { return tinypi.UserText(fmt.Sprint("message ", i)) }

// growingTranscript sends n requests over one transcript that grows by append, as the agent
// loop sends its own, and returns the model and what each request held when it was sent (built
// independently of the model, from the same inputs).
func growingTranscript(t *testing.T, n int) (*tinypi.ScriptedModel, [][]tinypi.Message) {
	script := make([]tinypi.AssistantMessage, n)
	for i := range script {
		script[i] = tinypi.AssistantMessage{StopReason: tinypi.StopReasonStop}
	}
	m := tinypi.NewScriptedModel(script...)
	var transcript []tinypi.Message
	want := make([][]tinypi.Message, n)
	for i := range n {
		transcript = append(transcript, userText(i))
		want[i] = make([]tinypi.Message, i+1)
		for j := range want[i] {
			want[i][j] = userText(j)
		}
		drain(t, m.Stream(context.Background(), tinypi.Request{Messages: transcript[:len(transcript):len(transcript)]}))
	}
	return m, want
}

// The records of a growing transcript share copies of its earlier messages; each record is
// still exactly the request as it was sent, and neither the caller's later changes nor a change
// to what Requests returned reaches it.
func TestScriptedModelGrowingTranscriptRecordedExactly(t *testing.T) {
	const n = 40
	m, want := growingTranscript(t, n)
	got := m.Requests()
	if len(got) != n {
		t.Fatalf("Requests() holds %d requests, want %d", len(got), n)
	}
	for i := range n {
		if diff := cmp.Diff(want[i], got[i].Messages); diff != "" {
			t.Fatalf("request %d (-sent +recorded):\n%s", i+1, diff)
		}
	}
	// Whoever reads the records may change them, also by appending to an early one.
	got[0].Messages[0] = tinypi.UserText("changed")
	got[0].Messages = append(got[0].Messages, tinypi.UserText("appended"))
	got[0].Messages[0].(tinypi.UserMessage).Content[0] = tinypi.Text("changed in place")
	again := m.Requests()
	for i := range n {
		if diff := cmp.Diff(want[i], again[i].Messages); diff != "" {
			t.Fatalf("after changing what Requests() returned, request %d changed (-sent +recorded):\n%s", i+1, diff)
		}
	}
}

// A request in a new slice is recorded as it is, even when it is as long as the previous one
// and its first messages differ: only a slice that grew in place shares earlier copies.
func TestScriptedModelUnrelatedRequestsCopiedWhole(t *testing.T) {
	m := tinypi.NewScriptedModel(
		tinypi.AssistantMessage{StopReason: tinypi.StopReasonStop},
		tinypi.AssistantMessage{StopReason: tinypi.StopReasonStop},
		tinypi.AssistantMessage{StopReason: tinypi.StopReasonStop},
	)
	first := []tinypi.Message{userText(1), userText(2)}
	second := []tinypi.Message{userText(3), userText(4), userText(5)}
	drain(t, m.Stream(context.Background(), tinypi.Request{Messages: first}))
	drain(t, m.Stream(context.Background(), tinypi.Request{Messages: second}))
	// A shorter view of the first slice: not an extension of the previous request.
	drain(t, m.Stream(context.Background(), tinypi.Request{Messages: first[:1]}))
	first[0] = tinypi.UserText("changed after the calls")
	want := [][]tinypi.Message{{userText(1), userText(2)}, {userText(3), userText(4), userText(5)}, {userText(1)}}
	got := m.Requests()
	for i := range want {
		if diff := cmp.Diff(want[i], got[i].Messages); diff != "" {
			t.Errorf("request %d (-sent +recorded):\n%s", i+1, diff)
		}
	}
}

// Recording a request of a growing transcript allocates for the new message only: the
// allocations of one more request do not depend on how long the transcript already is.
func TestScriptedModelRecordingIsLinear(t *testing.T) {
	allocsAt := func(length int) float64 {
		script := make([]tinypi.AssistantMessage, length+200)
		for i := range script {
			script[i] = tinypi.AssistantMessage{StopReason: tinypi.StopReasonStop}
		}
		m := tinypi.NewScriptedModel(script...)
		// Room for every message up front, so that the transcript never moves and each request
		// extends the previous one in place.
		transcript := make([]tinypi.Message, 0, length+200)
		for i := range length {
			transcript = append(transcript, userText(i))
		}
		drain(t, m.Stream(context.Background(), tinypi.Request{Messages: transcript}))
		msg := userText(-1)
		return testing.AllocsPerRun(100, func() {
			transcript = append(transcript, msg)
			for range m.Stream(context.Background(), tinypi.Request{Messages: transcript}).All() {
			}
		})
	}
	short, long := allocsAt(10), allocsAt(2000)
	if long > short+1 {
		t.Errorf("one more request costs %.0f allocations after 2000 messages and %.0f after 10: recording copies the whole transcript", long, short)
	}
}
