package perf

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// One op of a loop benchmark is one whole run; the extra metric divides it by the unit of the
// shared harness (../shared/bench/peer.sh): ns per step, per call or per delta.

func reportPer(b *testing.B, unit string, units int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(units), "ns/"+unit)
}

// BenchmarkLoopSteps: n model turns with one validated tool call each, then a text answer.
func BenchmarkLoopSteps(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			script, registry := stepsScript(n, "noop"), tinypi.MustRegistry(okTool("noop", nil))
			b.ReportAllocs()
			for b.Loop() {
				if err := runLoop(&turnModel{script: script, chunks: 1}, registry, n+1, 2*n+2); err != nil {
					b.Fatal(err)
				}
			}
			reportPer(b, "step", n+1)
		})
	}
}

// BenchmarkLoopFanout: one turn with k calls that each sleep 20 ms, run concurrently. The time
// above 20 ms per op is the loop's overhead for the batch.
func BenchmarkLoopFanout(b *testing.B) {
	for _, k := range []int{256, 1000} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			script := fanoutScript(k, "sleep")
			registry := tinypi.MustRegistry(okTool("sleep", func() { time.Sleep(20 * time.Millisecond) }))
			b.ReportAllocs()
			for b.Loop() {
				if err := runLoop(&turnModel{script: script, chunks: 1}, registry, 2, k+3); err != nil {
					b.Fatal(err)
				}
			}
			reportPer(b, "call", k)
		})
	}
}

// BenchmarkLoopHooks: one turn with k calls of a tool that returns at once, with every hook of
// chapter 12 set to one that does nothing (BeforeToolCall allows, AfterToolCall overrides
// nothing; TransformContext hands its messages back and ShouldStopAfterTurn says go on, once per
// turn), against the same run without hooks. The difference in ns/call is what the hooks cost a
// call.
func BenchmarkLoopHooks(b *testing.B) {
	const k = 1000
	allow := &tinypi.LoopHooks{
		TransformContext: func(_ context.Context, m []tinypi.Message) ([]tinypi.Message, error) { return m, nil },
		BeforeToolCall: func(context.Context, tinypi.ToolCall, json.RawMessage) (tinypi.ToolCallDecision, error) {
			return tinypi.ToolCallDecision{}, nil
		},
		AfterToolCall: func(context.Context, tinypi.ToolCall, tinypi.ToolCallOutcome) (tinypi.ToolResultOverride, error) {
			return tinypi.ToolResultOverride{}, nil
		},
		ShouldStopAfterTurn: func(context.Context, tinypi.TurnSummary) bool { return false },
	}
	for _, tc := range []struct {
		name  string
		hooks *tinypi.LoopHooks
	}{{"none", nil}, {"all", allow}} {
		b.Run("hooks="+tc.name, func(b *testing.B) {
			script, registry := fanoutScript(k, "noop"), tinypi.MustRegistry(okTool("noop", nil))
			b.ReportAllocs()
			for b.Loop() {
				if err := runLoopWith(&turnModel{script: script, chunks: 1}, registry, tc.hooks, 2, k+3); err != nil {
					b.Fatal(err)
				}
			}
			reportPer(b, "call", k)
		})
	}
}

// BenchmarkLoopDeltas: one answer whose text arrives as d one-byte deltas; ns/delta must stay
// flat as d grows.
func BenchmarkLoopDeltas(b *testing.B) {
	for _, d := range []int{10000, 100000, 1000000} {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			script := deltasScript(d)
			registry := tinypi.MustRegistry()
			b.ReportAllocs()
			for b.Loop() {
				if err := runLoop(&turnModel{script: script, chunks: d}, registry, 1, 2); err != nil {
					b.Fatal(err)
				}
			}
			reportPer(b, "delta", d)
		})
	}
}

