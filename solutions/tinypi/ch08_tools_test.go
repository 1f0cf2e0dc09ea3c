package tinypi

// Focused tests of chapter 08, coding tools in a confined workspace. Each test belongs to one lab:
//
//	go test -run '^TestLab8_1_' .   把路径关进工作区
//	go test -run '^TestLab8_2_' .   按行读取文本文件
//	go test -run '^TestLab8_3_' .   原子写入与精确编辑
//	go test -run '^TestLab8_4_' .   运行命令并收拾进程组
//	go test -run '^TestLab8_5_' .   把工具接进循环

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/learn-tinypi/course/solutions/tinypi/internal/labtest"
)

// --- a workspace with an outside to protect -------------------------------------------------------

// ch08Secret is the content of the file outside the workspace that no tool may read or change.
const ch08Secret = "top secret\n"

// ch08Env is a workspace directory and, beside it, two directories the tools must never touch:
// outside, and ws-evil, whose name starts with the workspace's name (a containment check by
// string prefix takes it for a part of the workspace).
type ch08Env struct {
	ws      *Workspace
	dir     string // base/ws, the workspace
	outside string // base/outside: secret.txt, an empty folder, and pointer, a link to secret.txt
	evil    string // base/ws-evil: secret.txt
}

// ch08Setup makes base/ws, base/outside and base/ws-evil and opens base/ws as a workspace with
// opts.
func ch08Setup(t *testing.T, opts WorkspaceOptions) *ch08Env {
	t.Helper()
	base := t.TempDir()
	env := &ch08Env{dir: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"), evil: filepath.Join(base, "ws-evil")}
	for _, d := range []string{env.dir, filepath.Join(env.outside, "folder"), env.evil} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ch08WriteFile(t, filepath.Join(env.outside, "secret.txt"), ch08Secret)
	ch08WriteFile(t, filepath.Join(env.evil, "secret.txt"), ch08Secret)
	ch08Symlink(t, "secret.txt", filepath.Join(env.outside, "pointer"))
	ws, err := OpenWorkspace(env.dir, opts)
	if err != nil {
		t.Fatalf("OpenWorkspace: %v", err)
	}
	t.Cleanup(func() { ws.Close() })
	env.ws = ws
	return env
}

func ch08WriteFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ch08Umask sets the process's umask to mask for the test, so that the modes of new files do not
// depend on the machine (a umask of 077 would make every new file -rw-------).
func ch08Umask(t *testing.T, mask int) {
	t.Helper()
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

func ch08Symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// ch08Snapshot describes every entry under dir: files with content and mode, directories,
// symbolic links with their target.
func ch08Snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			snap[rel] = "link → " + target
		case info.IsDir():
			snap[rel] = "dir"
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			snap[rel] = fmt.Sprintf("file %v %q", info.Mode().Perm(), data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// outsideSnapshot describes the two directories beside the workspace, outside and ws-evil.
func (env *ch08Env) outsideSnapshot(t *testing.T) map[string]string {
	t.Helper()
	snap := map[string]string{}
	for _, dir := range []string{env.outside, env.evil} {
		for name, entry := range ch08Snapshot(t, dir) {
			snap[filepath.Join(filepath.Base(dir), name)] = entry
		}
	}
	return snap
}

// ch08Unchanged fails the test when the directories beside the workspace are not as before.
func ch08Unchanged(t *testing.T, what string, env *ch08Env, before map[string]string) {
	t.Helper()
	if diff := cmp.Diff(before, env.outsideSnapshot(t)); diff != "" {
		t.Errorf("%s: a directory outside the workspace changed (-before +after):\n%s", what, diff)
	}
}

// --- Lab 8.1 · confinement ---------------------------------------------------------------------

func TestLab8_1_工作区路径_Lexical(t *testing.T) {
	defer guardLab(t)
	allowed := []struct{ in, want string }{
		{"README.md", "README.md"},
		{"./docs//guide.md", "docs/guide.md"},
		{"docs/../README.md", "README.md"},
		{"notes..txt", "notes..txt"},
		{"...", "..."},
		{"a/b/c/", "a/b/c"},
		{".", "."},
		// A drive is a letter and a colon at the start; a colon anywhere else is part of a name.
		{"notes:v2.txt", "notes:v2.txt"},
		{"a/C:b", "a/C:b"},
		{"ab:c", "ab:c"},
		// Exactly MaxPathLength bytes is not longer than the limit.
		{strings.Repeat("a/", 2047) + "ab", strings.Repeat("a/", 2047) + "ab"},
	}
	for _, c := range allowed {
		got, err := LocalPath(c.in)
		if err != nil || got != c.want {
			name, want := c.in, c.want
			if len(name) > 40 {
				name, want = name[:40]+"…", want[:40]+"…"
			}
			t.Errorf("LocalPath(%q) = %.40q, %v; want %q, nil (this path stays inside the workspace; a path of %d bytes is within the limit of %d)", name, got, err, want, len(c.in), MaxPathLength)
		}
	}
	// Every refusal has its own sentence, word for word as the card gives it: the model reads
	// it to correct its next call. A path appears as Go's %q writes it.
	refused := []struct {
		in, want string
		outside  bool // the error wraps ErrOutsideWorkspace
	}{
		{"", "path is empty", false},
		{"..", `path leaves the workspace: ".." climbs above the workspace through ".."`, true},
		{"../outside/secret.txt", `path leaves the workspace: "../outside/secret.txt" climbs above the workspace through ".."`, true},
		{"docs/../../outside", `path leaves the workspace: "docs/../../outside" climbs above the workspace through ".."`, true},
		{"./../x", `path leaves the workspace: "./../x" climbs above the workspace through ".."`, true},
		{"a/b/../../../x", `path leaves the workspace: "a/b/../../../x" climbs above the workspace through ".."`, true},
		{"/etc/passwd", `path leaves the workspace: "/etc/passwd" is absolute; give a path relative to the workspace`, true},
		{"/proc/self/root/etc/passwd", `path leaves the workspace: "/proc/self/root/etc/passwd" is absolute; give a path relative to the workspace`, true},
		{"//server/share", `path leaves the workspace: "//server/share" is absolute; give a path relative to the workspace`, true},
		{"README.md\x00.png", `path "README.md\x00.png" contains a NUL byte`, false},
		{"a\x00/../../x", `path "a\x00/../../x" contains a NUL byte`, false},
		{`..\outside\secret.txt`, `path "..\\outside\\secret.txt" contains a backslash; separate names with "/"`, false},
		{`docs\guide.md`, `path "docs\\guide.md" contains a backslash; separate names with "/"`, false},
		{`C:\Windows\win.ini`, `path "C:\\Windows\\win.ini" contains a backslash; separate names with "/"`, false},
		{"C:/Windows/win.ini", `path "C:/Windows/win.ini" names a Windows drive; give a path relative to the workspace`, false},
		{"c:secret.txt", `path "c:secret.txt" names a Windows drive; give a path relative to the workspace`, false},
		{strings.Repeat("a/", 2100), "path is 4200 bytes long; the limit is 4096", false},
		{strings.Repeat("a", 4097), "path is 4097 bytes long; the limit is 4096", false},
		// The length is counted in bytes: 1366 "文" are 4098 bytes (three each).
		{strings.Repeat("文", 1366), "path is 4098 bytes long; the limit is 4096", false},
		// The seven kinds are checked in the card's order: the first that matches gives the error.
		{"/x\x00", `path "/x\x00" contains a NUL byte`, false},
		{"/" + strings.Repeat("a", 4200), "path is 4201 bytes long; the limit is 4096", false},
		{`/docs\guide.md`, `path "/docs\\guide.md" contains a backslash; separate names with "/"`, false},
		{"C:/../../x", `path "C:/../../x" names a Windows drive; give a path relative to the workspace`, false},
		{"/a/../../x", `path leaves the workspace: "/a/../../x" is absolute; give a path relative to the workspace`, true},
	}
	for _, c := range refused {
		got, err := LocalPath(c.in)
		name := c.in
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		if err == nil {
			t.Errorf("LocalPath(%q) = %.40q, nil; want the error %q", name, got, c.want)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("LocalPath(%q) error = %.120q; want %q (the card's seven kinds, checked in its order; N is the length in bytes)", name, err.Error(), c.want)
		}
		if errors.Is(err, ErrOutsideWorkspace) != c.outside {
			t.Errorf("LocalPath(%q): errors.Is(err, ErrOutsideWorkspace) = %v, want %v", name, !c.outside, c.outside)
		}
	}
}

// ch08Attempt is one escape attempt: an operation on the workspace that must fail.
type ch08Attempt struct {
	name string
	op   func(ws *Workspace) error
}

func ch08OpenAndRead(name string) func(ws *Workspace) error {
	return func(ws *Workspace) error {
		f, err := ws.Open(name)
		if err == nil {
			f.Close()
		}
		return err
	}
}

func ch08CreateAndWrite(name string) func(ws *Workspace) error {
	return func(ws *Workspace) error {
		f, err := ws.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		_, err = f.WriteString("overwritten\n")
		f.Close()
		return fmt.Errorf("the write through %s succeeded: %v", name, err)
	}
}

// ch08Links builds the symbolic links of the catalogue inside the workspace.
func ch08Links(t *testing.T, env *ch08Env) {
	t.Helper()
	links := map[string]string{
		"link-out":     "../outside",
		"link-abs":     env.outside,
		"file-link":    "../outside/secret.txt",
		"abs-file":     filepath.Join(env.outside, "secret.txt"),
		"proc-link":    "/proc/self/root",
		"hop1":         "hop2",
		"hop2":         "docs/../../outside",
		"dangling-out": "../outside/created.txt",
		"evil-link":    "../ws-evil", // a neighbour whose name starts with the workspace's
		"evil-abs":     env.evil,
		"inner-link":   "docs/guide.md", // stays inside: allowed
	}
	for name, target := range links {
		ch08Symlink(t, target, filepath.Join(env.dir, name))
	}
	ch08WriteFile(t, filepath.Join(env.dir, "docs", "guide.md"), "inside\n")
}

func TestLab8_1_工作区路径_Catalogue(t *testing.T) {
	defer guardLab(t)
	ch08Umask(t, 0o022) // the modes of new directories below do not depend on the machine
	env := ch08Setup(t, WorkspaceOptions{})
	ch08Links(t, env)
	abs := filepath.Join(env.outside, "secret.txt")
	longName := strings.Repeat("n", 300)
	attempts := []ch08Attempt{
		{"read ../outside/secret.txt", ch08OpenAndRead("../outside/secret.txt")},
		{"read ../../etc/passwd", ch08OpenAndRead("../../etc/passwd")},
		{"read docs/../../outside/secret.txt", ch08OpenAndRead("docs/../../outside/secret.txt")},
		{"read the absolute path of the secret", ch08OpenAndRead(abs)},
		{"read /etc/passwd", ch08OpenAndRead("/etc/passwd")},
		{"read /proc/self/root/etc/passwd", ch08OpenAndRead("/proc/self/root/etc/passwd")},
		{"read through a link to ../outside", ch08OpenAndRead("link-out/secret.txt")},
		{"read through a link to the absolute outside", ch08OpenAndRead("link-abs/secret.txt")},
		{"read a file link pointing out", ch08OpenAndRead("file-link")},
		{"read an absolute file link", ch08OpenAndRead("abs-file")},
		{"read through a link to /proc/self/root", ch08OpenAndRead("proc-link/etc/passwd")},
		{"read through two hops of links", ch08OpenAndRead("hop1/secret.txt")},
		{"read with a NUL byte", ch08OpenAndRead("docs/guide.md\x00../../outside/secret.txt")},
		{"read with backslashes", ch08OpenAndRead(`..\outside\secret.txt`)},
		{"read a Windows path", ch08OpenAndRead(`C:\outside\secret.txt`)},
		{"read a very long path", ch08OpenAndRead(strings.Repeat("docs/../", 600) + "README.md")},
		{"read a very long name", ch08OpenAndRead(longName)},
		{"write ../outside/secret.txt", ch08CreateAndWrite("../outside/secret.txt")},
		{"write a new file through a link to ../outside", ch08CreateAndWrite("link-out/new.txt")},
		{"write over the secret through a file link", ch08CreateAndWrite("file-link")},
		{"write through a dangling link pointing out", ch08CreateAndWrite("dangling-out")},
		{"write the absolute path of the secret", ch08CreateAndWrite(abs)},
		{"write through two hops of links", ch08CreateAndWrite("hop1/new.txt")},
		{"stat through a link to ../outside", func(ws *Workspace) error { _, err := ws.Stat("link-out/secret.txt"); return err }},
		{"mkdir through a link to ../outside", func(ws *Workspace) error { return ws.MkdirAll("link-out/made/deeper", 0o755) }},
		{"mkdir ../outside/made", func(ws *Workspace) error { return ws.MkdirAll("../outside/made", 0o755) }},
		{"rename a workspace file out", func(ws *Workspace) error { return ws.Rename("docs/guide.md", "../outside/moved.md") }},
		{"rename a workspace file to an absolute path", func(ws *Workspace) error { return ws.Rename("docs/guide.md", filepath.Join(env.outside, "moved.md")) }},
		{"rename a file in through a link", func(ws *Workspace) error { return ws.Rename("link-out/secret.txt", "stolen.txt") }},
		{"rename into the folder through a link", func(ws *Workspace) error { return ws.Rename("docs/guide.md", "link-out/folder/moved.md") }},
		{"lstat through a link to ../outside", func(ws *Workspace) error { _, err := ws.Lstat("link-out/secret.txt"); return err }},
		{"remove ../outside/secret.txt", func(ws *Workspace) error { return ws.Remove("../outside/secret.txt") }},
		{"remove through a link to ../outside", func(ws *Workspace) error { return ws.Remove("link-out/secret.txt") }},
		{"readlink through a link to ../outside", func(ws *Workspace) error { _, err := ws.Readlink("link-out/pointer"); return err }},
		{"read through a link to ../ws-evil, beside the workspace", ch08OpenAndRead("evil-link/secret.txt")},
		{"read through an absolute link to ws-evil", ch08OpenAndRead("evil-abs/secret.txt")},
		{"write through a link to ../ws-evil", ch08CreateAndWrite("evil-link/new.txt")},
		{"stat through a link to ../ws-evil", func(ws *Workspace) error { _, err := ws.Stat("evil-link/secret.txt"); return err }},
		{"remove through a link to ../ws-evil", func(ws *Workspace) error { return ws.Remove("evil-link/secret.txt") }},
		{"rename a file in from ../ws-evil through a link", func(ws *Workspace) error { return ws.Rename("evil-link/secret.txt", "stolen.txt") }},
	}
	before := env.outsideSnapshot(t)
	for _, a := range attempts {
		if err := a.op(env.ws); err == nil {
			t.Errorf("%s: no error; every escape attempt must fail", a.name)
		} else if strings.Contains(err.Error(), "succeeded") {
			t.Errorf("%s: %v", a.name, err)
		}
		ch08Unchanged(t, a.name, env, before)
	}
	// What stays inside still works, links that stay inside included.
	for _, name := range []string{"docs/guide.md", "inner-link", "docs/../inner-link"} {
		f, err := env.ws.Open(name)
		if err != nil {
			t.Errorf("Open(%q): %v; a path that stays inside the workspace must work", name, err)
			continue
		}
		f.Close()
	}
	// Each method does what the method of the same name on the os.Root does: Stat follows a
	// link in the last name, MkdirAll creates with the mode it is given, Remove removes a file or
	// an empty directory, never a directory with what is in it.
	if info, err := env.ws.Stat("inner-link"); err != nil || !info.Mode().IsRegular() || info.Size() != int64(len("inside\n")) {
		t.Errorf("Stat(inner-link), a link to docs/guide.md: %v, %v; want the file it points to, a regular file of 7 bytes (Stat follows a link, only Lstat does not)", ch08Kind(info), err)
	}
	if err := env.ws.MkdirAll("made/deeper", 0o750); err != nil {
		t.Errorf("MkdirAll(made/deeper) inside the workspace: %v", err)
	}
	for _, name := range []string{"made", "made/deeper"} {
		if info, err := os.Stat(filepath.Join(env.dir, name)); err != nil || info.Mode().Perm() != 0o750 {
			var mode fs.FileMode
			if info != nil {
				mode = info.Mode()
			}
			t.Errorf("after MkdirAll(made/deeper, 0750) with the umask 022, %s is %v, %v; want drwxr-x---: MkdirAll creates with the mode it is given", name, mode, err)
		}
	}
	if err := env.ws.Rename("docs/guide.md", "made/guide.md"); err != nil {
		t.Errorf("Rename inside the workspace: %v", err)
	}
	if err := env.ws.Remove("made"); err == nil {
		t.Errorf("Remove(made), a directory holding deeper and guide.md: no error; Remove removes a file or an empty directory only")
	}
	if names := labtest.DirNames(t, filepath.Join(env.dir, "made")); !cmp.Equal(names, []string{"deeper", "guide.md"}) {
		t.Errorf("after Remove(made), made holds %q; want deeper and guide.md, untouched", names)
	}
	if info, err := env.ws.Lstat("inner-link"); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(inner-link) = %v, %v; want the link itself, not the file it points to", info, err)
	}
	if target, err := env.ws.Readlink("inner-link"); err != nil || target != "docs/guide.md" {
		t.Errorf("Readlink(inner-link) = %q, %v; want docs/guide.md", target, err)
	}
	// Removing a link removes the link, never what it points to.
	if err := env.ws.Remove("file-link"); err != nil {
		t.Errorf("Remove(file-link), a link inside the workspace: %v; a link is removed itself", err)
	}
	ch08Unchanged(t, "removing a link that points out", env, before)
	if err := env.ws.Remove("made/guide.md"); err != nil {
		t.Errorf("Remove(made/guide.md) inside the workspace: %v", err)
	}
	// The lexical refusals come from LocalPath, with its message, not from the operating system.
	for _, name := range []string{"../outside/secret.txt", abs, `..\outside`, "a\x00b"} {
		_, err := env.ws.Open(name)
		_, want := LocalPath(name)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("Open(%q) error = %v; want LocalPath's own error %v", name, err, want)
		}
	}
	if err := env.ws.Rename("made/guide.md", "../outside/moved.md"); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("Rename to ../outside/moved.md: error %v; want one wrapping ErrOutsideWorkspace (the new name is checked too)", err)
	}
}

