package perf

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/cli"
)

// runCourse runs the course command in-process with args, as `course ARGS...` would from dir,
// and returns its exit code and output.
func runCourse(b *testing.B, args ...string) (int, string) {
	b.Helper()
	var out bytes.Buffer
	code := cli.Run(context.Background(), args, cli.Env{
		Stdout: &out, Stderr: &out, Getenv: os.Getenv, Content: course.Content(),
		LookPath: exec.LookPath, Stdin: nil,
	})
	return code, out.String()
}

// BenchmarkKitPractice: `course practice 07 DIR`, a fresh practice directory for chapter 07.
func BenchmarkKitPractice(b *testing.B) {
	root := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		dir := filepath.Join(root, fmt.Sprint("practice-", i))
		if code, out := runCourse(b, "practice", "07", "--lang", "en", dir); code != 0 {
			b.Fatalf("course practice 07 exited %d:\n%s", code, out)
		}
	}
}

// BenchmarkKitTest: `course test --lab 7.1` in a chapter-07 practice directory, against a bare
// `go test -run '^TestLab7_1_' .` of the same lab in the same directory. Both may use go's
// test cache (course test does not force -count=1), so the difference is the kit's own cost:
// -json parsing, the report, the progress file.
func BenchmarkKitTest(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "practice")
	if code, out := runCourse(b, "practice", "07", "--lang", "en", dir); code != 0 {
		b.Fatalf("course practice 07 exited %d:\n%s", code, out)
	}
	b.Run("course-test", func(b *testing.B) {
		for b.Loop() {
			// The lab is a stub, so its test fails: exit code 1 is the expected outcome.
			if code, out := runCourse(b, "test", "--lang", "en", "--lab", "7.1", dir); code != 1 {
				b.Fatalf("course test --lab 7.1 exited %d, want 1 (a red stub):\n%s", code, out)
			}
		}
	})
	b.Run("go-test", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("go", "test", "-run", "^TestLab7_1_", ".")
			cmd.Dir, cmd.Stdout, cmd.Stderr = dir, io.Discard, io.Discard
			if err := cmd.Run(); err == nil {
				b.Fatal("go test of lab 7.1's stub passed, want a failure")
			}
		}
	})
}
