package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/hang"
	"github.com/learn-tinypi/course/internal/serve"
	"github.com/learn-tinypi/course/internal/sessionlog/logtest"
)

// lineWriter collects output and reports each write on a channel, so a test can wait for the
// URL course serve prints instead of sleeping.
type lineWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes chan struct{}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	select {
	case w.writes <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *lineWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// outputBound is how long a test waits for course serve to print what it prints within
// milliseconds: hang.Bound scales it.
const outputBound = 20 * time.Second

// waitFor returns once what was written contains want, or fails the test after a generous
// deadline: course serve reads the log after it prints its URL, so what it says about a damaged
// log comes later than the URL.
func (w *lineWriter) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(hang.Bound(outputBound))
	for !strings.Contains(w.String(), want) {
		select {
		case <-w.writes:
		case <-deadline:
			t.Fatalf("%q never written; so far %q", want, w.String())
		}
	}
}

// running is a course command running on a goroutine of its own (startCourse).
type running struct {
	cancel context.CancelFunc
	exited chan struct{} // closed when Run has returned
	code   int           // Run's exit code, once exited is closed
}

// stop cancels the command and returns its exit code once it has ended.
func (r *running) stop() int {
	r.cancel()
	<-r.exited
	return r.code
}

// startCourse runs course with args until the test stops it. When the test ends it is
// stopped and waited for, however the test ended (a wait for its output that failed
// included): it never outlives its test.
func startCourse(t *testing.T, args []string, stdout, stderr io.Writer) *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, exited: make(chan struct{})}
	go func() {
		defer close(r.exited)
		r.code = Run(ctx, args, Env{Stdout: stdout, Stderr: stderr, Getenv: func(string) string { return "" }, Content: course.Content()})
	}()
	t.Cleanup(func() { r.stop() })
	return r
}