func TestLab8_1_工作区路径_Swap(t *testing.T) {
	defer guardLab(t)
	defer ch08NoLeaks(t, goleak.IgnoreCurrent())
	env := ch08Setup(t, WorkspaceOptions{})
	sub := filepath.Join(env.dir, "sub")
	ch08WriteFile(t, filepath.Join(sub, "notes.txt"), "inside\n")
	before := env.outsideSnapshot(t)

	// Between two calls: sub was a directory when it was first used, then becomes a link out.
	if f, err := env.ws.Open("sub/notes.txt"); err != nil {
		t.Fatalf("Open(sub/notes.txt) while sub is a directory: %v", err)
	} else {
		f.Close()
	}
	if err := os.Rename(sub, sub+".real"); err != nil {
		t.Fatal(err)
	}
	ch08Symlink(t, "../outside", sub)
	if err := ch08OpenAndRead("sub/secret.txt")(env.ws); err == nil {
		t.Errorf("Open(sub/secret.txt) after sub became a link out: no error; a path is checked at every call, not once")
	}
	if err := ch08CreateAndWrite("sub/new.txt")(env.ws); err == nil || strings.Contains(err.Error(), "succeeded") {
		t.Errorf("creating sub/new.txt after sub became a link out: %v", err)
	}
	ch08Unchanged(t, "after the swap between calls", env, before)
}

func TestLab8_1_工作区路径_Moved(t *testing.T) {
	defer guardLab(t)
	ch08Umask(t, 0o022)
	env := ch08Setup(t, WorkspaceOptions{})
	ch08WriteFile(t, filepath.Join(env.dir, "notes.txt"), "inside\n")
	ch08WriteFile(t, filepath.Join(env.dir, "docs", "guide.md"), "guide\n")
	before := env.outsideSnapshot(t)

	// A command (or anyone) moves the workspace's directory away and puts a link to outside at its
	// old path. This is the gap between a check and a use made wide and certain: a tool that
	// checks a path and then opens it by name (w.dir + name) lands outside, every time; a tool
	// that works through the os.Root keeps working in the directory that was opened.
	moved := env.dir + "-moved"
	if err := os.Rename(env.dir, moved); err != nil {
		t.Fatal(err)
	}
	ch08Symlink(t, "outside", env.dir)

	f, err := env.ws.Open("notes.txt")
	var got []byte
	if err == nil {
		got = make([]byte, 64)
		n, _ := f.Read(got)
		got = got[:n]
		f.Close()
	}
	if string(got) != "inside\n" {
		t.Errorf("after the workspace's directory moved and a link to outside took its old path, Open(notes.txt) did not read the workspace's notes.txt; the tools work in the directory that was opened, not at its path\n got %q, %v", got, err)
	}
	if err := ch08OpenAndRead("secret.txt")(env.ws); err == nil {
		t.Errorf("after the workspace's directory moved and a link to outside took its old path, Open(secret.txt) found outside's secret.txt; the tools work in the directory that was opened")
	}
	if f, err := env.ws.OpenFile("new.txt", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err != nil {
		t.Errorf("after the workspace's directory moved, OpenFile(new.txt, O_CREATE) failed; want a new file in the directory that was opened\n%v", err)
	} else {
		f.Close()
	}
	if _, err := env.ws.Stat("secret.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after the workspace's directory moved and a link to outside took its old path, Stat(secret.txt) did not fail with fs.ErrNotExist: the workspace has no secret.txt\n%v", err)
	}
	if _, err := env.ws.Lstat("docs/guide.md"); err != nil {
		t.Errorf("after the workspace's directory moved, Lstat(docs/guide.md) failed; want the file of the directory that was opened\n%v", err)
	}
	if err := env.ws.MkdirAll("made", 0o755); err != nil {
		t.Errorf("after the workspace's directory moved, MkdirAll(made) failed; want a new directory in the directory that was opened\n%v", err)
	}
	if err := env.ws.Rename("docs/guide.md", "made/guide.md"); err != nil {
		t.Errorf("after the workspace's directory moved, Rename(docs/guide.md, made/guide.md) failed; want it done in the directory that was opened\n%v", err)
	}
	if err := env.ws.Remove("docs"); err != nil {
		t.Errorf("after the workspace's directory moved, Remove(docs) failed; want it done in the directory that was opened\n%v", err)
	}
	want := map[string]string{
		".":             "dir",
		"made":          "dir",
		"made/guide.md": `file -rw-r--r-- "guide\n"`,
		"new.txt":       `file -rw-r--r-- ""`,
		"notes.txt":     `file -rw-r--r-- "inside\n"`,
	}
	if diff := cmp.Diff(want, ch08Snapshot(t, moved)); diff != "" {
		t.Errorf("the directory that was opened, after the calls (-want +got):\n%s", diff)
	}
	ch08Unchanged(t, "the calls after the move", env, before)
}

// --- Lab 8.2 · read ------------------------------------------------------------------------------

// ch08Lines returns "line 1\n" … "line n\n".
func ch08Lines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// ch08Window writes a ReadResult on one line, so that a failure's first line shows it all.
func ch08Window(r ReadResult) string {
	return fmt.Sprintf("lines %d-%d %q, truncated %v, next offset %d, note %q", r.FirstLine, r.LastLine, r.Text, r.Truncated, r.NextOffset, r.Note)
}

