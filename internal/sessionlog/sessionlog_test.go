package sessionlog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/sessionlog"
	"github.com/learn-tinypi/course/solutions/tinypi"
)

// The lines of a small, valid log: a question, a read call c1, its result, the answer.
const (
	header    = `{"format":"tinypi-session","version":1,"session":"t"}`
	user      = `{"type":"user/message","seq":0,"time":"2026-12-01T10:00:00Z","data":{"message":{"role":"user","content":[{"type":"text","text":"读 README.md"}]}}}`
	request1  = `{"type":"model/request","seq":1,"data":{"throughSeq":0,"messages":1}}`
	assistant = `{"type":"assistant/message","seq":2,"data":{"message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":"{\"path\":\"README.md\"}"}],"stopReason":"toolUse"}}}`
	call      = `{"type":"tool/call","seq":3,"data":{"callId":"c1","name":"read","arguments":"{\"path\":\"README.md\"}"}}`
	start     = `{"type":"tool/start","seq":4,"data":{"callId":"c1","name":"read"},"sourceEventSeqs":[3]}`
	result    = `{"type":"tool/result","seq":4,"data":{"message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"# tiny-pi"}]}},"sourceEventSeqs":[3]}`
	request2  = `{"type":"model/request","seq":5,"data":{"throughSeq":4,"messages":3}}`
	answer    = `{"type":"assistant/message","seq":6,"data":{"message":{"role":"assistant","content":[{"type":"text","text":"项目叫 tiny-pi。"}],"stopReason":"stop"}}}`
)

// loaded is a log with all its events read, as the tests look at them.
type loaded struct {
	*sessionlog.Log
	Events []sessionlog.Event
}

