package tinypi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// Chapter 05 focused tests: provider adapters. Helpers of this file start with ch05 so that they
// never collide with other chapters' test helpers in the same package.

// ch05ReadAll decodes an SSE body completely.
func ch05ReadAll(t *testing.T, r io.Reader) ([]SSEEvent, error) {
	t.Helper()
	var events []SSEEvent
	var err error
	runLab(t, func() {
		for e, readErr := range ReadSSE(r) {
			if readErr != nil {
				err = readErr
				break
			}
			events = append(events, e)
		}
	})
	return events, err
}

// ch05Replay serves body from a test server and streams one response from it.
func ch05Replay(t *testing.T, api string, body []byte) ([]AssistantEvent, AssistantMessage, ch05SeenRequest) {
	t.Helper()
	srv, seen := ch05Serve(t, http.StatusOK, body)
	stream := ch05Provider(t, api, srv).Stream(context.Background(), Request{
		SystemPrompt: "Be brief.",
		Messages:     []Message{UserText("hello")},
	})
	events, msg := ch05Collect(t, stream)
	srv.Close()
	return events, msg, seen()
}

// ch05Body joins SSE events written as lines; each element is one event's lines.
func ch05Body(events ...string) []byte {
	var b strings.Builder
	for _, e := range events {
		b.WriteString(e)
		b.WriteString("\n\n")
	}
	return []byte(b.String())
}

// ch05CheckEvents checks the invariants of every response stream: it starts with start (when
// anything was streamed), ends with exactly one terminal event carrying msg, the deltas of each
// content block add up to the block, and each toolcall_end carries the call of msg at its index.
// It returns the content indexes of the toolcall_end events.
func ch05CheckEvents(t *testing.T, name string, events []AssistantEvent, msg AssistantMessage) []int {
	t.Helper()
	if len(events) == 0 {
		t.Errorf("%s: no events", name)
		return nil
	}
	if len(events) > 1 {
		if _, ok := events[0].(StartEvent); !ok {
			t.Errorf("%s: first event is %s, want start", name, events[0].EventType())
		}
	}
	var last AssistantMessage
	switch e := events[len(events)-1].(type) {
	case DoneEvent:
		last = e.Message
	case ErrorEvent:
		last = e.Message
	default:
		t.Errorf("%s: last event is %s, want done or error", name, e.EventType())
	}
	if diff := cmp.Diff(msg, last); diff != "" {
		t.Errorf("%s: terminal event's message differs from the result (-result +event):\n%s", name, diff)
	}
	deltas := map[int]string{}
	var ends []int
	for _, e := range events[:len(events)-1] {
		switch e := e.(type) {
		case TextDeltaEvent:
			deltas[e.ContentIndex] += e.Delta
		case ThinkingDeltaEvent:
			deltas[e.ContentIndex] += e.Delta
		case ToolCallDeltaEvent:
			deltas[e.ContentIndex] += e.Delta
		case ToolCallEndEvent:
			ends = append(ends, e.ContentIndex)
			if e.ContentIndex >= len(msg.Content) || !cmp.Equal(msg.Content[e.ContentIndex], ContentBlock(e.ToolCall)) {
				t.Errorf("%s: toolcall_end at %d carries %+v, which is not the message's block", name, e.ContentIndex, e.ToolCall)
			}
		case DoneEvent, ErrorEvent:
			t.Errorf("%s: terminal event before the end", name)
		}
	}
	for i, block := range msg.Content {
		var want string
		switch b := block.(type) {
		case TextContent:
			want = b.Text
		case ThinkingContent:
			want = b.Thinking
		case ToolCall:
			want = b.Arguments
		}
		if deltas[i] != want {
			t.Errorf("%s: deltas of block %d add up to %q, want %q", name, i, deltas[i], want)
		}
	}
	return ends
}

// --- the recordings ---------------------------------------------------------------------------

// ch05ReplayRecordings replays the recordings of one lab through their adapters and compares
// each result with its sidecar's statement.
func ch05ReplayRecordings(t *testing.T, lab string) {
	t.Helper()
	names := slices.Sorted(func(yield func(string) bool) {
		for name, rec := range ch05Recordings {
			if rec.lab == lab && !yield(name) {
				return
			}
		}
	})
	if len(names) == 0 {
		t.Fatalf("no recordings for lab %s", lab)
	}
	for _, name := range names {
		rec := ch05Recordings[name]
		events, got, seen := ch05Replay(t, rec.api, ch05RecordingBody(t, name))
		// Which calls end is checked here; their order is TestLab5_3_OpenAI归一化_Events's concern.
		ends := ch05CheckEvents(t, name, events, got)
		if slices.Sort(ends); !slices.Equal(ends, rec.wantEnds) {
			t.Errorf("%s: toolcall_end at content indexes %v, want %v", name, ends, rec.wantEnds)
		}
		if rec.wantErr == "" && got.ErrorMessage != "" {
			t.Errorf("%s: unexpected error message:\n%q", name, got.ErrorMessage)
		}
		if !strings.Contains(got.ErrorMessage, rec.wantErr) {
			t.Errorf("%s: error message does not contain %q:\n%q", name, rec.wantErr, got.ErrorMessage)
		}
		if got.Timestamp == 0 {
			t.Errorf("%s: message has no timestamp", name)
		}
		got.Timestamp, got.ErrorMessage = 0, ""
		if diff := cmp.Diff(rec.want, got); diff != "" {
			t.Errorf("%s: final message (-sidecar +decoded):\n%s", name, diff)
		}
		ch05CheckRequest(t, name, rec.api, seen)
	}
}

// ch05CheckRequest checks the request a replay sent: the endpoint, the credentials and a
// streaming body.
func ch05CheckRequest(t *testing.T, name, api string, seen ch05SeenRequest) {
	t.Helper()
	want := ch05SeenRequest{Path: "/v1/chat/completions"}
	auth, gotAuth := "Bearer test-key", seen.Header.Get("Authorization")
	if api == APIAnthropic {
		want.Path = "/v1/messages"
		auth, gotAuth = "test-key", seen.Header.Get("X-Api-Key")
		if v := seen.Header.Get("Anthropic-Version"); v == "" {
			t.Errorf("%s: request has no anthropic-version header", name)
		}
	}
	if seen.Path != want.Path {
		t.Errorf("%s: request path %q, want %q", name, seen.Path, want.Path)
	}
	if gotAuth != auth {
		t.Errorf("%s: credentials header %q, want %q", name, gotAuth, auth)
	}
	if seen.Body["stream"] != true || seen.Body["model"] != "test-model" {
		t.Errorf("%s: request body has stream=%v model=%v, want true and test-model", name, seen.Body["stream"], seen.Body["model"])
	}
}