func TestLab8_2_读取_Window(t *testing.T) {
	defer guardLab(t)
	env := ch08Setup(t, WorkspaceOptions{ReadMaxLines: 4})
	ch08WriteFile(t, filepath.Join(env.dir, "ten.txt"), ch08Lines(10))
	ch08WriteFile(t, filepath.Join(env.dir, "open-end.txt"), "first\nsecond")
	ch08WriteFile(t, filepath.Join(env.dir, "empty.txt"), "")
	ch08WriteFile(t, filepath.Join(env.dir, "spaces.txt"), "keep  \n\tindent\t\nend \n")
	ch08WriteFile(t, filepath.Join(env.dir, "crlf.txt"), "one\r\ntwo\r\nthree\r\n")
	cases := []struct {
		name          string
		file          string
		offset, limit int
		want          ReadResult
	}{
		{"the default limit (4 here)", "ten.txt", 0, 0, ReadResult{Text: "line 1\nline 2\nline 3\nline 4\n", FirstLine: 1, LastLine: 4, Truncated: true, NextOffset: 5,
			Note: "[lines 1-4 of ten.txt shown; the file goes on: read on with offset=5]"}},
		{"offset 3, limit 2", "ten.txt", 3, 2, ReadResult{Text: "line 3\nline 4\n", FirstLine: 3, LastLine: 4, Truncated: true, NextOffset: 5,
			Note: "[lines 3-4 of ten.txt shown; the file goes on: read on with offset=5]"}},
		{"offset 1 is the first line", "ten.txt", 1, 1, ReadResult{Text: "line 1\n", FirstLine: 1, LastLine: 1, Truncated: true, NextOffset: 2,
			Note: "[lines 1-1 of ten.txt shown; the file goes on: read on with offset=2]"}},
		{"a window past the end stops at the end", "ten.txt", 9, 5, ReadResult{Text: "line 9\nline 10\n", FirstLine: 9, LastLine: 10}},
		{"a window that ends with the file is not truncated", "ten.txt", 8, 3, ReadResult{Text: "line 8\nline 9\nline 10\n", FirstLine: 8, LastLine: 10}},
		{"the last line alone", "ten.txt", 10, 1, ReadResult{Text: "line 10\n", FirstLine: 10, LastLine: 10}},
		{"a last line without a line break", "open-end.txt", 2, 0, ReadResult{Text: "second", FirstLine: 2, LastLine: 2}},
		{"an empty file", "empty.txt", 0, 0, ReadResult{Text: "", FirstLine: 1, LastLine: 0}},
		{"white space at the ends of lines is kept", "spaces.txt", 0, 0, ReadResult{Text: "keep  \n\tindent\t\nend \n", FirstLine: 1, LastLine: 3}},
		{"CRLF line breaks are kept", "crlf.txt", 2, 1, ReadResult{Text: "two\r\n", FirstLine: 2, LastLine: 2, Truncated: true, NextOffset: 3,
			Note: "[lines 2-2 of crlf.txt shown; the file goes on: read on with offset=3]"}},
	}
	for _, c := range cases {
		got, err := env.ws.Read(c.file, c.offset, c.limit)
		if err != nil {
			t.Errorf("%s: Read(%s, %d, %d): %v", c.name, c.file, c.offset, c.limit, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: Read(%s, %d, %d) = %s; want %s", c.name, c.file, c.offset, c.limit, ch08Window(got), ch08Window(c.want))
		}
	}
	if _, err := env.ws.Read("ten.txt", 11, 0); err == nil || !strings.Contains(err.Error(), "offset 11 is past the end of ten.txt, which has 10 lines") {
		t.Errorf("Read(ten.txt, offset 11) error = %v; want it to say the offset is past the end of a file of 10 lines", err)
	}
	if _, err := env.ws.Read("ten.txt", -1, 0); err == nil {
		t.Errorf("Read(ten.txt, offset -1): no error")
	}
}

func TestLab8_2_读取_Caps(t *testing.T) {
	defer guardLab(t)
	env := ch08Setup(t, WorkspaceOptions{ReadMaxBytes: 64})
	// Twenty lines of ten bytes each: six whole lines fit in 64 bytes.
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&b, "row %02d ..\n", i)
	}
	ch08WriteFile(t, filepath.Join(env.dir, "rows.txt"), b.String())
	got, err := env.ws.Read("rows.txt", 0, 0)
	if err != nil {
		t.Fatalf("Read(rows.txt): %v", err)
	}
	want := ReadResult{
		Text:      "row 01 ..\nrow 02 ..\nrow 03 ..\nrow 04 ..\nrow 05 ..\nrow 06 ..\n",
		FirstLine: 1, LastLine: 6, Truncated: true, NextOffset: 7,
		Note: "[output capped at 64 bytes after line 6; read on with offset=7]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Read(rows.txt) with a 64-byte cap = %s; want only the whole lines that fit and a note: %s", ch08Window(got), ch08Window(want))
	}
	got, err = env.ws.Read("rows.txt", 7, 0)
	if err != nil || !strings.HasPrefix(got.Text, "row 07 ..\n") || got.FirstLine != 7 {
		t.Errorf("Read(rows.txt, offset 7) = %+v, %v; want to go on at row 07", got, err)
	}

	// The cap counts every byte of the text, line breaks included, and a text of exactly the cap
	// is not over it.
	ch08WriteFile(t, filepath.Join(env.dir, "exact.txt"), strings.Repeat("seven..\n", 8)+"ninth\n") // 8 lines of 8 bytes
	ch08WriteFile(t, filepath.Join(env.dir, "breaks.txt"), strings.Repeat("twelve bytes\n", 5))     // 5 lines of 13 bytes
	caps := []struct {
		name, file string
		want       ReadResult
	}{
		{"lines that fill the cap exactly are kept", "exact.txt", ReadResult{Text: strings.Repeat("seven..\n", 8), FirstLine: 1, LastLine: 8, Truncated: true, NextOffset: 9,
			Note: "[output capped at 64 bytes after line 8; read on with offset=9]"}},
		{"the line breaks count towards the cap", "breaks.txt", ReadResult{Text: strings.Repeat("twelve bytes\n", 4), FirstLine: 1, LastLine: 4, Truncated: true, NextOffset: 5,
			Note: "[output capped at 64 bytes after line 4; read on with offset=5]"}},
	}
	for _, c := range caps {
		got, err := env.ws.Read(c.file, 0, 0)
		if diff := cmp.Diff(c.want, got); diff != "" || err != nil {
			t.Errorf("%s: Read(%s) with a 64-byte cap = %s, %v; want %s (never over the cap, every byte counted; reaching it is fine)", c.name, c.file, ch08Window(got), err, ch08Window(c.want))
		}
	}

	// A first line longer than the cap is cut inside it, never inside a character: 64 bytes end
	// in the middle of the 22nd "中" (3 bytes each), so the text is 21 of them, 63 bytes.
	long := strings.Repeat("中", 30) + "\nnext\n" // 90 bytes, then a second line
	ch08WriteFile(t, filepath.Join(env.dir, "long.txt"), long)
	got, err = env.ws.Read("long.txt", 0, 0)
	if err != nil {
		t.Fatalf("Read(long.txt): %v", err)
	}
	want = ReadResult{Text: strings.Repeat("中", 21), FirstLine: 1, LastLine: 1, Truncated: true, NextOffset: 2,
		Note: "[line 1 is longer than 64 bytes and was cut; read on with offset=2]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Read(long.txt) = %s; a first line over the cap is cut at the cap, then back to a character boundary: %s", ch08Window(got), ch08Window(want))
	}

	// A line longer than the reader's buffer before the window is skipped, not kept.
	ch08WriteFile(t, filepath.Join(env.dir, "huge-first.txt"), strings.Repeat("z", 300_000)+"\nsmall\n")
	got, err = env.ws.Read("huge-first.txt", 2, 0)
	if err != nil || got.Text != "small\n" || got.FirstLine != 2 || got.LastLine != 2 || got.Truncated {
		t.Errorf("Read(huge-first.txt, offset 2) = %+v, %v; want just \"small\\n\"", got, err)
	}
}

