package devcheck

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/learn-tinypi/course/internal/hang"
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

func TestRunJobsStartsGoJobsByPhaseThenOrder(t *testing.T) {
	// One go job at a time (Parallel 1) until the mutant phase, which has two slots.
	var mu sync.Mutex
	var started []string
	note := func(name string) {
		mu.Lock()
		defer mu.Unlock()
		started = append(started, name)
	}
	goJob := func(name string, p phase) job {
		return job{dir: name, usesGo: true, phase: p, run: func(context.Context, string) (func(), error) {
			note(name)
			return func() {}, nil
		}}
	}
	// The job that does not use go waits for the last go job, as the signature check waits for
	// the mutants: it must not hold a slot meanwhile.
	last := make(chan struct{})
	jobs := []job{
		goJob("mutant-1", phaseMutant),
		{dir: "waiter", run: func(ctx context.Context, _ string) (func(), error) {
			select {
			case <-last:
			case <-ctx.Done():
			}
			return func() {}, nil
		}},
		goJob("progressive-0", phaseProgressive),
		goJob("target-07", phaseTarget),
		goJob("flake-07", phaseFlake),
		goJob("target-08", phaseTarget),
		{dir: "mutant-2", usesGo: true, phase: phaseMutant, run: func(context.Context, string) (func(), error) {
			note("mutant-2")
			close(last)
			return func() {}, nil
		}},
	}
	if err := runJobs(context.Background(), "test", "course-jobs-", Options{Parallel: 1}, jobs); err != nil {
		t.Fatalf("runJobs: %v", err)
	}
	// The mutant phase opens its second slot once progressive-0 is handed out, so a mutant may
	// note itself before progressive-0 does, never before the jobs that ran alone before it.
	var others, mutants []string
	for _, name := range started {
		if strings.HasPrefix(name, "mutant-") {
			mutants = append(mutants, name)
		} else {
			others = append(others, name)
		}
	}
	want := []string{"target-07", "target-08", "flake-07", "progressive-0"}
	if diff := cmp.Diff(want, others); diff != "" {
		t.Errorf("order the jobs before the mutants started in (-want +got):\n%s", diff)
	}
	if len(started) != 6 || len(mutants) != 2 || slices.Index(started, "flake-07") > 2 {
		t.Errorf("started %v, want both mutants after target-07, target-08 and flake-07", started)
	}
}

// TestRunJobsGivesTheMutantPhaseTwiceTheSlots: with Parallel 2, four mutant jobs run at once,
// each waiting until all four have started; with only two slots they would wait for ever, so
// a deadline (never reached when runJobs is right) fails the test instead.
func TestRunJobsGivesTheMutantPhaseTwiceTheSlots(t *testing.T) {
	var running atomic.Int32
	all := make(chan struct{})
	var jobs []job
	for _, name := range []string{"target", "mutant-1", "mutant-2", "mutant-3", "mutant-4"} {
		p := phaseMutant
		if name == "target" {
			p = phaseTarget
		}
		jobs = append(jobs, job{dir: name, usesGo: true, phase: p, run: func(ctx context.Context, _ string) (func(), error) {
			if p != phaseMutant {
				return func() {}, nil
			}
			if running.Add(1) == 4 {
				close(all)
			}
			select {
			case <-all:
				return func() {}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang.Bound(30*time.Second))
	defer cancel()
	if err := runJobs(ctx, "test", "course-jobs-", Options{Parallel: 2}, jobs); err != nil {
		t.Fatalf("runJobs: %v (%d mutant jobs ran at once, want 4)", err, running.Load())
	}
}
