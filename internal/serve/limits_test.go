package serve_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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

// await receives from ch, failing the test when nothing comes within a hang detector's bound.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hang.Bound(10 * time.Second)):
		t.Fatalf("%s did not happen", what)
	}
	var zero T
	return zero
}

// blockFirstView has h's first view computation report that it started, then wait until
// release is closed or its context ends, and report which (true: its context ended).
func blockFirstView(h *serve.Handler) (started <-chan struct{}, release chan struct{}, ended <-chan bool) {
	first := make(chan struct{}, 1)
	first <- struct{}{}
	start, end := make(chan struct{}, 1), make(chan bool, 1)
	release = make(chan struct{})
	serve.SetViewStarted(h, func(ctx context.Context) {
		select {
		case <-first:
		default:
			return // the later views run as usual
		}
		start <- struct{}{}
		select {
		case <-release:
			end <- false
		case <-ctx.Done():
			end <- true
		}
	})
	return start, release, end
}

func TestViewsBeyondTheLimitAreRefusedAtOnce(t *testing.T) {
	defer goleak.VerifyNone(t)
	h, err := serve.NewHandler(serve.Options{Log: "testdata/readme.jsonl", Lang: i18n.EN, MaxViews: 1})
	require.NoError(t, err)
	started, release, ended := blockFirstView(h)
	first := make(chan int, 1)
	go func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/view", nil))
		first <- rec.Code
	}()
	await(t, started, "the first view's start")

	// The one slot is taken: the next page load and the next /api/view are answered at once.
	for _, target := range []string{"/", "/api/view?call=4"} {
		rec := do(t, h, target)
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code, target)
		assert.Equal(t, "2", rec.Header().Get("Retry-After"), target)
		assert.Equal(t, "close", rec.Header().Get("Connection"), target)
		assert.Equal(t, "503 busy: as many views as are computed at once (1) are being computed; reload in a moment.\n", rec.Body.String(), target)
	}

	close(release)
	assert.False(t, await(t, ended, "the first view's end"), "the first view was released, not cancelled")
	assert.Equal(t, http.StatusOK, await(t, first, "the first view's answer"))
	// Its slot is free again.
	assert.Equal(t, http.StatusOK, do(t, h, "/api/view").Code)
}

func TestAViewStopsWhenItsClientIsGone(t *testing.T) {
	defer goleak.VerifyNone(t)
	h, err := serve.NewHandler(serve.Options{Log: "testdata/readme.jsonl", Lang: i18n.EN, MaxViews: 1})
	require.NoError(t, err)
	started, release, ended := blockFirstView(h)
	defer close(release)
	// returned reports each time the handler has returned: the view gives its slot back on its
	// way out, after its computation saw the context end, so the test waits for this, not ended.
	returned := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		returned <- struct{}{}
	}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/view", nil)
	require.NoError(t, err)
	gone := make(chan error, 1)
	go func() {
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		gone <- err
	}()
	await(t, started, "the view's start")
	cancel() // the client hangs up
	assert.True(t, await(t, ended, "the view's end"), "the view's context was cancelled when its client left")
	assert.ErrorIs(t, await(t, gone, "the client's return"), context.Canceled)
	await(t, returned, "the view's handler's return")

	// The view returned and gave its slot back: the next one is computed.
	resp, err := client.Get(srv.URL + "/api/view")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestCrossSiteRequestsAreRefused(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after serving's cleanup
	addr := serving(t, serve.Options{Log: "testdata/readme.jsonl", Lang: i18n.EN}, serve.ServeOptions{Host: "127.0.0.1"})
	tests := []struct {
		name   string
		header map[string]string
		status int
		body   string
	}{
		{"a page of another site", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden,
			"403 forbidden: a request from another site's page (Sec-Fetch-Site: cross-site); open the address course serve printed\n"},
		{"a page of the same site on another port", map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden,
			"403 forbidden: a request from another site's page (Sec-Fetch-Site: same-site); open the address course serve printed\n"},
		{"another origin", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden,
			"403 forbidden: a request from the page of another origin (Origin: http://evil.example); open the address course serve printed\n"},
		{"an opaque origin", map[string]string{"Origin": "null"}, http.StatusForbidden,
			"403 forbidden: a request from the page of another origin (Origin: null); open the address course serve printed\n"},
		{"the page itself", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://" + addr}, http.StatusOK, ""},
		{"an address typed in", map[string]string{"Sec-Fetch-Site": "none"}, http.StatusOK, ""},
		{"a client that is no browser", nil, http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := request(t, addr, addr, "/api/view", tt.header)
			assert.Equal(t, tt.status, resp.StatusCode)
			if tt.body != "" {
				assert.Equal(t, tt.body, body)
			}
		})
	}
}

