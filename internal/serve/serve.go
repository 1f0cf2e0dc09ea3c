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
//  6. the request is frozen and sent: through the model/request (agent).
//
// An event a run never wrote (it stopped early) leaves its stages at the end of the log, marked
// missing. A log without tool calls has one stage: the whole log.
//
// # Views and routes
//
// Go computes everything (View); the page's script (assets/app.js, no build step, no network)
// only draws it. The three views are the message history, the event payloads (committed or
// planned at the stage) and the responsibilities of model, agent, tool runtime and session;
// entries link to each other (a message to its event, an event to its producer and to the
// events it refers to, an actor to its events). With a reference log, both logs are rendered as
// course transcript renders runs (transcript.CompareSections) and the first difference is
// marked.
//
//   - GET /            the page (?call=SEQ chooses the call); a log that cannot be read gives an
//     error page saying what is wrong and how to repair it, with status 200 so that the page is
//     shown as any page is (the error is its content).
//   - GET /api/view    the View as JSON (?call=SEQ); 422 with {"error":{...}} for a bad log, 404
//     for a call that is not there.
//   - GET /assets/...  the embedded script and style sheet.
//
// The log files are read again on every request, so a learner who runs again or repairs a log
// reloads the page.
package serve

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
}

// Handler serves the page. Make one with NewHandler.
type Handler struct {
	opts Options
	mux  *http.ServeMux
	page *template.Template
	fail *template.Template
}

// NewHandler returns the handler of the page for opts.
func NewHandler(opts Options) (*Handler, error) {
	h := &Handler{opts: opts, mux: http.NewServeMux()}
	var err error
	if h.page, err = template.ParseFS(assets, "assets/page.html"); err != nil {
		return nil, fmt.Errorf("serve: page template: %w", err)
	}
	if h.fail, err = template.ParseFS(assets, "assets/error.html"); err != nil {
		return nil, fmt.Errorf("serve: error template: %w", err)
	}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, fmt.Errorf("serve: assets: %w", err)
	}
	h.mux.HandleFunc("GET /{$}", h.servePage)
	h.mux.HandleFunc("GET /api/view", h.serveJSON)
	h.mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	return h, nil
}

// ServeHTTP serves one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	h.mux.ServeHTTP(w, r)
}

// Problem is why the page cannot show a log: what is wrong and how to repair it.
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
	return &Problem{Status: http.StatusUnprocessableEntity, Title: sessionlog.Title(lang), Kind: string(le.Kind),
		File: path, Line: le.Line, What: what, Repair: repair, Excerpt: excerpt(path, le.Line)}
}

// excerpt returns line n of the file at path, cut to 300 bytes.
func excerpt(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil || n < 1 {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	if n > len(lines) {
		return ""
	}
	line := lines[n-1]
	if len(line) > 300 {
		cut := 300
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = line[:cut] + "…"
	}
	return line
}

// load reads the logs and builds the view of the call at callSeq (-1: the first).
func (h *Handler) load(callSeq int) (*View, *Problem) { return Load(h.opts, callSeq) }

// Load reads the logs of opts, as the page does on each load, and returns the view of the
// tool/call at callSeq (-1: the first one), or the Problem the page would explain instead.
func Load(opts Options, callSeq int) (*View, *Problem) {
	lang := opts.Lang
	log, err := sessionlog.ReadFile(opts.Log)
	if err != nil {
		return nil, Explain(err, opts.Log, lang)
	}
	v, err := buildView(log, opts.Log, callSeq, lang)
	if err != nil {
		var nc *noCallError
		if errors.As(err, &nc) {
			t := texts(lang)
			var choices []string
			for _, c := range nc.calls {
				choices = append(choices, fmt.Sprintf("?call=%d (%s %s)", c.Seq, c.Name, c.CallID))
			}
			return nil, &Problem{Status: http.StatusNotFound, Title: t("nocall.title"), Kind: "no-call", File: opts.Log,
				What: t("nocall.what", nc.seq), Repair: t("nocall.fix", strings.Join(choices, ", "))}
		}
		return nil, Explain(err, opts.Log, lang)
	}
	if opts.Reference != "" {
		ref, err := sessionlog.ReadFile(opts.Reference)
		if err != nil {
			return nil, Explain(err, opts.Reference, lang)
		}
		compare(v, log, ref, opts.Reference)
	}
	return v, nil
}

// callParam reads ?call=SEQ; -1 when absent.
func callParam(r *http.Request) (int, bool) {
	s := r.URL.Query().Get("call")
	if s == "" {
		return -1, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}

func (h *Handler) servePage(w http.ResponseWriter, r *http.Request) {
	seq, ok := callParam(r)
	if !ok {
		seq = -2 // names no event: the page explains the choices
	}
	v, p := h.load(seq)
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
	seq, ok := callParam(r)
	if !ok {
		seq = -2
	}
	v, p := h.load(seq)
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

// Serve serves h on ln until ctx is done, then shuts the server down (waiting up to five
// seconds for requests in flight) and returns. It returns nil after a shutdown caused by ctx.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
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
// when two are equally new) in dir/sessions.
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
