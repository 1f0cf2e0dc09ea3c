// Package firstbuild builds a new practice directory's tests once when Go's build cache does not
// hold what they need yet (a new machine, a new Go version), so that the first build, which
// compiles the standard library and the course's dependencies and takes a minute or more, happens
// while `course practice` says so, not silently inside the learner's first `go test`.
//
// A warm cache is left alone: then only the practice module's own packages need compiling, which
// the learner's `go test` does in seconds.
package firstbuild

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/learn-tinypi/course/internal/gotest"
)

// Runner runs the go command with args in dir and returns its combined output; a non-zero exit
// is an error. Tests replace it.
type Runner func(ctx context.Context, dir string, args ...string) (string, error)

// Go is the Runner of the real go command, offline (gotest.OfflineEnv), in its own process group
// that ends with ctx (gotest.Prepare).
func Go(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gotest.OfflineEnv()...)
	finish, err := gotest.Prepare(cmd)
	if err != nil {
		return "", err
	}
	defer finish()
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return string(out), ctx.Err()
		}
		return string(out), fmt.Errorf("go %s: %w", args[0], err)
	}
	return string(out), nil
}

// listStale prints the import path of every package the tests of the package in the current
// directory need that the build cache does not hold (go list's Stale).
var listStale = []string{"list", "-deps", "-test", "-f", "{{if .Stale}}{{.ImportPath}}{{end}}", "."}

// Cold returns the packages outside module (the standard library, the course's dependencies)
// that the tests in dir need and the build cache does not hold: none when the cache is warm. The
// module's own packages are always left out: a new directory's are never cached, and compile in
// seconds.
func Cold(ctx context.Context, run Runner, dir, module string) ([]string, error) {
	out, err := run(ctx, dir, listStale...)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, firstLine(out))
	}
	var cold []string
	for line := range strings.Lines(out) {
		p := strings.TrimSpace(line)
		if p == "" || p == module || strings.HasPrefix(p, module+"/") || strings.HasPrefix(p, module+" ") || strings.HasPrefix(p, module+".") {
			continue // the module's packages, its test package "tinypi [tinypi.test]" and "tinypi.test"
		}
		cold = append(cold, p)
	}
	return cold, nil
}

// Build compiles and vets what `go test -run '^TestLabN_M_' .` needs in dir, running no test:
// afterwards the card's command finds it all in the build cache.
func Build(ctx context.Context, run Runner, dir string) error {
	out, err := run(ctx, dir, "test", "-run", "^$", ".")
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return fmt.Errorf("%w: %s", err, firstLine(out))
	}
	return nil
}

// firstLine returns the first non-empty line of out.
func firstLine(out string) string {
	for line := range strings.Lines(out) {
		if l := strings.TrimSpace(line); l != "" {
			return l
		}
	}
	return ""
}
