package serve

// Follow mode (course serve --follow): the page of a session that is still running. The server
// tails the log as the writer appends to it and pushes, as Server-Sent Events on
// GET /api/follow, the state of each tool call's round trip as it moves: the model asked for
// it, it was registered, it runs, its result is committed, the request that carries the result
// was sent. The page draws each call's row as it comes (assets/follow.js).
//
// What is read is bounded like every read of a log: only whole lines are read (a line still
// being written is waited for, never parsed), a line longer than the line limit and a file
// above the size limit stop the stream with an explanation, and a log that was replaced or
// truncated (a new run at the same path, LoadSession cutting a torn line) is reported and not
// followed further. A stream ends when its client is gone; at most maxFollowers streams run at
// once.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/sessionlog"
	"github.com/learn-tinypi/course/solutions/tinypi"
)

const (
	// maxFollowers is how many follow streams run at once (each holds a tailer of the log).
	maxFollowers = 4
	// defaultFollowPoll is how often a follow stream looks whether the log grew.
	defaultFollowPoll = 250 * time.Millisecond
	// followStepBytes is how much of the log one step of a stream reads before it pushes.
	followStepBytes = 1 << 20
	// followOpen is the most rounds a stream keeps track of before they are sent; older ones
	// are let go (a log whose calls never get results must not grow the server's memory).
	followOpen = 256
	// followPushed is the most rounds one push carries: the page keeps that many rows.
	followPushed = 100
	// followTextShown is how much of a call's arguments and of its result a row shows.
	followTextShown = 300
	// followWriteWait is how long a push may take before its client is given up.
	followWriteWait = 10 * time.Second
)

// followMessages are the texts of the live panel. The script gets them in View.Texts.
var followMessages = i18n.Catalog{
	"live.title":      {ZH: "正在运行的会话", EN: "The running session"},
	"live.about":      {ZH: "日志每追加一个事件，这里就更新：每一行是一个工具调用的往返，走到了哪个阶段。点“查看往返”逐阶段看它。", EN: "This updates as each event is appended to the log: each row is one tool call's round trip and the stage it has reached. \"Open its round trip\" shows it stage by stage."},
	"live.connecting": {ZH: "正在连接……", EN: "connecting…"},
	"live.events":     {ZH: "已读到 {n} 个事件，等待新的事件……", EN: "{n} events so far, waiting for more…"},
	"live.none":       {ZH: "还没有工具调用。", EN: "no tool call yet."},
	"live.earlier":    {ZH: "更早的 {n} 个调用没有列出。", EN: "{n} earlier calls are not listed."},
	"live.lost":       {ZH: "与 course serve 的连接断开了，正在重连（重连后从日志开头重新读取）……", EN: "the connection to course serve was lost; reconnecting (the log is then read again from its start)…"},
	"live.stopped":    {ZH: "不再跟踪：", EN: "no longer following: "},
	"live.open":       {ZH: "查看往返", EN: "open its round trip"},
	"live.step1":      {ZH: "模型给出调用", EN: "asked"},
	"live.step2":      {ZH: "登记", EN: "registered"},
	"live.step3":      {ZH: "运行", EN: "runs"},
	"live.step4":      {ZH: "提交结果", EN: "result committed"},
	"live.step5":      {ZH: "派生消息", EN: "messages derived"},
	"live.step6":      {ZH: "发送", EN: "sent"},
	"live.state1":     {ZH: "模型在 seq {asker} 给出了调用，还没有登记", EN: "asked for at seq {asker}, not registered yet"},
	"live.state2":     {ZH: "已登记（seq {seq}），等待运行", EN: "registered (seq {seq}), waiting to run"},
	"live.state3":     {ZH: "正在运行（tool/start，seq {start}）", EN: "running (tool/start, seq {start})"},
	"live.state4":     {ZH: "结果已提交（seq {result}），等待下一次请求", EN: "result committed (seq {result}), waiting for the next request"},
	"live.state6":     {ZH: "结果已随请求（seq {request}）发给模型", EN: "result sent to the model in the request at seq {request}"},
	"live.error":      {ZH: "出错", EN: "error"},
	"live.cut":        {ZH: "……（还有 {n} 字节）", EN: "… ({n} more bytes)"},
	"live.replaced":   {ZH: "日志文件被替换了（换成了另一个文件，或被删除）：这一页显示的是原来的文件。刷新本页，看新的文件。", EN: "the log file was replaced (another file took its place, or it was removed): this page shows the old one. Reload the page to see the new file."},
	"live.truncated":  {ZH: "日志文件变短了（被截断或重写）：已经显示的事件不再可信。刷新本页，重新读取。", EN: "the log file got shorter (it was truncated or rewritten): the events shown can no longer be trusted. Reload the page to read it again."},
	"live.busy":       {ZH: "跟踪这个日志的网页太多了（最多 %d 个）：关掉一个再刷新。", EN: "too many pages follow this log (at most %d): close one and reload."},
}

