package tinypi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// This file is chapter 13's RPC mode: another program drives the runtime over stdin and stdout,
// one JSON object per line each way. A command is answered by exactly one response with the
// command's id; the agent's events come as they happen, between the responses. Whatever stdin
// holds, the server answers and goes on: only the end of stdin ends it.

// MaxRPCLineBytes bounds one command line. A longer line gets an error response and is skipped
// up to its newline, without being held in memory.
const MaxRPCLineBytes = 1 << 20

// MaxRPCQueuedMessages bounds the steer and follow_up messages accepted and not yet taken by the
// run: past it they are refused with an error response. Each may be as long as a line, so
// without a bound a driver could queue lines until memory runs out.
const MaxRPCQueuedMessages = 64

// RPCCommand is one line of stdin.
type RPCCommand struct {
	ID string `json:"id"`
	// Type is prompt, steer, follow_up, abort or state.
	Type string `json:"type"`
	// Message is the user text of prompt, steer and follow_up.
	Message string `json:"message,omitempty"`
}

// RPCResponse answers the command with the same ID (and Command its type). A line that was not a
// command gets a response with an empty ID.
type RPCResponse struct {
	Type    string         `json:"type"` // always "response"
	ID      string         `json:"id"`
	Command string         `json:"command"`
	Success bool           `json:"success"`
	Error   string         `json:"error,omitempty"`
	Data    map[string]any `json:"data,omitempty"`
}

// ServeRPC serves commands from stdin until it ends, writing responses and events to stdout,
// each a whole line (one writer at a time). A command gets one response with its id; the
// response comes before every event delivered while the command ran, so prompt's response comes
// before its run's run_start. prompt starts a run; steer and follow_up queue a message for the
// active run; abort aborts it; state answers with data {"running", "messages", "lastError"}: whether
// a run is active, how many messages the transcript has, why the last run failed. A line that is
// not a command, or a command the agent refuses, gets a response with success false and the
// reason. When stdin ends, a run in progress is aborted, and ServeRPC returns once its events,
// run_end included, are written and the session is flushed. ctx is checked before each line: once
// it is done, ServeRPC ends as it does at the end of stdin.
func ServeRPC(ctx context.Context, rt *Runtime, stdin io.Reader, stdout io.Writer) error {
	out := &rpcWriter{w: stdout}
	queued := &rpcQueue{limit: MaxRPCQueuedMessages}
	unsubscribe := rt.Agent.Subscribe(func(e AgentEvent) {
		queued.observe(e)
		line, err := MarshalAgentEvent(e)
		if err != nil {
			return
		}
		out.event([]byte(`{"type":"event","event":` + string(line) + `}`))
	})
	defer unsubscribe()
	lines := newRPCLines(stdin)
	for {
		if ctx.Err() != nil {
			break
		}
		line, err := lines.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errRPCLineTooLong) {
			out.release(RPCResponse{Error: err.Error()})
			continue
		}
		if err != nil {
			// Reading failed: end as at the end of stdin, and say why.
			return errors.Join(fmt.Errorf("tinypi: ServeRPC: reading stdin: %w", err), shutdownRPC(rt, out))
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		// Events delivered while the command runs wait for its response: a prompt's run_start
		// is delivered inside Prompt, before the response could be written.
		out.hold()
		out.release(handleRPC(ctx, rt, queued, line))
	}
	return shutdownRPC(rt, out)
}

// shutdownRPC ends serving: it aborts the run in progress, if any, and returns once that run has
// ended and its events, run_end included, are written, and the session holds the whole run.
// It returns the first error of writing stdout.
func shutdownRPC(rt *Runtime, out *rpcWriter) error {
	//lab:begin 13.5
	rt.Agent.Abort()
	if err := rt.Agent.WaitForIdle(context.Background()); err != nil {
		return fmt.Errorf("tinypi: ServeRPC: %w", err)
	}
	if err := rt.Session.Flush(context.Background()); err != nil {
		return fmt.Errorf("tinypi: ServeRPC: %w", err)
	}
	return out.writeErr()
	//lab:stub
	//	_ = out
	//	return errors.New(LAB_PENDING)
	//lab:end
}

