package tree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// userFiles are what a learner already has next to (or in place of) the directory a tree goes to.
var userFiles = map[string]string{
	"go.mod":     "module mine\n\ngo 1.22\n",
	".gitignore": "secret.txt\n",
	"main.go":    "package main\n\nfunc main() { println(\"mine\") }\n",
}

// placeTree is the tree the tests place: it holds the same names as the user's files.
var placeTree = Tree{
	"go.mod":     []byte("module tinypi\n"),
	".gitignore": []byte("/bin/\n"),
	"main.go":    []byte("package main\n"),
	"a/b/c.go":   []byte("package b\n"),
}

// snapshot returns every file below dir with its content, every directory with its mode, and
// each symbolic link with its target.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			got[rel] = "-> " + target
			return err
		case d.IsDir():
			got[rel+"/"] = fmt.Sprintf("dir %v ino %d", info.Mode(), inode(t, info))
			return nil
		}
		data, err := os.ReadFile(p)
		got[rel] = string(data)
		return err
	})
	require.NoError(t, err)
	return got
}

func inode(t *testing.T, info fs.FileInfo) uint64 {
	t.Helper()
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("no inode numbers on this system")
	}
	return st.Ino
}

// userArea returns a directory holding the user's files.
func userArea(t *testing.T) string {
	t.Helper()
	parent := t.TempDir()
	for name, data := range userFiles {
		require.NoError(t, os.WriteFile(filepath.Join(parent, name), []byte(data), 0o644))
	}
	return parent
}

// failingOps returns the real calls, with the n-th call of step failing (counting from 1), and
// a pointer to how many calls of step were made.
func failingOps(step string, n int) (placeOps, *int) {
	o := realOps()
	calls := new(int)
	injected := fmt.Errorf("injected failure of %s call %d", step, n)
	fail := func() bool {
		*calls++
		return *calls == n
	}
	switch step {
	case "mkdir":
		real := o.mkdir
		o.mkdir = func(name string) error {
			if fail() {
				return injected
			}
			return real(name)
		}
	case "mkdirTemp":
		real := o.mkdirTemp
		o.mkdirTemp = func(dir, pattern string) (string, error) {
			if fail() {
				return "", injected
			}
			return real(dir, pattern)
		}
	case "writeFile":
		real := o.writeFile
		o.writeFile = func(name string, data []byte) error {
			if fail() {
				return injected
			}
			return real(name, data)
		}
	case "move":
		real := o.move
		o.move = func(oldpath, newpath string) error {
			if fail() {
				return injected
			}
			return real(oldpath, newpath)
		}
	default:
		panic("unknown step " + step)
	}
	return o, calls
}

// TestFillFailureLeavesEverything injects a failure at every step of Fill, into a new directory
// and into an existing empty one, and checks that the user's files and the directory are as they
// were: byte for byte, with the same inode and mode.
func TestFillFailureLeavesEverything(t *testing.T) {
	steps := []struct {
		step  string
		calls int // how many calls the step makes when nothing fails
	}{
		{"mkdir", 2}, // new directory only: x and x/out
		{"mkdirTemp", 1},
		{"writeFile", len(placeTree)},
		{"prepare", 1},
		{"move", 4}, // .gitignore, a, go.mod, main.go
	}
	for _, existing := range []bool{false, true} {
		for _, s := range steps {
			if s.step == "mkdir" && existing {
				continue
			}
			for n := 1; n <= s.calls; n++ {
				name := fmt.Sprintf("existing=%v/%s#%d", existing, s.step, n)
				t.Run(name, func(t *testing.T) {
					parent := userArea(t)
					dir := filepath.Join(parent, "x", "out")
					if existing {
						dir = filepath.Join(parent, "out")
						require.NoError(t, os.Mkdir(dir, 0o711))
					}
					before := snapshot(t, parent)

					o, calls := realOps(), new(int)
					var prepare func(string) error
					if s.step == "prepare" {
						prepare = func(staging string) error {
							*calls++
							if err := os.WriteFile(filepath.Join(staging, "prepared"), nil, 0o644); err != nil {
								return err
							}
							return errors.New("injected failure of prepare")
						}
					} else {
						o, calls = failingOps(s.step, n)
					}
					err := placeTree.fill(context.Background(), o, dir, prepare)
					if err == nil {
						t.Fatalf("fill succeeded after %d calls of %s", *calls, s.step)
					}
					if !strings.Contains(err.Error(), "injected failure") {
						t.Errorf("fill error = %v, want the injected failure", err)
					}
					var pe *PlaceError
					if !errors.As(err, &pe) {
						t.Errorf("fill error %v is not a *PlaceError", err)
					}
					if diff := cmp.Diff(before, snapshot(t, parent)); diff != "" {
						t.Errorf("after a failed fill (-before +after):\n%s", diff)
					}
				})
			}
		}
	}
}