// --- Lab 5.1: SSE framing ---------------------------------------------------------------------

func TestLab5_1_SSE分帧_Framing(t *testing.T) {
	msg := func(data string) SSEEvent { return SSEEvent{Event: "message", Data: data} }
	tests := []struct {
		name string
		in   string
		want []SSEEvent
	}{
		{"LF", "data: a\n\n", []SSEEvent{msg("a")}},
		{"CRLF", "event: e\r\ndata: a\r\n\r\n", []SSEEvent{{Event: "e", Data: "a"}}},
		{"CR", "data: a\r\rdata: b\r\r", []SSEEvent{msg("a"), msg("b")}},
		{"mixed line endings", "data: a\r\ndata: b\rdata: c\n\n", []SSEEvent{msg("a\nb\nc")}},
		{"empty stream", "", nil},
		{"comments ignored", ": keep-alive\n\n:\ndata: x\n: between\n\n", []SSEEvent{msg("x")}},
		{"data lines joined with LF", "data: a\ndata:\ndata: b\n\n", []SSEEvent{msg("a\n\nb")}},
		{"only one space removed", "data:  two\ndata:none\n\n", []SSEEvent{msg(" two\nnone")}},
		{"trailing spaces kept", "data: x  \n\n", []SSEEvent{msg("x  ")}},
		{"colon inside value", "data: a: b\n\n", []SSEEvent{msg("a: b")}},
		{"field without colon", "data\n\n", []SSEEvent{msg("")}},
		{"unknown field ignored", "foo: bar\ndata: x\n\n", []SSEEvent{msg("x")}},
		{"last event type wins", "event: a\nevent: b\ndata: x\n\n", []SSEEvent{{Event: "b", Data: "x"}}},
		{"block without data dispatches nothing", "event: ping\n\ndata: x\n\n", []SSEEvent{msg("x")}},
		{"id persists until changed", "id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n",
			[]SSEEvent{{Event: "message", Data: "a", ID: "1"}, {Event: "message", Data: "b", ID: "1"}, msg("c")}},
		{"id with NUL ignored", "id: 7\ndata: a\n\nid: x\x00y\ndata: b\n\n",
			[]SSEEvent{{Event: "message", Data: "a", ID: "7"}, {Event: "message", Data: "b", ID: "7"}}},
		{"retry digits only", "retry: 1500\ndata: a\n\nretry: 15x\ndata: b\n\nretry: -1\ndata: c\n\n",
			[]SSEEvent{{Event: "message", Data: "a", Retry: 1500}, {Event: "message", Data: "b", Retry: 1500}, {Event: "message", Data: "c", Retry: 1500}}},
		{"BOM skipped", "\uFEFFdata: a\n\n", []SSEEvent{msg("a")}},
		{"only the first BOM skipped", "\uFEFF\uFEFFdata: a\n\ndata: b\n\n", []SSEEvent{msg("b")}},
		{"BOM later is data", "data: \uFEFFa\n\n", []SSEEvent{msg("\uFEFFa")}},
		{"unterminated last event discarded", "data: a\n\ndata: b\n", []SSEEvent{msg("a")}},
		{"unterminated last line discarded", "data: a\n\ndata: b", []SSEEvent{msg("a")}},
		{"unterminated after CR discarded", "data: a\r\rdata: b\r", []SSEEvent{msg("a")}},
	}
	for _, tt := range tests {
		got, err := ch05ReadAll(t, strings.NewReader(tt.in))
		if err != nil {
			t.Errorf("%s: unexpected error %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: ReadSSE(%q) (-want +got):\n%s", tt.name, tt.in, diff)
		}
	}
}

// ch05SplitReader returns its chunks one Read at a time.
type ch05SplitReader struct{ chunks []string }

