package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// openedSession is the session a tinypi process writes: its file is locked for as long as the
// process runs, so that no second tinypi resumes or forks it meanwhile, and watched, so that a
// file replaced or cut under tinypi (by a command the agent ran) is reported, not silently lost.
type openedSession struct {
	s    *tinypi.Session
	path string
	// lock is the file, open for reading: it holds the lock, and it is the file tinypi writes,
	// whatever happens to its path.
	lock *os.File
	info fs.FileInfo
	size int64 // the file's size when last checked: a log only grows
	// notes are lines for the user: what loading repaired or cut.
	notes []string
	// broken is set once check found the file replaced; later checks say nothing more.
	broken bool
	// endLoad, when set, ends the bound on the heap that resuming set (see
	// boundHeapWhileLoading); loaded calls it.
	endLoad func()
}

// loaded ends the bound on the heap that resuming the session set, if any: call it once the
// log is loaded and the agent holds its transcript. Calling it again does nothing.
func (o *openedSession) loaded() {
	if o.endLoad != nil {
		o.endLoad()
		o.endLoad = nil
	}
}

// errSessionInUse is wrapped by the error for a session another tinypi process has open.
var errSessionInUse = errors.New("is in use by another tinypi process")

// lockFile opens path and locks it, shared or exclusive, without waiting: a session in use is
// refused at once.
func lockFile(path string, exclusive bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("session %s %w: a session has one writer at a time, and is forked when no tinypi writes it; wait for that one to end", path, errSessionInUse)
		}
		return nil, fmt.Errorf("session %s: locking: %w", path, err)
	}
	return f, nil
}

// openSession opens the session cfg asks for: a new file (never an existing one), a resumed
// file, or a fork of one. The file is locked; a fork's parent is only read, never written.
func openSession(cfg config, cwd string) (*openedSession, error) {
	if cfg.resume != "" {
		return resumeSession(cfg.resume)
	}
	path := cfg.session
	if path == "" {
		path = defaultSessionPath(cwd, time.Now())
	}
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("%s exists: tinypi never overwrites a session; continue it with -resume %s", path, path)
	}
	if err := makeSessionDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	id := filepath.Base(path)
	opts := tinypi.SessionOptions{ID: id, Path: path}
	if cfg.fork == "" {
		s, err := tinypi.CreateSession(opts)
		if err != nil {
			return nil, err
		}
		return watch(s, path, nil)
	}
	from, seq, err := parseFork(cfg.fork)
	if err != nil {
		return nil, err
	}
	parentLock, err := lockFile(from, false)
	if err != nil {
		return nil, fmt.Errorf("-fork %s: %w", cfg.fork, err)
	}
	defer parentLock.Close()
	parent, repair, err := tinypi.ReadSession(from, tinypi.SessionOptions{})
	if err != nil {
		return nil, fmt.Errorf("-fork %s: %w", cfg.fork, err)
	}
	var notes []string
	if repair.TornBytes > 0 {
		notes = append(notes, fmt.Sprintf("-fork: %s: its last line (%d bytes) has no newline: a write cut short by a crash, not part of its log (the file is left as it is)", from, repair.TornBytes))
	}
	if n := parent.Len(); seq >= n {
		return nil, fmt.Errorf("-fork %s: SEQ %d is out of range: %s holds events 0 to %d%s", cfg.fork, seq, from, n-1, tornNote(repair))
	}
	fork, err := parent.Fork(seq, opts)
	if err != nil {
		return nil, fmt.Errorf("-fork %s: %w", cfg.fork, err)
	}
	return watch(fork, path, notes)
}

// tornNote says, after an out-of-range SEQ, that a torn last line was not counted.
func tornNote(r tinypi.SessionRepair) string {
	if r.TornBytes == 0 {
		return ""
	}
	return fmt.Sprintf(" (and a last line of %d bytes without its newline, which is not part of the log)", r.TornBytes)
}

// watch locks the new session file at path and returns it opened; on an error s is closed.
func watch(s *tinypi.Session, path string, notes []string) (*openedSession, error) {
	lock, err := lockFile(path, true)
	if err != nil {
		s.Close()
		return nil, err
	}
	o := &openedSession{s: s, path: path, lock: lock, notes: notes}
	if o.info, err = lock.Stat(); err != nil {
		o.close()
		return nil, fmt.Errorf("session: %w", err)
	}
	o.size = o.info.Size()
	return o, nil
}