// TestFillNeverReplaces puts the user's files into the directory after Fill has checked that it
// is empty and before it moves its own entries in: Fill must fail, and keep the user's files.
func TestFillNeverReplaces(t *testing.T) {
	{
		{
			dir := filepath.Join(t.TempDir(), "out")
			require.NoError(t, os.Mkdir(dir, 0o755))
			o := realOps()
			first := true
			realMove := o.move
			o.move = func(oldpath, newpath string) error {
				if first {
					first = false
					// The user saves into the directory while it is being filled.
					for n, data := range userFiles {
						require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(data), 0o644))
					}
					require.NoError(t, os.MkdirAll(filepath.Join(dir, "a", "mine"), 0o755))
				}
				return realMove(oldpath, newpath)
			}
			err := placeTree.fill(context.Background(), o, dir, nil)
			if err == nil {
				t.Fatal("fill succeeded over the user's files")
			}
			want := map[string]string{"a/": "", "a/mine/": ""}
			for n, data := range userFiles {
				want[n] = data
			}
			got := snapshot(t, dir)
			for k := range got {
				if strings.HasSuffix(k, "/") || k == "." {
					got[k] = "" // modes and inodes do not matter here
				}
			}
			delete(got, "./")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the user's files after a failed fill (-want +got):\n%s", diff)
			}
		}
	}
}

// TestFillInPlace checks that an existing empty directory is filled in place: same inode and
// mode, through a symbolic link too, and with a parent nothing may be created in.
func TestFillInPlace(t *testing.T) {
	check := func(t *testing.T, o placeOps, dir, real string) {
		t.Helper()
		info, err := os.Stat(real)
		require.NoError(t, err)
		ino, mode := inode(t, info), info.Mode()
		require.NoError(t, placeTree.fill(context.Background(), o, dir, nil))
		info, err = os.Stat(real)
		require.NoError(t, err)
		if got := inode(t, info); got != ino {
			t.Errorf("inode of %s = %d after fill, want %d (the directory was replaced)", real, got, ino)
		}
		if info.Mode() != mode {
			t.Errorf("mode of %s = %v after fill, want %v", real, info.Mode(), mode)
		}
		got := snapshot(t, real)
		for k := range got {
			if strings.HasSuffix(k, "/") {
				delete(got, k)
			}
		}
		want := map[string]string{}
		for p, data := range placeTree {
			want[p] = string(data)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s after fill (-want +got):\n%s", real, diff)
		}
	}
	t.Run("empty directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		require.NoError(t, os.Mkdir(dir, 0o711))
		check(t, realOps(), dir, dir)
	})
	t.Run("symbolic link to an empty directory", func(t *testing.T) {
		parent := t.TempDir()
		real := filepath.Join(parent, "real")
		require.NoError(t, os.Mkdir(real, 0o755))
		link := filepath.Join(parent, "link")
		require.NoError(t, os.Symlink("real", link))
		check(t, realOps(), link, real)
		if target, err := os.Readlink(link); err != nil || target != "real" {
			t.Errorf("link = %q, %v after fill, want the link to real kept", target, err)
		}
	})
	t.Run("parent where nothing may be created", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		require.NoError(t, os.Mkdir(dir, 0o755))
		// The kit runs as any user; root ignores permissions, so the parent's refusal is
		// simulated for every call that would create or move something directly inside it.
		o := realOps()
		denied := func(p string) bool { return filepath.Dir(filepath.Clean(p)) == parent }
		mkdirTemp, move, writeFile := o.mkdirTemp, o.move, o.writeFile
		o.mkdir = func(name string) error { return fs.ErrPermission }
		o.mkdirTemp = func(d, pattern string) (string, error) {
			if filepath.Clean(d) == parent {
				return "", fs.ErrPermission
			}
			return mkdirTemp(d, pattern)
		}
		o.move = func(oldpath, newpath string) error {
			if denied(oldpath) || denied(newpath) {
				return fs.ErrPermission
			}
			return move(oldpath, newpath)
		}
		o.writeFile = func(name string, data []byte) error {
			if denied(name) {
				return fs.ErrPermission
			}
			return writeFile(name, data)
		}
		check(t, o, dir, dir)
	})
	t.Run("read-only parent", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root writes into read-only directories")
		}
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		require.NoError(t, os.Mkdir(dir, 0o755))
		require.NoError(t, os.Chmod(parent, 0o555))
		t.Cleanup(func() { os.Chmod(parent, 0o755) })
		check(t, realOps(), dir, dir)
	})
}

