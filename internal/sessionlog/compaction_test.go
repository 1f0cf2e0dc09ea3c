package sessionlog_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/sessionlog"
	"github.com/learn-tinypi/course/solutions/tinypi"
)

// A log of chapter 11: the README round trip (seq 0-8), a second prompt (9), a threshold
// compaction that keeps the history from that prompt on (10), a request after it (11), the
// answer (12), a third prompt (13), a manual compaction without a time that keeps from there
// (14) and a request after it (15).
var compacted = []string{
	header,
	`{"type":"turn/start","seq":0,"data":{"turn":1}}`,
	`{"type":"user/message","seq":1,"data":{"message":{"role":"user","content":[{"type":"text","text":"读 README.md"}]}}}`,
	`{"type":"model/request","seq":2,"data":{"throughSeq":1,"messages":1}}`,
	`{"type":"assistant/message","seq":3,"data":{"message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":"{\"path\":\"README.md\"}"}],"stopReason":"toolUse"}}}`,
	`{"type":"tool/call","seq":4,"data":{"callId":"c1","name":"read","arguments":"{\"path\":\"README.md\"}"}}`,
	`{"type":"tool/result","seq":5,"data":{"message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"# tiny-pi"}]}},"sourceEventSeqs":[4]}`,
	`{"type":"model/request","seq":6,"data":{"throughSeq":5,"messages":3}}`,
	`{"type":"assistant/message","seq":7,"data":{"message":{"role":"assistant","content":[{"type":"text","text":"项目叫 tiny-pi。"}],"stopReason":"stop"}}}`,
	`{"type":"turn/end","seq":8,"data":{"turn":1,"reason":"stop"}}`,
	`{"type":"user/message","seq":9,"data":{"message":{"role":"user","content":[{"type":"text","text":"再读 go.mod"}]}}}`,
	`{"type":"compaction","seq":10,"time":"2026-12-01T10:01:00.25Z","data":{"summary":"用户让我读 README.md；项目叫 tiny-pi。","firstKeptSeq":9,"tokensBefore":53000,"reason":"threshold","readFiles":["README.md"],"changedFiles":[]}}`,
	`{"type":"model/request","seq":11,"data":{"throughSeq":10,"messages":2}}`,
	`{"type":"assistant/message","seq":12,"data":{"message":{"role":"assistant","content":[{"type":"text","text":"go.mod 说 module tinypi。"}],"stopReason":"stop"}}}`,
	`{"type":"user/message","seq":13,"data":{"message":{"role":"user","content":[{"type":"text","text":"还有什么？"}]}}}`,
	`{"type":"compaction","seq":14,"data":{"summary":"读了 README.md 和 go.mod。\n写了 notes.md。","firstKeptSeq":13,"tokensBefore":0,"reason":"manual","readFiles":["README.md","go.mod"],"changedFiles":["notes.md"]}}`,
	`{"type":"model/request","seq":15,"data":{"throughSeq":14,"messages":2}}`,
}

// The summary messages of the two compactions, spelled out.
var (
	summary10 = tinypi.UserMessage{Timestamp: 1796119260250, Content: []tinypi.ContentBlock{tinypi.Text(
		"The conversation before this point was compacted into the summary below.\n\n<summary>\n用户让我读 README.md；项目叫 tiny-pi。\n</summary>\n\nFiles read: README.md\nFiles changed: (none)")}}
	summary14 = tinypi.UserMessage{Timestamp: 0, Content: []tinypi.ContentBlock{tinypi.Text(
		"The conversation before this point was compacted into the summary below.\n\n<summary>\n读了 README.md 和 go.mod。\n写了 notes.md。\n</summary>\n\nFiles read: README.md, go.mod\nFiles changed: notes.md")}}
)

