// Package serve is the web page of `course serve`: one tool call of a session log followed
// through the six stages of its round trip, in three views, optionally beside a reference log.
//
// # Stages
//
// For the chosen tool/call (the first of the log unless ?call=SEQ names another) the round trip
// is the assistant/message that asked for it, the tool/call, the tool/start and the tool/result
// whose sourceEventSeqs point at it, and the first model/request after the result that runs
// through it. The six stages and the events committed at each:
//
//  1. the model's reply settles: everything through the assistant/message (actor: model);
//  2. the call is registered: through the tool/call (agent);
//  3. the tool runs: everything before the tool/result (tool runtime). The call's tool/start,
//     which a chapter-10 writer logs and writes just before the tool's body runs, is committed
//     here and is the tool runtime's event; a log without one (an older writer, a call that
//     never began) shows the stage all the same;
//  4. the result is committed: through the tool/result (session);
//  5. messages are derived for the next request: everything before the model/request; the
//     history is sessionlog.DeriveMessages of the events the request runs through (session);
//  6. the log is flushed through the events the request holds, then the request is frozen and
//     sent: through the model/request (agent).
//
// An event a run never wrote (it stopped early) leaves its stages at the end of the log, marked
// missing. A log without tool calls has one stage: the whole log.
//
// A compaction (chapter 11) is the session's event. A stage's history runs through a compaction
// when it is sessionlog.DeriveMessages of events that hold one: it starts with the latest one's
// summary message, marked (MessageView.Summary) and labelled with the seqs it stands for, then
// the messages from the compaction's firstKeptSeq on. The compaction whose summary the round
// trip's last history starts with is marked (focus "compaction") and listed under the session in
// the responsibilities view; its fields are shown in the payload view (EventView.Compaction). When the model asked for
// several calls at once (a batch), the page lists the chosen call's siblings and, at each stage,
// the commit cursor: how many of the batch's results are committed, in call order.
//
// # What is sent
//
// Go computes everything (View); the page's script (assets/app.js, no build step, no network)
// only draws it. A View holds what the screen shows and no more, so that a page of a log of any
// length stays small: every event of a short log, and of a long one the events around the
// chosen call's round trip (each shown event says how many were left out before it); the last
// messages of each stage's history (a compaction's summary always, first); a window of the calls around the chosen one; long texts cut
// with the number of bytes left out; an event whose line is too long to decode (hugeLine) by the
// start of its line as the file holds it. The three views are the message history, the event
// payloads (committed or planned at the stage) and the responsibilities of model, agent, tool
// runtime and session; entries link to each other. With a reference log, the two logs are
// aligned line by line as course transcript aligns runs (events, then derived messages, a
// compaction's summary first) and the rows around the first difference are shown.
//
// A log whose last line is torn (a crash in the middle of a write) is shown as
// tinypi.LoadSession keeps it, the intact events, with a notice about the torn line.
//
// # Routes
//
//   - GET /            the page (?call=SEQ chooses the call); a log that cannot be read gives an
//     error page saying what is wrong and how to repair it, with status 200 so that the page is
//     shown as any page is (the error is its content).
//   - GET /api/view    the View as JSON (?call=SEQ); 422 with {"error":{...}} for a bad log, 404
//     for a call that is not there.
//   - GET /api/follow  with Options.Follow only: the live round trips of a log still being
//     written, as Server-Sent Events (follow.go).
//   - GET /assets/app.js, /assets/follow.js, /assets/app.css  the embedded scripts and style
//     sheet. Nothing else is served: no directory listing, not the page's templates.
//
// Every answer forbids framing (Content-Security-Policy frame-ancestors 'none', X-Frame-Options),
// loads nothing from elsewhere (default-src 'self') and sends no Referer. Serve adds what a
// server on a port needs: it answers only requests addressed to the address it listens on (a
// web page elsewhere cannot read the log by pointing its own name at 127.0.0.1), and with a
// token only requests that carry it; it refuses a request a browser marks as coming from
// another site's page (Sec-Fetch-Site, Origin).
//
// # Load
//
// A view is computed under its request's context, so a client that hangs up stops its work, and
// at most Options.MaxViews at once: one more is answered 503 with Retry-After at once. Serve's
// http.Server has time limits for a request's header, a request, an answer and an idle
// connection, a header size limit, and holds at most maxConns connections (see limits.go).
//
// # Reading
//
// A log is read in one linear pass (sessionlog) and its index kept until the file changes: a
// page load of an unchanged log reads only the lines it shows, and a learner who runs again or
// repairs a log reloads the page to see it.
package serve

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"html/template"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/net/netutil"

	"github.com/learn-tinypi/course/internal/sessionlog"
)

