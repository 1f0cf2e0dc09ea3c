// Package hang bounds how long a test waits for work that takes far less time when nothing is
// wrong: a hang detector. A bound detects a hang, never slowness, so it is generous, and it
// scales with the machine: Bound multiplies it by the factor in COURSE_TEST_TIMEOUT_SCALE, which a
// slow or busy machine (CI beside other jobs, one core, the race detector) raises. A detector
// that gives up cancels what it started and waits for it (Within), so that a test that fails
// this way fails alone: no goroutine of it runs on into the package's next tests.
package hang

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// ScaleEnv is the environment variable whose value, a positive number such as 3 or 2.5,
// multiplies every bound; unset or empty means 1.
const ScaleEnv = "COURSE_TEST_TIMEOUT_SCALE"

// Bound returns d multiplied by the factor in ScaleEnv. A value of ScaleEnv that is not a
// positive number panics with a message that says so: a bound silently left unscaled would
// fail on the very machine that set it.
func Bound(d time.Duration) time.Duration {
	v := os.Getenv(ScaleEnv)
	if v == "" {
		return d
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > 0) || f > 1e6 {
		panic(fmt.Sprintf("%s=%q: want a positive number, such as 3 (every hang bound of the tests is multiplied by it)", ScaleEnv, v))
	}
	return time.Duration(float64(d) * f)
}

// Within runs work on a goroutine of its own and returns what it returns. When work has not
// returned after Bound(bound), Within cancels work's context, waits for work to return, and
// fails t, naming what did not return ("ReadFile(x) has not returned after 10s: it blocks…"). work
// must return soon after its context is cancelled; one that never does keeps the test waiting
// until go test's -timeout, which prints every goroutine's stack. work must not call t's
// methods: it runs on another goroutine. Within is called from the test's goroutine.
func Within[T any](t testing.TB, bound time.Duration, what string, work func(ctx context.Context) T) T {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan T, 1)
	go func() { done <- work(ctx) }()
	bound = Bound(bound)
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case v := <-done:
		return v
	case <-timer.C:
	}
	cancel()
	start := time.Now()
	v := <-done
	t.Fatalf("%s has not returned after %v: it blocks, or is far slower than it should be (on a slow machine raise %s, now %s); cancelled, it returned %v later",
		what, bound, ScaleEnv, scaleShown(), time.Since(start).Round(time.Millisecond))
	return v
}

// scaleShown is the value of ScaleEnv as a failure shows it.
func scaleShown() string {
	if v := os.Getenv(ScaleEnv); v != "" {
		return v
	}
	return "1"
}
