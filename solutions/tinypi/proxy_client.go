package tinypi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// This file is the proxy's client: ProxyModel, a Model whose answers come through a proxy server
// (proxy_server.go). It rebuilds each message from the deltas on the wire (proxyRebuild), and it
// never waits without a bound: a stream that stalls, breaks or ends without done or error ends in
// an error event, never in a hang and never in a success that did not happen.

// DefaultProxyIdleTimeout is how long ProxyModel waits for the response and then for each next
// event when ProxyModel.IdleTimeout is 0. A provider that is thinking sends nothing for a
// while; half a minute without an event is a stalled connection. Only a whole event restarts
// the wait: SSE comments (keep-alives) and lines of an event that never ends do not, so a
// server that sends nothing but keep-alives cannot hold the client for ever.
const DefaultProxyIdleTimeout = 30 * time.Second

// DefaultMaxProxyEventBytes bounds one event on the wire when ProxyModel.MaxEventBytes is 0:
// the proxy sends each event as one data line, which ReadSSE already bounds at 1 MiB; an event
// whose lines go on past the bound without the blank line that ends it is an error, not memory
// that grows until the idle timeout.
const DefaultMaxProxyEventBytes = 2 << 20

// DefaultMaxProxyMessageBytes bounds the data of one stream's events together when
// ProxyModel.MaxMessageBytes is 0. The message rebuilt from them is smaller than their data, so
// this bounds the message too: a server that sends deltas for ever, each in time to restart the
// idle wait, ends the stream with an error instead of filling the memory.
const DefaultMaxProxyMessageBytes = 64 << 20

// ProxyModel is a Model whose responses come from a proxy server (NewProxyHandler). Its stream
// always ends with a DoneEvent or an ErrorEvent, and never waits longer than IdleTimeout for the
// response or for the next event: a server that stalls, dies, sends what is not an event or ends
// the stream without a terminal event ends the stream with an error, a cancelled ctx with
// aborted. The error event's message holds what was rebuilt until then.
type ProxyModel struct {
	URL    string       // the server's base URL, such as "http://127.0.0.1:8181"
	Token  string       // the bearer token
	Client *http.Client // nil: a client of its own; its Timeout should be 0, since a stream is long
	// IdleTimeout bounds the wait for the response and then for each event; 0 means
	// DefaultProxyIdleTimeout. SSE comments do not restart it.
	IdleTimeout time.Duration
	// MaxEventBytes bounds the bytes read for one event (from the end of the last one); 0 means
	// DefaultMaxProxyEventBytes.
	MaxEventBytes int
	// MaxMessageBytes bounds the data of all the events of one stream together; 0 means
	// DefaultMaxProxyMessageBytes.
	MaxMessageBytes int
}

// errProxyIdle is the cause with which a relay cancels its request when the server is silent.
var errProxyIdle = errors.New("proxy: no event within the idle timeout")

// Stream implements Model.
func (m *ProxyModel) Stream(ctx context.Context, req Request) *AssistantStream {
	out := NewAssistantStream()
	go m.relay(ctx, req, out)
	return out
}

