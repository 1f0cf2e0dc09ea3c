package perf

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/serve"
	"github.com/learn-tinypi/course/internal/sessionlog/logtest"
)

// allocatedToView returns the bytes allocated to read a log of turns turns and build the view
// of its first call, as `course serve --check` does, and the log's size.
func allocatedToView(t *testing.T, turns int) (uint64, int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	size, _, err := logtest.WriteFile(path, turns, 0)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	v, problem, err := serve.Load(context.Background(), serve.Options{Log: path, Lang: i18n.EN}, -1)
	runtime.ReadMemStats(&after)
	if err != nil || problem != nil || v.Call == nil {
		t.Fatalf("the view of %d turns: %+v %v", turns, problem, err)
	}
	return after.TotalAlloc - before.TotalAlloc, size
}

// Reading a log is linear (issue 25): four times the turns allocate about four times the
// bytes. The quadratic reader this replaced allocated 2.4 GB for 1,000 turns and 47 GB for
// 4,000 (20 times). Allocations, unlike times, do not depend on the machine's load.
func TestLogReaderIsLinear(t *testing.T) {
	small, smallSize := allocatedToView(t, 500)
	large, largeSize := allocatedToView(t, 2000)
	ratio := float64(large) / float64(small)
	t.Logf("500 turns (%d bytes): %d bytes allocated; 2,000 turns (%d bytes): %d (×%.2f)", smallSize, small, largeSize, large, ratio)
	if ratio > 4.6 {
		t.Errorf("2,000 turns allocate %.2f times what 500 do: reading is not linear", ratio)
	}
	if perByte := float64(large) / float64(largeSize); perByte > 20 {
		t.Errorf("%.1f bytes allocated per byte of log", perByte)
	}
}
