package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/learn-tinypi/course/internal/hang"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/serve"
)

func handler(t *testing.T, opts serve.Options) http.Handler {
	t.Helper()
	h, err := serve.NewHandler(opts)
	require.NoError(t, err)
	return h
}

func do(t *testing.T, h http.Handler, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec
}

func TestViewJSONFollowsTheFirstCall(t *testing.T) {
	h := handler(t, serve.Options{Log: "testdata/readme.jsonl", Lang: i18n.EN})
	rec := do(t, h, "/api/view")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
	var v serve.View
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))
	require.NotNil(t, v.Call)
	assert.Equal(t, serve.CallChoice{Seq: 4, CallID: "c1", Name: "read"}, *v.Call)
	require.Len(t, v.Stages, 6)
	c, p := serve.StateCommitted, serve.StatePlanned
	wantStates := [][]string{
		{c, c, c, c, p, p, p, p, p},
		{c, c, c, c, c, p, p, p, p},
		{c, c, c, c, c, p, p, p, p},
		{c, c, c, c, c, c, p, p, p},
		{c, c, c, c, c, c, p, p, p},
		{c, c, c, c, c, c, c, p, p},
	}
	wantActors := []string{"model", "agent", "tool", "session", "session", "agent"}
	wantTitles := []string{"The model asks for a call", "The call is registered", "The tool runs", "The result is committed", "Messages are derived", "Flushed, frozen and sent"}
	wantCommitted := []int{4, 5, 5, 6, 6, 7}
	for i, st := range v.Stages {
		assert.Equal(t, wantStates[i], st.States, "stage %d", i+1)
		assert.Equal(t, wantActors[i], st.Actor, "stage %d", i+1)
		assert.Equal(t, wantTitles[i], st.Title, "stage %d", i+1)
		assert.Equal(t, wantCommitted[i], st.Committed, "stage %d", i+1)
		assert.NotContains(t, st.Caption, "%!", "stage %d", i+1)
		assert.False(t, st.Missing)
		assert.Zero(t, st.HistoryHidden)
	}
	// Chapter 10's rule, that what the model sees is on disk first, is said where it happens.
	assert.Equal(t, "Before the request the session flushes: every event the request holds (through seq 5) is written to the file, so what the model sees is on disk first. Then model/request (seq 6) records the request: the history is frozen and handed to the model adapter. This time the model sees what read returned.", v.Stages[5].Caption)
	assert.Equal(t, "flushes the log (waits until every event the request holds is written to the file), then freezes the request (later appends cannot change it) and hands it to the model adapter.", v.Stages[5].Duty)
	assert.Equal(t, 9, v.EventCount)
	assert.Equal(t, 1, v.CallCount)
	assert.Nil(t, v.PrevCall)
	assert.Nil(t, v.NextCall)
	assert.Nil(t, v.Batch, "one call is no batch")
	assert.Nil(t, v.Notice)
	for _, e := range v.Events {
		assert.Zero(t, e.HiddenBefore, "a short log is shown whole")
	}
	// Summaries of requests speak the page's language, with the singular where it belongs.
	assert.Equal(t, "1 message through seq 1", v.Events[2].Summary)
	assert.Equal(t, "3 messages through seq 5", v.Events[6].Summary)
	user := serve.MessageView{Role: "user", Seq: 1, Blocks: []serve.BlockView{{Kind: "text", Text: "读取 README.md，并概述这个项目。"}}}
	call := serve.MessageView{Role: "assistant", Seq: 3, Blocks: []serve.BlockView{{Kind: "call", Text: `read · c1 · {"path":"README.md"}`}}}
	pending := serve.MessageView{Role: "toolResult", Seq: -1, Pending: true, Blocks: []serve.BlockView{{Kind: "text", Text: "the result of c1 is not in the session yet"}}}
	result := serve.MessageView{Role: "toolResult", Seq: 5, Blocks: []serve.BlockView{{Kind: "ref", Text: "toolCallId = c1"}, {Kind: "text", Text: "# tiny-pi\n用 Go 写的、会调用工具的 LLM agent 运行时。"}}}
	for i, want := range [][]serve.MessageView{
		{user, call, pending}, {user, call, pending}, {user, call, pending},
		{user, call, result}, {user, call, result}, {user, call, result},
	} {
		assert.Equal(t, want, v.Stages[i].History, "stage %d", i+1)
	}
	focus := map[int]string{}
	for _, e := range v.Events {
		if e.Focus != "" {
			focus[e.Seq] = e.Focus
		}
	}
	assert.Equal(t, map[int]string{3: "assistant", 4: "call", 5: "result", 6: "request"}, focus)
	assert.Equal(t, `read(c1 {"path":"README.md"})`, v.Events[4].Summary)
	assert.Equal(t, []int{4}, v.Events[5].SourceEventSeqs)
	assert.Nil(t, v.Compare)
}

