package tinypi

import (
	"context"
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

// ch01Bubble runs f in a synctest bubble. A deadlock (goroutines that can never be woken) is
// reported as a failure instead of crashing the whole test binary.
func ch01Bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	defer guardLab(t)
	synctest.Test(t, f)
}

// ch01NoLeak checks, when the test ends, that it left no goroutine behind.
func ch01NoLeak(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

var errCh01Boom = errors.New("boom")

// ch01Drain yields what a closed channel still holds.
func ch01Drain[T any](c <-chan T) func(func(T) bool) {
	return func(yield func(T) bool) {
		for v := range c {
			if !yield(v) {
				return
			}
		}
	}
}

func TestLab1_1_封闭类型_逐类描述(t *testing.T) {
	defer guardLab(t)
	tests := []struct {
		name string
		in   Outcome
		want string
	}{
		{"ok", OutcomeOK{Value: "42"}, "ok: 42"},
		{"failed", OutcomeFailed{Err: errCh01Boom}, "failed: boom"},
		{"skipped", OutcomeSkipped{Reason: "cancelled"}, "skipped: cancelled"},
		{"failed without error", OutcomeFailed{}, "failed: <nil>"},
	}
	for _, tt := range tests {
		if got := DescribeOutcome(tt.in); got != tt.want {
			t.Errorf("%s: DescribeOutcome(%#v) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestLab1_1_封闭类型_空值(t *testing.T) {
	defer guardLab(t)
	if got, want := DescribeOutcome(nil), "no outcome"; got != want {
		t.Errorf("DescribeOutcome(nil) = %q, want %q", got, want)
	}
}

func TestLab1_2_上下文取消_中途停止(t *testing.T) {
	defer guardLab(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var called []string
	done, err := ForEach(ctx, []string{"a", "b", "c"}, func(_ context.Context, item string) error {
		called = append(called, item)
		if item == "b" {
			cancel() // the caller gives up while item b is running
		}
		return nil
	})
	if diff := cmp.Diff([]string{"a", "b"}, called); diff != "" {
		t.Errorf("items started (-want +got):\n%s", diff)
	}
	if done != 2 {
		t.Errorf("done = %d, want 2", done)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want an error wrapping context.Canceled", err)
	}
	if !strings.Contains(err.Error(), "2 of 3") {
		t.Errorf("err = %q, want it to say how far the loop got (2 of 3)", err)
	}
}

func TestLab1_2_上下文取消_超时在先(t *testing.T) {
	defer guardLab(t)
	ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	calls := 0
	done, err := ForEach(ctx, []int{1, 2}, func(context.Context, int) error {
		calls++
		return nil
	})
	if calls != 0 || done != 0 {
		t.Errorf("calls = %d, done = %d; want 0 and 0: an expired context starts nothing", calls, done)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want an error wrapping context.DeadlineExceeded", err)
	}
}

func TestLab1_2_上下文取消_函数出错(t *testing.T) {
	defer guardLab(t)
	calls := 0
	done, err := ForEach(t.Context(), []string{"a", "b", "c"}, func(_ context.Context, item string) error {
		calls++
		if item == "b" {
			return errCh01Boom
		}
		return nil
	})
	if calls != 2 || done != 1 {
		t.Errorf("calls = %d, done = %d; want 2 and 1: the loop stops at the failing item", calls, done)
	}
	if !errors.Is(err, errCh01Boom) {
		t.Fatalf("err = %v, want an error wrapping errCh01Boom", err)
	}
	if !strings.Contains(err.Error(), "item 1") {
		t.Errorf("err = %q, want it to name the failing item (item 1)", err)
	}
}

func TestLab1_3_迭代器_无限编号(t *testing.T) {
	defer guardLab(t)
	var got []string
	for id := range SequentialIDs("call-") {
		got = append(got, id)
		if len(got) == 3 {
			break // the only way out of an infinite sequence
		}
	}
	if diff := cmp.Diff([]string{"call-1", "call-2", "call-3"}, got); diff != "" {
		t.Errorf("SequentialIDs(\"call-\") (-want +got):\n%s", diff)
	}
}

func TestLab1_3_迭代器_逐行编号(t *testing.T) {
	defer guardLab(t)
	type line struct {
		N    int
		Text string
	}
	tests := []struct {
		text string
		want []line
	}{
		{"", nil},
		{"one", []line{{1, "one"}}},
		{"# tiny-pi\n\nA small agent runtime.\n", []line{{1, "# tiny-pi"}, {2, ""}, {3, "A small agent runtime."}}},
	}
	for _, tt := range tests {
		var got []line
		for n, text := range NumberedLines(tt.text) {
			got = append(got, line{n, text})
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("NumberedLines(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

func TestLab1_3_迭代器_提前停止(t *testing.T) {
	defer guardLab(t)
	// Call the sequence by hand: a yield that says "stop" must not be called again.
	calls := 0
	NumberedLines("a\nb\nc")(func(int, string) bool {
		calls++
		return false
	})
	if calls != 1 {
		t.Errorf("NumberedLines: yield called %d times after returning false the first time, want 1", calls)
	}
	calls = 0
	SequentialIDs("id-")(func(string) bool {
		calls++
		if calls > 2 {
			// The sequence is infinite: without this it would never return.
			t.Fatalf("SequentialIDs: yield called again after it returned false; an infinite sequence must stop when yield returns false")
		}
		return calls < 2
	})
	if calls != 2 {
		t.Errorf("SequentialIDs: yield called %d times, want 2 (stop when yield returns false)", calls)
	}
}

func TestLab1_4_错误包装_Is与As(t *testing.T) {
	defer guardLab(t)
	err := fmt.Errorf("run: %w", &ItemError{Index: 2, Err: errCh01Boom})
	if got, want := err.Error(), "run: item 2: boom"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	if !errors.Is(err, errCh01Boom) {
		t.Errorf("errors.Is(err, errCh01Boom) = false, want true: ItemError must unwrap to its cause")
	}
	var item *ItemError
	if !errors.As(err, &item) {
		t.Fatalf("errors.As(err, *ItemError) = false, want true")
	}
	if item.Index != 2 {
		t.Errorf("ItemError.Index = %d, want 2", item.Index)
	}
}

func TestLab1_4_错误包装_合并(t *testing.T) {
	defer guardLab(t)
	if err := JoinItemErrors([]error{nil, nil}); err != nil {
		t.Errorf("JoinItemErrors(no failures) = %v, want nil", err)
	}
	errOther := errors.New("other")
	err := JoinItemErrors([]error{nil, errCh01Boom, nil, errOther})
	if err == nil {
		t.Fatal("JoinItemErrors(two failures) = nil, want an error")
	}
	if got, want := err.Error(), "item 1: boom\nitem 3: other"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	if !errors.Is(err, errCh01Boom) || !errors.Is(err, errOther) {
		t.Errorf("errors.Is must find both causes in %q", err)
	}
	var item *ItemError
	if !errors.As(err, &item) || item.Index != 1 {
		t.Errorf("errors.As found %+v, want the first failure (Index 1)", item)
	}
}

func TestLab1_5_按位写回_完成顺序颠倒(t *testing.T) {
	ch01NoLeak(t)
	ch01Bubble(t, func(t *testing.T) {
		defer guardLab(t)
		const n = 4
		items := []int{0, 1, 2, 3}
		gates := make([]chan struct{}, n) // item i may finish once gates[i] is closed
		for i := range gates {
			gates[i] = make(chan struct{})
		}
		finished := make(chan int, n) // completion order
		type outcome struct {
			results []string
			err     error
			panic   any
		}
		out := make(chan outcome, 1)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					out <- outcome{panic: p}
				}
			}()
			results, err := MapConcurrent(t.Context(), items, func(_ context.Context, i int) (string, error) {
				<-gates[i]
				finished <- i
				return fmt.Sprintf("r%d", i), nil
			})
			out <- outcome{results: results, err: err}
		}()
		// Open the gates from the last item to the first, letting everything settle in between,
		// so the items finish in reverse order (and only one runs past its gate at a time).
		for i := n - 1; i >= 0; i-- {
			close(gates[i])
			synctest.Wait()
			if i == 0 {
				break
			}
			select {
			case o := <-out:
				if o.panic != nil {
					t.Fatalf("%v", o.panic)
				}
				t.Fatalf("MapConcurrent returned while item 0 was still running; it must wait for every item")
			default:
			}
		}
		o := <-out
		if o.panic != nil {
			t.Fatalf("%v", o.panic)
		}
		close(finished)
		if diff := cmp.Diff([]int{3, 2, 1, 0}, slices.Collect(ch01Drain(finished))); diff != "" {
			t.Errorf("completion order (-want +got):\n%s\nthe items must run concurrently, not one after the other", diff)
		}
		if o.err != nil {
			t.Errorf("err = %v, want nil", o.err)
		}
		if diff := cmp.Diff([]string{"r0", "r1", "r2", "r3"}, o.results); diff != "" {
			t.Errorf("results (-want +got):\n%s\nresults must follow the input order", diff)
		}
	})
}

func TestLab1_5_按位写回_单项失败(t *testing.T) {
	ch01NoLeak(t)
	defer guardLab(t)
	results, err := MapConcurrent(t.Context(), []string{"a", "bad", "c"}, func(_ context.Context, s string) (string, error) {
		if s == "bad" {
			return "partial", errCh01Boom
		}
		return strings.ToUpper(s), nil
	})
	if len(results) == 3 && results[1] != "" {
		t.Errorf("results[1] = %q, want \"\": the failed item's slot holds the zero value, not fn's partial result", results[1])
	}
	if diff := cmp.Diff([]string{"A", "", "C"}, results); diff != "" {
		t.Errorf("results (-want +got):\n%s\nthe failed item's slot holds the zero value; the others keep their results", diff)
	}
	var item *ItemError
	if !errors.As(err, &item) || item.Index != 1 {
		t.Fatalf("err = %v, want an *ItemError for item 1", err)
	}
	if !errors.Is(err, errCh01Boom) {
		t.Errorf("errors.Is(err, errCh01Boom) = false, want true")
	}
	if empty, err := MapConcurrent(t.Context(), []string(nil), func(context.Context, string) (int, error) {
		return 0, nil
	}); len(empty) != 0 || err != nil {
		t.Errorf("MapConcurrent(no items) = %v, %v; want no results and no error", empty, err)
	}
}
