package perf

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// readBatchScript is one assistant message with k parallel read calls of one small file, then
// a text answer: the shape of a model that reads a whole tree at once.
func readBatchScript(k int) []tinypi.AssistantMessage {
	calls := make([]tinypi.ContentBlock, k)
	for i := range calls {
		calls[i] = tinypi.ToolCall{ID: fmt.Sprintf("call-%d", i), Name: "read", Arguments: `{"path":"a.txt"}`}
	}
	return []tinypi.AssistantMessage{answer(tinypi.StopReasonToolUse, calls...), answer(tinypi.StopReasonStop, tinypi.Text("done"))}
}

// BenchmarkBatchReads: one run of a runtime (workspace, session file, print mode) whose model
// asks for k parallel reads in one message. At 1x and 4x the calls, ns/call stays flat when the
// batch path is linear.
func BenchmarkBatchReads(b *testing.B) {
	for _, k := range []int{1000, 4000} {
		b.Run(fmt.Sprintf("calls=%d", k), func(b *testing.B) {
			dir := b.TempDir()
			ws := filepath.Join(dir, "ws")
			if err := os.MkdirAll(ws, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			script := readBatchScript(k)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				s, err := tinypi.CreateSession(tinypi.SessionOptions{Path: filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i)), ID: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				rt, err := tinypi.NewRuntime(tinypi.RuntimeOptions{Model: &turnModel{script: script, chunks: 1}, Workspace: ws, ContextRoot: ws, Session: s, MaxSteps: 3})
				if err != nil {
					b.Fatal(err)
				}
				if code := tinypi.RunPrintMode(context.Background(), rt, "read it all", io.Discard, io.Discard); code != tinypi.ExitOK {
					b.Fatalf("exit %d", code)
				}
				if err := rt.Close(); err != nil {
					b.Fatal(err)
				}
			}
			reportPer(b, "call", k)
		})
	}
}

// allocatedToBatch returns the bytes allocated by one Agent run whose model asks for k parallel
// calls of a tool that answers at once, in one message.
func allocatedToBatch(t *testing.T, k int) uint64 {
	t.Helper()
	agent, err := tinypi.NewAgent(tinypi.AgentOptions{SystemPrompt: "bench", Model: &turnModel{script: fanoutScript(k, "noop"), chunks: 1},
		Tools: tinypi.MustRegistry(okTool("noop", nil))})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := agent.Prompt(context.Background(), tinypi.UserText("go")); err != nil {
		t.Fatal(err)
	}
	if err := agent.WaitForIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if st := agent.State(); len(st.Messages) != k+3 || st.LastError != "" {
		t.Fatalf("the run of %d calls ended with %d messages (%q); want %d", k, len(st.Messages), st.LastError, k+3)
	}
	return after.TotalAlloc - before.TotalAlloc
}

// One message with k parallel calls costs the Agent O(k) (issue 36): four times the calls
// allocate about four times the bytes. The Agent's state used to be rebuilt by the pure reducer
// at every tool event, copying the transcript and the pending calls each time: 1,000 calls
// through a runtime allocated 181 MB and 4,000 1.73 GB (9.5 times). Allocations, unlike times,
// do not depend on the machine's load.
func TestAgentBatchIsLinear(t *testing.T) {
	small, large := allocatedToBatch(t, 1000), allocatedToBatch(t, 4000)
	ratio := float64(large) / float64(small)
	t.Logf("1,000 calls: %d bytes allocated; 4,000 calls: %d (×%.2f)", small, large, ratio)
	if ratio > 5 {
		t.Errorf("4,000 calls allocate %.2f times what 1,000 do: the batch path is not linear", ratio)
	}
}