func TestViewJSONComparesWithAReference(t *testing.T) {
	h := handler(t, serve.Options{Log: "testdata/readme.jsonl", Reference: "testdata/reference.jsonl", Lang: i18n.EN})
	var v serve.View
	require.NoError(t, json.Unmarshal(do(t, h, "/api/view").Body.Bytes(), &v))
	require.NotNil(t, v.Compare)
	assert.Equal(t, 7, v.Compare.First)
	assert.Equal(t, "first difference: line 8 (events)", v.Compare.Summary)
	row := v.Compare.Rows[7]
	assert.Equal(t, `assistant/message assistant   stop  "这是 tiny-pi：一个用 Go 写的 agent 运行时。"`, row.Learner)
	assert.Equal(t, `assistant/message assistant   stop  "这是 tiny-pi：一个用 Go 写的、会调用工具的 LLM agent 运行时。"`, row.Reference)
	assert.True(t, v.Events[7].FirstDifference)
	assert.False(t, v.Events[6].FirstDifference)

	same := handler(t, serve.Options{Log: "testdata/readme.jsonl", Reference: "testdata/readme.jsonl", Lang: i18n.EN})
	require.NoError(t, json.Unmarshal(do(t, same, "/api/view").Body.Bytes(), &v))
	assert.Equal(t, -1, v.Compare.First)
	assert.Equal(t, "the two runs agree.", v.Compare.Summary)
}

// testdata/readme-session.jsonl is what `go run ./cmd/readme-session` (solutions/tinypi) wrote:
// the README round trip logged by the chapter-10 reference, with a tool/start before the result.
func TestViewOfAChapter10Log(t *testing.T) {
	h := handler(t, serve.Options{Log: "testdata/readme-session.jsonl", Lang: i18n.EN})
	rec := do(t, h, "/api/view")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var v serve.View
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))
	require.NotNil(t, v.Call)
	assert.Equal(t, serve.CallChoice{Seq: 4, CallID: "call-1", Name: "read"}, *v.Call)
	c, p := serve.StateCommitted, serve.StatePlanned
	wantStates := [][]string{
		{c, c, c, c, p, p, p, p, p, p, p, p},
		{c, c, c, c, c, p, p, p, p, p, p, p},
		{c, c, c, c, c, c, p, p, p, p, p, p}, // the tool/start (seq 5) is committed while the tool runs
		{c, c, c, c, c, c, c, p, p, p, p, p},
		{c, c, c, c, c, c, c, c, c, p, p, p},
		{c, c, c, c, c, c, c, c, c, c, p, p},
	}
	require.Len(t, v.Stages, 6)
	for i, st := range v.Stages {
		assert.Equal(t, wantStates[i], st.States, "stage %d", i+1)
		assert.False(t, st.Missing, "stage %d", i+1)
	}
	assert.Equal(t, "The tool runtime appends tool/start (seq 5) and waits until it is written, then executes read: it checks the arguments, runs, and shapes the return value into a tool result message. The result is still only in the runtime's hands.", v.Stages[2].Caption)
	focus := map[int]string{}
	for _, e := range v.Events {
		if e.Focus != "" {
			focus[e.Seq] = e.Focus
		}
	}
	assert.Equal(t, map[int]string{3: "assistant", 4: "call", 5: "start", 6: "result", 9: "request"}, focus)
	start := v.Events[5]
	assert.Equal(t, "tool/start", start.Type)
	assert.Equal(t, serve.ActorTool, start.Actor)
	assert.Equal(t, "read(call-1) starts  ← seq 4", start.Summary)
	assert.Equal(t, []int{4}, start.SourceEventSeqs)
	events := map[string][]int{}
	for _, a := range v.Actors {
		events[a.ID] = a.Events
	}
	assert.Equal(t, map[string][]int{"model": {3}, "agent": {4, 9}, "tool": {5, 6}, "session": {3, 4, 5, 6}}, events)
}

