package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// Retries are the command's, not a lab's: chapter 05 teaches what one request's failure looks
// like (settleStream turns a 429 or a cut stream into one error message), and chapter 09's loop
// ends a run on it. Whether to ask again, and how long to wait, is a policy of the program that
// talks to a paid service for a user, with a clock and a terminal: it reads the HTTP response's
// headers, which the runtime's Model interface (a stream of events) does not carry.
const (
	// retryAttempts is the most requests made for one model response.
	retryAttempts = 4
	// retryBudget bounds the time spent waiting between them; a server that asks for a longer
	// wait (Retry-After) is not asked again.
	retryBudget = 60 * time.Second
	// defaultRetryBase is the first wait when the server says nothing; each next one doubles.
	defaultRetryBase = time.Second
)

// retryEventType is the session log's entry for a retry: an ignorable event (the log's rule for
// entries a reader may not know), so that the runtime, course serve and older readers load the
// session as before.
const retryEventType tinypi.SessionEventType = "tinypi/retry"

// retryNote is one retry: what failed, how long tinypi waits, and the attempt it makes next.
type retryNote struct {
	Attempt  int    `json:"attempt"`
	Attempts int    `json:"attempts"`
	DelayMS  int64  `json:"delayMs"`
	After    string `json:"after"`
	Error    string `json:"error"`
	delay    time.Duration
}

// String is the line the user sees.
func (n retryNote) String() string {
	return fmt.Sprintf("retrying in %s after %s (attempt %d of %d)", roundDelay(n.delay), n.After, n.Attempt, n.Attempts)
}

// roundDelay is d as a person reads it: whole seconds from 10 s on, tenths of a second from 1 s,
// milliseconds below.
func roundDelay(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// retryingModel asks its Model again when a response failed before any of it streamed: the
// server answered 429 or 5xx, or the connection failed or dropped. It waits between attempts,
// as long as the server's Retry-After says or else base, 2×base, 4×base, makes at most
// retryAttempts requests and waits at most retryBudget in all, and stops waiting at once when
// the request's context ends (Ctrl-C). Once a part of the answer has streamed the response is
// the user's as it is: a retry would show it twice. notify hears of each retry before its wait.
//
// The HTTP client of the model must be newRetryClient's: it is what sees the status and headers.
type retryingModel struct {
	tinypi.Model
	base   time.Duration
	notify func(retryNote)
}

// attemptKey is the context key of an attempt's *attemptInfo.
type attemptKey struct{}

// attemptInfo is what the HTTP client saw of one attempt's response.
type attemptInfo struct {
	mu         sync.Mutex
	status     string // "429 Too Many Requests", for a 429 or 5xx status
	retryAfter time.Duration
	hasAfter   bool
	dropped    error // a failed connection, or a body cut before its end
}

// Stream implements tinypi.Model.
func (m retryingModel) Stream(ctx context.Context, req tinypi.Request) *tinypi.AssistantStream {
	info := &attemptInfo{}
	first := m.Model.Stream(context.WithValue(ctx, attemptKey{}, info), req)
	if first == nil {
		return nil // the agent reports a model without a stream
	}
	out := tinypi.NewAssistantStream()
	go func() {
		defer out.Close()
		in, waited := first, time.Duration(0)
		for attempt := 1; ; attempt++ {
			failure, ok := forwardUnlessRetryable(ctx, in, out, info)
			if ok {
				return
			}
			note, why := m.next(attempt, waited, info, failure)
			if why != "" {
				failure.Message.ErrorMessage += " (" + why + ")"
				out.Push(failure)
				return
			}
			m.notify(note)
			timer := time.NewTimer(note.delay)
			select {
			case <-ctx.Done():
				timer.Stop()
				failure.Message.StopReason = tinypi.StopReasonAborted
				failure.Message.ErrorMessage = fmt.Sprintf("request cancelled while waiting to retry: %v", context.Cause(ctx))
				out.Push(failure)
				return
			case <-timer.C:
			}
			waited += note.delay
			info = &attemptInfo{}
			if in = m.Model.Stream(context.WithValue(ctx, attemptKey{}, info), req); in == nil {
				failure.Message.ErrorMessage = "the model returned no stream on retry"
				out.Push(failure)
				return
			}
		}
	}()
	return out
}

// forwardUnlessRetryable copies in to out, holding back the start event until a part of the
// answer arrives. It returns ok when the response is settled (forwarded to its end), and the
// failure when the response failed before any of it streamed and may be asked again.
func forwardUnlessRetryable(ctx context.Context, in, out *tinypi.AssistantStream, info *attemptInfo) (tinypi.ErrorEvent, bool) {
	var held []tinypi.AssistantEvent
	streaming := false
	for ev := range in.All() {
		if streaming {
			out.Push(ev)
			continue
		}
		switch ev := ev.(type) {
		case tinypi.StartEvent:
			held = append(held, ev)
			continue
		case tinypi.ErrorEvent:
			if ctx.Err() == nil && ev.Message.StopReason == tinypi.StopReasonError && info.retryable() != "" {
				return ev, false
			}
		}
		streaming = true
		for _, h := range held {
			out.Push(h)
		}
		out.Push(ev)
	}
	return tinypi.ErrorEvent{}, true
}

// next decides whether attempt's failure is asked again, and after how long; when it is not,
// why says why not.
func (m retryingModel) next(attempt int, waited time.Duration, info *attemptInfo, failure tinypi.ErrorEvent) (note retryNote, why string) {
	note = retryNote{Attempt: attempt + 1, Attempts: retryAttempts, After: info.retryable(), Error: failure.Message.ErrorMessage}
	if attempt >= retryAttempts {
		return note, fmt.Sprintf("tinypi gave up after %d attempts", attempt)
	}
	note.delay = m.base << (attempt - 1)
	after, asked := info.after()
	if asked {
		note.delay = after
	}
	if waited+note.delay > retryBudget {
		if asked {
			return note, fmt.Sprintf("the server asks to wait %s, longer than tinypi waits: %s in all", roundDelay(after), retryBudget)
		}
		return note, fmt.Sprintf("tinypi gave up after %d attempts and %s of waiting", attempt, roundDelay(waited))
	}
	note.DelayMS = note.delay.Milliseconds()
	return note, ""
}

// retryable is what makes the attempt worth another ("429 Too Many Requests", "a dropped
// connection: connection reset by peer"), or "" when it is not.
func (a *attemptInfo) retryable() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.status != "":
		return a.status
	case a.dropped != nil:
		return "a dropped connection: " + innermost(a.dropped)
	}
	return ""
}

