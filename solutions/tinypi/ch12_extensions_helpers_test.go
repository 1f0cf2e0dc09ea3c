package tinypi

// Helpers of chapter 12's focused tests that later chapters' tests use too. They live apart
// from the tests so that, in a later chapter's directory, a plain `go test` compiles them
// without the earlier chapter's tests, which are behind the build tag allchapters there.

import (
	"os"
	"path/filepath"
	"testing"
)

// ch12rWrite writes each file of files (a slash-separated path under base, and its content),
// making the directories it needs.
func ch12rWrite(t *testing.T, base string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