func TestViewOfARunStoppedWhileItsToolRan(t *testing.T) {
	data, err := os.ReadFile("testdata/readme-session.jsonl")
	require.NoError(t, err)
	// The header and the events through the tool/start (seq 5): the tool began, no result.
	lines := bytes.SplitAfter(data, []byte("\n"))
	path := filepath.Join(t.TempDir(), "run.jsonl")
	require.NoError(t, os.WriteFile(path, bytes.Join(lines[:7], nil), 0o644))
	var v serve.View
	rec := do(t, handler(t, serve.Options{Log: path, Lang: i18n.EN}), "/api/view")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))
	var missing []bool
	for _, st := range v.Stages {
		missing = append(missing, st.Missing)
	}
	assert.Equal(t, []bool{false, false, true, true, true, true}, missing)
	assert.Equal(t, "tool/start (seq 5) says call-1 began to run, but the log ends before its result was committed: the outcome is unknown, and the tool may have had effects. Loading the log adds a TOOL_OUTCOME_UNKNOWN result.", v.Stages[2].Caption)
	assert.Equal(t, "the log ends before the result of call-1 was committed: this run left no result.", v.Stages[3].Caption)
}

func TestViewOfAnUnfinishedRun(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/readme.jsonl")
	require.NoError(t, err)
	// The header and the events through the tool/call (seq 4): no result, no second request.
	lines := 0
	cut := 0
	for i, b := range data {
		if b == '\n' {
			lines++
			if lines == 6 {
				cut = i + 1
				break
			}
		}
	}
	path := filepath.Join(dir, "run.jsonl")
	require.NoError(t, os.WriteFile(path, data[:cut], 0o644))
	var v serve.View
	rec := do(t, handler(t, serve.Options{Log: path, Lang: i18n.EN}), "/api/view")
	require.Equal(t, http.StatusOK, rec.Code)
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))
	var missing []bool
	for _, st := range v.Stages {
		missing = append(missing, st.Missing)
	}
	assert.Equal(t, []bool{false, false, true, true, true, true}, missing)
	assert.Equal(t, "the log ends before the result of c1 was committed: this run left no result.", v.Stages[2].Caption)
}

func TestBadLogs(t *testing.T) {
	tests := []struct {
		file, kind string
		line       int
		what       string
	}{
		{"damaged.jsonl", "damaged", 5, "line 5 is not a valid event: not a JSON object: unexpected end of JSON input. The damage comes before the last line, so this is no interrupted write: the log was edited, or its writer has a bug."},
		{"unknown-type.jsonl", "unknown-type", 6, `line 6 has the event type "tool/started", which this kit does not know, and it is not marked "ignorable": true, so a reader cannot skip it.`},
		{"seq.jsonl", "seq", 7, "line 7 has seq 6, want 5: seq is the number of events before it and must be contiguous. An event was lost, duplicated or moved."},
		{"version.jsonl", "version", 1, "the log is format version 2; this course kit reads version 1 only."},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			h := handler(t, serve.Options{Log: filepath.Join("testdata", tt.file), Lang: i18n.EN})
			rec := do(t, h, "/api/view")
			assert.Equal(t, http.StatusUnprocessableEntity, rec.Code)
			var body struct{ Error serve.Problem }
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
			assert.Equal(t, tt.kind, body.Error.Kind)
			assert.Equal(t, tt.line, body.Error.Line)
			assert.Equal(t, tt.what, body.Error.What)
			assert.NotEmpty(t, body.Error.Repair)
			assert.NotEmpty(t, body.Error.Excerpt)

			page := do(t, h, "/")
			assert.Equal(t, http.StatusOK, page.Code)
			assert.Contains(t, page.Body.String(), `data-kind="`+tt.kind+`"`)
			assert.Contains(t, page.Body.String(), "the session log cannot be read")
		})
	}
}

