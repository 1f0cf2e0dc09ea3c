// Package diagnose shows what a known mistake does to a run. It applies one of a chapter's
// mutants to the chapter's target, runs the chapter's diagnosis program (cmd/diagnose, part of
// the chapter's own content) on the mutated tree and on the target itself, and prints both runs
// and a comparison.
//
// The diagnosis runs the real mutated code: nothing here imitates the mistake. The program
// prints each run round by round and ends each run with a summary line of key=value fields,
// which this package reads to build the comparison table.
package diagnose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// DriverDir is the package of the diagnosis program inside a chapter's trees.
const DriverDir = "cmd/diagnose"

// ErrNoDriver is returned for a chapter whose trees have no diagnosis program, or no mutants.
var ErrNoDriver = errors.New("no diagnosis program")

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

// List returns the mistakes of ch that can be diagnosed: its mutants, when ch's target holds the
// diagnosis program. Otherwise the error wraps ErrNoDriver.
func List(b *tree.Builder, ch *manifest.Chapter) ([]*manifest.Mutant, error) {
	target, err := b.Target(ch)
	if err != nil {
		return nil, err
	}
	if _, ok := target[DriverDir+"/main.go"]; !ok || len(ch.Mutants) == 0 {
		return nil, fmt.Errorf("chapter %s: %w (%s) or no known mistakes", ch.Number, ErrNoDriver, DriverDir)
	}
	return ch.Mutants, nil
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
	fmt.Fprintf(&out, l.listHeader+"\n", ch.Number, ch.Number)
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
func Run(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, name string, lang Language, w io.Writer) error {
	m, err := mistake(b, ch, name)
	if err != nil {
		return err
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
	wg.Go(func() { mutantRun, mutantErr = Build(ctx, mutated, filepath.Join(dir, "mutant")) })
	wg.Go(func() { targetRun, targetErr = Build(ctx, target, filepath.Join(dir, "target")) })
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

// Build writes t into dir (which must not exist or be empty) and builds its diagnosis program
// there, offline. The returned Driver runs that program; it stays usable until dir is removed.
func Build(ctx context.Context, t tree.Tree, dir string) (Driver, error) {
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
	build := exec.CommandContext(ctx, goBin, "build", "-o", bin, "./"+DriverDir)
	build.Dir = src
	build.Env = append(os.Environ(), gotest.OfflineEnv()...)
	finish, err := gotest.Prepare(build) // stopped as a whole, leaving nothing behind
	if err != nil {
		return nil, err
	}
	out, err := build.CombinedOutput()
	finish()
	if err != nil {
		return nil, fmt.Errorf("building %s: %w\n%s", DriverDir, err, out)
	}
	return func(ctx context.Context, args []string) (string, error) {
		run := exec.CommandContext(ctx, bin, args...)
		run.Dir = src
		var stdout, stderr strings.Builder
		run.Stdout, run.Stderr = &stdout, &stderr
		if err := run.Run(); err != nil {
			return "", fmt.Errorf("running %s %s: %w\n%s", DriverDir, strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String(), nil
	}, nil
}

// Diagnose runs the scenarios chosen for m on the mutated program and on the target's, and
// prints in lang the header, the mutant's runs, the target's runs, the comparison table and the
// lines in which the runs of the same scenario differ.
func Diagnose(ctx context.Context, w io.Writer, ch *manifest.Chapter, m *manifest.Mutant, lang Language, mutant, target Driver) error {
	l := textsFor(lang)
	p := planFor(m.Name)
	langFlag := []string{"-lang", string(l.lang)}
	mutantOut, err := mutant(ctx, slices.Concat(langFlag, p.mutant))
	if err != nil {
		return fmt.Errorf("mistake %s: %w", m.Name, err)
	}
	targetOut, err := target(ctx, slices.Concat(langFlag, p.target))
	if err != nil {
		return fmt.Errorf("reference: %w", err)
	}
	mutantRuns, err := parseRuns(mutantOut)
	if err != nil {
		return fmt.Errorf("mistake %s: %w", m.Name, err)
	}
	targetRuns, err := parseRuns(targetOut)
	if err != nil {
		return fmt.Errorf("reference: %w", err)
	}
	// render prints the mutant's Explain; hand it a copy that holds the explanation in lang.
	shown := *m
	shown.Explain = l.explanation(m)
	_, err = io.WriteString(w, render(l, ch, &shown, mutantRuns, targetRuns))
	return err
}

// plan is the scenarios a diagnosis runs on each side.
type plan struct {
	mutant, target []string
}

// planFor chooses, for each mistake of chapter 07, the scenarios of cmd/diagnose in which it
// shows most plainly. A mistake without a case gets a single round trip, a parallel batch and a
// truncated batch.
func planFor(name string) plan {
	same := func(scenarios ...string) plan { return plan{mutant: scenarios, target: scenarios} }
	switch name {
	case "first-call-only":
		// The dropped second call meets two kinds of model: one that answers without the
		// missing half, one that asks again until the step limit. The reference runs the
		// model that answers once it has both results.
		return plan{mutant: []string{"weather-fx-skip", "weather-fx-reask"}, target: []string{"weather-fx"}}
	case "length-runs-tools", "skipped-result-not-error":
		return same("length")
	case "results-in-completion-order":
		return same("weather-fx")
	case "caller-messages-mutated", "shallow-copy-of-messages", "two-turn-ends", "tools-from-context",
		"progress-without-call-id", "result-not-fed-back":
		return same("readme")
	case "failed-execution-unpaired":
		return same("fx-fails")
	case "no-cancel-check-after-tools":
		return same("cancel")
	case "max-steps-off-by-one":
		return same("step-limit")
	case "pre-cancel-counts-a-step":
		return same("pre-cancelled")
	case "unexpected-stop-ends-as-stop":
		return same("stop-with-calls")
	default:
		return same("readme", "weather-fx", "length")
	}
}
