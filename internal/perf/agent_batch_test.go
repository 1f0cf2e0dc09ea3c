package perf

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/learn-tinypi/course/internal/hang"
	"github.com/learn-tinypi/course/solutions/tinypi"
)

// The Agent hands its state over to ReduceAgentState, which then grows the pending calls and the
// transcript in place (issue 36 item 14). A batch whose calls end out of order (middle, front,
// back) still leaves exactly the calls that have not ended, in start order, and the run's state
// is what the pure reducer folds from the same events.
func TestAgentInPlaceBatchKeepsPendingCalls(t *testing.T) {
	const k = 5
	started := make(chan int, k)
	release := make([]chan struct{}, k)
	for i := range release {
		release[i] = make(chan struct{})
	}
	wait := tinypi.Tool{
		ToolDefinition: tinypi.ToolDefinition{Name: "wait", Description: "waits to be released", Parameters: numberSchema},
		Execute: func(ctx context.Context, args json.RawMessage, _ tinypi.ToolExecContext) (tinypi.ToolOutput, error) {
			var a struct{ N int }
			if err := json.Unmarshal(args, &a); err != nil {
				return tinypi.ToolOutput{}, err
			}
			started <- a.N
			select {
			case <-release[a.N]:
			case <-ctx.Done():
			}
			return tinypi.ToolOutput{Content: []tinypi.ContentBlock{tinypi.Text(fmt.Sprint("done ", a.N))}}, nil
		},
	}
	agent, err := tinypi.NewAgent(tinypi.AgentOptions{Model: &turnModel{script: fanoutScript(k, "wait"), chunks: 1}, Tools: tinypi.MustRegistry(wait)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []tinypi.AgentEvent
	ended := make(chan string, k)
	agent.Subscribe(func(e tinypi.AgentEvent) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
		if le, ok := e.(tinypi.RunLoopEvent); ok {
			if end, ok := le.Event.(tinypi.ToolEndEvent); ok {
				ended <- end.Result.ToolCallID
			}
		}
	})
	released := make([]bool, k)
	t.Cleanup(func() {
		for i, done := range released {
			if !done {
				close(release[i])
			}
		}
		agent.Abort()
		hang.Within(t, 10*time.Second, "Agent.WaitForIdle", func(ctx context.Context) error { return agent.WaitForIdle(ctx) })
	})
	if err := agent.Prompt(context.Background(), tinypi.UserText("go")); err != nil {
		t.Fatal(err)
	}
	receive := func(what string, c <-chan int) int {
		t.Helper()
		select {
		case v := <-c:
			return v
		case <-time.After(hang.Bound(10 * time.Second)):
			t.Fatalf("%s did not happen", what)
			return 0
		}
	}
	for range k {
		receive("every call's body starting", started)
	}
	pending := func() []string {
		var ids []string
		for _, c := range agent.State().PendingToolCalls {
			ids = append(ids, c.ID)
		}
		return ids
	}
	if got, want := pending(), []string{"call-0", "call-1", "call-2", "call-3", "call-4"}; !slices.Equal(got, want) {
		t.Fatalf("while every call runs: pending calls %q, want %q", got, want)
	}
	for _, step := range []struct {
		end  int
		want []string
	}{
		{2, []string{"call-0", "call-1", "call-3", "call-4"}},
		{0, []string{"call-1", "call-3", "call-4"}},
		{4, []string{"call-1", "call-3"}},
		{3, []string{"call-1"}},
		{1, nil},
	} {
		close(release[step.end])
		released[step.end] = true
		select {
		case id := <-ended:
			if want := fmt.Sprint("call-", step.end); id != want {
				t.Fatalf("tool_end of %s, want %s (only it was released)", id, want)
			}
		case <-time.After(hang.Bound(10 * time.Second)):
			t.Fatalf("no tool_end after call-%d was released", step.end)
		}
		if got := pending(); !slices.Equal(got, step.want) {
			t.Errorf("after call-%d ended: pending calls %q, want %q", step.end, got, step.want)
		}
	}
	hang.Within(t, 10*time.Second, "Agent.WaitForIdle", func(ctx context.Context) error { return agent.WaitForIdle(ctx) })

	got := agent.State()
	mu.Lock()
	var folded tinypi.AgentState
	for _, e := range events {
		folded = tinypi.ReduceAgentState(folded, e)
	}
	mu.Unlock()
	if diff := cmp.Diff(folded.Messages, got.Messages); diff != "" {
		t.Errorf("the agent's transcript differs from the pure reducer's over the same events (-pure +agent):\n%s", diff)
	}
	if len(got.Messages) != 2+k+1 {
		t.Errorf("transcript of %d messages, want %d (prompt, the calls, %d results, the answer)", len(got.Messages), 2+k+1, k)
	}
	if got.Running || got.Streaming != nil || got.PendingToolCalls != nil {
		t.Errorf("after the run: running %v, streaming %v, pending %v; want false, nil, nil", got.Running, got.Streaming, got.PendingToolCalls)
	}
}

// allocatedByBatch returns the bytes allocated by one Agent run whose model asks for k parallel
// calls of a tool that answers at once, in one message.
func allocatedByBatch(t *testing.T, k int) uint64 {
	t.Helper()
	agent, err := tinypi.NewAgent(tinypi.AgentOptions{Model: &turnModel{script: fanoutScript(k, "noop"), chunks: 1},
		Tools: tinypi.MustRegistry(okTool("noop", nil))})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := agent.Prompt(context.Background(), tinypi.UserText("go")); err != nil {
		t.Fatal(err)
	}
	hang.Within(t, 20*time.Second, "Agent.WaitForIdle", func(ctx context.Context) error { return agent.WaitForIdle(ctx) })
	runtime.ReadMemStats(&after)
	if st := agent.State(); st.LastError != "" || len(st.Messages) != 2+k+1 {
		t.Fatalf("the run of %d calls ended with %q and %d messages, want no error and %d", k, st.LastError, len(st.Messages), 2+k+1)
	}
	return after.TotalAlloc - before.TotalAlloc
}

// One message with 4x the parallel calls allocates about 4x as much, not 16x: the Agent's path
// (loop, events, reducer) is linear in the batch. Bytes, not time, so that a busy machine does
// not change the verdict.
func TestAgentBatchIsLinear(t *testing.T) {
	small, large := allocatedByBatch(t, 50), allocatedByBatch(t, 200)
	t.Logf("50 calls: %d B, 200 calls: %d B, %.2fx", small, large, float64(large)/float64(small))
	if ratio := float64(large) / float64(small); ratio > 7 {
		t.Errorf("a batch of 200 calls allocated %d bytes, %.1fx the %d of 50 calls; want about 4x (linear), at most 7x", large, ratio, small)
	}
}