func TestLab8_2_读取_Refusals(t *testing.T) {
	defer guardLab(t)
	env := ch08Setup(t, WorkspaceOptions{})
	ch08WriteFile(t, filepath.Join(env.dir, "logo.png"), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	ch08WriteFile(t, filepath.Join(env.dir, "docs", "a.md"), "a\n")
	ch08WriteFile(t, filepath.Join(env.dir, "late-nul.txt"), strings.Repeat("a", 1000)+"\x00\n") // a NUL at byte 1000 < binarySniffLen
	ch08Symlink(t, "../outside/secret.txt", filepath.Join(env.dir, "file-link"))
	refusals := []struct{ name, want string }{
		{"logo.png", "logo.png looks like a binary file (it has NUL bytes); read shows text files only"},
		{"late-nul.txt", "late-nul.txt looks like a binary file (it has NUL bytes); read shows text files only"},
		{"docs", "docs is a directory, not a file"},
		{"missing.md", "no such file"},
		{"file-link", "escapes"},
		{"../outside/secret.txt", "climbs above the workspace"},
	}
	for _, r := range refusals {
		got, err := env.ws.Read(r.name, 0, 0)
		if err == nil {
			t.Errorf("Read(%s) = %.60q, nil; want an error that says %q", r.name, got.Text, r.want)
			continue
		}
		if !strings.Contains(err.Error(), r.want) {
			t.Errorf("Read(%s) error = %q; want it to say %q", r.name, err, r.want)
		}
		if strings.Contains(err.Error(), "top secret") || strings.Contains(got.Text, "top secret") {
			t.Errorf("Read(%s) shows the secret outside the workspace", r.name)
		}
	}

	// A named pipe is refused at once. A plain open of a pipe waits for a writer, which may never
	// come: the test plays that writer only after ch08Guard, to end a Read that waits.
	pipe := filepath.Join(env.dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	var got ReadResult
	returned, err := ch08NoWait(t, pipe, func() (err error) {
		got, err = env.ws.Read("pipe", 0, 0)
		return err
	})
	switch {
	case !returned:
		t.Errorf("Read(pipe), a named pipe: no answer within %v, until the test opened the pipe for writing; open without blocking (O_NONBLOCK), then refuse what is not a regular file", ch08Guard)
	case err == nil:
		t.Errorf("Read(pipe), a named pipe: %s, no error; want the error \"pipe is a named pipe, not a regular file\"", ch08Window(got))
	case err.Error() != "pipe is a named pipe, not a regular file":
		t.Errorf("Read(pipe), a named pipe: error %q; want \"pipe is a named pipe, not a regular file\"", err)
	}

	// A refused file is closed: a hundred refused reads of a directory leave no descriptor open.
	// Linux lists a process's open descriptors in /proc/self/fd.
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		for range 100 {
			env.ws.Read("docs", 0, 0)
		}
		after, _ := os.ReadDir("/proc/self/fd")
		if len(after) > len(fds)+10 {
			// No counts in the message: they differ from machine to machine.
			t.Errorf("100 refused reads of the directory docs left more than 10 descriptors open; openRegular must close the file it refuses")
		}
	}

	// A device is not a regular file either: /dev/null, read through a workspace opened on /dev.
	if dev, err := OpenWorkspace("/dev", WorkspaceOptions{}); err == nil {
		defer dev.Close()
		const want = "null is a device, not a regular file"
		if got, err := dev.Read("null", 0, 0); err == nil || err.Error() != want {
			t.Errorf("Read(null) in a workspace on /dev = %s, %v; want the error %q: whatever is not a regular file is refused", ch08Window(got), err, want)
		}
	}
}

// ch08NoWait runs f, which may open the named pipe fifo, and returns true and f's error. When f
// has not returned within ch08Guard, it opens the pipe for writing (an open that waits for a
// writer then goes on, and reads the pipe's end), waits for f once more and returns false: f
// waited for the pipe. A panic in f (a stub) fails the test with the lab's message.
func ch08NoWait(t *testing.T, fifo string, f func() error) (bool, error) {
	t.Helper()
	done := ch08Start(func() (struct{}, error) { return struct{}{}, f() })
	select {
	case o := <-done:
		if o.p != nil {
			failOnPanic(t, o.p)
		}
		return true, o.err
	case <-time.After(ch08Guard):
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0) // succeeds when a reader waits
	if err != nil {
		w, err = os.OpenFile(fifo, os.O_RDWR, 0)
	}
	if err == nil {
		w.Close()
	}
	select {
	case o := <-done:
		return false, o.err
	case <-time.After(ch08Guard):
		t.Fatalf("f still waits after the test opened %s for writing", filepath.Base(fifo))
		return false, nil
	}
}

// ch08Endless is a file without end for readLines: "line 1\n", "line 2\n", and so on. It counts
// the bytes read from it and fails every read after the first MiB, so that a reader that wants it
// all stops.
type ch08Endless struct {
	read    int
	line    int
	pending []byte
}

func (e *ch08Endless) Read(p []byte) (int, error) {
	if e.read >= 1<<20 {
		return 0, errors.New("the test's endless file gives no more than 1 MiB")
	}
	n := 0
	for n < len(p) {
		if len(e.pending) == 0 {
			e.line++
			e.pending = fmt.Appendf(nil, "line %d\n", e.line)
		}
		c := copy(p[n:], e.pending)
		e.pending = e.pending[c:]
		n += c
	}
	e.read += n
	return n, nil
}

func TestLab8_2_读取_Big(t *testing.T) {
	defer guardLab(t)
	// The lines near the start of a file without end: readLines stops soon after the window.
	endless := &ch08Endless{}
	got, err := readLines(endless, "endless.txt", 3, 2, DefaultReadMaxBytes)
	const windowEnd = len("line 1\nline 2\nline 3\nline 4\n")
	if endless.read > windowEnd+64<<10 {
		t.Errorf("to show lines 3-4 of a file without end, readLines read more than 64 KiB past the window's end; it must stop reading once the window is full\n(it read %d bytes)", endless.read)
	}
	want := ReadResult{Text: "line 3\nline 4\n", FirstLine: 3, LastLine: 4, Truncated: true, NextOffset: 5,
		Note: "[lines 3-4 of endless.txt shown; the file goes on: read on with offset=5]"}
	if diff := cmp.Diff(want, got); diff != "" || err != nil {
		t.Errorf("readLines(endless.txt, 3, 2) = %s, %v; want %s", ch08Window(got), err, ch08Window(want))
	}

	// Lines before the window are skipped, not kept: reading line 80,001 after 8,000,000 bytes of
	// lines allocates little.
	var skipped strings.Builder
	for range 80_000 {
		skipped.WriteString(strings.Repeat("x", 99) + "\n")
	}
	skipped.WriteString("window\n")
	content := skipped.String()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err = readLines(strings.NewReader(content), "skip.txt", 80_001, 1, DefaultReadMaxBytes)
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 2<<20 {
		t.Errorf("to show line 80,001 after 8,000,000 bytes of lines, readLines allocated more than 2 MiB; lines before the window are skipped, not kept\n(it allocated %s)", ch08Size(grew))
	}
	want = ReadResult{Text: "window\n", FirstLine: 80_001, LastLine: 80_001}
	if diff := cmp.Diff(want, got); diff != "" || err != nil {
		t.Errorf("readLines(skip.txt, 80001, 1) = %s, %v; want %s", ch08Window(got), err, ch08Window(want))
	}

	// A reader that gives one byte at a time, and a first line that ends at byte binarySniffLen
	// (8000): the look for NUL bytes buffered exactly that line, so when the window is full
	// nothing is buffered, and only asking the reader (Peek(1)) tells that the file goes on.
	firstLine := strings.Repeat("a", 7999) + "\n"
	got, err = readLines(iotest.OneByteReader(strings.NewReader(firstLine+"b\n")), "slow.txt", 1, 1, DefaultReadMaxBytes)
	want = ReadResult{Text: firstLine, FirstLine: 1, LastLine: 1, Truncated: true, NextOffset: 2,
		Note: "[lines 1-1 of slow.txt shown; the file goes on: read on with offset=2]"}
	if diff := cmp.Diff(want, got); diff != "" || err != nil {
		got.Text, want.Text = fmt.Sprintf("(%d bytes)", len(got.Text)), "(8000 bytes)"
		t.Errorf("readLines(slow.txt, 1, 1) from a reader that gives one byte at a time = %s, %v; want %s (after the window, Peek(1) whether anything follows, even when nothing is buffered)", ch08Window(got), err, ch08Window(want))
	}

	// The first lines of a 64 MiB file (2000 lines, then zeros, stored sparse): Read must not load
	// the file.
	env := ch08Setup(t, WorkspaceOptions{})
	huge := filepath.Join(env.dir, "huge.txt")
	ch08WriteFile(t, huge, ch08Lines(2000))
	if err := os.Truncate(huge, 64<<20); err != nil {
		t.Fatal(err)
	}
	var stats0, stats1 runtime.MemStats
	runtime.ReadMemStats(&stats0)
	got, err = env.ws.Read("huge.txt", 1, 3)
	runtime.ReadMemStats(&stats1)
	if grew := stats1.TotalAlloc - stats0.TotalAlloc; grew > 8<<20 {
		t.Errorf("reading the first 3 lines of a 64 MiB file allocated more than 8 MiB; Read must not load the file, only read up to the window\n(it allocated %s)", ch08Size(grew))
	}
	want = ReadResult{Text: "line 1\nline 2\nline 3\n", FirstLine: 1, LastLine: 3, Truncated: true, NextOffset: 4,
		Note: "[lines 1-3 of huge.txt shown; the file goes on: read on with offset=4]"}
	if diff := cmp.Diff(want, got); diff != "" || err != nil {
		t.Errorf("Read(huge.txt, 1, 3) = %s, %v; want %s", ch08Window(got), err, ch08Window(want))
	}
}

// --- Lab 8.3 · write and edit --------------------------------------------------------------------

func TestLab8_3_写入编辑_Write(t *testing.T) {
	defer guardLab(t)
	ch08Umask(t, 0o022)
	env := ch08Setup(t, WorkspaceOptions{})
	before := env.outsideSnapshot(t)

	// New directories are made as needed; a new file is -rw-r--r-- (0644 less the umask 022).
	if err := env.ws.WriteFile("notes/2026/todo.md", []byte("- buy milk\n")); err != nil {
		t.Fatalf("WriteFile(notes/2026/todo.md): %v; missing directories are created", err)
	}
	todo := filepath.Join(env.dir, "notes", "2026", "todo.md")
	if data, err := os.ReadFile(todo); err != nil || string(data) != "- buy milk\n" {
		t.Errorf("notes/2026/todo.md = %q, %v; want the written text", data, err)
	}
	if info, err := os.Stat(todo); err == nil && info.Mode().Perm() != 0o644 {
		t.Errorf("the new file notes/2026/todo.md has mode %v; want -rw-r--r--, 0644 less the umask 022, as os.WriteFile would give it", info.Mode().Perm())
	}
	for _, name := range []string{"notes", "notes/2026"} {
		if info, err := os.Stat(filepath.Join(env.dir, name)); err == nil && info.Mode().Perm() != 0o755 {
			t.Errorf("the new directory %s has mode %v; want drwxr-xr-x, 0755 less the umask 022", name, info.Mode())
		}
	}

	// Under other umasks too, a new file is 0644 less the umask and a new directory 0755 less the
	// umask. The umask belongs to the whole process: a test that sets it must not run in parallel
	// with tests that create files (none of this file's tests is parallel).
	umasks := []struct {
		mask              int
		dir, file         string
		dirMode, fileMode fs.FileMode
	}{
		{0o077, "private", "private/new.txt", 0o700, 0o600},
		{0o002, "group", "group/new.txt", 0o755, 0o644},
	}
	for _, u := range umasks {
		syscall.Umask(u.mask)
		err := env.ws.WriteFile(u.file, []byte("x\n"))
		syscall.Umask(0o022)
		if err != nil {
			t.Errorf("WriteFile(%s) with the umask %03o: %v", u.file, u.mask, err)
			continue
		}
		for _, c := range []struct {
			name string
			want fs.FileMode
		}{{u.dir, u.dirMode | fs.ModeDir}, {u.file, u.fileMode}} {
			if info, err := os.Stat(filepath.Join(env.dir, c.name)); err != nil || info.Mode() != c.want {
				var got fs.FileMode
				if info != nil {
					got = info.Mode()
				}
				t.Errorf("with the umask %03o, the new %s is %v, %v; want %v: a new file is 0644 less the umask, a new directory 0755 less the umask (set no mode on a new file after creating it)", u.mask, c.name, got, err, c.want)
			}
		}
	}

	// Replacing a file puts a new file in its place (written beside it, then renamed), keeps its
	// mode, and leaves nothing else behind.
	script := filepath.Join(env.dir, "bin", "run.sh")
	ch08WriteFile(t, script, "#!/bin/sh\necho old\n")
	if err := os.Chmod(script, 0o750); err != nil {
		t.Fatal(err)
	}
	old, err := os.Stat(script)
	if err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(script) // a reader that opened the old file keeps reading the old file
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	// The temporary file lives in bin, beside its target: the workspace's own directory, which
	// gains or loses an entry only when a name in it is created, removed or renamed, keeps the
	// modification time the test gives it.
	past := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := os.Chtimes(env.dir, past, past); err != nil {
		t.Fatal(err)
	}
	if err := env.ws.WriteFile("bin/run.sh", []byte("#!/bin/sh\necho new\n")); err != nil {
		t.Fatalf("WriteFile(bin/run.sh): %v", err)
	}
	if info, err := os.Stat(env.dir); err != nil || !info.ModTime().Equal(past) {
		t.Errorf("writing bin/run.sh created or removed a name in the workspace's own directory; the temporary file goes in the target's directory, bin, so that the rename stays inside one directory (and one file system)")
	}
	now, err := os.Stat(script)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(old, now) {
		t.Errorf("bin/run.sh is the same file as before the write: it was rewritten in place, so a crash or a reader midway sees half a file; write a new file beside it and rename it over the old one")
	}
	if now.Mode().Perm() != 0o750 {
		t.Errorf("bin/run.sh mode = %v after the write, want -rwxr-x--- as before: a replaced file keeps its permission bits", now.Mode().Perm())
	}
	if data, _ := os.ReadFile(script); string(data) != "#!/bin/sh\necho new\n" {
		t.Errorf("bin/run.sh = %q after the write", data)
	}
	buf := make([]byte, 64)
	n, _ := held.Read(buf)
	if string(buf[:n]) != "#!/bin/sh\necho old\n" {
		t.Errorf("a reader that opened bin/run.sh before the write reads %q; want the old content, whole", buf[:n])
	}
	if names := labtest.DirNames(t, filepath.Join(env.dir, "bin")); !cmp.Equal(names, []string{"run.sh"}) {
		t.Errorf("bin holds %q after the write; want only run.sh (no temporary file left)", names)
	}

	// A kept mode is kept exactly, also the bits the umask 022 would clear from a new file.
	shared := filepath.Join(env.dir, "share", "shared.txt")
	ch08WriteFile(t, shared, "old\n")
	if err := os.Chmod(shared, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := env.ws.WriteFile("share/shared.txt", []byte("new\n")); err != nil {
		t.Fatalf("WriteFile(share/shared.txt): %v", err)
	}
	if info, err := os.Stat(shared); err == nil && info.Mode().Perm() != 0o666 {
		t.Errorf("share/shared.txt mode = %v after the write, want -rw-rw-rw- as before: the umask 022 cleared bits of the temporary file, so set its mode after creating it (f.Chmod)", info.Mode().Perm())
	}

	// A failed write changes nothing and leaves nothing.
	if err := os.MkdirAll(filepath.Join(env.dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	// An error names the file as the model gave it, not as LocalPath cleaned it.
	for _, name := range []string{"adir", "./adir", "bin/../adir"} {
		want := name + " is a directory, not a file"
		if err := env.ws.WriteFile(name, []byte("x")); err == nil || err.Error() != want {
			t.Errorf("WriteFile(%s) where adir is a directory: error %v; want %q, the name as given", name, err, want)
		}
	}
	if names := labtest.DirNames(t, env.dir); !cmp.Equal(names, []string{"adir", "bin", "group", "notes", "private", "share"}) {
		t.Errorf("the workspace holds %q after the failed write; want adir, bin, group, notes, private, share", names)
	}
	ch08Symlink(t, "../outside", filepath.Join(env.dir, "link-out"))
	ch08Symlink(t, "../outside/secret.txt", filepath.Join(env.dir, "file-link"))
	for _, name := range []string{"../outside/secret.txt", "link-out/secret.txt", "link-out/new/file.txt", "file-link"} {
		if err := env.ws.WriteFile(name, []byte("pwned\n")); err == nil {
			t.Errorf("WriteFile(%s): no error; it leaves the workspace", name)
		}
	}
	ch08Unchanged(t, "writes", env, before)
}

func TestLab8_3_写入编辑_Names(t *testing.T) {
	defer guardLab(t)
	env := ch08Setup(t, WorkspaceOptions{})
	// A name may have up to 255 bytes; the temporary file's name must not grow with it.
	long := strings.Repeat("n", 255)
	if err := env.ws.WriteFile(long, []byte("long name\n")); err != nil {
		t.Errorf("WriteFile(a name of 255 bytes) failed; names up to 255 bytes are legal, so the temporary file's name must not grow with the target's\n%v", err)
	} else if _, err := env.ws.Edit(long, "long", "LONG"); err != nil {
		t.Errorf("Edit(a name of 255 bytes) failed; names up to 255 bytes are legal, so the temporary file's name must not grow with the target's\n%v", err)
	} else if data, err := os.ReadFile(filepath.Join(env.dir, long)); err != nil || string(data) != "LONG name\n" {
		t.Errorf("the file with a 255-byte name holds %q, %v after a write and an edit; want \"LONG name\\n\"", data, err)
	}
	if names := labtest.DirNames(t, env.dir); len(names) != 1 || names[0] != long {
		t.Errorf("the workspace holds %d entries after a 255-byte name was written and edited; want only that file (no temporary file left)", len(names))
	}

	// The workspace's directory was removed: the temporary file cannot be created. The error
	// names the file asked for, never the temporary file.
	gone := ch08Setup(t, WorkspaceOptions{})
	if err := os.Remove(gone.dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"notes.txt", "./notes.txt"} {
		want := "write " + name + ": no such file or directory"
		if err := gone.ws.WriteFile(name, []byte("x")); err == nil || err.Error() != want || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("WriteFile(%s) in a workspace whose directory was removed: the error is not %q wrapping fs.ErrNotExist; an error names the file asked for, as given, never the temporary file\n got: %v", name, want, err)
		}
	}

	// A step that fails after the temporary file was created: the write of 2 MiB, under a file
	// size limit of 1 MiB that the test sets for this process while WriteFile runs. The
	// temporary file is removed, the target never appears, and the error names the target.
	full := ch08Setup(t, WorkspaceOptions{})
	var err error
	if ch08FileSizeLimit(1<<20, func() { err = full.ws.WriteFile("big.txt", make([]byte, 2<<20)) }) {
		if want := "write big.txt: file too large"; err == nil || err.Error() != want {
			t.Errorf("WriteFile(big.txt) of 2 MiB with a file size limit of 1 MiB: error %v, want %q", err, want)
		}
		if names := labtest.DirNames(t, full.dir); len(names) != 0 {
			// Not the names: the temporary file's is random, and a message must be the same in every run.
			t.Errorf("after a WriteFile whose write failed, the workspace holds %d entries; want none: whatever step fails, remove the temporary file", len(names))
		}
	}
}

func TestLab8_3_写入编辑_Writers(t *testing.T) {
	// Several writers in one directory at once, each replacing its own file again and again: an
	// agent's parallel tool calls, or two agents in one repository. Each write's temporary file
	// is its own; a name two writes share makes one fail, or move the other's content into place.
	// (A name that is always the same also breaks every write in a directory where a crash left
	// that file behind.)
	env := ch08Setup(t, WorkspaceOptions{})
	const writers, rounds = 8, 25
	start := make(chan struct{})
	type failure struct {
		err      error
		panicked any
	}
	failures := make(chan failure, writers*rounds)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					failures <- failure{panicked: p}
				}
			}()
			<-start
			for r := range rounds {
				if err := env.ws.WriteFile(fmt.Sprintf("shared/w%d.txt", w), fmt.Appendf(nil, "writer %d, round %d\n", w, r)); err != nil {
					failures <- failure{err: err}
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(failures)
	for f := range failures {
		if f.panicked != nil {
			runLab(t, func() { panic(f.panicked) })
		}
		reason := f.err
		if pe, ok := f.err.(*fs.PathError); ok {
			reason = pe.Err // the same in every run, whichever file it was
		}
		t.Fatalf("%d writers each writing its own file in one directory, %d times: a write failed with %q; each write needs a temporary file of its own (writeTempName)", writers, rounds, reason)
	}
	var got []string
	for w := range writers {
		data, err := os.ReadFile(filepath.Join(env.dir, "shared", fmt.Sprintf("w%d.txt", w)))
		got = append(got, fmt.Sprintf("%q %v", data, err))
	}
	var want []string
	for w := range writers {
		want = append(want, fmt.Sprintf("%q <nil>", fmt.Sprintf("writer %d, round %d\n", w, rounds-1)))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the files after %d writers each wrote its own %d times (-want +got):\n%s", writers, rounds, diff)
	}
	if names := labtest.DirNames(t, filepath.Join(env.dir, "shared")); len(names) != writers {
		t.Errorf("the directory holds %d entries after the writes, want the %d files (no temporary file left)", len(names), writers)
	}
}

// ch08FileSizeLimit runs f with the process's file size limit (RLIMIT_FSIZE) set to limit
// bytes, so that a write beyond it fails with EFBIG, and reports whether it could. SIGXFSZ,
// which such a write also raises, is ignored meanwhile.
func ch08FileSizeLimit(limit uint64, f func()) bool {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil || old.Cur < limit {
		return false
	}
	signal.Ignore(syscall.SIGXFSZ)
	defer signal.Reset(syscall.SIGXFSZ)
	lower := old
	lower.Cur = limit
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lower); err != nil {
		return false
	}
	defer syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	f()
	return true
}

func TestLab8_3_写入编辑_Special(t *testing.T) {
	defer guardLab(t)
	env := ch08Setup(t, WorkspaceOptions{})
	guide := filepath.Join(env.dir, "docs", "guide.md")
	ch08WriteFile(t, guide, "inside\n")
	ch08Symlink(t, "docs/guide.md", filepath.Join(env.dir, "guide-link"))
	ch08Symlink(t, "docs", filepath.Join(env.dir, "docs-link"))
	const linkErr = "guide-link is a symbolic link to docs/guide.md; write and edit do not follow links: change the file it points to instead"
	linkKept := func(what string) {
		t.Helper()
		target, err := os.Readlink(filepath.Join(env.dir, "guide-link"))
		data, _ := os.ReadFile(guide)
		if err != nil || target != "docs/guide.md" || string(data) != "inside\n" {
			t.Errorf("after %s, guide-link → %q (%v) and docs/guide.md holds %q; want the link and its target as they were", what, target, err, data)
		}
	}

	// The last name is a link (inside the workspace): refused, not replaced, not followed.
	if err := env.ws.WriteFile("guide-link", []byte("new\n")); err == nil || err.Error() != linkErr {
		info, _ := os.Lstat(filepath.Join(env.dir, "guide-link"))
		t.Errorf("WriteFile(guide-link), a link to docs/guide.md: error %v, and guide-link is now %v; want the error %q, the link untouched", err, ch08Kind(info), linkErr)
	}
	linkKept("WriteFile(guide-link)")
	if _, err := env.ws.Edit("guide-link", "inside", "changed"); err == nil || err.Error() != linkErr {
		t.Errorf("Edit(guide-link), a link to docs/guide.md: error %v; want %q", err, linkErr)
	}
	linkKept("Edit(guide-link)")

	// A link before the last name is followed, as long as it stays inside.
	if err := env.ws.WriteFile("docs-link/guide.md", []byte("via a directory link\n")); err != nil {
		t.Errorf("WriteFile(docs-link/guide.md), docs-link a link to docs: %v; a link before the last name is followed", err)
	} else if data, _ := os.ReadFile(guide); string(data) != "via a directory link\n" {
		t.Errorf("after WriteFile(docs-link/guide.md), docs/guide.md holds %q", data)
	}

	// A named pipe is neither replaced nor waited on.
	pipe := filepath.Join(env.dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Fatal(err)
	}
	const pipeErr = "pipe is a named pipe, not a regular file"
	if err := env.ws.WriteFile("pipe", []byte("x")); err == nil || err.Error() != pipeErr {
		info, _ := os.Lstat(pipe)
		t.Errorf("WriteFile(pipe), a named pipe: error %v, and pipe is now %v; want the error %q, the pipe untouched", err, ch08Kind(info), pipeErr)
	}
	returned, err := ch08NoWait(t, pipe, func() error {
		_, err := env.ws.Edit("pipe", "a", "b")
		return err
	})
	switch {
	case !returned:
		t.Errorf("Edit(pipe), a named pipe: no answer within %v, until the test opened the pipe for writing; read the file with readText, which opens without blocking", ch08Guard)
	case err == nil || err.Error() != pipeErr:
		t.Errorf("Edit(pipe), a named pipe: error %v; want %q", err, pipeErr)
	}
}

// ch08Kind names the type of a file, for messages.
func ch08Kind(info fs.FileInfo) string {
	switch {
	case info == nil:
		return "gone"
	case info.Mode()&fs.ModeSymlink != 0:
		return "a link"
	case info.Mode()&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case info.Mode().IsRegular():
		return "a regular file"
	}
	return info.Mode().Type().String()
}

func TestLab8_3_写入编辑_Exact(t *testing.T) {
	defer guardLab(t)
	env := ch08Setup(t, WorkspaceOptions{})
	cases := []struct {
		name, content, old, new, want string
	}{
		{"white space at the ends of lines and texts", "keep  \n\tindent\t\n", "\tindent\t\n", "\tindent\t\nadded  \n", "keep  \n\tindent\t\nadded  \n"},
		{"CRLF line breaks", "one\r\nport: 1\r\nthree\r\n", "port: 1", "port: 2", "one\r\nport: 2\r\nthree\r\n"},
	}
	for _, c := range cases {
		file := filepath.Join(env.dir, "f.txt")
		ch08WriteFile(t, file, c.content)
		if _, err := env.ws.Edit("f.txt", c.old, c.new); err != nil {
			t.Errorf("%s: Edit(%q → %q) in %q: %v", c.name, c.old, c.new, c.content, err)
			continue
		}
		if data, _ := os.ReadFile(file); string(data) != c.want {
			t.Errorf("%s: Edit(%q → %q) in %q gives %q; want %q: every byte is kept as it is, none trimmed or normalised", c.name, c.old, c.new, c.content, data, c.want)
		}
	}

	// An edit replaces the file: another hard link to the old file keeps the old content.
	config := filepath.Join(env.dir, "config.yaml")
	ch08WriteFile(t, config, "port: 8080\n")
	backup := filepath.Join(env.dir, "config.bak")
	if err := os.Link(config, backup); err != nil {
		t.Fatal(err)
	}
	if _, err := env.ws.Edit("config.yaml", "8080", "9090"); err != nil {
		t.Fatalf("Edit(config.yaml): %v", err)
	}
	data, _ := os.ReadFile(config)
	kept, _ := os.ReadFile(backup)
	if string(kept) != "port: 8080\n" {
		t.Errorf("after Edit(config.yaml), config.bak, a hard link to the old file, holds %q; want the old content: the edit rewrote the file in place, instead of writing a new file and renaming it over", kept)
	}
	if string(data) != "port: 9090\n" {
		t.Errorf("after Edit(config.yaml), it holds %q; want \"port: 9090\\n\"", data)
	}
}

func TestLab8_3_写入编辑_Edit(t *testing.T) {
	defer guardLab(t)
	env := ch08Setup(t, WorkspaceOptions{})
	const config = "name: tiny\nport: 8080\nhost: local\nport: 8080\n"
	file := filepath.Join(env.dir, "config.yaml")
	ch08WriteFile(t, file, config)

	refusals := []struct{ old, new, want string }{
		{"port: 9090", "port: 1", "old_text was not found in config.yaml"},
		{"port: 8080", "port: 9090", "old_text matches 2 places in config.yaml"},
		{"", "x", "old_text is empty"},
		{"name: tiny", "name: tiny", "nothing to change"},
	}
	stat0, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refusals {
		res, err := env.ws.Edit("config.yaml", r.old, r.new)
		if err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("Edit(config.yaml, %q → %q) = diff %q, error %v; want an error that says %q", r.old, r.new, res.Diff, err, r.want)
		}
		data, _ := os.ReadFile(file)
		stat, _ := os.Stat(file)
		if string(data) != config || !os.SameFile(stat0, stat) {
			t.Errorf("Edit(config.yaml, %q → %q) changed the file; a refused edit leaves it untouched", r.old, r.new)
		}
	}

	// The two refusals of the texts come before the file is read: a missing file gets them too.
	for _, r := range refusals[2:] {
		if _, err := env.ws.Edit("missing.txt", r.old, r.new); err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("Edit(missing.txt, %q → %q): error %v; want an error that says %q: the texts are refused before the file is read", r.old, r.new, err, r.want)
		}
	}

	// Overlapping matches count: "aba" is at two places of "ababa".
	ch08WriteFile(t, filepath.Join(env.dir, "pattern.txt"), "ababa\n")
	if _, err := env.ws.Edit("pattern.txt", "aba", "X"); err == nil || !strings.Contains(err.Error(), "old_text matches 2 places") {
		t.Errorf("Edit(pattern.txt, aba) in \"ababa\": error %v; want \"old_text matches 2 places\" (the matches overlap)", err)
	}

	// More context makes the match unique.
	res, err := env.ws.Edit("config.yaml", "host: local\nport: 8080\n", "host: local\nport: 9090\n")
	if err != nil {
		t.Fatalf("Edit(config.yaml) with a unique match: %v", err)
	}
	if data, _ := os.ReadFile(file); string(data) != "name: tiny\nport: 8080\nhost: local\nport: 9090\n" {
		t.Errorf("config.yaml after the edit = %q", data)
	}
	wantDiff := "--- a/config.yaml\n+++ b/config.yaml\n@@ -1,4 +1,4 @@\n name: tiny\n port: 8080\n host: local\n-port: 8080\n+port: 9090\n"
	if res.Diff != wantDiff || res.FirstChangedLine != 4 {
		t.Errorf("Edit(config.yaml) = line %d, diff:\n%s\nwant line 4, diff:\n%s", res.FirstChangedLine, res.Diff, wantDiff)
	}
	if names := labtest.DirNames(t, env.dir); !cmp.Equal(names, []string{"config.yaml", "pattern.txt"}) {
		t.Errorf("the workspace holds %q after the edit; want config.yaml and pattern.txt only", names)
	}
	ch08WriteFile(t, filepath.Join(env.dir, "blob.bin"), "abc\x00def")
	if _, err := env.ws.Edit("blob.bin", "abc", "xyz"); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Errorf("Edit(blob.bin): error %v; want a refusal of a binary file", err)
	}
}