//go:embed assets
var assets embed.FS

// Options configure a Handler.
type Options struct {
	// Log is the path of the session log to show.
	Log string
	// Reference is the path of a reference log to compare with; empty for none.
	Reference string
	// Lang is the page's language: i18n.EN for English, Chinese otherwise.
	Lang string
	// MaxBytes is the largest log read (sessionlog.Options.MaxBytes): 0 for
	// sessionlog.DefaultMaxBytes, negative for no limit.
	MaxBytes int64
	// Progress, when set, is told how far a read of a log has come: its path and the bytes
	// read, after about every MiB.
	Progress func(path string, read int64)
	// MaxViews is how many views are computed at once (0: DefaultMaxViews); a request beyond
	// them is answered 503 with Retry-After at once.
	MaxViews int
	// Follow serves the page of a log that is still being written: GET /api/follow streams
	// each tool call's round trip as the log grows, and the page shows it live (follow.go).
	Follow bool
	// FollowPoll is how often a follow stream looks whether the log grew; 0 for 250ms.
	FollowPoll time.Duration
}

// Handler serves the page. Make one with NewHandler. Its methods may be called from any number
// of goroutines at once.
type Handler struct {
	opts Options
	mux  *http.ServeMux
	page *template.Template
	fail *template.Template
	log  *source
	ref  *source // nil without a reference
	// views holds a token for each view being computed (Options.MaxViews of them at most).
	views chan struct{}
	// viewStarted, when set (by tests), is called with the context of every view computation
	// as it starts.
	viewStarted func(ctx context.Context)
	// hugeLine is the longest line a view decodes: the constant, or a test's.
	hugeLine int
	// followers holds a slot for each follow stream running (follow.go).
	followers chan struct{}
}

// securityPolicy is the Content-Security-Policy of every answer: the page's own script and
// style sheet, its JSON data block, and nothing else; it may not be framed.
const securityPolicy = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// NewHandler returns the handler of the page for opts. It reads nothing yet: the logs are read
// on the first request (or by Preload).
func NewHandler(opts Options) (*Handler, error) {
	h := &Handler{opts: opts, mux: http.NewServeMux(), followers: make(chan struct{}, maxFollowers)}
	if opts.MaxViews <= 0 {
		opts.MaxViews = DefaultMaxViews
	}
	h.views = make(chan struct{}, opts.MaxViews)
	h.hugeLine = hugeLine
	var err error
	if h.page, err = template.ParseFS(assets, "assets/page.html"); err != nil {
		return nil, fmt.Errorf("serve: page template: %w", err)
	}
	if h.fail, err = template.ParseFS(assets, "assets/error.html"); err != nil {
		return nil, fmt.Errorf("serve: error template: %w", err)
	}
	// Both logs get the fingerprints of their lines when they are compared (see compare.go).
	seed := maphash.MakeSeed()
	prints := opts.Reference != ""
	h.log = newSource(opts.Log, opts, prints, seed)
	if opts.Reference != "" {
		h.ref = newSource(opts.Reference, opts, prints, seed)
	}
	h.mux.HandleFunc("GET /{$}", h.servePage)
	h.mux.HandleFunc("GET /api/view", h.serveJSON)
	if opts.Follow {
		h.mux.HandleFunc("GET /api/follow", h.serveFollow)
	}
	for _, a := range []struct{ name, contentType string }{
		{"app.js", "text/javascript; charset=utf-8"},
		{"app.css", "text/css; charset=utf-8"},
		{"follow.js", "text/javascript; charset=utf-8"},
	} {
		data, err := assets.ReadFile("assets/" + a.name)
		if err != nil {
			return nil, fmt.Errorf("serve: assets: %w", err)
		}
		h.mux.HandleFunc("GET /assets/"+a.name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", a.contentType)
			w.Header().Set("Cache-Control", "no-cache")
			_, _ = w.Write(data)
		})
	}
	return h, nil
}

// ServeHTTP serves one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	h.mux.ServeHTTP(w, r)
}

