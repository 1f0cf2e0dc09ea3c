package serve_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/hang"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/serve"
	"github.com/learn-tinypi/course/internal/sessionlog/logtest"
)

// withoutFramingHeaders drops the headers that forbid framing: the control of the framing test,
// which shows that the test can see a page that is framed.
func withoutFramingHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(headerFilter{w}, r)
	})
}

type headerFilter struct{ http.ResponseWriter }

func (f headerFilter) WriteHeader(code int) {
	f.Header().Del("X-Frame-Options")
	f.Header().Del("Content-Security-Policy")
	f.ResponseWriter.WriteHeader(code)
}

func (f headerFilter) Write(b []byte) (int, error) {
	f.Header().Del("X-Frame-Options")
	f.Header().Del("Content-Security-Policy")
	return f.ResponseWriter.Write(b)
}

// framedURL opens a page of another origin that frames target, and returns the URL the frame
// ended up showing (Chromium shows an error page in place of a page that refuses framing).
func framedURL(t *testing.T, b context.Context, target string) string {
	t.Helper()
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><iframe id="f" src="%s"></iframe>`, target)
	}))
	defer attacker.Close()
	ctx, cancel := chromedp.NewContext(b)
	defer cancel()
	// The attacker's page, not the course page, reports the refusal on its console: no check
	// of console errors here. It is another origin (another port) of the same site, so that
	// Chromium keeps its frame in the page's frame tree.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(attacker.URL)))
	deadline := time.Now().Add(hang.Bound(20 * time.Second))
	for {
		res, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
		require.NoError(t, err)
		if len(res.FrameTree.ChildFrames) == 1 {
			f := res.FrameTree.ChildFrames[0].Frame
			if f.URL != "" && f.URL != "about:blank" && (f.URL != target || eval[bool](t, ctx, `document.readyState === 'complete'`)) {
				return f.URL
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the frame of %s never loaded: %s", target, describeTree(res.FrameTree))
		}
		_ = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](`document.readyState === 'complete'`, chromedp.WithPollingTimeout(time.Second)))
	}
}

// Another site cannot show the page in a frame (clickjacking, reading it through the frame).
func TestBrowserPageCannotBeFramed(t *testing.T) {
	b := browser(t)
	h := newHandler(t, serve.Options{Log: "testdata/readme.jsonl", Lang: i18n.EN})
	guarded := httptest.NewServer(h)
	defer guarded.Close()
	got := framedURL(t, b, guarded.URL+"/")
	t.Logf("the frame shows %s", got)
	assert.NotEqual(t, guarded.URL+"/", got, "the page was shown in another site's frame")
	open := httptest.NewServer(withoutFramingHeaders(h))
	defer open.Close()
	assert.Equal(t, open.URL+"/", framedURL(t, b, open.URL+"/"), "control: without its headers the page can be framed")
}

// inViewport reports whether the element with id is entirely inside the window.
func inViewport(t *testing.T, ctx context.Context, id string) bool {
	return eval[bool](t, ctx, `(() => { const r = document.getElementById('`+id+`').getBoundingClientRect();
		return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight; })()`)
}

// A call chosen by ?call= is brought into view when its events are shown.
func TestBrowserChosenCallIsScrolledIntoView(t *testing.T) {
	data, _ := logtest.Log(60, 0) // 540 events: the page shows those around the call
	path := writeLog(t, string(data))
	ctx := tab(t, browser(t), newHandler(t, serve.Options{Log: path, Lang: i18n.EN}), "/?call=301")
	waitFor(t, ctx, `document.body.dataset.ready === 'true'`)
	key(t, ctx, "2")
	waitFor(t, ctx, `!document.getElementById('view-events').hidden`)
	waitFor(t, ctx, `(() => { const r = document.getElementById('event-301').getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; })()`)
	assert.True(t, inViewport(t, ctx, "event-301"))
	// The events left out are said, not silently skipped.
	gaps := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#events .gap')).map(g => g.innerText)`)
	assert.Equal(t, []string{"… 280 events not shown …", "… 216 events not shown …"}, gaps)
	assert.Equal(t, "44 of 540 events shown: those around the chosen call.", eval[string](t, ctx, `document.getElementById('events-count').innerText`))
	// The selector offers the next and previous calls.
	assert.Equal(t, "/?call=310", eval[string](t, ctx, `document.getElementById('next-call').getAttribute('href')`))
	assert.Equal(t, "/?call=292", eval[string](t, ctx, `document.getElementById('prev-call').getAttribute('href')`))
}

