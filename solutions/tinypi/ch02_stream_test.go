package tinypi

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// ch02Bubble runs f in a synctest bubble, where synctest.Wait returns once every other
// goroutine is blocked (a reader in sync.Cond.Wait counts). A deadlock, such as a reader that
// is never woken, becomes a test failure instead of a crash.
func ch02Bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	defer func() {
		if p := recover(); p != nil {
			failOnPanic(t, p)
		}
		goleak.VerifyNone(t, ignore)
	}()
	synctest.Test(t, f)
}

// ch02Stream returns a stream of strings where "done:<result>" is the terminal event.
func ch02Stream() *EventStream[string, string] {
	return NewEventStream(func(event string) (string, bool) {
		return strings.CutPrefix(event, "done:")
	})
}

// ch02Collect reads every event of s.
func ch02Collect(s *EventStream[string, string]) []string {
	return slices.Collect(s.All())
}

// ch02Reader reads s in its own goroutine, reporting each event on events (buffered, so the
// reader never waits for the test) and stopping after limit events when limit > 0. When it
// returns, done receives nil, or the panic that stopped it.
type ch02Reader struct {
	events   chan string
	done     chan any
	returned bool // done has been received
}

func ch02StartReader(s *EventStream[string, string], limit int) *ch02Reader {
	r := &ch02Reader{events: make(chan string, 100), done: make(chan any, 1)}
	go func() {
		defer func() { r.done <- recover() }()
		n := 0
		for event := range s.All() {
			r.events <- event
			n++
			if n == limit {
				break
			}
		}
	}()
	return r
}

// received returns the events the reader has reported so far.
func (r *ch02Reader) received() []string {
	var got []string
	for {
		select {
		case e := <-r.events:
			got = append(got, e)
		default:
			return got
		}
	}
}

// pollCheck is called when a waiting reader has not received an event that was pushed: it lets
// the bubble's fake clock run for a minute and returns what the reader received meanwhile. A
// reader woken by Push has it at once; a reader that got it only now polls with a sleep.
func (r *ch02Reader) pollCheck() []string {
	time.Sleep(time.Minute)
	synctest.Wait()
	return r.received()
}

// finished reports whether the reader has returned; it fails the test if the reader panicked.
func (r *ch02Reader) finished(t *testing.T) bool {
	t.Helper()
	if r.returned {
		return true
	}
	select {
	case p := <-r.done:
		if p != nil {
			t.Fatalf("%v", p)
		}
		r.returned = true
		return true
	default:
		return false
	}
}

// ch02Result calls Result in its own goroutine; outcome reports what it returned, once it has.
type ch02Result struct {
	out chan ch02Outcome
}

type ch02Outcome struct {
	result string
	err    error
	panic  any
}

func ch02StartResult(s *EventStream[string, string]) *ch02Result {
	r := &ch02Result{out: make(chan ch02Outcome, 1)}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				r.out <- ch02Outcome{panic: p}
			}
		}()
		result, err := s.Result()
		r.out <- ch02Outcome{result: result, err: err}
	}()
	return r
}

// outcome returns what Result returned and true, or false while it has not returned. It fails
// the test if Result panicked. Call it after synctest.Wait, so that "not yet" means "waiting".
func (r *ch02Result) outcome(t *testing.T) (ch02Outcome, bool) {
	t.Helper()
	select {
	case o := <-r.out:
		if o.panic != nil {
			failOnPanic(t, o.panic)
		}
		return o, true
	default:
		return ch02Outcome{}, false
	}
}

func TestLab2_1_事件先到(t *testing.T) {
	ch02Bubble(t, func(t *testing.T) {
		defer guardLab(t)
		s := ch02Stream()
		for _, e := range []string{"start", "delta 1", "delta 2"} {
			s.Push(e)
		}
		s.Close()
		// The reader starts only now: the events are already stored and must all come back.
		if diff := cmp.Diff([]string{"start", "delta 1", "delta 2"}, ch02Collect(s)); diff != "" {
			t.Errorf("events read after the producer finished (-want +got):\n%s", diff)
		}
	})
}

