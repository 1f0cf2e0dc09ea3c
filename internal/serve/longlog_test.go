package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/serve"
	"github.com/learn-tinypi/course/internal/sessionlog/logtest"
)

func writeLog(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func viewOf(t *testing.T, opts serve.Options, target string) serve.View {
	t.Helper()
	rec := do(t, handler(t, opts), target)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var v serve.View
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))
	return v
}

// A torn log (a crash in the middle of the last write) is shown as LoadSession keeps it: the
// intact events, with the torn line as a notice and a repair that works on macOS too.
func TestTornLogShowsItsIntactEvents(t *testing.T) {
	for _, lang := range []string{i18n.EN, i18n.ZH} {
		h := handler(t, serve.Options{Log: "testdata/torn.jsonl", Lang: lang})
		rec := do(t, h, "/api/view")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var v serve.View
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))
		assert.Equal(t, 8, v.EventCount)
		require.Len(t, v.Events, 8)
		require.NotNil(t, v.Call)
		assert.Equal(t, 4, v.Call.Seq)
		require.NotNil(t, v.Notice)
		assert.Equal(t, "torn", v.Notice.Kind)
		assert.Equal(t, 10, v.Notice.Line)
		assert.Equal(t, `{"type":"turn/end","seq":8,"time":"2026-`, v.Notice.Excerpt)
		assert.NotContains(t, v.Notice.Repair, "sed -i", "GNU sed's -i takes no argument; BSD sed's (macOS) needs one")
		if lang == i18n.EN {
			assert.Equal(t, "line 10 (the last line) is incomplete: writing stopped in the middle of it (the process was interrupted, for example). The 8 events before it are intact.", v.Notice.What)
			assert.Equal(t, "tinypi's LoadSession cuts line 10 off when it loads this session again. To cut it yourself, keep the first 9 lines: head -n 9 testdata/torn.jsonl > testdata/torn.jsonl.tmp && mv testdata/torn.jsonl.tmp testdata/torn.jsonl; or run again.", v.Notice.Repair)
		}
		page := do(t, h, "/")
		assert.Equal(t, http.StatusOK, page.Code)
		assert.Contains(t, page.Body.String(), `id="notice"`)
		assert.Contains(t, page.Body.String(), `data-kind="torn"`)
	}
}

// A long log is shown around the chosen call: the page holds what its screen shows, not the log.
func TestLongLogViewIsBounded(t *testing.T) {
	data, _ := logtest.Log(2000, 0) // 18,000 events, 2,000 calls
	path := writeLog(t, string(data))
	for _, target := range []string{"/api/view", "/api/view?call=9004", "/api/view?call=17995"} {
		t.Run(target, func(t *testing.T) {
			rec := do(t, handler(t, serve.Options{Log: path, Lang: i18n.EN}), target)
			require.Equal(t, http.StatusOK, rec.Code)
			assert.Less(t, rec.Body.Len(), 400<<10, "bytes of the view of an 18,000-event log")
			var v serve.View
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))
			assert.Equal(t, 18000, v.EventCount)
			assert.Equal(t, 2000, v.CallCount)
			assert.LessOrEqual(t, len(v.Calls), 100)
			assert.LessOrEqual(t, len(v.Events), 5*41+20)
			// Every event is either shown or counted as left out, once.
			total, last := v.HiddenAfter, -1
			for _, e := range v.Events {
				assert.Equal(t, e.Seq-last-1, e.HiddenBefore, "seq %d", e.Seq)
				total += e.HiddenBefore + 1
				last = e.Seq
			}
			assert.Equal(t, 18000, total)
			// The round trip is shown, its call among the choices.
			focus := map[string]int{}
			for _, e := range v.Events {
				if e.Focus != "" {
					focus[e.Focus] = e.Seq
				}
			}
			c := v.Call.Seq
			assert.Equal(t, map[string]int{"assistant": c - 1, "call": c, "result": c + 1, "request": c + 2}, focus)
			assert.True(t, containsCall(v.Calls, c))
			for _, st := range v.Stages {
				assert.Len(t, st.States, len(v.Events))
				assert.LessOrEqual(t, len(st.History), 41)
			}
			// Stage 6: the history is the request's, the last 40 of its messages shown.
			st := v.Stages[5]
			turn := (c - 4) / 9
			assert.Equal(t, max(0, 4*turn+3-40), st.HistoryHidden)
			assert.Equal(t, c+1, st.History[len(st.History)-1].Seq)
		})
	}
	v := viewOf(t, serve.Options{Log: path, Lang: i18n.EN}, "/api/view?call=9004")
	require.NotNil(t, v.PrevCall)
	require.NotNil(t, v.NextCall)
	assert.Equal(t, serve.CallChoice{Seq: 8995, CallID: "call-999", Name: "read"}, *v.PrevCall)
	assert.Equal(t, serve.CallChoice{Seq: 9013, CallID: "call-1001", Name: "read"}, *v.NextCall)
}

