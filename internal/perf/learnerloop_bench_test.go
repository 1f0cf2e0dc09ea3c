//go:build unix

package perf

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// learnerLoopChapters are the chapters BenchmarkLearnerLoop measures: an early one (02), the
// agent loop (07) and the later, larger trees up to the last chapter (14).
var learnerLoopChapters = []string{"02", "07", "10", "12", "13", "14"}

// BenchmarkLearnerLoop: the loop a learner lives in. In a practice directory of each chapter, a
// one-line edit in lab N.1's region (a line that changes the compiled code, so neither go's build
// cache nor its test cache can answer), then that lab's test: the card's plain
// `go test -run '^TestLabN_1_' .` (go-test; `./eval` at chapter 14, which has a package of its
// own) or `course test --lab N.1` (course-test). The lab is still the starter's stub, so its
// tests fail. docs/performance.md has the figures; the aim is
// about a second at every chapter, chapter 14 within 1.5× chapter 02.
func BenchmarkLearnerLoop(b *testing.B) {
	for _, number := range learnerLoopChapters {
		dir := filepath.Join(b.TempDir(), "practice-"+number)
		if code, out := runCourse(b, "practice", number, "--lang", "en", dir); code != 0 {
			b.Fatalf("course practice %s exited %d:\n%s", number, code, out)
		}
		lab := strings.TrimPrefix(number, "0") + ".1"
		file, marker := labRegionFile(b, dir, lab)
		edit := 0
		// editLab inserts, after lab's //lab:begin marker, one new line the compiler keeps.
		editLab := func() {
			edit++
			src, err := os.ReadFile(file)
			if err != nil {
				b.Fatal(err)
			}
			line := fmt.Sprintf("\tprintln(\"learner loop edit %d\")\n", edit)
			src = bytes.Replace(src, marker, append(append([]byte{}, marker...), line...), 1)
			if err := os.WriteFile(file, src, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		goTest := func() {
			pkg, err := filepath.Rel(dir, filepath.Dir(file))
			if err != nil {
				b.Fatal(err)
			}
			// The card's package: "." or the chapter's own ("./eval").
			cmd := exec.Command("go", "test", "-run", "^TestLab"+strings.ReplaceAll(lab, ".", "_")+"_", "./"+filepath.ToSlash(pkg))
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "--- FAIL") {
				b.Fatalf("go test of lab %s's stub in chapter %s: want failing tests, got err %v:\n%s", lab, number, err, out)
			}
		}
		courseTest := func() {
			// The lab is a stub, so its test fails: exit code 1 is the expected outcome.
			if code, out := runCourse(b, "test", "--lang", "en", "--lab", lab, dir); code != 1 {
				b.Fatalf("course test --lab %s in chapter %s exited %d, want 1 (a red stub):\n%s", lab, number, code, out)
			}
		}
		// A first run of each builds what no edit changes (the standard library, the modules).
		goTest()
		courseTest()
		b.Run("ch"+number+"/go-test", func(b *testing.B) {
			before := childCPU(b)
			for b.Loop() {
				editLab()
				goTest()
			}
			b.ReportMetric((childCPU(b)-before).Seconds()/float64(b.N), "cpu-s/op")
		})
		b.Run("ch"+number+"/course-test", func(b *testing.B) {
			before := childCPU(b)
			for b.Loop() {
				editLab()
				courseTest()
			}
			b.ReportMetric((childCPU(b)-before).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// childCPU returns the CPU time (user and system) of every child process this process has waited
// for, and of theirs: the go command, the compiler, the linker, vet and the test binary. Unlike
// the wall time it does not grow when other work shares the machine.
func childCPU(b *testing.B) time.Duration {
	b.Helper()
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// labRegionFile returns the file of the practice directory dir that holds lab's region, and the
// line of its //lab:begin marker (with its newline).
func labRegionFile(b *testing.B, dir, lab string) (string, []byte) {
	b.Helper()
	marker := []byte("//lab:begin " + lab + "\n")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		b.Fatal(err)
	}
	// A chapter in a package of its own (chapter 14's eval) has its labs one directory down.
	below, err := filepath.Glob(filepath.Join(dir, "*", "*.go"))
	if err != nil {
		b.Fatal(err)
	}
	files = append(files, below...)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if bytes.Contains(src, marker) {
			return f, marker
		}
	}
	b.Fatalf("no file of %s has %q", dir, marker)
	return "", nil
}
