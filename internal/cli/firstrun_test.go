package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPracticeSaysHowToInstallCourse: the README's first command runs the kit with go run, so
// `course` is not a command yet; the practice output's closing `course status` advice must come
// with the command that installs it.
func TestPracticeSaysHowToInstallCourse(t *testing.T) {
	install := `  go install ./cmd/course && export PATH="$PATH:$(go env GOPATH)/bin"`
	for _, tt := range []struct {
		name        string
		found       map[string]string
		wantInstall bool
	}{
		{"course not on PATH", map[string]string{"git": "/usr/bin/git"}, true},
		{"course installed", map[string]string{"git": "/usr/bin/git", "course": "/home/me/go/bin/course"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p00")
			code, stdout, stderr := runCourse(t, map[string]string{"LANG": "en_US.UTF-8"}, lookOnly(tt.found), "practice", "00", dir) // the first chapter: the shortest history to build
			if code != exitOK {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if got := strings.Contains(stdout, install); got != tt.wantInstall {
				t.Errorf("output has the install command: %v, want %v:\n%s", got, tt.wantInstall, stdout)
			}
			if !strings.Contains(stdout, "&& course status") {
				t.Errorf("output lacks the course status advice:\n%s", stdout)
			}
		})
	}
}
