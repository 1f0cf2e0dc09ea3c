package serve

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/sessionlog"
	"github.com/learn-tinypi/course/solutions/tinypi"
)

// What the server takes on at once and how long it waits: a page on this machine for one
// learner, which a hostile page elsewhere or a log of any size must not turn into gigabytes of
// memory, hours of CPU or every file descriptor.
const (
	// DefaultMaxViews is how many views (a page load, an /api/view) are computed at once unless
	// Options.MaxViews says otherwise; one more is answered 503 with Retry-After at once rather
	// than queued, so that a burst of requests cannot pile up work and memory.
	DefaultMaxViews = 4
	// retryAfter is the Retry-After of that 503, in seconds.
	retryAfter = "2"
	// viewTimeout bounds the computation of one view: past it the answer could not be written
	// anyway (writeTimeout), so the work stops.
	viewTimeout = 100 * time.Second

	// The http.Server's limits: a request's header must come within readHeaderTimeout and the
	// whole request within readTimeout; an answer must be written within writeTimeout of the
	// end of the header (the first read of a large log happens while course serve starts, so a
	// view takes far less); a kept-alive connection is closed after idleTimeout without a
	// request. A header is at most maxHeaderBytes.
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 2 * time.Minute
	idleTimeout       = 30 * time.Second
	maxHeaderBytes    = 64 << 10
	// maxConns is how many connections are open at once; more wait in the listen queue until
	// one closes. A browser opens about six to a server.
	maxConns = 64

	// hugeLine: an event whose line is longer than this is not decoded for a view. Decoding a
	// line takes several times its length (the line, its JSON values, the indented payload);
	// a view shows a few KiB of it. Such an event is shown by the first rawShown bytes of its
	// line as the file holds them, with the number of bytes left out, so that one view holds
	// a few times hugeLine of any line at most, whatever the log holds (a 60 MB message
	// costs a view 16 KiB of it). A line up to hugeLine is decoded, so that a message of ten
	// thousand tool calls (600 KiB) is shown by its first calls.
	hugeLine = 1 << 20
	// rawShown is how much of a huge line is read: the payload view's share and room for the
	// end of a character.
	rawShown = payloadShown + utf8.UTFMax
)

// limitMessages are the texts of the limits above.
var limitMessages = i18n.Catalog{
	"busy": {ZH: "503 服务繁忙：同时计算的视图已达上限（%[1]d 个），请稍后刷新。", EN: "503 busy: as many views as are computed at once (%[1]d) are being computed; reload in a moment."},
	"slow": {ZH: "503 超时：这个页面计算了 %[1]s 还没有完成，已停止；请稍后刷新。", EN: "503 too slow: the view was still being computed after %[1]s and was stopped; reload in a moment."},
	// %[1]s the line's size, %[2]d the bytes shown, %[3]d the bytes left out.
	"raw.summary": {ZH: "这一行有 %[1]s，太长，网页不解码它：按文件原样显示前 %[2]d 字节，还有 %[3]d 字节没有显示", EN: "a line of %[1]s, too long for the page to decode: its first %[2]d bytes as the file holds them, %[3]d more bytes left out"},
	"raw.message": {ZH: "这条消息的一行有 %[1]s，太长，网页不解码它；下面是这一行按文件原样的开头。", EN: "this message's line is %[1]s long, too long for the page to decode; below is the start of the line as the file holds it."},
}

// takeView takes one of the slots of the views computed at once, or, when all are taken,
// answers 503 with Retry-After and reports false: the request is refused at once, not queued.
func (h *Handler) takeView(w http.ResponseWriter) (release func(), ok bool) {
	select {
	case h.views <- struct{}{}:
		return func() { <-h.views }, true
	default:
	}
	// The connection is closed after the answer: a refused client that kept it idle would hold
	// one of the server's connections (maxConns) for idleTimeout, and a crowd of them would keep
	// every other client waiting to be accepted instead of answered.
	w.Header().Set("Connection", "close")
	w.Header().Set("Retry-After", retryAfter)
	http.Error(w, texts(h.opts.Lang)("busy", cap(h.views)), http.StatusServiceUnavailable)
	return nil, false
}

// stopped answers a view that stopped before its end: nothing when its client is gone, 503 with
// Retry-After when it ran past viewTimeout.
func (h *Handler) stopped(w http.ResponseWriter, r *http.Request) {
	if r.Context().Err() != nil {
		return
	}
	w.Header().Set("Retry-After", retryAfter)
	http.Error(w, texts(h.opts.Lang)("slow", viewTimeout.String()), http.StatusServiceUnavailable)
}