func TestLab8_3_写入编辑_Diff(t *testing.T) {
	defer guardLab(t)
	env := ch08Setup(t, WorkspaceOptions{})
	cases := []struct {
		name, content, old, new, wantDiff string
		wantLine                          int
	}{
		{"a change on the first line has no context above", ch08Lines(8), "line 1\n", "line one\n",
			"--- a/f.txt\n+++ b/f.txt\n@@ -1,4 +1,4 @@\n-line 1\n+line one\n line 2\n line 3\n line 4\n", 1},
		{"three lines of context on each side", ch08Lines(12), "line 6\n", "line six\nline six and a half\n",
			"--- a/f.txt\n+++ b/f.txt\n@@ -3,7 +3,8 @@\n line 3\n line 4\n line 5\n-line 6\n+line six\n+line six and a half\n line 7\n line 8\n line 9\n", 6},
		{"a deleted line", ch08Lines(5), "line 3\n", "",
			"--- a/f.txt\n+++ b/f.txt\n@@ -1,5 +1,4 @@\n line 1\n line 2\n-line 3\n line 4\n line 5\n", 3},
		{"a last line without a line break", "a\nb\nc", "c", "C",
			"--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n b\n-c\n\\ No newline at end of file\n+C\n\\ No newline at end of file\n", 3},
		{"a change inside a line", "alpha beta gamma\n", "beta", "BETA",
			"--- a/f.txt\n+++ b/f.txt\n@@ -1,1 +1,1 @@\n-alpha beta gamma\n+alpha BETA gamma\n", 1},
	}
	for _, c := range cases {
		ch08WriteFile(t, filepath.Join(env.dir, "f.txt"), c.content)
		res, err := env.ws.Edit("f.txt", c.old, c.new)
		if err != nil {
			t.Errorf("%s: Edit: %v", c.name, err)
			continue
		}
		if res.Diff != c.wantDiff || res.FirstChangedLine != c.wantLine {
			t.Errorf("%s: line %d, diff:\n%s\nwant line %d, diff:\n%s", c.name, res.FirstChangedLine, res.Diff, c.wantLine, c.wantDiff)
		}
	}
}