// resumeSession locks the session at path, saves a torn last line before loading cuts it, and
// loads the session.
func resumeSession(path string) (*openedSession, error) {
	lock, err := lockFile(path, true)
	if err != nil {
		return nil, err
	}
	o := &openedSession{path: path, lock: lock}
	fail := func(err error) (*openedSession, error) {
		o.loaded()
		lock.Close()
		return nil, err
	}
	if o.info, err = lock.Stat(); err != nil {
		return fail(fmt.Errorf("session: %w", err))
	}
	o.endLoad = boundHeapWhileLoading(o.info.Size())
	torn, err := saveTornLine(lock, path)
	if err != nil {
		return fail(fmt.Errorf("session %s: its last line has no newline, and loading would cut it off, but it could not be kept: %w", path, err))
	}
	s, repair, err := tinypi.LoadSession(path, tinypi.SessionOptions{})
	if err != nil {
		if torn != nil {
			os.Remove(torn.savedIn)
		}
		return fail(err)
	}
	o.s = s
	if repair.TornBytes > 0 && torn != nil {
		o.notes = append(o.notes, fmt.Sprintf("%s: its last line (%d bytes) had no newline, a write cut short by a crash, and was cut off the log%s; the bytes cut are kept in %s", path, repair.TornBytes, torn.what, torn.savedIn))
	}
	if n := len(repair.Appended); n > 0 {
		o.notes = append(o.notes, fmt.Sprintf("%s: %d events repaired after a crash (seqs %v: results for calls left without one, the end of an interrupted turn)", path, n, repair.Appended))
	}
	info, err := lock.Stat()
	if err != nil {
		o.close()
		return nil, fmt.Errorf("session: %w", err)
	}
	o.size = info.Size()
	return o, nil
}

// tornLine is a last line without its newline that saveTornLine kept.
type tornLine struct {
	size    int64
	savedIn string
	what    string // ": it held a whole EVENT event (seq N)", or ""
}

// saveTornLine copies the last line of f, when it has no newline, into a new file beside path,
// and says what it held. Reading goes backwards from the end, a block at a time: it reads only
// the last line.
func saveTornLine(f *os.File, path string) (*tornLine, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	if size == 0 {
		return nil, nil
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return nil, err
	}
	if last[0] == '\n' {
		return nil, nil
	}
	start := int64(0)
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		n := int64(len(buf))
		if end < n {
			n = end
		}
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return nil, err
		}
		if i := lastNewline(buf[:n]); i >= 0 {
			start = end - n + int64(i) + 1
			break
		}
		end -= n
	}
	out, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".torn-*")
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(out, io.NewSectionReader(f, start, size-start))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out.Name())
		return nil, err
	}
	t := &tornLine{size: size - start, savedIn: out.Name()}
	if t.size <= 1<<20 {
		line := make([]byte, t.size)
		if _, err := f.ReadAt(line, start); err == nil {
			if e, err := tinypi.DecodeSessionEvent(line); err == nil {
				t.what = fmt.Sprintf(": it held a whole %s event (seq %d), which is not in the log any more", e.Type, e.Seq)
			}
		}
	}
	return t, nil
}

func lastNewline(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			return i
		}
	}
	return -1
}

// check reports, once, a session file that is no longer the file tinypi writes: its path removed
// or replaced by another file, or the file cut shorter (a log only grows). When the file tinypi
// writes still holds the log (its path was removed or replaced), the log is copied into a new
// file beside it, never over anything, and the error says where.
func (o *openedSession) check() error {
	if o.broken {
		return nil
	}
	own, err := o.lock.Stat()
	if err != nil {
		return fmt.Errorf("session %s: %w", o.path, err)
	}
	now, err := os.Lstat(o.path)
	switch {
	case err == nil && os.SameFile(now, o.info) && own.Size() >= o.size:
		o.size = own.Size()
		return nil
	case err == nil && os.SameFile(now, o.info):
		o.broken = true
		return fmt.Errorf("session %s was cut from %d to %d bytes while tinypi wrote it (by a command the agent ran?): the log is damaged; the events written since are at its end", o.path, o.size, own.Size())
	}
	o.broken = true
	what := "removed"
	if err == nil {
		what = "replaced by another file"
	}
	if err := o.s.Flush(context.Background()); err != nil {
		return fmt.Errorf("session %s was %s while tinypi wrote it, and the log could not be written: %v", o.path, what, err)
	}
	saved, err := o.saveCopy()
	if err != nil {
		return fmt.Errorf("session %s was %s while tinypi wrote it (by a command the agent ran?), and the log could not be saved elsewhere: %v", o.path, what, err)
	}
	return fmt.Errorf("session %s was %s while tinypi wrote it (by a command the agent ran?); the whole log is saved in %s (continue it with -resume %s)", o.path, what, saved, saved)
}

// saveCopy copies the file tinypi writes into a new file beside its path (or in the temporary
// directory when that directory is gone) and returns the new file's name.
func (o *openedSession) saveCopy() (string, error) {
	pattern := filepath.Base(o.path) + ".recovered-*.jsonl"
	out, err := os.CreateTemp(filepath.Dir(o.path), pattern)
	if err != nil {
		if out, err = os.CreateTemp("", pattern); err != nil {
			return "", err
		}
	}
	info, err := o.lock.Stat()
	if err == nil {
		_, err = io.Copy(out, io.NewSectionReader(o.lock, 0, info.Size()))
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out.Name())
		return "", err
	}
	return out.Name(), nil
}

// close flushes and closes the session and releases its lock.
func (o *openedSession) close() error {
	o.loaded()
	var err error
	if o.s != nil {
		err = o.s.Close()
	}
	o.lock.Close()
	return err
}

// makeSessionDir makes dir for session files; a new directory named .tinypi gets a .gitignore
// that ignores it whole, so that sessions stay out of the repository's changes.
func makeSessionDir(dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if filepath.Base(dir) == ".tinypi" {
		return os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*\n"), 0o644)
	}
	return nil
}
