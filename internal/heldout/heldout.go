// Package heldout runs a chapter's held-out evaluation cases against a learner's code. The cases
// ship in the kit only (checkpoints/heldout/NN/<case>/, the format of the chapter's evaluation
// cases plus verdict.json, the verdict the case must get); a run reports for each case only
// whether the learner's verdict agrees with it, never the case's content.
//
// The learner's directory is never written to: the cases and a test harness
// (checkpoints/heldout/heldout_test.go.txt) go to a temporary directory, and the harness joins
// the learner's package through go's -overlay for one `go test` run. The same overlay puts the
// starter's test files (the kit's copies) in place of the learner's: a test file the learner
// added or edited (a TestMain that writes the verdicts, say) does not take part in the run.
package heldout

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/learn-tinypi/course/internal/gotest"
)

// Dir is where the held-out cases of a chapter live in the course content, by chapter number
// ("14").
func Dir(chapter string) string { return path.Join("checkpoints", "heldout", chapter) }

// HarnessPath is the test harness in the course content.
const HarnessPath = "checkpoints/heldout/heldout_test.go.txt"

// HarnessName is the file name the harness takes in the package it joins: in a learner's
// package through the overlay only, where it does not exist (Run refuses a package that has a
// file of that name rather than hide it), and in the build of dev check's mutants.
const HarnessName = "zz_course_heldout_test.go"

// Verdict is what a case's judgement must be (verdict.json): whether it passes, the names of the
// checks that fail in the order of the checks, how the run ended, its steps and tokens.
type Verdict struct {
	Pass   bool     `json:"pass"`
	Failed []string `json:"failed"`
	Reason string   `json:"reason"`
	Steps  int      `json:"steps"`
	Tokens int      `json:"tokens"`
}

// Case is one held-out case.
type Case struct {
	Name string // its directory name
	Want Verdict
	// Catches are the chapter's mutants (known wrong solutions) on which the case's verdict must
	// differ from Want: course dev check proves it, and that there are at least MinCatches.
	Catches []string
}

// MinCatches is how many wrong solutions each held-out case must catch.
const MinCatches = 3

// verdictFile is verdict.json.
type verdictFile struct {
	Verdict
	Catches []string `json:"catches"`
}

// Load returns the held-out cases of chapter in content, in the order of their names; none (and no
// error) when the chapter has none.
func Load(content fs.FS, chapter string) ([]Case, error) {
	entries, err := fs.ReadDir(content, Dir(chapter))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("held-out cases of chapter %s: %w", chapter, err)
	}
	var cases []Case
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(content, path.Join(Dir(chapter), e.Name(), "verdict.json"))
		if err != nil {
			return nil, fmt.Errorf("held-out case %s: %w", e.Name(), err)
		}
		var v verdictFile
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("held-out case %s: verdict.json: %w", e.Name(), err)
		}
		if v.Failed == nil {
			v.Failed = []string{}
		}
		cases = append(cases, Case{Name: e.Name(), Want: v.Verdict, Catches: v.Catches})
	}
	return cases, nil
}

// Outcome is the result of one case: whether the learner's verdict agrees with the right one, and
// when there was no verdict, why (a lab's pending message, or that the case could not run).
type Outcome struct {
	Case    string
	Agrees  bool
	Problem string
}

// ErrBuild is returned (wrapped, with go's output) when the learner's package does not build with
// the harness.
var ErrBuild = errors.New("the package does not build")

// Options says how Run runs.
type Options struct {
	// Env is added to go's environment (the kit's offline settings, for one).
	Env []string
	// Timeout bounds the whole go test run.
	Timeout time.Duration
	// TestFiles, when not nil, are the test files (*_test.go at the top of the package) the run
	// uses, by name: the starter's, as the kit has them. Every other test file of the package is
	// left out of the run, and one of these that the learner changed or deleted is used as given.
	TestFiles map[string][]byte
}