// readFile reads the log at path and all its events; a nil *loaded when ReadFile gives no log.
func readFile(t *testing.T, path string) (*loaded, error) {
	t.Helper()
	log, err := sessionlog.ReadFile(context.Background(), path, sessionlog.Options{})
	if log == nil {
		return nil, err
	}
	events, eventsErr := log.Events(context.Background(), 0, log.Len())
	require.NoError(t, eventsErr)
	return &loaded{log, events}, err
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func read(t *testing.T, text string) (*loaded, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return readFile(t, path)
}

func TestReadValid(t *testing.T) {
	log, err := read(t, lines(header, user, request1, assistant, call, result, request2, answer))
	require.NoError(t, err)
	assert.Equal(t, sessionlog.Header{Format: "tinypi-session", Version: 1, Session: "t"}, log.Header)
	require.Len(t, log.Events, 7)
	var types []sessionlog.Type
	for i, e := range log.Events {
		assert.Equal(t, i, e.Seq)
		assert.Equal(t, i+2, e.Line)
		types = append(types, e.Type)
	}
	assert.Equal(t, []sessionlog.Type{"user/message", "model/request", "assistant/message", "tool/call", "tool/result", "model/request", "assistant/message"}, types)
	assert.Equal(t, &sessionlog.Call{CallID: "c1", Name: "read", Arguments: `{"path":"README.md"}`}, log.Events[3].Call)
	assert.Equal(t, &sessionlog.Request{ThroughSeq: 4, Messages: 3}, log.Events[5].Request)
	assert.Equal(t, []int{3}, log.Events[4].SourceEventSeqs)
	assert.Equal(t, "2026-12-01T10:00:00Z", log.Events[0].Time.Format("2006-01-02T15:04:05Z07:00"))
}

// renumber sets the seq of an event line; the lines above keep their own.
func renumber(line string, from, to int) string {
	return strings.Replace(line, fmt.Sprintf(`"seq":%d`, from), fmt.Sprintf(`"seq":%d`, to), 1)
}

func TestReadToolStart(t *testing.T) {
	// The chapter-10 order: the call, its start, its result (one seq later than above), then a
	// request that runs through the result.
	request := `{"type":"model/request","seq":6,"data":{"throughSeq":5,"messages":3}}`
	log, err := read(t, lines(header, user, request1, assistant, call, start, renumber(result, 4, 5), request))
	require.NoError(t, err)
	require.Len(t, log.Events, 7)
	e := log.Events[4]
	assert.Equal(t, sessionlog.TypeToolStart, e.Type)
	assert.Equal(t, &sessionlog.Call{CallID: "c1", Name: "read"}, e.Call)
	assert.Equal(t, []int{3}, e.SourceEventSeqs)
	assert.Nil(t, e.Message)
	assert.True(t, sessionlog.TypeToolStart.Known())
	assert.Len(t, sessionlog.DeriveMessages(log.Events), 3, "a tool/start derives no message")
}

func TestReadForkHeader(t *testing.T) {
	log, err := read(t, lines(`{"format":"tinypi-session","version":1,"session":"b","parent":"a","forkSeq":0}`, `{"type":"turn/end","seq":0,"data":{"turn":1}}`))
	require.NoError(t, err)
	forkSeq := 0
	assert.Equal(t, sessionlog.Header{Format: "tinypi-session", Version: 1, Session: "b", Parent: "a", ForkSeq: &forkSeq}, log.Header)
}

func TestReadRequestBeforeAnyEvent(t *testing.T) {
	log, err := read(t, lines(header, `{"type":"model/request","seq":0,"data":{"throughSeq":-1,"messages":0}}`))
	require.NoError(t, err)
	assert.Equal(t, &sessionlog.Request{ThroughSeq: -1, Messages: 0}, log.Events[0].Request)
}

func TestReadIgnorableUnknownType(t *testing.T) {
	progress := `{"type":"tool/progress","seq":1,"ignorable":true,"data":{"callId":"c1"}}`
	log, err := read(t, lines(header, user, progress))
	require.NoError(t, err)
	require.Len(t, log.Events, 2)
	assert.Equal(t, sessionlog.Type("tool/progress"), log.Events[1].Type)
	assert.True(t, log.Events[1].Ignorable)
	assert.Len(t, sessionlog.DeriveMessages(log.Events), 1)
}

func TestReadDamage(t *testing.T) {
	tests := []struct {
		name string
		text string
		want sessionlog.Error // Path is filled in by the test
		// intact is the number of events a torn log still returns; -1 when no log comes back.
		intact int
		// detail is a part of Error.Detail; empty: not checked.
		detail string
	}{
		{
			name:   "torn last line",
			text:   lines(header, user, request1) + `{"type":"assistant/mess`,
			want:   sessionlog.Error{Kind: sessionlog.KindTorn, Line: 4, Intact: 2, Unterminated: true},
			intact: 2,
		},
		{
			// tinypi.LoadSession cuts a last line without its "\n" even when it is whole JSON.
			name:   "last line without its newline",
			text:   lines(header, user) + strings.TrimSuffix(lines(request1), "\n"),
			want:   sessionlog.Error{Kind: sessionlog.KindTorn, Line: 3, Intact: 1, Unterminated: true},
			intact: 1,
			detail: "does not end with a newline",
		},
		{
			name:   "torn header",
			text:   `{"format":"tinypi-ses`,
			want:   sessionlog.Error{Kind: sessionlog.KindTorn, Line: 1},
			intact: -1,
		},
		{
			name:   "one line that is not a log",
			text:   "keep\n",
			want:   sessionlog.Error{Kind: sessionlog.KindHeader, Line: 1},
			intact: -1,
		},
		{
			name:   "bad JSON before the last line",
			text:   lines(header, user, `{"type":"model/request","seq":1,`, assistant),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 3},
			intact: -1,
		},
		{
			name:   "blank line in the middle",
			text:   lines(header, user, "", request1),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 3},
			intact: -1,
		},
		{
			name:   "no seq",
			text:   lines(header, `{"type":"turn/start","data":{}}`),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 2},
			intact: -1,
		},
		{
			name:   "unknown type not ignorable",
			text:   lines(header, user, `{"type":"tool/progress","seq":1,"data":{}}`),
			want:   sessionlog.Error{Kind: sessionlog.KindUnknownType, Line: 3, Type: "tool/progress"},
			intact: -1,
		},
		{
			name:   "seq skips one",
			text:   lines(header, user, strings.Replace(request1, `"seq":1`, `"seq":2`, 1)),
			want:   sessionlog.Error{Kind: sessionlog.KindSeq, Line: 3, Seq: 2, WantSeq: 1},
			intact: -1,
		},
		{
			name:   "seq repeats",
			text:   lines(header, user, strings.Replace(request1, `"seq":1`, `"seq":0`, 1)),
			want:   sessionlog.Error{Kind: sessionlog.KindSeq, Line: 3, Seq: 0, WantSeq: 1},
			intact: -1,
		},
		{
			name:   "another version",
			text:   lines(`{"format":"tinypi-session","version":2}`, user),
			want:   sessionlog.Error{Kind: sessionlog.KindVersion, Line: 1, Version: 2},
			intact: -1,
		},
		{
			name:   "another format",
			text:   lines(`{"format":"tinypi-record","version":1}`, user),
			want:   sessionlog.Error{Kind: sessionlog.KindHeader, Line: 1},
			intact: -1,
		},
		{
			name:   "empty file",
			text:   "",
			want:   sessionlog.Error{Kind: sessionlog.KindHeader, Line: 1},
			intact: -1,
		},
		{
			name:   "result refers to no call",
			text:   lines(header, user, request1, assistant, strings.Replace(result, `"seq":4`, `"seq":3`, 1), answer),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 5},
			intact: -1,
		},
		{
			name:   "result of another call",
			text:   lines(header, user, request1, assistant, call, strings.Replace(result, `"toolCallId":"c1"`, `"toolCallId":"c2"`, 1), answer),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 6},
			intact: -1,
		},
		{
			name:   "request count does not match the log",
			text:   lines(header, user, request1, assistant, call, result, strings.Replace(request2, `"messages":3`, `"messages":2`, 1), answer),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 7},
			intact: -1,
		},
		{
			name:   "request through -2",
			text:   lines(header, `{"type":"model/request","seq":0,"data":{"throughSeq":-2,"messages":0}}`, user),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 2},
			intact: -1,
			detail: `model/request throughSeq -2, want an earlier event (-1 to -1)`,
		},
		{
			name:   "request before any event that counts a message",
			text:   lines(header, `{"type":"model/request","seq":0,"data":{"throughSeq":-1,"messages":1}}`, user),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 2},
			intact: -1,
			detail: `model/request says 1 messages, but the events through seq -1 derive 0`,
		},
		{
			name:   "start without sourceEventSeqs",
			text:   lines(header, user, request1, assistant, call, strings.Replace(start, `,"sourceEventSeqs":[3]`, "", 1), answer),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 6},
			intact: -1,
			detail: `tool/start needs sourceEventSeqs [seq of its tool/call], has []`,
		},
		{
			name:   "start refers to no call",
			text:   lines(header, user, request1, assistant, call, strings.Replace(start, `[3]`, `[2]`, 1), answer),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 6},
			intact: -1,
			detail: `tool/start refers to seq 2, which is not an earlier tool/call`,
		},
		{
			name:   "start of another call",
			text:   lines(header, user, request1, assistant, call, strings.Replace(start, `"callId":"c1"`, `"callId":"c2"`, 1), answer),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 6},
			intact: -1,
			detail: `tool/start of read "c2" refers to seq 3, the tool/call of read "c1"`,
		},
		{
			name:   "start without a name",
			text:   lines(header, user, request1, assistant, call, strings.Replace(start, `,"name":"read"`, "", 1), answer),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 6},
			intact: -1,
			detail: `tool/start needs data {"callId","name"}`,
		},
		{
			name:   "second start of a call",
			text:   lines(header, user, request1, assistant, call, start, renumber(start, 4, 5), answer),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 7},
			intact: -1,
			detail: `a second tool/start for the tool/call at seq 3`,
		},
		{
			name:   "start after the result",
			text:   lines(header, user, request1, assistant, call, result, renumber(start, 4, 5), answer),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 7},
			intact: -1,
			detail: `a tool/start for the tool/call at seq 3 after its result`,
		},
		{
			name:   "user/message holding an assistant message",
			text:   lines(header, strings.Replace(user, `"role":"user"`, `"role":"assistant"`, 1), request1),
			want:   sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 2},
			intact: -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, err := read(t, tt.text)
			var got *sessionlog.Error
			require.ErrorAs(t, err, &got)
			assert.NotEmpty(t, got.Detail)
			assert.Contains(t, got.Detail, tt.detail)
			assert.Equal(t, "run.jsonl", filepath.Base(got.Path))
			if got.Line >= 1 {
				// Offset is where the damaged line starts: the bytes of the lines before it.
				before := strings.SplitAfter(tt.text, "\n")[:got.Line-1]
				assert.Equal(t, int64(len(strings.Join(before, ""))), got.Offset, "offset of line %d", got.Line)
			}
			got.Detail, got.Path, got.Offset = "", "", 0
			assert.Equal(t, tt.want, *got)
			if tt.intact < 0 {
				assert.Nil(t, log)
			} else {
				require.NotNil(t, log)
				assert.Len(t, log.Events, tt.intact)
			}
		})
	}
}