// addFollow marks v as the page of a followed log and gives it the live panel's texts.
func (h *Handler) addFollow(v *View) {
	if !h.opts.Follow || v == nil {
		return
	}
	v.Follow = true
	for id := range maps.Keys(followMessages) {
		if !strings.Contains(followMessages[id].EN, "%") {
			v.Texts[id] = followMessages.Text(h.opts.Lang, id)
		}
	}
}

// Round is what the live panel shows of one tool call's round trip so far.
type Round struct {
	// Key names the round while it moves: "a<asker seq>-<block>" from the moment the model asked
	// for it, "c<call seq>" for a tool/call no assistant/message asked for.
	Key    string `json:"key"`
	CallID string `json:"callId"`
	Name   string `json:"name"`
	// Args is the call's arguments, cut to followTextShown bytes; ArgsCut the bytes left out.
	Args    string `json:"args"`
	ArgsCut int    `json:"argsCut,omitempty"`
	// Stage is the last of the page's six stages reached: 1 asked, 2 registered, 3 started,
	// 4 result committed, 6 sent in a model/request (stage 5, deriving, leaves no event).
	Stage int `json:"stage"`
	// The seqs of its events; -1 for those not in the log yet.
	Asker   int `json:"asker"`
	Seq     int `json:"seq"`
	Start   int `json:"start"`
	Result  int `json:"result"`
	Request int `json:"request"`
	// Output is the text of its result, cut; OutputCut the bytes left out; IsError the result's.
	Output    string `json:"output,omitempty"`
	OutputCut int    `json:"outputCut,omitempty"`
	IsError   bool   `json:"isError,omitempty"`
}

// roundTracker turns the lines of a log, in order, into rounds.
type roundTracker struct {
	lines   int // the lines read, the header included
	events  int // the events read: the seq the next one must have
	asked   map[string]*Round
	open    map[int]*Round // by tool/call seq: registered, not sent yet
	changed []*Round
	seen    map[*Round]bool // in changed
	queue   []*Round        // the rounds waiting, and some that no longer do, oldest first
}

func newRoundTracker() *roundTracker {
	return &roundTracker{asked: map[string]*Round{}, open: map[int]*Round{}, seen: map[*Round]bool{}}
}