// relay runs one request and pushes its events to out, ending it with a terminal event.
func (m *ProxyModel) relay(parent context.Context, req Request, out *AssistantStream) {
	//lab:begin 13.8
	defer out.Close()
	idle := m.idleTimeout()
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	watchdog := time.AfterFunc(idle, func() { cancel(errProxyIdle) })
	defer watchdog.Stop()

	var b proxyRebuild
	fail := func(err error) {
		msg := b.message()
		msg.StopReason, msg.ErrorMessage = StopReasonError, err.Error()
		if parent.Err() != nil {
			msg.StopReason, msg.ErrorMessage = StopReasonAborted, fmt.Sprintf("proxy: request cancelled: %v", context.Cause(parent))
		} else if errors.Is(context.Cause(ctx), errProxyIdle) {
			msg.ErrorMessage = fmt.Sprintf("proxy: no event for %v: the server stalled", idle)
		}
		if msg.Timestamp == 0 {
			msg.Timestamp = time.Now().UnixMilli()
		}
		out.Push(ErrorEvent{Message: msg})
	}
	resp, err := m.post(ctx, req)
	if err != nil {
		fail(err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fail(proxyStatusError(resp))
		return
	}
	body := newProxyEventReader(resp.Body, m.maxEventBytes())
	total, maxTotal := 0, m.maxMessageBytes()
	for ev, err := range ReadSSE(body) {
		if err != nil {
			fail(fmt.Errorf("proxy: the stream broke: %w", err))
			return
		}
		body.eventDone()
		watchdog.Reset(idle)
		if total += len(ev.Data); total > maxTotal {
			fail(fmt.Errorf("proxy: a message over %d bytes", maxTotal))
			return
		}
		var pe proxyEvent
		if err := json.Unmarshal([]byte(ev.Data), &pe); err != nil {
			fail(fmt.Errorf("proxy: an event is not JSON: %w", err))
			return
		}
		e, err := b.apply(pe)
		if err != nil {
			fail(err)
			return
		}
		out.Push(e)
		switch e.(type) {
		case DoneEvent, ErrorEvent:
			return
		}
	}
	if ctx.Err() != nil {
		fail(context.Cause(ctx))
		return
	}
	fail(errors.New("proxy: the stream ended without done or error"))
	//lab:stub
	//	_, _ = parent, req
	//	defer out.Close()
	//	out.Push(ErrorEvent{Message: AssistantMessage{StopReason: StopReasonError, ErrorMessage: LAB_PENDING}})
	//lab:end
}

// post sends the request and returns the response, whatever its status.
func (m *ProxyModel) post(ctx context.Context, req Request) (*http.Response, error) {
	pr := proxyRequest{SystemPrompt: req.SystemPrompt, Tools: req.Tools, Messages: make([]json.RawMessage, len(req.Messages))}
	for i, msg := range req.Messages {
		raw, err := MarshalMessage(msg)
		if err != nil {
			return nil, fmt.Errorf("proxy: message %d: %w", i, err)
		}
		pr.Messages[i] = raw
	}
	body, err := json.Marshal(pr)
	if err != nil {
		return nil, fmt.Errorf("proxy: encode the request: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(m.URL, "/")+ProxyStreamPath, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	hreq.Header.Set("Authorization", "Bearer "+m.Token)
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	client := m.Client
	if client == nil {
		client = &http.Client{}
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("proxy: the request failed: %w", err)
	}
	return resp, nil
}

// proxyStatusError describes a response that is not 200, with at most 512 bytes of its body.
func proxyStatusError(resp *http.Response) error {
	text, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	detail := strings.TrimSpace(string(text))
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return fmt.Errorf("proxy: the server refused the token (%s): %s", resp.Status, detail)
	default:
		return fmt.Errorf("proxy: the server answered %s: %s", resp.Status, detail)
	}
}

// proxyEventReader reads a stream for ReadSSE and fails once more than limit bytes have been
// read since the last event (eventDone): one event that never ends cannot fill the memory.
// ReadSSE reads ahead, so the bytes counted for an event may include up to one buffer of the
// event before it.
type proxyEventReader struct {
	r     io.Reader
	limit int
	n     int // bytes read since the last eventDone
}

func newProxyEventReader(r io.Reader, limit int) *proxyEventReader {
	return &proxyEventReader{r: r, limit: limit}
}

// Read implements io.Reader.
func (r *proxyEventReader) Read(p []byte) (int, error) {
	if r.n > r.limit {
		return 0, fmt.Errorf("proxy: an event over %d bytes", r.limit)
	}
	n, err := r.r.Read(p)
	r.n += n
	return n, err
}

// eventDone starts counting for the next event.
func (r *proxyEventReader) eventDone() { r.n = 0 }

// proxyRebuild rebuilds the assistant message from the wire events, as the events arrive. The
// text of a text or thinking block grows in a builder, so that a delta costs its own length,
// not the length of the text so far: content holds an empty TextContent or ThinkingContent at
// that index until message fills it in.
type proxyRebuild struct {
	started bool
	content []ContentBlock
	texts   map[int]*strings.Builder // text and thinking by content index
	args    map[int]*strings.Builder // tool call arguments by content index, until toolcall_end
}

// message is the message rebuilt so far: a call whose toolcall_end has not come has the
// arguments its deltas carried.
func (b *proxyRebuild) message() AssistantMessage {
	content := slices.Clone(b.content)
	for i, text := range b.texts {
		switch content[i].(type) {
		case TextContent:
			content[i] = Text(text.String())
		case ThinkingContent:
			content[i] = ThinkingContent{Thinking: text.String()}
		}
	}
	for i, args := range b.args {
		call, _ := content[i].(ToolCall)
		call.Arguments = args.String()
		content[i] = call
	}
	return AssistantMessage{Content: content}
}

// apply takes one wire event into the rebuild and returns the AssistantEvent it stands for.
// A content index may name an existing block or the next one, never beyond: a hostile server
// cannot make the client allocate by sending a huge index.
func (b *proxyRebuild) apply(pe proxyEvent) (AssistantEvent, error) {
	//lab:begin 13.7
	if pe.Type != "start" && !b.started {
		return nil, fmt.Errorf("proxy: a %q event before start", pe.Type)
	}
	index := func() error {
		if pe.ContentIndex < 0 || pe.ContentIndex > len(b.content) {
			return fmt.Errorf("proxy: a %s event for content block %d of %d", pe.Type, pe.ContentIndex, len(b.content))
		}
		return nil
	}
	switch pe.Type {
	case "start":
		if b.started {
			return nil, errors.New("proxy: a second start event")
		}
		b.started = true
		return StartEvent{}, nil
	case "text_delta", "thinking_delta":
		if err := index(); err != nil {
			return nil, err
		}
		var kind ContentBlock = TextContent{}
		if pe.Type == "thinking_delta" {
			kind = ThinkingContent{}
		}
		if b.texts == nil {
			b.texts = map[int]*strings.Builder{}
		}
		text, block := b.texts[pe.ContentIndex], blockAt(b.content, pe.ContentIndex)
		if text == nil || block == nil || block.BlockType() != kind.BlockType() {
			// A new block of this kind: its text starts empty.
			text = &strings.Builder{}
			b.texts[pe.ContentIndex] = text
			delete(b.args, pe.ContentIndex)
			b.content = withBlock(b.content, pe.ContentIndex, kind)
		}
		text.WriteString(pe.Delta)
		if pe.Type == "thinking_delta" {
			return ThinkingDeltaEvent{ContentIndex: pe.ContentIndex, Delta: pe.Delta}, nil
		}
		return TextDeltaEvent{ContentIndex: pe.ContentIndex, Delta: pe.Delta}, nil
	case "toolcall_delta":
		if err := index(); err != nil {
			return nil, err
		}
		if b.args == nil {
			b.args = map[int]*strings.Builder{}
		}
		if b.args[pe.ContentIndex] == nil {
			b.args[pe.ContentIndex] = &strings.Builder{}
			b.content = withBlock(b.content, pe.ContentIndex, ToolCall{})
		}
		b.args[pe.ContentIndex].WriteString(pe.Delta)
		return ToolCallDeltaEvent{ContentIndex: pe.ContentIndex, Delta: pe.Delta}, nil
	case "toolcall_end":
		if err := index(); err != nil {
			return nil, err
		}
		call := ToolCall{ID: pe.ID, Name: pe.Name}
		if a := b.args[pe.ContentIndex]; a != nil {
			call.Arguments = a.String()
			delete(b.args, pe.ContentIndex)
		}
		b.content = withBlock(b.content, pe.ContentIndex, call)
		return ToolCallEndEvent{ContentIndex: pe.ContentIndex, ToolCall: call}, nil
	case "done", "error":
		msg := b.message()
		for _, c := range pe.Calls {
			// A call with neither deltas nor an end is a new block, the next one.
			if c.ContentIndex < 0 || c.ContentIndex > len(msg.Content) {
				return nil, fmt.Errorf("proxy: a %s event names a tool call at content block %d of %d", pe.Type, c.ContentIndex, len(msg.Content))
			}
			call, _ := blockAt(msg.Content, c.ContentIndex).(ToolCall)
			call.ID, call.Name = c.ID, c.Name
			msg.Content = withBlock(msg.Content, c.ContentIndex, call)
		}
		msg.StopReason, msg.ErrorMessage, msg.ID, msg.Model, msg.Timestamp = pe.StopReason, pe.ErrorMessage, pe.MessageID, pe.Model, pe.Timestamp
		if pe.Usage != nil {
			msg.Usage = *pe.Usage
		}
		if pe.Type == "done" {
			return DoneEvent{Message: msg}, nil
		}
		return ErrorEvent{Message: msg}, nil
	}
	return nil, fmt.Errorf("proxy: an event of unknown type %q", pe.Type)
	//lab:stub
	//	_ = pe
	//	return nil, errors.New(LAB_PENDING)
	//lab:end
}

// maxEventBytes is m.MaxEventBytes, or DefaultMaxProxyEventBytes when it is not positive.
func (m *ProxyModel) maxEventBytes() int {
	if m.MaxEventBytes > 0 {
		return m.MaxEventBytes
	}
	return DefaultMaxProxyEventBytes
}

// maxMessageBytes is m.MaxMessageBytes, or DefaultMaxProxyMessageBytes when it is not positive.
func (m *ProxyModel) maxMessageBytes() int {
	if m.MaxMessageBytes > 0 {
		return m.MaxMessageBytes
	}
	return DefaultMaxProxyMessageBytes
}

// idleTimeout is m.IdleTimeout, or DefaultProxyIdleTimeout when it is not positive.
func (m *ProxyModel) idleTimeout() time.Duration {
	if m.IdleTimeout > 0 {
		return m.IdleTimeout
	}
	return DefaultProxyIdleTimeout
}
