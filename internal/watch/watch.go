// Package watch reruns a command when the files of a directory tree change: a loop that
// debounces change notifications and manual requests into runs, a file-system watcher
// (fsnotify, with a polling fallback for file systems that deliver no events), and a reader of
// the learner's keys.
package watch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Config is what Loop runs and what triggers it.
type Config struct {
	// Changes delivers the paths of changed files; nil (or closed) when there are no file events.
	Changes <-chan string
	// Manual delivers the learner's requests for a run now; nil (or closed) when there are none.
	Manual <-chan struct{}
	// Quit ends the loop when it is closed. A run under way finishes first (cancel ctx to
	// stop it).
	Quit <-chan struct{}
	// Debounce is how long the changes must be quiet before a run: an editor's save is often
	// several events in a row.
	Debounce time.Duration
	// Run runs once. Its error ends the loop, unless its ctx was cancelled (by a restart, Quit or
	// the end of Loop's ctx). A restart cancels ctx with the cause ErrRestart.
	Run func(ctx context.Context) error
	// After returns a channel that delivers once d has passed; nil means time.After. Tests
	// replace it to fire the debounce when they choose.
	After func(d time.Duration) <-chan time.Time
}

// ErrRestart is the cause (context.Cause) of a run's cancellation when files changed while it
// was under way: a new run starts as soon as it has ended.
var ErrRestart = errors.New("restarted: files changed during the run")

// Loop runs cfg.Run once at once, then again whenever cfg.Changes has delivered and been quiet
// for cfg.Debounce, and whenever cfg.Manual delivers (a manual run also covers the changes
// waiting for their debounce). A run is never left to finish on outdated files: when changes
// have been quiet for cfg.Debounce while a run is under way, the running one is cancelled (cause
// ErrRestart) and a new one starts once it has ended. A manual request is taken only between
// runs: it waits for the run under way, as keys typed ahead do. Runs never overlap. Loop returns nil when ctx ends, when cfg.Quit is
// closed, or when neither channel can deliver any more and no run is under way; it returns Run's
// error when a run fails on its own. Loop returns only after the last run has ended (when ctx
// ends, the run is cancelled).
func Loop(ctx context.Context, cfg Config) error {
	after := cfg.After
	if after == nil {
		after = time.After
	}
	changes, manual := cfg.Changes, cfg.Manual
	var (
		running  chan error              // delivers the result of the run under way; nil when none
		stop     context.CancelCauseFunc // cancels the run under way
		again    bool                    // a run is due once the one under way has ended
		debounce <-chan time.Time        // non-nil while changes wait for quiet
	)
	start := func() {
		runCtx, cancel := context.WithCancelCause(ctx)
		done := make(chan error, 1)
		go func() { done <- cfg.Run(runCtx) }()
		running, stop = done, cancel
	}
	due := func() {
		if running == nil {
			start()
			return
		}
		again = true
		stop(ErrRestart)
	}
	defer func() {
		if running != nil {
			stop(context.Canceled)
			<-running
			stop(nil)
		}
	}()
	start()
	for {
		if changes == nil && manual == nil && debounce == nil && running == nil {
			return nil
		}
		idleManual := manual // requests are taken between runs only
		if running != nil {
			idleManual = nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-cfg.Quit:
			if running != nil {
				<-running
				stop(nil)
				running = nil
			}
			return nil
		case _, ok := <-changes:
			if !ok {
				changes = nil
				continue
			}
			debounce = after(cfg.Debounce)
		case _, ok := <-idleManual:
			if !ok {
				manual = nil
				continue
			}
			debounce = nil
			due()
		case <-debounce:
			debounce = nil
			due()
		case err := <-running:
			stop(nil)
			running = nil
			if again {
				again = false
				start()
				continue
			}
			if err != nil && ctx.Err() == nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// Relevant reports whether a change of the file at rel (a slash path relative to the watched
// root) can change a test's outcome: Go files, go.mod, go.sum and anything under testdata/.
// Hidden files and editor backups (name~) are not.
func Relevant(rel string) bool {
	base := path.Base(rel)
	if strings.HasPrefix(base, ".") || strings.HasSuffix(base, "~") {
		return false
	}
	if strings.HasSuffix(base, ".go") || base == "go.mod" || base == "go.sum" {
		return true
	}
	return strings.HasPrefix(rel, "testdata/") || strings.Contains(rel, "/testdata/")
}

// skipDir reports whether the directory named name is not watched: .git, .course and every
// other hidden directory.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") && name != "."
}

// Watcher delivers the changed files of a directory tree on C until Close.
type Watcher struct {
	// C delivers the slash path, relative to the root, of each changed relevant file. It is
	// closed when the watcher stops.
	C <-chan string
	// Polling is true when the watcher scans modification times instead of receiving events.
	Polling bool

	cancel context.CancelFunc
	done   chan struct{}
}

// Close stops the watcher and waits until it has released everything it holds.
func (w *Watcher) Close() {
	w.cancel()
	<-w.done
}

// Start watches root and every directory under it (except hidden ones such as .git and .course)
// with file-system events. Directories created later are watched too.
func Start(root string) (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("starting the file watcher: %w", err)
	}
	if err := addTree(fw, root); err != nil {
		fw.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan string)
	w := &Watcher{C: out, cancel: cancel, done: make(chan struct{})}
	go func() {
		// Adding a watch can wait for fsnotify's reader, which may be waiting for this loop to
		// take an event: new directories are added by their own goroutines, which are waited
		// for before done closes.
		var adders sync.WaitGroup
		defer close(w.done)
		defer adders.Wait()
		defer close(out)
		defer fw.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case err, ok := <-fw.Errors:
				if !ok {
					return
				}
				_ = err // an overflow or a vanished directory: the next save still arrives
			case e, ok := <-fw.Events:
				if !ok {
					return
				}
				if e.Has(fsnotify.Create) {
					if info, err := os.Stat(e.Name); err == nil && info.IsDir() && !skipDir(info.Name()) {
						adders.Go(func() {
							_ = addTree(fw, e.Name) // best effort: it may be gone, or the watcher closed
						})
					}
				}
				if !e.Has(fsnotify.Write) && !e.Has(fsnotify.Create) && !e.Has(fsnotify.Rename) && !e.Has(fsnotify.Remove) {
					continue
				}
				rel, err := filepath.Rel(root, e.Name)
				if err != nil || !Relevant(filepath.ToSlash(rel)) {
					continue
				}
				select {
				case out <- filepath.ToSlash(rel):
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return w, nil
}

// addTree adds dir and its directories, except hidden ones, to fw.
func addTree(fw *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		if err := fw.Add(p); err != nil {
			return fmt.Errorf("watching %s: %w", p, err)
		}
		return nil
	})
}

// StartPolling watches root by scanning the modification times and sizes of its files every
// interval, for file systems that deliver no events (some network and virtual file systems).
func StartPolling(root string, interval time.Duration) *Watcher {
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan string)
	w := &Watcher{C: out, Polling: true, cancel: cancel, done: make(chan struct{})}
	seen := scan(root) // before returning: a change right after the start counts
	go func() {
		defer close(w.done)
		defer close(out)
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			now := scan(root)
			for _, rel := range changed(seen, now) {
				select {
				case out <- rel:
				case <-ctx.Done():
					return
				}
			}
			seen = now
		}
	}()
	return w
}

