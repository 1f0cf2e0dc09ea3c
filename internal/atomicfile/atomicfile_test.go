package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesAndCreatesTheDirectory(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "sub", "f.txt")
	if err := Write(name, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(name, []byte("two"), 0o640); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "two" {
		t.Errorf("content = %q, want %q", got, "two")
	}
	info, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want -rw-r-----", info.Mode().Perm())
	}
	entries, err := os.ReadDir(filepath.Dir(name))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want only f.txt (no temporary file)", len(entries))
	}
}

func TestFailedWriteKeepsTheOldAndLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	// name is a non-empty directory: the rename must fail.
	name := filepath.Join(dir, "f.txt")
	if err := os.MkdirAll(filepath.Join(name, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Write(name, []byte("new"), 0o644)
	if err == nil {
		t.Fatal("Write over a non-empty directory succeeded")
	}
	var le *os.LinkError
	if !errors.As(err, &le) {
		t.Errorf("error = %v, want it to wrap the rename's *os.LinkError", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !entries[0].IsDir() {
		t.Errorf("after a failed Write the directory holds %v, want only the old f.txt (no temporary file)", entries)
	}
	if _, err := os.Stat(filepath.Join(name, "x")); errors.Is(err, fs.ErrNotExist) {
		t.Error("the old f.txt lost its content")
	}
}