func containsCall(calls []serve.CallChoice, seq int) bool {
	for _, c := range calls {
		if c.Seq == seq {
			return true
		}
	}
	return false
}

// Long texts are cut, and say how much is left out.
func TestLongTextsAreCut(t *testing.T) {
	long := strings.Repeat("好", 8000) // 24,000 bytes
	log := strings.Join([]string{
		`{"format":"tinypi-session","version":1}`,
		`{"type":"user/message","seq":0,"data":{"message":{"role":"user","content":[{"type":"text","text":"` + long + `"}]}}}`,
	}, "\n") + "\n"
	v := viewOf(t, serve.Options{Log: writeLog(t, log), Lang: i18n.EN}, "/api/view")
	require.Len(t, v.Stages, 1)
	require.Len(t, v.Stages[0].History, 1)
	b := v.Stages[0].History[0].Blocks[0]
	assert.Equal(t, strings.Repeat("好", 1365)+"…", b.Text)
	assert.Equal(t, 24000-1365*3, b.Cut)
	assert.LessOrEqual(t, len(v.Events[0].Payload), 16384+len("…"))
	assert.Positive(t, v.Events[0].PayloadCut)
	assert.LessOrEqual(t, len(v.Events[0].Summary), 400+len("…"))
}

// batchLog is a turn whose assistant message asks for three calls at once; c2 finishes first,
// but the results are committed in call order.
const batchLog = `{"format":"tinypi-session","version":1}
{"type":"user/message","seq":0,"data":{"message":{"role":"user","content":[{"type":"text","text":"read three files"}]}}}
{"type":"model/request","seq":1,"data":{"throughSeq":0,"messages":1}}
{"type":"assistant/message","seq":2,"data":{"message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":"{}"},{"type":"toolCall","id":"c2","name":"read","arguments":"{}"},{"type":"toolCall","id":"c3","name":"ls","arguments":"{}"}],"stopReason":"toolUse"}}}
{"type":"tool/call","seq":3,"data":{"callId":"c1","name":"read","arguments":"{}"}}
{"type":"tool/call","seq":4,"data":{"callId":"c2","name":"read","arguments":"{}"}}
{"type":"tool/call","seq":5,"data":{"callId":"c3","name":"ls","arguments":"{}"}}
{"type":"tool/start","seq":6,"data":{"callId":"c1","name":"read"},"sourceEventSeqs":[3]}
{"type":"tool/start","seq":7,"data":{"callId":"c2","name":"read"},"sourceEventSeqs":[4]}
{"type":"tool/start","seq":8,"data":{"callId":"c3","name":"ls"},"sourceEventSeqs":[5]}
{"type":"tool/result","seq":9,"data":{"message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[]}},"sourceEventSeqs":[3]}
{"type":"tool/result","seq":10,"data":{"message":{"role":"toolResult","toolCallId":"c2","toolName":"read","content":[]}},"sourceEventSeqs":[4]}
{"type":"tool/result","seq":11,"data":{"message":{"role":"toolResult","toolCallId":"c3","toolName":"ls","content":[]}},"sourceEventSeqs":[5]}
{"type":"model/request","seq":12,"data":{"throughSeq":11,"messages":5}}
`