// crossSite returns why a request comes from a page of another site, in one line, or "" when it
// does not. A browser says where a request comes from: Sec-Fetch-Site is "same-origin" for the
// page's own requests and "none" for an address typed or bookmarked, and Origin, when sent,
// names the page's origin. A request without either (curl, a script) is no other site's page.
// This refuses what the Host check cannot: a no-cors request from any web page to
// 127.0.0.1 carries the right Host and would start a view, even if its answer cannot be read.
func crossSite(r *http.Request) string {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return "403 forbidden: a request from another site's page (Sec-Fetch-Site: " + oneLine(site) + "); open the address course serve printed"
	}
	if origin := r.Header.Get("Origin"); origin != "" && !strings.EqualFold(origin, "http://"+r.Host) {
		return "403 forbidden: a request from the page of another origin (Origin: " + oneLine(origin) + "); open the address course serve printed"
	}
	return ""
}

// oneLine is a header value as an answer may quote it: printable ASCII, cut.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r >= 0x7f {
			return '?'
		}
		return r
	}, s)
	return cut(s, 100)
}

// rawEvent is an event whose line is longer than hugeLine: what the index knows of it and the
// start of its line, undecoded.
type rawEvent struct {
	seq, size int
	typ       sessionlog.Type
	prefix    string // the first rawShown bytes of the line
}

// eachEvent is log.Each(ctx, seqs, decoded) for the events whose lines are at most limit bytes
// long (hugeLine unless a test says otherwise); each longer one is given to raw instead, with
// the start of its line, so that no more than limit of a line is held at a time. The order in
// which events come is not seqs'.
func eachEvent(ctx context.Context, log *sessionlog.Log, limit int, seqs []int, decoded func(sessionlog.Event) error, raw func(rawEvent) error) error {
	var small, huge []int
	for _, seq := range seqs {
		if seq >= 0 && seq < log.Len() && log.LineSize(seq) > limit {
			huge = append(huge, seq)
		} else {
			small = append(small, seq)
		}
	}
	if err := log.Each(ctx, small, decoded); err != nil {
		return err
	}
	for _, seq := range huge {
		prefix, err := log.LinePrefix(ctx, seq, rawShown)
		if err != nil {
			return err
		}
		if err := raw(rawEvent{seq: seq, size: log.LineSize(seq), typ: log.TypeOf(seq), prefix: string(prefix)}); err != nil {
			return err
		}
	}
	return nil
}

// shownRaw is the start of a huge line cut to n bytes, with "…", and the bytes left out.
func (e rawEvent) shown(n int) (string, int) {
	s := cut(e.prefix, n)
	kept := len(strings.TrimSuffix(s, "…"))
	if kept == len(e.prefix) {
		s += "…" // the prefix is shorter than the line: it is always cut
	}
	return s, e.size - kept
}

// rawEventView is the payload view's entry of a huge event: its line's start and the number of
// bytes left out.
func (b *builder) rawEventView(e rawEvent, ch chain, siblings map[int]bool) EventView {
	payload, left := e.shown(payloadShown)
	return EventView{Seq: e.seq, Line: e.seq + 2, Type: string(e.typ), Actor: producer(e.typ),
		Summary: b.t("raw.summary", sessionlog.FormatBytes(int64(e.size)), e.size-left, left),
		Payload: payload, PayloadCut: left, Focus: focusOf(e.seq, ch, siblings)}
}

// rawMessageView is the history's entry of a huge message or compaction (firstKept is the
// compaction's firstKeptSeq as the index knows it, -1 when it does not): a note that says so and
// the start of its line, with the number of bytes left out.
func (b *builder) rawMessageView(e rawEvent, firstKept int) MessageView {
	role := tinypi.RoleUser
	switch e.typ {
	case sessionlog.TypeAssistantMessage:
		role = tinypi.RoleAssistant
	case sessionlog.TypeToolResult:
		role = tinypi.RoleToolResult
	}
	text, left := e.shown(textShown)
	mv := MessageView{Role: string(role), Seq: e.seq, Blocks: []BlockView{
		{Kind: "text", Text: b.t("raw.message", sessionlog.FormatBytes(int64(e.size)))},
		{Kind: "ref", Text: text, Cut: left},
	}}
	if e.typ == sessionlog.TypeCompaction {
		mv.Summary = true
		mv.Label = b.t("history.summary.nothing")
		if firstKept > 0 {
			mv.Label = b.t("history.summary", firstKept-1)
		}
	}
	return mv
}

// rawLine is a huge event's line in the comparison.
func rawLine(e rawEvent, lang string) string {
	payload, left := e.shown(summaryShown)
	return fmt.Sprintf("%-17s %s", e.typ, texts(lang)("raw.summary", sessionlog.FormatBytes(int64(e.size)), e.size-left, left)+": "+payload)
}
