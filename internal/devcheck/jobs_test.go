package devcheck

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunJobsLimitsGoJobsAndRecordsSuccesses(t *testing.T) {
	var running, most atomic.Int32
	var recorded []string // written only by record functions, which runJobs serialises
	var dirs []string
	goJob := func(name string) job {
		return job{dir: name, usesGo: true, run: func(ctx context.Context, dir string) (func(), error) {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			n := running.Add(1)
			defer running.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(20 * time.Millisecond) // long enough for every job that may start to start
			return func() { recorded = append(recorded, name); dirs = append(dirs, dir) }, nil
		}}
	}
	jobs := []job{goJob("a"), goJob("b"), goJob("c"), goJob("d")}
	if err := runJobs(context.Background(), "test", "course-jobs-", Options{Parallel: 2}, jobs); err != nil {
		t.Fatalf("runJobs: %v", err)
	}
	if len(recorded) != len(jobs) {
		t.Errorf("recorded %v, want every job once", recorded)
	}
	if most.Load() > 2 {
		t.Errorf("%d go jobs ran at once, want at most 2", most.Load())
	}
	for _, dir := range dirs {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("job directory %s is still there (stat: %v)", dir, err)
		}
	}
}

func TestRunJobsReturnsTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	jobs := []job{
		{dir: "fails", usesGo: true, run: func(context.Context, string) (func(), error) { return nil, boom }},
		{dir: "waits", run: func(ctx context.Context, _ string) (func(), error) {
			<-ctx.Done() // the failure cancels the others, or this test hangs
			return func() {}, nil
		}},
	}
	err := runJobs(context.Background(), "test", "course-jobs-", Options{}, jobs)
	if !errors.Is(err, boom) {
		t.Errorf("runJobs = %v, want %v", err, boom)
	}
}
