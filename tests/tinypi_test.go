package tests

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

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
			for _, name := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TINYPI_PROVIDER", "TINYPI_MODEL", "TINYPI_BASE_URL", "TINYPI_PROXY_URL"} {
				env.Setenv(name, "")
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":       cmdStatus,
			"fakeprovider": cmdFakeProvider,
			"keyprovider":  cmdKeyProvider,
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
