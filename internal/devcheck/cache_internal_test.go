package devcheck

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSourceIdentity: the kit's identity from its source changes with the kit's code, not with
// its tests or the course content, and is refused when a file is newer than the binary.
func TestSourceIdentity(t *testing.T) {
	root := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module "+kitModule+"\n\ngo 1.26\n")
	write("go.sum", "")
	write("content.go", "package course\n")
	write("internal/devcheck/devcheck.go", "package devcheck\n")
	write("internal/devcheck/devcheck_test.go", "package devcheck\n")
	write("cmd/course/main.go", "package main\n")
	write("solutions/tinypi/agentloop.go", "package tinypi\n")
	built := time.Now().Add(time.Hour)

	id := func() string {
		t.Helper()
		got, ok := sourceIdentity(root, built)
		if !ok {
			t.Fatal("sourceIdentity refused the kit's source")
		}
		return got
	}
	first := id()
	if again := id(); again != first {
		t.Fatalf("identity %q, then %q", first, again)
	}
	steps := []struct {
		name    string
		change  func()
		changes bool
	}{
		{"a kit test", func() { write("internal/devcheck/devcheck_test.go", "package devcheck // more\n") }, false},
		{"course content", func() { write("solutions/tinypi/agentloop.go", "package tinypi // more\n") }, false},
		{"kit code", func() { write("internal/devcheck/devcheck.go", "package devcheck // more\n") }, true},
		{"a new command file", func() { write("cmd/course/flags.go", "package main\n") }, true},
		{"the root package", func() { write("content.go", "package course // more\n") }, true},
		{"go.sum", func() { write("go.sum", "example.com/m v1.0.0 h1:x\n") }, true},
	}
	for _, s := range steps {
		before := id()
		s.change()
		if changed := id() != before; changed != s.changes {
			t.Errorf("%s: identity changed = %v, want %v", s.name, changed, s.changes)
		}
	}

	later := built.Add(time.Minute)
	if err := os.Chtimes(filepath.Join(root, "internal/devcheck/devcheck.go"), later, later); err != nil {
		t.Fatal(err)
	}
	if got, ok := sourceIdentity(root, built); ok {
		t.Errorf("a file changed after the binary was built: identity %q, want none", got)
	}
	past := built.Add(-time.Minute)
	if err := os.Chtimes(filepath.Join(root, "internal/devcheck/devcheck.go"), past, past); err != nil {
		t.Fatal(err)
	}
	if _, ok := sourceIdentity(root, built); !ok {
		t.Fatal("sourceIdentity refused the kit's source once every file was older than the binary")
	}
	if err := os.Remove(filepath.Join(root, "cmd/course/flags.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(root, "cmd/course"), later, later); err != nil { // as the removal would, after the build
		t.Fatal(err)
	}
	if got, ok := sourceIdentity(root, built); ok {
		t.Errorf("a file was removed after the binary was built: identity %q, want none", got)
	}
	if _, ok := sourceIdentity(filepath.Join(root, "internal"), built); ok {
		t.Error("a folder that is not the kit's module gave an identity")
	}
}