// stamp is what polling compares.
type stamp struct {
	mod  time.Time
	size int64
}

// scan returns the stamps of root's relevant files; unreadable entries are left out.
func scan(root string) map[string]stamp {
	files := map[string]stamp{}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || !Relevant(filepath.ToSlash(rel)) {
			return nil
		}
		if info, err := d.Info(); err == nil {
			files[filepath.ToSlash(rel)] = stamp{info.ModTime(), info.Size()}
		}
		return nil
	})
	return files
}

// changed returns the files added, removed or modified between two scans.
func changed(before, after map[string]stamp) []string {
	var paths []string
	for p, s := range after {
		if old, ok := before[p]; !ok || old != s {
			paths = append(paths, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			paths = append(paths, p)
		}
	}
	return paths
}

// Keys reads the learner's lines from r. An empty line (Enter), or any line but q, asks for a
// run: it is delivered on Manual, which is closed when r ends. "q" or "quit" closes Quit instead
// and stops reading.
type Keys struct {
	Manual <-chan struct{}
	Quit   <-chan struct{}

	stop chan struct{}
	done chan struct{}
}

// ReadKeys starts reading r in a goroutine. Call Stop when done: the goroutine ends as soon as
// its current read returns (a read from a terminal returns at the next line or at the end of
// the process).
func ReadKeys(r io.Reader) *Keys {
	manual := make(chan struct{})
	quit := make(chan struct{})
	k := &Keys{Manual: manual, Quit: quit, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(k.done)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			switch strings.ToLower(strings.TrimSpace(sc.Text())) {
			case "q", "quit":
				close(quit)
				return
			}
			select {
			case manual <- struct{}{}:
			case <-k.stop:
				return
			}
		}
		close(manual)
	}()
	return k
}

// Stop tells the reader to end. It does not wait for a read that is blocked; Wait does.
func (k *Keys) Stop() {
	select {
	case <-k.stop:
	default:
		close(k.stop)
	}
}

// Wait waits until the reader has ended, or ctx ends. It returns ctx's error in that case.
func (k *Keys) Wait(ctx context.Context) error {
	select {
	case <-k.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