func TestABatchIsDrawnAsSiblingsWithTheCommitCursor(t *testing.T) {
	v := viewOf(t, serve.Options{Log: writeLog(t, batchLog), Lang: i18n.EN}, "/api/view?call=4")
	assert.Equal(t, 3, v.BatchSize)
	assert.Equal(t, []serve.BatchCall{
		{Seq: 3, CallID: "c1", Name: "read", Start: 6, Result: 9},
		{Seq: 4, CallID: "c2", Name: "read", Start: 7, Result: 10, Chosen: true},
		{Seq: 5, CallID: "c3", Name: "ls", Start: 8, Result: 11},
	}, v.Batch)
	var committed, cursors []int
	for _, st := range v.Stages {
		committed = append(committed, st.Committed)
		cursors = append(cursors, st.Cursor)
	}
	// Stage 3 ends before c2's result: c1's result is committed, the cursor stands after it.
	assert.Equal(t, []int{3, 5, 10, 11, 12, 13}, committed)
	assert.Equal(t, []int{0, 0, 1, 2, 3, 3}, cursors)
	focus := map[int]string{}
	for _, e := range v.Events {
		if e.Focus != "" {
			focus[e.Seq] = e.Focus
		}
	}
	assert.Equal(t, map[int]string{2: "assistant", 3: "sibling", 4: "call", 5: "sibling", 7: "start", 10: "result", 12: "request"}, focus)

	page := do(t, handler(t, serve.Options{Log: writeLog(t, batchLog), Lang: i18n.EN}), "/?call=4").Body.String()
	assert.Contains(t, page, `id="batch"`)
}

// ?call= names a seq; anything else is explained as such (not as "seq -2").
func TestCallParamThatIsNoSeq(t *testing.T) {
	h := handler(t, serve.Options{Log: "testdata/readme.jsonl", Lang: i18n.EN})
	for _, target := range []string{"/api/view?call=abc", "/api/view?call=-3"} {
		rec := do(t, h, target)
		assert.Equal(t, http.StatusNotFound, rec.Code)
		var body struct{ Error serve.Problem }
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		assert.NotContains(t, body.Error.What, "seq -")
		assert.Equal(t, "drop ?call= from the address, or choose a call of the log: ?call=4 (read c1)", body.Error.Repair)
	}
	var body struct{ Error serve.Problem }
	require.NoError(t, json.Unmarshal(do(t, h, "/api/view?call=abc").Body.Bytes(), &body))
	assert.Equal(t, "?call=abc is not a seq: ?call= takes the seq of a tool/call event (a number).", body.Error.What)
	page := do(t, h, "/?call=abc")
	assert.Equal(t, http.StatusNotFound, page.Code)
	assert.Contains(t, page.Body.String(), "?call=abc is not a seq")
}

// What a log holds is data on the page, never markup: names, ids, texts, a torn line.
func TestLogContentIsEscaped(t *testing.T) {
	evil := `\u003c/script\u003e\u003cscript\u003ealert(1)\u003c/script\u003e`
	log := strings.Join([]string{
		`{"format":"tinypi-session","version":1}`,
		`{"type":"assistant/message","seq":0,"data":{"message":{"role":"assistant","content":[{"type":"toolCall","id":"` + evil + `","name":"` + evil + `","arguments":"{}"}],"stopReason":"toolUse"}}}`,
		`{"type":"tool/call","seq":1,"data":{"callId":"` + evil + `","name":"` + evil + `","arguments":"{}"}}`,
		`{"type":"turn/end","seq":2,"data":{"turn":1,"reason":"<img src=x onerror=alert(1)>"}}`,
		`{"type":"turn/st<script>alert(1)</script>`,
	}, "\n") + "\n"
	page := do(t, handler(t, serve.Options{Log: writeLog(t, log), Lang: i18n.EN}), "/").Body.String()
	assert.NotContains(t, page, "<script>alert")
	assert.NotContains(t, page, "<img src=x")
	assert.Equal(t, 2, strings.Count(page, "<script"), "the data block and app.js, nothing else:\n%s", page)
}

