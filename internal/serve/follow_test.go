package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/learn-tinypi/course/internal/hang"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/serve"
)

// The lines of a scripted run, appended one step at a time by the tests below.
const (
	followHead = `{"format":"tinypi-session","version":1,"session":"live"}
{"type":"turn/start","seq":0,"data":{"turn":1}}
{"type":"user/message","seq":1,"data":{"message":{"role":"user","content":[{"type":"text","text":"read README.md"}]}}}
{"type":"model/request","seq":2,"data":{"throughSeq":1,"messages":1}}
`
	followAsk    = `{"type":"assistant/message","seq":3,"data":{"message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":"{\"path\":\"README.md\"}"}],"stopReason":"toolUse"}}}` + "\n"
	followCall   = `{"type":"tool/call","seq":4,"data":{"callId":"c1","name":"read","arguments":"{\"path\":\"README.md\"}"}}` + "\n"
	followStart  = `{"type":"tool/start","seq":5,"data":{"callId":"c1","name":"read"},"sourceEventSeqs":[4]}` + "\n"
	followResult = `{"type":"tool/result","seq":6,"data":{"message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"# tiny-pi"}]}},"sourceEventSeqs":[4]}` + "\n"
	followSend   = `{"type":"model/request","seq":7,"data":{"throughSeq":6,"messages":3}}` + "\n"
)

// appendLog appends text to the log at path, as the writer of a running session does.
func appendLog(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// sseReader reads the events of a follow stream.
type sseReader struct {
	t  *testing.T
	rd *bufio.Reader
}

// next returns the next event's name and data; io errors fail the test.
func (s sseReader) next() (string, string) {
	s.t.Helper()
	var event, data string
	for {
		line, err := s.rd.ReadString('\n')
		require.NoError(s.t, err, "reading the stream")
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && event != "":
			return event, data
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// until reads pushes until the round with key has reached stage, and returns it.
func (s sseReader) until(key string, stage int) serve.Round {
	s.t.Helper()
	for {
		event, data := s.next()
		require.Equal(s.t, "rounds", event, data)
		var push struct{ Rounds []serve.Round }
		require.NoError(s.t, json.Unmarshal([]byte(data), &push))
		for _, r := range push.Rounds {
			if r.Key == key && r.Stage == stage {
				return r
			}
		}
	}
}

func openStream(t *testing.T, ctx context.Context, addr string) (*http.Response, sseReader) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/follow", nil)
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp, sseReader{t, bufio.NewReader(resp.Body)}
}

// The stream of a followed log: behind the Host check like every route, each step of the run
// pushed as it is appended, a torn line waited for, a truncated log reported, at most four
// streams at once, a closed page's slot freed, and every stream ended when the server stops.
func TestFollowStream(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after serving's cleanup, which runs first
	path := writeLog(t, followHead)
	addr := serving(t, serve.Options{Log: path, Lang: i18n.EN, Follow: true, FollowPoll: 5 * time.Millisecond}, serve.ServeOptions{Host: "127.0.0.1"})
	_, port, _ := net.SplitHostPort(addr)
	resp, body := request(t, addr, "attacker.example:"+port, "/api/follow", nil)
	assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode)
	assert.NotContains(t, body, "README")

	ctx, cancel := context.WithTimeout(context.Background(), hang.Bound(20*time.Second))
	defer cancel()
	resp, s := openStream(t, ctx, addr)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
	event, _ := s.next()
	assert.Equal(t, "start", event)
	event, data := s.next()
	assert.Equal(t, "rounds", event)
	assert.JSONEq(t, `{"events":3,"rounds":[]}`, data)

	appendLog(t, path, followAsk)
	r := s.until("a3-0", 1)
	assert.Equal(t, serve.Round{Key: "a3-0", CallID: "c1", Name: "read", Args: `{"path":"README.md"}`, Stage: 1, Asker: 3, Seq: -1, Start: -1, Result: -1, Request: -1}, r)
	appendLog(t, path, followCall)
	assert.Equal(t, 4, s.until("a3-0", 2).Seq)
	// Half a line is waited for: the push holds the whole line.
	appendLog(t, path, followStart[:20])
	appendLog(t, path, followStart[20:])
	assert.Equal(t, 5, s.until("a3-0", 3).Start)
	appendLog(t, path, followResult)
	r = s.until("a3-0", 4)
	assert.Equal(t, 6, r.Result)
	assert.Equal(t, "# tiny-pi", r.Output)
	appendLog(t, path, followSend)
	assert.Equal(t, 7, s.until("a3-0", 6).Request)

	// Four streams at most.
	var extra []*http.Response
	for range 3 {
		resp, more := openStream(t, ctx, addr)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		event, _ := more.next()
		require.Equal(t, "start", event)
		extra = append(extra, resp)
	}
	resp, body = request(t, addr, "127.0.0.1:"+port, "/api/follow", nil)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, body, "too many pages follow this log (at most 4)")

	// A page closed frees its slot: its stream ends when its client is gone.
	first := extra[0]
	require.NoError(t, first.Body.Close())
	deadline := time.Now().Add(hang.Bound(10 * time.Second))
	for {
		resp, more := openStream(t, ctx, addr)
		if resp.StatusCode == http.StatusOK {
			event, _ := more.next()
			require.Equal(t, "start", event)
			break
		}
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		require.True(t, time.Now().Before(deadline), "a closed page's stream never ended")
		resp.Body.Close()
	}

	require.NoError(t, os.Truncate(path, int64(len(followHead))))
	for {
		event, data := s.next()
		if event == "rounds" {
			continue
		}
		assert.Equal(t, "changed", event)
		assert.Contains(t, data, "the log file got shorter")
		break
	}
	_, err := s.rd.ReadString('\n')
	assert.Error(t, err, "the stream ends after the change")
}