// add reads the next line of the log. The error is a *sessionlog.Error: the log cannot be
// followed past this line.
func (rt *roundTracker) add(line []byte) error {
	rt.lines++
	if rt.lines == 1 {
		_, err := sessionlog.DecodeHeader(line)
		return err
	}
	e, err := sessionlog.DecodeLine(line, rt.lines)
	if err != nil {
		return err
	}
	if e.Seq != rt.events {
		return &sessionlog.Error{Kind: sessionlog.KindSeq, Line: e.Line, Seq: e.Seq, WantSeq: rt.events,
			Detail: fmt.Sprintf("seq %d, want %d (the number of events before it)", e.Seq, rt.events)}
	}
	rt.events++
	switch e.Type {
	case sessionlog.TypeAssistantMessage:
		am, _ := e.Message.(tinypi.AssistantMessage)
		block := 0
		for _, b := range am.Content {
			if tc, ok := b.(tinypi.ToolCall); ok {
				r := rt.newRound(fmt.Sprintf("a%d-%d", e.Seq, block), tc.ID, tc.Name, tc.Arguments)
				r.Asker, r.Stage = e.Seq, 1
				rt.asked[tc.ID] = r
				block++
			}
		}
	case sessionlog.TypeToolCall:
		r, ok := rt.asked[e.Call.CallID]
		if ok && r.Name == e.Call.Name {
			delete(rt.asked, e.Call.CallID)
		} else {
			r = rt.newRound(fmt.Sprintf("c%d", e.Seq), e.Call.CallID, e.Call.Name, e.Call.Arguments)
		}
		r.Seq, r.Stage = e.Seq, 2
		rt.open[e.Seq] = r
		rt.touch(r)
	case sessionlog.TypeToolStart:
		if r := rt.source(e); r != nil && r.Start < 0 && r.Result < 0 {
			r.Start, r.Stage = e.Seq, 3
			rt.touch(r)
		}
	case sessionlog.TypeToolResult:
		if r := rt.source(e); r != nil && r.Result < 0 {
			tr, _ := e.Message.(tinypi.ToolResultMessage)
			var text strings.Builder
			for _, b := range tr.Content {
				if t, ok := b.(tinypi.TextContent); ok {
					text.WriteString(t.Text)
				}
			}
			r.Output, r.OutputCut = cutCount(text.String(), followTextShown)
			r.Result, r.IsError, r.Stage = e.Seq, tr.IsError, 4
			rt.touch(r)
		}
	case sessionlog.TypeModelRequest:
		for seq, r := range rt.open {
			if r.Result >= 0 && r.Result <= e.Request.ThroughSeq {
				r.Request, r.Stage = e.Seq, 6
				delete(rt.open, seq)
				rt.touch(r)
			}
		}
	}
	rt.bound()
	return nil
}

func (rt *roundTracker) newRound(key, id, name, args string) *Round {
	r := &Round{Key: key, CallID: id, Name: name, Asker: -1, Seq: -1, Start: -1, Result: -1, Request: -1}
	r.Args, r.ArgsCut = cutCount(args, followTextShown)
	rt.queue = append(rt.queue, r)
	rt.touch(r)
	return r
}

// source is the open round a tool/start or tool/result refers to, nil when there is none (the
// reference is bad, or the round was let go).
func (rt *roundTracker) source(e sessionlog.Event) *Round {
	if len(e.SourceEventSeqs) != 1 {
		return nil
	}
	return rt.open[e.SourceEventSeqs[0]]
}

func (rt *roundTracker) touch(r *Round) {
	if !rt.seen[r] {
		rt.seen[r] = true
		rt.changed = append(rt.changed, r)
	}
}

// bound lets the oldest rounds go while more than followOpen wait for their next event. The
// queue of rounds in the order they were first seen is cut down to those still waiting whenever
// it holds twice as many: each round costs a constant time however long the log.
func (rt *roundTracker) bound() {
	if len(rt.queue) > 2*followOpen {
		rt.queue = slices.DeleteFunc(rt.queue, func(r *Round) bool { return !rt.waiting(r) })
	}
	for len(rt.asked)+len(rt.open) > followOpen {
		oldest := rt.queue[0]
		rt.queue = rt.queue[1:]
		if rt.asked[oldest.CallID] == oldest {
			delete(rt.asked, oldest.CallID)
		}
		if oldest.Seq >= 0 && rt.open[oldest.Seq] == oldest {
			delete(rt.open, oldest.Seq)
		}
	}
}

// waiting reports whether r still waits for its next event.
func (rt *roundTracker) waiting(r *Round) bool {
	return rt.asked[r.CallID] == r || (r.Seq >= 0 && rt.open[r.Seq] == r)
}

