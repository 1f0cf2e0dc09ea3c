package tree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// Errors a PlaceError wraps when the directory cannot take a tree.
var (
	// ErrNoDir is an empty directory name: it must never mean the current directory.
	ErrNoDir = errors.New("no directory named (an empty name)")
	// ErrNotEmpty is a directory that already holds something.
	ErrNotEmpty = errors.New("is not empty; choose a new directory")
	// ErrNotDir is a path that exists and is not a directory.
	ErrNotDir = errors.New("exists and is not a directory")
)

// The steps of placing a tree, as PlaceError.Op names them.
const (
	OpCheck   = "check"   // looking at the directory before anything is written
	OpCreate  = "create"  // creating the directory, its missing parents or the staging directory
	OpWrite   = "write"   // writing a file into the staging directory
	OpPrepare = "prepare" // the caller's own step on the staging directory
	OpMove    = "move"    // moving an entry from the staging directory into the directory
)

// PlaceError says which step of writing a tree into a directory failed, and on which path.
// Nothing the directory held before is changed when it is returned.
type PlaceError struct {
	Op   string // OpCheck, OpCreate, OpWrite, OpPrepare or OpMove
	Path string // the path the step worked on
	Err  error
}

func (e *PlaceError) Error() string {
	switch e.Op {
	case OpCheck:
		return e.Path + " " + e.Err.Error()
	case OpPrepare:
		return e.Err.Error()
	}
	return e.Op + " " + e.Path + ": " + e.Err.Error()
}

func (e *PlaceError) Unwrap() error { return e.Err }

// placeOps are the file-system calls placing a tree makes. Tests replace them to fail at each
// step.
type placeOps struct {
	mkdir     func(name string) error
	mkdirTemp func(dir, pattern string) (string, error)
	writeFile func(name string, data []byte) error
	move      func(oldpath, newpath string) error // never replaces newpath
	removeAll func(path string) error
}

// realOps returns the operating system's calls.
func realOps() placeOps {
	return placeOps{
		mkdir:     func(name string) error { return os.Mkdir(name, 0o755) },
		mkdirTemp: os.MkdirTemp,
		writeFile: writeNew,
		move:      moveNoReplace,
		removeAll: os.RemoveAll,
	}
}

// writeNew creates the file name with data; it fails when name exists.
func writeNew(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// moveNoReplaceFallback moves oldpath to newpath without replacing anything at newpath, for
// systems and file systems without an atomic no-replace rename: a file is hard-linked and then
// unlinked (link fails when newpath exists); a directory gets a new empty directory at newpath
// first (mkdir fails when newpath exists), which the rename then replaces. A rename replaces
// only an empty directory, so an entry that appeared there in between is never lost.
func moveNoReplaceFallback(oldpath, newpath string) error {
	info, err := os.Lstat(oldpath)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		if err := os.Link(oldpath, newpath); err != nil {
			return err
		}
		return os.Remove(oldpath)
	}
	if err := os.Mkdir(newpath, 0o700); err != nil {
		return err
	}
	// syscall.Rename, not os.Rename: os.Rename refuses any existing directory at newpath.
	if err := syscall.Rename(oldpath, newpath); err != nil {
		os.Remove(newpath) // only while it is still the empty directory made above
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// Write writes the tree into dir, which must not exist or be an empty directory (or a symbolic
// link to one); see Fill.
func (t Tree) Write(dir string) error {
	return t.Fill(context.Background(), dir, nil)
}

// Fill writes the tree into dir. dir must not exist or be an empty directory (or a symbolic link
// to one); anything else is refused before anything is written. An existing dir is kept as it
// is, with its inode and mode, and filled in place: it may be the shell's current directory, or
// sit in a read-only parent. Missing parents are created.
//
// The files are written into a staging directory inside dir; prepare, when not nil, then runs on
// it (practice makes its git repository there). The staging directory's entries are finally
// moved into dir one by one, never replacing an entry: a file that appears in dir meanwhile
// makes Fill fail instead of being overwritten. On any failure, or when ctx ends, everything Fill
// made is removed again, and nothing that was in dir's place before is changed. The error is a
// *PlaceError naming the step and the path.
func (t Tree) Fill(ctx context.Context, dir string, prepare func(staging string) error) error {
	return t.fill(ctx, realOps(), dir, prepare)
}

func (t Tree) fill(ctx context.Context, o placeOps, dir string, prepare func(string) error) (err error) {
	if dir == "" {
		return &PlaceError{OpCheck, dir, ErrNoDir}
	}
	for p := range t {
		if !fs.ValidPath(p) || p == "." {
			return &PlaceError{OpCheck, dir, fmt.Errorf("holds an invalid path %q", p)}
		}
	}
	dir = filepath.Clean(dir)
	var created []string // directories Fill made, parents first
	switch info, statErr := os.Stat(dir); {
	case errors.Is(statErr, fs.ErrNotExist):
		if created, err = makeDirs(o, dir); err != nil {
			return err
		}
	case statErr != nil:
		return &PlaceError{OpCheck, dir, statErr}
	case !info.IsDir():
		return &PlaceError{OpCheck, dir, ErrNotDir}
	default:
		entries, err := os.ReadDir(dir)
		if err != nil {
			return &PlaceError{OpCheck, dir, err}
		}
		if len(entries) > 0 {
			return &PlaceError{OpCheck, dir, ErrNotEmpty}
		}
	}
	var moved []string // entries moved into dir, which are Fill's own
	staging := ""
	defer func() {
		if err == nil {
			return
		}
		for _, name := range moved {
			o.removeAll(filepath.Join(dir, name))
		}
		if staging != "" {
			o.removeAll(staging)
		}
		for i := len(created) - 1; i >= 0; i-- {
			os.Remove(created[i]) // only while empty
		}
	}()

	if staging, err = o.mkdirTemp(dir, ".course-staging-"); err != nil {
		staging = ""
		return &PlaceError{OpCreate, dir, err}
	}
	for _, p := range t.Paths() {
		full := filepath.Join(staging, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return &PlaceError{OpWrite, filepath.Join(dir, filepath.FromSlash(p)), err}
		}
		if err := o.writeFile(full, t[p]); err != nil {
			return &PlaceError{OpWrite, filepath.Join(dir, filepath.FromSlash(p)), err}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if prepare != nil {
		if err := prepare(staging); err != nil {
			return &PlaceError{OpPrepare, dir, err}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(staging)
	if err != nil {
		return &PlaceError{OpMove, dir, err}
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		to := filepath.Join(dir, e.Name())
		if err := o.move(filepath.Join(staging, e.Name()), to); err != nil {
			return &PlaceError{OpMove, to, err}
		}
		moved = append(moved, e.Name())
	}
	if err := os.Remove(staging); err != nil {
		return &PlaceError{OpMove, dir, err}
	}
	return nil
}

// makeDirs creates dir and its missing parents, each one refusing to exist already, and returns
// them parents first. On failure it removes the ones it made.
func makeDirs(o placeOps, dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(missing)
	var created []string
	for _, d := range missing {
		if err := o.mkdir(d); err != nil {
			for i := len(created) - 1; i >= 0; i-- {
				os.Remove(created[i])
			}
			return nil, &PlaceError{OpCreate, d, err}
		}
		created = append(created, d)
	}
	return created, nil
}
