package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// runTimeout bounds one run: a loop that waits forever is a finding too.
const runTimeout = 10 * time.Second

// world is the side of a run the loop does not report: the requests and events are recorded by
// tinypi's RunRecorder, and world adds what the stub model answered, where each request fell
// among the loop's events, and which tools really ran in each round (the tools note it
// themselves, so a loop that forgets an event cannot hide an execution). The loop may call the
// model, the tools and OnEvent from several goroutines, so everything goes through mu.
type world struct {
	rec    *tinypi.RunRecorder
	mu     sync.Mutex
	rounds []*round
}

// round is one model request and what happened until the next one.
type round struct {
	reply tinypi.AssistantMessage // what the model answered
	// firstEvent is the number of events the loop had emitted when it made this request.
	firstEvent int
	// ran lists the tools that really ran in this round (written by the tools themselves).
	ran []string
	// fxDone is closed when get_fx_rate has finished in this round.
	fxDone     chan struct{}
	fxDoneOnce sync.Once
}

// current returns the latest round, nil before the first request.
func (w *world) current() *round {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.rounds) == 0 {
		return nil
	}
	return w.rounds[len(w.rounds)-1]
}

// ran notes that the tool name ran in the current round.
func (w *world) ran(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.rounds) > 0 {
		cur := w.rounds[len(w.rounds)-1]
		cur.ran = append(cur.ran, name)
	}
}

// stubModel answers with its scenario's stub, streamed by a ScriptedModel, and starts a new
// round with each reply.
type stubModel struct {
	w      *world
	answer func(int, tinypi.Request) tinypi.AssistantMessage
}

func (m *stubModel) Stream(ctx context.Context, req tinypi.Request) *tinypi.AssistantStream {
	events := len(m.w.rec.Record(false).Events)
	m.w.mu.Lock()
	n := len(m.w.rounds) + 1
	m.w.mu.Unlock()
	stream := tinypi.NewScriptedModel(m.answer(n, req)).Stream(ctx, req)
	reply, _ := stream.Result() // a ScriptedModel's stream has ended when Stream returns
	m.w.mu.Lock()
	m.w.rounds = append(m.w.rounds, &round{reply: reply, firstEvent: events, fxDone: make(chan struct{})})
	m.w.mu.Unlock()
	return stream
}

// outcome is everything report prints about one run.
type outcome struct {
	result   tinypi.AgentRunResult
	err      error  // RunAgentLoop's error
	panicked string // the panic value when the loop panicked (a lab stub, for example)
	timedOut bool
	w        *world
	input    []tinypi.Message // the caller's messages, with spare capacity
}

// runScenario runs sc once. A panicking loop is reported, not fatal: in a practice directory
// the panic is usually a lab stub saying which lab to write next.
func runScenario(sc scenario) outcome {
	w := &world{rec: tinypi.NewRunRecorder(sc.name)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Spare capacity lets the report see a loop that appends to the caller's slice.
	input := make([]tinypi.Message, 1, 4)
	input[0] = tinypi.UserMessage{Content: []tinypi.ContentBlock{tinypi.Text(sc.question())}, Timestamp: 1}
	registry, err := sc.registry(w, cancel)
	if err != nil {
		return outcome{err: err, w: w, input: input}
	}
	opts := w.rec.Wrap(tinypi.AgentLoopOptions{
		Context:         tinypi.AgentContext{SystemPrompt: "你是 tinypi，一个会使用工具的助手。", Messages: input},
		Model:           &stubModel{w: w, answer: sc.answer},
		Tools:           registry,
		MaxSteps:        maxSteps,
		ExecuteToolCall: sc.executor(registry),
	})
	if sc.maxSteps != 0 {
		opts.MaxSteps = sc.maxSteps
	}
	if sc.cancelBefore {
		cancel()
	}
	done := make(chan outcome, 1)
	go func() {
		out := outcome{w: w, input: input}
		defer func() {
			if p := recover(); p != nil {
				out.panicked = fmt.Sprint(p)
			}
			done <- out
		}()
		out.result, out.err = tinypi.RunAgentLoop(ctx, opts)
	}()
	select {
	case out := <-done:
		return out
	case <-time.After(runTimeout):
		return outcome{timedOut: true, w: w, input: input}
	}
}

// roundView is one round as the report prints it.
type roundView struct {
	reply  tinypi.AssistantMessage
	tools  []string           // the tool names the request offered
	events []tinypi.LoopEvent // the loop's tool events of this round, in order
	ran    []string
}

// runView is a run as the report prints it: its rounds, the tool events before the first
// request, and how many turn_end events the loop emitted.
type runView struct {
	rounds   []roundView
	early    []tinypi.LoopEvent
	turnEnds int
}

// view assembles the run so far from the recorder's requests and events and the world's rounds.
func (w *world) view() runView {
	rec := w.rec.Record(false)
	w.mu.Lock()
	defer w.mu.Unlock()
	var v runView
	toolEvents := func(from, to int) []tinypi.LoopEvent {
		var out []tinypi.LoopEvent
		for _, e := range rec.Events[min(from, len(rec.Events)):min(to, len(rec.Events))] {
			switch e.(type) {
			case tinypi.ModelEvent, tinypi.AssistantMessageEvent, tinypi.TurnEndEvent:
			default:
				out = append(out, e)
			}
		}
		return out
	}
	for _, e := range rec.Events {
		if _, ok := e.(tinypi.TurnEndEvent); ok {
			v.turnEnds++
		}
	}
	end := len(rec.Events)
	if len(w.rounds) > 0 {
		end = w.rounds[0].firstEvent
	}
	v.early = toolEvents(0, end)
	for i, r := range w.rounds {
		next := len(rec.Events)
		if i+1 < len(w.rounds) {
			next = w.rounds[i+1].firstEvent
		}
		var tools []string
		if i < len(rec.Requests) {
			for _, t := range rec.Requests[i].Tools {
				tools = append(tools, t.Name)
			}
		}
		v.rounds = append(v.rounds, roundView{
			reply: r.reply, tools: tools, events: toolEvents(r.firstEvent, next), ran: append([]string(nil), r.ran...),
		})
	}
	return v
}
