package devcheck

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	// run does the work in dir, which it may create; dir is removed afterwards. The function it
	// returns records the outcome. It is called only when run succeeded, and never while
	// another job's is, so it may write to shared results and to the output.
	run func(ctx context.Context, dir string) (record func(), err error)
}

// runJobs runs jobs at the same time, at most opts.Parallel (or DefaultParallel) of those that
// use go at once, each in a directory inside a temporary directory whose name starts with
// tmpPrefix; all of it is removed at the end. The first error stops the other jobs and is
// returned, as is ctx's error when ctx ends first. what names the command in the error of a
// temporary directory that cannot be made.
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
		slots    = make(chan struct{}, parallel)
	)
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if j.usesGo {
				select {
				case slots <- struct{}{}:
					defer func() { <-slots }()
				case <-ctx.Done():
					return
				}
			}
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
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
