package sessionlog_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/learn-tinypi/course/internal/hang"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/sessionlog"
)

// TestMain checks that no test leaves a goroutine behind: a read starts several, and every way
// out of it (an error, a cancel, a torn line) must end them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// readBound is how long a read of these tests may take before it counts as blocked: none holds
// a line longer than 256 KiB, and the longest takes less than 0.1 s of CPU under -race, so half a
// minute (hang.Bound scales it) is a hang, not a slow machine: a test given 1% of a core (one core,
// busy loops beside it, nice) still has 0.3 s of CPU.
const readBound = 30 * time.Second

// readWithin reads path and fails the test when ReadFile has not returned within readBound: a
// reader that blocks on what it reads must not hang the test run as well. The read is
// cancelled and waited for, so a read that fails this way leaves nothing running into the next
// test.
func readWithin(t *testing.T, path string, opts sessionlog.Options) (*sessionlog.Log, error) {
	t.Helper()
	type result struct {
		log *sessionlog.Log
		err error
	}
	r := hang.Within(t, readBound, fmt.Sprintf("ReadFile(%s)", path), func(ctx context.Context) result {
		log, err := sessionlog.ReadFile(ctx, path, opts)
		return result{log, err}
	})
	return r.log, r.err
}

func kindOf(t *testing.T, err error) *sessionlog.Error {
	t.Helper()
	var e *sessionlog.Error
	require.ErrorAs(t, err, &e)
	return e
}

func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	link := filepath.Join(dir, "link.jsonl")
	require.NoError(t, os.Symlink(fifo, link))
	tests := []struct {
		name, path, what string
	}{
		{"fifo", fifo, "this is not a regular file but a named pipe (FIFO)"},
		{"link to a fifo", link, "this is not a regular file but a named pipe (FIFO)"},
		{"directory", dir, "this is not a regular file but a directory"},
		{"device", "/dev/zero", "this is not a regular file but a device"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.path); err != nil {
				t.Skipf("%s: %v", tt.path, err)
			}
			log, err := readWithin(t, tt.path, sessionlog.Options{})
			assert.Nil(t, log)
			e := kindOf(t, err)
			assert.Equal(t, sessionlog.KindNotRegular, e.Kind)
			assert.True(t, e.Kind.Refused())
			assert.Equal(t, tt.path, e.Path)
			what, fix := e.Explain(i18n.EN)
			assert.True(t, strings.HasPrefix(what, tt.what), what)
			assert.Equal(t, "name a .jsonl file, for example a log under sessions/.", fix)
		})
	}
}

func TestSizeLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	text := lines(header, user, request1)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))

	_, err := readWithin(t, path, sessionlog.Options{MaxBytes: int64(len(text) - 1)})
	e := kindOf(t, err)
	assert.Equal(t, sessionlog.KindTooLarge, e.Kind)
	assert.Equal(t, int64(len(text)), e.Size)
	assert.Equal(t, int64(len(text)-1), e.Limit)
	what, fix := (&sessionlog.Error{Kind: sessionlog.KindTooLarge, Size: 300 << 20, Limit: sessionlog.DefaultMaxBytes}).Explain(i18n.EN)
	assert.Equal(t, "the file is 300 MiB, more than the limit of 256 MiB: session logs are rarely this large, so this may not be one.", what)
	assert.Equal(t, "check the path; to read it anyway, raise the limit with --max-size (course serve --max-size 1GiB LOG, for example; --max-size 0 lifts it).", fix)

	log, err := readWithin(t, path, sessionlog.Options{MaxBytes: int64(len(text))})
	require.NoError(t, err)
	assert.Equal(t, 2, log.Len())
	log, err = readWithin(t, path, sessionlog.Options{MaxBytes: -1})
	require.NoError(t, err)
	assert.Equal(t, int64(len(text)), log.Size)
}