// DifferentTestFiles returns the names of the test files (*_test.go at the top of moduleDir)
// that are not as in starter, sorted: added, changed or deleted. HarnessName is not one.
func DifferentTestFiles(moduleDir string, starter map[string][]byte) ([]string, error) {
	present, err := packageTestFiles(moduleDir)
	if err != nil {
		return nil, err
	}
	var differ []string
	for _, name := range present {
		want, ok := starter[name]
		if !ok {
			differ = append(differ, name)
			continue
		}
		got, err := os.ReadFile(filepath.Join(moduleDir, name))
		if err != nil || !bytes.Equal(got, want) {
			differ = append(differ, name)
		}
	}
	for name := range starter {
		if !slices.Contains(present, name) {
			differ = append(differ, name)
		}
	}
	slices.Sort(differ)
	return differ, nil
}

// packageTestFiles lists the *_test.go files at the top of dir, but HarnessName.
func packageTestFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, "_test.go") && name != HarnessName {
			names = append(names, name)
		}
	}
	return names, nil
}

// Harness is the test harness (HarnessName in the package it joins): TestHeldoutCases runs every
// case in $TINYPI_HELDOUT_DIR and writes one JSON line per case to $TINYPI_HELDOUT_OUT, and skips
// when they are not set.
func Harness(content fs.FS) ([]byte, error) {
	return fs.ReadFile(content, HarnessPath)
}

// Run runs cases (of chapter, in content) against the Go package in moduleDir and returns one
// outcome per case, in the order of cases. The harness joins the package through -overlay.
func Run(ctx context.Context, content fs.FS, chapter string, cases []Case, moduleDir string, opts Options) ([]Outcome, error) {
	if _, err := os.Lstat(filepath.Join(moduleDir, HarnessName)); err == nil {
		return nil, fmt.Errorf("%s already exists in %s; the held-out run needs the name", HarnessName, moduleDir)
	}
	return judgeCases(content, chapter, cases, func(tmp string, env []string) (*gotest.Report, error) {
		harness, err := Harness(content)
		if err != nil {
			return nil, err
		}
		harnessFile := filepath.Join(tmp, HarnessName)
		if err := os.WriteFile(harnessFile, harness, 0o644); err != nil {
			return nil, err
		}
		absModule, err := filepath.Abs(moduleDir)
		if err != nil {
			return nil, err
		}
		replace := map[string]string{filepath.Join(absModule, HarnessName): harnessFile}
		if opts.TestFiles != nil {
			// Only the starter's test files take part: the learner's own are replaced by the
			// kit's copies, and the ones the learner added are left out ("" deletes a file).
			present, err := packageTestFiles(moduleDir)
			if err != nil {
				return nil, err
			}
			for _, name := range present {
				replace[filepath.Join(absModule, name)] = ""
			}
			for name, data := range opts.TestFiles {
				if name != filepath.Base(name) || !strings.HasSuffix(name, "_test.go") || name == HarnessName {
					return nil, fmt.Errorf("held-out run: %q is not a test file at the top of the package", name)
				}
				copyFile := filepath.Join(tmp, "starter", name)
				if err := os.MkdirAll(filepath.Dir(copyFile), 0o755); err != nil {
					return nil, err
				}
				if err := os.WriteFile(copyFile, data, 0o644); err != nil {
					return nil, err
				}
				replace[filepath.Join(absModule, name)] = copyFile
			}
		}
		overlay, err := json.Marshal(map[string]map[string]string{"Replace": replace})
		if err != nil {
			return nil, err
		}
		overlayFile := filepath.Join(tmp, "overlay.json")
		if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
			return nil, err
		}
		return gotest.Run(ctx, gotest.Options{Dir: moduleDir, Run: "^TestHeldoutCases$", Overlay: overlayFile,
			Fresh: true, Env: append(slices.Clone(opts.Env), env...), Timeout: opts.Timeout, SkipTestVet: true, Unoptimized: true})
	})
}

// RunBinary is Run with a test binary already built from a package that holds the harness
// (HarnessName): bin, run in dir. Course dev check builds one for all of a chapter's mutants.
func RunBinary(ctx context.Context, content fs.FS, chapter string, cases []Case, dir, bin string, opts Options) ([]Outcome, error) {
	return judgeCases(content, chapter, cases, func(_ string, env []string) (*gotest.Report, error) {
		return gotest.Run(ctx, gotest.Options{Dir: dir, Binary: bin, Run: "^TestHeldoutCases$", Fresh: true,
			Env: append(slices.Clone(opts.Env), env...), Timeout: opts.Timeout})
	})
}