func TestErrorExplain(t *testing.T) {
	e := &sessionlog.Error{Kind: sessionlog.KindTorn, Path: "sessions/a.jsonl", Line: 10, Intact: 8}
	what, fix := e.Explain(i18n.EN)
	assert.Equal(t, "line 10 (the last line) is incomplete: writing stopped in the middle of it (the process was interrupted, for example). The 8 events before it are intact.", what)
	// head and mv work alike on Linux and macOS (sed -i does not: BSD sed wants an argument).
	assert.Equal(t, "delete line 10, keeping the first 9 lines: head -n 9 sessions/a.jsonl > sessions/a.jsonl.tmp && mv sessions/a.jsonl.tmp sessions/a.jsonl; or run again.", fix)
	e.Unterminated, e.Path = true, "my logs/it's.jsonl"
	_, fix = e.Explain(i18n.ZH)
	assert.Equal(t, `tinypi 的 LoadSession 下次加载这个会话时会自己截掉第 10 行。要自己截掉，保留前 9 行：head -n 9 'my logs/it'\''s.jsonl' > 'my logs/it'\''s.jsonl.tmp' && mv 'my logs/it'\''s.jsonl.tmp' 'my logs/it'\''s.jsonl'；或者重新运行一次。`, fix)
	what, _ = (&sessionlog.Error{Kind: sessionlog.KindSeq, Line: 7, Seq: 6, WantSeq: 5}).Explain(i18n.ZH)
	assert.Equal(t, "第 7 行的 seq 是 6，应为 5：seq 是它之前的事件数，必须连续。有事件丢失、重复或顺序被打乱。", what)
	assert.Equal(t, "session log sessions/a.jsonl: line 10: torn: cut", (&sessionlog.Error{Kind: sessionlog.KindTorn, Path: "sessions/a.jsonl", Line: 10, Detail: "cut"}).Error())
}

