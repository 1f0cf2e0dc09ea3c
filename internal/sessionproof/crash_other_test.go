//go:build !unix

package sessionproof

import "testing"

// TestSessionSurvivesSIGKILL needs SIGKILL, which only unix systems have.
func TestSessionSurvivesSIGKILL(t *testing.T) {
	t.Skip("the crash test kills its writer process with SIGKILL, which exists only on unix systems")
}
