package serve_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/serve"
)

// testdata/compacted.jsonl is a chapter-11 log: a first prompt and its answer (seq 0-4), a second
// prompt (5), a threshold compaction that keeps the history from that prompt on (7), then the
// log's only tool call, call-1 (10), its start and result (11, 12) and the request after it (15).
//
// testdata/compacted-result.jsonl is testdata/readme-session.jsonl through its second turn/start
// (seq 8), then a compaction that cuts there (9): the result of call-1 (6) is compacted before
// the request after it (10).

// The summary message of testdata/compacted.jsonl, as every stage's history starts with it.
var compactedSummary = serve.MessageView{Role: "user", Seq: 7, Summary: true, Label: "summary of seq 0–4",
	Blocks: []serve.BlockView{{Kind: "text", Text: "The conversation before this point was compacted into the summary below.\n\n<summary>\n用户问 tiny-pi 是什么；我答：一个用 Go 写的 agent 运行时。\n还没有读过文件。\n</summary>\n\nFiles read: (none)\nFiles changed: (none)"}}}

func eventAt(t *testing.T, v serve.View, seq int) serve.EventView {
	t.Helper()
	for _, e := range v.Events {
		if e.Seq == seq {
			return e
		}
	}
	t.Fatalf("no event at seq %d in the view", seq)
	return serve.EventView{}
}

func TestViewOfACallAfterACompaction(t *testing.T) {
	v := viewOf(t, serve.Options{Log: "testdata/compacted.jsonl", Lang: i18n.EN}, "/api/view")
	require.NotNil(t, v.Call)
	assert.Equal(t, serve.CallChoice{Seq: 10, CallID: "call-1", Name: "read"}, *v.Call)
	require.Len(t, v.Stages, 6)

	user := serve.MessageView{Role: "user", Seq: 5, Blocks: []serve.BlockView{{Kind: "text", Text: "读一下 README.md，告诉我项目名。"}}}
	asks := serve.MessageView{Role: "assistant", Seq: 9, Blocks: []serve.BlockView{{Kind: "text", Text: "我先读取 README.md。"}, {Kind: "call", Text: `read · call-1 · {"path":"README.md"}`}}}
	pending := serve.MessageView{Role: "toolResult", Seq: -1, Pending: true, Blocks: []serve.BlockView{{Kind: "text", Text: "the result of call-1 is not in the session yet"}}}
	result := serve.MessageView{Role: "toolResult", Seq: 12, Blocks: []serve.BlockView{{Kind: "ref", Text: "toolCallId = call-1"}, {Kind: "text", Text: "# tiny-pi\nA small agent runtime."}}}
	for i, want := range [][]serve.MessageView{
		{compactedSummary, user, asks, pending}, {compactedSummary, user, asks, pending}, {compactedSummary, user, asks, pending},
		{compactedSummary, user, asks, result}, {compactedSummary, user, asks, result}, {compactedSummary, user, asks, result},
	} {
		assert.Equal(t, want, v.Stages[i].History, "stage %d", i+1)
		assert.Zero(t, v.Stages[i].HistoryHidden, "stage %d", i+1)
	}
	assert.Equal(t, "what deriveMessages gives, the result of call-1 included. The compaction at seq 7 replaced the messages of the events before seq 5 with its summary, which comes first.", v.Stages[4].HistoryNote)

	e := eventAt(t, v, 7)
	assert.Equal(t, "compaction", e.Type)
	assert.Equal(t, serve.ActorSession, e.Actor)
	assert.Equal(t, "compaction", e.Focus, "the compaction whose summary the request holds")
	assert.Equal(t, &serve.CompactionView{Reason: "threshold", TokensBefore: 53000, FirstKeptSeq: 5,
		Summary: "用户问 tiny-pi 是什么；我答：一个用 Go 写的 agent 运行时。\n还没有读过文件。", ReadFiles: []string{}, ChangedFiles: []string{}}, e.Compaction)
	assert.Equal(t, `compaction (threshold): 53000 tokens before, kept from seq 5; files read: 0, changed: 0; summary "用户问 tiny-pi 是什么；我答：一个用 Go 写的 agent 运行时。\n还没有读过文件。"`, e.Summary)
	assert.Contains(t, e.Payload, `"firstKeptSeq": 5`)
	assert.Nil(t, eventAt(t, v, 8).Compaction)
	assert.Equal(t, "2 messages through seq 7", eventAt(t, v, 8).Summary)

	events := map[string][]int{}
	for _, a := range v.Actors {
		events[a.ID] = a.Events
		if a.ID == serve.ActorSession {
			assert.Equal(t, "the append-only event log: gives seqs, keeps the events, derives the message history. It also compacts the history: a compaction event replaces the messages before its cut with a summary, and every later derivation starts from that summary.", a.About)
		}
	}
	assert.Equal(t, map[string][]int{"model": {9}, "agent": {10, 15}, "tool": {11, 12}, "session": {7, 9, 10, 11, 12}}, events)

	zh := viewOf(t, serve.Options{Log: "testdata/compacted.jsonl", Lang: i18n.ZH}, "/api/view")
	assert.Equal(t, "seq 0–4 的摘要", zh.Stages[0].History[0].Label)
	assert.Equal(t, "deriveMessages 的结果，其中有 call-1 的工具结果。 seq 7 的压缩把 seq 5 之前的事件的消息换成了它的摘要，摘要排在最前面。", zh.Stages[4].HistoryNote)
	assert.Equal(t, `压缩（threshold）：压缩前 53000 个 token，从 seq 5 起保留；读过的文件 0 个，改过的 0 个；摘要 "用户问 tiny-pi 是什么；我答：一个用 Go 写的 agent 运行时。\n还没有读过文件。"`, eventAt(t, zh, 7).Summary)
	assert.Equal(t, "生效的压缩", zh.Texts["focus.compaction"])
}