// TestFillRefuses checks the directories Fill refuses before writing anything.
func TestFillRefuses(t *testing.T) {
	t.Run("empty name", func(t *testing.T) {
		// The current directory of the test is the package's source: it must stay untouched,
		// which the error (before any step) proves.
		err := placeTree.Fill(context.Background(), "", nil)
		if !errors.Is(err, ErrNoDir) {
			t.Fatalf("Fill(\"\") = %v, want ErrNoDir", err)
		}
	})
	t.Run("not empty", func(t *testing.T) {
		parent := userArea(t)
		before := snapshot(t, parent)
		err := placeTree.Fill(context.Background(), parent, nil)
		if !errors.Is(err, ErrNotEmpty) {
			t.Fatalf("Fill of a directory holding files = %v, want ErrNotEmpty", err)
		}
		if diff := cmp.Diff(before, snapshot(t, parent)); diff != "" {
			t.Errorf("after a refused fill (-before +after):\n%s", diff)
		}
	})
	t.Run("a file", func(t *testing.T) {
		parent := userArea(t)
		err := placeTree.Fill(context.Background(), filepath.Join(parent, "go.mod"), nil)
		if !errors.Is(err, ErrNotDir) {
			t.Fatalf("Fill of a file = %v, want ErrNotDir", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		parent := userArea(t)
		before := snapshot(t, parent)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := placeTree.Fill(ctx, filepath.Join(parent, "out"), nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Fill with an ended context = %v, want context.Canceled", err)
		}
		if diff := cmp.Diff(before, snapshot(t, parent)); diff != "" {
			t.Errorf("after a cancelled fill (-before +after):\n%s", diff)
		}
	})
}

// TestMoveNoReplace checks both no-replace moves: the system's and the fallback.
func TestMoveNoReplace(t *testing.T) {
	for name, move := range map[string]func(string, string) error{
		"system":   moveNoReplace,
		"fallback": moveNoReplaceFallback,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(p, data string) {
				t.Helper()
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644))
			}
			write("src/f", "new")
			write("src/d/inner", "new inner")
			write("dst/f", "mine")
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "dst", "d"), 0o755))
			for _, p := range []string{"f", "d"} {
				if err := move(filepath.Join(dir, "src", p), filepath.Join(dir, "dst", p)); err == nil {
					t.Errorf("moving %s over an existing entry succeeded", p)
				}
			}
			want := map[string]string{
				"src/f": "new", "src/d/inner": "new inner", "dst/f": "mine",
			}
			got := snapshot(t, dir)
			for k := range got {
				if strings.HasSuffix(k, "/") {
					delete(got, k)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("after refused moves (-want +got):\n%s", diff)
			}
			require.NoError(t, os.Remove(filepath.Join(dir, "dst", "d")))
			require.NoError(t, os.Remove(filepath.Join(dir, "dst", "f")))
			for _, p := range []string{"f", "d"} {
				if err := move(filepath.Join(dir, "src", p), filepath.Join(dir, "dst", p)); err != nil {
					t.Errorf("moving %s: %v", p, err)
				}
			}
			want = map[string]string{"dst/f": "new", "dst/d/inner": "new inner"}
			got = snapshot(t, dir)
			for k := range got {
				if strings.HasSuffix(k, "/") {
					delete(got, k)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("after moves (-want +got):\n%s", diff)
			}
		})
	}
}
