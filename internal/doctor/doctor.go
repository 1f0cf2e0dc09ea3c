// Package doctor probes the learner's machine for what the course needs: a go command new enough
// for the learner's module, and a module cache from which a practice module builds with the
// network off. The CLI's `course doctor` turns its findings into advice.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"go/version"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/tree"
)

// GoEnv runs `go env NAME...` with the go command at goBin and returns each variable's value. It
// runs outside any module, so a go.mod in the current directory cannot switch toolchains.
func GoEnv(ctx context.Context, goBin string, names ...string) (map[string]string, error) {
	cmd := exec.CommandContext(ctx, goBin, append([]string{"env"}, names...)...)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && len(exit.Stderr) > 0 {
			return nil, fmt.Errorf("%s env: %w: %s", goBin, err, strings.TrimSpace(string(exit.Stderr)))
		}
		return nil, fmt.Errorf("%s env: %w", goBin, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(names) {
		return nil, fmt.Errorf("%s env %s printed %d lines, want %d", goBin, strings.Join(names, " "), len(lines), len(names))
	}
	env := make(map[string]string, len(names))
	for i, name := range names {
		env[name] = strings.TrimSpace(lines[i])
	}
	return env, nil
}

// NewEnough reports whether the go toolchain version have (as GOVERSION prints it, "go1.26.0")
// is at least the language version want (as go.mod writes it, "1.26"). A version it cannot read,
// such as a development build's, counts as new enough: the build check will tell.
func NewEnough(have, want string) bool {
	have = strings.TrimSpace(have)
	if !version.IsValid(have) {
		return true
	}
	want = "go" + strings.TrimPrefix(want, "go")
	// The learner's go.mod states the release ("1.26" is written as "1.26.0"), which a release
	// candidate of that version does not meet.
	if strings.Count(want, ".") == 1 {
		want += ".0"
	}
	return version.Compare(have, want) >= 0
}

// Build is the outcome of BuildOffline.
type Build struct {
	OK bool
	// Command is the go command that failed, as it would be typed ("go build ./..."); empty when OK.
	Command string
	// Output is what the failed command printed.
	Output string
}

// BuildOffline writes module (a Go module's tree) into a temporary directory and, with the network
// off, fetches the modules named by requires from the module cache and runs `go build ./...` there.
// It proves that a practice module builds on this machine without the network. The temporary
// directory is removed. The error is non-nil only when the check could not run at all.
func BuildOffline(ctx context.Context, goBin string, module tree.Tree, requires []string) (Build, error) {
	steps := [][]string{{"build", "./..."}}
	if len(requires) > 0 {
		// go build only needs the modules its packages import; the learner's tests import the rest.
		steps = append([][]string{append([]string{"mod", "download"}, requires...)}, steps...)
	}
	return buildIn(ctx, goBin, module, steps, gotest.OfflineEnv())
}

// BuildAsCourseTest compiles the tests of module (a Go module's tree) in a temporary directory the
// way `course test` does: with the learner's own environment (GOFLAGS, GOPROXY, GOWORK,
// GOTOOLCHAIN and the go env file), running no test. Settings that break `course test` although
// the module cache is fine (GOFLAGS=-mod=vendor, for example) fail here. The temporary directory
// is removed. The error is non-nil only when the check could not run at all.
func BuildAsCourseTest(ctx context.Context, goBin string, module tree.Tree) (Build, error) {
	return buildIn(ctx, goBin, module, [][]string{{"test", "-count=1", "-run", "^$", "./..."}}, nil)
}

// buildIn writes module into a temporary directory and runs the go commands of steps there, in
// order, with env added to the current environment; it stops at the first that fails.
func buildIn(ctx context.Context, goBin string, module tree.Tree, steps [][]string, env []string) (Build, error) {
	tmp, err := os.MkdirTemp("", "course-doctor-")
	if err != nil {
		return Build{}, fmt.Errorf("doctor: %w", err)
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "module")
	if err := module.Write(dir); err != nil {
		return Build{}, fmt.Errorf("doctor: %w", err)
	}
	for _, args := range steps {
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return Build{}, ctx.Err()
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return Build{}, fmt.Errorf("doctor: running go %s: %w", strings.Join(args, " "), err)
		}
		return Build{Command: "go " + strings.Join(args, " "), Output: string(out)}, nil
	}
	return Build{OK: true}, nil
}

// Settings are the go settings that decide how `course test` builds, as `go env` reports them
// (from the environment or the go env file).
var Settings = []string{"GOFLAGS", "GOPROXY", "GOWORK", "GOTOOLCHAIN"}

// SettingProblems returns the settings of env (values of Settings) that break a practice
// directory's build, each as "NAME=value".
func SettingProblems(env map[string]string) []string {
	var bad []string
	for _, flag := range strings.Fields(env["GOFLAGS"]) {
		if strings.HasPrefix(flag, "-mod=") && flag != "-mod=readonly" {
			// -mod=vendor needs a vendor directory a practice directory does not have;
			// -mod=mod lets go rewrite the learner's go.mod.
			bad = append(bad, "GOFLAGS="+env["GOFLAGS"])
			break
		}
	}
	if w := env["GOWORK"]; w != "" && w != "off" {
		bad = append(bad, "GOWORK="+w)
	}
	return bad
}