// startServe runs course serve with args until the test cancels it, and returns the URL it
// printed and a function that stops it and returns the exit code.
func startServe(t *testing.T, args ...string) (url string, stdout, stderr *lineWriter, stop func() int) {
	t.Helper()
	stdout = &lineWriter{writes: make(chan struct{}, 1)}
	stderr = &lineWriter{writes: make(chan struct{}, 1)}
	r := startCourse(t, append([]string{"serve", "--port", "0"}, args...), stdout, stderr)
	url = waitURL(t, stdout, r, regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/`))
	return url, stdout, stderr, r.stop
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestServeShowsALogAndStopsOnCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	log, _ := filepath.Abs("../serve/testdata/readme.jsonl")
	url, stdout, stderr, stop := startServe(t, log, "--reference", "../serve/testdata/reference.jsonl")
	status, body := get(t, url)
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "一次工具调用的往返")
	assert.Contains(t, body, `id="compare"`)
	http.DefaultClient.CloseIdleConnections()
	assert.Equal(t, exitOK, stop())
	assert.Contains(t, stdout.String(), "日志："+log+"\n")
	assert.Contains(t, stdout.String(), "参考：../serve/testdata/reference.jsonl\n")
	assert.Contains(t, stdout.String(), "已停止。\n")
	assert.Empty(t, stderr.String())
}

func TestServePrintsTheDamageOfALog(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	url, _, stderr, stop := startServe(t, "--lang", "en", "../serve/testdata/seq.jsonl")
	status, body := get(t, url)
	http.DefaultClient.CloseIdleConnections()
	// Stopping before the terminal has had its say would cancel the read that says it.
	stderr.waitFor(t, "reload it after the repair.\n")
	assert.Equal(t, exitOK, stop())
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "line 7 has seq 6, want 5")
	assert.Equal(t, "../serve/testdata/seq.jsonl:7: the session log cannot be read\n"+
		"  line 7 has seq 6, want 5: seq is the number of events before it and must be contiguous. An event was lost, duplicated or moved.\n"+
		"  repair: the writer must take seq = the number of events so far when it appends; fix it and run again, or renumber the seqs by line.\n"+
		"The page shows the same; reload it after the repair.\n", stderr.String())
}

func TestServeFindsTheNewestLogOfAPracticeDirectory(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	sessions := filepath.Join(dir, "sessions")
	require.NoError(t, os.MkdirAll(sessions, 0o755))
	readme, err := os.ReadFile("../serve/testdata/readme.jsonl")
	require.NoError(t, err)
	old, newest := filepath.Join(sessions, "a.jsonl"), filepath.Join(sessions, "b.jsonl")
	require.NoError(t, os.WriteFile(old, readme, 0o644))
	require.NoError(t, os.WriteFile(newest, readme, 0o644))
	require.NoError(t, os.Chtimes(old, time.Now(), time.Now().Add(-time.Hour)))
	_, stdout, _, stop := startServe(t, "--dir", dir)
	assert.Equal(t, exitOK, stop())
	assert.Contains(t, stdout.String(), "日志："+newest+"\n")
}

func TestServeRefusesWhatItCannotServe(t *testing.T) {
	code, _, stderr := runCourse(t, nil, nil, "serve", "--addr", "0.0.0.0", "x.jsonl")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "错误：0.0.0.0 不是本机地址：网页会被网络上的其他机器看到。确实需要时加上 --allow-remote。\n", stderr)

	dir := t.TempDir()
	code, _, stderr = runCourse(t, nil, nil, "serve", "--dir", dir)
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "错误："+filepath.Join(dir, "sessions")+" 下没有会话日志（*.jsonl）。给出日志路径：course serve LOG\n", stderr)
}

// within runs course with args and fails the test when it has not ended within ten seconds
// (hang.Bound scales them), cancelled and waited for: course serve must never wait on what it
// was given to read.
func within(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	type result struct {
		code           int
		stdout, stderr string
	}
	r := hang.Within(t, 10*time.Second, fmt.Sprintf("course %v", args), func(ctx context.Context) result {
		var stdout, stderr bytes.Buffer
		code := Run(ctx, args, Env{Stdout: &stdout, Stderr: &stderr,
			Getenv: func(string) string { return "" }, Content: course.Content()})
		return result{code, stdout.String(), stderr.String()}
	})
	return r.code, r.stdout, r.stderr
}

func TestServeRefusesWhatIsNoRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	log, _ := filepath.Abs("../serve/testdata/readme.jsonl")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{fifo, "--check"}, fifo + ": the session log cannot be read\n  this is not a regular file but a named pipe (FIFO)"},
		{[]string{fifo}, "this is not a regular file but a named pipe (FIFO)"},
		{[]string{log, "--reference", fifo}, fifo + ": the session log cannot be read"},
		{[]string{log, "--reference", fifo, "--check"}, "named pipe (FIFO)"},
		{[]string{"/dev/zero", "--check"}, "/dev/zero: the session log cannot be read\n  this is not a regular file but a device"},
		{[]string{dir, "--check"}, "this is not a regular file but a directory"},
	} {
		if tt.args[0] == "/dev/zero" {
			if _, err := os.Stat("/dev/zero"); err != nil {
				continue
			}
		}
		code, stdout, stderr := within(t, append([]string{"--lang", "en", "serve", "--port", "0"}, tt.args...)...)
		assert.Equal(t, exitUsage, code, "%v", tt.args)
		assert.Contains(t, stderr, tt.want, "%v", tt.args)
		assert.Contains(t, stderr, "name a .jsonl file, for example a log under sessions/.", "%v", tt.args)
		assert.Empty(t, stdout, "%v: nothing listens", tt.args)
	}
}

// A path that exists but cannot be read (a loop of links) is bad input too, said plainly.
func TestServeRefusesAnUnreadablePath(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	require.NoError(t, os.Symlink(b, a))
	require.NoError(t, os.Symlink(a, b))
	code, stdout, stderr := within(t, "--lang", "en", "serve", a, "--check")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, a+" cannot be read: stat "+a+": too many levels of symbolic links. Check the path")
	assert.Empty(t, stdout)
}

func TestServeSizeLimit(t *testing.T) {
	log, _ := filepath.Abs("../serve/testdata/readme.jsonl")
	info, err := os.Stat(log)
	require.NoError(t, err)
	code, _, stderr := within(t, "--lang", "en", "serve", log, "--check", "--max-size", "1KiB")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, fmt.Sprintf("the file is %s, more than the limit of 1 KiB", sessionlogBytes(info.Size())))
	assert.Contains(t, stderr, "raise the limit with --max-size")
	for _, size := range []string{"0", "1MiB", "2mb", "1048576", "1.5GiB"} {
		code, stdout, stderr := within(t, "--lang", "en", "serve", log, "--check", "--max-size", size)
		assert.Equal(t, exitOK, code, "--max-size %s: %s", size, stderr)
		assert.Contains(t, stdout, "events: 9; tool calls: 1", size)
	}
	for _, size := range []string{"-1", "lots", "12XB", ""} {
		code, _, stderr := within(t, "--lang", "en", "serve", log, "--check", "--max-size", size)
		assert.Equal(t, exitUsage, code, "--max-size %q", size)
		assert.Contains(t, stderr, "is not a size", size)
	}
}

func sessionlogBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/1024)
}

// Whatever a log holds reaches the terminal visibly escaped: a tool name that clears the
// screen or retitles the terminal is shown, not obeyed.
func TestServeCheckEscapesTerminalControls(t *testing.T) {
	esc := `\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202e`
	text := strings.Join([]string{
		`{"format":"tinypi-session","version":1}`,
		`{"type":"assistant/message","seq":0,"data":{"message":{"role":"assistant","content":[{"type":"toolCall","id":"id` + esc + `","name":"rm` + esc + `","arguments":"{}"}],"stopReason":"toolUse"}}}`,
		`{"type":"tool/call","seq":1,"data":{"callId":"id` + esc + `","name":"rm` + esc + `","arguments":"{}"}}`,
		`{"type":"tool/st` + esc,
	}, "\n") + "\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "run\x1b[2J.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	code, stdout, stderr := within(t, "--lang", "en", "serve", path, "--check")
	assert.Equal(t, exitOK, code, stderr)
	for _, out := range []string{stdout, stderr} {
		assert.NotContains(t, out, "\x1b")
		assert.NotContains(t, out, "\x07")
		assert.NotContains(t, out, "\u009b")
		assert.NotContains(t, out, "\u202e")
	}
	assert.Contains(t, stdout, `following rm\x1b[2J\x1b]0;pwned\x07\u009b31m\u202e id\x1b[2J\x1b]0;pwned\x07\u009b31m\u202e (seq 1) through 6 stages:`)
	assert.Contains(t, stdout, `log: `+filepath.Join(dir, `run\x1b[2J.jsonl`))
	// A damaged line's detail and the path in the repair are escaped too.
	require.NoError(t, os.WriteFile(path, []byte(text+"{}\n"), 0o644))
	code, _, stderr = within(t, "--lang", "en", "serve", path, "--check")
	assert.Equal(t, exitFailed, code)
	assert.NotContains(t, stderr, "\x1b")
	assert.Contains(t, stderr, `run\x1b[2J.jsonl:4: the session log cannot be read`)
}

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain · 中文":     "plain · 中文",
		"a\x1b[2Jb":      `a\x1b[2Jb`,
		"tab\there\n":    `tab\x09here\x0a`,
		"bell\x07":       `bell\x07`,
		"csi\u009b":      `csi\u009b`,
		"rtl\u202eabc":   `rtl\u202eabc`,
		"iso\u2066x":     `iso\u2066x`,
		"bad\xffutf8":    `bad\xffutf8`,
		"del\x7f":        `del\x7f`,
		"emoji 🙂 \u00a0": "emoji 🙂 \u00a0",
	} {
		assert.Equal(t, want, visible(in), "%q", in)
	}
}