// judgeCases writes cases into a new temporary directory, calls test with it and the
// environment that points the harness at the cases and its output, and judges what the harness
// wrote. The directory is removed at the end.
func judgeCases(content fs.FS, chapter string, cases []Case, test func(tmp string, env []string) (*gotest.Report, error)) ([]Outcome, error) {
	tmp, err := os.MkdirTemp("", "course-heldout-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	casesDir := filepath.Join(tmp, "cases")
	for _, c := range cases {
		sub, err := fs.Sub(content, path.Join(Dir(chapter), c.Name))
		if err != nil {
			return nil, err
		}
		if err := os.CopyFS(filepath.Join(casesDir, c.Name), sub); err != nil {
			return nil, fmt.Errorf("held-out case %s: %w", c.Name, err)
		}
		// The right verdict stays with the kit: code under test that looks for it finds nothing.
		if err := os.Remove(filepath.Join(casesDir, c.Name, "verdict.json")); err != nil {
			return nil, fmt.Errorf("held-out case %s: %w", c.Name, err)
		}
	}
	outFile := filepath.Join(tmp, "outcomes.jsonl")
	report, err := test(tmp, []string{"TINYPI_HELDOUT_DIR=" + casesDir, "TINYPI_HELDOUT_OUT=" + outFile})
	if err != nil {
		return nil, err
	}
	if report.BuildFailed {
		return nil, fmt.Errorf("%w:\n%s", ErrBuild, report.BuildOutput)
	}
	got, err := readOutcomes(outFile)
	if err != nil {
		return nil, err
	}
	outcomes := make([]Outcome, 0, len(cases))
	for _, c := range cases {
		outcomes = append(outcomes, judge(c, got[c.Name]))
	}
	return outcomes, nil
}

// harnessOutcome is one line the harness writes.
type harnessOutcome struct {
	Case   string   `json:"case"`
	Pass   bool     `json:"pass"`
	Failed []string `json:"failed"`
	Reason string   `json:"reason"`
	Steps  int      `json:"steps"`
	Tokens int      `json:"tokens"`
	Error  string   `json:"error"`
	Panic  string   `json:"panic"`
}

// maxOutcomeBytes bounds the harness's output file: a few lines per case.
const maxOutcomeBytes = 1 << 20

// readOutcomes reads the harness's lines, by case.
func readOutcomes(file string) (map[string]*harnessOutcome, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*harnessOutcome{}, nil // the harness did not get to write: every case has no verdict
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]*harnessOutcome{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxOutcomeBytes)
	for sc.Scan() {
		var o harnessOutcome
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			return nil, fmt.Errorf("held-out run: %w", err)
		}
		out[o.Case] = &o
	}
	return out, sc.Err()
}

// pendingRE finds a stub's pending message.
var pendingRE = regexp.MustCompile(`Lab \d+\.\d+ .*?尚未实现`)

// judge compares what the learner's code gave for c with c's verdict.
func judge(c Case, got *harnessOutcome) Outcome {
	o := Outcome{Case: c.Name}
	switch {
	case got == nil:
		o.Problem = "no verdict"
	case got.Panic != "":
		if msg := pendingRE.FindString(got.Panic); msg != "" {
			o.Problem = msg
		} else {
			o.Problem = "panic"
		}
	case got.Error != "":
		if msg := pendingRE.FindString(got.Error); msg != "" {
			o.Problem = msg
		} else {
			o.Problem = "no verdict"
		}
	default:
		if got.Failed == nil {
			got.Failed = []string{}
		}
		o.Agrees = got.Pass == c.Want.Pass && slices.Equal(got.Failed, c.Want.Failed) && got.Reason == c.Want.Reason &&
			got.Steps == c.Want.Steps && got.Tokens == c.Want.Tokens
	}
	return o
}
