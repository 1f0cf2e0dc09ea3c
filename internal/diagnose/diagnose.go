// Package diagnose shows what a known mistake does to a run. It applies one of a chapter's
// mutants to the chapter's target, runs the chapter's diagnosis program (cmd/diagnose, part of
// the chapter's own content) on the mutated tree and on the target itself, and prints both runs
// and a comparison.
//
// Which program, which scenarios it knows and which of them show each mistake are data: the
// chapter manifest's diagnosis: block and each mutant's diagnose: and diagnose_reference:
// (docs/authoring.md). The diagnosis runs the real mutated code: nothing here imitates the
// mistake. The program is run with -json and prints one JSON object a run, holding the lines a
// person reads and the facts of the comparison table.
package diagnose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// ErrNoDriver is returned for a chapter without known mistakes (mutants): there is nothing to
// diagnose. A chapter with mutants but no diagnosis program is diagnosed by its lab's tests
// (labtests.go).
var ErrNoDriver = errors.New("no known mistakes")

// UnknownMistakeError reports a mistake name that the chapter does not have. Its message lists
// the names it has.
type UnknownMistakeError struct {
	Chapter string
	Name    string
	// Mutants are the chapter's mistakes, in manifest order.
	Mutants []*manifest.Mutant
}

func (e *UnknownMistakeError) Error() string {
	names := make([]string, len(e.Mutants))
	for i, m := range e.Mutants {
		names[i] = m.Name
	}
	return fmt.Sprintf("chapter %s has no mistake %q; available: %s", e.Chapter, e.Name, strings.Join(names, ", "))
}

// List returns the mistakes of ch that can be diagnosed: its mutants. A chapter without mutants
// gives an error that wraps ErrNoDriver; so does one whose manifest names a diagnosis program
// that its target does not hold (a broken course, which dev check refuses).
func List(b *tree.Builder, ch *manifest.Chapter) ([]*manifest.Mutant, error) {
	if len(ch.Mutants) == 0 {
		return nil, fmt.Errorf("chapter %s: %w", ch.Number, ErrNoDriver)
	}
	if ch.Diagnosis == nil {
		return ch.Mutants, nil
	}
	target, err := b.Target(ch)
	if err != nil {
		return nil, err
	}
	if !hasProgram(target, ch.Diagnosis.Program) {
		return nil, fmt.Errorf("chapter %s: %w: its target has no %s", ch.Number, ErrNoDriver, ch.Diagnosis.Program)
	}
	return ch.Mutants, nil
}

// hasProgram reports whether t holds a Go file directly in the directory program.
func hasProgram(t tree.Tree, program string) bool {
	for name := range t {
		if path.Dir(name) == program && strings.HasSuffix(name, ".go") {
			return true
		}
	}
	return false
}

// WriteList prints the mistakes of ch that can be diagnosed, one a line with its lab and
// explanation, in lang.
func WriteList(w io.Writer, b *tree.Builder, ch *manifest.Chapter, lang Language) error {
	mutants, err := List(b, ch)
	if err != nil {
		return err
	}
	l := textsFor(lang)
	width := 0
	for _, m := range mutants {
		width = max(width, len(m.Name))
	}
	var out strings.Builder
	if ch.Diagnosis == nil {
		out.WriteString(l.text("list.header.tests", ch.Number, ch.Number) + "\n")
	} else {
		out.WriteString(l.text("list.header", ch.Number, ch.Number) + "\n")
	}
	for _, m := range mutants {
		fmt.Fprintf(&out, "  %-*s  Lab %-4s  %s\n", width, m.Name, m.Lab, l.explanation(m))
	}
	_, err = io.WriteString(w, out.String())
	return err
}