func TestErrorExplainEveryKind(t *testing.T) {
	for _, k := range []sessionlog.Kind{sessionlog.KindTorn, sessionlog.KindDamaged, sessionlog.KindUnknownType, sessionlog.KindSeq,
		sessionlog.KindHeader, sessionlog.KindVersion, sessionlog.KindBOM, sessionlog.KindLongLine, sessionlog.KindNotRegular, sessionlog.KindTooLarge} {
		for _, lang := range []string{i18n.ZH, i18n.EN} {
			for _, intact := range []int{0, 1, 2} {
				what, fix := (&sessionlog.Error{Kind: k, Line: 3, Detail: "x", Intact: intact}).Explain(lang)
				for _, s := range []string{what, fix} {
					assert.NotEmpty(t, s, "kind %s, %s", k, lang)
					assert.NotContains(t, s, "!", "kind %s, %s: a missing message", k, lang)
					assert.NotContains(t, s, "%!", "kind %s, %s: a bad verb", k, lang)
					// A learner reads this in a practice directory, which has no docs/ (issue 18).
					assert.NotContains(t, s, "docs/", "kind %s, %s: points at the kit's docs", k, lang)
					assert.NotContains(t, s, "sed -i", "kind %s, %s: GNU-only", k, lang)
				}
				if lang == i18n.EN && intact == 1 {
					assert.NotContains(t, what, "1 events", "kind %s: the plural of one", k)
				}
			}
		}
	}
}

