package serve_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
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

// serving runs Serve on a new loopback listener until the test ends and returns its address.
func serving(t *testing.T, opts serve.Options, so serve.ServeOptions) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve.Serve(ctx, ln, handler(t, opts), so) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(hang.Bound(10 * time.Second)):
			t.Error("Serve did not return after its context was cancelled")
		}
	})
	return ln.Addr().String()
}

// request sends GET path to addr with the Host header host, as a browser would after
// resolving host to addr.
func request(t *testing.T, addr, host, path string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	require.NoError(t, err)
	req.Host = host
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

// A page elsewhere that points its own name at 127.0.0.1 (DNS rebinding) sends its own name in
// Host: it gets nothing of the log.
func TestDNSRebindingIsRefused(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after serving's cleanup, which runs first
	addr := serving(t, serve.Options{Log: "testdata/readme.jsonl", Lang: i18n.EN}, serve.ServeOptions{Host: "127.0.0.1"})
	_, port, _ := net.SplitHostPort(addr)
	for _, host := range []string{"attacker.example:" + port, "attacker.example", "127.0.0.1.nip.io:" + port, "127.0.0.1:1", "localhost", "127.0.0.1"} {
		for _, path := range []string{"/", "/api/view", "/assets/app.js", "/nothing"} {
			resp, body := request(t, addr, host, path, nil)
			assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode, "Host %q, %s", host, path)
			assert.False(t, strings.Contains(body, "README"), "Host %q, %s: the log was answered", host, path)
			assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
		}
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port, "[::1]:" + port} {
		resp, body := request(t, addr, host, "/api/view", nil)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "Host %q", host)
		assert.True(t, strings.Contains(body, "README.md"), "Host %q", host)
	}
}

// --addr names a host the server answers to as well.
func TestAddrIsAnsweredTo(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after serving's cleanup, which runs first
	addr := serving(t, serve.Options{Log: "testdata/readme.jsonl"}, serve.ServeOptions{Host: "tinypi.localhost"})
	_, port, _ := net.SplitHostPort(addr)
	resp, _ := request(t, addr, "tinypi.localhost:"+port, "/", nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = request(t, addr, "other.localhost:"+port, "/", nil)
	assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode)
}

// With a token (course serve --allow-remote) every request must carry it: in the URL once,
// then in the cookie that answer sets.
func TestTokenIsRequired(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after serving's cleanup, which runs first
	const token = "0123456789abcdef0123456789abcdef"
	addr := serving(t, serve.Options{Log: "testdata/readme.jsonl"}, serve.ServeOptions{Token: token})
	resp, body := request(t, addr, addr, "/api/view", nil)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.False(t, strings.Contains(body, "README"), "the log was answered without the token")
	resp, _ = request(t, addr, addr, "/?token=wrong", nil)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = request(t, addr, addr, "/?token="+token, nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == serve.TokenCookie {
			cookie = c
		}
	}
	require.NotNil(t, cookie)
	assert.Equal(t, token, cookie.Value)
	assert.True(t, cookie.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, cookie.SameSite)
	resp, body = request(t, addr, addr, "/api/view", map[string]string{"Cookie": serve.TokenCookie + "=" + token})
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, strings.Contains(body, "README.md"))
}

// Every answer, whatever its status, forbids framing and loads nothing from elsewhere.
func TestSecurityHeaders(t *testing.T) {
	h := handler(t, serve.Options{Log: "testdata/readme.jsonl"})
	for _, target := range []string{"/", "/api/view", "/assets/app.js", "/assets/app.css", "/nothing", "/?call=3", "/assets/"} {
		rec := do(t, h, target)
		csp := rec.Header().Get("Content-Security-Policy")
		assert.Contains(t, csp, "default-src 'self'", target)
		assert.Contains(t, csp, "frame-ancestors 'none'", target)
		assert.Equal(t, "DENY", rec.Header().Get("X-Frame-Options"), target)
		assert.Equal(t, "no-referrer", rec.Header().Get("Referrer-Policy"), target)
		assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"), target)
	}
}

// The script and the style sheet are served; nothing else of the embedded files is: no
// directory listing, not the templates.
func TestOnlyTheAssetsAreServed(t *testing.T) {
	h := handler(t, serve.Options{Log: "testdata/readme.jsonl"})
	js := do(t, h, "/assets/app.js")
	assert.Equal(t, http.StatusOK, js.Code)
	assert.Equal(t, "text/javascript; charset=utf-8", js.Header().Get("Content-Type"))
	css := do(t, h, "/assets/app.css")
	assert.Equal(t, http.StatusOK, css.Code)
	assert.Equal(t, "text/css; charset=utf-8", css.Header().Get("Content-Type"))
	for _, target := range []string{"/assets/", "/assets", "/assets/page.html", "/assets/error.html", "/assets/./page.html",
		"/assets/../serve.go", "/assets/app.js/", "/assets/APP.JS", "/testdata/readme.jsonl"} {
		rec := do(t, h, target)
		assert.NotEqual(t, http.StatusOK, rec.Code, target)
		assert.NotContains(t, rec.Body.String(), "{{", target)
		assert.NotContains(t, rec.Body.String(), "app.css", target)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/view", strings.NewReader("{}")))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}