func (a *attemptInfo) after() (time.Duration, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.retryAfter, a.hasAfter
}

func (a *attemptInfo) drop(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.dropped == nil {
		a.dropped = err
	}
}

// innermost is the text of the error err wraps last ("connection refused").
func innermost(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

// newRetryClient is an HTTP client that tells a retryingModel what it saw of each attempt (the
// attempt's *attemptInfo travels in the request's context).
func newRetryClient() *http.Client {
	return &http.Client{Transport: watchingTransport{base: http.DefaultTransport}}
}

// watchingTransport records each response's retry-worthy status, its Retry-After, and a failed
// connection or a body cut before its end.
type watchingTransport struct{ base http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (t watchingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	info, _ := r.Context().Value(attemptKey{}).(*attemptInfo)
	resp, err := t.base.RoundTrip(r)
	if info == nil {
		return resp, err
	}
	if err != nil {
		info.drop(err)
		return resp, err
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		info.mu.Lock()
		info.status = strings.TrimSpace(resp.Status)
		if info.status == "" || info.status == strconv.Itoa(resp.StatusCode) {
			info.status = fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
		}
		info.retryAfter, info.hasAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		info.mu.Unlock()
		return resp, nil
	}
	if resp.StatusCode < 400 {
		resp.Body = &watchedBody{ReadCloser: resp.Body, info: info}
	}
	return resp, nil
}

// watchedBody records a read that failed before the body's end: the connection dropped.
type watchedBody struct {
	io.ReadCloser
	info *attemptInfo
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.info.drop(err)
	}
	return n, err
}

// parseRetryAfter reads a Retry-After header: a number of seconds or an HTTP date (a date past
// is no wait).
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second) // more than the budget anyway
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// retryBase is the first wait, from $TINYPI_RETRY_BASE (a Go duration, "1ms" in tests).
func retryBase(e env) (time.Duration, error) {
	v := e.getenv("TINYPI_RETRY_BASE")
	if v == "" {
		return defaultRetryBase, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("TINYPI_RETRY_BASE=%q: want a positive duration such as 500ms", v)
	}
	return d, nil
}

// logRetry records note in the session as an ignorable tinypi/retry event.
func logRetry(s *tinypi.Session, note retryNote) error {
	raw, err := json.Marshal(note)
	if err != nil {
		return err
	}
	_, err = s.Append(tinypi.SessionEvent{Type: retryEventType, Ignorable: true, Raw: raw})
	return err
}