// A sparse file of 1 GiB without a newline (zeros, as a disk image or a crashed copy leaves
// them) is refused by the size limit; with the limit lifted, by the line limit, at line 1, and
// reading it allocates about one line's worth, not the file. The line limit is 256 KiB here (four
// times the reader's buffer, so that a line is assembled from pieces as a 64 MiB one is), so that
// the test reads and decodes 256 KiB, not 64 MiB, under the race detector too;
// TestTheLineLimitIsTheRuntimes proves that ReadFile's callers get 64 MiB.
func TestAHugeLineIsAnErrorNotAnAllocation(t *testing.T) {
	const maxLine = 256 << 10
	path := filepath.Join(t.TempDir(), "sparse.jsonl")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30))
	require.NoError(t, f.Close())

	_, err = readWithin(t, path, sessionlog.Options{MaxLineBytes: maxLine})
	assert.Equal(t, sessionlog.KindTooLarge, kindOf(t, err).Kind)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = readWithin(t, path, sessionlog.Options{MaxBytes: -1, MaxLineBytes: maxLine})
	runtime.ReadMemStats(&after)
	e := kindOf(t, err)
	assert.Equal(t, sessionlog.KindLongLine, e.Kind)
	assert.Equal(t, 1, e.Line)
	assert.Equal(t, int64(maxLine), e.Limit)
	// The line assembled as its buffer doubles (under 512 KiB), the index's first block (at most
	// 2 MiB) and the reader's buffers: a few MiB, where reading the line would take 1 GiB.
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20), "bytes allocated to read a 1 GiB line")
	what, _ := e.Explain(i18n.EN)
	assert.Equal(t, "line 1 is longer than 256 KiB: no event of a session log is this long, so this is not a session log or the line is damaged. The kit does not read such a line.", what)

	// A long line after good ones is found at its own line; one of exactly the limit is read.
	long := filepath.Join(t.TempDir(), "long.jsonl")
	event := `{"type":"user/message","seq":1,"data":"`
	require.NoError(t, os.WriteFile(long, []byte(lines(header, user)+event+strings.Repeat("x", maxLine)+"\"}\n"), 0o644))
	_, err = readWithin(t, long, sessionlog.Options{MaxLineBytes: maxLine})
	e = kindOf(t, err)
	assert.Equal(t, sessionlog.KindLongLine, e.Kind)
	assert.Equal(t, 3, e.Line)
	_, err = readWithin(t, long, sessionlog.Options{MaxLineBytes: maxLine + len(event) + len(`"}`)})
	assert.NotEqual(t, sessionlog.KindLongLine, kindOf(t, err).Kind, "a line as long as the limit")
}

// TestTheLineLimitIsTheRuntimes proves the limit every caller of ReadFile gets, without reading
// 64 MiB: Options without MaxLineBytes mean MaxLineBytes, which is tinypi's (TestReadersShareTheLineLimit),
// and the explanation of the error names it.
func TestTheLineLimitIsTheRuntimes(t *testing.T) {
	assert.Equal(t, 64<<20, sessionlog.LineLimit(sessionlog.Options{}))
	assert.Equal(t, 64<<20, sessionlog.LineLimit(sessionlog.Options{MaxLineBytes: -1}))
	assert.Equal(t, 100, sessionlog.LineLimit(sessionlog.Options{MaxLineBytes: 100}))
	what, _ := (&sessionlog.Error{Kind: sessionlog.KindLongLine, Line: 1, Limit: sessionlog.MaxLineBytes}).Explain(i18n.EN)
	assert.Equal(t, "line 1 is longer than 64 MiB: no event of a session log is this long, so this is not a session log or the line is damaged. The kit does not read such a line.", what)
}

func TestByteOrderMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bom.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("\xef\xbb\xbf"+lines(header, user)), 0o644))
	_, err := readWithin(t, path, sessionlog.Options{})
	e := kindOf(t, err)
	assert.Equal(t, sessionlog.KindBOM, e.Kind)
	assert.Equal(t, 1, e.Line)
	what, fix := e.Explain(i18n.EN)
	assert.Equal(t, "the file starts with a UTF-8 byte order mark (BOM, the bytes EF BB BF), which a session log does not have: an editor probably added it on saving.", what)
	assert.Equal(t, "remove the first 3 bytes: tail -c +4 "+path+" > "+path+".tmp && mv "+path+".tmp "+path, fix)
	runRepair(t, fix[strings.Index(fix, "tail"):])
	log, err := readWithin(t, path, sessionlog.Options{})
	require.NoError(t, err, "after the repair")
	assert.Equal(t, 1, log.Len())
}

// runRepair runs a repair command the way a learner pastes it, with sh.
func runRepair(t *testing.T, command string) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to run the repair with")
	}
	out, err := exec.Command(sh, "-c", command).CombinedOutput()
	require.NoError(t, err, "%s:\n%s", command, out)
}

