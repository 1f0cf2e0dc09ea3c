package sessionlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/learn-tinypi/course/internal/hang"
	"github.com/learn-tinypi/course/internal/sessionlog"
	"github.com/learn-tinypi/course/solutions/tinypi"
)

// These tests read logs that the reference writer (solutions/tinypi) really wrote: the reader
// and the writer must agree on every line, not only on the hand-written lines above.

// files is the workspace of the fake read tool.
var files = map[string]string{
	"README.md": "# tiny-pi\nA small agent runtime.",
	"go.mod":    "module tinypi",
	"LICENSE":   "MIT",
}

// readTool reads files; reading go.mod waits until LICENSE has been read, so that in the
// parallel batch a later call finishes first and the commit cursor has to hold a result back.
func readTool(licenseRead chan struct{}) tinypi.Tool {
	return tinypi.Tool{
		ToolDefinition: tinypi.ToolDefinition{
			Name:        "read",
			Description: "reads a file of the workspace",
			Parameters:  `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		},
		Execute: func(ctx context.Context, args json.RawMessage, _ tinypi.ToolExecContext) (tinypi.ToolOutput, error) {
			var in struct{ Path string }
			if err := json.Unmarshal(args, &in); err != nil {
				return tinypi.ToolOutput{}, fmt.Errorf("read: %w", err)
			}
			switch in.Path {
			case "go.mod":
				select {
				case <-licenseRead:
				case <-ctx.Done():
					return tinypi.ToolOutput{}, ctx.Err()
				}
			case "LICENSE":
				defer close(licenseRead)
			}
			text, ok := files[in.Path]
			if !ok {
				return tinypi.ToolOutput{}, fmt.Errorf("read: %s: no such file", in.Path)
			}
			return tinypi.ToolOutput{Content: []tinypi.ContentBlock{tinypi.Text(text)}}, nil
		},
	}
}

func readCall(id, path string) tinypi.ToolCall {
	return tinypi.ToolCall{ID: id, Name: "read", Arguments: fmt.Sprintf(`{"path":%q}`, path)}
}

func userText(s string) tinypi.UserMessage {
	return tinypi.UserMessage{Content: []tinypi.ContentBlock{tinypi.Text(s)}}
}

// writeRoundTrip runs two prompts through an Agent whose session is a file at path: chapter 07's
// README round trip (one read, call c1), then a batch of three reads in parallel (c2, c3, c4;
// c4's file does not exist). It returns the messages the reference session derives.
func writeRoundTrip(t *testing.T, path string) []tinypi.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hang.Bound(time.Minute))
	defer cancel()
	registry, err := tinypi.NewRegistry(readTool(make(chan struct{})))
	require.NoError(t, err)
	model := tinypi.NewScriptedModel(
		tinypi.AssistantMessage{Content: []tinypi.ContentBlock{readCall("c1", "README.md")}, StopReason: tinypi.StopReasonToolUse},
		tinypi.AssistantMessage{Content: []tinypi.ContentBlock{tinypi.Text("The project is tiny-pi.")}, StopReason: tinypi.StopReasonStop},
		tinypi.AssistantMessage{Content: []tinypi.ContentBlock{readCall("c2", "go.mod"), readCall("c3", "LICENSE"), readCall("c4", "NOTES.md")}, StopReason: tinypi.StopReasonToolUse},
		tinypi.AssistantMessage{Content: []tinypi.ContentBlock{tinypi.Text("Module tinypi, MIT licensed, no notes.")}, StopReason: tinypi.StopReasonStop},
	)
	s, err := tinypi.CreateSession(tinypi.SessionOptions{ID: "roundtrip", Path: path})
	require.NoError(t, err)
	agent, err := tinypi.NewAgent(tinypi.AgentOptions{Model: model, Tools: registry, Session: s})
	require.NoError(t, err)
	for _, question := range []string{"Read README.md: what is the project called?", "Read go.mod, LICENSE and NOTES.md at once."} {
		require.NoError(t, agent.Prompt(ctx, userText(question)))
		require.NoError(t, agent.WaitForIdle(ctx))
	}
	require.Empty(t, agent.State().LastError)
	messages := s.Messages()
	require.NoError(t, s.Close())
	return messages
}

func marshal(t *testing.T, messages []tinypi.Message) string {
	t.Helper()
	data, err := tinypi.MarshalMessages(messages)
	require.NoError(t, err)
	return string(data)
}

func TestReadWhatTheReferenceWrites(t *testing.T) {
	defer goleak.VerifyNone(t)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	want := writeRoundTrip(t, path)

	log, err := readFile(t, path)
	require.NoError(t, err)
	assert.Equal(t, sessionlog.Header{Format: "tinypi-session", Version: 1, Session: "roundtrip"}, log.Header)
	assert.JSONEq(t, marshal(t, want), marshal(t, sessionlog.DeriveMessages(log.Events)))

	var types []sessionlog.Type
	for _, e := range log.Events {
		types = append(types, e.Type)
	}
	// The first prompt, event by event: the README round trip of chapter 07, logged.
	assert.Equal(t, []sessionlog.Type{
		"user/message", "turn/start", "model/request", "assistant/message", "tool/call", "tool/start", "tool/result", "turn/end",
		"turn/start", "model/request", "assistant/message", "turn/end",
	}, types[:12])
	// The batch: every tool/call before any tool runs. The starts interleave with the results
	// as the goroutines run, so only their counts are fixed.
	assert.Equal(t, []sessionlog.Type{"user/message", "turn/start", "model/request", "assistant/message", "tool/call", "tool/call", "tool/call"}, types[12:19])
	batch := types[19 : len(types)-5]
	assert.Equal(t, 3, count(batch, "tool/start"), "%v", batch)
	assert.Equal(t, 3, count(batch, "tool/result"), "%v", batch)
	assert.Equal(t, []sessionlog.Type{"turn/end", "turn/start", "model/request", "assistant/message", "turn/end"}, types[len(types)-5:])

	// Each result points at its own call; the results come in call order, each after its start.
	var resultIDs []string
	for _, e := range log.Events {
		switch e.Type {
		case sessionlog.TypeToolResult:
			src := log.Events[e.SourceEventSeqs[0]]
			id := e.Message.(tinypi.ToolResultMessage).ToolCallID
			assert.Equal(t, sessionlog.TypeToolCall, src.Type)
			assert.Equal(t, id, src.Call.CallID)
			resultIDs = append(resultIDs, id)
			started := slices.IndexFunc(log.Events, func(o sessionlog.Event) bool {
				return o.Type == sessionlog.TypeToolStart && o.Call.CallID == id
			})
			assert.True(t, started >= 0 && started < e.Seq, "the result of %s at seq %d, its start at %d", id, e.Seq, started)
		case sessionlog.TypeModelRequest:
			assert.Equal(t, e.Seq-1, e.Request.ThroughSeq, "the request at seq %d freezes the whole log before it", e.Seq)
		}
	}
	assert.Equal(t, []string{"c1", "c2", "c3", "c4"}, resultIDs)
	assert.Equal(t, &sessionlog.Call{CallID: "c1", Name: "read", Arguments: `{"path":"README.md"}`}, log.Events[4].Call)
	assert.Equal(t, &sessionlog.Call{CallID: "c1", Name: "read"}, log.Events[5].Call)
	assert.Equal(t, []int{4}, log.Events[5].SourceEventSeqs)
	assert.Equal(t, []int{4}, log.Events[6].SourceEventSeqs)
	assert.Equal(t, &sessionlog.Request{ThroughSeq: 8, Messages: 3}, log.Events[9].Request)
}

func count(types []sessionlog.Type, t sessionlog.Type) int {
	n := 0
	for _, x := range types {
		if x == t {
			n++
		}
	}
	return n
}

func TestReadAReferenceRequestBeforeAnyEvent(t *testing.T) {
	defer goleak.VerifyNone(t)
	path := filepath.Join(t.TempDir(), "empty.jsonl")
	s, err := tinypi.CreateSession(tinypi.SessionOptions{ID: "empty", Path: path})
	require.NoError(t, err)
	messages, err := s.ModelRequest(context.Background())
	require.NoError(t, err)
	assert.Empty(t, messages)
	require.NoError(t, s.Close())

	log, err := readFile(t, path)
	require.NoError(t, err)
	require.Len(t, log.Events, 1)
	assert.Equal(t, &sessionlog.Request{ThroughSeq: -1, Messages: 0}, log.Events[0].Request)
}

func TestReadAReferenceFork(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	writeRoundTrip(t, path)
	parent, _, err := tinypi.LoadSession(path, tinypi.SessionOptions{})
	require.NoError(t, err)
	defer parent.Close()
	// Fork after the first prompt's answer: seq 11 is its turn/end (see the event list above).
	fork, err := parent.Fork(11, tinypi.SessionOptions{ID: "branch", Path: filepath.Join(dir, "branch.jsonl")})
	require.NoError(t, err)
	_, err = fork.AppendMessage(userText("And its license?"))
	require.NoError(t, err)
	want := fork.Messages()
	require.NoError(t, fork.Close())

	log, err := readFile(t, filepath.Join(dir, "branch.jsonl"))
	require.NoError(t, err)
	forkSeq := 11
	assert.Equal(t, sessionlog.Header{Format: "tinypi-session", Version: 1, Session: "branch", Parent: "roundtrip", ForkSeq: &forkSeq}, log.Header)
	require.Len(t, log.Events, 13, "the whole branch from seq 0: 12 inherited events and the new question")
	assert.Equal(t, sessionlog.TypeTurnEnd, log.Events[11].Type)
	assert.JSONEq(t, marshal(t, want), marshal(t, sessionlog.DeriveMessages(log.Events)))
}

// TestReadersAgreeOnDamage feeds the same damaged copies of a reference log to this reader and to
// tinypi.LoadSession: a torn last line is cut by both (the same number of intact events), and
// damage before it is refused by both at the same line.
func TestReadersAgreeOnDamage(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	writeRoundTrip(t, filepath.Join(dir, "run.jsonl"))
	data, err := os.ReadFile(filepath.Join(dir, "run.jsonl"))
	require.NoError(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	lines = lines[:len(lines)-1]
	last := lines[len(lines)-1]
	join := func(ls ...[]byte) []byte { return bytes.Join(ls, nil) }
	events := len(lines) - 1
	tests := []struct {
		name string
		data []byte
		torn bool
		line int // the damaged line, counted from 1 with the header
	}{
		{name: "half a last line", data: data[:len(data)-len(last)/2], torn: true, line: len(lines)},
		{name: "a last line without its newline", data: data[:len(data)-1], torn: true, line: len(lines)},
		{name: "seq out of order", data: join(join(lines[:3]...), bytes.Replace(lines[3], []byte(`"seq":2`), []byte(`"seq":7`), 1), join(lines[4:]...)), line: 4},
		{name: "unknown type", data: join(join(lines[:3]...), bytes.Replace(lines[3], []byte(`"type":"model/request"`), []byte(`"type":"model/guess"`), 1), join(lines[4:]...)), line: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NotEqual(t, data, tt.data, "the damage must change the file")
			path := filepath.Join(t.TempDir(), "run.jsonl")
			require.NoError(t, os.WriteFile(path, tt.data, 0o644))

			log, kitErr := readFile(t, path)
			var le *sessionlog.Error
			require.ErrorAs(t, kitErr, &le)
			assert.Equal(t, tt.line, le.Line, "the kit's line")
			s, repair, err := tinypi.LoadSession(path, tinypi.SessionOptions{})
			if !tt.torn {
				assert.NotEqual(t, sessionlog.KindTorn, le.Kind)
				var de *tinypi.SessionDamageError
				require.ErrorAs(t, err, &de)
				assert.Equal(t, tt.line, de.Line, "LoadSession's line")
				return
			}
			require.NoError(t, err)
			defer s.Close()
			assert.Equal(t, sessionlog.KindTorn, le.Kind)
			require.NotNil(t, log)
			assert.Equal(t, events-1, le.Intact, "the header and the torn line are no intact events")
			assert.Len(t, log.Events, events-1, "the kit keeps the events before the torn line")
			assert.Equal(t, events-1, s.Len()-len(repair.Appended), "LoadSession keeps the events before the torn line")
			assert.Positive(t, repair.TornBytes)
		})
	}
}

// TestReadersShareTheLineLimit: a line LoadSession reads, the page reads too.
func TestReadersShareTheLineLimit(t *testing.T) {
	if sessionlog.MaxLineBytes != tinypi.DefaultMaxLineBytes {
		t.Errorf("sessionlog.MaxLineBytes = %d, tinypi.DefaultMaxLineBytes = %d: the kit would refuse logs the runtime loads, or read lines it refuses", sessionlog.MaxLineBytes, tinypi.DefaultMaxLineBytes)
	}
}

// TestReadAReferenceCompaction compacts a reference log (chapter 11) and reads it back: the
// reader derives the same messages as the writer, from the summary on.
func TestReadAReferenceCompaction(t *testing.T) {
	defer goleak.VerifyNone(t)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	writeRoundTrip(t, path)
	s, _, err := tinypi.LoadSession(path, tinypi.SessionOptions{})
	require.NoError(t, err)
	summary := tinypi.AssistantMessage{Content: []tinypi.ContentBlock{tinypi.Text("The user asked about README.md.")}, StopReason: tinypi.StopReasonStop}
	c, err := s.Compact(context.Background(), tinypi.CompactionOptions{Model: tinypi.NewScriptedModel(summary), KeepRecentTokens: 1}, tinypi.CompactionManual)
	require.NoError(t, err)
	_, err = s.AppendMessage(userText("And now?"))
	require.NoError(t, err)
	want := s.Messages()
	require.NoError(t, s.Close())

	log, err := readFile(t, path)
	require.NoError(t, err)
	assert.JSONEq(t, marshal(t, want), marshal(t, sessionlog.DeriveMessages(log.Events)))
	last := log.Events[len(log.Events)-2]
	require.Equal(t, sessionlog.Type("compaction"), last.Type)
	assert.Equal(t, marshal(t, want[:1]), marshal(t, []tinypi.Message{sessionlog.SummaryMessage(last)}))
	assert.Equal(t, 26, c.FirstKeptSeq, "the cut: the turn after the batch, the latest")
	assert.Equal(t, []string{"LICENSE", "README.md", "go.mod"}, c.ReadFiles, "the files read before the cut (NOTES.md failed)")
}