func (r *ch05SplitReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	if r.chunks[0] = r.chunks[0][n:]; r.chunks[0] == "" {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

func TestLab5_1_SSE分帧_ChunkBoundaries(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	in := "\uFEFFevent: a\r\ndata: 1\r\n\r\ndata: 2\r\rdata: 3\n\n"
	want, err := ch05ReadAll(t, strings.NewReader(in))
	if err != nil || len(want) != 3 {
		t.Fatalf("whole read: %d events, error %v; want 3 events", len(want), err)
	}
	readers := map[string]io.Reader{
		"one byte at a time":    iotest.OneByteReader(strings.NewReader(in)),
		"CR and LF split apart": &ch05SplitReader{chunks: []string{"\uFEFFevent: a\r", "\ndata: 1\r", "\n\r", "\ndata: 2\r", "\rdata: 3\n", "\n"}},
		"BOM split":             &ch05SplitReader{chunks: []string{"\xEF", "\xBB", "\xBFevent: a\r\ndata: 1\r\n\r\ndata: 2\r\rdata: 3\n\n"}},
	}
	for name, r := range readers {
		got, err := ch05ReadAll(t, r)
		if err != nil {
			t.Errorf("%s: unexpected error %v", name, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: events differ from a whole read (-whole +split):\n%s", name, diff)
		}
	}

	// A live stream: the event ending in "\r\r" must be dispatched at once, without waiting
	// for the next byte to see whether it is "\n".
	pr, pw := io.Pipe()
	defer pr.Close()
	go func() {
		pw.Write([]byte("data: live\r\r"))
	}()
	// The timer only keeps a hanging reader from hanging the test: when it fires, the reader
	// waited for a byte after "\r", and that is a failure even if the event came out then.
	const patience = 5 * time.Second
	timer := time.AfterFunc(patience, func() {
		pw.CloseWithError(errors.New("the event was not dispatched when its blank line arrived"))
	})
	runLab(t, func() {
		for e, err := range ReadSSE(pr) {
			if err != nil {
				t.Fatal(err)
			}
			if e.Data != "live" {
				t.Errorf("live event data %q, want %q", e.Data, "live")
			}
			break
		}
	})
	if !timer.Stop() {
		t.Errorf("the live event ending in \"\\r\\r\" came out only when the stream failed %v later: after \"\\r\", do not wait for the next byte", patience)
	}
	pw.Close()
}

// ch05FailingReader returns data, then err.
type ch05FailingReader struct {
	data string
	err  error
}

func (r *ch05FailingReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestLab5_1_SSE分帧_ReadErrors(t *testing.T) {
	boom := errors.New("connection reset")
	got, err := ch05ReadAll(t, &ch05FailingReader{data: "data: a\n\ndata: b\n", err: boom})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
	if diff := cmp.Diff([]SSEEvent{{Event: "message", Data: "a"}}, got); diff != "" {
		t.Errorf("events before the error (-want +got):\n%s", diff)
	}

	// Breaking out of the loop stops the iterator (a range-over-func iterator that calls yield
	// again after false panics).
	runLab(t, func() {
		n := 0
		for range ReadSSE(strings.NewReader("data: 1\n\ndata: 2\n\ndata: 3\n\n")) {
			n++
			break
		}
		if n != 1 {
			t.Errorf("loop body ran %d times, want 1", n)
		}
	})

	// A line longer than the limit is an error, not unbounded memory.
	long := "data: " + strings.Repeat("x", maxSSELineBytes) + "\n\n"
	if _, err := ch05ReadAll(t, strings.NewReader(long)); err == nil {
		t.Errorf("a %d-byte line gave no error", len(long))
	}
}

func TestLab5_1_SSE分帧_Recordings(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "sse"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sse") && !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		files[name] = true
		if _, ok := ch05Recordings[name]; !ok {
			t.Errorf("testdata/sse/%s has no entry in ch05Recordings: read its sidecar and add one", name)
		}
		sidecar := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, ".sse"), ".jsonl"), ".chunks") + ".md"
		if _, err := os.Stat(filepath.Join("testdata", "sse", sidecar)); err != nil {
			t.Errorf("testdata/sse/%s has no sidecar %s", name, sidecar)
		}
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for name := range ch05Recordings {
			if !yield(name) {
				return
			}
		}
	}) {
		rec := ch05Recordings[name]
		if !files[name] {
			t.Errorf("ch05Recordings has %s, which is not in testdata/sse", name)
			continue
		}
		events, err := ch05ReadAll(t, bytes.NewReader(ch05RecordingBody(t, name)))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if len(events) != rec.sseEvents {
			t.Errorf("%s: %d events, want %d", name, len(events), rec.sseEvents)
		}
		if len(events) > 0 && events[len(events)-1].Event != rec.lastEvent {
			t.Errorf("%s: last event %q, want %q", name, events[len(events)-1].Event, rec.lastEvent)
		}
		if rec.api == "responses" {
			var types []string
			for _, e := range events {
				types = append(types, e.Event)
			}
			want := []string{"response.created", "response.in_progress", "error", "response.failed"}
			if diff := cmp.Diff(want, types); diff != "" {
				t.Errorf("%s: event types (-want +got):\n%s", name, diff)
			}
			if len(events) == 4 && !strings.Contains(events[2].Data, "You exceeded your current quota") {
				t.Errorf("%s: the error event does not carry the quota message: %s", name, events[2].Data)
			}
		}
	}
}

// FuzzReadSSE checks that ReadSSE never panics, that how the input is split into reads does
// not matter, and that re-encoding the decoded events canonically decodes to the same events.
// It is a fuzz target, not a focused test: go test -run XXX -fuzz FuzzReadSSE .
func FuzzReadSSE(f *testing.F) {
	f.Add("data: a\n\n")
	f.Add("event: e\r\nid: 1\r\nretry: 10\r\ndata: x\r\ndata: y\r\n\r\n")
	f.Add("\uFEFF: c\rdata:  z\r\rdata: tail")
	f.Add("id: a\x00b\ndata\n\nevent\n\n")
	if entries, err := os.ReadDir(filepath.Join("testdata", "sse")); err == nil {
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".sse") {
				if data, err := os.ReadFile(filepath.Join("testdata", "sse", e.Name())); err == nil {
					f.Add(string(data))
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		events, err := ch05ReadAll(t, strings.NewReader(in))
		if err != nil {
			t.Fatalf("reading from memory failed: %v", err)
		}
		split, _ := ch05ReadAll(t, iotest.OneByteReader(strings.NewReader(in)))
		if diff := cmp.Diff(events, split); diff != "" {
			t.Fatalf("one-byte reads decode differently (-whole +split):\n%s", diff)
		}
		for _, ending := range []string{"\n", "\r\n", "\r"} {
			again, err := ch05ReadAll(t, strings.NewReader(ch05EncodeSSE(events, ending)))
			if err != nil {
				t.Fatalf("re-reading failed: %v", err)
			}
			if diff := cmp.Diff(events, again); diff != "" {
				t.Fatalf("round trip with %q line endings (-first +again):\n%s", ending, diff)
			}
		}
	})
}

// ch05EncodeSSE writes events in a canonical form: retry and id lines only when they change,
// an event line, one data line per line of data, a blank line.
func ch05EncodeSSE(events []SSEEvent, eol string) string {
	var b strings.Builder
	lastID, lastRetry := "", 0
	for _, e := range events {
		if e.Retry != lastRetry {
			fmt.Fprintf(&b, "retry: %d%s", e.Retry, eol)
			lastRetry = e.Retry
		}
		if e.ID != lastID {
			b.WriteString("id: " + e.ID + eol)
			lastID = e.ID
		}
		b.WriteString("event: " + e.Event + eol)
		for _, line := range strings.Split(e.Data, "\n") {
			b.WriteString("data: " + line + eol)
		}
		b.WriteString(eol)
	}
	return b.String()
}

// --- Lab 5.2: outbound request conversion -----------------------------------------------------

