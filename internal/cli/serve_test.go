package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	course "github.com/learn-tinypi/course"
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

// startServe runs course serve with args until the test cancels it, and returns the URL it
// printed and a function that stops it and returns the exit code.
func startServe(t *testing.T, args ...string) (url string, stdout, stderr *lineWriter, stop func() int) {
	t.Helper()
	stdout = &lineWriter{writes: make(chan struct{}, 1)}
	stderr = &lineWriter{writes: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() {
		code <- Run(ctx, append([]string{"serve", "--port", "0"}, args...), Env{
			Stdout: stdout, Stderr: stderr, Getenv: func(string) string { return "" }, Content: course.Content(),
		})
	}()
	urlRE := regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/`)
	deadline := time.After(20 * time.Second)
	for url == "" {
		select {
		case <-stdout.writes:
			url = urlRE.FindString(stdout.String())
		case c := <-code:
			cancel()
			t.Fatalf("course serve ended with %d before printing a URL; stdout %q, stderr %q", c, stdout.String(), stderr.String())
		case <-deadline:
			cancel()
			t.Fatalf("no URL printed; stdout %q", stdout.String())
		}
	}
	return url, stdout, stderr, func() int { cancel(); return <-code }
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
