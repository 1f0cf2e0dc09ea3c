// Package progress derives a learner's progress from the focused tests of a practice directory
// and keeps it in .course/progress.json, so that `course status`, `course next` and `course watch`
// know where the learner is after a restart.
//
// A lab is in one of three states, decided by its focused tests in the last run that reached it:
//
//   - done: every test of the lab ran (at least the number the manifest states) and passed;
//   - not started: every test of the lab ran and failed first with the pending message of a
//     stub, the lab's own or an earlier lab's of the same chapter (which its tests pass
//     through): the code the lab's tests reach is still the starter's;
//   - red: anything else (some test failed with another message, or a test did not run).
//
// A run whose build failed says nothing about any lab: it keeps the states of the run before,
// and records only that the build failed.
package progress

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/learn-tinypi/course/internal/atomicfile"
	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
)

// Path is where the progress of a practice directory is kept, relative to its root.
const Path = ".course/progress.json"

// State is what the tests say about one lab.
type State string

// The states of a lab.
const (
	Done       State = "done"
	Red        State = "red"
	NotStarted State = "not_started"
)

// Lab is one lab's outcome in the last run that reached it.
type Lab struct {
	ID     string `json:"id"`
	State  State  `json:"state"`
	Passed int    `json:"passed"`
	Total  int    `json:"total"`
	// FirstFailure is the first failing test and its first message, "TestLab7_1_X: message".
	FirstFailure string `json:"first_failure,omitempty"`
}

// Progress is the content of .course/progress.json.
type Progress struct {
	Chapter string `json:"chapter"`
	// RanAt is when the last run started. A file changed after it may not be in the results.
	RanAt time.Time `json:"ran_at"`
	// BuildFailed is true when the last run did not compile; the labs keep their earlier states.
	BuildFailed bool `json:"build_failed,omitempty"`
	// Labs are in the chapter's order; a lab that no run has reached yet is missing.
	Labs []Lab `json:"labs"`
}

// Lab returns the record of the lab with id, and whether there is one.
func (p *Progress) Lab(id string) (Lab, bool) {
	if p == nil {
		return Lab{}, false
	}
	for _, l := range p.Labs {
		if l.ID == id {
			return l, true
		}
	}
	return Lab{}, false
}

// Next returns the first lab of ch, in order, that is not done; nil when every lab is done.
func (p *Progress) Next(ch *manifest.Chapter) *manifest.Lab {
	for _, lab := range ch.Labs {
		if l, ok := p.Lab(lab.ID); !ok || l.State != Done {
			return lab
		}
	}
	return nil
}

// DoneCount returns how many labs of ch are done.
func (p *Progress) DoneCount(ch *manifest.Chapter) int {
	n := 0
	for _, lab := range ch.Labs {
		if l, ok := p.Lab(lab.ID); ok && l.State == Done {
			n++
		}
	}
	return n
}

// FromReport derives the progress of the labs a run covered from its report. ranAt is when the
// run started. When the build failed, Labs is empty and BuildFailed is set.
func FromReport(ch *manifest.Chapter, labs []*manifest.Lab, report *gotest.Report, ranAt time.Time) Progress {
	p := Progress{Chapter: ch.Number, RanAt: ranAt.UTC(), BuildFailed: report.BuildFailed}
	if report.BuildFailed {
		return p
	}
	for _, lab := range labs {
		p.Labs = append(p.Labs, Evaluate(ch, lab, report))
	}
	return p
}

// LabTests returns the top-level tests of report that lab's pattern selects, in the order they
// started; nil when the pattern does not compile (the manifest validates patterns). It is the
// one place that picks a lab's tests from a run: `course test`, `course status`, the progress
// file, the known-mistake signatures and the kit's own checks all count through it, and a test
// counts as passed only when gotest says it reported its own pass.
func LabTests(lab *manifest.Lab, report *gotest.Report) []gotest.TestResult {
	re, err := regexp.Compile(lab.Pattern)
	if err != nil {
		return nil
	}
	var tests []gotest.TestResult
	for _, t := range report.Tests {
		if !strings.Contains(t.Name, "/") && re.MatchString(t.Name) {
			tests = append(tests, t)
		}
	}
	return tests
}