// ch05Conversation exercises every conversion rule: system prompt, thinking, several tool
// calls and their results (one an error), a cancelled response that is left out, a call without
// arguments and a call whose arguments a length stop cut off.
func ch05Conversation() Request {
	return Request{
		SystemPrompt: "You are terse.",
		Messages: []Message{
			UserText("Add 2 and 3, then multiply them."),
			AssistantMessage{StopReason: StopReasonToolUse, Content: []ContentBlock{
				ThinkingContent{Thinking: "Two tools at once."},
				TextContent{Text: "Calling both."},
				ToolCall{ID: "call_1", Name: "add", Arguments: `{"a":2,"b":3}`},
				ToolCall{ID: "call_2", Name: "multiply", Arguments: `{"a":2,"b":3}`},
			}},
			ToolResultMessage{ToolCallID: "call_1", ToolName: "add", Content: []ContentBlock{Text("5")}},
			ToolResultMessage{ToolCallID: "call_2", ToolName: "multiply", Content: []ContentBlock{Text("no such operand")}, IsError: true},
			AssistantMessage{StopReason: StopReasonAborted, ErrorMessage: "request cancelled", Content: []ContentBlock{Text("half an ans")}},
			UserText("And the list tool?"),
			AssistantMessage{StopReason: StopReasonToolUse, Content: []ContentBlock{
				ToolCall{ID: "call_3", Name: "ls"},
			}},
			ToolResultMessage{ToolCallID: "call_3", ToolName: "ls", Content: []ContentBlock{Text("a.go\nb.go")}},
			AssistantMessage{StopReason: StopReasonLength, Content: []ContentBlock{
				ToolCall{ID: "call_4", Name: "write", Arguments: `{"path":"x.txt","text":"cut`},
			}},
			ToolResultMessage{ToolCallID: "call_4", ToolName: "write", Content: []ContentBlock{Text("skipped: output limit")}, IsError: true},
		},
		Tools: []ToolDefinition{
			{Name: "add", Description: "Add two integers.", Parameters: `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`},
			{Name: "ls", Description: "List files."},
		},
	}
}

const ch05OpenAIGolden = `{
  "model": "gpt-test",
  "max_tokens": 1000,
  "stream": true,
  "stream_options": {"include_usage": true},
  "messages": [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Add 2 and 3, then multiply them."},
    {"role": "assistant", "content": "Calling both.", "reasoning_content": "Two tools at once.", "tool_calls": [
      {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": "{\"a\":2,\"b\":3}"}},
      {"id": "call_2", "type": "function", "function": {"name": "multiply", "arguments": "{\"a\":2,\"b\":3}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_1", "content": "5"},
    {"role": "tool", "tool_call_id": "call_2", "content": "no such operand"},
    {"role": "user", "content": "And the list tool?"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_3", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_3", "content": "a.go\nb.go"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_4", "type": "function", "function": {"name": "write", "arguments": "{\"path\":\"x.txt\",\"text\":\"cut"}}
    ]},
    {"role": "tool", "tool_call_id": "call_4", "content": "skipped: output limit"}
  ],
  "tools": [
    {"type": "function", "function": {"name": "add", "description": "Add two integers.",
      "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}},
    {"type": "function", "function": {"name": "ls", "description": "List files.",
      "parameters": {"type": "object", "properties": {}}}}
  ]
}`

const ch05AnthropicGolden = `{
  "model": "claude-test",
  "max_tokens": 1000,
  "system": "You are terse.",
  "stream": true,
  "messages": [
    {"role": "user", "content": [{"type": "text", "text": "Add 2 and 3, then multiply them."}]},
    {"role": "assistant", "content": [
      {"type": "text", "text": "Calling both."},
      {"type": "tool_use", "id": "call_1", "name": "add", "input": {"a": 2, "b": 3}},
      {"type": "tool_use", "id": "call_2", "name": "multiply", "input": {"a": 2, "b": 3}}
    ]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "call_1", "content": [{"type": "text", "text": "5"}]},
      {"type": "tool_result", "tool_use_id": "call_2", "content": [{"type": "text", "text": "no such operand"}], "is_error": true}
    ]},
    {"role": "user", "content": [{"type": "text", "text": "And the list tool?"}]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "call_3", "name": "ls", "input": {}}]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "call_3", "content": [{"type": "text", "text": "a.go\nb.go"}]}
    ]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "call_4", "name": "write", "input": {}}]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "call_4", "content": [{"type": "text", "text": "skipped: output limit"}], "is_error": true}
    ]}
  ],
  "tools": [
    {"name": "add", "description": "Add two integers.",
      "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}},
    {"name": "ls", "description": "List files.", "input_schema": {"type": "object", "properties": {}}}
  ]
}`

// ch05JSON returns v encoded and decoded again as plain JSON values (maps, slices, strings,
// float64), the way the provider's server reads it.
func ch05JSON(t *testing.T, v any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding the body: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, data)
	}
	return out
}

// ch05Roles lists the roles of a decoded "messages" array.
func ch05Roles(messages []any) []string {
	var roles []string
	for _, m := range messages {
		role, _ := m.(map[string]any)["role"].(string)
		roles = append(roles, role)
	}
	return roles
}

