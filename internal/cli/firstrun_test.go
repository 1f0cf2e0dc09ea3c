package cli

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/manifest"
)

// TestPracticeSaysHowToInstallCourse: the README's first command runs the kit with go run, so
// `course` is not a command yet; the practice output's closing `course status` advice must come
// with the command that installs it.
func TestPracticeSaysHowToInstallCourse(t *testing.T) {
	install := `  go install ./cmd/course && export PATH="$PATH:$(go env GOPATH)/bin"`
	// printPracticeNext is what course practice prints once the directory is made (the
	// practice script of tests/ checks that it does, without -race): building a practice
	// directory here, under the race detector, took tens of seconds.
	c, err := manifest.Load(course.Content())
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.Chapter("00")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name        string
		found       map[string]string
		wantInstall bool
	}{
		{"course not on PATH", map[string]string{"git": "/usr/bin/git"}, true},
		{"course installed", map[string]string{"git": "/usr/bin/git", "course": "/home/me/go/bin/course"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			a := &app{p: printer{lang: langEN}, stdout: &out, stderr: io.Discard, look: lookOnly(tt.found)}
			a.printPracticeNext("p00", ch)
			if got := strings.Contains(out.String(), install); got != tt.wantInstall {
				t.Errorf("output has the install command: %v, want %v:\n%s", got, tt.wantInstall, out.String())
			}
			if !strings.Contains(out.String(), "&& course status") {
				t.Errorf("output lacks the course status advice:\n%s", out.String())
			}
		})
	}
}

// TestPracticeFirstBuildSaysItIsBuilding: on a cold build cache course practice builds the new
// directory's tests once and says so, before and after; on a warm one it runs no build and
// prints nothing (the e2e scripts, whose cache is warm, check that it stays quiet).
func TestPracticeFirstBuildSaysItIsBuilding(t *testing.T) {
	tests := []struct {
		name      string
		list      string
		goFound   bool
		wantBuild bool
		wantErr   []string // lines of stderr, in order
	}{
		{"cold cache", "internal/abi\nfmt\ntinypi\ntinypi.test\n", true, true, []string{
			"first build: Go's build cache does not hold 2 packages of the standard library and the course's dependencies yet. Compiling them once now, so that go test starts in seconds afterwards (a minute or two on a new machine, this once)...",
			"built (0s).",
		}},
		{"warm cache", "tinypi\ntinypi [tinypi.test]\ntinypi.test\n", true, false, nil},
		{"no go", "fmt\n", false, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			var calls [][]string
			found := map[string]string{}
			if tt.goFound {
				found["go"] = "/usr/local/go/bin/go"
			}
			a := &app{p: printer{lang: langEN}, stdout: io.Discard, stderr: &stderr, look: lookOnly(found),
				goRunner: func(_ context.Context, dir string, args ...string) (string, error) {
					if dir != "p07" {
						t.Errorf("go %q ran in %s, want p07", args, dir)
					}
					calls = append(calls, args)
					if args[0] == "list" {
						return tt.list, nil
					}
					return "ok  \ttinypi\t0.01s [no tests to run]\n", nil
				}}
			a.firstBuild(context.Background(), "p07", "tinypi")
			built := slices.ContainsFunc(calls, func(c []string) bool { return c[0] == "test" })
			if built != tt.wantBuild {
				t.Errorf("built: %v, want %v (go commands %q)", built, tt.wantBuild, calls)
			}
			var got []string
			for l := range strings.Lines(stderr.String()) {
				got = append(got, strings.TrimSuffix(l, "\n"))
			}
			if diff := cmp.Diff(tt.wantErr, got); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}