func TestViewOfAResultCompactedBeforeItsRequest(t *testing.T) {
	v := viewOf(t, serve.Options{Log: "testdata/compacted-result.jsonl", Lang: i18n.EN}, "/api/view")
	require.NotNil(t, v.Call)
	assert.Equal(t, 4, v.Call.Seq)
	summary := serve.MessageView{Role: "user", Seq: 9, Summary: true, Label: "summary of seq 0–7",
		Blocks: []serve.BlockView{{Kind: "text", Text: "The conversation before this point was compacted into the summary below.\n\n<summary>\n用户要项目名；我读了 README.md：# tiny-pi，A small agent runtime。\n</summary>\n\nFiles read: README.md\nFiles changed: (none)"}}}
	// Through the result the history is chapter 10's; the request after the compaction holds
	// the summary alone.
	for i := range 4 {
		assert.False(t, v.Stages[i].History[0].Summary, "stage %d", i+1)
	}
	for i := 4; i < 6; i++ {
		assert.Equal(t, []serve.MessageView{summary}, v.Stages[i].History, "stage %d", i+1)
		assert.Equal(t, "what deriveMessages gives after the compaction at seq 9: the result of call-1 (seq 6) comes before its cut at seq 8, so only the summary, which comes first, still speaks of it.", v.Stages[i].HistoryNote, "stage %d", i+1)
	}
	assert.Equal(t, "1 message through seq 9", eventAt(t, v, 10).Summary)
	assert.Equal(t, &serve.CompactionView{Reason: "threshold", TokensBefore: 61000, FirstKeptSeq: 8,
		Summary: "用户要项目名；我读了 README.md：# tiny-pi，A small agent runtime。", ReadFiles: []string{"README.md"}, ChangedFiles: []string{}}, eventAt(t, v, 9).Compaction)
}

func TestViewOfACompactionWithoutCalls(t *testing.T) {
	data, err := os.ReadFile("testdata/compacted.jsonl")
	require.NoError(t, err)
	// The header and the events through the request after the compaction (seq 8).
	lines := strings.SplitAfter(string(data), "\n")
	v := viewOf(t, serve.Options{Log: writeLog(t, strings.Join(lines[:10], "")), Lang: i18n.EN}, "/api/view")
	assert.Nil(t, v.Call)
	require.Len(t, v.Stages, 1)
	st := v.Stages[0]
	user := serve.MessageView{Role: "user", Seq: 5, Blocks: []serve.BlockView{{Kind: "text", Text: "读一下 README.md，告诉我项目名。"}}}
	assert.Equal(t, []serve.MessageView{compactedSummary, user}, st.History)
	assert.Equal(t, "what deriveMessages gives for the whole log. The compaction at seq 7 replaced the messages of the events before seq 5 with its summary, which comes first.", st.HistoryNote)
	assert.Equal(t, "compaction", eventAt(t, v, 7).Focus)
	for _, a := range v.Actors {
		if a.ID == serve.ActorSession {
			assert.Equal(t, []int{7}, a.Events)
		}
	}
}

