package labtest

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFiles writes each file of files (a slash-separated path under base, and its content),
// making the directories it needs (chapter 12's tests and later ones').
func WriteFiles(t testing.TB, base string, files map[string]string) {
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