// --- Lab 8.4 · bash ------------------------------------------------------------------------------

// ch08Outcome is how a call that ch08Start ran ended: its results, or what it panicked with (a
// stub panics with its lab's message).
type ch08Outcome[T any] struct {
	val T
	err error
	p   any
}

// ch08Start runs f in a goroutine and returns a channel that gets how it ended, once. The test
// waits on the channel with its own guard, so that a call that blocks fails the test instead of
// hanging it.
func ch08Start[T any](f func() (T, error)) <-chan ch08Outcome[T] {
	done := make(chan ch08Outcome[T], 1)
	go func() {
		var o ch08Outcome[T]
		defer func() {
			o.p = recover()
			done <- o
		}()
		o.val, o.err = f()
	}()
	return done
}

// ch08Guard is how long a command test waits for RunCommand before it calls the run stuck. A
// correct RunCommand returns within a second or two here; the guard turns a hang into a failure.
const ch08Guard = 10 * time.Second

// ch08LeakPatience is how long ch08NoLeaks waits for the goroutines a test started to end.
const ch08LeakPatience = 5 * time.Second

// ch08NoLeaks fails the test when goroutines other than those ignore keeps are still there
// after ch08LeakPatience. goleak.VerifyNone alone gives up after about 0.4 s: a goroutine of
// RunCommand that has delivered its result and is about to return may need longer to be
// scheduled on a loaded machine, and a leak that is real is still there after 5 s.
func ch08NoLeaks(t *testing.T, ignore goleak.Option) {
	t.Helper()
	deadline := time.Now().Add(ch08LeakPatience)
	for {
		err := goleak.Find(ignore)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Error(err)
			return
		}
	}
}

// ch08ShortGrace is the KillGrace of a workspace in a test where a correct RunCommand waits the
// whole grace (a group that ignores SIGTERM, a process that left the group). Where the grace only
// bounds how long a process takes to die after SIGTERM, the tests keep a second: a slow machine
// needs the room there, and a correct RunCommand does not wait it.
const ch08ShortGrace = 200 * time.Millisecond

// ch08Run runs RunCommand in a goroutine and fails the test when it does not return within
// ch08Guard. onProgress may be nil.
func ch08Run(t *testing.T, ctx context.Context, ws *Workspace, command string, timeout time.Duration, onProgress func(string)) CommandResult {
	t.Helper()
	done := ch08Start(func() (CommandResult, error) { return ws.RunCommand(ctx, command, timeout, onProgress) })
	select {
	case o := <-done:
		if o.p != nil {
			failOnPanic(t, o.p)
		}
		if o.err != nil {
			t.Fatalf("RunCommand(%q): %v", command, o.err)
		}
		return o.val
	case <-time.After(ch08Guard):
		t.Fatalf("RunCommand(%q) did not return within %v: a process of the command is still running and holds the tool", command, ch08Guard)
		return CommandResult{}
	}
}

// ch08Forever returns a command that runs until the test ends: cat of .forever, a named pipe in
// the workspace dir that the test holds open for writing and closes in its cleanup. Unlike
// sleep 1000 it cannot outlive the test, whatever the RunCommand under test does: when the test
// ends (or its process dies), every cat of the pipe reads the pipe's end and exits. A signal stops
// it as it would stop sleep. The command names the pipe relative to the workspace, so that
// messages that show the command are the same from run to run.
func ch08Forever(t *testing.T, dir string) string {
	t.Helper()
	fifo := filepath.Join(dir, ".forever")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // does not wait: r is a reader
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return "cat .forever"
}

// ch08Gate is a named pipe in a workspace at which a command waits (read -r x < gate) until the
// test opens it and writes "go". Tests open it from a progress callback, so a command gets past
// its gate only when its output was reported while it ran.
type ch08Gate struct {
	path   string
	opened atomic.Bool
	writer sync.WaitGroup
}

// newCh08Gate makes the gate in dir. When the test ends, a shell still waiting at it gets through
// and ends.
func newCh08Gate(t *testing.T, dir string) *ch08Gate {
	t.Helper()
	g := &ch08Gate{path: filepath.Join(dir, "gate")}
	if err := syscall.Mkfifo(g.path, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(g.path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return g
}

// Open opens the gate, the first time it is called, on a goroutine of its own: a writer's open
// waits until the command opens the pipe for reading.
func (g *ch08Gate) Open() {
	if !g.opened.CompareAndSwap(false, true) {
		return
	}
	g.writer.Add(1)
	go func() {
		defer g.writer.Done()
		if f, err := os.OpenFile(g.path, os.O_WRONLY, 0); err == nil {
			f.WriteString("go\n")
			f.Close()
		}
	}()
}

// Wait returns whether the gate was opened, once its writer is done. When the command that should
// read the pipe is gone (it was stopped, or reported its output only after it ended), it opens
// the pipe for reading, without waiting, so that the writer gets through.
func (g *ch08Gate) Wait() bool {
	if r, err := os.OpenFile(g.path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		defer r.Close()
	}
	g.writer.Wait()
	return g.opened.Load()
}

func TestLab8_4_命令_Basics(t *testing.T) {
	defer guardLab(t)
	defer ch08NoLeaks(t, goleak.IgnoreCurrent())
	env := ch08Setup(t, WorkspaceOptions{KillGrace: time.Second})
	ctx := context.Background()

	res := ch08Run(t, ctx, env.ws, "pwd; echo out; echo err >&2; exit 3", 0, nil)
	if pwd, _, _ := strings.Cut(res.Output, "\n"); pwd != env.dir {
		t.Fatalf("pwd printed another directory than the workspace: a command runs with the workspace as its working directory")
	}
	res.Output = strings.Replace(res.Output, env.dir, "<workspace>", 1)
	want := CommandResult{Output: "<workspace>\nout\nerr\n", TotalBytes: int64(len(env.dir) + 9), ExitCode: 3}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("pwd; echo out; echo err >&2; exit 3 (-want +got):\n%s", diff)
	}
	if !res.Failed() || !strings.HasSuffix(res.Text(), "out\nerr\n[command ended; exit code 3]") {
		t.Errorf("Failed() = %v, Text() = %q; want a failure that ends with the exit code", res.Failed(), res.Text())
	}
	res = ch08Run(t, ctx, env.ws, "echo bye; kill -KILL $$", 0, nil)
	if res.ExitCode != -1 || res.Signal != "SIGKILL" || res.Output != "bye\n" {
		t.Errorf("a shell killed by SIGKILL: %+v; want exit code -1 and signal SIGKILL", res)
	}
	if res = ch08Run(t, ctx, env.ws, "true", 0, nil); res.Failed() || res.Text() != "[command ended; exit code 0]" {
		t.Errorf("true: %+v, Text %q", res, res.Text())
	}
	if _, err := env.ws.RunCommand(ctx, "   ", 0, nil); err == nil {
		t.Errorf("RunCommand with a blank command: no error")
	}

	// A command runs with no input, even when the agent has one: for this call the test gives
	// its own process a standard input that holds a line, and cat must print nothing.
	stdin := os.Stdin
	typed, typing, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	typing.WriteString("typed into the agent's terminal\n")
	typing.Close()
	os.Stdin = typed
	res = func() CommandResult {
		defer func() { os.Stdin = stdin; typed.Close() }()
		return ch08Run(t, ctx, env.ws, "cat", 0, nil)
	}()
	if res.Output != "" || res.Failed() {
		t.Errorf("cat printed %q (failed %v); want nothing: a command runs with no input (see RunCommand's doc comment), never with the agent's standard input", res.Output, res.Failed())
	}

	// Output arrives as progress while the command runs: the command waits at a FIFO that the
	// test opens only once "one" was reported. Its timeout is -1s, which, like 0, means the
	// workspace's CommandTimeout (2 minutes here).
	gate := newCh08Gate(t, env.dir)
	guard, cancel := context.WithTimeout(ctx, ch08Guard/2) // well before ch08Run gives up
	defer cancel()
	var mu sync.Mutex
	var reports []string
	res = ch08Run(t, guard, env.ws, "echo one; read -r x < gate; echo two $x", -time.Second, func(text string) {
		mu.Lock()
		reports = append(reports, text)
		mu.Unlock()
		if strings.Contains(text, "one") {
			gate.Open()
		}
	})
	gate.Wait()
	if res.TimedOut {
		t.Fatalf("a command with timeout -1s timed out (output %q); a timeout of 0 or less means the workspace's CommandTimeout", res.Output)
	}
	if res.Cancelled {
		t.Fatalf("the command waited for a progress report of \"one\" that never came while it ran; report output as it arrives")
	}
	if res.Output != "one\ntwo go\n" || strings.Join(reports, "") != "one\ntwo go\n" {
		t.Errorf("output %q, progress %q; want both to be \"one\\ntwo go\\n\"", res.Output, reports)
	}
}

func TestLab8_4_命令_Stop(t *testing.T) {
	defer guardLab(t)
	defer ch08NoLeaks(t, goleak.IgnoreCurrent())
	env := ch08Setup(t, WorkspaceOptions{KillGrace: time.Second})
	ctx := context.Background()
	forever := ch08Forever(t, env.dir)

	// A command that never exits is stopped when its time runs out: SIGTERM ends it. The time may
	// run out before bash has printed anything on a busy machine, so the output is "started\n"
	// or nothing.
	res := ch08Run(t, ctx, env.ws, "echo started; "+forever+"; echo never", 200*time.Millisecond, nil)
	if !res.TimedOut || res.Signal != "SIGTERM" || (res.Output != "started\n" && res.Output != "") || res.OutputLeftOpen {
		t.Errorf("a command that never ends, with a 200ms timeout: timed out %v, signal %q, output left open %v; want TimedOut, signal SIGTERM, the output closed\n%s", res.TimedOut, res.Signal, res.OutputLeftOpen, ch08Result(res))
	}
	if !strings.Contains(res.Text(), "[timed out") || !strings.Contains(res.Text(), "SIGTERM") {
		t.Errorf("Text() = %q; want it to say the command timed out and how it ended", res.Text())
	}

	// Cancelling the context stops the whole group, the sleeping child too.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res = ch08Run(t, cctx, env.ws, "echo started; "+forever+" & wait; echo never", time.Minute, func(text string) {
		if strings.Contains(text, "started") {
			cancel()
		}
	})
	if !res.Cancelled || res.TimedOut || res.Signal != "SIGTERM" || res.Output != "started\n" || res.OutputLeftOpen {
		t.Errorf("a cancelled command: cancelled %v, timed out %v, signal %q, output %q, output left open %v; want Cancelled, signal SIGTERM, output \"started\\n\", the output closed", res.Cancelled, res.TimedOut, res.Signal, res.Output, res.OutputLeftOpen)
	}
	if !strings.Contains(res.Text(), "[cancelled") {
		t.Errorf("Text() = %q; want it to say the command was cancelled", res.Text())
	}

	// A group that ignores SIGTERM gets SIGKILL after the grace. The run is cancelled once the
	// trap is in place, which the command reports by printing "started". A correct RunCommand
	// waits the whole grace here, so this workspace's grace is short (ch08ShortGrace).
	stubborn := ch08Setup(t, WorkspaceOptions{KillGrace: ch08ShortGrace})
	tctx, tcancel := context.WithCancel(ctx)
	defer tcancel()
	res = ch08Run(t, tctx, stubborn.ws, "trap '' TERM; echo started; "+ch08Forever(t, stubborn.dir), time.Minute, func(text string) {
		if strings.Contains(text, "started") {
			tcancel()
		}
	})
	if !res.Cancelled || res.Signal != "SIGKILL" || res.OutputLeftOpen {
		t.Errorf("a command that ignores SIGTERM: cancelled %v, signal %q, output left open %v; want Cancelled and signal SIGKILL (SIGTERM first, then SIGKILL)\n%s", res.Cancelled, res.Signal, res.OutputLeftOpen, ch08Result(res))
	}

	// timeout 0 means the workspace's CommandTimeout. The test cancels the run after
	// ch08Guard/2, so that a command that went on anyway ends.
	short := ch08Setup(t, WorkspaceOptions{KillGrace: time.Second, CommandTimeout: 200 * time.Millisecond})
	gctx, gcancel := context.WithCancel(ctx)
	defer gcancel()
	guard := time.AfterFunc(ch08Guard/2, gcancel)
	defer guard.Stop()
	res = ch08Run(t, gctx, short.ws, ch08Forever(t, short.dir), 0, nil)
	switch {
	case res.Cancelled:
		t.Errorf("a command that never ends, with timeout 0 on a workspace whose CommandTimeout is 200ms: still running after %v, when the test cancelled it; timeout 0 means the workspace's CommandTimeout", ch08Guard/2)
	case !res.TimedOut || res.Signal != "SIGTERM":
		t.Errorf("a command that never ends, with timeout 0 on a workspace whose CommandTimeout is 200ms: timed out %v, signal %q; want TimedOut and signal SIGTERM\n%s", res.TimedOut, res.Signal, ch08Result(res))
	}
}

