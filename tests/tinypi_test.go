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