func TestReadCompaction(t *testing.T) {
	log, err := read(t, lines(compacted...))
	require.NoError(t, err)
	require.Len(t, log.Events, 16)
	e := log.Events[10]
	assert.Equal(t, sessionlog.TypeCompaction, e.Type)
	assert.True(t, sessionlog.TypeCompaction.Known())
	assert.Nil(t, e.Message, "a compaction holds no message of its own")
	assert.Equal(t, &sessionlog.Compaction{Summary: "用户让我读 README.md；项目叫 tiny-pi。", FirstKeptSeq: 9, TokensBefore: 53000,
		Reason: "threshold", ReadFiles: []string{"README.md"}, ChangedFiles: []string{}}, e.Compaction)
	assert.Equal(t, &sessionlog.Compaction{Summary: "读了 README.md 和 go.mod。\n写了 notes.md。", FirstKeptSeq: 13, TokensBefore: 0,
		Reason: "manual", ReadFiles: []string{"README.md", "go.mod"}, ChangedFiles: []string{"notes.md"}}, log.Events[14].Compaction)
	assert.Equal(t, sessionlog.TypeCompaction, log.TypeOf(14))

	// The message events are at seqs 1, 3, 5, 7, 9, 12, 13: positions 0 to 6.
	for seq, want := range map[int]int{-1: 0, 1: 1, 5: 3, 8: 4, 9: 5, 10: 2, 11: 2, 12: 3, 13: 4, 14: 2, 15: 2} {
		assert.Equal(t, want, log.MessagesThrough(seq), "messages through seq %d", seq)
	}
	assert.Equal(t, sessionlog.History{Compaction: -1, To: 5}, log.HistoryThrough(9))
	h := log.HistoryThrough(12)
	assert.Equal(t, sessionlog.History{Compaction: 10, FirstKept: 9, From: 4, To: 6}, h)
	assert.Equal(t, 3, h.Len())
	var seqs []int
	for i := range h.Len() {
		seqs = append(seqs, log.HistorySeq(h, i))
	}
	assert.Equal(t, []int{10, 9, 12}, seqs)
	h = log.HistoryThrough(15)
	assert.Equal(t, sessionlog.History{Compaction: 14, FirstKept: 13, From: 6, To: 7}, h)
	assert.Equal(t, 14, log.HistorySeq(h, 0))
	assert.Equal(t, 13, log.HistorySeq(h, 1))
	assert.Equal(t, 9, log.MessageSeq(4), "MessageSeq counts the log's message events, compacted or not")
}

func TestDeriveMessagesAfterACompaction(t *testing.T) {
	log, err := read(t, lines(compacted...))
	require.NoError(t, err)
	user9 := userText("再读 go.mod")
	answer12 := tinypi.AssistantMessage{Content: []tinypi.ContentBlock{tinypi.Text("go.mod 说 module tinypi。")}, StopReason: tinypi.StopReasonStop}
	user13 := userText("还有什么？")
	for through, want := range map[int][]tinypi.Message{
		9:  nil, // checked by length below: the chapter-10 projection
		10: {summary10, user9},
		12: {summary10, user9, answer12},
		13: {summary10, user9, answer12, user13},
		14: {summary14, user13},
		15: {summary14, user13},
	} {
		got := sessionlog.DeriveMessages(log.Events[:through+1])
		if want == nil {
			assert.Len(t, got, 5, "through seq %d", through)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("DeriveMessages through seq %d (-want +got):\n%s", through, diff)
		}
		// Every request of the log holds as many messages as DeriveMessages gives.
		assert.Equal(t, len(want), log.MessagesThrough(through), "through seq %d", through)
	}
	var seqs []int
	for _, e := range sessionlog.MessageEvents(log.Events) {
		seqs = append(seqs, e.Seq)
	}
	assert.Equal(t, []int{14, 13}, seqs, "the latest compaction, then the events from its cut on")

	// The events between the cut and the compaction are kept, in seq order, before those after it.
	overflow := []sessionlog.Event{
		{Seq: 0, Type: sessionlog.TypeUserMessage, Message: userText("a")},
		{Seq: 1, Type: sessionlog.TypeUserMessage, Message: userText("b")},
		{Seq: 2, Type: sessionlog.TypeModelRequest, Request: &sessionlog.Request{ThroughSeq: 1, Messages: 2}},
		{Seq: 3, Type: sessionlog.TypeCompaction, Compaction: &sessionlog.Compaction{Summary: "s", FirstKeptSeq: 1, Reason: "overflow"}},
		{Seq: 4, Type: sessionlog.TypeUserMessage, Message: userText("c")},
	}
	want := []tinypi.Message{
		tinypi.UserMessage{Content: []tinypi.ContentBlock{tinypi.Text("The conversation before this point was compacted into the summary below.\n\n<summary>\ns\n</summary>\n\nFiles read: (none)\nFiles changed: (none)")}},
		userText("b"), userText("c"),
	}
	if diff := cmp.Diff(want, sessionlog.DeriveMessages(overflow)); diff != "" {
		t.Errorf("DeriveMessages (-want +got):\n%s", diff)
	}
	assert.Nil(t, sessionlog.SummaryMessage(overflow[0]), "a user/message is no compaction")
}

