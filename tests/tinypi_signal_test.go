//go:build unix

package tests

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/proctest"
)

// hangScript is a recorded conversation whose one call is a bash command that reports its process
// id through the FIFO "started" in the workspace, then runs until it is stopped.
const hangScript = `{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":"{\"command\": \"echo $$ > started; exec tail -f /dev/null\"}"}],"stopReason":"toolUse","usage":{"input":5,"output":2,"total":7},"timestamp":0}
{"role":"assistant","content":[{"type":"text","text":"Done."}],"stopReason":"stop","usage":{"input":5,"output":2,"total":7},"timestamp":0}
`

// TestTinypiSignalsStopCommands sends tinypi SIGTERM, SIGHUP or SIGINT while its bash tool runs a
// command, in print mode and at the interactive prompt: tinypi must abort the run, stop the
// command (no orphan left running) and exit with the signal's status as a shell reports it.
func TestTinypiSignalsStopCommands(t *testing.T) {
	bin := buildTinypi(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT} {
		for _, mode := range []string{"print", "interactive"} {
			t.Run(sig.String()+"/"+mode, func(t *testing.T) {
				dir := t.TempDir()
				repo := filepath.Join(dir, "repo")
				if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
					t.Fatalf("git init: %v\n%s", err, out)
				}
				script := filepath.Join(dir, "hang.jsonl")
				require.NoError(t, os.WriteFile(script, []byte(hangScript), 0o644))
				fifo := filepath.Join(repo, "started")
				proctest.MakeFIFO(t, fifo)
				args := []string{"-scripted", script, "-session", filepath.Join(dir, "s.jsonl")}
				cmd := exec.Command(filepath.Join(bin, "tinypi"), args...)
				if mode == "print" {
					cmd.Args = append(cmd.Args, "-p", "hang")
				} else {
					cmd.Stdin = strings.NewReader("hang\n")
				}
				cmd.Dir = repo
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				pid, exited := startReportingPID(t, cmd, "tinypi", "the command", fifo, &out)

				require.NoError(t, cmd.Process.Signal(sig))
				err := <-exited
				var exit *exec.ExitError
				want := 128 + int(sig)
				if !errors.As(err, &exit) || exit.ExitCode() != want {
					t.Errorf("tinypi after %v: %v, want exit status %d\n%s", sig, err, want, out.String())
				}
				if !proctest.Gone(pid) {
					t.Errorf("the command (pid %d) still runs after tinypi exited on %v\n%s", pid, sig, out.String())
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
		}
	}
}