// ch05CompareBody compares a request body with a golden JSON text, both as decoded JSON values.
// It reports the first difference in domain words: the roles of the messages, then each
// message, then the rest of the body.
func ch05CompareBody(t *testing.T, vendor, golden string, body any) {
	t.Helper()
	var want map[string]any
	if err := json.Unmarshal([]byte(golden), &want); err != nil {
		t.Fatalf("golden is not JSON: %v", err)
	}
	got := ch05JSON(t, body)
	wantMsgs, _ := want["messages"].([]any)
	gotMsgs, _ := got["messages"].([]any)
	delete(want, "messages")
	delete(got, "messages")
	if wantRoles, gotRoles := ch05Roles(wantMsgs), ch05Roles(gotMsgs); !slices.Equal(wantRoles, gotRoles) {
		t.Errorf("%s request: message roles %v, want %v", vendor, gotRoles, wantRoles)
	} else {
		for i := range wantMsgs {
			if diff := cmp.Diff(wantMsgs[i], gotMsgs[i]); diff != "" {
				t.Errorf("%s request: message %d (%s) (-golden +got):\n%s", vendor, i, wantRoles[i], diff)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s request body apart from the messages (-golden +got):\n%s", vendor, diff)
	}
}

func TestLab5_2_出站转换_OpenAIGolden(t *testing.T) {
	req := ch05Conversation()
	before := cloneProviderRequest(req)
	var body openAIChatRequest
	var err error
	runLab(t, func() { body, err = openAIRequestBody(ProviderConfig{Model: "gpt-test", MaxTokens: 1000}, req) })
	if err != nil {
		t.Fatalf("openAIRequestBody: %v", err)
	}
	ch05CompareBody(t, "OpenAI", ch05OpenAIGolden, body)
	if diff := cmp.Diff(before, req); diff != "" {
		t.Errorf("conversion changed the request (-before +after):\n%s", diff)
	}

	// Without a system prompt there is no system message: an empty one says nothing.
	runLab(t, func() {
		body, err = openAIRequestBody(ProviderConfig{Model: "m"}, Request{Messages: []Message{UserText("hi")}})
	})
	if roles := ch05Roles(ch05JSON(t, body)["messages"].([]any)); err != nil || !slices.Equal(roles, []string{"user"}) {
		t.Errorf("OpenAI request without a system prompt: message roles %v (error %v), want [user]: an empty system prompt is not sent", roles, err)
	}

	runLab(t, func() {
		_, err = openAIRequestBody(ProviderConfig{Model: "m"}, Request{Tools: []ToolDefinition{{Name: "bad", Parameters: "{not json"}}})
	})
	if err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("a tool schema that is not JSON: error %v, want one naming the tool", err)
	}
}

// ch05EmptyTextBlock returns a decoded message as text when it has a text block with empty text
// (also inside a tool result), else "".
func ch05EmptyTextBlock(message any) string {
	var walk func(blocks any) bool
	walk = func(blocks any) bool {
		list, _ := blocks.([]any)
		for _, b := range list {
			block, _ := b.(map[string]any)
			if text, _ := block["text"].(string); block["type"] == "text" && text == "" {
				return true
			}
			if walk(block["content"]) {
				return true
			}
		}
		return false
	}
	if !walk(message.(map[string]any)["content"]) {
		return ""
	}
	data, _ := json.Marshal(message)
	return string(data)
}

func TestLab5_2_出站转换_AnthropicGolden(t *testing.T) {
	req := ch05Conversation()
	before := cloneProviderRequest(req)
	var body anthropicRequest
	var err error
	runLab(t, func() { body, err = anthropicRequestBody(ProviderConfig{Model: "claude-test", MaxTokens: 1000}, req) })
	if err != nil {
		t.Fatalf("anthropicRequestBody: %v", err)
	}
	ch05CompareBody(t, "Anthropic", ch05AnthropicGolden, body)
	if diff := cmp.Diff(before, req); diff != "" {
		t.Errorf("conversion changed the request (-before +after):\n%s", diff)
	}

	// The API rejects empty text blocks and messages without blocks: empty text is dropped,
	// and a message left with nothing to send is dropped too.
	runLab(t, func() {
		body, err = anthropicRequestBody(ProviderConfig{Model: "m"}, Request{Messages: []Message{
			UserMessage{Content: []ContentBlock{Text(""), Text("Hi")}},
			AssistantMessage{StopReason: StopReasonStop, Content: []ContentBlock{ThinkingContent{Thinking: "Nothing to say."}, Text("")}},
			UserText("Still there?"),
			AssistantMessage{StopReason: StopReasonToolUse, Content: []ContentBlock{Text(""), ToolCall{ID: "call_9", Name: "ls"}}},
			ToolResultMessage{ToolCallID: "call_9", ToolName: "ls", Content: []ContentBlock{Text("")}},
		}})
	})
	if err != nil {
		t.Fatalf("anthropicRequestBody with empty text: %v", err)
	}
	messages, _ := ch05JSON(t, body)["messages"].([]any)
	for i, m := range messages {
		if empty := ch05EmptyTextBlock(m); empty != "" {
			t.Errorf("Anthropic request has an empty text block; the API rejects it:\nmessage %d: %s", i, empty)
			break
		}
	}
	if roles, want := ch05Roles(messages), []string{"user", "user", "assistant", "user"}; !slices.Equal(roles, want) {
		t.Errorf("Anthropic request: message roles %v, want %v: a message left without blocks is not sent", roles, want)
	}

	// Anthropic requires max_tokens: without one in the config, the default is sent.
	runLab(t, func() {
		body, err = anthropicRequestBody(ProviderConfig{Model: "m"}, Request{Messages: []Message{UserText("hi")}})
	})
	if err != nil || body.MaxTokens != DefaultAnthropicMaxTokens {
		t.Errorf("max_tokens without a config value: %d (error %v), want %d", body.MaxTokens, err, DefaultAnthropicMaxTokens)
	}
	runLab(t, func() {
		_, err = anthropicRequestBody(ProviderConfig{Model: "m"}, Request{Tools: []ToolDefinition{{Name: "bad", Parameters: "[1,"}}})
	})
	if err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("a tool schema that is not JSON: error %v, want one naming the tool", err)
	}
}

func TestLab5_2_出站转换_EnvConfig(t *testing.T) {
	clear := func() {
		for _, k := range []string{"TINYPI_API", "TINYPI_BASE_URL", "TINYPI_API_KEY", "TINYPI_MODEL", "TINYPI_MAX_TOKENS",
			"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"} {
			t.Setenv(k, "")
		}
	}
	tests := []struct {
		name    string
		env     map[string]string
		want    ProviderConfig
		wantErr string
	}{
		{"openai keys", map[string]string{"OPENAI_API_KEY": "sk-o", "OPENAI_BASE_URL": "http://localhost:8000/v1", "TINYPI_MODEL": "m1"},
			ProviderConfig{API: APIOpenAI, BaseURL: "http://localhost:8000/v1", APIKey: "sk-o", Model: "m1"}, ""},
		{"TINYPI_API_KEY wins", map[string]string{"OPENAI_API_KEY": "sk-o", "TINYPI_API_KEY": "sk-t", "TINYPI_MODEL": "m1"},
			ProviderConfig{API: APIOpenAI, APIKey: "sk-t", Model: "m1"}, ""},
		{"anthropic chosen", map[string]string{"TINYPI_API": "Anthropic", "ANTHROPIC_API_KEY": "sk-a", "TINYPI_MODEL": "claude-x", "TINYPI_MAX_TOKENS": "2048"},
			ProviderConfig{API: APIAnthropic, APIKey: "sk-a", Model: "claude-x", MaxTokens: 2048}, ""},
		{"only an anthropic key", map[string]string{"ANTHROPIC_API_KEY": "sk-a", "TINYPI_BASE_URL": "http://proxy"},
			ProviderConfig{API: APIAnthropic, APIKey: "sk-a", BaseURL: "http://proxy"}, ""},
		{"unknown API", map[string]string{"TINYPI_API": "gemini"}, ProviderConfig{}, "TINYPI_API"},
		{"bad max tokens", map[string]string{"TINYPI_MAX_TOKENS": "-3"}, ProviderConfig{}, "TINYPI_MAX_TOKENS"},
	}
	for _, tt := range tests {
		clear()
		for k, v := range tt.env {
			t.Setenv(k, v)
		}
		got, err := ProviderConfigFromEnv()
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want one mentioning %s", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b *http.Client) bool { return a == b })); diff != "" {
			t.Errorf("%s: config (-want +got):\n%s", tt.name, diff)
		}
	}

	// The configuration reaches the request body.
	clear()
	t.Setenv("TINYPI_API", "anthropic")
	t.Setenv("TINYPI_MODEL", "claude-x")
	t.Setenv("TINYPI_MAX_TOKENS", "2048")
	cfg, err := ProviderConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	var body anthropicRequest
	runLab(t, func() { body, err = anthropicRequestBody(cfg, Request{Messages: []Message{UserText("hi")}}) })
	if err != nil || body.Model != "claude-x" || body.MaxTokens != 2048 || !body.Stream {
		t.Errorf("body from env config: model %q max_tokens %d stream %v (error %v)", body.Model, body.MaxTokens, body.Stream, err)
	}
	var oaBody openAIChatRequest
	runLab(t, func() { oaBody, err = openAIRequestBody(cfg, Request{Messages: []Message{UserText("hi")}}) })
	if err != nil || oaBody.Model != "claude-x" || oaBody.MaxTokens != 2048 || !oaBody.Stream {
		t.Errorf("OpenAI body from env config: model %q max_tokens %d stream %v (error %v)", oaBody.Model, oaBody.MaxTokens, oaBody.Stream, err)
	}

	// NewProvider rejects what it cannot use.
	for _, bad := range []ProviderConfig{
		{API: APIOpenAI},
		{API: "gemini", Model: "m"},
		{API: APIOpenAI, Model: "m", BaseURL: "localhost:8080"},
	} {
		if _, err := NewProvider(bad); err == nil {
			t.Errorf("NewProvider(%+v) succeeded, want an error", bad)
		}
	}
}

