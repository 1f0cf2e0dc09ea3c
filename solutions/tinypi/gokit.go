package tinypi

// This file is chapter 01's Go survival kit: five small tools that the runtime uses again and
// again. Each one stands alone here, so it can be learned before it is needed:
//
//   - a closed set of types behind a sealed interface, read with a complete type switch
//     (messages, content blocks and stream events are built the same way);
//   - a loop that stops as soon as its context is cancelled and says why with %w;
//   - iterators (iter.Seq, iter.Seq2) that stop when the caller stops asking;
//   - errors that keep their identity through wrapping, checked with errors.Is and errors.As;
//   - goroutines that write their results by position, so the output keeps the input's order
//     whatever order the work finishes in.

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"sync"
)

// --- Lab 1.1: a closed set of types ------------------------------------------------------------

// Outcome is what happened to one unit of work. The set is closed: OutcomeOK, OutcomeFailed and
// OutcomeSkipped are its only members, because the unexported method isOutcome cannot be
// implemented outside this package. A type switch over the three is therefore complete.
type Outcome interface {
	isOutcome()
}

// OutcomeOK is work that finished and produced Value.
type OutcomeOK struct {
	Value string
}

// OutcomeFailed is work that ran and failed with Err.
type OutcomeFailed struct {
	Err error
}

// OutcomeSkipped is work that never ran, for Reason.
type OutcomeSkipped struct {
	Reason string
}

func (OutcomeOK) isOutcome()      {}
func (OutcomeFailed) isOutcome()  {}
func (OutcomeSkipped) isOutcome() {}

// DescribeOutcome returns a one-line description of o: "ok: <value>", "failed: <error>",
// "skipped: <reason>", or "no outcome" for nil.
func DescribeOutcome(o Outcome) string {
	//lab:begin 1.1
	switch o := o.(type) {
	case OutcomeOK:
		return "ok: " + o.Value
	case OutcomeFailed:
		return fmt.Sprintf("failed: %v", o.Err)
	case OutcomeSkipped:
		return "skipped: " + o.Reason
	case nil:
		return "no outcome"
	default:
		// Unreachable while the set is closed; a new member must get its own case above.
		panic(fmt.Sprintf("tinypi: unknown outcome type %T", o))
	}
	//lab:end
}

// --- Lab 1.2: stopping on cancellation ---------------------------------------------------------

// ForEach calls fn for each item in order and returns how many calls succeeded.
//
// Before each call it checks ctx: once ctx is cancelled (or its deadline has passed) no further
// item is started and the error wraps ctx.Err(), so errors.Is(err, context.Canceled) works for
// the caller. When fn fails, ForEach stops and returns fn's error wrapped with the item's index.
func ForEach[T any](ctx context.Context, items []T, fn func(context.Context, T) error) (done int, err error) {
	//lab:begin 1.2
	for i, item := range items {
		if err := ctx.Err(); err != nil {
			return done, fmt.Errorf("tinypi: stopped after %d of %d items: %w", done, len(items), err)
		}
		if err := fn(ctx, item); err != nil {
			return done, fmt.Errorf("tinypi: item %d: %w", i, err)
		}
		done++
	}
	return done, nil
	//lab:end
}

// --- Lab 1.3: iterators ------------------------------------------------------------------------

// SequentialIDs yields prefix+"1", prefix+"2", ... without end. The sequence is infinite, so it
// relies entirely on the caller to stop it: it returns as soon as yield returns false.
func SequentialIDs(prefix string) iter.Seq[string] {
	return func(yield func(string) bool) {
		//lab:begin 1.3
		for n := 1; ; n++ {
			if !yield(prefix + strconv.Itoa(n)) {
				return
			}
		}
		//lab:end
	}
}

// NumberedLines yields the lines of text with their 1-based numbers. Lines are separated by
// "\n"; a final "\n" does not start another line, and empty text has no lines. The caller may
// stop early: no line is produced after yield returns false.
func NumberedLines(text string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		//lab:begin 1.3
		text := strings.TrimSuffix(text, "\n")
		if text == "" {
			return
		}
		n := 0
		for line := range strings.SplitSeq(text, "\n") {
			n++
			if !yield(n, line) {
				return
			}
		}
		//lab:end
	}
}

// --- Lab 1.4: errors that keep their identity --------------------------------------------------

// ItemError is the failure of the item at Index. It wraps Err, so errors.Is and errors.As see
// through it to the original error.
type ItemError struct {
	Index int
	Err   error
}

// Error returns "item <index>: <error>".
func (e *ItemError) Error() string {
	//lab:begin 1.4
	return fmt.Sprintf("item %d: %v", e.Index, e.Err)
	//lab:end
}

// Unwrap returns the wrapped error.
func (e *ItemError) Unwrap() error {
	//lab:begin 1.4
	return e.Err
	//lab:end
}

// JoinItemErrors turns per-item errors into one error: each non-nil errs[i] becomes an
// *ItemError with Index i, and they are joined (errors.Join) in index order. It returns nil when
// every entry is nil.
func JoinItemErrors(errs []error) error {
	//lab:begin 1.4
	var failed []error
	for i, err := range errs {
		if err != nil {
			failed = append(failed, &ItemError{Index: i, Err: err})
		}
	}
	return errors.Join(failed...)
	//lab:end
}

// --- Lab 1.5: results by position --------------------------------------------------------------

// MapConcurrent calls fn for every item, each in its own goroutine, and returns the results in
// the order of items, whatever order the calls finish in: the goroutine of item i writes only
// results[i], so no lock is needed and no result can land in the wrong place.
//
// It returns after every call has returned (no goroutine outlives it). A failed item leaves the
// zero value in its slot; the error joins the failures as *ItemError values (see
// JoinItemErrors). ctx is passed to every call; cancelling it is fn's business.
func MapConcurrent[T, R any](ctx context.Context, items []T, fn func(context.Context, T) (R, error)) ([]R, error) {
	//lab:begin 1.5
	results := make([]R, len(items))
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, item := range items {
		wg.Go(func() {
			r, err := fn(ctx, item)
			if err != nil {
				errs[i] = err
				return
			}
			results[i] = r
		})
	}
	wg.Wait()
	return results, JoinItemErrors(errs)
	//lab:end
}