// A parallel batch is drawn as siblings, with the commit cursor moving in call order.
func TestBrowserBatchWithCommitCursor(t *testing.T) {
	ctx := tab(t, browser(t), newHandler(t, serve.Options{Log: writeLog(t, batchLog), Lang: i18n.EN}), "/?call=4")
	waitFor(t, ctx, `document.body.dataset.ready === 'true'`)
	calls := `Array.from(document.querySelectorAll('#batch-calls li')).map(li => li.innerText.replace(/\s+/g, ' ').trim())`
	want := map[string][]string{
		"1": {"▸ commit cursor: 0 of 3 results committed", "read · c1 event seq 3 not registered yet", "read · c2 event seq 4 not registered yet this call", "ls · c3 event seq 5 not registered yet"},
		"2": {"▸ commit cursor: 0 of 3 results committed", "read · c1 event seq 3 registered, waiting to run", "read · c2 event seq 4 registered, waiting to run this call", "ls · c3 event seq 5 not registered yet"},
		"3": {"read · c1 event seq 3 result committed", "▸ commit cursor: 1 of 3 results committed", "read · c2 event seq 4 started this call", "ls · c3 event seq 5 started"},
		"4": {"read · c1 event seq 3 result committed", "read · c2 event seq 4 result committed this call", "▸ commit cursor: 2 of 3 results committed", "ls · c3 event seq 5 started"},
		"6": {"read · c1 event seq 3 result committed", "read · c2 event seq 4 result committed this call", "read · c3 event seq 5 result committed"},
	}
	want["6"][2] = "ls · c3 event seq 5 result committed"
	for _, n := range []string{"1", "2", "3", "4", "6"} {
		click(t, ctx, "#stage-"+n)
		waitFor(t, ctx, `document.getElementById('stage-counter').innerText === 'stage `+n+` of 6'`)
		assert.Equal(t, want[n], eval[[]string](t, ctx, calls), "stage %s", n)
	}
	assert.Equal(t, "commit cursor: 3 of 3 results committed", eval[string](t, ctx, `document.getElementById('batch-cursor').innerText`))
	assert.Contains(t, eval[string](t, ctx, `document.getElementById('batch-about').innerText`), "The model asked for 3 calls in one reply (the assistant/message at seq 2).")
}

// A torn log shows its intact events under a notice.
func TestBrowserTornLog(t *testing.T) {
	ctx := tab(t, browser(t), newHandler(t, serve.Options{Log: "testdata/torn.jsonl", Lang: i18n.ZH}), "/")
	waitFor(t, ctx, `document.body.dataset.ready === 'true'`)
	got := eval[[]string](t, ctx, `['#notice-title', '#notice-what', '#notice-shown'].map(s => document.querySelector(s).innerText)`)
	assert.Equal(t, []string{"最后一行不完整",
		"第 10 行（最后一行）不完整：写入在这一行的中途停止了（例如进程被中断）。它之前的 8 个事件完好。",
		"下面显示它之前的 8 个完好事件，与 tinypi 的 LoadSession 加载时保留的相同。"}, got)
	assert.Equal(t, "10 {\"type\":\"turn/end\",\"seq\":8,\"time\":\"2026-", eval[string](t, ctx, `document.getElementById('notice-excerpt').innerText`))
	key(t, ctx, "2")
	waitFor(t, ctx, `!document.getElementById('view-events').hidden`)
	assert.Equal(t, 8, eval[int](t, ctx, `document.querySelectorAll('#events .event').length`))
}

func describeTree(tree *page.FrameTree) string {
	s := fmt.Sprintf("frame %q (unreachable %q)", tree.Frame.URL, tree.Frame.UnreachableURL)
	for _, c := range tree.ChildFrames {
		s += " [" + describeTree(c) + "]"
	}
	return s
}