// --- Lab 5.3: OpenAI stream normalisation -----------------------------------------------------

func TestLab5_3_OpenAI归一化_Recordings(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ch05ReplayRecordings(t, "5.3")
}

func TestLab5_3_OpenAI归一化_Events(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ch05CheckEndOrder(t)
	events, msg, _ := ch05Replay(t, APIOpenAI, ch05RecordingBody(t, "openai_chat_parallel_tool_calls.sse"))
	add := ToolCall{ID: "call_ehIWdjL1abZk1h8FWGLQ0Hie", Name: "add", Arguments: `{"a": 2, "b": 3}`}
	multiply := ToolCall{ID: "call_fBSgA47J5VeONggizTIvl7AH", Name: "multiply", Arguments: `{"a": 2, "b": 3}`}
	want := []AssistantEvent{
		StartEvent{},
		ToolCallDeltaEvent{ContentIndex: 0, Delta: `{"a"`},
		ToolCallDeltaEvent{ContentIndex: 0, Delta: `: 2, `},
		ToolCallDeltaEvent{ContentIndex: 0, Delta: `"b": 3`},
		ToolCallDeltaEvent{ContentIndex: 0, Delta: `}`},
		ToolCallDeltaEvent{ContentIndex: 1, Delta: `{"a"`},
		ToolCallDeltaEvent{ContentIndex: 1, Delta: `: 2, `},
		ToolCallDeltaEvent{ContentIndex: 1, Delta: `"b": 3`},
		ToolCallDeltaEvent{ContentIndex: 1, Delta: `}`},
		ToolCallEndEvent{ContentIndex: 0, ToolCall: add},
		ToolCallEndEvent{ContentIndex: 1, ToolCall: multiply},
		DoneEvent{Message: msg},
	}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// ch05CheckEndOrder checks that the toolcall_end events of many parallel calls come in content
// order. A map's iteration order is random in Go: ending the calls by ranging over the index map
// gives these twelve calls in content order seldom, and ten replays in a row practically never.
func ch05CheckEndOrder(t *testing.T) {
	t.Helper()
	const calls = 12
	var events []string
	var want []int
	for i := range calls {
		events = append(events, fmt.Sprintf(`data: {"id":"c9","model":"m9","choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"call_%d","type":"function","function":{"name":"ls","arguments":"{\"n\":%d}"}}]},"finish_reason":null}]}`, i, i, i))
		want = append(want, i)
	}
	events = append(events, `data: {"id":"c9","model":"m9","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, "data: [DONE]")
	body := ch05Body(events...)
	for range 10 {
		replayed, _, _ := ch05Replay(t, APIOpenAI, body)
		var ends []int
		for _, e := range replayed {
			if end, ok := e.(ToolCallEndEvent); ok {
				ends = append(ends, end.ContentIndex)
			}
		}
		if !slices.Equal(ends, want) {
			t.Fatalf("%d parallel calls: toolcall_end events out of content order:\ngot content indexes %v\nwant %v", calls, ends, want)
		}
	}
}

func TestLab5_3_OpenAI归一化_InterleavedIndex(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	chunk := func(delta string) string {
		return `data: {"id":"c1","model":"m1","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
	}
	body := ch05Body(
		": a comment before anything",
		chunk(`{"role":"assistant","content":null}`),
		chunk(`{"reasoning":"Two ","reasoning_details":[{"type":"reasoning.text","text":"Two "}]}`),
		chunk(`{"reasoning":"reads.","reasoning_details":[{"type":"reasoning.text","text":"reads."}]}`),
		chunk(`{"content":"On it."}`),
		chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":""}}]}`),
		chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"ls","arguments":"{\"path\""}}]}`),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}`),
		chunk(`{"tool_calls":[{"index":1,"function":{"arguments":":\".\"}"}}]}`),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"a.go\"}"}}]}`),
		`data: {"id":"c1","model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`data: {"id":"c1","model":"m1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4}}}`,
		`data: [DONE]`,
	)
	events, got, _ := ch05Replay(t, APIOpenAI, body)
	ends := ch05CheckEvents(t, "interleaved", events, got)
	got.Timestamp = 0
	want := AssistantMessage{
		ID: "c1", Model: "m1",
		Content: []ContentBlock{
			ThinkingContent{Thinking: "Two reads."},
			TextContent{Text: "On it."},
			ToolCall{ID: "call_a", Name: "read", Arguments: `{"path":"a.go"}`},
			ToolCall{ID: "call_b", Name: "ls", Arguments: `{"path":"."}`},
		},
		StopReason: StopReasonToolUse,
		Usage:      Usage{Input: 6, Output: 5, CacheRead: 4, Total: 15},
	}
	ch05CompareMessage(t, want, got)
	// Which calls end is checked here; their order is TestLab5_3_OpenAI归一化_Events's concern.
	if slices.Sort(ends); !slices.Equal(ends, []int{2, 3}) {
		t.Errorf("toolcall_end at %v, want [2 3]", ends)
	}
}

// ch05CompareMessage compares a decoded message with the expected one and reports the first
// difference in domain words: the kinds of content blocks, each block, the usage, the rest.
func ch05CompareMessage(t *testing.T, want, got AssistantMessage) {
	t.Helper()
	kinds := func(content []ContentBlock) []string {
		var out []string
		for _, b := range content {
			out = append(out, b.BlockType())
		}
		return out
	}
	if wantKinds, gotKinds := kinds(want.Content), kinds(got.Content); !slices.Equal(wantKinds, gotKinds) {
		t.Errorf("content blocks %v, want %v", gotKinds, wantKinds)
	} else {
		for i := range want.Content {
			if diff := cmp.Diff(want.Content[i], got.Content[i]); diff != "" {
				t.Errorf("content block %d (%s) (-want +got):\n%s", i, wantKinds[i], diff)
			}
		}
	}
	if got.Usage != want.Usage {
		t.Errorf("usage = %+v, want %+v", got.Usage, want.Usage)
	}
	got.Content, got.Usage, want.Content, want.Usage = nil, Usage{}, nil, Usage{}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("message apart from content and usage (-want +got):\n%s", diff)
	}
}

// --- Lab 5.4: Anthropic stream normalisation --------------------------------------------------

func TestLab5_4_Anthropic归一化_Recordings(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ch05ReplayRecordings(t, "5.4")
}

func TestLab5_4_Anthropic归一化_Events(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	events, msg, _ := ch05Replay(t, APIAnthropic, ch05RecordingBody(t, "anthropic_tool_use_single_sdkgo.sse"))
	text := func(s string) AssistantEvent { return TextDeltaEvent{ContentIndex: 0, Delta: s} }
	args := func(s string) AssistantEvent { return ToolCallDeltaEvent{ContentIndex: 1, Delta: s} }
	want := []AssistantEvent{
		StartEvent{},
		text("I'll"), text(" get"), text(" the current weather in"), text(" San Francisco for you in"), text(" Fahrenheit."),
		args(`{"city`), args(`": "S`), args(`an F`), args(`ra`), args(`ncisco`), args(`"`), args(`, "units"`),
		args(`: "fahr`), args(`enhei`), args(`t"}`),
		ToolCallEndEvent{ContentIndex: 1, ToolCall: ToolCall{
			ID: "toolu_01RaX2WYWRWCbaeFHssmGJXG", Name: "get_weather", Arguments: `{"city": "San Francisco", "units": "fahrenheit"}`,
		}},
		DoneEvent{Message: msg},
	}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestLab5_4_Anthropic归一化_ThinkingAndIndexes(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ev := func(typ, data string) string { return "event: " + typ + "\ndata: " + data }
	body := ch05Body(
		ev("message_start", `{"type":"message_start","message":{"id":"msg_1","model":"claude-x","usage":{"input_tokens":20,"cache_read_input_tokens":100,"output_tokens":1}}}`),
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`),
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}}`),
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"think."}}`),
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}`),
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
		ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"xyz"}}`),
		ev("content_block_stop", `{"type":"content_block_stop","index":1}`),
		ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"Ans"}}`),
		ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"wer"}}`),
		ev("content_block_stop", `{"type":"content_block_stop","index":2}`),
		ev("content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_1","name":"search","input":{}}}`),
		ev("content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"q\":"}}`),
		ev("ping", `{"type": "ping"}`),
		ev("content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"1}"}}`),
		ev("content_block_stop", `{"type":"content_block_stop","index":3}`),
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}`),
		ev("message_stop", `{"type":"message_stop"}`),
	)
	events, got, _ := ch05Replay(t, APIAnthropic, body)
	ends := ch05CheckEvents(t, "thinking", events, got)
	got.Timestamp = 0
	want := AssistantMessage{
		ID: "msg_1", Model: "claude-x",
		Content: []ContentBlock{
			ThinkingContent{Thinking: "Let me think."},
			TextContent{Text: "Answer"},
			ToolCall{ID: "toolu_1", Name: "search", Arguments: `{"q":1}`},
		},
		StopReason: StopReasonToolUse,
		Usage:      Usage{Input: 20, Output: 30, CacheRead: 100, Total: 150},
	}
	ch05CompareMessage(t, want, got)
	if !slices.Equal(ends, []int{2}) {
		t.Errorf("toolcall_end at %v, want [2]", ends)
	}
	var thinking int
	for _, e := range events {
		if e, ok := e.(ThinkingDeltaEvent); ok && e.ContentIndex == 0 {
			thinking++
		}
	}
	if thinking != 2 {
		t.Errorf("%d thinking deltas at index 0, want 2", thinking)
	}

	// A delta for a block that never started is a broken stream, not something to skip.
	body = ch05Body(
		ev("message_start", `{"type":"message_start","message":{"id":"msg_2","model":"claude-x","usage":{"input_tokens":5}}}`),
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`),
		ev("content_block_delta", `{"type":"content_block_delta","index":7,"delta":{"type":"text_delta","text":" from nowhere"}}`),
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`),
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`),
		ev("message_stop", `{"type":"message_stop"}`),
	)
	// The decoder is run directly: how the error ends the stream is lab 5.5's part.
	var end streamEnd
	runLab(t, func() {
		end = decodeAnthropicStream(bytes.NewReader(body), newStreamAssembler(NewAssistantStream()))
	})
	if end.Err == nil {
		t.Errorf("a content_block_delta for block 7, which never started: the decoder recorded no error\nend: %+v", end)
	}
}

