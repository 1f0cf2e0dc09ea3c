package perf

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// Chapter 13's proxy: one model's stream read directly, and the same stream relayed by
// NewProxyHandler in an httptest server on the loopback and read back by ProxyModel. What the
// proxy costs is the difference: per event a JSON encoding, a flushed write, an SSE frame read
// and decoded and the event pushed again; per request an HTTP round trip. Every benchmark
// checks, once its servers are closed, that no goroutine of the run is left behind.

// proxyToken is the bearer token of every benchmark proxy.
const proxyToken = "bench-token"

// proxyDeltas is the number of text deltas of the synthetic stream: enough for the cost per
// event to outweigh the cost per request.
const proxyDeltas = 1000

// proxyRecording is the recorded response the proxy relays: the longest recording that ends
// with done, with thinking, text and tool call deltas and two toolcall_end events.
const proxyRecording = "openai_compat_deepseek_parallel_tool_calls_reasoning"

// proxyRequest is the request of every benchmark stream.
var proxyRequest = tinypi.Request{SystemPrompt: "bench", Messages: []tinypi.Message{tinypi.UserText("hi")}}

// repeatModel answers every request with msg, pushed by pushTurn from a goroutine with chunks
// deltas per text block: turnModel without a script's end, since a proxy's handler asks its
// one model once per op.
type repeatModel struct {
	msg    tinypi.AssistantMessage
	chunks int
}

func (m repeatModel) Stream(context.Context, tinypi.Request) *tinypi.AssistantStream {
	s := tinypi.NewAssistantStream()
	go pushTurn(s, m.msg, m.chunks)
	return s
}

// proxyStreamCases are the streams measured directly and through the proxy: proxyDeltas
// one-byte text deltas from a model that pushes them as fast as it can, and proxyRecording
// decoded by its provider from memory (the replay transport), so that the upstream costs
// nothing that both paths would share.
var proxyStreamCases = []struct {
	name  string
	model func(*testing.B) tinypi.Model
}{
	{fmt.Sprintf("deltas=%d", proxyDeltas), func(*testing.B) tinypi.Model {
		return repeatModel{msg: deltasScript(proxyDeltas)[0], chunks: proxyDeltas}
	}},
	{proxyRecording, func(b *testing.B) tinypi.Model {
		data, ok := fixtures(b)[proxyRecording]
		if !ok {
			b.Fatalf("fixture %s.sse is missing", proxyRecording)
		}
		model, err := tinypi.NewProvider(tinypi.ProviderConfig{API: tinypi.APIOpenAI, BaseURL: "http://replay.invalid",
			APIKey: "k", Model: "m", HTTPClient: &http.Client{Transport: replay(data)}})
		if err != nil {
			b.Fatal(err)
		}
		return model
	}},
}

// noGoroutineLeaks makes b fail if a goroutine started after this call still runs once b's
// later cleanups (closing its servers) have run. goleak retries for a while, so goroutines
// that are on their way out do not count.
func noGoroutineLeaks(b *testing.B) {
	b.Helper()
	current := goleak.IgnoreCurrent()
	b.Cleanup(func() { goleak.VerifyNone(b, current) })
}

// startProxy serves model through NewProxyHandler on an httptest server (127.0.0.1, a loopback
// Host as the handler requires) until b's cleanup, and returns the ProxyModel that reads it and
// the number of connections the server has accepted so far.
func startProxy(b *testing.B, model tinypi.Model) (*tinypi.ProxyModel, *atomic.Int64) {
	b.Helper()
	h, err := tinypi.NewProxyHandler(model, tinypi.ProxyServerOptions{Token: proxyToken})
	if err != nil {
		b.Fatal(err)
	}
	conns := new(atomic.Int64)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	b.Cleanup(srv.Close) // waits for the handlers, closes the client's idle connections
	return &tinypi.ProxyModel{URL: srv.URL, Token: proxyToken, Client: srv.Client()}, conns
}

