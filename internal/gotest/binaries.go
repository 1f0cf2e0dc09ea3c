package gotest

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TestBinary is the test binary of one package, built by CompileEach.
type TestBinary struct {
	ImportPath string // the package's import path: what its runs report as TestResult.Package
	Dir        string // the package's directory, where its tests run, as go test runs them
	Path       string // the binary
}

// CompileEach builds, into outDir, the test binary of every package of opts.Packages (default
// ".") that has test files, with opts's build options (Race, Unoptimized, Overlay, Env and the
// tags), for repeated runs of a whole module through RunEach: `go test ./...` links every
// package's test binary again on every run, which for a chapter's tree cost more than its tests.
// Like `go test -c` it runs no vet check. A build that fails is reported as Compile reports one,
// with no binaries.
func CompileEach(ctx context.Context, opts Options, outDir string) ([]TestBinary, *Report, error) {
	goBin, err := goCommand()
	if err != nil {
		return nil, nil, err
	}
	pkgs := opts.Packages
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	// The import path and directory of each package with tests, one per line.
	list := append(append([]string{"list"}, tagArgs(opts)...),
		"-f", `{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{"\t"}}{{.Dir}}{{end}}`)
	out, code, err := run(ctx, goBin, opts, append(list, pkgs...))
	if err != nil {
		return nil, nil, err
	}
	if code != 0 {
		return nil, &Report{ExitCode: code, BuildFailed: true, BuildOutput: out, Environment: EnvironmentCause(out)}, nil
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("compiling test binaries: %w", err)
	}
	var bins []TestBinary
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		path, dir, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		bin := TestBinary{ImportPath: path, Dir: dir, Path: filepath.Join(outDir, fmt.Sprintf("%03d.test", len(bins)))}
		one := opts
		one.Dir = dir
		report, err := Compile(ctx, one, bin.Path)
		if err != nil {
			return nil, nil, err
		}
		if report.BuildFailed {
			return nil, report, nil
		}
		bins = append(bins, bin)
	}
	return bins, &Report{}, nil
}

// RunEach runs the test binaries that CompileEach built, one after the other, each in its
// package's directory, and reports them together as one `go test` of those packages would:
// every package's tests (their Package set), the first non-zero exit code, and whatever the
// runs said outside their tests. Options apply as to a run of Options.Binary (its Dir and
// Binary are each binary's own).
func RunEach(ctx context.Context, opts Options, bins []TestBinary) (*Report, error) {
	all := &Report{}
	for _, bin := range bins {
		one := opts
		one.Dir, one.Binary, one.BinaryPackage = bin.Dir, bin.Path, bin.ImportPath
		r, err := Run(ctx, one)
		if err != nil {
			return nil, err
		}
		all.merge(r)
	}
	return all, nil
}

// merge adds the outcome of another package's run to r.
func (r *Report) merge(o *Report) {
	r.Tests = append(r.Tests, o.Tests...)
	r.BuildFailed = r.BuildFailed || o.BuildFailed
	r.BuildOutput += o.BuildOutput
	if r.ExitCode == 0 {
		r.ExitCode = o.ExitCode
	}
	r.Exits = append(r.Exits, o.Exits...)
	r.VetFailed = r.VetFailed || o.VetFailed
	r.VetOutput += o.VetOutput
	for name, c := range o.Runs {
		if r.Runs == nil {
			r.Runs = map[string]RunCount{}
		}
		sum := r.Runs[name]
		if sum.FirstFailure == "" {
			sum.FirstFailure = c.FirstFailure
		}
		sum.Passed += c.Passed
		sum.Failed += c.Failed
		r.Runs[name] = sum
	}
	r.TimedOut = cmp.Or(r.TimedOut, o.TimedOut)
	r.Environment = cmp.Or(r.Environment, o.Environment)
}
