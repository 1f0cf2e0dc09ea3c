package tinypi

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"testing"
)

// The focused tests of every chapter call lab code through these helpers. A lab that is still
// a stub panics with its pending message ("Lab N.M … 尚未实现"); the helpers turn that panic
// into the calling test's failure, so the first failure names the lab and the other tests of
// the file still run.

// labPendingRE finds a stub's pending message in a panic value, also inside a wrapped one.
var labPendingRE = regexp.MustCompile(`Lab \d+\.\d+ .*?尚未实现`)

// failOnPanic reports a recovered panic: a stub's pending message alone, any other panic with
// its value and the stack that led to it.
func failOnPanic(t *testing.T, p any) {
	t.Helper()
	if msg := labPendingRE.FindString(fmt.Sprint(p)); msg != "" {
		t.Fatal(msg)
	}
	t.Fatalf("panic: %v\n%s", p, debug.Stack())
}

// guardLab is deferred by a test (`defer guardLab(t)`) that calls lab code directly.
func guardLab(t *testing.T) {
	t.Helper()
	if p := recover(); p != nil {
		failOnPanic(t, p)
	}
}

// callLab runs f under guardLab and returns its result.
func callLab[T any](t *testing.T, f func() T) T {
	t.Helper()
	defer guardLab(t)
	return f()
}

// runLab runs f under guardLab.
func runLab(t *testing.T, f func()) {
	t.Helper()
	defer guardLab(t)
	f()
}
