package tinypi

import (
	"testing"

	"github.com/learn-tinypi/course/solutions/tinypi/internal/labtest"
)

// The focused tests of every chapter call lab code through these helpers (internal/labtest does
// the work): a lab that is still a stub panics with its pending message ("Lab N.M … 尚未实现"),
// and the helpers turn that panic into the calling test's failure, so the first failure names
// the lab and the other tests of the file still run.

// failOnPanic reports a recovered panic: a stub's pending message alone, any other panic with
// its value and the stack that led to it.
func failOnPanic(t *testing.T, p any) {
	t.Helper()
	labtest.Fail(t, p)
}

// labPending returns the pending message of a lab stub that s holds, or "".
func labPending(s string) string { return labtest.Pending(s) }

// guardLab is deferred by a test (`defer guardLab(t)`) that calls lab code directly.
func guardLab(t *testing.T) {
	t.Helper()
	labtest.Fail(t, recover())
}

// callLab runs f under guardLab and returns its result.
func callLab[T any](t *testing.T, f func() T) T {
	t.Helper()
	return labtest.Call(t, f)
}

// runLab runs f under guardLab.
func runLab(t *testing.T, f func()) {
	t.Helper()
	labtest.Run(t, f)
}
