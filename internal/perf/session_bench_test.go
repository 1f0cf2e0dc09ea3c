package perf

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// The session log's costs (chapter 10): an append in memory, the commit cursor over a batch
// whose calls finish in reverse order, the flush barrier on a real file, loading a long log, and
// the loop with a session against the loop without one.

// fixedNow keeps time.Now out of what is measured and makes encoded lines the same length.
func fixedNow() time.Time { return time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC) }

func benchUser(i int) tinypi.UserMessage {
	return tinypi.UserMessage{Content: []tinypi.ContentBlock{tinypi.Text(fmt.Sprintf("message %d", i))}}
}

// BenchmarkSessionAppend: n user messages appended to a session in memory; ns/event is the cost
// of one Append (validation, seq, deep copy) and must stay flat as n grows.
func BenchmarkSessionAppend(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			msgs := make([]tinypi.UserMessage, n)
			for i := range msgs {
				msgs[i] = benchUser(i)
			}
			b.ReportAllocs()
			for b.Loop() {
				s := tinypi.NewSession("bench")
				for _, m := range msgs {
					if _, err := s.AppendMessage(m); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportPer(b, "event", n)
		})
	}
}

// BenchmarkSessionCommit: a batch of k calls logged, then finished last call first, so the
// commit cursor passes the whole batch on the final Finish; ns/call covers the tool/call, the
// held result and its tool/result.
func BenchmarkSessionCommit(b *testing.B) {
	for _, k := range []int{16, 1000} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			calls := make([]tinypi.ToolCall, k)
			for i := range calls {
				calls[i] = tinypi.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "noop", Arguments: `{"n":1}`}
			}
			result := tinypi.ToolResultMessage{Content: []tinypi.ContentBlock{tinypi.Text("ok")}}
			b.ReportAllocs()
			for b.Loop() {
				s := tinypi.NewSession("bench")
				batch, err := s.BeginToolBatch(calls)
				if err != nil {
					b.Fatal(err)
				}
				for i := k - 1; i >= 0; i-- {
					if _, err := batch.Finish(i, result); err != nil {
						b.Fatal(err)
					}
				}
				if batch.Committed() != k {
					b.Fatalf("committed %d of %d", batch.Committed(), k)
				}
			}
			reportPer(b, "call", k)
		})
	}
}

// BenchmarkSessionFlush: one event appended to a session with a file, then the barrier: the
// latency a model request or a tool body waits for (a write to the file, no fsync).
func BenchmarkSessionFlush(b *testing.B) {
	s, err := tinypi.CreateSession(tinypi.SessionOptions{ID: "bench",
		Path: filepath.Join(b.TempDir(), "s.jsonl"), Now: fixedNow})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	m := benchUser(0)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.AppendMessage(m); err != nil {
			b.Fatal(err)
		}
		if err := s.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSessionLoad: LoadSession of a log of n events that needs no repair (parse, check
// every event, attach the writer); ns/event must stay flat as n grows.
func BenchmarkSessionLoad(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "s.jsonl")
			s, err := tinypi.CreateSession(tinypi.SessionOptions{ID: "bench", Path: path, Now: fixedNow})
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				var m tinypi.Message = benchUser(i)
				if i%2 == 1 {
					m = tinypi.AssistantMessage{Content: []tinypi.ContentBlock{tinypi.Text("ok")}, StopReason: tinypi.StopReasonStop}
				}
				if _, err := s.AppendMessage(m); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				loaded, repair, err := tinypi.LoadSession(path, tinypi.SessionOptions{Now: fixedNow})
				if err != nil {
					b.Fatal(err)
				}
				if loaded.Len() != n || repair.TornBytes != 0 || len(repair.Appended) != 0 {
					b.Fatalf("loaded %d events (repair %+v), want %d untouched", loaded.Len(), repair, n)
				}
				if err := loaded.Close(); err != nil {
					b.Fatal(err)
				}
			}
			reportPer(b, "event", n)
		})
	}
}

// BenchmarkLoopStepsSession: BenchmarkLoopSteps with a session in memory as the loop's log, so
// that the difference between the two is what logging costs per step.
func BenchmarkLoopStepsSession(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			script, registry := stepsScript(n, "noop"), tinypi.MustRegistry(okTool("noop", nil))
			b.ReportAllocs()
			for b.Loop() {
				s := tinypi.NewSession("bench")
				if _, err := s.AppendMessage(benchUser(0)); err != nil {
					b.Fatal(err)
				}
				res, err := tinypi.RunAgentLoop(context.Background(), tinypi.AgentLoopOptions{
					Context:  tinypi.AgentContext{SystemPrompt: "bench"},
					Session:  s,
					Model:    &turnModel{script: script, chunks: 1},
					Tools:    registry,
					MaxSteps: n + 1,
				})
				if err != nil {
					b.Fatal(err)
				}
				if res.Reason != tinypi.RunStop || len(s.Messages()) != 2*n+2 {
					b.Fatalf("run ended %s with %d logged messages, want stop with %d", res.Reason, len(s.Messages()), 2*n+2)
				}
			}
			reportPer(b, "step", n+1)
		})
	}
}

// compactionLog is a session of turns*4 messages: each turn a prompt, an assistant asking to read
// a file, the result and an answer, framed as the loop logs them.
func compactionLog(b *testing.B, turns int) *tinypi.Session {
	b.Helper()
	s := tinypi.NewSession("bench")
	must := func(_ int, err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	for i := range turns {
		call := tinypi.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "read", Arguments: fmt.Sprintf(`{"path":"f%d.go"}`, i%50)}
		must(s.AppendMessage(benchUser(i)))
		must(s.Append(tinypi.SessionEvent{Type: tinypi.EventTurnStart, Turn: 1}))
		must(s.AppendMessage(tinypi.AssistantMessage{Content: []tinypi.ContentBlock{call}, StopReason: tinypi.StopReasonToolUse}))
		batch, err := s.BeginToolBatch([]tinypi.ToolCall{call})
		must(0, err)
		_, err = batch.Finish(0, tinypi.ToolResultMessage{Content: []tinypi.ContentBlock{tinypi.Text("package f")}})
		must(0, err)
		must(s.Append(tinypi.SessionEvent{Type: tinypi.EventTurnEnd, Turn: 1, Reason: "toolUse"}))
		must(s.Append(tinypi.SessionEvent{Type: tinypi.EventTurnStart, Turn: 2}))
		must(s.AppendMessage(tinypi.AssistantMessage{Content: []tinypi.ContentBlock{tinypi.Text("done")}, StopReason: tinypi.StopReasonStop}))
		must(s.Append(tinypi.SessionEvent{Type: tinypi.EventTurnEnd, Turn: 2, Reason: "stop"}))
	}
	return s
}

// BenchmarkSessionCompact: one compaction of a session of 10,000 messages (chapter 11) with a
// scripted summary model: choosing the cut, the files touched, the summary request's messages,
// logging the compaction and deriving the next request from it. The session is built outside
// the timer.
func BenchmarkSessionCompact(b *testing.B) {
	const turns = 2500 // 10,000 messages
	answer := tinypi.AssistantMessage{Content: []tinypi.ContentBlock{tinypi.Text("summary")}, StopReason: tinypi.StopReasonStop}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s := compactionLog(b, turns)
		opts := tinypi.CompactionOptions{Model: tinypi.NewScriptedModel(answer), KeepRecentTokens: 2000}
		b.StartTimer()
		if _, err := s.Compact(context.Background(), opts, tinypi.CompactionManual); err != nil {
			b.Fatal(err)
		}
		_ = s.Messages()
	}
	reportPer(b, "message", turns*4)
}