// A log replaced after it was shown (a new run, a repair) is read again on the next load; an
// unchanged one is not.
func TestReloadShowsTheNewLog(t *testing.T) {
	data, _ := logtest.Log(3, 0)
	path := writeLog(t, string(data))
	h := handler(t, serve.Options{Log: path, Lang: i18n.EN})
	var v serve.View
	require.NoError(t, json.Unmarshal(do(t, h, "/api/view").Body.Bytes(), &v))
	assert.Equal(t, 27, v.EventCount)
	more, _ := logtest.Log(5, 0)
	tmp := path + ".new"
	require.NoError(t, os.WriteFile(tmp, more, 0o644))
	require.NoError(t, os.Rename(tmp, path))
	require.NoError(t, json.Unmarshal(do(t, h, "/api/view").Body.Bytes(), &v))
	assert.Equal(t, 45, v.EventCount)
	// Appended to in place, as a running writer does.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	var b bytes.Buffer
	logtest.Turn(&b, 5)
	_, err = f.Write(b.Bytes())
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, json.Unmarshal(do(t, h, "/api/view").Body.Bytes(), &v))
	assert.Equal(t, 54, v.EventCount)
}

// Two long logs are compared without rendering either whole: the rows around the first
// difference, numbered as in the whole comparison.
func TestCompareLongLogs(t *testing.T) {
	data, _ := logtest.Log(1000, 0)
	learner := writeLog(t, string(data))
	// The reference differs in the answer of turn 500 (seq 9·500+7 = 4507).
	changed := bytes.Replace(data, []byte(`"file-500.md 说明了这个项目`), []byte(`"file-500.md 是另一个项目`), 1)
	require.NotEqual(t, data, changed)
	reference := writeLog(t, string(changed))
	v := viewOf(t, serve.Options{Log: learner, Reference: reference, Lang: i18n.EN}, "/api/view")
	require.NotNil(t, v.Compare)
	assert.Equal(t, 9000+4000, v.Compare.Total)
	assert.Equal(t, "first difference: line 4508 (events)", v.Compare.Summary)
	assert.LessOrEqual(t, len(v.Compare.Rows), 40)
	require.GreaterOrEqual(t, v.Compare.First, 0)
	first := v.Compare.Rows[v.Compare.First]
	assert.Equal(t, 4508, first.N)
	assert.True(t, first.Differs)
	assert.Equal(t, `assistant/message assistant   stop  "file-500.md 说明了这个项目：一个用 Go 写的 agent 运行时。"`, first.Learner)
	assert.Equal(t, `assistant/message assistant   stop  "file-500.md 是另一个项目：一个用 Go 写的 agent 运行时。"`, first.Reference)
	assert.Equal(t, 4497, v.Compare.Rows[0].HiddenBefore)
	for i, r := range v.Compare.Rows {
		if i != v.Compare.First && r.Section == "events" {
			assert.False(t, r.Differs, "row %d", r.N)
		}
	}

	same := viewOf(t, serve.Options{Log: learner, Reference: learner, Lang: i18n.EN}, "/api/view")
	assert.Equal(t, "the two runs agree.", same.Compare.Summary)
	assert.Equal(t, -1, same.Compare.First)

	// A reference that is shorter: the first difference is where it ends, in the events.
	short, _ := logtest.Log(999, 0)
	v = viewOf(t, serve.Options{Log: learner, Reference: writeLog(t, string(short)), Lang: i18n.EN}, "/api/view")
	assert.Equal(t, "first difference: line 8992 (events)", v.Compare.Summary)
	f := v.Compare.Rows[v.Compare.First]
	assert.Equal(t, "·", f.Reference)
	assert.Equal(t, `turn/start        {"turn":1000}`, f.Learner)
}