// The repair the explanation of a torn log gives works: afterwards the log reads without
// damage and keeps its intact events.
func TestTornRepairWorks(t *testing.T) {
	for name, text := range map[string]string{
		"cut in the middle":     lines(header, user, request1) + `{"type":"assistant/mess`,
		"no final newline":      lines(header, user) + strings.TrimSuffix(lines(request1), "\n"),
		"a bad line at the end": lines(header, user, request1) + "{\"type\":\"assistant/mess\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "it's a log.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
			log, err := readWithin(t, path, sessionlog.Options{})
			e := kindOf(t, err)
			require.Equal(t, sessionlog.KindTorn, e.Kind)
			require.NotNil(t, log)
			_, fix := e.Explain(i18n.EN)
			runRepair(t, fix[strings.Index(fix, "head"):strings.LastIndex(fix, ";")])
			repaired, err := readWithin(t, path, sessionlog.Options{})
			require.NoError(t, err)
			assert.Equal(t, log.Len(), repaired.Len())
		})
	}
}

func TestReadStopsWhenItsContextEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	var b strings.Builder
	b.WriteString(header + "\n")
	for i := range 5000 {
		fmt.Fprintf(&b, `{"type":"turn/start","seq":%d,"data":{"turn":%d}}`+"\n", i, i)
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	log, err := sessionlog.ReadFile(ctx, path, sessionlog.Options{})
	assert.Nil(t, log)
	assert.ErrorIs(t, err, context.Canceled)

	// Cancelled in the middle: the pass stops within a few hundred lines.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	visited := 0
	log, err = sessionlog.ReadFile(ctx, path, sessionlog.Options{Visit: func(e sessionlog.Event) {
		visited++
		if e.Seq == 1000 {
			cancel()
		}
	}})
	assert.Nil(t, log)
	assert.ErrorIs(t, err, context.Canceled)
	assert.LessOrEqual(t, visited, 1000+512, "events read after the cancel: at most the rest of a batch")
}

func TestTheIndex(t *testing.T) {
	// Two calls of one batch (c1 and c2), a start for c2 only, results in call order, the
	// request after both.
	a := `{"type":"assistant/message","seq":1,"data":{"message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":"{}"},{"type":"toolCall","id":"c2","name":"ls","arguments":"{}"}],"stopReason":"toolUse"}}}`
	c1 := `{"type":"tool/call","seq":2,"data":{"callId":"c1","name":"read","arguments":"{}"}}`
	c2 := `{"type":"tool/call","seq":3,"data":{"callId":"c2","name":"ls","arguments":"{}"}}`
	s2 := `{"type":"tool/start","seq":4,"data":{"callId":"c2","name":"ls"},"sourceEventSeqs":[3]}`
	r1 := `{"type":"tool/result","seq":5,"data":{"message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[]}},"sourceEventSeqs":[2]}`
	r2 := `{"type":"tool/result","seq":6,"data":{"message":{"role":"toolResult","toolCallId":"c2","toolName":"ls","content":[]}},"sourceEventSeqs":[3]}`
	early := `{"type":"model/request","seq":7,"data":{"throughSeq":0,"messages":1}}`
	rq := `{"type":"model/request","seq":8,"data":{"throughSeq":6,"messages":4}}`
	log, err := read(t, lines(header, user, a, c1, c2, s2, r1, r2, early, rq))
	require.NoError(t, err)
	assert.Equal(t, 9, log.Len())
	assert.Equal(t, []sessionlog.CallInfo{
		{Seq: 2, ID: "c1", Name: "read", Asker: 1, Start: -1, Result: 5},
		{Seq: 3, ID: "c2", Name: "ls", Asker: 1, Start: 4, Result: 6},
	}, log.Calls())
	call, ok := log.CallAt(3)
	assert.True(t, ok)
	assert.Equal(t, "c2", call.ID)
	_, ok = log.CallAt(4)
	assert.False(t, ok)
	assert.Equal(t, 1, log.CallIndex(3))
	assert.Equal(t, -1, log.CallIndex(0))
	for seq, want := range map[int]int{-1: 0, 0: 1, 1: 2, 4: 2, 5: 3, 8: 4} {
		assert.Equal(t, want, log.MessagesThrough(seq), "messages through seq %d", seq)
	}
	assert.Equal(t, 6, log.MessageSeq(3))
	assert.Equal(t, 8, log.NextRequest(6, 6), "the request at seq 7 does not run through seq 6")
	assert.Equal(t, -1, log.NextRequest(8, 0))
	rqData, ok := log.RequestAt(8)
	assert.True(t, ok)
	assert.Equal(t, sessionlog.Request{ThroughSeq: 6, Messages: 4}, rqData)
	assert.Equal(t, sessionlog.TypeToolStart, log.TypeOf(4))

	events, err := log.EventsAt(context.Background(), []int{6, 2})
	require.NoError(t, err)
	require.Len(t, events, 2)
	assert.Equal(t, 8, events[0].Line)
	assert.Equal(t, &sessionlog.Call{CallID: "c1", Name: "read", Arguments: "{}"}, events[1].Call)
	assert.Equal(t, len(c1), events[1].Bytes)
}