// A long history after a compaction keeps its summary first: the messages left out are those
// after it.
func TestLongHistoryKeepsTheSummaryFirst(t *testing.T) {
	data, err := os.ReadFile("testdata/compacted.jsonl")
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	// Through the compaction (seq 7), then 60 prompts at seqs 8 to 67.
	var b strings.Builder
	b.WriteString(strings.Join(lines[:9], ""))
	for seq := 8; seq < 68; seq++ {
		fmt.Fprintf(&b, `{"type":"user/message","seq":%d,"data":{"message":{"role":"user","content":[{"type":"text","text":"prompt %d"}]}}}`+"\n", seq, seq)
	}
	v := viewOf(t, serve.Options{Log: writeLog(t, b.String()), Lang: i18n.EN}, "/api/view")
	st := v.Stages[0]
	// 62 messages: the summary, seq 5, seqs 8 to 67. Shown: the summary and the last 39.
	require.Len(t, st.History, 40)
	assert.Equal(t, compactedSummary, st.History[0])
	assert.Equal(t, 22, st.HistoryHidden)
	assert.Equal(t, 29, st.History[1].Seq)
	assert.Equal(t, 67, st.History[39].Seq)
}

func TestCompareAlignsCompactions(t *testing.T) {
	same := viewOf(t, serve.Options{Log: "testdata/compacted.jsonl", Reference: "testdata/compacted.jsonl", Lang: i18n.EN}, "/api/view")
	require.NotNil(t, same.Compare)
	assert.Equal(t, -1, same.Compare.First)
	// 18 events, then the 5 derived messages: the summary, seq 5, 9, 12, 16.
	assert.Equal(t, 23, same.Compare.Total)
	assert.Equal(t, `user        "The conversation before this point was compacted into the summary below.\n\n<summary>\n用户问 tiny-pi 是什么；我答：一个用 Go 写的 agent 运行时。\n还没有读过文件。\n</summary>\n\nFiles read: (none)\nFiles changed: (none)"`, same.Compare.Rows[18].Learner)
	assert.Equal(t, "transcript", same.Compare.Rows[18].Section)

	data, err := os.ReadFile("testdata/compacted.jsonl")
	require.NoError(t, err)
	other := writeLog(t, strings.Replace(string(data), `"readFiles":[],"changedFiles":[]`, `"readFiles":["go.mod"],"changedFiles":[]`, 1))
	v := viewOf(t, serve.Options{Log: other, Reference: "testdata/compacted.jsonl", Lang: i18n.EN}, "/api/view")
	assert.Equal(t, "first difference: line 8 (events)", v.Compare.Summary)
	row := v.Compare.Rows[v.Compare.First]
	assert.Equal(t, `compaction        compaction (threshold): 53000 tokens before, kept from seq 5; files read: 1, changed: 0; summary "用户问 tiny-pi 是什么；我答：一个用 Go 写的 agent 运行时。\n还没有读过文件。"`, row.Learner)
	assert.Equal(t, `compaction        compaction (threshold): 53000 tokens before, kept from seq 5; files read: 0, changed: 0; summary "用户问 tiny-pi 是什么；我答：一个用 Go 写的 agent 运行时。\n还没有读过文件。"`, row.Reference)
	assert.True(t, eventAt(t, v, 7).FirstDifference)
	assert.True(t, v.Compare.Rows[18].Differs, "the summary messages differ in their list of files read")
	assert.False(t, v.Compare.Rows[19].Differs)
}

func TestBrowserCompaction(t *testing.T) {
	ctx := tab(t, browser(t), newHandler(t, serve.Options{Log: "testdata/compacted.jsonl", Lang: i18n.EN}), "/")
	waitFor(t, ctx, `document.body.dataset.ready === 'true'`)
	assert.Equal(t, "summary of seq 0–4", eval[string](t, ctx, `document.querySelector('#history .msg.summary:first-child .summary-label').innerText`))
	assert.Equal(t, []string{"msg-7", "msg-5", "msg-9", "msg-pending"}, eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#history .msg')).map(m => m.id)`))
	click(t, ctx, "#tab-events")
	waitFor(t, ctx, `!document.getElementById('view-events').hidden`)
	fields := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#event-7 dl.compaction dt, #event-7 dl.compaction dd')).map(e => e.innerText)`)
	assert.Equal(t, []string{"reason", "threshold", "tokens before", "53000", "kept from seq", "event seq 5",
		"summary", "用户问 tiny-pi 是什么；我答：一个用 Go 写的 agent 运行时。\n还没有读过文件。", "files read", "(none)", "files changed", "(none)"}, fields)
	assert.Contains(t, eval[string](t, ctx, `document.querySelector('#event-7 .badge.focus').innerText`), "compaction in effect")
}