func TestLab2_1_事件先到_多个读者(t *testing.T) {
	ch02Bubble(t, func(t *testing.T) {
		defer guardLab(t)
		s := ch02Stream()
		s.Push("a")
		s.Push("b")
		s.Close()
		s.Push("late") // after Close: dropped
		want := []string{"a", "b"}
		for reader := range 3 {
			got := ch02Collect(s)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("reader %d read %d events, want 2 (-want +got):\n%s\neach reader sees every event; nothing is pushed after Close", reader, len(got), diff)
			}
		}
	})
}

func TestLab2_1_事件先到_提前跳出(t *testing.T) {
	ch02Bubble(t, func(t *testing.T) {
		defer guardLab(t)
		s := ch02Stream()
		for i := range 5 {
			s.Push(fmt.Sprint(i))
		}
		s.Close()
		var first []string
		for e := range s.All() {
			first = append(first, e)
			if len(first) == 2 {
				break
			}
		}
		if diff := cmp.Diff([]string{"0", "1"}, first); diff != "" {
			t.Errorf("reader that breaks after two events (-want +got):\n%s", diff)
		}
		// Breaking out consumed nothing: the next reader still starts at the first event.
		if diff := cmp.Diff([]string{"0", "1", "2", "3", "4"}, ch02Collect(s)); diff != "" {
			t.Errorf("reader after an early break (-want +got):\n%s", diff)
		}
	})
}

func TestLab2_2_读者先等(t *testing.T) {
	ch02Bubble(t, func(t *testing.T) {
		defer guardLab(t)
		s := ch02Stream()
		r := ch02StartReader(s, 0)
		synctest.Wait() // the reader has started and waits for the first event
		if r.finished(t) {
			t.Fatal("the reader returned before any event was pushed; it must wait")
		}
		for _, e := range []string{"start", "delta", "end"} {
			s.Push(e)
			synctest.Wait() // the reader has taken the event and waits again
			got := r.received()
			if len(got) == 0 {
				if late := r.pollCheck(); len(late) > 0 {
					t.Fatalf("after Push(%q) the waiting reader got nothing until time passed, then %q: it polls with a sleep; it must sleep on s.changed and be woken by Push", e, late)
				}
			}
			if diff := cmp.Diff([]string{e}, got); diff != "" {
				t.Fatalf("after Push(%q) the waiting reader got (-want +got):\n%s", e, diff)
			}
			if r.finished(t) {
				t.Fatalf("the reader returned after %q although the stream is still open", e)
			}
		}
		s.Close()
		synctest.Wait()
		if !r.finished(t) {
			t.Fatal("the reader still waits after Close")
		}
	})
}

func TestLab2_2_读者先等_多个读者(t *testing.T) {
	ch02Bubble(t, func(t *testing.T) {
		defer guardLab(t)
		s := ch02Stream()
		// The readers start one at a time, each waiting before the next starts: they wait in a
		// known order, so a wrong wake-up (one reader instead of all) fails the same way in
		// every run, whichever goroutine the scheduler would have run first.
		var readers []*ch02Reader
		for _, limit := range []int{0, 0, 1} {
			readers = append(readers, ch02StartReader(s, limit))
			synctest.Wait() // this reader waits
		}
		for i, r := range readers {
			if r.finished(t) {
				t.Fatalf("reader %d returned before any event was pushed; it must wait", i)
			}
		}
		s.Push("a")
		synctest.Wait()
		got := make([][]string, len(readers))
		for i, r := range readers {
			got[i] = r.received()
		}
		for i, r := range readers {
			if len(got[i]) == 0 {
				if late := r.pollCheck(); len(late) > 0 {
					t.Fatalf("reader %d got the first event only after time passed: it polls with a sleep; every waiting reader must be woken by Push", i)
				}
			}
		}
		for i := range readers {
			if diff := cmp.Diff([]string{"a"}, got[i]); diff != "" {
				t.Errorf("reader %d after the first Push (-want +got):\n%s\nevery waiting reader must be woken, not just one", i, diff)
			}
		}
		if !readers[2].finished(t) {
			t.Error("reader 2 broke out of its loop after one event but has not returned")
		}
		s.Push("b")
		synctest.Wait()
		s.Close()
		synctest.Wait()
		for i, r := range readers[:2] {
			if !r.finished(t) {
				t.Errorf("reader %d still waits after Close; every waiting reader must be woken", i)
				continue
			}
			if diff := cmp.Diff([]string{"b"}, r.received()); diff != "" {
				t.Errorf("reader %d after the second Push (-want +got):\n%s", i, diff)
			}
		}
	})
}