func TestAHugeMessageIsShownByTheStartOfItsLine(t *testing.T) {
	// readme.jsonl with the result of c1 (seq 5, line 7) made 300 KiB long.
	data, err := os.ReadFile("testdata/readme.jsonl")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	head := `{"type":"tool/result","seq":5,"time":"2026-12-01T10:00:03Z","data":{"message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"`
	tail := `"}]}},"sourceEventSeqs":[4]}`
	huge := head + strings.Repeat("x", 300<<10-len(head)-len(tail)) + tail
	require.Len(t, huge, 307200)
	require.True(t, strings.HasPrefix(lines[6], `{"type":"tool/result","seq":5,`))
	lines[6] = huge
	path := filepath.Join(t.TempDir(), "huge.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))

	h, err := serve.NewHandler(serve.Options{Log: path, Lang: i18n.EN})
	require.NoError(t, err)
	serve.SetHugeLine(h, 256<<10) // a line of 300 KiB is huge: the test need not read megabytes
	rec := do(t, h, "/api/view")
	require.Equal(t, http.StatusOK, rec.Code)
	var v serve.View
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))

	// The payload view: the line's first 16384 bytes as written, and what was left out.
	require.Len(t, v.Events, 9)
	e := v.Events[5]
	assert.Equal(t, 5, e.Seq)
	assert.Equal(t, 7, e.Line)
	assert.Equal(t, "tool/result", e.Type)
	assert.Equal(t, "result", e.Focus)
	assert.Equal(t, "a line of 300 KiB, too long for the page to decode: its first 16384 bytes as the file holds them, 290816 more bytes left out", e.Summary)
	assert.Equal(t, huge[:16384]+"…", e.Payload)
	assert.Equal(t, 290816, e.PayloadCut)

	// The history after the result: the message by its line's first 4096 bytes.
	hist := v.Stages[5].History
	require.Len(t, hist, 3, "user, assistant, tool result")
	m := hist[2]
	assert.Equal(t, 5, m.Seq)
	assert.Equal(t, "toolResult", m.Role)
	require.Len(t, m.Blocks, 2)
	assert.Equal(t, serve.BlockView{Kind: "text", Text: "this message's line is 300 KiB long, too long for the page to decode; below is the start of the line as the file holds it."}, m.Blocks[0])
	assert.Equal(t, serve.BlockView{Kind: "ref", Text: huge[:4096] + "…", Cut: 303104}, m.Blocks[1])
	// The page writes each cut as "… (303104 more bytes not shown)".
	assert.Equal(t, "… ({n} more bytes not shown)", v.Texts["cut"])
	assert.Less(t, rec.Body.Len(), 64<<10, "the answer holds the start of the line, not the line")
}

func TestServerHasLimits(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	srv := serve.NewServer(context.Background(), ln, http.NotFoundHandler(), serve.ServeOptions{})
	assert.Equal(t, 10*time.Second, srv.ReadHeaderTimeout)
	assert.Equal(t, 30*time.Second, srv.ReadTimeout)
	assert.Equal(t, 2*time.Minute, srv.WriteTimeout)
	assert.Equal(t, 30*time.Second, srv.IdleTimeout)
	assert.Equal(t, 64<<10, srv.MaxHeaderBytes)
}

// BenchmarkHugeMessageView measures a view of a log whose tool result is a 60 MB line: shown
// by its start (the server's way), and decoded whole (as before the limit) for comparison.
// go test -run '^$' -bench HugeMessageView -benchmem ./internal/serve
func BenchmarkHugeMessageView(b *testing.B) {
	data, err := os.ReadFile("testdata/readme.jsonl")
	require.NoError(b, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	lines[6] = `{"type":"tool/result","seq":5,"time":"2026-12-01T10:00:03Z","data":{"message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"` +
		strings.Repeat("x", 60<<20) + `"}]}},"sourceEventSeqs":[4]}`
	path := filepath.Join(b.TempDir(), "huge.jsonl")
	require.NoError(b, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	for _, bc := range []struct {
		name     string
		hugeLine int
	}{{"start", 1 << 20}, {"whole", 1 << 30}} {
		b.Run(bc.name, func(b *testing.B) {
			h, err := serve.NewHandler(serve.Options{Log: path, Lang: i18n.EN})
			require.NoError(b, err)
			serve.SetHugeLine(h, bc.hugeLine)
			_, err = h.Preload(context.Background()) // the index, read once
			require.NoError(b, err)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/view", nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
			}
		})
	}
}
