package devcheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/learn-tinypi/course/internal/heldout"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// heldoutTasks are the checks of ch's held-out cases (internal/heldout), none for a chapter
// without any: each case names at least heldout.MinCatches of ch's mutants; on the target every
// case's verdict is the right one; on each mutant a case names, that case's verdict is not.
//
// The runs use the mutants' build of the chapter (schema, with the harness in it) when it holds
// the mutant, and otherwise a tree of their own.
func heldoutTasks(b *tree.Builder, ch *manifest.Chapter, schema *chapterSchema) []task {
	cases, err := heldout.Load(b.FS(), ch.Number)
	if err != nil {
		return []task{{name: "heldout: the held-out cases load", run: func(context.Context, string) (Check, error) {
			return fail("%v", err), nil
		}}}
	}
	if len(cases) == 0 {
		return nil
	}
	tasks := []task{{
		name: fmt.Sprintf("heldout: each held-out case names at least %d of the chapter's mutants it catches", heldout.MinCatches),
		run: func(context.Context, string) (Check, error) {
			var problems []string
			for _, c := range cases {
				if len(c.Catches) < heldout.MinCatches {
					problems = append(problems, fmt.Sprintf("%s names %d mutants", c.Name, len(c.Catches)))
				}
				for _, name := range c.Catches {
					if mutantNamed(ch, name) == nil {
						problems = append(problems, fmt.Sprintf("%s names %q, not a mutant of chapter %s", c.Name, name, ch.Number))
					}
				}
			}
			if len(problems) > 0 {
				return fail("%s", strings.Join(problems, "\n")), nil
			}
			return pass(), nil
		},
	}, {
		name:   "heldout: on the target every held-out case gets its right verdict",
		usesGo: true,
		phase:  phaseMutant,
		rank:   len(ch.Mutants), // after the chapter's mutants, whose first makes the build it uses
		run: func(ctx context.Context, dir string) (Check, error) {
			problem := func(c heldout.Case, o heldout.Outcome) string {
				if o.Agrees {
					return ""
				}
				return fmt.Sprintf("%s: the target's verdict is not the right one %s", c.Name, o.Problem)
			}
			if err := schema.prepare(ctx, b, ch, dir); err != nil {
				return Check{}, err
			}
			if schema.heldout {
				return runHeldoutBinary(ctx, b, ch, cases, schema, "", problem)
			}
			t, err := b.Target(ch)
			if err != nil {
				return fail("building the target: %v", err), nil
			}
			return runHeldout(ctx, b, ch, cases, t, dir, problem)
		},
	}}
	var names []string
	for _, c := range cases {
		names = append(names, c.Catches...)
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		m := mutantNamed(ch, name)
		if m == nil {
			continue // the first task says so
		}
		tasks = append(tasks, task{
			name:   "heldout: the held-out cases that name mutant " + name + " catch it",
			usesGo: true,
			phase:  phaseMutant,
			rank:   len(ch.Mutants),
			run: func(ctx context.Context, dir string) (Check, error) {
				problem := func(c heldout.Case, o heldout.Outcome) string {
					if slices.Contains(c.Catches, name) && o.Agrees {
						return c.Name + ": the verdict is the right one with the mutant applied"
					}
					return ""
				}
				if err := schema.prepare(ctx, b, ch, dir); err != nil {
					return Check{}, err
				}
				if schema.heldout && schema.woven[name] {
					return runHeldoutBinary(ctx, b, ch, cases, schema, name, problem)
				}
				t, err := b.Mutant(ch, m)
				if err != nil {
					return fail("applying the mutant: %v", err), nil
				}
				return runHeldout(ctx, b, ch, cases, t, dir, problem)
			},
		})
	}
	return tasks
}

// runHeldout writes t to dir, runs cases there and fails with what problem says of each outcome
// (nothing for a good one).
func runHeldout(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, cases []heldout.Case, t tree.Tree, dir string,
	problem func(heldout.Case, heldout.Outcome) string) (Check, error) {
	if err := t.Write(dir); err != nil {
		return Check{}, fmt.Errorf("writing a tree of chapter %s: %w", ch.Number, err)
	}
	pkgDir := ch.PackageDirIn(dir) // the harness joins the chapter's package
	outcomes, err := heldout.Run(ctx, b.FS(), ch.Number, cases, pkgDir, heldout.Options{Env: sharedBuildEnv(), Timeout: testTimeout})
	if errors.Is(err, heldout.ErrBuild) {
		return fail("%s", clip(err.Error())), nil
	}
	if err != nil {
		return Check{}, err
	}
	return judgeOutcomes(cases, outcomes, problem), nil
}

// runHeldoutBinary runs cases with the schema build's binary, mutant selected ("" for none), and
// fails with what problem says of each outcome.
func runHeldoutBinary(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, cases []heldout.Case, schema *chapterSchema,
	mutant string, problem func(heldout.Case, heldout.Outcome) string) (Check, error) {
	run := schema.run("", mutant)
	outcomes, err := heldout.RunBinary(ctx, b.FS(), ch.Number, cases, run.Dir, run.Binary, heldout.Options{Env: run.Env, Timeout: testTimeout})
	if err != nil {
		return Check{}, err
	}
	return judgeOutcomes(cases, outcomes, problem), nil
}

// judgeOutcomes fails with what problem says of each outcome (nothing for a good one).
func judgeOutcomes(cases []heldout.Case, outcomes []heldout.Outcome, problem func(heldout.Case, heldout.Outcome) string) Check {
	var problems []string
	for i, o := range outcomes {
		if p := problem(cases[i], o); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		return fail("%s", strings.Join(problems, "\n"))
	}
	return pass()
}

// mutantNamed is ch's mutant of that name, or nil.
func mutantNamed(ch *manifest.Chapter, name string) *manifest.Mutant {
	for _, m := range ch.Mutants {
		if m.Name == name {
			return m
		}
	}
	return nil
}