// BenchmarkStream: n events through an EventStream, pushed by one goroutine and read by
// readers others (every reader sees every event).
func BenchmarkStream(b *testing.B) {
	const n = 10000
	for _, readers := range []int{1, 4} {
		b.Run(fmt.Sprintf("events=%d,readers=%d", n, readers), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := tinypi.NewEventStream(func(e int) (int, bool) { return e, e == n-1 })
				done := make(chan int, readers)
				for range readers {
					go func() {
						seen := 0
						for range s.All() {
							seen++
						}
						done <- seen
					}()
				}
				for i := range n {
					s.Push(i)
				}
				s.Close()
				for range readers {
					if seen := <-done; seen != n {
						b.Fatalf("a reader saw %d events, want %d", seen, n)
					}
				}
			}
			reportPer(b, "event", n)
		})
	}
}

// BenchmarkValidateArguments: the schema check every tool call pays before its tool runs.
func BenchmarkValidateArguments(b *testing.B) {
	registry := tinypi.MustRegistry(okTool("noop", nil))
	for _, tc := range []struct{ name, args string }{
		{"valid", `{"n":1}`},
		{"schema-error", `{"n":"one"}`},
		{"broken-json", `{"n":1`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			wantErr := tc.name != "valid"
			b.ReportAllocs()
			for b.Loop() {
				if err := registry.ValidateArguments("noop", tc.args); (err != nil) != wantErr {
					b.Fatalf("ValidateArguments(%q): error %v, want an error: %v", tc.args, err, wantErr)
				}
			}
		})
	}
}

// BenchmarkScriptedModel: a run of n steps against the recording test double. ns/step must
// stay flat as n grows (it grew with n while every request was copied whole).
func BenchmarkScriptedModel(b *testing.B) {
	for _, n := range []int{500, 2000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			script, registry := stepsScript(n, "noop"), tinypi.MustRegistry(okTool("noop", nil))
			b.ReportAllocs()
			for b.Loop() {
				model := tinypi.NewScriptedModel(script...)
				if err := runLoop(model, registry, n+1, 2*n+2); err != nil {
					b.Fatal(err)
				}
			}
			reportPer(b, "step", n+1)
		})
	}
}

// fixtures returns the recorded SSE responses of solutions/tinypi/testdata/sse by name.
func fixtures(b *testing.B) map[string][]byte {
	b.Helper()
	paths, err := filepath.Glob("../../solutions/tinypi/testdata/sse/*.sse")
	if err != nil || len(paths) == 0 {
		b.Fatalf("no SSE fixtures found (%v)", err)
	}
	out := make(map[string][]byte, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".sse")] = data
	}
	return out
}

// BenchmarkReadSSE: the SSE frames of every recorded response, decoded by ReadSSE.
func BenchmarkReadSSE(b *testing.B) {
	all := fixtures(b)
	var total int
	for _, data := range all {
		total += len(data)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for name, data := range all {
			for _, err := range tinypi.ReadSSE(bytes.NewReader(data)) {
				if err != nil {
					b.Fatalf("%s: %v", name, err)
				}
			}
		}
	}
}

// replay is an http.RoundTripper that answers every request with one recorded SSE body.
type replay []byte

func (r replay) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(r)), Request: req}, nil
}

// BenchmarkProviderDecode: each recorded response streamed through its provider's Model (the
// request encoded, the SSE decoded and assembled into events and a message), without a network.
func BenchmarkProviderDecode(b *testing.B) {
	all := fixtures(b)
	for _, name := range []string{"openai_chat_parallel_tool_calls", "anthropic_parallel_tool_use_with_text"} {
		data, ok := all[name]
		if !ok {
			b.Fatalf("fixture %s.sse is missing", name)
		}
		api := tinypi.APIOpenAI
		if strings.HasPrefix(name, "anthropic") {
			api = tinypi.APIAnthropic
		}
		b.Run(name, func(b *testing.B) {
			model, err := tinypi.NewProvider(tinypi.ProviderConfig{API: api, BaseURL: "http://replay.invalid",
				APIKey: "k", Model: "m", HTTPClient: &http.Client{Transport: replay(data)}})
			if err != nil {
				b.Fatal(err)
			}
			req := tinypi.Request{Messages: []tinypi.Message{tinypi.UserText("hi")}}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				s := model.Stream(context.Background(), req)
				for range s.All() {
				}
				if _, err := s.Result(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
