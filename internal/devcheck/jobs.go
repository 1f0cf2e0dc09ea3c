package devcheck

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// output is where opts sends its lines: opts.Out, or nowhere.
func (opts Options) output() io.Writer {
	if opts.Out == nil {
		return io.Discard
	}
	return opts.Out
}

// job is one piece of the work of Run or Signatures, done in a directory of its own.
type job struct {
	dir    string // the name of its directory inside the run's temporary directory
	usesGo bool   // it runs go, so it waits for one of the opts.Parallel slots
	// phase orders the jobs that use go: a job of a lower phase starts first, and jobs of one
	// phase start in the order given (see schedule.go). Jobs that do not use go start at once.
	phase phase
	// rank orders the jobs of one phase before the order they are given in (schedule.go).
	rank int
	// run does the work in dir, which it may create; dir is removed afterwards. The function it
	// returns records the outcome. It is called only when run succeeded, and never while
	// another job's is, so it may write to shared results and to the output.
	run func(ctx context.Context, dir string) (record func(), err error)
}

// runJobs runs jobs, at most opts.Parallel (or DefaultParallel) of those that use go at once,
// taken in order of phase, of rank and then of jobs; the others each at once. Once every job of
// an earlier phase has started, the mutant phase (phaseMutant) gets as many slots again: a mutant's run is
// mostly a test binary built once for the whole chapter (chapterSchema), and many such runs wait
// rather than compute (chapter 08's mutants wait for processes and deadlines, the CPU idle), so
// two slots left the machine idle for minutes. Each job works in a
// directory inside a temporary directory whose name starts with tmpPrefix; all of it is removed
// at the end. The first error stops the other jobs and is returned, as is ctx's error when ctx
// ends first. what names the command in the error of a temporary directory that cannot be made.
func runJobs(ctx context.Context, what, tmpPrefix string, opts Options, jobs []job) error {
	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	tmp, err := os.MkdirTemp("", tmpPrefix)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer os.RemoveAll(tmp)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex // serialises the record functions and guards firstErr
		firstErr error
	)
	do := func(j job) {
		if ctx.Err() != nil {
			return
		}
		dir := filepath.Join(tmp, j.dir)
		record, err := j.run(ctx, dir)
		os.RemoveAll(dir)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if firstErr == nil {
				firstErr = err
				cancel()
			}
			return
		}
		record()
	}
	var queue []job
	for _, j := range jobs {
		if j.usesGo {
			queue = append(queue, j)
			continue
		}
		wg.Go(func() { do(j) })
	}
	// A job that does not use go may wait for jobs that do (the signature check waits for every
	// mutant's run); those wait for nothing, so the workers cannot deadlock.
	slices.SortStableFunc(queue, func(a, b job) int { return cmp.Or(cmp.Compare(a.phase, b.phase), cmp.Compare(a.rank, b.rank)) })
	next := make(chan job)
	worker := func() {
		for j := range next {
			do(j)
		}
	}
	for range min(parallel, len(queue)) {
		wg.Go(worker)
	}
	for i, j := range queue {
		if j.phase == phaseMutant && (i == 0 || queue[i-1].phase != phaseMutant) {
			for range min(parallel, len(queue)-i) {
				wg.Go(worker)
			}
		}
		select {
		case next <- j:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
