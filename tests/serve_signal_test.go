//go:build unix

package tests

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/hang"
	"github.com/learn-tinypi/course/internal/sessionlog/logtest"
)

// waitExit waits for cmd's end at most hang.Bound(d); a process still running then is killed
// and waited for, and the test fails.
func waitExit(t *testing.T, exited <-chan error, cmd *exec.Cmd, d time.Duration, what string) error {
	t.Helper()
	d = hang.Bound(d)
	select {
	case err := <-exited:
		return err
	case <-time.After(d):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("%s: course serve still ran %s later", what, d)
		return nil
	}
}

// course serve on a FIFO, a device or a directory, with or without --check, refuses at once
// instead of waiting for a writer that never comes; SIGTERM and Ctrl-C end a course serve that
// is reading a log or serving it at once, and nothing is left listening.
func TestServeNeverHangs(t *testing.T) {
	course, err := exec.LookPath("course")
	require.NoError(t, err, "finding the course command testscript installed")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	for _, args := range [][]string{{fifo, "--check"}, {fifo}, {"/dev/zero", "--check"}, {dir}} {
		cmd := exec.Command(course, append([]string{"--lang", "en", "serve", "--port", "0"}, args...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		err := waitExit(t, exited, cmd, 10*time.Second, strings.Join(args, " "))
		var exit *exec.ExitError
		if assert.True(t, errors.As(err, &exit), "%v: %v", args, err) {
			assert.Equal(t, 2, exit.ExitCode(), "%v:\n%s", args, out.String())
		}
		assert.Contains(t, out.String(), "is not a regular file", "%v", args)
	}

	// A log that takes a while to read: the page listens first, the read follows.
	log := filepath.Join(dir, "long.jsonl")
	_, _, err = logtest.WriteFile(log, 0, 20<<20)
	require.NoError(t, err)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(course, "--lang", "en", "serve", log, "--port", "0")
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			cmd.Stderr = io.Discard
			require.NoError(t, cmd.Start())
			exited := make(chan error, 1)
			lines := make(chan string, 16)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
				exited <- cmd.Wait()
			}()
			addr := ""
			urlRE := regexp.MustCompile(`http://(127\.0\.0\.1:[0-9]+)/`)
			// stop kills course serve and waits for it, its output read to the end.
			stop := func() {
				cmd.Process.Kill()
				for range lines {
				}
				<-exited
			}
			deadline := time.After(hang.Bound(20 * time.Second))
			for addr == "" {
				select {
				case line, ok := <-lines:
					if !ok {
						<-exited
						t.Fatal("course serve ended before printing its URL")
					}
					if m := urlRE.FindStringSubmatch(line); m != nil {
						addr = m[1]
					}
				case <-deadline:
					stop()
					t.Fatal("course serve printed no URL")
				}
			}
			require.NoError(t, cmd.Process.Signal(sig))
			// The rest of the output ends when course serve does: a course serve that ignores
			// the signal is killed after the bound (its output then ends too).
			bound := hang.Bound(10 * time.Second)
			killed := time.AfterFunc(bound, func() { cmd.Process.Kill() })
			var rest []string
			for line := range lines {
				rest = append(rest, line)
			}
			err = <-exited
			if !killed.Stop() {
				t.Fatalf("%v: course serve still ran %s later", sig, bound)
			}
			assert.NoError(t, err, "course serve after %v", sig)
			assert.Equal(t, []string{"stopped."}, rest)
			conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err == nil {
				conn.Close()
				t.Errorf("something still listens on %s after course serve ended", addr)
			}
		})
	}
	_ = os.Remove(log)
}
