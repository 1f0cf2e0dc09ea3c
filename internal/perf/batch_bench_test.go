package perf

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	for _, k := range []int{1000, 2000, 4000, 8000} {
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