// Without --follow there is no stream.
func TestFollowOnlyWhenAsked(t *testing.T) {
	rec := do(t, handler(t, serve.Options{Log: "testdata/readme.jsonl"}), "/api/follow")
	assert.Equal(t, http.StatusNotFound, rec.Code)
	assert.NotContains(t, do(t, handler(t, serve.Options{Log: "testdata/readme.jsonl"}), "/").Body.String(), "follow.js")
}

// The page of a running session in a browser: a scripted run appends its events step by step
// and each step of the call's round trip appears in the page as it happens; a truncated log is
// said on the page.
func TestBrowserFollowsARunningSession(t *testing.T) {
	path := writeLog(t, followHead)
	h := newHandler(t, serve.Options{Log: path, Lang: i18n.EN, Follow: true, FollowPoll: 20 * time.Millisecond})
	ctx := tab(t, browser(t), h, "/")
	waitFor(t, ctx, `document.body.dataset.ready === 'true' && document.body.dataset.liveEvents === '3'`)
	assert.Equal(t, "3 events so far, waiting for more…", eval[string](t, ctx, `document.getElementById('live-status').innerText`))
	assert.Equal(t, 0, eval[int](t, ctx, `document.querySelectorAll('#live-calls li.round').length`))

	row := `document.getElementById('live-a3-0')`
	steps := []struct {
		text, state string
		stage       int
	}{
		{followAsk, "asked for at seq 3, not registered yet", 1},
		{followCall, "registered (seq 4), waiting to run", 2},
		{followStart, "running (tool/start, seq 5)", 3},
		{followResult, "result committed (seq 6), waiting for the next request", 4},
		{followSend, "result sent to the model in the request at seq 7", 6},
	}
	for _, st := range steps {
		appendLog(t, path, st.text)
		waitFor(t, ctx, row+` !== null && `+row+`.dataset.stage === '`+string(rune('0'+st.stage))+`'`)
		assert.Equal(t, st.state, eval[string](t, ctx, row+`.querySelector('.state').innerText`))
		assert.Equal(t, st.stage, eval[int](t, ctx, row+`.querySelectorAll('.steps li.reached').length`))
	}
	assert.Equal(t, "read · c1", eval[string](t, ctx, row+`.querySelector('.name').innerText`))
	assert.Equal(t, "# tiny-pi", eval[string](t, ctx, row+`.querySelector('.output').innerText`))
	assert.Equal(t, "/?call=4", eval[string](t, ctx, row+`.querySelector('a.open').getAttribute('href')`))
	assert.Equal(t, 1, eval[int](t, ctx, `document.querySelectorAll('#live-calls li.round').length`))

	require.NoError(t, os.Truncate(path, int64(len(followHead))))
	waitFor(t, ctx, `document.getElementById('live-status').classList.contains('stopped')`)
	assert.Equal(t, "no longer following: the log file got shorter (it was truncated or rewritten): the events shown can no longer be trusted. Reload the page to read it again.",
		eval[string](t, ctx, `document.getElementById('live-status').innerText`))
}