// Preload reads the logs as the first request would and says what is wrong with each.
func TestPreload(t *testing.T) {
	h := handler(t, serve.Options{Log: "testdata/seq.jsonl", Reference: "testdata/torn.jsonl", Lang: i18n.EN}).(*serve.Handler)
	problems, err := h.Preload(context.Background())
	require.NoError(t, err)
	require.Len(t, problems, 1, "a torn reference is shown, with its notice")
	assert.Equal(t, "seq", problems[0].Kind)
	assert.Equal(t, "testdata/seq.jsonl", problems[0].File)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = handler(t, serve.Options{Log: "testdata/readme.jsonl"}).(*serve.Handler).Preload(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

// A message of ten thousand tool calls (a hostile or runaway batch) is shown by its first
// blocks, and the page stays small.
func TestHugeBatchPageIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"format":"tinypi-session","version":1}` + "\n")
	var calls []string
	for i := range 10000 {
		calls = append(calls, fmt.Sprintf(`{"type":"toolCall","id":"c%d","name":"read","arguments":"{}"}`, i))
	}
	b.WriteString(`{"type":"assistant/message","seq":0,"data":{"message":{"role":"assistant","content":[` + strings.Join(calls, ",") + `],"stopReason":"toolUse"}}}` + "\n")
	for i := range 10000 {
		fmt.Fprintf(&b, `{"type":"tool/call","seq":%d,"data":{"callId":"c%d","name":"read","arguments":"{}"}}`+"\n", 1+i, i)
	}
	for i := range 10000 {
		fmt.Fprintf(&b, `{"type":"tool/result","seq":%d,"sourceEventSeqs":[%d],"data":{"message":{"role":"toolResult","toolCallId":"c%d","content":[]}}}`+"\n", 10001+i, 1+i, i)
	}
	path := writeLog(t, b.String())
	for _, target := range []string{"/api/view", "/api/view?call=5001", "/?call=5001"} {
		rec := do(t, handler(t, serve.Options{Log: path, Lang: i18n.EN}), target)
		require.Equal(t, http.StatusOK, rec.Code)
		assert.Less(t, rec.Body.Len(), 600<<10, "%s: bytes of the page of a 10,000-call batch", target)
	}
	v := viewOf(t, serve.Options{Log: path, Lang: i18n.EN}, "/api/view?call=5001")
	assert.Equal(t, 10000, v.BatchSize)
	assert.Len(t, v.Batch, 40)
	m := v.Stages[0].History[0]
	assert.Len(t, m.Blocks, 20)
	assert.Equal(t, 10000-20, m.HiddenBlocks)
	assert.Equal(t, []int{0, 0, 5000, 5001, 10000, 10000}, []int{v.Stages[0].Cursor, v.Stages[1].Cursor, v.Stages[2].Cursor, v.Stages[3].Cursor, v.Stages[4].Cursor, v.Stages[5].Cursor})
}

// A long log without calls shows its first and last events.
func TestLongLogWithoutCalls(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"format":"tinypi-session","version":1}` + "\n")
	for i := range 1000 {
		fmt.Fprintf(&b, `{"type":"user/message","seq":%d,"data":{"message":{"role":"user","content":[{"type":"text","text":"m%d"}]}}}`+"\n", i, i)
	}
	v := viewOf(t, serve.Options{Log: writeLog(t, b.String()), Lang: i18n.EN}, "/api/view")
	assert.Nil(t, v.Call)
	require.Len(t, v.Events, 200)
	assert.Equal(t, 0, v.Events[0].Seq)
	assert.Equal(t, 800, v.Events[100].HiddenBefore)
	assert.Equal(t, 999, v.Events[199].Seq)
	require.Len(t, v.Stages, 1)
	assert.Len(t, v.Stages[0].History, 40)
	assert.Equal(t, 960, v.Stages[0].HistoryHidden)
	assert.Equal(t, 999, v.Stages[0].History[39].Seq)
}
