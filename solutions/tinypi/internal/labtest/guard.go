// Package labtest holds what the focused tests of every chapter share, in whichever package of
// tinypi they run: the guard that turns a lab stub's panic into the test's failure, and a few
// file helpers. It is test support, not part of the runtime.
package labtest

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"testing"
)

// A lab that is still a stub panics with its pending message ("Lab N.M … 尚未实现"); the guard
// turns that panic into the calling test's failure, so the first failure names the lab and the
// other tests of the file still run.

// pendingRE finds a stub's pending message in a panic value, also inside a wrapped one.
var pendingRE = regexp.MustCompile(`Lab \d+\.\d+ .*?尚未实现`)

// Pending returns the pending message of a lab stub that s holds ("Lab 7.1 收集模型终态 尚未实现"), or
// "" when it holds none.
func Pending(s string) string { return pendingRE.FindString(s) }

// Fail reports a recovered panic p as t's failure: a stub's pending message alone, any other
// panic with its value and the stack that led to it. A nil p is no panic: Fail does nothing.
func Fail(t testing.TB, p any) {
	t.Helper()
	if p == nil {
		return
	}
	if msg := Pending(fmt.Sprint(p)); msg != "" {
		t.Fatal(msg)
	}
	t.Fatalf("panic: %v\n%s", p, debug.Stack())
}

// Guard is deferred by a test (`defer labtest.Guard(t)`) that calls lab code directly.
func Guard(t testing.TB) {
	t.Helper()
	Fail(t, recover())
}

// Call runs f under Guard and returns its result.
func Call[T any](t testing.TB, f func() T) T {
	t.Helper()
	defer Guard(t)
	return f()
}

// Run runs f under Guard.
func Run(t testing.TB, f func()) {
	t.Helper()
	defer Guard(t)
	f()
}