func TestLab8_4_命令_Fork(t *testing.T) {
	defer guardLab(t)
	defer ch08NoLeaks(t, goleak.IgnoreCurrent())
	env := ch08Setup(t, WorkspaceOptions{KillGrace: time.Second})
	// The shell starts a child that would run until the test ends, and exits at once. The child is
	// stopped with its group: the tool returns, the output closed by the child's end. Each command
	// first checks that it runs in the workspace (which holds .forever): one that runs elsewhere
	// ends at once, the same way every time, and leaves no daemon.pid in another directory.
	forever := ch08Forever(t, env.dir)
	const inWorkspace = "[ -p .forever ] || exit 9; "
	res := ch08Run(t, context.Background(), env.ws, inWorkspace+forever+" & echo started", time.Minute, nil)
	if res.Failed() || res.Output != "started\n" || res.OutputLeftOpen {
		t.Errorf("a command that forks a child and exits: failed %v, output left open %v; want exit 0, output \"started\\n\", and the child stopped with the group (the output is on the next line: its order may vary)\n%s", res.Failed(), res.OutputLeftOpen, ch08Result(res))
	}
	// What the shell left in its group gets SIGTERM the moment the shell ends, before any grace:
	// this child traps SIGTERM, says so and exits. The workspace's grace is an hour, far longer
	// than ch08Run waits. The shell exits only once the child's trap is in place (armed exists).
	// The child waits with the wait builtin, which a trapped signal ends at once; bash's read of
	// the pipe would miss a SIGTERM that came just before the read began (seen on a busy machine:
	// the child read on, and the test waited its 10 s). The child's cat is started before armed
	// and writes nowhere: a SIGTERM that reached the group before cat existed (or between its fork
	// and its exec) ended the child but left cat holding the output, and the test waited its 10 s
	// (a fresh-clone make test, 2026-12-08). The cat it leaves then ends with the test's writer.
	patient := ch08Setup(t, WorkspaceOptions{KillGrace: time.Hour})
	ch08Forever(t, patient.dir) // the child's cat reads .forever until the group gets SIGTERM
	res = ch08Run(t, context.Background(), patient.ws, inWorkspace+"( trap 'echo got-term; exit 0' TERM; cat .forever >/dev/null & : > armed; wait ) & while [ ! -e armed ]; do sleep 0.01; done; echo started", time.Minute, nil)
	if res.Output != "started\ngot-term\n" || res.Failed() || res.OutputLeftOpen {
		t.Errorf("a command whose child traps SIGTERM: output %q, failed %v; want \"started\\ngot-term\\n\" and exit 0: when the shell ends, its group gets SIGTERM at once, and SIGKILL only after the grace if its output is still open\n%s", res.Output, res.Failed(), ch08Result(res))
	}
	// A process that leaves the group (setsid) cannot be stopped with it; the tool stops reading
	// its output after the grace instead of waiting for it. A correct RunCommand waits the whole
	// grace here (twice: after SIGTERM, after SIGKILL), so this workspace's grace is short.
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Logf("no setsid command here (%v): the part about a process that leaves its group is left out", err)
		return
	}
	env = ch08Setup(t, WorkspaceOptions{KillGrace: ch08ShortGrace})
	forever = ch08Forever(t, env.dir)
	res = ch08Run(t, context.Background(), env.ws, inWorkspace+"setsid sh -c \"echo \\$\\$ > daemon.pid; exec "+forever+"\" & echo started; while [ ! -s daemon.pid ]; do sleep 0.01; done", time.Minute, nil)
	if !res.OutputLeftOpen || res.Failed() || !strings.Contains(res.Text(), "kept its output open") {
		t.Errorf("a command whose child left the group: output left open %v, failed %v; want OutputLeftOpen and a note in the text\n%s", res.OutputLeftOpen, res.Failed(), ch08Result(res))
	}
}

func TestLab8_4_命令_HugeOutput(t *testing.T) {
	defer guardLab(t)
	defer ch08NoLeaks(t, goleak.IgnoreCurrent())
	env := ch08Setup(t, WorkspaceOptions{KillGrace: time.Second, OutputHead: 4096, OutputTail: 4096})
	const total = 100_000_000 + len("\nTAIL-MARK\n")
	var reports, reported int
	var stats0, stats1 runtime.MemStats
	runtime.ReadMemStats(&stats0)
	res := ch08Run(t, context.Background(), env.ws, `head -c 100000000 /dev/zero | tr '\0' x; printf '\nTAIL-MARK\n'`, time.Minute, func(text string) {
		reports++
		if !strings.HasPrefix(text, "[") {
			reported += len(text)
		}
	})
	runtime.ReadMemStats(&stats1)
	wantOut := strings.Repeat("x", 4096) + "\n[... 99991819 bytes omitted ...]\n" + strings.Repeat("x", 4096-len("\nTAIL-MARK\n")) + "\nTAIL-MARK\n"
	if res.Output != wantOut {
		head, tail := res.Output, res.Output
		if len(head) > 60 {
			head, tail = head[:30], tail[len(tail)-30:]
		}
		t.Errorf("100 MB of output kept %d bytes, starting %q and ending %q; want its first 4096 bytes, the omitted count, and its last 4096 bytes", len(res.Output), head, tail)
	}
	if res.Failed() || res.TotalBytes != int64(total) || res.OmittedBytes != int64(total-8192) {
		t.Errorf("100 MB of output: failed %v, total %d, omitted %d; want %d and %d", res.Failed(), res.TotalBytes, res.OmittedBytes, total, total-8192)
	}
	if grew := stats1.TotalAlloc - stats0.TotalAlloc; grew > 32<<20 {
		t.Errorf("100 MB of output allocated more than 32 MB (%s); the output must take bounded memory", ch08Size(grew))
	}
	if reported != 4096 {
		t.Errorf("progress reported %d bytes of the output; want the 4096 bytes of the head, each piece as it arrives", reported)
	}
	if reports > 200 {
		t.Errorf("progress: more than 200 reports for 100 MB; want the pieces of the head and one note per MiB after them\n(%d reports)", reports)
	}

	// The pipe hands over big chunks; a chatty command writes many small ones. 10 MB in writes
	// of 100 bytes, numbered lines, must take bounded memory too, and the tail is the last 4096
	// bytes, gathered from 41 writes, in order.
	out := newCappedOutput(4096, 4096, nil)
	line := make([]byte, 100)
	runtime.ReadMemStats(&stats0)
	for i := 1; i <= 100_000; i++ {
		out.Write(ch08NumberedLine(line, i))
	}
	runtime.ReadMemStats(&stats1)
	if grew := stats1.TotalAlloc - stats0.TotalAlloc; grew > 1<<20 {
		t.Errorf("10 MB in writes of 100 bytes allocated more than 1 MB (%s); the tail keeps only its last bytes, in bounded memory", ch08Size(grew))
	}
	text, all, omitted := out.result()
	if all != 10_000_000 || omitted != 10_000_000-8192 {
		t.Errorf("10 MB in small writes: total %d, omitted %d; want 10000000 and %d", all, omitted, 10_000_000-8192)
	}
	var first, last []byte
	for i := 1; i <= 41; i++ {
		first = append(first, ch08NumberedLine(make([]byte, 100), i)...)
	}
	for i := 100_000 - 40; i <= 100_000; i++ {
		last = append(last, ch08NumberedLine(make([]byte, 100), i)...)
	}
	wantText := string(first[:4096]) + "\n[... 9991808 bytes omitted ...]\n" + string(last[len(last)-4096:])
	if text != wantText {
		head, tail, _ := strings.Cut(text, "[...")
		t.Errorf("10 MB in writes of 100 bytes: the kept output is not the first 4096 bytes, the marker and the last 4096 bytes in the order they were written\n head ends %q, tail ends %q", ch08Ends(head), ch08Ends(tail))
	}
}

// ch08NumberedLine fills line, 100 bytes, with i in 99 digits and a line break.
func ch08NumberedLine(line []byte, i int) []byte {
	for p := 98; p >= 0; p-- {
		line[p] = byte('0' + i%10)
		i /= 10
	}
	line[99] = '\n'
	return line
}

// ch08Ends shows the last 24 bytes of s.
func ch08Ends(s string) string {
	return s[max(len(s)-24, 0):]
}

func TestLab8_4_命令_Env(t *testing.T) {
	defer guardLab(t)
	defer ch08NoLeaks(t, goleak.IgnoreCurrent())
	t.Setenv("OPENAI_API_KEY", "sk-tinypi-test-not-for-commands")
	t.Setenv("DATABASE_URL", "postgres://agent:hunter2@db/prod")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("TZ", "UTC")
	// Names that begin with an allowed one are other variables.
	t.Setenv("HOMEBREW_GITHUB_API_TOKEN", "ghp-tinypi-test-not-for-commands")
	t.Setenv("TERM_PROGRAM", "tinypi-term")
	t.Setenv("LANGUAGE", "zh_CN:en")
	t.Setenv("USERNAME", "agent")
	env := ch08Setup(t, WorkspaceOptions{KillGrace: time.Second, CommandEnv: []string{"GREETING=hello", "TZ=Asia/Shanghai"}})
	res := ch08Run(t, context.Background(), env.ws, "env", 0, nil)
	seen := map[string]string{}
	for _, line := range strings.Split(res.Output, "\n") {
		if name, value, ok := strings.Cut(line, "="); ok {
			seen[name] = value
		}
	}
	const allowed = "PATH, HOME, USER, LANG, LC_ALL, LC_CTYPE, TERM, TMPDIR and TZ from the agent, then the workspace's CommandEnv"
	if strings.Contains(res.Output, "sk-tinypi-test") {
		t.Errorf("a command saw OPENAI_API_KEY, the agent's API key; a command sees only %s", allowed)
	}
	if strings.Contains(res.Output, "hunter2") {
		t.Errorf("a command saw DATABASE_URL, a password whose name does not say so; a command sees only %s", allowed)
	}
	var others []string
	for name := range seen {
		switch name {
		case "PATH", "HOME", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "TZ", "GREETING":
		case "PWD", "SHLVL", "_", "OLDPWD": // bash sets these itself
		case "__CF_USER_TEXT_ENCODING": // and macOS this one, in every process
		default:
			others = append(others, name)
		}
	}
	if len(others) > 0 {
		slices.Sort(others)
		t.Errorf("a command saw variables of the agent beyond the allowed ones: %s; a command sees only %s (a name that only begins with an allowed one is another variable)", strings.Join(others, ", "), allowed)
	}
	if seen["GREETING"] != "hello" {
		t.Errorf("a command saw GREETING=%q; want \"hello\", from the workspace's CommandEnv", seen["GREETING"])
	}
	if seen["TZ"] != "Asia/Shanghai" {
		t.Errorf("a command saw TZ=%q; want \"Asia/Shanghai\": the workspace's CommandEnv wins over the agent's TZ=UTC", seen["TZ"])
	}
	for _, name := range []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR"} {
		value, set := os.LookupEnv(name)
		if got, ok := seen[name]; ok != set || got != value {
			t.Errorf("a command saw %s=%q (set: %v); want the agent's %q (set: %v)", name, got, ok, value, set)
		}
	}
}