// handleRPC runs one command line and returns its response. A line is one command: a line
// with more than one JSON value, or anything but spaces after the command, is not a command and
// runs nothing. queued counts the steer and follow_up messages waiting for the run.
func handleRPC(ctx context.Context, rt *Runtime, queued *rpcQueue, line []byte) RPCResponse {
	//lab:begin 13.4
	var cmd RPCCommand
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cmd); err != nil {
		return RPCResponse{Error: fmt.Sprintf("not a command: %v", err)}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return RPCResponse{Error: "not a command: more than one JSON value on the line"}
	}
	resp := RPCResponse{ID: cmd.ID, Command: cmd.Type}
	var err error
	switch cmd.Type {
	case "prompt", "steer", "follow_up":
		if cmd.Message == "" {
			err = fmt.Errorf("%s needs a message", cmd.Type)
			break
		}
		switch cmd.Type {
		case "prompt":
			err = rt.Agent.Prompt(context.WithoutCancel(ctx), UserText(cmd.Message))
		case "steer":
			err = queued.admit(func() error { return rt.Agent.Steer(UserText(cmd.Message)) })
		case "follow_up":
			err = queued.admit(func() error { return rt.Agent.FollowUp(UserText(cmd.Message)) })
		}
	case "abort":
		rt.Agent.Abort()
	case "state":
		st := rt.Agent.State()
		resp.Data = map[string]any{"running": st.Running, "messages": len(st.Messages), "lastError": st.LastError}
	default:
		err = fmt.Errorf("unknown command %q (prompt, steer, follow_up, abort, state)", cmd.Type)
	}
	if err != nil {
		resp.Error = err.Error()
		return resp
	}
	resp.Success = true
	return resp
	//lab:stub
	//	_, _, _, _ = ctx, rt, queued, line
	//	return RPCResponse{Error: LAB_PENDING}
	//lab:end
}

// rpcQueue counts the steer and follow_up messages the Agent accepted and the run has not
// taken yet, and refuses more than limit of them. The count follows the Agent's events: a
// queued_message event is one message taken, a run's start or end empties the queues.
type rpcQueue struct {
	mu      sync.Mutex
	limit   int
	waiting int
}

// admit calls queue, which hands one message to the Agent, unless limit messages are waiting
// already; a message the Agent accepted is counted.
func (q *rpcQueue) admit(queue func() error) error {
	q.mu.Lock()
	if q.waiting >= q.limit {
		defer q.mu.Unlock()
		return fmt.Errorf("%d messages are already waiting for the run (the most a run may have queued)", q.waiting)
	}
	q.waiting++ // held for this message while the Agent, which may deliver events, is asked
	q.mu.Unlock()
	if err := queue(); err != nil {
		q.mu.Lock()
		q.waiting = max(q.waiting-1, 0)
		q.mu.Unlock()
		return err
	}
	return nil
}

// observe follows one Agent event.
func (q *rpcQueue) observe(e AgentEvent) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch e := e.(type) {
	case RunStartEvent, RunEndEvent:
		q.waiting = 0
	case RunLoopEvent:
		if _, ok := e.Event.(QueuedMessageEvent); ok && q.waiting > 0 {
			q.waiting--
		}
	}
}

// rpcWriter writes whole lines to w, one at a time, and keeps the first write error. Between
// hold and release, events wait in a queue, and release writes its response first.
type rpcWriter struct {
	mu     sync.Mutex
	w      io.Writer
	err    error
	held   bool
	queued [][]byte
}

// event writes an event line, or queues it while a command runs.
func (o *rpcWriter) event(b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.held {
		o.queued = append(o.queued, b)
		return
	}
	o.writeLocked(b)
}

func (o *rpcWriter) hold() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.held = true
}

// release writes r, then the events queued since hold (if any), and stops holding.
func (o *rpcWriter) release(r RPCResponse) {
	o.mu.Lock()
	defer o.mu.Unlock()
	r.Type = "response"
	b, _ := json.Marshal(r)
	o.writeLocked(b)
	for _, q := range o.queued {
		o.writeLocked(q)
	}
	o.held, o.queued = false, nil
}

// writeErr is the first error of writing w.
func (o *rpcWriter) writeErr() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

func (o *rpcWriter) writeLocked(b []byte) {
	if o.err != nil {
		return
	}
	_, o.err = o.w.Write(append(b, '\n'))
}

var errRPCLineTooLong = fmt.Errorf("a command line longer than %d bytes", MaxRPCLineBytes)

// rpcLines reads lines of at most MaxRPCLineBytes.
type rpcLines struct{ r *bufio.Reader }

func newRPCLines(r io.Reader) *rpcLines { return &rpcLines{r: bufio.NewReaderSize(r, 64<<10)} }

// next returns the next line without its newline; errRPCLineTooLong for a line over the limit,
// which it skips; io.EOF at the end (a last line without a newline is returned first).
func (l *rpcLines) next() ([]byte, error) {
	var line []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxRPCLineBytes+1 {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = l.r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errRPCLineTooLong
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSuffix(line, []byte("\n")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}