// Run diagnoses the mistake name of chapter ch: it builds the diagnosis program of the mutated
// tree and of ch's target in a temporary directory (removed afterwards), runs the scenarios that
// show the mistake best on both, and prints the runs and their comparison to w in lang. It needs
// the go command (gotest.ErrNoGo without it) and works offline.
//
// A chapter without a diagnosis program is diagnosed by its tests instead (RunLabTests).
func Run(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, name string, lang Language, w io.Writer) error {
	m, err := mistake(b, ch, name)
	if err != nil {
		return err
	}
	if ch.Diagnosis == nil {
		return RunLabTests(ctx, b, ch, m, lang, w)
	}
	mutated, err := b.Mutant(ch, m)
	if err != nil {
		return err
	}
	target, err := b.Target(ch)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "course-diagnose-")
	if err != nil {
		return fmt.Errorf("creating a temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)

	// The two builds are independent; running them together halves the wait.
	var (
		wg                   sync.WaitGroup
		mutantRun, targetRun Driver
		mutantErr, targetErr error
	)
	program := ch.Diagnosis.Program
	wg.Go(func() { mutantRun, mutantErr = Build(ctx, mutated, program, filepath.Join(dir, "mutant")) })
	wg.Go(func() { targetRun, targetErr = Build(ctx, target, program, filepath.Join(dir, "target")) })
	wg.Wait()
	if err := errors.Join(mutantErr, targetErr); err != nil {
		return err
	}
	return Diagnose(ctx, w, ch, m, lang, mutantRun, targetRun)
}

// mistake finds the mutant name of ch.
func mistake(b *tree.Builder, ch *manifest.Chapter, name string) (*manifest.Mutant, error) {
	mutants, err := List(b, ch)
	if err != nil {
		return nil, err
	}
	for _, m := range mutants {
		if m.Name == name {
			return m, nil
		}
	}
	return nil, &UnknownMistakeError{Chapter: ch.Number, Name: name, Mutants: mutants}
}

// Driver runs a built diagnosis program with the given arguments (flags, then scenario names)
// and returns what it printed.
type Driver func(ctx context.Context, args []string) (string, error)

// Build writes t into dir (which must not exist or be empty) and builds its diagnosis program,
// the main package in the directory program of t, there, offline. The returned Driver runs that
// program; it stays usable until dir is removed.
func Build(ctx context.Context, t tree.Tree, program, dir string) (Driver, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, gotest.ErrNoGo
		}
		return nil, fmt.Errorf("looking for the go command: %w", err)
	}
	src := filepath.Join(dir, "src")
	if err := t.Write(src); err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "diagnose")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.CommandContext(ctx, goBin, "build", "-o", bin, "./"+program)
	build.Dir = src
	build.Env = append(os.Environ(), gotest.OfflineEnv()...)
	finish, err := gotest.Prepare(build) // stopped as a whole, leaving nothing behind
	if err != nil {
		return nil, err
	}
	out, err := build.CombinedOutput()
	finish()
	if err != nil {
		return nil, fmt.Errorf("building %s: %w\n%s", program, err, out)
	}
	return func(ctx context.Context, args []string) (string, error) {
		run := exec.CommandContext(ctx, bin, args...)
		run.Dir = src
		var stdout, stderr strings.Builder
		run.Stdout, run.Stderr = &stdout, &stderr
		if err := run.Run(); err != nil {
			return "", fmt.Errorf("running %s %s: %w\n%s", program, strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String(), nil
	}, nil
}

// Diagnose runs the scenarios ch's manifest chooses for m on the mutated program and on the
// target's, and prints in lang the header, the mutant's runs, the target's runs, the comparison
// table and the lines in which the runs of the same scenario differ.
func Diagnose(ctx context.Context, w io.Writer, ch *manifest.Chapter, m *manifest.Mutant, lang Language, mutant, target Driver) error {
	if ch.Diagnosis == nil {
		return fmt.Errorf("chapter %s: %w", ch.Number, ErrNoDriver)
	}
	l := textsFor(lang)
	mutantScenarios, targetScenarios := m.Scenarios(ch.Diagnosis)
	flags := []string{"-lang", string(l.lang), "-json"}
	mutantOut, err := mutant(ctx, slices.Concat(flags, mutantScenarios))
	if err != nil {
		return fmt.Errorf("mistake %s: %w", m.Name, err)
	}
	targetOut, err := target(ctx, slices.Concat(flags, targetScenarios))
	if err != nil {
		return fmt.Errorf("reference: %w", err)
	}
	mutantRuns, err := decodeRuns(mutantOut)
	if err != nil {
		return fmt.Errorf("mistake %s: %w", m.Name, err)
	}
	targetRuns, err := decodeRuns(targetOut)
	if err != nil {
		return fmt.Errorf("reference: %w", err)
	}
	_, err = io.WriteString(w, render(l, ch, m, mutantRuns, targetRuns))
	return err
}

// Check proves that ch's diagnosis data matches its program: the target's program builds and
// its -list prints exactly the scenarios the manifest's diagnosis: block names, in that order.
// A chapter without a diagnosis passes. It needs the go command; dir is a scratch directory.
func Check(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, dir string) error {
	if ch.Diagnosis == nil {
		return nil
	}
	target, err := b.Target(ch)
	if err != nil {
		return err
	}
	if !hasProgram(target, ch.Diagnosis.Program) {
		return fmt.Errorf("diagnosis: program %s is not in the chapter's target", ch.Diagnosis.Program)
	}
	driver, err := Build(ctx, target, ch.Diagnosis.Program, dir)
	if err != nil {
		return err
	}
	out, err := driver(ctx, []string{"-list"})
	if err != nil {
		return err
	}
	if got := strings.Fields(out); !slices.Equal(got, ch.Diagnosis.Scenarios) {
		return fmt.Errorf("diagnosis: %s -list prints %v, but the manifest lists %v", ch.Diagnosis.Program, got, ch.Diagnosis.Scenarios)
	}
	return nil
}