// ch08Result writes a CommandResult on one line, for the second line of a failure.
func ch08Result(res CommandResult) string {
	return fmt.Sprintf("result: %+v", res)
}

// ch08Size describes an amount of memory roughly, so that a failure message is the same from run
// to run: "tens of MB", not an exact count that the garbage collector's timing changes.
func ch08Size(n uint64) string {
	switch {
	case n >= 100<<20:
		return "hundreds of MB"
	case n >= 10<<20:
		return "tens of MB"
	default:
		return "a few MB"
	}
}

// --- Lab 8.5 · the tools in the loop -------------------------------------------------------------

// ch08FailOnPending fails the test with a stub's pending message when a tool result carries one:
// the executor of chapter 06 turns a stub's panic into an error result, so in a run the message
// arrives as text, not as a panic.
func ch08FailOnPending(t *testing.T, messages []Message) {
	t.Helper()
	for _, m := range messages {
		if r, ok := m.(ToolResultMessage); ok {
			if msg := labPending(TextOf(r.Content)); msg != "" {
				t.Fatal(msg)
			}
		}
	}
}

func TestLab8_5_接入循环_README(t *testing.T) {
	defer guardLab(t)
	defer ch08NoLeaks(t, goleak.IgnoreCurrent())
	env := ch08Setup(t, WorkspaceOptions{})
	const readme = "# tiny-pi\nA small agent runtime.\n"
	ch08WriteFile(t, filepath.Join(env.dir, "README.md"), readme)
	registry, err := NewRegistry(env.ws.Tools()...)
	if err != nil {
		t.Fatalf("NewRegistry(ws.Tools()...): %v", err)
	}
	var names []string
	for _, d := range registry.Definitions() {
		names = append(names, d.Name)
	}
	if !cmp.Equal(names, []string{"read", "write", "edit", "bash"}) {
		t.Errorf("tool names %q; want read, write, edit, bash", names)
	}
	model := NewScriptedModel(ch07FirstAnswer(), ch07FinalAnswer())
	rec := newCh07Recorder()
	result, err := RunAgentLoop(context.Background(), AgentLoopOptions{
		Context: AgentContext{SystemPrompt: "You are tiny-pi.", Messages: ch07Input()},
		Model:   model, Tools: registry, OnEvent: rec.onEvent,
	})
	if err != nil {
		t.Fatalf("RunAgentLoop: %v", err)
	}
	ch08FailOnPending(t, result.Messages)
	if result.Reason != RunStop || result.Steps != 2 || len(result.Messages) != 4 {
		t.Fatalf("the README round trip: %s/%d with %d messages; want stop/2 and 4 messages", result.Reason, result.Steps, len(result.Messages))
	}
	got, ok := result.Messages[2].(ToolResultMessage)
	if !ok {
		t.Fatalf("message 3 is %T, want the read result", result.Messages[2])
	}
	if got.IsError || got.ToolCallID != "call-1" || TextOf(got.Content) != readme {
		t.Errorf("the read result: error %v, id %q, text %q; want the README from the disk, %q", got.IsError, got.ToolCallID, TextOf(got.Content), readme)
	}
	wantDetails := map[string]any{"path": "README.md", "firstLine": 1, "lastLine": 2, "truncated": false, "nextOffset": 0}
	if diff := cmp.Diff(wantDetails, got.Details); diff != "" {
		t.Errorf("the read result's details (-want +got):\n%s", diff)
	}
	if reqs := model.Requests(); len(reqs) != 2 || len(reqs[1].Messages) != 3 || TextOf(reqs[1].Messages[2].(ToolResultMessage).Content) != readme {
		t.Errorf("the second request does not carry the README read from the workspace")
	}

	// The schemas refuse what the tools cannot take.
	for _, c := range []struct{ tool, args string }{
		{"read", `{}`}, {"read", `{"path":"a","offset":0}`}, {"write", `{"path":"a"}`},
		{"edit", `{"path":"a","old_text":"","new_text":"b"}`}, {"bash", `{"command":"ls","timeout":0}`},
		{"bash", `{"command":"ls","timeout":601}`}, {"read", `{"path":"a","mode":"x"}`},
	} {
		if err := registry.ValidateArguments(c.tool, c.args); err == nil {
			t.Errorf("%s %s passed the schema; want a validation error", c.tool, c.args)
		}
	}
}

func TestLab8_5_接入循环_Tools(t *testing.T) {
	defer guardLab(t)
	defer ch08NoLeaks(t, goleak.IgnoreCurrent())
	env := ch08Setup(t, WorkspaceOptions{KillGrace: time.Second})
	before := env.outsideSnapshot(t)
	registry := MustRegistry(env.ws.Tools()...)
	call := func(id, name, args string) AssistantMessage {
		return AssistantMessage{Content: []ContentBlock{ToolCall{ID: id, Name: name, Arguments: args}}, StopReason: StopReasonToolUse}
	}
	model := NewScriptedModel(
		call("w", "write", `{"path":"notes/todo.md","content":"- a\n- a\n- b\n"}`),
		call("e2", "edit", `{"path":"notes/todo.md","old_text":"- a\n","new_text":"- A\n"}`),
		call("e1", "edit", `{"path":"notes/todo.md","old_text":"- b\n","new_text":"- B\n"}`),
		call("r", "read", `{"path":"notes/todo.md","offset":2,"limit":1}`),
		call("out", "read", `{"path":"../outside/secret.txt"}`),
		call("b", "bash", `{"command":"cat notes/todo.md; exit 2"}`),
		call("w2", "write", `{"path":"notes/问候.md","content":"你好\n"}`),
		call("g", "bash", `{"command":"echo one; read -r x < gate; echo two $x"}`),
		AssistantMessage{Content: []ContentBlock{Text("done")}, StopReason: StopReasonStop},
	)
	// Call g waits at a FIFO that the test opens only once g reported "one" as progress, so its
	// output must arrive while it runs. The test cancels the run after ch08Guard/2, so that a g
	// that went on waiting ends.
	gate := newCh08Gate(t, env.dir)
	rec := newCh07Recorder()
	rec.hook = func(e LoopEvent) {
		if p, ok := e.(ToolProgressEvent); ok && p.CallID == "g" && strings.Contains(TextOf(p.Content), "one") {
			gate.Open()
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	guard := time.AfterFunc(ch08Guard/2, cancel)
	defer guard.Stop()
	result, err := RunAgentLoop(ctx, AgentLoopOptions{
		Context: AgentContext{Messages: []Message{UserText("tidy the notes")}},
		Model:   model, Tools: registry, OnEvent: rec.onEvent,
	})
	opened := gate.Wait()
	ch08FailOnPending(t, result.Messages)
	if !opened {
		t.Fatalf("the bash call g (echo one; read -r x < gate; ...) waited for its \"one\" to be reported as progress while it ran, and it never was: pass exec.Progress to RunCommand, which reports the output as it arrives")
	}
	if err != nil || result.Reason != RunStop || result.Steps != 9 {
		t.Fatalf("run: %s/%d, %v; want stop/9", result.Reason, result.Steps, err)
	}
	results := map[string]ToolResultMessage{}
	for _, m := range result.Messages {
		if r, ok := m.(ToolResultMessage); ok {
			results[r.ToolCallID] = r
		}
	}
	want := []struct {
		id      string
		isError bool
		text    string
	}{
		{"w", false, "Wrote 12 bytes to notes/todo.md."},
		{"e2", true, "edit notes/todo.md: old_text matches 2 places in notes/todo.md; include more of the surrounding text so that it matches exactly one"},
		{"e1", false, "Edited notes/todo.md at line 3.\n--- a/notes/todo.md\n+++ b/notes/todo.md\n@@ -1,3 +1,3 @@\n - a\n - a\n-- b\n+- B\n"},
		{"r", false, "- a\n\n\n[lines 2-2 of notes/todo.md shown; the file goes on: read on with offset=3]"},
		{"out", true, `read ../outside/secret.txt: path leaves the workspace: "../outside/secret.txt" climbs above the workspace through ".."`},
		{"b", true, "- a\n- a\n- B\n[command ended; exit code 2]"},
		{"w2", false, "Wrote 7 bytes to notes/问候.md."},
		{"g", false, "one\ntwo go\n[command ended; exit code 0]"},
	}
	for _, w := range want {
		r, ok := results[w.id]
		if !ok {
			t.Errorf("call %s has no result", w.id)
			continue
		}
		if r.IsError != w.isError || TextOf(r.Content) != w.text {
			t.Errorf("call %s (%s): error %v, text %q; want error %v, text %q", w.id, r.ToolName, r.IsError, TextOf(r.Content), w.isError, w.text)
		}
	}
	if d := results["w"].Details; fmt.Sprint(d["path"]) != "notes/todo.md" || fmt.Sprint(d["bytes"]) != "12" {
		t.Errorf("the write's details %v; want path notes/todo.md and bytes 12", d)
	}
	if d := results["e1"].Details; d["firstChangedLine"] != 3 || !strings.HasPrefix(fmt.Sprint(d["diff"]), "--- a/notes/todo.md") {
		t.Errorf("the edit's details %v; want firstChangedLine 3 and the diff", d)
	}
	progress := map[string]string{} // call ID -> the progress reported under it
	for _, e := range rec.snapshot() {
		if p, ok := e.(ToolProgressEvent); ok {
			progress[p.CallID] += TextOf(p.Content)
		}
	}
	if diff := cmp.Diff(map[string]string{"b": "- a\n- a\n- B\n", "g": "one\ntwo go\n"}, progress); diff != "" {
		t.Errorf("progress by call (-want +got): the bash calls report their output as it arrives, and no other call reports progress here:\n%s", diff)
	}
	ch08Unchanged(t, "the run", env, before)
}

func TestLab8_5_接入循环_Timeout(t *testing.T) {
	defer guardLab(t)
	defer ch08NoLeaks(t, goleak.IgnoreCurrent())
	// bash runs a command that never ends: once with "timeout": 0.25 on a workspace whose
	// CommandTimeout is a minute, once without a timeout on a workspace whose CommandTimeout is
	// 250ms. Each must time out; the test cancels a call after ch08Guard/2 so that a command that
	// went on anyway ends.
	cases := []struct {
		what, args  string
		wsTimeout   time.Duration
		wantMeaning string
	}{
		{`"timeout": 0.25 on a workspace whose CommandTimeout is 1m`, `{"command":%q,"timeout":0.25}`, time.Minute,
			"0.25 seconds is 250ms; converting the seconds to a time.Duration must keep the fraction"},
		{`no timeout on a workspace whose CommandTimeout is 250ms`, `{"command":%q}`, 250 * time.Millisecond,
			"a call without a timeout passes 0 to RunCommand, which takes the workspace's CommandTimeout"},
	}
	for _, c := range cases {
		env := ch08Setup(t, WorkspaceOptions{KillGrace: time.Second, CommandTimeout: c.wsTimeout})
		registry := MustRegistry(env.ws.Tools()...)
		ctx, cancel := context.WithCancel(context.Background())
		guard := time.AfterFunc(ch08Guard/2, cancel)
		call := ToolCall{ID: "b", Name: "bash", Arguments: fmt.Sprintf(c.args, ch08Forever(t, env.dir))}
		result := ExecuteToolCall(ctx, call, registry, ToolExecContext{})
		guard.Stop()
		cancel()
		ch08FailOnPending(t, []Message{result})
		text := TextOf(result.Content)
		const want = "[timed out: the command's process group was stopped; killed by signal SIGTERM]"
		switch {
		case strings.HasPrefix(text, "[cancelled"):
			t.Errorf("bash with %s: still running after %v, when the test cancelled it; %s", c.what, ch08Guard/2, c.wantMeaning)
		case !result.IsError || text != want:
			t.Errorf("bash with %s: error %v, text %q; want an error result %q", c.what, result.IsError, text, want)
		}
	}
}
