package carry

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/labsrc"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/progress"
)

// ProofChapters returns the chapters whose focused tests prove carried code for chapter to:
// every chapter in to's trees except to itself and the observe chapters that observe it (their
// tests run to's code, which its starter stubs), in course order.
func ProofChapters(c *manifest.Course, to *manifest.Chapter) []*manifest.Chapter {
	var out []*manifest.Chapter
	for _, ch := range c.TreeChapters(to) {
		if ch == to || c.Observed(ch) == to {
			continue
		}
		out = append(out, ch)
	}
	return out
}

// ProofOptions tunes Plan.Prove.
type ProofOptions struct {
	// TestTimeout bounds each focused test (gotest.Options.TestTimeout); 0 means no limit.
	TestTimeout time.Duration
}

// Proof is the outcome of running the earlier chapters' focused tests on the combined tree.
type Proof struct {
	Chapters []*manifest.Chapter // the chapters whose tests ran (ProofChapters)
	// Skipped is true when nothing of the learner's was carried: the tree is the reference's,
	// which the kit's own checks prove.
	Skipped bool
	// RaceUnavailable, when not empty, is what go said when -race could not be used on this
	// machine (it needs cgo and a C compiler); the tests then ran without it.
	RaceUnavailable string
	Report          *gotest.Report
	// Failure is the first thing that failed; nil when every test passed. When
	// Report.Environment is set the machine failed the run, and Failure is nil: nothing is known
	// about the code.
	Failure *Failure
}

// Failure is what stopped a proof.
type Failure struct {
	// Chapter and Lab are those of the first failing test; nil when the build failed.
	Chapter *manifest.Chapter
	Lab     *manifest.Lab
	// Learner is true when Lab's code is the learner's (carried), false when it is the
	// reference's (the learner's code elsewhere broke it).
	Learner bool
	Test    string // the failing test; "" when the lab's tests did not run
	Message string // its first failure message, with the lines of a diff that carry the difference
	// Build is what go said when the combined tree did not build; BuildLab is the carried lab
	// whose code the first error points into ("" when it points elsewhere).
	Build    string
	BuildLab string
	// Output is what go test said outside the tests when it failed although every focused test
	// passed (a failing TestMain, another test).
	Output string
}

// raceUnavailableRE matches what go says when the race detector cannot be used.
var raceUnavailableRE = regexp.MustCompile(`-race requires cgo|C compiler "[^"]*" not found|race detector is not supported|-race is not supported`)

// Prove writes the combined tree into a temporary directory (removed afterwards) and runs the
// focused tests of ProofChapters there with -race, as `go test -race -run ... .` would. The
// error is for a run that could not happen (go missing, ctx ended); failing tests are in the
// proof.
func (p *Plan) Prove(ctx context.Context, opts ProofOptions) (*Proof, error) {
	c := p.b.Course()
	proof := &Proof{Chapters: ProofChapters(c, p.To)}
	if len(p.Carried()) == 0 && len(p.Helpers) == 0 {
		proof.Skipped = true
		return proof, nil
	}
	var labs []*manifest.Lab
	for _, ch := range proof.Chapters {
		labs = append(labs, ch.Labs...)
	}
	dir, err := os.MkdirTemp("", "course-from-")
	if err != nil {
		return nil, fmt.Errorf("creating a directory for the proof: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := p.Starter.Fill(ctx, dir, nil); err != nil {
		return nil, fmt.Errorf("writing the combined code for the proof: %w", err)
	}
	run := gotest.Options{Dir: dir, Run: runPattern(labs), Race: true, Fresh: true, TestTimeout: opts.TestTimeout,
		Packages: manifest.LabPackages(labs)}
	report, err := gotest.Run(ctx, run)
	if err != nil {
		return nil, err
	}
	if report.BuildFailed {
		if m := raceUnavailableRE.FindString(report.BuildOutput); m != "" {
			proof.RaceUnavailable = m
			run.Race = false
			if report, err = gotest.Run(ctx, run); err != nil {
				return nil, err
			}
		}
	}
	proof.Report = report
	if report.Environment == "" {
		proof.Failure = p.failure(report, proof.Chapters)
	}
	return proof, nil
}

// runPattern is the -run pattern that selects the tests of labs.
func runPattern(labs []*manifest.Lab) string {
	patterns := make([]string, len(labs))
	for i, l := range labs {
		patterns[i] = l.Pattern
	}
	return strings.Join(patterns, "|")
}

// failure returns what failed in report, nil when nothing did.
func (p *Plan) failure(report *gotest.Report, chapters []*manifest.Chapter) *Failure {
	if report.BuildFailed {
		return &Failure{Build: report.BuildOutput, BuildLab: p.buildLab(report.BuildOutput)}
	}
	carried := p.Carried()
	for _, ch := range chapters {
		for _, lab := range ch.Labs {
			tests := progress.LabTests(lab, report)
			passed, total := progress.Count(lab, tests)
			if passed == total {
				continue
			}
			f := &Failure{Chapter: ch, Lab: lab, Learner: slices.Contains(carried, lab.ID)}
			for _, t := range tests {
				if !t.Passed {
					f.Test, f.Message = t.Name, t.FirstFailure
					if len(t.Difference) > 0 {
						f.Message += " " + strings.Join(t.Difference, " ")
					}
					break
				}
			}
			return f
		}
	}
	if report.ExitCode != 0 {
		return &Failure{Output: report.BuildOutput}
	}
	return nil
}

// buildErrorRE matches the position of a compile error: "./agentloop.go:123:4: ...".
var buildErrorRE = regexp.MustCompile(`(?m)^(?:\./)?([^\s:]+\.go):(\d+)(?::\d+)?: `)

// buildLab returns the carried lab whose region holds the first compile error of output that is
// in a carried region, "" when none is.
func (p *Plan) buildLab(output string) string {
	carried := p.Carried()
	for _, m := range buildErrorRE.FindAllStringSubmatch(output, -1) {
		src, ok := p.Starter[m[1]]
		if !ok {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		regions, err := labsrc.Regions(src)
		if err != nil {
			continue
		}
		for _, r := range regions {
			if r.StartLine < line && line < r.EndLine && slices.Contains(carried, r.Lab) {
				return r.Lab
			}
		}
	}
	return ""
}