// take returns the rounds changed since the last take, in the order they were first seen: at
// most followPushed, the latest; earlier is how many were left out.
func (rt *roundTracker) take() (rounds []Round, earlier int) {
	changed := rt.changed
	if len(changed) > followPushed {
		earlier = len(changed) - followPushed
		changed = changed[earlier:]
	}
	rounds = make([]Round, 0, len(changed))
	for _, r := range changed {
		rounds = append(rounds, *r)
	}
	rt.changed = rt.changed[:0]
	clear(rt.seen)
	return rounds, earlier
}

// errReplaced and errTruncated are the followed file changing under the tailer.
var (
	errReplaced  = errors.New("the log file was replaced")
	errTruncated = errors.New("the log file was truncated")
)

// tailer reads the whole lines appended to a file as it grows. It keeps the file open, and
// never holds a line that is still being written: it only remembers how far it looked for the
// line's end.
type tailer struct {
	path    string
	f       *os.File
	info    os.FileInfo // the file opened, to tell another file in its place
	maxLine int
	limit   int64 // the largest size followed; negative: no limit
	off     int64 // where the next line starts
	scanned int64 // the bytes after off known to hold no "\n"
	lineNo  int   // the lines read
	buf     []byte
}

// openTailer opens the regular file at path for tailing from its start. maxLine is the longest
// line and limit the largest size (negative: none) it reads.
func openTailer(path string, maxLine int, limit int64) (*tailer, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("following the session log: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, &sessionlog.Error{Kind: sessionlog.KindNotRegular, Path: path, Mode: info.Mode()}
	}
	// Non-blocking: a FIFO put in its place since the Stat must not hang the stream.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("following the session log: %w", err)
	}
	if info, err = f.Stat(); err != nil || !info.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = &sessionlog.Error{Kind: sessionlog.KindNotRegular, Path: path, Mode: info.Mode()}
		}
		return nil, err
	}
	return &tailer{path: path, f: f, info: info, maxLine: maxLine, limit: limit, buf: make([]byte, 64<<10)}, nil
}

func (t *tailer) close() { t.f.Close() }

// next returns the whole lines appended since the last call, without their line ends, reading
// about budget bytes at most; more says that more whole lines may follow at once. A line without
// its "\n" yet is left for a later call. errReplaced and errTruncated say that the file at path
// is no longer the one being read; a *sessionlog.Error a line too long or a file too large.
func (t *tailer) next(budget int) (lines [][]byte, more bool, err error) {
	now, err := os.Stat(t.path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && !os.SameFile(now, t.info)) {
		return nil, false, errReplaced
	}
	if err != nil {
		return nil, false, fmt.Errorf("following the session log: %w", err)
	}
	info, err := t.f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("following the session log: %w", err)
	}
	size := info.Size()
	switch {
	case size < t.off+t.scanned:
		return nil, false, errTruncated
	case t.limit >= 0 && size > t.limit:
		return nil, false, &sessionlog.Error{Kind: sessionlog.KindTooLarge, Path: t.path, Size: size, Limit: t.limit}
	}
	read := 0
	for t.off+t.scanned < size && read < budget {
		start := t.off + t.scanned
		n, err := t.f.ReadAt(t.buf[:min(int64(len(t.buf)), size-start)], start)
		if n == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				return lines, false, errTruncated // shorter than its size a moment ago
			}
			return lines, false, fmt.Errorf("following the session log: %w", err)
		}
		read += n
		chunk := t.buf[:n]
		for {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				break
			}
			length := t.scanned + int64(i)
			if length > int64(t.maxLine) {
				return lines, false, t.longLine()
			}
			line := bytes.Clone(chunk[:i])
			if t.scanned > 0 { // its start was read by an earlier call or chunk: read it whole
				line = make([]byte, length)
				if _, err := t.f.ReadAt(line, t.off); err != nil {
					return lines, false, fmt.Errorf("following the session log: %w", err)
				}
			}
			lines = append(lines, bytes.TrimSuffix(line, []byte("\r")))
			t.off += length + 1
			t.scanned = 0
			t.lineNo++
			chunk = chunk[i+1:]
		}
		t.scanned += int64(len(chunk))
		if t.scanned > int64(t.maxLine) {
			return lines, false, t.longLine()
		}
	}
	return lines, t.off+t.scanned < size, nil
}