func TestDeriveMessages(t *testing.T) {
	u := tinypi.UserMessage{Content: []tinypi.ContentBlock{tinypi.Text("读 README.md")}}
	a := tinypi.AssistantMessage{Content: []tinypi.ContentBlock{tinypi.ToolCall{ID: "c1", Name: "read", Arguments: `{}`}}, StopReason: tinypi.StopReasonToolUse}
	r := tinypi.ToolResultMessage{ToolCallID: "c1", ToolName: "read", Content: []tinypi.ContentBlock{tinypi.Text("# tiny-pi")}}
	tests := []struct {
		name   string
		events []sessionlog.Event
		want   []tinypi.Message
	}{
		{name: "no events", events: nil, want: nil},
		{name: "only bookkeeping", events: []sessionlog.Event{
			{Type: sessionlog.TypeTurnStart}, {Type: sessionlog.TypeToolCall, Call: &sessionlog.Call{CallID: "c1"}},
			{Type: sessionlog.TypeModelRequest, Request: &sessionlog.Request{}}, {Type: "x/y", Ignorable: true}, {Type: sessionlog.TypeTurnEnd},
		}, want: nil},
		{name: "messages in log order, bookkeeping skipped", events: []sessionlog.Event{
			{Type: sessionlog.TypeTurnStart},
			{Type: sessionlog.TypeUserMessage, Message: u},
			{Type: sessionlog.TypeModelRequest, Request: &sessionlog.Request{}},
			{Type: sessionlog.TypeAssistantMessage, Message: a},
			{Type: sessionlog.TypeToolCall, Call: &sessionlog.Call{CallID: "c1"}},
			{Type: sessionlog.TypeToolResult, Message: r, SourceEventSeqs: []int{4}},
		}, want: []tinypi.Message{u, a, r}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, sessionlog.DeriveMessages(tt.events))
		})
	}
}

func TestErrorMessagesAgree(t *testing.T) {
	assert.Empty(t, sessionlog.CatalogProblems())
}

// LineSize and LinePrefix give a line's length and its start as the file holds it, undecoded;
// a file replaced since the read gives ErrChanged.
func TestLinePrefix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(header+"\n"+user+"\n"+request1+"\r\n"), 0o644))
	log, err := sessionlog.ReadFile(context.Background(), path, sessionlog.Options{})
	require.NoError(t, err)
	assert.Equal(t, len(user), log.LineSize(0))
	assert.Equal(t, len(request1)+1, log.LineSize(1), "with its \\r, without its \\n")
	got, err := log.LinePrefix(context.Background(), 0, 20)
	require.NoError(t, err)
	assert.Equal(t, `{"type":"user/messag`, string(got))
	got, err = log.LinePrefix(context.Background(), 1, 1000)
	require.NoError(t, err)
	assert.Equal(t, request1, string(got), "a line shorter than n comes whole, without its \\r\\n")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = log.LinePrefix(ctx, 0, 20)
	assert.ErrorIs(t, err, context.Canceled)

	require.NoError(t, os.Remove(path))
	require.NoError(t, os.WriteFile(path, []byte(header+"\n"+user+"\n"+request1+"\n"), 0o644))
	_, err = log.LinePrefix(context.Background(), 0, 20)
	assert.ErrorIs(t, err, sessionlog.ErrChanged)
}