func TestRoutes(t *testing.T) {
	h := handler(t, serve.Options{Log: "testdata/readme.jsonl", Lang: i18n.ZH})
	page := do(t, h, "/")
	assert.Equal(t, http.StatusOK, page.Code)
	assert.Equal(t, "text/html; charset=utf-8", page.Header().Get("Content-Type"))
	assert.Contains(t, page.Body.String(), `<script type="application/json" id="view-data">`)
	assert.Contains(t, page.Body.String(), "一次工具调用的往返")
	js := do(t, h, "/assets/app.js")
	assert.Equal(t, http.StatusOK, js.Code)
	assert.Contains(t, js.Header().Get("Content-Type"), "javascript")
	assert.Equal(t, http.StatusOK, do(t, h, "/assets/app.css").Code)
	assert.Equal(t, http.StatusNotFound, do(t, h, "/nothing").Code)
	assert.Equal(t, http.StatusOK, do(t, h, "/?call=4").Code)
	nocall := do(t, h, "/?call=3")
	assert.Equal(t, http.StatusNotFound, nocall.Code)
	assert.Contains(t, nocall.Body.String(), "日志中 seq 3 的事件不是 tool/call。")
	assert.Contains(t, nocall.Body.String(), "?call=4 (read c1)")
	assert.Equal(t, http.StatusNotFound, do(t, h, "/api/view?call=x").Code)
	missing := do(t, handler(t, serve.Options{Log: "testdata/nothing.jsonl"}), "/api/view")
	assert.Equal(t, http.StatusInternalServerError, missing.Code)
}

func TestPageIsOffline(t *testing.T) {
	page := do(t, handler(t, serve.Options{Log: "testdata/readme.jsonl"}), "/").Body.String()
	assert.NotRegexp(t, `(src|href)="(https?:)?//`, page)
}

func TestServeStopsWithItsContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve.Serve(ctx, ln, handler(t, serve.Options{Log: "testdata/readme.jsonl"}), serve.ServeOptions{})
	}()
	client := &http.Client{Transport: &http.Transport{}}
	resp, err := client.Get("http://" + ln.Addr().String() + "/api/view")
	require.NoError(t, err)
	resp.Body.Close()
	client.CloseIdleConnections()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(hang.Bound(10 * time.Second)):
		t.Fatal("Serve did not return after its context was cancelled")
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "localhost": true, "::1": true, "[::1]": true, "127.0.0.2": true,
		"0.0.0.0": false, "": false, "192.168.1.2": false, "example.com": false} {
		assert.Equal(t, want, serve.IsLoopback(host), host)
	}
}

func TestNewestLog(t *testing.T) {
	dir := t.TempDir()
	_, err := serve.NewestLog(dir)
	assert.ErrorIs(t, err, serve.ErrNoLog)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sessions"), 0o755))
	now := time.Now()
	for name, age := range map[string]time.Duration{"a.jsonl": time.Hour, "b.jsonl": 0, "c.jsonl": 0, "d.txt": -time.Hour} {
		p := filepath.Join(dir, "sessions", name)
		require.NoError(t, os.WriteFile(p, nil, 0o644))
		require.NoError(t, os.Chtimes(p, now, now.Add(-age)))
	}
	got, err := serve.NewestLog(dir)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "sessions", "c.jsonl"), got)
}

func TestCatalogs(t *testing.T) {
	assert.Empty(t, serve.CatalogProblems())
	// A learner reads the page in a practice directory, which has no docs/ (issue 18).
	for _, text := range serve.CatalogTexts() {
		assert.NotContains(t, text, "docs/")
	}
}
