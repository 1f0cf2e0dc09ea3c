package tinypi

// Helpers of chapter 13's focused tests that later chapters' tests use too. They live apart
// from the tests so that, in a later chapter's directory, a plain `go test` compiles them
// without the earlier chapter's tests, which are behind the build tag allchapters there.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// ch13ModelFunc is a function as a Model.
type ch13ModelFunc func(ctx context.Context, req Request) *AssistantStream

func (f ch13ModelFunc) Stream(ctx context.Context, req Request) *AssistantStream { return f(ctx, req) }

// ch13OpenFiles counts the process's open files, or returns -1 where /proc/self/fd is missing
// (then no count is ever larger than another).
func ch13OpenFiles(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

// ch13Script writes msgs as a script file (LoadScript's format) and returns its path.
func ch13Script(t *testing.T, msgs ...AssistantMessage) string {
	t.Helper()
	var b bytes.Buffer
	for _, m := range msgs {
		line, err := MarshalMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	p := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