// Count returns how many of tests (a lab's, from LabTests) passed, and how many the lab counts:
// the number the manifest states, or more when more ran. A test that did not run counts as
// not passed.
func Count(lab *manifest.Lab, tests []gotest.TestResult) (passed, total int) {
	for _, t := range tests {
		if t.Passed {
			passed++
		}
	}
	return passed, max(len(tests), lab.Tests)
}

// Evaluate decides lab's state from report: what `course test` and `course status` show.
func Evaluate(ch *manifest.Chapter, lab *manifest.Lab, report *gotest.Report) Lab {
	l := Lab{ID: lab.ID}
	if _, err := regexp.Compile(lab.Pattern); err != nil { // defence only
		l.State, l.Total, l.FirstFailure = Red, lab.Tests, err.Error()
		return l
	}
	pending := pendingMessages(ch, lab)
	tests := LabTests(lab, report)
	runs, stubbed := len(tests), 0
	l.Passed, l.Total = Count(lab, tests)
	for _, t := range tests {
		if t.Passed {
			continue
		}
		if l.FirstFailure == "" {
			l.FirstFailure = t.Name
			if t.FirstFailure != "" {
				l.FirstFailure += ": " + t.FirstFailure
			}
		}
		if t.Failed && containsAny(t.FirstFailure, pending) {
			stubbed++
		}
	}
	switch {
	case runs >= lab.Tests && l.Passed == l.Total && l.Total > 0:
		l.State = Done
	case runs >= lab.Tests && runs > 0 && stubbed == runs:
		l.State = NotStarted
	default:
		l.State = Red
	}
	return l
}

// pendingMessages returns the pending messages of lab and of every lab of ch before it.
func pendingMessages(ch *manifest.Chapter, lab *manifest.Lab) []string {
	var msgs []string
	for _, l := range ch.Labs {
		msgs = append(msgs, l.PendingMessage())
		if l.ID == lab.ID {
			return msgs
		}
	}
	return append(msgs, lab.PendingMessage())
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// Merge returns old updated with run: the labs run covers take its records, the others keep
// theirs; the result lists labs in ch's order. old may be nil, or of another chapter (then it
// is ignored).
func Merge(ch *manifest.Chapter, old *Progress, run Progress) Progress {
	merged := Progress{Chapter: ch.Number, RanAt: run.RanAt, BuildFailed: run.BuildFailed}
	if old != nil && old.Chapter != ch.Number {
		old = nil
	}
	for _, lab := range ch.Labs {
		if l, ok := run.Lab(lab.ID); ok {
			merged.Labs = append(merged.Labs, l)
		} else if l, ok := old.Lab(lab.ID); ok {
			merged.Labs = append(merged.Labs, l)
		}
	}
	return merged
}

// Distrust turns every done lab of p red, with reason as its first failure: the run cannot prove
// a lab done (for example because the focused tests were edited).
func (p *Progress) Distrust(reason string) {
	for i := range p.Labs {
		if p.Labs[i].State == Done {
			p.Labs[i].State, p.Labs[i].FirstFailure = Red, reason
		}
	}
}

// HintLabs returns the ids of the labs of p whose hint `course test` shows: the first lab that is
// not done, and every other red lab. A lab still at its stub past the first is left out: its
// hint is for later.
func HintLabs(p Progress) []string {
	var ids []string
	first := true
	for _, l := range p.Labs {
		if l.State == Done {
			continue
		}
		if first || l.State == Red {
			ids = append(ids, l.ID)
		}
		first = false
	}
	return ids
}

// Load reads the progress of the practice directory root. When there is none the error wraps
// fs.ErrNotExist.
func Load(root string) (*Progress, error) {
	file := filepath.Join(root, filepath.FromSlash(Path))
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the progress: %w", err)
	}
	var p Progress
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	return &p, nil
}

// Save writes p as the progress of the practice directory root, atomically (atomicfile.Write): a
// reader never sees half a file and a failure keeps the old progress.
func Save(root string, p Progress) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the progress: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(root, filepath.FromSlash(Path)), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("saving the progress: %w", err)
	}
	return nil
}

// Stale reports whether p may no longer describe the practice directory root: a file outside
// .git and .course was modified after p's run started.
func Stale(root string, p *Progress) (bool, error) {
	stale := errors.New("stale")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == ".git" || d.Name() == ".course") {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.ModTime().After(p.RanAt) {
			return stale
		}
		return nil
	})
	if errors.Is(err, stale) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("checking the progress of %s: %w", root, err)
	}
	return false, nil
}
