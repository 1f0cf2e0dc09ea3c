package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/carry"
	"github.com/learn-tinypi/course/internal/firstbuild"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
)

// practiceCommand is `course practice NN DIR`.
func (a *app) practiceCommand() *cobra.Command {
	var from string
	c := &cobra.Command{
		Use:     "practice NN DIR",
		Short:   a.p.text("practice.short"),
		Long:    a.p.text("practice.long"),
		Example: a.p.text("practice.example"),
		Args:    a.argsRange(2, 2),
		RunE: func(c *cobra.Command, args []string) error {
			dir := args[1]
			retry := func(d string) string { return "course practice " + args[0] + " " + shellQuote(d) }
			if err := a.requireEmptyDir(dir, retry); err != nil {
				return err
			}
			b, h, ch, err := a.chapterHistory(args[0])
			if err != nil {
				return err
			}
			var plan *carry.Plan
			var start *practice.Start
			if c.Flags().Changed("from") {
				if plan, err = a.carryFrom(c.Context(), b, ch, from, dir); err != nil {
					return err
				}
				start = &practice.Start{Starter: plan.Starter, From: plan.From.Number, Earlier: plan.Earlier, Kept: plan.Kept}
			}
			if err := practice.CreateFrom(c.Context(), dir, b, h, ch, string(a.p.lang), start); err != nil {
				return a.placeError("place.practice", dir, err, retry)
			}
			p := a.p
			fmt.Fprintln(a.stdout, p.text("practice.created", ch.Number, dir))
			if plan != nil {
				a.printCarried(plan)
			}
			a.firstBuild(c.Context(), dir, b.Course().Module)
			a.printPracticeNext(dir, ch)
			return nil
		},
	}
	c.Flags().StringVar(&from, "from", "", a.p.text("practice.flag.from"))
	return c
}

// firstBuild builds the new directory's tests when Go's build cache lacks the standard library
// or the course's dependencies (a new machine): that first build takes a minute or more, and the
// learner's first `go test` would sit silent through it. It says so before and after; with a warm
// cache it does nothing and prints nothing. A failure is only reported: the directory is made,
// and course doctor finds out why.
func (a *app) firstBuild(ctx context.Context, dir, module string) {
	if _, err := a.lookPath("go"); err != nil {
		return // printPracticeNext's commands need go; course doctor says how to get it
	}
	run := a.goRunner
	if run == nil {
		run = firstbuild.Go
	}
	cold, err := firstbuild.Cold(ctx, run, dir, module)
	if err != nil || len(cold) == 0 {
		return
	}
	fmt.Fprintln(a.stderr, a.p.text("practice.building", len(cold)))
	start := time.Now()
	if err := firstbuild.Build(ctx, run, dir); err != nil {
		fmt.Fprintln(a.stderr, a.p.text("practice.build.failed", err))
		return
	}
	fmt.Fprintln(a.stderr, a.p.text("practice.built", time.Since(start).Round(time.Second)))
}

// printPracticeNext says what to do in the new practice directory dir of ch: what to read, the
// first red light (or, in an observe chapter, the programs and tests to run), how to install
// course when it is not a command yet, and course status.
func (a *app) printPracticeNext(dir string, ch *manifest.Chapter) {
	p := a.p
	fmt.Fprintln(a.stdout)
	fmt.Fprintln(a.stdout, p.text("practice.read"))
	fmt.Fprintln(a.stdout, "  "+filepath.Join(dir, "LEARNING.md"))
	if len(ch.Labs) > 0 {
		first := ch.Labs[0]
		fmt.Fprintln(a.stdout, "  "+filepath.Join(dir, filepath.FromSlash(a.cardPath(first))))
		fmt.Fprintln(a.stdout)
		if ch.Observe() {
			// Nothing is stubbed: the learner runs the chapter's programs and its
			// tests, which pass from the start.
			fmt.Fprintln(a.stdout, p.text("practice.observe"))
			for _, program := range chapterPrograms(ch) {
				fmt.Fprintln(a.stdout, "  cd "+shellQuote(dir)+" && go run ./"+program)
			}
			fmt.Fprintln(a.stdout, "  cd "+shellQuote(dir)+" && "+practice.TestCommand(first))
		} else {
			meaning := ""
			if p.lang != langZH {
				meaning = ", " + practice.PendingMeaning(first)
			}
			fmt.Fprintln(a.stdout, p.text("practice.red", first.PendingMessage(), meaning))
			fmt.Fprintln(a.stdout, "  cd "+shellQuote(dir)+" && "+practice.TestCommand(first))
		}
	}
	fmt.Fprintln(a.stdout)
	if _, err := a.lookPath("course"); err != nil {
		// Run with `go run ./cmd/course`: course is not a command the shell knows yet.
		fmt.Fprintln(a.stdout, p.text("practice.install", installCommand))
	}
	fmt.Fprintln(a.stdout, p.text("practice.then", "cd "+shellQuote(dir)+" && course status"))
}

// installCommand installs the course command from the kit's root and puts go's bin directory on
// the shell's PATH.
const installCommand = `go install ./cmd/course && export PATH="$PATH:$(go env GOPATH)/bin"`

// chapterPrograms returns the directories of the chapter's own main programs (files
// cmd/NAME/main.go), e.g. "cmd/readme-trace".
func chapterPrograms(ch *manifest.Chapter) []string {
	var programs []string
	for _, f := range ch.Files {
		if dir, ok := strings.CutSuffix(f, "/main.go"); ok && strings.HasPrefix(dir, "cmd/") {
			programs = append(programs, dir)
		}
	}
	return programs
}