func setSecurityHeaders(hdr http.Header) {
	hdr.Set("Content-Security-Policy", securityPolicy)
	hdr.Set("X-Frame-Options", "DENY")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cross-Origin-Resource-Policy", "same-origin")
	hdr.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// Preload reads the logs now, as the first request would, and returns what is wrong with each
// one that cannot be shown (nil when both can). `course serve` calls it once it listens, to say
// in the terminal what the page will say.
func (h *Handler) Preload(ctx context.Context) ([]*Problem, error) {
	var problems []*Problem
	for _, s := range []*source{h.log, h.ref} {
		if s == nil {
			continue
		}
		_, _, err := s.get(ctx)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return problems, ctx.Err()
		}
		if torn(err) {
			continue // shown, with a notice
		}
		problems = append(problems, Explain(err, s.path, h.opts.Lang))
	}
	return problems, nil
}

// Problem is why the page cannot show a log: what is wrong and how to repair it. A torn log's
// notice is a Problem too (the page shows its intact part and the notice).
type Problem struct {
	// Status is the HTTP status of the JSON answer.
	Status int    `json:"-"`
	Title  string `json:"title"`
	Kind   string `json:"kind"`
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	What   string `json:"what"`
	Repair string `json:"repair"`
	// Excerpt is the damaged line as the file holds it, cut to a readable length.
	Excerpt string `json:"excerpt,omitempty"`
}

// Explain turns an error of reading a log at path into a Problem in lang.
func Explain(err error, path, lang string) *Problem {
	t := texts(lang)
	var le *sessionlog.Error
	if !errors.As(err, &le) {
		return &Problem{Status: http.StatusInternalServerError, Title: sessionlog.Title(lang), Kind: "read", File: path,
			What: err.Error(), Repair: t("error.read")}
	}
	what, repair := le.Explain(lang)
	p := &Problem{Status: http.StatusUnprocessableEntity, Title: sessionlog.Title(lang), Kind: string(le.Kind),
		File: path, Line: le.Line, What: what, Repair: repair}
	if le.Kind != sessionlog.KindLongLine && !le.Kind.Refused() {
		p.Excerpt = excerpt(path, le.Offset, le.Line)
	}
	return p
}

// excerptBytes is how much of a damaged line a Problem quotes.
const excerptBytes = 300

// excerpt returns the start of the line that begins at off in the file at path (line n, to
// check), cut to excerptBytes at a character boundary.
func excerpt(path string, off int64, n int) string {
	if n < 1 || off < 0 {
		return ""
	}
	// Non-blocking: a FIFO put in the file's place since it was read must not hang the page.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return ""
	}
	buf := make([]byte, excerptBytes+utf8.UTFMax)
	got, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	line, _, _ := strings.Cut(string(buf[:got]), "\n")
	return cut(line, excerptBytes)
}

// cut returns s cut to at most n bytes at a character boundary, with "…" when it was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// torn reports whether err is a torn last line, which the page shows with the intact part.
func torn(err error) bool {
	var le *sessionlog.Error
	return errors.As(err, &le) && le.Kind == sessionlog.KindTorn
}

// Load reads the logs of opts, as the page does on its first load, and returns the view of the
// tool/call at callSeq (-1: the first one), or the Problem the page would explain instead.
// `course serve --check` prints its first screen from it.
func Load(ctx context.Context, opts Options, callSeq int) (*View, *Problem, error) {
	h, err := NewHandler(opts)
	if err != nil {
		return nil, nil, err
	}
	return h.View(ctx, callSeq)
}

// View returns the view of the tool/call at callSeq (-1: the first one), or the Problem the
// page explains instead. The error is ctx's, when it ended.
func (h *Handler) View(ctx context.Context, callSeq int) (*View, *Problem, error) {
	for attempt := 0; ; attempt++ {
		v, p, err := h.view(ctx, callSeq)
		if errors.Is(err, sessionlog.ErrChanged) && attempt < 3 {
			h.log.forget() // a writer replaced a file while it was shown: read it again
			if h.ref != nil {
				h.ref.forget()
			}
			continue
		}
		if err != nil && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if err != nil {
			return nil, Explain(err, h.opts.Log, h.opts.Lang), nil
		}
		return v, p, nil
	}
}

