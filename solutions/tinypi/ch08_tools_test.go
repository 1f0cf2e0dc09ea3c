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
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// --- a workspace with an outside to protect -------------------------------------------------------

// ch08Secret is the content of the file outside the workspace that no tool may read or change.
const ch08Secret = "top secret\n"

// ch08Env is a workspace directory and, beside it, a directory the tools must never touch.
type ch08Env struct {
	ws      *Workspace
	dir     string // the workspace
	outside string // beside it: secret.txt and an empty folder
}

// ch08Setup makes base/ws and base/outside and opens base/ws as a workspace with opts.
func ch08Setup(t *testing.T, opts WorkspaceOptions) *ch08Env {
	t.Helper()
	base := t.TempDir()
	env := &ch08Env{dir: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{env.dir, filepath.Join(env.outside, "folder")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ch08WriteFile(t, filepath.Join(env.outside, "secret.txt"), ch08Secret)
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

// ch08Unchanged fails the test when dir is not as before.
func ch08Unchanged(t *testing.T, what, dir string, before map[string]string) {
	t.Helper()
	if diff := cmp.Diff(before, ch08Snapshot(t, dir)); diff != "" {
		t.Errorf("%s: the directory outside the workspace changed (-before +after):\n%s", what, diff)
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
	}
	for _, c := range allowed {
		got, err := LocalPath(c.in)
		if err != nil || got != c.want {
			t.Errorf("LocalPath(%q) = %q, %v; want %q, nil (this path stays inside the workspace)", c.in, got, err, c.want)
		}
	}
	refused := []struct {
		in, want string // want: a piece of the error message
		outside  bool   // the error wraps ErrOutsideWorkspace
	}{
		{"", "path is empty", false},
		{"..", "climbs above the workspace", true},
		{"../outside/secret.txt", "climbs above the workspace", true},
		{"docs/../../outside", "climbs above the workspace", true},
		{"./../x", "climbs above the workspace", true},
		{"a/b/../../../x", "climbs above the workspace", true},
		{"/etc/passwd", "is absolute", true},
		{"/proc/self/root/etc/passwd", "is absolute", true},
		{"//server/share", "is absolute", true},
		{"README.md\x00.png", "NUL byte", false},
		{"a\x00/../../x", "NUL byte", false},
		{`..\outside\secret.txt`, "backslash", false},
		{`docs\guide.md`, "backslash", false},
		{`C:\Windows\win.ini`, "backslash", false},
		{"C:/Windows/win.ini", "Windows drive", false},
		{"c:secret.txt", "Windows drive", false},
		{strings.Repeat("a/", 2100), "the limit is 4096", false},
	}
	for _, c := range refused {
		got, err := LocalPath(c.in)
		name := c.in
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		if err == nil {
			t.Errorf("LocalPath(%q) = %q, nil; want an error with %q", name, got, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("LocalPath(%q) error = %q; want it to say %q", name, err, c.want)
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
		"inner-link":   "docs/guide.md", // stays inside: allowed
	}
	for name, target := range links {
		ch08Symlink(t, target, filepath.Join(env.dir, name))
	}
	ch08WriteFile(t, filepath.Join(env.dir, "docs", "guide.md"), "inside\n")
}

func TestLab8_1_工作区路径_Catalogue(t *testing.T) {
	defer guardLab(t)
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
	}
	before := ch08Snapshot(t, env.outside)
	for _, a := range attempts {
		if err := a.op(env.ws); err == nil {
			t.Errorf("%s: no error; every escape attempt must fail", a.name)
		} else if strings.Contains(err.Error(), "succeeded") {
			t.Errorf("%s: %v", a.name, err)
		}
		ch08Unchanged(t, a.name, env.outside, before)
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
	if err := env.ws.MkdirAll("made/deeper", 0o755); err != nil {
		t.Errorf("MkdirAll(made/deeper) inside the workspace: %v", err)
	}
	if err := env.ws.Rename("docs/guide.md", "made/guide.md"); err != nil {
		t.Errorf("Rename inside the workspace: %v", err)
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
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	env := ch08Setup(t, WorkspaceOptions{})
	sub := filepath.Join(env.dir, "sub")
	ch08WriteFile(t, filepath.Join(sub, "notes.txt"), "inside\n")
	before := ch08Snapshot(t, env.outside)

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
	ch08Unchanged(t, "after the swap between calls", env.outside, before)

	// During calls: another goroutine swaps sub between the directory and the link out while
	// files are created under it. Whichever it meets, no file may appear outside.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			os.Remove(sub)
			if i%2 == 0 {
				os.Rename(sub+".real", sub)
			} else {
				os.Rename(sub, sub+".real")
				os.Symlink("../outside", sub)
			}
		}
	}()
	for i := range 300 {
		if f, err := env.ws.OpenFile(fmt.Sprintf("sub/race-%d.txt", i), os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
			f.Close()
		}
	}
	close(stop)
	wg.Wait()
	ch08Unchanged(t, "after the swaps during calls", env.outside, before)
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

	// A first line longer than the cap is cut inside it, never inside a character.
	long := strings.Repeat("é", 40) + "\nnext\n" // 80 bytes, then a second line
	ch08WriteFile(t, filepath.Join(env.dir, "long.txt"), long)
	got, err = env.ws.Read("long.txt", 0, 0)
	if err != nil {
		t.Fatalf("Read(long.txt): %v", err)
	}
	want = ReadResult{Text: strings.Repeat("é", 32), FirstLine: 1, LastLine: 1, Truncated: true, NextOffset: 2,
		Note: "[line 1 is longer than 64 bytes and was cut; read on with offset=2]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Read(long.txt) = %s; a first line over the cap is cut at the cap on a character boundary: %s", ch08Window(got), ch08Window(want))
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
	ch08Symlink(t, "../outside/secret.txt", filepath.Join(env.dir, "file-link"))
	refusals := []struct{ name, want string }{
		{"logo.png", "logo.png looks like a binary file"},
		{"docs", "docs is a directory"},
		{"missing.md", "no such file"},
		{"file-link", "escapes"},
		{"../outside/secret.txt", "climbs above the workspace"},
	}
	for _, r := range refusals {
		got, err := env.ws.Read(r.name, 0, 0)
		if err == nil {
			t.Errorf("Read(%s) = %q, nil; want an error that says %q", r.name, got.Text, r.want)
			continue
		}
		if !strings.Contains(err.Error(), r.want) {
			t.Errorf("Read(%s) error = %q; want it to say %q", r.name, err, r.want)
		}
		if strings.Contains(err.Error(), "top secret") || strings.Contains(got.Text, "top secret") {
			t.Errorf("Read(%s) shows the secret outside the workspace", r.name)
		}
	}
}

// --- Lab 8.3 · write and edit --------------------------------------------------------------------

// ch08DirNames lists the names in dir.
func ch08DirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestLab8_3_写入编辑_Write(t *testing.T) {
	defer guardLab(t)
	env := ch08Setup(t, WorkspaceOptions{})
	before := ch08Snapshot(t, env.outside)

	// New directories are made as needed.
	if err := env.ws.WriteFile("notes/2026/todo.md", []byte("- buy milk\n")); err != nil {
		t.Fatalf("WriteFile(notes/2026/todo.md): %v; missing directories are created", err)
	}
	if data, err := os.ReadFile(filepath.Join(env.dir, "notes", "2026", "todo.md")); err != nil || string(data) != "- buy milk\n" {
		t.Errorf("notes/2026/todo.md = %q, %v; want the written text", data, err)
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
	if err := env.ws.WriteFile("bin/run.sh", []byte("#!/bin/sh\necho new\n")); err != nil {
		t.Fatalf("WriteFile(bin/run.sh): %v", err)
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
	if names := ch08DirNames(t, filepath.Join(env.dir, "bin")); !cmp.Equal(names, []string{"run.sh"}) {
		t.Errorf("bin holds %q after the write; want only run.sh (no temporary file left)", names)
	}

	// A failed write changes nothing and leaves nothing.
	if err := os.MkdirAll(filepath.Join(env.dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := env.ws.WriteFile("adir", []byte("x")); err == nil || !strings.Contains(err.Error(), "adir is a directory") {
		t.Errorf("WriteFile(adir) where adir is a directory: error %v; want one that says so", err)
	}
	if names := ch08DirNames(t, env.dir); !cmp.Equal(names, []string{"adir", "bin", "notes"}) {
		t.Errorf("the workspace holds %q after the failed write; want adir, bin, notes", names)
	}
	ch08Symlink(t, "../outside", filepath.Join(env.dir, "link-out"))
	ch08Symlink(t, "../outside/secret.txt", filepath.Join(env.dir, "file-link"))
	for _, name := range []string{"../outside/secret.txt", "link-out/secret.txt", "link-out/new/file.txt", "file-link"} {
		if err := env.ws.WriteFile(name, []byte("pwned\n")); err == nil {
			t.Errorf("WriteFile(%s): no error; it leaves the workspace", name)
		}
	}
	ch08Unchanged(t, "writes", env.outside, before)
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
	if names := ch08DirNames(t, env.dir); !cmp.Equal(names, []string{"config.yaml", "pattern.txt"}) {
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

// ch08Guard is how long a command test waits for RunCommand before it calls the run stuck. A
// correct RunCommand returns within a second or two here; the guard turns a hang into a failure.
const ch08Guard = 10 * time.Second

// ch08Run runs RunCommand in a goroutine and fails the test when it does not return within
// ch08Guard. onProgress may be nil.
func ch08Run(t *testing.T, ctx context.Context, ws *Workspace, command string, timeout time.Duration, onProgress func(string)) CommandResult {
	t.Helper()
	type outcome struct {
		res CommandResult
		err error
		p   any
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			o.p = recover()
			done <- o
		}()
		o.res, o.err = ws.RunCommand(ctx, command, timeout, onProgress)
	}()
	select {
	case o := <-done:
		if o.p != nil {
			failOnPanic(t, o.p)
		}
		if o.err != nil {
			t.Fatalf("RunCommand(%q): %v", command, o.err)
		}
		return o.res
	case <-time.After(ch08Guard):
		t.Fatalf("RunCommand(%q) did not return within %v: a process of the command is still running and holds the tool", command, ch08Guard)
		return CommandResult{}
	}
}

func TestLab8_4_命令_Basics(t *testing.T) {
	defer guardLab(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
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

	// Output arrives as progress while the command runs: the command waits at a FIFO that the
	// test opens only once "one" was reported.
	gate := filepath.Join(env.dir, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	guard, cancel := context.WithTimeout(ctx, ch08Guard/2) // well before ch08Run gives up
	defer cancel()
	var mu sync.Mutex
	var reports []string
	var opened sync.WaitGroup
	res = ch08Run(t, guard, env.ws, "echo one; read -r x < gate; echo two $x", 0, func(text string) {
		mu.Lock()
		reports = append(reports, text)
		mu.Unlock()
		if strings.Contains(text, "one") {
			opened.Add(1)
			go func() {
				defer opened.Done()
				if f, err := os.OpenFile(gate, os.O_WRONLY, 0); err == nil {
					f.WriteString("go\n")
					f.Close()
				}
			}()
		}
	})
	opened.Wait()
	if res.Cancelled {
		t.Fatalf("the command waited for a progress report of \"one\" that never came while it ran; report output as it arrives")
	}
	if res.Output != "one\ntwo go\n" || strings.Join(reports, "") != "one\ntwo go\n" {
		t.Errorf("output %q, progress %q; want both to be \"one\\ntwo go\\n\"", res.Output, reports)
	}
}

func TestLab8_4_命令_Stop(t *testing.T) {
	defer guardLab(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	env := ch08Setup(t, WorkspaceOptions{KillGrace: time.Second})
	ctx := context.Background()

	// A command that never exits is stopped when its time runs out: SIGTERM ends it. The time may
	// run out before bash has printed anything on a busy machine, so the output is "started\n"
	// or nothing.
	res := ch08Run(t, ctx, env.ws, "echo started; sleep 1000; echo never", 200*time.Millisecond, nil)
	if !res.TimedOut || res.Signal != "SIGTERM" || (res.Output != "started\n" && res.Output != "") || res.OutputLeftOpen {
		t.Errorf("sleep 1000 with a 200ms timeout: %+v; want TimedOut, signal SIGTERM, the output closed", res)
	}
	if !strings.Contains(res.Text(), "[timed out") || !strings.Contains(res.Text(), "SIGTERM") {
		t.Errorf("Text() = %q; want it to say the command timed out and how it ended", res.Text())
	}

	// Cancelling the context stops the whole group, the sleeping child too.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res = ch08Run(t, cctx, env.ws, "echo started; sleep 1000 & wait; echo never", time.Minute, func(text string) {
		if strings.Contains(text, "started") {
			cancel()
		}
	})
	if !res.Cancelled || res.TimedOut || res.Signal != "SIGTERM" || res.Output != "started\n" || res.OutputLeftOpen {
		t.Errorf("a cancelled command: %+v; want Cancelled, signal SIGTERM, output \"started\\n\", the output closed", res)
	}
	if !strings.Contains(res.Text(), "[cancelled") {
		t.Errorf("Text() = %q; want it to say the command was cancelled", res.Text())
	}

	// A group that ignores SIGTERM gets SIGKILL after the grace. The run is cancelled once the
	// trap is in place, which the command reports by printing "started".
	tctx, tcancel := context.WithCancel(ctx)
	defer tcancel()
	res = ch08Run(t, tctx, env.ws, "trap '' TERM; echo started; sleep 1000", time.Minute, func(text string) {
		if strings.Contains(text, "started") {
			tcancel()
		}
	})
	if !res.Cancelled || res.Signal != "SIGKILL" || res.OutputLeftOpen {
		t.Errorf("a command that ignores SIGTERM: %+v; want Cancelled and signal SIGKILL (SIGTERM first, then SIGKILL)", res)
	}
}

func TestLab8_4_命令_Fork(t *testing.T) {
	defer guardLab(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	env := ch08Setup(t, WorkspaceOptions{KillGrace: time.Second})
	// The shell starts a child that would sleep for a long time, and exits at once. The child is
	// stopped with its group: the tool returns, the output closed by the child's end.
	res := ch08Run(t, context.Background(), env.ws, "sleep 1000 & echo $! > child.pid; echo started", time.Minute, nil)
	if res.Failed() || res.Output != "started\n" || res.OutputLeftOpen {
		t.Errorf("a command that forks a child and exits: %+v; want exit 0, output \"started\\n\", and the child stopped with the group", res)
	}
	// A process that leaves the group (setsid) cannot be stopped with it; the tool stops reading
	// its output after the grace instead of waiting for it.
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Logf("no setsid command here (%v): the part about a process that leaves its group is left out", err)
		return
	}
	res = ch08Run(t, context.Background(), env.ws, "setsid sh -c 'echo $$ > daemon.pid; exec sleep 1000' & sleep 0; echo started; while [ ! -s daemon.pid ]; do sleep 0.01; done", time.Minute, nil)
	if data, err := os.ReadFile(filepath.Join(env.dir, "daemon.pid")); err == nil {
		var pid int
		if _, err := fmt.Sscan(string(data), &pid); err == nil && pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if !res.OutputLeftOpen || res.Failed() || !strings.Contains(res.Text(), "kept its output open") {
		t.Errorf("a command whose child left the group: %+v; want OutputLeftOpen and a note in the text", res)
	}
}

func TestLab8_4_命令_HugeOutput(t *testing.T) {
	defer guardLab(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
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
	if reported != 4096 || reports > 200 {
		t.Errorf("progress: %d reports, %d bytes of output; want the 4096 head bytes and a note per MiB after them", reports, reported)
	}

	// The pipe hands over big chunks; a chatty command writes many small ones. 10 MB in writes
	// of 100 bytes must take bounded memory too.
	out := newCappedOutput(4096, 4096, nil)
	line := []byte(strings.Repeat("y", 99) + "\n")
	runtime.ReadMemStats(&stats0)
	for range 100_000 {
		out.Write(line)
	}
	runtime.ReadMemStats(&stats1)
	if grew := stats1.TotalAlloc - stats0.TotalAlloc; grew > 1<<20 {
		t.Errorf("10 MB in writes of 100 bytes allocated more than 1 MB (%s); the tail keeps only its last bytes, in bounded memory", ch08Size(grew))
	}
	text, all, omitted := out.result()
	if all != 10_000_000 || omitted != 10_000_000-8192 || !strings.HasSuffix(text, strings.Repeat("y", 99)+"\n") {
		t.Errorf("10 MB in small writes: total %d, omitted %d; want 10000000 and %d, ending with the last line", all, omitted, 10_000_000-8192)
	}
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
			if msg := labPendingRE.FindString(TextOf(r.Content)); msg != "" {
				t.Fatal(msg)
			}
		}
	}
}

func TestLab8_5_接入循环_README(t *testing.T) {
	defer guardLab(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
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
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	env := ch08Setup(t, WorkspaceOptions{KillGrace: time.Second})
	before := ch08Snapshot(t, env.outside)
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
		AssistantMessage{Content: []ContentBlock{Text("done")}, StopReason: StopReasonStop},
	)
	rec := newCh07Recorder()
	result, err := RunAgentLoop(context.Background(), AgentLoopOptions{
		Context: AgentContext{Messages: []Message{UserText("tidy the notes")}},
		Model:   model, Tools: registry, OnEvent: rec.onEvent,
	})
	ch08FailOnPending(t, result.Messages)
	if err != nil || result.Reason != RunStop || result.Steps != 7 {
		t.Fatalf("run: %s/%d, %v; want stop/7", result.Reason, result.Steps, err)
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
	if d := results["e1"].Details; d["firstChangedLine"] != 3 || !strings.HasPrefix(fmt.Sprint(d["diff"]), "--- a/notes/todo.md") {
		t.Errorf("the edit's details %v; want firstChangedLine 3 and the diff", d)
	}
	var ids []string
	var progress strings.Builder
	for _, e := range rec.snapshot() {
		if p, ok := e.(ToolProgressEvent); ok {
			ids = append(ids, p.CallID)
			progress.WriteString(TextOf(p.Content))
		}
	}
	for _, id := range ids {
		if id != "b" {
			t.Errorf("progress reported under call %q; only the bash call b reports progress here", id)
		}
	}
	if progress.String() != "- a\n- a\n- B\n" {
		t.Errorf("progress events carry %q; want the bash output as it arrived, \"- a\\n- a\\n- B\\n\"", progress.String())
	}
	ch08Unchanged(t, "the run", env.outside, before)
}