// --- Lab 5.5: terminal states -----------------------------------------------------------------

func TestLab5_5_流终态_Recordings(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ch05ReplayRecordings(t, "5.5")
}

func TestLab5_5_流终态_LengthNeverToolUse(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, tc := range []struct {
		name, api string
		cut       int // content index of the cut-off call
	}{
		{"openai_chat_length_mid_tool_call_DERIVED.sse", APIOpenAI, 1},
		{"anthropic_max_tokens_partial_tool_use_NORMALIZED.sse", APIAnthropic, 1},
	} {
		events, msg, _ := ch05Replay(t, tc.api, ch05RecordingBody(t, tc.name))
		if _, ok := events[len(events)-1].(DoneEvent); !ok || msg.StopReason != StopReasonLength {
			t.Errorf("%s: ends with %s, stop reason %q; want done with length (never toolUse)", tc.name, events[len(events)-1].EventType(), msg.StopReason)
		}
		for _, e := range events {
			if end, ok := e.(ToolCallEndEvent); ok && end.ContentIndex == tc.cut {
				t.Errorf("%s: the cut-off call got a toolcall_end: its arguments are not complete", tc.name)
			}
		}
		calls := msg.ToolCalls()
		if len(calls) == 0 {
			t.Errorf("%s: the tool calls were dropped; keep them as received", tc.name)
			continue
		}
		cut := calls[len(calls)-1]
		if json.Valid([]byte(cut.Arguments)) {
			t.Errorf("%s: the cut-off arguments %q are valid JSON: they were repaired", tc.name, cut.Arguments)
		}
	}
}

