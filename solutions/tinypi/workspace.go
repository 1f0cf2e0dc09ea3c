package tinypi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// MaxPathLength is the longest path, in bytes, a coding tool accepts. Linux refuses longer
// paths itself (PATH_MAX is 4096); the workspace refuses them first, with a message that says so.
const MaxPathLength = 4096

// Workspace is the one directory the coding tools may touch. Every file operation goes through
// an os.Root opened on it, so a path the model gives can never reach a file outside: not with
// "..", not with an absolute path, not through a symbolic link that points out, and not through
// a link swapped in while the operation runs.
//
// The workspace is the directory that was opened, not its path: when the directory is renamed
// later, or its old path is replaced by another directory or a link (a command can do either),
// the file tools go on working in the directory that was opened, wherever it now is. The bash
// tool starts its commands at the workspace's path (Dir); a shell is not confined by the
// workspace at all (see RunCommand).
//
// A Workspace is safe for concurrent use. Close it when the tools are no longer needed.
type Workspace struct {
	root *os.Root
	dir  string
	opts WorkspaceOptions
}

// WorkspaceOptions tunes the coding tools. A zero field takes its default.
type WorkspaceOptions struct {
	// ReadMaxBytes caps the text one read returns (default DefaultReadMaxBytes).
	ReadMaxBytes int
	// ReadMaxLines is how many lines a read returns when the call gives no limit
	// (default DefaultReadMaxLines).
	ReadMaxLines int
	// CommandTimeout is a command's time limit when the call gives none (default
	// DefaultCommandTimeout).
	CommandTimeout time.Duration
	// KillGrace is how long a command's process group has between SIGTERM and SIGKILL, and how
	// long the tool waits for the output to close once the group is gone (default
	// DefaultKillGrace).
	KillGrace time.Duration
	// OutputHead and OutputTail are how many bytes of a command's output are kept from its start
	// and from its end; the bytes between are counted, not kept (defaults DefaultOutputHead and
	// DefaultOutputTail).
	OutputHead, OutputTail int
	// CommandEnv holds "NAME=value" entries that commands see on top of the few variables they
	// take from the agent's own environment (PATH, HOME, USER, LANG, LC_ALL, LC_CTYPE, TERM,
	// TMPDIR and TZ; nothing else, so API keys stay with the agent). An entry here wins over a
	// variable of the same name from the agent.
	CommandEnv []string
}

// Defaults of WorkspaceOptions.
const (
	DefaultReadMaxBytes   = 50 * 1024
	DefaultReadMaxLines   = 2000
	DefaultCommandTimeout = 2 * time.Minute
	DefaultKillGrace      = 2 * time.Second
	DefaultOutputHead     = 16 * 1024
	DefaultOutputTail     = 16 * 1024
)

// OpenWorkspace opens dir, which must be an existing directory, as a workspace.
func OpenWorkspace(dir string, opts WorkspaceOptions) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("tinypi: workspace %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("tinypi: workspace: %w", err)
	}
	if opts.ReadMaxBytes <= 0 {
		opts.ReadMaxBytes = DefaultReadMaxBytes
	}
	if opts.ReadMaxLines <= 0 {
		opts.ReadMaxLines = DefaultReadMaxLines
	}
	if opts.CommandTimeout <= 0 {
		opts.CommandTimeout = DefaultCommandTimeout
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	if opts.OutputHead <= 0 {
		opts.OutputHead = DefaultOutputHead
	}
	if opts.OutputTail <= 0 {
		opts.OutputTail = DefaultOutputTail
	}
	return &Workspace{root: root, dir: abs, opts: opts}, nil
}

// Dir returns the workspace's directory as an absolute path.
func (w *Workspace) Dir() string { return w.dir }

// Close releases the workspace's directory handle.
func (w *Workspace) Close() error { return w.root.Close() }

// ErrOutsideWorkspace is wrapped by the error of every path that would leave the workspace.
var ErrOutsideWorkspace = errors.New("path leaves the workspace")

