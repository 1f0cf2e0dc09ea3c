package cli

import (
	"io"
	"strings"
	"testing"

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