func TestLab5_5_流终态_HTTPStatus(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, tc := range []struct {
		api    string
		status int
		body   string
		want   []string
	}{
		{APIOpenAI, 401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			[]string{"HTTP 401", "Incorrect API key provided"}},
		{APIAnthropic, 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			[]string{"HTTP 529", "Overloaded"}},
		{APIOpenAI, 502, `<html>bad gateway</html>`, []string{"HTTP 502", "bad gateway"}},
		{APIAnthropic, 500, ``, []string{"HTTP 500", "Internal Server Error"}},
	} {
		srv, _ := ch05Serve(t, tc.status, []byte(tc.body))
		events, msg := ch05Collect(t, ch05Provider(t, tc.api, srv).Stream(context.Background(), Request{Messages: []Message{UserText("hi")}}))
		srv.Close()
		if len(events) != 1 || msg.StopReason != StopReasonError {
			t.Errorf("%s %d: events %v, stop reason %q; want one error event", tc.api, tc.status, ch05Types(events), msg.StopReason)
		}
		for _, w := range tc.want {
			if !strings.Contains(msg.ErrorMessage, w) {
				t.Errorf("%s %d: error message %q does not contain %q", tc.api, tc.status, msg.ErrorMessage, w)
			}
		}
	}
}

func TestLab5_5_流终态_Cancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(ch05Body(`data: {"id":"c1","model":"m1","choices":[{"index":0,"delta":{"content":"Hel"}}]}`))
		w.(http.Flusher).Flush()
		select { // the model "thinks" until the client goes away
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()

	// The cancellation's cause belongs in the message: it says why the answer is partial.
	const why = "the user pressed Esc"
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stream := ch05Provider(t, APIOpenAI, srv).Stream(ctx, Request{Messages: []Message{UserText("hi")}})
	for e := range stream.All() {
		if _, ok := e.(TextDeltaEvent); ok {
			cancel(errors.New(why))
		}
	}
	events, msg := ch05Collect(t, stream)
	if msg.StopReason != StopReasonAborted || TextOf(msg.Content) != "Hel" {
		t.Errorf("after cancel: stop reason %q, text %q (events %v); want aborted with the partial text %q",
			msg.StopReason, TextOf(msg.Content), ch05Types(events), "Hel")
	}
	if !strings.Contains(msg.ErrorMessage, why) {
		t.Errorf("after cancel: error message does not carry the cancellation's cause %q:\n%q", why, msg.ErrorMessage)
	}

	// A context cancelled before the call: aborted, and nothing was streamed.
	done, cancelled := context.WithCancelCause(context.Background())
	cancelled(errors.New(why))
	events, msg = ch05Collect(t, ch05Provider(t, APIAnthropic, srv).Stream(done, Request{Messages: []Message{UserText("hi")}}))
	if msg.StopReason != StopReasonAborted || len(events) != 1 {
		t.Errorf("cancelled before the call: stop reason %q, events %v; want one error event, aborted", msg.StopReason, ch05Types(events))
	}
	if !strings.Contains(msg.ErrorMessage, why) {
		t.Errorf("cancelled before the call: error message does not carry the cancellation's cause %q:\n%q", why, msg.ErrorMessage)
	}
}

func TestLab5_5_流终态_Incomplete(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	oaText := `data: {"id":"c1","model":"m1","choices":[{"index":0,"delta":{"content":"partial"},"finish_reason":null}]}`
	anStart := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-x\",\"usage\":{\"input_tokens\":3}}}"
	anText := "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"partial\"}}"
	anDelta := "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}"
	oaStop := `data: {"id":"c1","model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	for _, tc := range []struct {
		name, api string
		body      []byte
		want      []string // the error message contains each
	}{
		// An incomplete stream's message names the marker that never came.
		{"openai body ends without finish_reason or [DONE]", APIOpenAI, ch05Body(oaText), []string{"incomplete stream", "finish_reason"}},
		// A chunk that is not JSON breaks the stream, even if a finish_reason follows; the
		// message carries the JSON error.
		{"openai chunk that is not JSON", APIOpenAI, ch05Body(oaText, "data: {not json", oaStop, "data: [DONE]"), []string{"invalid character"}},
		{"openai unknown finish_reason", APIOpenAI,
			ch05Body(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}`, "data: [DONE]"), []string{"content_filter"}},
		{"anthropic body ends without message_stop", APIAnthropic, ch05Body(anStart, anText, anDelta), []string{"incomplete stream", "message_stop"}},
		{"anthropic empty body", APIAnthropic, nil, []string{"incomplete stream", "message_stop"}},
	} {
		events, msg, _ := ch05Replay(t, tc.api, tc.body)
		if _, ok := events[len(events)-1].(ErrorEvent); !ok || msg.StopReason != StopReasonError {
			t.Errorf("%s: ends with %s, stop reason %q; want an error event", tc.name, events[len(events)-1].EventType(), msg.StopReason)
		}
		if !strings.Contains(msg.ErrorMessage, tc.want[0]) {
			t.Errorf("%s: error message does not contain %q:\n%q", tc.name, tc.want[0], msg.ErrorMessage)
		} else if len(tc.want) > 1 && !strings.Contains(msg.ErrorMessage, tc.want[1]) {
			t.Errorf("%s: error message does not name the missing marker %q:\n%q", tc.name, tc.want[1], msg.ErrorMessage)
		}
		if strings.HasPrefix(tc.name, "openai body") || strings.HasPrefix(tc.name, "anthropic body") {
			if TextOf(msg.Content) != "partial" {
				t.Errorf("%s: partial text %q, want %q", tc.name, TextOf(msg.Content), "partial")
			}
		}
	}
}