// LocalPath checks a path as the model wrote it and returns it cleaned, ready for the
// workspace's os.Root. It refuses, each with its own message: an empty path, a NUL byte, a
// backslash (a Windows separator, which Linux would take as part of a name), a Windows drive,
// a path longer than MaxPathLength, an absolute path, and a path whose ".." climbs above the
// workspace. A ".." that stays inside is fine ("docs/../README.md" is "README.md").
//
// LocalPath looks at the text only; symbolic links are the os.Root's business.
func LocalPath(p string) (string, error) {
	//lab:begin 8.1
	switch {
	case p == "":
		return "", errors.New("path is empty")
	case strings.IndexByte(p, 0) >= 0:
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	case len(p) > MaxPathLength:
		return "", fmt.Errorf("path is %d bytes long; the limit is %d", len(p), MaxPathLength)
	case strings.Contains(p, `\`):
		return "", fmt.Errorf(`path %q contains a backslash; separate names with "/"`, p)
	case len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]):
		return "", fmt.Errorf("path %q names a Windows drive; give a path relative to the workspace", p)
	case path.IsAbs(p):
		return "", fmt.Errorf("%w: %q is absolute; give a path relative to the workspace", ErrOutsideWorkspace, p)
	}
	clean := path.Clean(p)
	if !filepath.IsLocal(clean) {
		return "", fmt.Errorf("%w: %q climbs above the workspace through \"..\"", ErrOutsideWorkspace, p)
	}
	return clean, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// OpenFile opens a file of the workspace, like os.OpenFile. name is checked with LocalPath and
// then resolved by the os.Root, which refuses to follow a symbolic link out of the workspace.
func (w *Workspace) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	//lab:begin 8.1
	p, err := LocalPath(name)
	if err != nil {
		return nil, err
	}
	return w.root.OpenFile(p, flag, perm)
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// Open opens a file of the workspace for reading.
func (w *Workspace) Open(name string) (*os.File, error) {
	return w.OpenFile(name, os.O_RDONLY, 0)
}

// Stat describes a file of the workspace, following symbolic links that stay inside.
func (w *Workspace) Stat(name string) (fs.FileInfo, error) {
	//lab:begin 8.1
	p, err := LocalPath(name)
	if err != nil {
		return nil, err
	}
	return w.root.Stat(p)
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// MkdirAll creates a directory of the workspace and any parents it needs.
func (w *Workspace) MkdirAll(name string, perm fs.FileMode) error {
	//lab:begin 8.1
	p, err := LocalPath(name)
	if err != nil {
		return err
	}
	return w.root.MkdirAll(p, perm)
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// Lstat describes a file of the workspace without following a symbolic link in the path's last
// name (links in the names before it are followed, as long as they stay inside).
func (w *Workspace) Lstat(name string) (fs.FileInfo, error) {
	//lab:begin 8.1
	p, err := LocalPath(name)
	if err != nil {
		return nil, err
	}
	return w.root.Lstat(p)
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// Rename renames a file of the workspace; both names are checked.
func (w *Workspace) Rename(oldname, newname string) error {
	//lab:begin 8.1
	from, err := LocalPath(oldname)
	if err != nil {
		return err
	}
	to, err := LocalPath(newname)
	if err != nil {
		return err
	}
	return w.root.Rename(from, to)
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// Remove removes a file or an empty directory of the workspace. A symbolic link in the last name
// is removed itself, not the file it points to.
func (w *Workspace) Remove(name string) error {
	//lab:begin 8.1
	p, err := LocalPath(name)
	if err != nil {
		return err
	}
	return w.root.Remove(p)
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// Readlink returns the target of a symbolic link of the workspace, as the link holds it.
func (w *Workspace) Readlink(name string) (string, error) {
	p, err := LocalPath(name)
	if err != nil {
		return "", err
	}
	return w.root.Readlink(p)
}