// readStream reads one stream of model to its end and returns its number of events and its
// message, failing b unless it ended with done.
func readStream(b *testing.B, model tinypi.Model) (int, tinypi.AssistantMessage) {
	s := model.Stream(context.Background(), proxyRequest)
	events := 0
	for range s.All() {
		events++
	}
	msg, err := s.Result()
	if err != nil {
		b.Fatal(err)
	}
	if msg.StopReason == tinypi.StopReasonError || msg.StopReason == tinypi.StopReasonAborted {
		b.Fatalf("the stream ended with %s: %s", msg.StopReason, msg.ErrorMessage)
	}
	return events, msg
}

// reportEvents reports the events per second of b's ops, events events each, and the time per
// event.
func reportEvents(b *testing.B, events int) {
	b.ReportMetric(float64(b.N)*float64(events)/b.Elapsed().Seconds(), "events/s")
	reportPer(b, "event", events)
}

// BenchmarkProxyStreamDirect: each stream of proxyStreamCases read from its model, as a
// program that holds the provider's key reads it. This is the baseline of
// BenchmarkProxyStreamThroughProxy: the same events, without the proxy.
func BenchmarkProxyStreamDirect(b *testing.B) {
	for _, c := range proxyStreamCases {
		b.Run(c.name, func(b *testing.B) {
			noGoroutineLeaks(b)
			model := c.model(b)
			events, _ := readStream(b, model)
			b.ReportAllocs()
			for b.Loop() {
				if got, _ := readStream(b, model); got != events {
					b.Fatalf("%d events, want %d", got, events)
				}
			}
			reportEvents(b, events)
		})
	}
}

// BenchmarkProxyStreamThroughProxy: the streams of BenchmarkProxyStreamDirect, each relayed by
// NewProxyHandler on a loopback httptest server and read by ProxyModel, whose message must be
// the model's own. Against the direct figures, events/s and ns/event say what the proxy costs a
// stream: for the synthetic deltas mostly the cost per event, for the short recording the cost
// per request too. conns/op counts the TCP connections the server accepted per stream:
// ProxyModel closes the body at the terminal event, and its client keeps the connection for the
// next request only when the end of the chunked body had already been read by then.
func BenchmarkProxyStreamThroughProxy(b *testing.B) {
	for _, c := range proxyStreamCases {
		b.Run(c.name, func(b *testing.B) {
			noGoroutineLeaks(b)
			model := c.model(b)
			events, want := readStream(b, model)
			proxy, conns := startProxy(b, model)
			got, msg := readStream(b, proxy)
			want.Timestamp = msg.Timestamp // a provider stamps each message with its own time
			if got != events || !cmp.Equal(msg, want) {
				b.Fatalf("through the proxy: %d events, want %d; message (-direct +proxy):\n%s", got, events, cmp.Diff(want, msg))
			}
			before := conns.Load()
			b.ReportAllocs()
			for b.Loop() {
				if got, _ := readStream(b, proxy); got != events {
					b.Fatalf("%d events, want %d", got, events)
				}
			}
			reportEvents(b, events)
			b.ReportMetric(float64(conns.Load()-before)/float64(b.N), "conns/op")
		})
	}
}

// pingPongModel streams start, rounds+1 one-byte text deltas and done, and pushes each delta
// after the first only once the reader has acknowledged the previous one on ack: one event in
// flight at a time, so that how long a reader waits for an event is the path's latency, not its
// throughput. It gives up when the request's context ends (the proxy's client went away).
type pingPongModel struct {
	rounds int
	ack    chan struct{} // capacity 1: the reader never waits for the model to take an ack
}

func (m *pingPongModel) Stream(ctx context.Context, _ tinypi.Request) *tinypi.AssistantStream {
	s := tinypi.NewAssistantStream()
	go func() {
		defer s.Close()
		s.Push(tinypi.StartEvent{})
		for range m.rounds {
			s.Push(tinypi.TextDeltaEvent{Delta: "x"})
			select {
			case <-m.ack:
			case <-ctx.Done():
				s.Push(tinypi.ErrorEvent{Message: tinypi.AssistantMessage{StopReason: tinypi.StopReasonAborted, ErrorMessage: "cancelled"}})
				return
			}
		}
		s.Push(tinypi.TextDeltaEvent{Delta: "x"})
		s.Push(tinypi.DoneEvent{Message: answer(tinypi.StopReasonStop, tinypi.Text(strings.Repeat("x", m.rounds+1)))})
	}()
	return s
}

