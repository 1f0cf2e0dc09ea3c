package serve

import (
	"context"
	"errors"
	"hash/maphash"
	"os"
	"time"

	"github.com/learn-tinypi/course/internal/sessionlog"
)

// source is one log file the page shows. It reads the file when it is first needed and again
// whenever the file changed (another file in its place, another size or modification time),
// and keeps the index in between.
//
// Concurrency: get may be called from any number of goroutines; one of them reads the file
// while the others wait for its result or for their own context to end.
type source struct {
	path     string
	maxBytes int64
	lang     string
	progress func(path string, read int64)
	// withPrints makes every read compute the fingerprints the comparison with a reference
	// needs; seed is shared by the two logs compared.
	withPrints bool
	seed       maphash.Seed

	lock chan struct{} // a one-slot semaphore, held while the fields below are used
	// The last read, valid while the file has stamp (nil: read again): its Log (nil when the
	// read failed), its error and its fingerprints.
	stamp  *fileStamp
	log    *sessionlog.Log
	err    error
	prints *fingerprints
}

// fileStamp is what tells that a file changed.
type fileStamp struct {
	info os.FileInfo
	size int64
	mod  time.Time
}

func newSource(path string, opts Options, withPrints bool, seed maphash.Seed) *source {
	return &source{path: path, maxBytes: opts.MaxBytes, lang: opts.Lang, progress: opts.Progress, withPrints: withPrints,
		seed: seed, lock: make(chan struct{}, 1)}
}

func stampOf(path string) *fileStamp {
	info, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return &fileStamp{info: info, size: info.Size(), mod: info.ModTime()}
}

func (a *fileStamp) same(b *fileStamp) bool {
	return a != nil && b != nil && os.SameFile(a.info, b.info) && a.size == b.size && a.mod.Equal(b.mod)
}

// get returns the log as sessionlog.ReadFile does (a torn log with its intact part and the
// error), and its fingerprints when the source has them, from the last read while the file has
// not changed.
func (s *source) get(ctx context.Context) (*sessionlog.Log, *fingerprints, error) {
	select {
	case s.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	defer func() { <-s.lock }()
	stamp := stampOf(s.path)
	if stamp.same(s.stamp) {
		return s.log, s.prints, s.err
	}
	var prints *fingerprints
	opts := sessionlog.Options{MaxBytes: s.maxBytes}
	if s.progress != nil {
		opts.Progress = func(read int64) { s.progress(s.path, read) }
	}
	if s.withPrints {
		prints = &fingerprints{seed: s.seed}
		opts.Visit = func(e sessionlog.Event) { prints.add(e, s.lang) }
	}
	log, err := sessionlog.ReadFile(ctx, s.path, opts)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, nil, err // not the file's answer: read it again next time
	}
	if prints != nil && log != nil {
		prints.finish(log)
	}
	s.stamp, s.log, s.err, s.prints = nil, log, err, prints
	if stamp.same(stampOf(s.path)) {
		s.stamp = stamp // unchanged while it was read: keep the read
	}
	return log, prints, err
}

// forget drops the last read, so that the next get reads the file again.
func (s *source) forget() {
	s.lock <- struct{}{}
	s.stamp = nil
	<-s.lock
}
