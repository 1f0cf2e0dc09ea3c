package tests

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// buildTinypi builds the reference's cmd/tinypi (chapter 14) into a new directory and returns it.
func buildTinypi(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(bin, "tinypi"), "../solutions/tinypi/cmd/tinypi")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building tinypi: %v\n%s", err, out)
	}
	return bin
}

// TestTinypi runs the scripts of testdata/tinypi against the reference's tinypi command, offline:
// its modes with a recorded conversation (-scripted), the session it writes, eval, and the one
// line it gives for each reason it cannot start or run.
func TestTinypi(t *testing.T) {
	bin := buildTinypi(t)
	kit, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	goEnv := hostGoEnv(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/tinypi",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			setOfflineEnv(env, goEnv)
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("KIT", kit)
			for _, name := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TINYPI_API_KEY", "TINYPI_PROVIDER", "TINYPI_API",
				"TINYPI_MODEL", "TINYPI_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "TINYPI_MAX_TOKENS", "TINYPI_PROXY_URL",
				"TINYPI_PROXY_TOKEN", "TINYPI_CONTEXT_WINDOW", "TINYPI_RETRY_BASE", "TINYPI_PRICE_IN", "TINYPI_PRICE_OUT"} {
				env.Setenv(name, "")
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":        cmdStatus,
			"fakeprovider":  cmdFakeProvider,
			"keyprovider":   cmdKeyProvider,
			"flakyprovider": cmdFlakyProvider,
		},
	})
}

// cmdFakeProvider starts an HTTP server on loopback that answers every request with the status
// given and a JSON error body, for as long as the script runs, and puts its URL in
// $PROVIDER_URL:
//
//	fakeprovider 429
func cmdFakeProvider(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakeprovider STATUS")
	}
	status, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("fakeprovider: bad status %q", args[0])
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(`{"error":{"message":"` + strings.ToLower(http.StatusText(status)) + `, try again later","type":"rate_limit_error"}}`))
	}))
	ts.Defer(srv.Close)
	ts.Setenv("PROVIDER_URL", srv.URL)
}

// cmdKeyProvider starts an OpenAI-style provider on loopback that answers "Hello." to a request
// with the API key given (Authorization: Bearer KEY) and 401 to any other, for as long as the
// script runs, and puts its URL in $PROVIDER_URL:
//
//	keyprovider sk-test
func cmdKeyProvider(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: keyprovider KEY")
	}
	want := "Bearer " + args[0]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != want {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"message":"wrong API key","type":"invalid_request_error"}}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hello.\"},\"finish_reason\":null}]}\n\n" +
			"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
			"data: [DONE]\n\n"))
	}))
	ts.Defer(srv.Close)
	ts.Setenv("PROVIDER_URL", srv.URL)
}

// helloStream is an OpenAI-style streamed answer, "Hello.".
const helloStream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hello.\"},\"finish_reason\":null}]}\n\n" +
	"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
	"data: [DONE]\n\n"

// cmdFlakyProvider starts an OpenAI-style provider on loopback that gives its answers in the order
// listed, the last one again for every further request, and puts its URL in $PROVIDER_URL. Each
// request adds a line "request N: ANSWER" to $WORK/requests.log and its body replaces
// $WORK/request.json (both written before the answer, so the files say what tinypi asked once
// tinypi has ended). An answer is
//
//	ok           "Hello." streamed to its end
//	STATUS       that HTTP status with a JSON error body (429, 500, 503, 400, ...)
//	STATUS@SECS  the same with Retry-After: SECS
//	STATUS@date  the same with Retry-After: an HTTP date one second ahead
//	drop         the connection closed before any response
//	cut          200 and the first bytes of an event, then the connection closed
//	partial      "Hel" streamed, then the connection closed
//
//	flakyprovider 429@1 500 drop ok
func cmdFlakyProvider(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: flakyprovider ANSWER...")
	}
	log := filepath.Join(ts.Getenv("WORK"), "requests.log")
	ts.Check(os.WriteFile(log, nil, 0o644))
	var (
		mu sync.Mutex
		n  int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		mu.Lock()
		os.WriteFile(filepath.Join(ts.Getenv("WORK"), "request.json"), body, 0o644)
		answer := args[min(n, len(args)-1)]
		n++
		f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			fmt.Fprintf(f, "request %d: %s\n", n, answer)
			f.Close()
		}
		mu.Unlock()
		hijack := func() {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
		}
		switch answer {
		case "ok":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte(helloStream))
			return
		case "drop":
			hijack()
			return
		case "cut", "partial":
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			event := `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}` + "\n\n"
			if answer == "cut" {
				event = event[:20]
			}
			chunk := fmt.Sprintf("%x\r\n%s\r\n", len(event), event)
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk)
			buf.Flush()
			conn.Close()
			return
		}
		code, after, _ := strings.Cut(answer, "@")
		status, err := strconv.Atoi(code)
		if err != nil {
			http.Error(w, "flakyprovider: bad answer "+answer, http.StatusTeapot)
			return
		}
		switch after {
		case "":
		case "date":
			w.Header().Set("Retry-After", time.Now().Add(time.Second).UTC().Format(http.TimeFormat))
		default:
			w.Header().Set("Retry-After", after)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(`{"error":{"message":"` + strings.ToLower(http.StatusText(status)) + `","type":"server_error"}}`))
	}))
	ts.Defer(srv.Close)
	ts.Setenv("PROVIDER_URL", srv.URL)
}

// TestTinypiRetryInterrupted sends Ctrl-C while tinypi waits to ask a model again (the server
// said Retry-After: 30): the wait ends at once, the run is aborted (exit 130) and no second
// request is made.
func TestTinypiRetryInterrupted(t *testing.T) {
	bin := buildTinypi(t)
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Retry-After", "30")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":{"message":"overloaded","type":"server_error"}}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	cmd := exec.Command(filepath.Join(bin, "tinypi"), "-session", filepath.Join(dir, "s.jsonl"), "-p", "hi")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=sk-test", "TINYPI_MODEL=gpt-test", "TINYPI_BASE_URL="+srv.URL,
		"TINYPI_PROVIDER=", "TINYPI_API=", "OPENAI_BASE_URL=", "TINYPI_PROXY_URL=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	sc := bufio.NewScanner(stderr)
	waiting := false
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if sc.Text() == "tinypi: retrying in 30s after 503 Service Unavailable (attempt 2 of 4)" {
			waiting = true
			break
		}
	}
	if !waiting {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("tinypi did not say it waits to retry; stderr:\n%s", seen.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stderr)
	seen.Write(rest)
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Errorf("tinypi ended with %v, want exit status 130; stderr:\n%s", err, seen.String())
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("the server got %d requests, want 1 (Ctrl-C ends the wait without a retry)", n)
	}
	if !strings.Contains(seen.String(), "request cancelled while waiting to retry") {
		t.Errorf("stderr does not say the wait was cancelled:\n%s", seen.String())
	}
}