func TestLab2_3_终止事件_迭代与结果(t *testing.T) {
	ch02Bubble(t, func(t *testing.T) {
		defer guardLab(t)
		s := ch02Stream()
		early := ch02StartResult(s)
		synctest.Wait() // the early caller is inside Result, waiting for the end
		if o, ok := early.outcome(t); ok {
			t.Fatalf("Result() returned %q, %v before the stream ended; it must wait for a terminal event or Close", o.result, o.err)
		}
		s.Push("start")
		s.Push("delta")
		s.Push("done:hello")
		// No Close: the terminal event alone ends the stream.
		synctest.Wait()
		o, ok := early.outcome(t)
		if !ok {
			s.Close() // release the caller, so that the bubble can end
			synctest.Wait()
			t.Fatal("Result() still waits after the terminal event \"done:hello\"; a terminal event ends the stream")
		}
		if o.err != nil || o.result != "hello" {
			t.Errorf("Result() called before the events = %q, %v; want \"hello\", nil", o.result, o.err)
		}
		// A caller that comes after the end gets the same result at once.
		result, err := s.Result()
		if err != nil || result != "hello" {
			t.Errorf("Result() = %q, %v; want \"hello\", nil", result, err)
		}
		if diff := cmp.Diff([]string{"start", "delta", "done:hello"}, ch02Collect(s)); diff != "" {
			t.Errorf("events (-want +got):\n%s\nthe terminal event is also read by iteration, as the last one", diff)
		}
	})
}

func TestLab2_3_终止事件_关闭不挂起(t *testing.T) {
	ch02Bubble(t, func(t *testing.T) {
		defer guardLab(t)
		s := ch02Stream()
		caller := ch02StartResult(s)
		synctest.Wait() // the caller is inside Result, waiting for the end of the stream
		if o, ok := caller.outcome(t); ok {
			t.Fatalf("Result() returned %q, %v before the stream ended; it must wait for a terminal event or Close", o.result, o.err)
		}
		s.Push("start")
		synctest.Wait()
		if o, ok := caller.outcome(t); ok {
			t.Fatalf("Result() returned %q, %v after a non-terminal event; it must wait for a terminal event or Close", o.result, o.err)
		}
		s.Close() // the producer gives up without a terminal event
		synctest.Wait()
		o, ok := caller.outcome(t)
		if !ok {
			t.Fatal("Result still waits after Close; a closed stream must release its readers")
		}
		if !errors.Is(o.err, ErrIncompleteStream) {
			t.Errorf("Result() error = %v, want ErrIncompleteStream", o.err)
		}
		if diff := cmp.Diff([]string{"start"}, ch02Collect(s)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
}

func TestLab2_3_终止事件_之后丢弃(t *testing.T) {
	ch02Bubble(t, func(t *testing.T) {
		defer guardLab(t)
		s := ch02Stream()
		s.Push("a")
		s.Push("done:first")
		s.Push("b")           // after the terminal event: dropped
		s.Push("done:second") // also dropped: the result is already fixed
		s.Close()             // harmless after a terminal event
		result, err := s.Result()
		if err != nil || result != "first" {
			t.Errorf("Result() = %q, %v; want \"first\", nil", result, err)
		}
		if diff := cmp.Diff([]string{"a", "done:first"}, ch02Collect(s)); diff != "" {
			t.Errorf("events (-want +got):\n%s\nevents after the terminal one are dropped", diff)
		}
	})
}

// BenchmarkEventStreamBurst pushes a burst of n events to a reader that waits first and reports
// the cost per event. With one shared slice and a position per reader the cost per event stays
// flat as n grows; a quadratic design (copying or rescanning the buffer) would grow with n.
func BenchmarkEventStreamBurst(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			never := func(int) (int, bool) { return 0, false }
			for b.Loop() {
				s := NewEventStream(never)
				count := make(chan int)
				go func() {
					c := 0
					for range s.All() {
						c++
					}
					count <- c
				}()
				for i := range n {
					s.Push(i)
				}
				s.Close()
				if c := <-count; c != n {
					b.Fatalf("reader saw %d events, want %d", c, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		})
	}
}