// A log being read when the command is interrupted (Ctrl-C, SIGTERM: Main cancels the
// context) ends the read at once; --check then says it was interrupted and fails.
func TestServeCheckStopsMidRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.jsonl")
	_, _, err := logtest.WriteFile(path, 3000, 0) // about 5 MB: several progress reports
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	a := &app{p: printer{lang: langEN}, stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	type result struct {
		err     error
		reports int
	}
	r := hang.Within(t, 10*time.Second, "checkServe, cancelled in the middle of the read,", func(ctx context.Context) result {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		reports := 0
		err := a.checkServe(ctx, serve.Options{Log: path, Lang: langEN, Progress: func(_ string, read int64) {
			reports++
			cancel() // as the signal would, in the middle of the read
		}})
		return result{err, reports}
	})
	assert.Equal(t, 1, r.reports, "the read went on after it was cancelled")
	assert.Equal(t, exitFailed, a.exitCode(r.err))
	assert.Equal(t, "interrupted: the log was not read to its end; nothing is shown.\n", stderr.String())
	assert.Empty(t, stdout.String())
}

func TestServeArguments(t *testing.T) {
	log, _ := filepath.Abs("../serve/testdata/readme.jsonl")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--port", "99999"}, "--port 99999 is not a port: ports are 0 to 65535"},
		{[]string{"--port", "-1"}, "--port -1 is not a port"},
		{[]string{"--addr", "127.0.0.1:80"}, "--addr 127.0.0.1:80 holds a port: --addr takes the host only"},
		{[]string{"--addr", "[::1]:80"}, "--addr [::1]:80 holds a port"},
		{[]string{"--addr", "0.0.0.0"}, "0.0.0.0 is not a loopback address"},
		{[]string{"--addr", "host\x07\x1bc"}, `host\x07\x1bc is not a loopback address`},
	} {
		code, stdout, stderr := within(t, append([]string{"--lang", "en", "serve", log}, tt.args...)...)
		assert.Equal(t, exitUsage, code, "%v", tt.args)
		assert.Contains(t, stderr, tt.want, "%v", tt.args)
		assert.Empty(t, stdout, "%v", tt.args)
	}
}