// pingPong reads one stream of via, which carries model's events, acknowledging every delta,
// and returns the time from the first delta to the last: model.rounds round trips.
func pingPong(b *testing.B, model *pingPongModel, via tinypi.Model) time.Duration {
	s := via.Stream(context.Background(), proxyRequest)
	var first time.Time
	var took time.Duration
	deltas := 0
	for e := range s.All() {
		if _, ok := e.(tinypi.TextDeltaEvent); !ok {
			continue
		}
		deltas++
		switch deltas {
		case 1:
			first = time.Now()
		case model.rounds + 1:
			took = time.Since(first)
			continue // the model waits for no acknowledgement of the last delta
		}
		model.ack <- struct{}{}
	}
	msg, err := s.Result()
	if err != nil || msg.StopReason != tinypi.StopReasonStop || deltas != model.rounds+1 {
		b.Fatalf("the stream ended after %d deltas with %v %s: %s, want stop after %d", deltas, err, msg.StopReason, msg.ErrorMessage, model.rounds+1)
	}
	return took
}

// BenchmarkProxyLatency: how long a reader waits for an event that the model pushes only once
// the reader has handled the previous one, as a provider's stream looks to its reader while the
// provider is slower than both, read directly (path=direct) and through the proxy
// (path=proxy). ns/event is one round trip: the event from the model to the reader, then the
// acknowledgement back to the model over a channel in both paths. The difference between the two
// ns/event is therefore the latency the proxy adds to each event in one direction. The time of
// the request and of the first and last events is not in ns/event (it is in ns/op).
func BenchmarkProxyLatency(b *testing.B) {
	const rounds = 1000
	for _, path := range []string{"direct", "proxy"} {
		b.Run("path="+path, func(b *testing.B) {
			noGoroutineLeaks(b)
			model := &pingPongModel{rounds: rounds, ack: make(chan struct{}, 1)}
			var via tinypi.Model = model
			if path == "proxy" {
				via, _ = startProxy(b, model)
			}
			var total time.Duration
			b.ReportAllocs()
			for b.Loop() {
				total += pingPong(b, model, via)
			}
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N)/rounds, "ns/event")
		})
	}
}

// BenchmarkProxyRebuild: one stream of d one-byte text deltas, served as a prepared SSE body by a
// loopback server and read by ProxyModel, which rebuilds the message from them. At 1x and 4x the
// deltas, ns/delta stays flat when the rebuild costs each delta its own length (chapter 13: a
// constant cost per event); joining the text so far on every delta makes it grow with d.
func BenchmarkProxyRebuild(b *testing.B) {
	for _, d := range []int{10000, 40000} {
		b.Run(fmt.Sprintf("deltas=%d", d), func(b *testing.B) {
			noGoroutineLeaks(b)
			var body strings.Builder
			body.WriteString("data: {\"type\":\"start\"}\n\n")
			for range d {
				body.WriteString("data: {\"type\":\"text_delta\",\"delta\":\"x\"}\n\n")
			}
			body.WriteString("data: {\"type\":\"done\",\"stopReason\":\"stop\"}\n\n")
			stream := body.String()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, stream)
			}))
			b.Cleanup(srv.Close)
			proxy := &tinypi.ProxyModel{URL: srv.URL, Token: proxyToken, Client: srv.Client()}
			b.ReportAllocs()
			for b.Loop() {
				if _, msg := readStream(b, proxy); len(tinypi.TextOf(msg.Content)) != d {
					b.Fatalf("%d bytes of text rebuilt, want %d", len(tinypi.TextOf(msg.Content)), d)
				}
			}
			reportPer(b, "delta", d)
		})
	}
}
