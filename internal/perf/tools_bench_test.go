// Chapter 08's coding tools on big inputs: read and edit of a 10 MB file, and bash start-up.
// docs/08-coding-tools.md quotes these numbers.

package perf

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// bigLines is how many lines the 10 MB file has: 131072 lines of 80 bytes.
const bigLines = 131072

// bigWorkspace returns a workspace holding big.txt, 10 MiB of numbered 80-byte lines.
func bigWorkspace(b *testing.B) *tinypi.Workspace {
	b.Helper()
	dir := b.TempDir()
	var sb strings.Builder
	sb.Grow(bigLines * 80)
	for i := 1; i <= bigLines; i++ {
		line := fmt.Sprintf("line %07d ", i)
		sb.WriteString(line)
		sb.WriteString(strings.Repeat("x", 79-len(line)))
		sb.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	ws, err := tinypi.OpenWorkspace(dir, tinypi.WorkspaceOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ws.Close() })
	return ws
}

// BenchmarkRead10MBHead reads the first window (the default 2000 lines, capped at 50 KiB).
func BenchmarkRead10MBHead(b *testing.B) {
	ws := bigWorkspace(b)
	for b.Loop() {
		if _, err := ws.Read("big.txt", 0, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead10MBTail reads the last 100 lines, which scans the whole file.
func BenchmarkRead10MBTail(b *testing.B) {
	ws := bigWorkspace(b)
	b.SetBytes(bigLines * 80)
	for b.Loop() {
		if _, err := ws.Read("big.txt", bigLines-99, 100); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEdit10MB replaces one line in the middle of the file and back, one edit per op:
// read, count the matches, write atomically (with fsync), diff.
func BenchmarkEdit10MB(b *testing.B) {
	ws := bigWorkspace(b)
	b.SetBytes(bigLines * 80)
	from, to := "line 0065536 ", "LINE 0065536 "
	for b.Loop() {
		if _, err := ws.Edit("big.txt", from, to); err != nil {
			b.Fatal(err)
		}
		from, to = to, from
	}
}

// BenchmarkBashStartup runs `true`: the cost of starting bash in its own process group and
// waiting for it and its output.
func BenchmarkBashStartup(b *testing.B) {
	ws, err := tinypi.OpenWorkspace(b.TempDir(), tinypi.WorkspaceOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	for b.Loop() {
		res, err := ws.RunCommand(context.Background(), "true", 0, nil)
		if err != nil || res.Failed() {
			b.Fatal(res, err)
		}
	}
}