func (h *Handler) view(ctx context.Context, callSeq int) (*View, *Problem, error) {
	if h.viewStarted != nil {
		h.viewStarted(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	lang := h.opts.Lang
	log, logPrints, err := h.log.get(ctx)
	var notice *Problem
	switch {
	case err != nil && torn(err) && log != nil:
		notice = Explain(err, h.opts.Log, lang)
		notice.Status = http.StatusOK
	case err != nil && ctx.Err() != nil:
		return nil, nil, ctx.Err()
	case err != nil:
		return nil, Explain(err, h.opts.Log, lang), nil
	}
	var ref *sessionlog.Log
	var refPrints *fingerprints
	if h.ref != nil {
		ref, refPrints, err = h.ref.get(ctx)
		switch {
		case err != nil && torn(err) && ref != nil:
		case err != nil && ctx.Err() != nil:
			return nil, nil, ctx.Err()
		case err != nil:
			return nil, Explain(err, h.opts.Reference, lang), nil
		}
	}
	b := &builder{ctx: ctx, log: log, lang: lang, t: texts(lang), path: h.opts.Log, hugeLine: h.hugeLine}
	v, err := b.build(callSeq)
	if err != nil {
		var nc *noCallError
		if errors.As(err, &nc) {
			return nil, h.noCall(nc), nil
		}
		return nil, nil, err
	}
	v.Notice = notice
	h.addFollow(v)
	if ref != nil {
		if err := b.compare(v, logPrints, ref, refPrints, h.opts.Reference); err != nil {
			return nil, nil, err
		}
	}
	return v, nil, nil
}

// noCall explains a ?call= that names no tool/call.
func (h *Handler) noCall(nc *noCallError) *Problem {
	t := texts(h.opts.Lang)
	var choices []string
	for _, c := range nc.calls {
		choices = append(choices, fmt.Sprintf("?call=%d (%s %s)", c.Seq, c.Name, c.CallID))
	}
	if nc.more > 0 {
		choices = append(choices, t("nocall.more", nc.more))
	}
	what := t("nocall.what", nc.seq)
	if nc.param != "" {
		what = t("nocall.notseq", nc.param)
	}
	if len(choices) == 0 {
		return &Problem{Status: http.StatusNotFound, Title: t("nocall.title"), Kind: "no-call", File: h.opts.Log,
			What: what, Repair: t("nocall.none")}
	}
	return &Problem{Status: http.StatusNotFound, Title: t("nocall.title"), Kind: "no-call", File: h.opts.Log,
		What: what, Repair: t("nocall.fix", strings.Join(choices, ", "))}
}

// callParam reads ?call=SEQ: -1 when absent; ok is false for a value that is no seq.
func callParam(r *http.Request) (seq int, raw string, ok bool) {
	raw = r.URL.Query().Get("call")
	if raw == "" {
		return -1, "", true
	}
	n, err := strconv.Atoi(raw)
	return n, raw, err == nil && n >= 0
}

// viewFor answers the request's ?call= with a view or a problem. The work stops when the
// client is gone (r's context) or after viewTimeout, when its answer could no longer be written.
func (h *Handler) viewFor(r *http.Request) (*View, *Problem, error) {
	ctx, cancel := context.WithTimeout(r.Context(), viewTimeout)
	defer cancel()
	seq, raw, ok := callParam(r)
	if !ok {
		log, _, err := h.log.get(ctx)
		if err != nil && !(torn(err) && log != nil) {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, Explain(err, h.opts.Log, h.opts.Lang), nil
		}
		calls, more := callWindow(log, 0)
		return nil, h.noCall(&noCallError{seq: -1, param: raw, calls: calls, more: more}), nil
	}
	return h.View(ctx, seq)
}

func (h *Handler) servePage(w http.ResponseWriter, r *http.Request) {
	release, ok := h.takeView(w)
	if !ok {
		return
	}
	defer release()
	v, p, err := h.viewFor(r)
	if err != nil {
		h.stopped(w, r) // the request was given up, or took too long
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if p != nil {
		data := struct {
			*Problem
			Lang  string
			Texts map[string]string
		}{p, h.opts.Lang, pageTexts(h.opts.Lang)}
		if p.Kind == "no-call" {
			w.WriteHeader(http.StatusNotFound)
		}
		if err := h.fail.Execute(w, data); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
		return
	}
	if err := h.page.Execute(w, v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func (h *Handler) serveJSON(w http.ResponseWriter, r *http.Request) {
	release, ok := h.takeView(w)
	if !ok {
		return
	}
	defer release()
	v, p, err := h.viewFor(r)
	if err != nil {
		h.stopped(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	var body any = v
	if p != nil {
		w.WriteHeader(p.Status)
		body = struct {
			Error *Problem `json:"error"`
		}{p}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(body)
}

// ServeOptions configure Serve.
type ServeOptions struct {
	// Host is the host the server was asked to listen on (course serve --addr), as the user wrote
	// it: requests naming it are accepted besides the listener's own address and, on a loopback
	// address, localhost, 127.0.0.1 and [::1].
	Host string
	// Token, when not empty, must come with every request: as ?token= in the URL (the answer
	// then sets a cookie that carries it for the page's later requests) or in that cookie.
	Token string
}

// Serve serves h on ln until ctx is done, then shuts the server down (waiting up to five
// seconds for requests in flight) and returns. It returns nil after a shutdown caused by ctx.
//
// Only requests whose Host header names the address ln listens on get through (opts.Host too);
// others are answered 421 Misdirected Request. A request from another site's page
// (Sec-Fetch-Site cross-site or same-site, or an Origin other than the server's) is answered
// 403. At most maxConns connections are open at once. A listener on every address (0.0.0.0, ::)
// accepts any Host: there the token is what protects the log.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, opts ServeOptions) error {
	srv := newServer(ctx, ln, h, opts)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(netutil.LimitListener(ln, maxConns)) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(stop)
	if serveErr := <-done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	if err != nil {
		return fmt.Errorf("serve: shutting down: %w", err)
	}
	return nil
}

// newServer is Serve's http.Server for h on ln, with its limits: a request's header, a request,
// an answer and an idle connection each have a time limit, and a header a size limit.
func newServer(ctx context.Context, ln net.Listener, h http.Handler, opts ServeOptions) *http.Server {
	return &http.Server{
		Handler:           Guard(h, ln.Addr().String(), opts),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
}

// TokenCookie is the cookie that carries ServeOptions.Token after the first request.
const TokenCookie = "course_serve_token"

// Guard returns h behind the checks of Serve for a server listening on addr ("127.0.0.1:7410").
func Guard(h http.Handler, addr string, opts ServeOptions) http.Handler {
	allowed, any := allowedHosts(addr, opts.Host)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		if !any && !allowed[strings.ToLower(r.Host)] {
			http.Error(w, "421 misdirected request: this server answers only to http://"+addr+"/", http.StatusMisdirectedRequest)
			return
		}
		if why := crossSite(r); why != "" {
			http.Error(w, why, http.StatusForbidden)
			return
		}
		if opts.Token != "" {
			given := r.URL.Query().Get("token")
			if given == "" {
				if c, err := r.Cookie(TokenCookie); err == nil {
					given = c.Value
				}
			}
			if subtle.ConstantTimeCompare([]byte(given), []byte(opts.Token)) != 1 {
				http.Error(w, "403 forbidden: open the address course serve printed; it holds the token", http.StatusForbidden)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: opts.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		}
		h.ServeHTTP(w, r)
	})
}

// allowedHosts returns the Host header values a server on addr answers, lower case, or any:
// true for a server on every address.
func allowedHosts(addr, host string) (map[string]bool, bool) {
	ipText, port, err := net.SplitHostPort(addr)
	if err != nil {
		return map[string]bool{strings.ToLower(addr): true}, false
	}
	ip := net.ParseIP(ipText)
	if ip != nil && ip.IsUnspecified() {
		return nil, true
	}
	names := []string{ipText}
	if ip == nil || ip.IsLoopback() {
		names = append(names, "localhost", "127.0.0.1", "::1")
	}
	if host != "" {
		names = append(names, strings.Trim(host, "[]"))
	}
	allowed := map[string]bool{}
	for _, n := range names {
		allowed[strings.ToLower(net.JoinHostPort(n, port))] = true
		if port == "80" {
			allowed[strings.ToLower(n)] = true
			if strings.Contains(n, ":") {
				allowed["["+strings.ToLower(n)+"]"] = true
			}
		}
	}
	return allowed, false
}

// IsLoopback reports whether host (a name or an IP address, as --addr takes it) only listens
// on this machine: "localhost" or a loopback address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// SessionsDir is where a practice directory keeps its session logs, relative to its root.
const SessionsDir = "sessions"

// ErrNoLog means a directory holds no session log.
var ErrNoLog = errors.New("no session log")

// NewestLog returns the newest session log (*.jsonl, by modification time; the greater name
// when two are equally new) in dir/sessions. Only regular files count.
func NewestLog(dir string) (string, error) {
	logs, err := filepath.Glob(filepath.Join(dir, SessionsDir, "*.jsonl"))
	if err != nil {
		return "", fmt.Errorf("finding session logs: %w", err)
	}
	type found struct {
		path string
		mod  time.Time
	}
	var all []found
	for _, p := range logs {
		info, err := os.Stat(p)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		all = append(all, found{p, info.ModTime()})
	}
	if len(all) == 0 {
		return "", fmt.Errorf("%w in %s", ErrNoLog, filepath.Join(dir, SessionsDir))
	}
	newest := slices.MaxFunc(all, func(a, b found) int {
		if c := a.mod.Compare(b.mod); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	return newest.path, nil
}
