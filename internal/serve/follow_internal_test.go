package serve

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/sessionlog"
)

// appendTo appends text to the file at path, as a writer does.
func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// lines calls next once and returns its lines as strings.
func lines(t *testing.T, tl *tailer, budget int) ([]string, bool) {
	t.Helper()
	got, more, err := tl.next(budget)
	require.NoError(t, err)
	out := []string{}
	for _, l := range got {
		out = append(out, string(l))
	}
	return out, more
}

func newTailer(t *testing.T, text string, maxLine int, limit int64) (string, *tailer) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	tl, err := openTailer(path, maxLine, limit)
	require.NoError(t, err)
	t.Cleanup(tl.close)
	return path, tl
}

// The tailer hands out the whole lines appended since its last read, in order; a line still
// being written is waited for and handed out whole once its "\n" is there.
func TestTailerReadsWholeLinesInOrder(t *testing.T) {
	path, tl := newTailer(t, "h\n", 1<<20, -1)
	got, _ := lines(t, tl, 1<<20)
	assert.Equal(t, []string{"h"}, got)
	got, _ = lines(t, tl, 1<<20)
	assert.Equal(t, []string{}, got, "nothing appended")

	appendTo(t, path, "one\r\ntwo\nthr")
	got, _ = lines(t, tl, 1<<20)
	assert.Equal(t, []string{"one", "two"}, got, "the torn third line is not handed out")
	appendTo(t, path, "ee-a")
	got, _ = lines(t, tl, 1<<20)
	assert.Equal(t, []string{}, got, "still torn")
	appendTo(t, path, "nd-more\nfour\n")
	got, _ = lines(t, tl, 1<<20)
	assert.Equal(t, []string{"three-and-more", "four"}, got)
	assert.Equal(t, 5, tl.lineNo)

	// A read stops after about its budget; the rest comes with the next.
	appendTo(t, path, "5\n6\n7\n")
	got, more := lines(t, tl, 1)
	assert.Equal(t, []string{"5", "6", "7"}, got, "one chunk is read whole")
	assert.False(t, more)
	appendTo(t, path, strings.Repeat("x", 70<<10)+"\n8\n")
	got, more = lines(t, tl, 1)
	assert.Equal(t, []string{}, got, "the first 64 KiB hold no line end")
	assert.True(t, more)
	got, more = lines(t, tl, 1)
	assert.Equal(t, []string{strings.Repeat("x", 70<<10), "8"}, got)
	assert.False(t, more)
}

// A file that got shorter, or another file in the log's place, is reported.
func TestTailerReportsTruncationAndReplacement(t *testing.T) {
	path, tl := newTailer(t, "h\none\n", 100, -1)
	got, _ := lines(t, tl, 1<<20)
	assert.Equal(t, []string{"h", "one"}, got)
	require.NoError(t, os.Truncate(path, 2))
	_, _, err := tl.next(1 << 20)
	assert.ErrorIs(t, err, errTruncated)

	path, tl = newTailer(t, "h\n", 100, -1)
	other := filepath.Join(filepath.Dir(path), "other.jsonl")
	require.NoError(t, os.WriteFile(other, []byte("h\nx\ny\n"), 0o644))
	require.NoError(t, os.Rename(other, path))
	_, _, err = tl.next(1 << 20)
	assert.ErrorIs(t, err, errReplaced)

	require.NoError(t, os.Remove(path))
	_, _, err = tl.next(1 << 20)
	assert.ErrorIs(t, err, errReplaced)
}

// A line longer than the limit is refused where it starts, terminated or still being
// written, and so is a file that grows past the size limit.
func TestTailerBounds(t *testing.T) {
	for name, text := range map[string]string{"terminated": "h\n" + strings.Repeat("x", 11) + "\n", "torn": "h\n" + strings.Repeat("x", 11)} {
		_, tl := newTailer(t, text, 10, -1)
		got, _, err := tl.next(1 << 20)
		var le *sessionlog.Error
		require.ErrorAs(t, err, &le, name)
		assert.Equal(t, sessionlog.KindLongLine, le.Kind, name)
		assert.Equal(t, 2, le.Line, name)
		assert.Len(t, got, 1, name)
	}
	path, tl := newTailer(t, "h\n", 10, 8)
	appendTo(t, path, "1234567\n")
	_, _, err := tl.next(1 << 20)
	var le *sessionlog.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, sessionlog.KindTooLarge, le.Kind)
}

// The tracker moves each call through the stages as its events arrive.
func TestRoundTrackerStages(t *testing.T) {
	data, err := os.ReadFile("testdata/readme.jsonl")
	require.NoError(t, err)
	logLines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	rt := newRoundTracker()
	base := Round{Key: "a3-0", CallID: "c1", Name: "read", Args: `{"path":"README.md"}`, Asker: 3, Seq: -1, Start: -1, Result: -1, Request: -1}
	want := map[int][]Round{} // after line i (0 the header): the rounds that changed
	r := base
	r.Stage = 1
	want[4] = []Round{r}
	r.Stage, r.Seq = 2, 4
	want[5] = []Round{r}
	r.Stage, r.Result, r.Output = 4, 5, "# tiny-pi\n用 Go 写的、会调用工具的 LLM agent 运行时。"
	want[6] = []Round{r}
	r.Stage, r.Request = 6, 6
	want[7] = []Round{r}
	for i, line := range logLines {
		require.NoError(t, rt.add([]byte(line)), "line %d", i+1)
		got, earlier := rt.take()
		assert.Zero(t, earlier)
		if diff := cmp.Diff(want[i], got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("after line %d (-want +got):\n%s", i+1, diff)
		}
	}
	assert.Empty(t, rt.open, "a sent round is let go")

	// An event out of step stops the following with the reader's explanation.
	err = rt.add([]byte(`{"type":"turn/start","seq":10,"data":{"turn":2}}`))
	var le *sessionlog.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, sessionlog.KindSeq, le.Kind)
	assert.Equal(t, 11, le.Line)
}

// A log whose calls never get results does not grow what a stream keeps.
func TestRoundTrackerIsBounded(t *testing.T) {
	rt := newRoundTracker()
	require.NoError(t, rt.add([]byte(`{"format":"tinypi-session","version":1}`)))
	for seq := range followOpen + 10 {
		require.NoError(t, rt.add([]byte(`{"type":"tool/call","seq":`+strconv.Itoa(seq)+`,"data":{"callId":"c`+strconv.Itoa(seq)+`","name":"ls"}}`)))
	}
	assert.Len(t, rt.open, followOpen)
	assert.NotContains(t, rt.open, 9, "the oldest are let go")
	assert.Contains(t, rt.open, 10)
	got, earlier := rt.take()
	assert.Len(t, got, followPushed)
	assert.Equal(t, followOpen+10-followPushed, earlier)
	assert.Equal(t, "c"+strconv.Itoa(followOpen+9), got[len(got)-1].CallID)
}