func TestReadCompactionDamage(t *testing.T) {
	// Each line replaces the compaction at seq 10 (line 12); the request after it follows.
	data := func(d string) string { return `{"type":"compaction","seq":10,"data":` + d + `}` }
	tests := []struct{ name, line, detail string }{
		{"empty summary", data(`{"summary":"","firstKeptSeq":9,"tokensBefore":1,"reason":"threshold","readFiles":[],"changedFiles":[]}`),
			`compaction: the summary is empty`},
		{"no summary", data(`{"firstKeptSeq":9,"tokensBefore":1,"reason":"threshold","readFiles":[],"changedFiles":[]}`),
			`compaction: no "summary": the data needs "summary", "firstKeptSeq", "tokensBefore", "reason", "readFiles" and "changedFiles"`},
		{"summary not a string", data(`{"summary":["a"],"firstKeptSeq":9,"tokensBefore":1,"reason":"threshold","readFiles":[],"changedFiles":[]}`),
			`compaction: summary ["a"] is not a string`},
		{"unknown reason", data(`{"summary":"s","firstKeptSeq":9,"tokensBefore":1,"reason":"tired","readFiles":[],"changedFiles":[]}`),
			`compaction: reason "tired", want "threshold", "overflow" or "manual"`},
		{"no reason", data(`{"summary":"s","firstKeptSeq":9,"tokensBefore":1,"readFiles":[],"changedFiles":[]}`),
			`compaction: no "reason": the data needs "summary", "firstKeptSeq", "tokensBefore", "reason", "readFiles" and "changedFiles"`},
		{"negative tokensBefore", data(`{"summary":"s","firstKeptSeq":9,"tokensBefore":-1,"reason":"overflow","readFiles":[],"changedFiles":[]}`),
			`compaction: tokensBefore -1, want a number of tokens (0 or more)`},
		{"tokensBefore not a number", data(`{"summary":"s","firstKeptSeq":9,"tokensBefore":"many","reason":"overflow","readFiles":[],"changedFiles":[]}`),
			`compaction: tokensBefore "many", want a number of tokens (0 or more)`},
		{"no tokensBefore", data(`{"summary":"s","firstKeptSeq":9,"reason":"overflow","readFiles":[],"changedFiles":[]}`),
			`compaction: no "tokensBefore": `},
		{"firstKeptSeq its own seq", data(`{"summary":"s","firstKeptSeq":10,"tokensBefore":1,"reason":"manual","readFiles":[],"changedFiles":[]}`),
			`compaction: firstKeptSeq 10, want the seq of an earlier event (0 to 9)`},
		{"firstKeptSeq later", data(`{"summary":"s","firstKeptSeq":11,"tokensBefore":1,"reason":"manual","readFiles":[],"changedFiles":[]}`),
			`compaction: firstKeptSeq 11, want the seq of an earlier event (0 to 9)`},
		{"negative firstKeptSeq", data(`{"summary":"s","firstKeptSeq":-1,"tokensBefore":1,"reason":"manual","readFiles":[],"changedFiles":[]}`),
			`compaction: firstKeptSeq -1, want the seq of an earlier event (0 to 9)`},
		{"no firstKeptSeq", data(`{"summary":"s","tokensBefore":1,"reason":"manual","readFiles":[],"changedFiles":[]}`),
			`compaction: no "firstKeptSeq": `},
		{"no readFiles", data(`{"summary":"s","firstKeptSeq":9,"tokensBefore":1,"reason":"manual","changedFiles":[]}`),
			`compaction: no "readFiles": `},
		{"changedFiles null", data(`{"summary":"s","firstKeptSeq":9,"tokensBefore":1,"reason":"manual","readFiles":[],"changedFiles":null}`),
			`compaction: no "changedFiles": `},
		{"a file name that is no string", data(`{"summary":"s","firstKeptSeq":9,"tokensBefore":1,"reason":"manual","readFiles":["a.go",1],"changedFiles":[]}`),
			`compaction: readFiles ["a.go",1], want a list of file names (strings)`},
		{"files not a list", data(`{"summary":"s","firstKeptSeq":9,"tokensBefore":1,"reason":"manual","readFiles":[],"changedFiles":"a.go"}`),
			`compaction: changedFiles "a.go", want a list of file names (strings)`},
		{"an empty file name", data(`{"summary":"s","firstKeptSeq":9,"tokensBefore":1,"reason":"manual","readFiles":[],"changedFiles":["a.go",""]}`),
			`compaction: changedFiles[1] is an empty file name`},
		{"data not an object", data(`"compacted"`),
			`compaction: needs data {"summary","firstKeptSeq","tokensBefore","reason","readFiles","changedFiles"}`},
		{"no data", `{"type":"compaction","seq":10}`,
			`compaction: needs data {"summary","firstKeptSeq","tokensBefore","reason","readFiles","changedFiles"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := slices.Concat(compacted[:11], []string{tt.line}, []string{`{"type":"model/request","seq":11,"data":{"throughSeq":9,"messages":5}}`})
			log, err := read(t, lines(text...))
			assert.Nil(t, log)
			var got *sessionlog.Error
			require.ErrorAs(t, err, &got)
			assert.Equal(t, sessionlog.KindDamaged, got.Kind)
			assert.Equal(t, 12, got.Line)
			assert.Equal(t, "compaction", got.Type)
			assert.True(t, strings.HasPrefix(got.Detail, tt.detail), "detail %q, want it to start with %q", got.Detail, tt.detail)
		})
	}

	t.Run("at seq 0", func(t *testing.T) {
		_, err := read(t, lines(header, `{"type":"compaction","seq":0,"data":{"summary":"s","firstKeptSeq":0,"tokensBefore":1,"reason":"manual","readFiles":[],"changedFiles":[]}}`, compacted[2]))
		var got *sessionlog.Error
		require.ErrorAs(t, err, &got)
		assert.Equal(t, sessionlog.KindDamaged, got.Kind)
		assert.Equal(t, "compaction: a compaction at seq 0 has no earlier event to keep from (firstKeptSeq)", got.Detail)
	})

	t.Run("a request that counts the compacted messages", func(t *testing.T) {
		// Through seq 10 the log derives the summary and the prompt at seq 9, not the five
		// messages of seqs 1 to 9.
		text := slices.Concat(compacted[:12], []string{`{"type":"model/request","seq":11,"data":{"throughSeq":10,"messages":5}}`}, compacted[13:14])
		_, err := read(t, lines(text...))
		var got *sessionlog.Error
		require.ErrorAs(t, err, &got)
		assert.Equal(t, sessionlog.KindDamaged, got.Kind)
		assert.Equal(t, 13, got.Line)
		assert.Equal(t, "model/request says 5 messages, but the events through seq 10 derive 2", got.Detail)
	})
}

func TestCompactionDamageIsExplainedWithChapter11(t *testing.T) {
	e := &sessionlog.Error{Kind: sessionlog.KindDamaged, Line: 12, Type: "compaction", Detail: "compaction: the summary is empty"}
	what, fix := e.Explain(i18n.EN)
	assert.Equal(t, "line 12 is not a valid event: compaction: the summary is empty. The damage comes before the last line, so this is no interrupted write: the log was edited, or its writer has a bug.", what)
	assert.Equal(t, "correct line 12 against the format of the compaction event in chapter 11's text (course read 11), or fix the writer and run again.", fix)
	_, fix = e.Explain(i18n.ZH)
	assert.Equal(t, "对照第 11 章正文里 compaction 事件的格式（course read 11）修正第 12 行，或修好写入方后重新运行。", fix)
}

func TestCompactionTakesTheDefinedDecoder(t *testing.T) {
	line := compacted[11]
	_, ok := sessionlog.DecodeFast([]byte(line))
	assert.False(t, ok, "a compaction is decoded field by field by decodeSlow")
	e, err := sessionlog.DecodeSlow([]byte(line))
	require.NoError(t, err)
	assert.Equal(t, 9, e.Compaction.FirstKeptSeq)
	assert.JSONEq(t, `{"summary":"用户让我读 README.md；项目叫 tiny-pi。","firstKeptSeq":9,"tokensBefore":53000,"reason":"threshold","readFiles":["README.md"],"changedFiles":[]}`, string(e.Data))
}

func TestVisitSeesCompactions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(lines(compacted...)), 0o644))
	var seen []int
	_, err := sessionlog.ReadFile(context.Background(), path, sessionlog.Options{Visit: func(e sessionlog.Event) {
		if e.Compaction != nil {
			seen = append(seen, e.Seq)
		}
	}})
	require.NoError(t, err)
	assert.Equal(t, []int{10, 14}, seen)
}