func (t *tailer) longLine() error {
	return &sessionlog.Error{Kind: sessionlog.KindLongLine, Path: t.path, Line: t.lineNo + 1, Limit: int64(t.maxLine)}
}

// followPush is the data of a "rounds" event: the rounds that changed, the number of events
// read so far and how many changed rounds were left out before the first.
type followPush struct {
	Events  int     `json:"events"`
	Rounds  []Round `json:"rounds"`
	Earlier int     `json:"earlier,omitempty"`
}

// serveFollow is GET /api/follow: a stream of Server-Sent Events. "rounds" carries a
// followPush after each step that read lines; "problem" a Problem that stops the stream (a
// line that is not an event, a line too long, a file too large); "changed" the text saying
// that the file was replaced or truncated, which stops it too.
func (h *Handler) serveFollow(w http.ResponseWriter, r *http.Request) {
	lang := h.opts.Lang
	select {
	case h.followers <- struct{}{}:
		defer func() { <-h.followers }()
	default:
		w.Header().Set("Retry-After", "10")
		http.Error(w, followMessages.Text(lang, "live.busy", maxFollowers), http.StatusServiceUnavailable)
		return
	}
	rc := http.NewResponseController(w)
	// The server's ReadTimeout bounds a request from its start, and when it passes, net/http
	// cancels the request's context: a stream would end after readTimeout. A follower sends
	// nothing after its request, so no read deadline is needed; each push has its own write
	// deadline below, and the slot above bounds how many streams there are.
	_ = rc.SetReadDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	send := func(event string, data any) bool {
		body, err := json.Marshal(data)
		if err != nil {
			return false
		}
		// Each push may take followWriteWait; a client that reads nothing is given up.
		_ = rc.SetWriteDeadline(time.Now().Add(followWriteWait))
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, body); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	problem := func(err error) { send("problem", Explain(err, h.opts.Log, lang)) }
	t, err := openTailer(h.opts.Log, sessionlog.MaxLineBytes, h.opts.maxBytes())
	if err != nil {
		problem(err)
		return
	}
	defer t.close()
	if !send("start", struct{}{}) {
		return
	}
	poll := h.opts.FollowPoll
	if poll <= 0 {
		poll = defaultFollowPoll
	}
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	rt := newRoundTracker()
	for {
		lines, more, err := t.next(followStepBytes)
		for _, line := range lines {
			if lerr := rt.add(line); lerr != nil {
				problem(withPath(lerr, h.opts.Log))
				return
			}
		}
		if len(lines) > 0 {
			rounds, earlier := rt.take()
			if !send("rounds", followPush{Events: rt.events, Rounds: rounds, Earlier: earlier}) {
				return
			}
		}
		switch {
		case errors.Is(err, errReplaced):
			send("changed", followMessages.Text(lang, "live.replaced"))
			return
		case errors.Is(err, errTruncated):
			send("changed", followMessages.Text(lang, "live.truncated"))
			return
		case err != nil:
			problem(err)
			return
		}
		if more {
			if r.Context().Err() != nil {
				return
			}
			continue
		}
		select {
		case <-r.Context().Done():
			return
		case <-ticker.C:
		}
	}
}

// withPath sets the path of a *sessionlog.Error, for its explanation.
func withPath(err error, path string) error {
	var le *sessionlog.Error
	if errors.As(err, &le) {
		le.Path = path
	}
	return err
}

// maxBytes is the size limit of opts.MaxBytes: negative for none.
func (o Options) maxBytes() int64 {
	switch {
	case o.MaxBytes == 0:
		return sessionlog.DefaultMaxBytes
	case o.MaxBytes < 0:
		return -1
	}
	return o.MaxBytes
}
