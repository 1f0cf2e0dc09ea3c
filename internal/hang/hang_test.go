package hang_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/learn-tinypi/course/internal/hang"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBound(t *testing.T) {
	for _, tt := range []struct {
		scale string
		want  time.Duration
	}{
		{"", 10 * time.Second},
		{"1", 10 * time.Second},
		{"3", 30 * time.Second},
		{"2.5", 25 * time.Second},
		{"0.5", 5 * time.Second},
	} {
		t.Run(tt.scale, func(t *testing.T) {
			t.Setenv(hang.ScaleEnv, tt.scale)
			assert.Equal(t, tt.want, hang.Bound(10*time.Second))
		})
	}
	for _, scale := range []string{"0", "-2", "three", "NaN", "1e9"} {
		t.Run(scale, func(t *testing.T) {
			t.Setenv(hang.ScaleEnv, scale)
			assert.PanicsWithValue(t, fmt.Sprintf("COURSE_TEST_TIMEOUT_SCALE=%q: want a positive number, such as 3 (every hang bound of the tests is multiplied by it)", scale),
				func() { hang.Bound(time.Second) })
		})
	}
}

func TestWithinReturnsWhatTheWorkReturns(t *testing.T) {
	got := hang.Within(t, time.Minute, "the work", func(ctx context.Context) error { return ctx.Err() })
	assert.NoError(t, got, "the work's context while it runs")
}

// childEnv marks the run of this test binary that TestASlowTestFailsAlone starts: only there do
// TestChild* run.
const childEnv = "HANG_TEST_CHILD"

// TestChildSleepsPastTheBound is a test that sleeps far past its hang detector's bound: its work
// waits an hour unless its context is cancelled, then takes a little while to stop. It fails,
// so it runs only in the child go test of TestASlowTestFailsAlone.
func TestChildSleepsPastTheBound(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestASlowTestFailsAlone, in a go test of its own")
	}
	hang.Within(t, time.Millisecond, "the sleeping work", func(ctx context.Context) error {
		select {
		case <-time.After(time.Hour):
			return nil
		case <-ctx.Done():
		}
		time.Sleep(20 * time.Millisecond) // stopping takes a while: Within must wait for it
		fmt.Println("the sleeping work: cancelled, returning")
		return ctx.Err()
	})
	t.Error("Within returned after it failed the test")
}

// TestChildAfter is the test after the one that failed: it passes, and finds no goroutine left
// over (neither does the package's TestMain).
func TestChildAfter(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestASlowTestFailsAlone, in a go test of its own")
	}
	goleak.VerifyNone(t)
}

// TestASlowTestFailsAlone runs this package's TestChild* in a go test of their own (this test
// binary, run again): the test that sleeps past its hang detector fails with the detector's
// message, after its work was cancelled and had returned, and the test after it passes, with no
// goroutine left over.
func TestASlowTestFailsAlone(t *testing.T) {
	type result struct {
		out  string
		code int
		err  error
	}
	r := hang.Within(t, time.Minute, "the child go test", func(ctx context.Context) result {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestChild", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"=1", hang.ScaleEnv+"=1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return result{out.String(), exit.ExitCode(), nil}
		}
		return result{out.String(), 0, err}
	})
	require.NoError(t, r.err)
	assert.Equal(t, 1, r.code, "exit code of the child go test:\n%s", r.out)
	assert.Contains(t, r.out, "the sleeping work has not returned after 1ms: it blocks, or is far slower than it should be (on a slow machine raise COURSE_TEST_TIMEOUT_SCALE, now 1); cancelled, it returned ")
	assert.Contains(t, r.out, "--- FAIL: TestChildSleepsPastTheBound")
	assert.Contains(t, r.out, "--- PASS: TestChildAfter")
	assert.NotContains(t, r.out, "Within returned after it failed the test")
	assert.NotContains(t, r.out, "unexpected goroutines")
	returned := strings.Index(r.out, "the sleeping work: cancelled, returning")
	failed := strings.Index(r.out, "--- FAIL: TestChildSleepsPastTheBound")
	assert.True(t, returned >= 0 && returned < failed, "the work returned before the test failed:\n%s", r.out)
}