// A log file replaced after it was read (a new run, a repair) is not read by the old index.
func TestEventsOfAReplacedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(lines(header, user, request1)), 0o644))
	log, err := sessionlog.ReadFile(context.Background(), path, sessionlog.Options{})
	require.NoError(t, err)
	// Appending keeps the events where they were.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(assistant + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = log.Events(context.Background(), 0, 2)
	require.NoError(t, err)
	// A new file in its place does not (it may even get the old file's inode).
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.WriteFile(path, []byte(lines(header+" ", user, request1)), 0o644))
	_, err = log.Events(context.Background(), 0, 2)
	assert.True(t, errors.Is(err, sessionlog.ErrChanged), "%v", err)
}

// decodeFast is an optimisation of decodeSlow: wherever it answers, it must give decodeSlow's
// event (without Data), and it must not accept a line decodeSlow refuses.
func TestFastDecoderAgreesWithTheDefinition(t *testing.T) {
	valid := []string{user, request1, assistant, call, start, result, request2, answer,
		`{"type":"tool/call","seq":0,"data":{"callId":"c","name":"n"}}`,
		`{"type":"tool/call","seq":0,"data":{"callId":"c","name":"n","arguments":"{}","message":{"role":"user","content":[]}}}`,
		`{"type":"model/request","seq":0,"data":{"throughSeq":-1,"messages":0},"time":"2026-12-01T10:00:00.5+08:00"}`,
		`{"seq":3,"type":"user/message","data":{"message":{"role":"user","content":[{"type":"thinking","thinking":"x"}],"timestamp":5}},"extra":[1,{"a":null}]}`,
		`{"type":"turn/start","seq":0,"data":{"turn":1}}`,
		`{"type":"x/y","seq":0,"ignorable":true,"data":[1,2]}`,
	}
	invalid := []string{
		`{"type":"user/message","seq":0,"data":{"message":{"role":"assistant","content":[]}}}`,
		`{"type":"user/message","seq":0,"data":{"message":{"role":"user","content":[{"type":"image"}]}}}`,
		`{"type":"user/message","seq":0,"data":{"message":null}}`,
		`{"type":"user/message","seq":0,"data":{}}`,
		`{"type":"user/message","seq":0,"data":[]}`,
		`{"type":"user/message","seq":0}`,
		`{"type":"tool/call","seq":0,"data":{"callId":"c"}}`,
		`{"type":"tool/call","seq":0,"data":{"callId":"c","name":"n","arguments":7}}`,
		`{"type":"tool/start","seq":0,"data":{"name":"n"}}`,
		`{"type":"model/request","seq":0,"data":{"throughSeq":"1","messages":0}}`,
		`{"type":"model/request","seq":0,"data":{"messages":0}}`,
		`{"type":"model/request","seq":0,"data":{"throughSeq":1,"messages":0},"time":"yesterday"}`,
		`{"type":"model/request","data":{"throughSeq":1,"messages":0}}`,
		`{"type":"","seq":0}`,
		`{"type":"tool/call","seq":0,"data":{"callId":"c","name":"n"}} x`,
		`{"type":"tool/call","seq":0,"data":{"callId":"c","name":"n"}`,
		`[]`,
		``,
	}
	for _, line := range valid {
		slow, err := sessionlog.DecodeSlow([]byte(line))
		require.NoError(t, err, line)
		fast, ok := sessionlog.DecodeFast([]byte(line))
		if !ok {
			continue // left to decodeSlow, which is right by definition
		}
		slow.Data = nil
		assert.Equal(t, slow, fast, line)
	}
	for _, line := range invalid {
		_, err := sessionlog.DecodeSlow([]byte(line))
		assert.Error(t, err, line)
		_, ok := sessionlog.DecodeFast([]byte(line))
		assert.False(t, ok, "the fast decoder accepts %s", line)
	}
	// The common lines do take the fast way.
	for _, line := range []string{user, call, start, result, request2} {
		_, ok := sessionlog.DecodeFast([]byte(line))
		assert.True(t, ok, line)
	}
}