// --addr [::1] (the form a URL writes) listens on IPv6's loopback and answers there.
func TestServeOnIPv6Loopback(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	ln.Close()
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	log, _ := filepath.Abs("../serve/testdata/readme.jsonl")
	stdout := &lineWriter{writes: make(chan struct{}, 1)}
	r := startCourse(t, []string{"--lang", "en", "serve", log, "--addr", "[::1]", "--port", "0"}, stdout, io.Discard)
	url := waitURL(t, stdout, r, regexp.MustCompile(`http://\[::1\]:[0-9]+/`))
	status, body := get(t, url+"api/view")
	http.DefaultClient.CloseIdleConnections()
	assert.Equal(t, exitOK, r.stop())
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "README.md")
}

// waitURL waits for course serve, run by r, to print a URL matching re.
func waitURL(t *testing.T, stdout *lineWriter, r *running, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.After(hang.Bound(outputBound))
	for {
		if url := re.FindString(stdout.String()); url != "" {
			return url
		}
		select {
		case <-stdout.writes:
		case <-r.exited:
			t.Fatalf("course serve ended with %d before printing a URL; stdout %q", r.code, stdout.String())
		case <-deadline:
			t.Fatalf("no URL printed; stdout %q", stdout.String())
		}
	}
}

// --allow-remote says on stderr who can now read the log, and the page wants the token the
// printed URL holds.
func TestServeAllowRemoteWarnsAndWantsItsToken(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	log, _ := filepath.Abs("../serve/testdata/readme.jsonl")
	stdout := &lineWriter{writes: make(chan struct{}, 1)}
	stderr := &lineWriter{writes: make(chan struct{}, 1)}
	r := startCourse(t, []string{"--lang", "en", "serve", log, "--addr", "0.0.0.0", "--allow-remote", "--port", "0"}, stdout, stderr)
	url := waitURL(t, stdout, r, regexp.MustCompile(`http://0\.0\.0\.0:[0-9]+/\?token=[0-9a-f]{32}`))
	local := strings.Replace(url, "0.0.0.0", "127.0.0.1", 1)
	status, _ := get(t, strings.Split(local, "?")[0]+"api/view")
	assert.Equal(t, http.StatusForbidden, status, "without the token")
	status, body := get(t, local)
	assert.Equal(t, http.StatusOK, status, "with the token")
	assert.Contains(t, body, "README.md")
	http.DefaultClient.CloseIdleConnections()
	assert.Equal(t, exitOK, r.stop())
	assert.Contains(t, stderr.String(), "warning: --allow-remote has course serve listen on 0.0.0.0:")
	assert.Contains(t, stderr.String(), "can read this log: prompts, tool output, file contents, everything the agent saw.")
}

// A port in use says so and how to take another.
func TestServePortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	log, _ := filepath.Abs("../serve/testdata/readme.jsonl")
	code, stdout, stderr := within(t, "--lang", "en", "serve", log, "--port", strconv.Itoa(port))
	assert.Equal(t, exitFailed, code)
	assert.Equal(t, fmt.Sprintf("error: port %d is already in use (another course serve, perhaps): stop it, or choose another port, for example course serve --port 0 (any free port)\n", port), stderr)
	assert.Empty(t, stdout)
}

// course serve listens first and reads the log after: the URL comes before anything the read
// finds.
func TestServeListensBeforeReading(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	both := &lineWriter{writes: make(chan struct{}, 1)}
	r := startCourse(t, []string{"--lang", "en", "serve", "../serve/testdata/seq.jsonl", "--port", "0"}, both, both)
	deadline := time.After(hang.Bound(outputBound))
	for !strings.Contains(both.String(), "The page shows the same") {
		select {
		case <-both.writes:
		case <-r.exited:
			t.Fatalf("course serve ended with %d: %q", r.code, both.String())
		case <-deadline:
			t.Fatalf("no problem reported: %q", both.String())
		}
	}
	assert.Equal(t, exitOK, r.stop())
	out := both.String()
	assert.Less(t, strings.Index(out, "open in a browser: http://127.0.0.1:"), strings.Index(out, "line 7 has seq 6, want 5"), out)
}

// course serve runs in a practice directory, which has no docs/ (issue 18): its texts name what
// the learner has (course read 10, course serve --help).
func TestServeMessagesPointAtWhatAPracticeDirectoryHas(t *testing.T) {
	for id, m := range serveMessages {
		assert.NotContains(t, m.ZH, "docs/", id)
		assert.NotContains(t, m.EN, "docs/", id)
	}
}
