package devcheck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/signature"
	"github.com/learn-tinypi/course/internal/tree"
)

// HasSignatures reports whether ch has a signature file: a rebuild chapter with mutants. Observe
// chapters stub nothing, so their learners see no failures to recognise.
func HasSignatures(ch *manifest.Chapter) bool {
	return ch.Rebuild() && len(ch.Mutants) > 0
}

// SignatureRuns is how many times `course dev signatures` runs each mutant's tests: a failure
// that is not the same in every run is a race the mutant opens, and is left out of the signature.
// `course dev check` runs each mutant once, and again up to SignatureRuns-1 times only when that
// run disagrees with the committed file, so that a race the generating runs missed is told apart
// from a stale file.
const SignatureRuns = 5

// mutantTasks returns the tasks of rule 5, one per mutant of ch, and after them the task of rule
// 7 (rebuild chapters only), which checks ch's signature file against the same runs: the mutants
// are run once for both.
func mutantTasks(b *tree.Builder, ch *manifest.Chapter, schema *chapterSchema) []task {
	runs := newMutantRuns(len(ch.Mutants))
	committed, _ := signature.Load(b.FS(), ch.Number) // nil when missing or broken: rule 7 says so
	var tasks []task
	for i, m := range ch.Mutants {
		tasks = append(tasks, task{
			name:   fmt.Sprintf("mutant %s: compiles and lab %s catches it", m.Name, m.Lab),
			usesGo: true,
			phase:  phaseMutant,
			rank:   i,
			run: func(ctx context.Context, dir string) (Check, error) {
				if err := schema.prepare(ctx, b, ch, dir); err != nil {
					return Check{}, err
				}
				check, report, rerun, err := proveMutant(ctx, b, ch, m, schema, dir)
				if err != nil {
					return Check{}, err
				}
				failures, err := mutantFailures(ch, m, report)
				if err != nil {
					return Check{}, err
				}
				run := mutantRun{failures: failures}
				if sig, ok := committed.Mutant(m.Name); ok && report != nil && !report.BuildFailed && len(sig.Inconsistencies(failures)) > 0 {
					lab, _ := ch.Lab(m.Lab) // checkMutant ran its tests, so the lab exists
					for tries := 1; tries < SignatureRuns; tries++ {
						again, err := rerunLab(ctx, rerun(lab), lab)
						if err != nil {
							return Check{}, err
						}
						if len(sig.Inconsistencies(again)) == 0 {
							run = mutantRun{failures: again, varied: true, others: append(run.others, run.failures)}
							break
						}
						run.others = append(run.others, again)
					}
				}
				runs.put(i, run)
				return check, nil
			},
		})
	}
	if !HasSignatures(ch) {
		return tasks
	}
	tasks = append(tasks, task{
		name: fmt.Sprintf("signatures: %s is up to date; each mutant's failures name exactly that mutant", signature.Path(ch.Number)),
		run: func(ctx context.Context, _ string) (Check, error) {
			select {
			case <-runs.done:
			case <-ctx.Done():
				return Check{}, ctx.Err()
			}
			return checkSignatures(b.FS(), ch, runs.all()), nil
		},
	})
	return tasks
}

// mutantRun is what rule 7 needs of one mutant's runs: the failures of the run it compares with
// the committed file (the first, or the first later one that agrees with the file), whether an
// earlier run of the same mutant disagreed with the file (a race the generating runs missed),
// and the failures of every other run it made, each of which a learner could see too.
type mutantRun struct {
	failures []signature.Failure
	varied   bool
	others   [][]signature.Failure
}

// misnamed returns the names, other than want, that the kit shows (signature.File.Match) for
// any of run's runs of a mutant of lab, sorted.
func (run mutantRun) misnamed(file *signature.File, lab, want string) []string {
	var names []string
	for _, failures := range append([][]signature.Failure{run.failures}, run.others...) {
		for _, o := range file.Match(lab, failures) {
			if o.Name != want && !slices.Contains(names, o.Name) {
				names = append(names, o.Name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// shownName is the name a learner who makes m's mistake is shown: its own, or the one of the
// mutant it is named as.
func shownName(m *manifest.Mutant) string {
	if m.NamedAs != "" {
		return m.NamedAs
	}
	return m.Name
}

// proveMutant proves rule 5 for m, in the chapter's schema build when m is woven into it
// (checkWovenMutant), else in a tree of its own in dir (checkMutant), and returns also the options
// that run m's lab's tests again the same way, for rerunLab.
func proveMutant(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, m *manifest.Mutant, schema *chapterSchema, dir string) (Check, *gotest.Report, func(*manifest.Lab) gotest.Options, error) {
	if schema.woven[m.Name] {
		check, report, err := checkWovenMutant(ctx, ch, m, schema)
		return check, report, func(lab *manifest.Lab) gotest.Options { return schema.run(lab.Pattern, m.Name) }, err
	}
	check, report, err := checkMutant(ctx, b, ch, m, dir)
	return check, report, func(lab *manifest.Lab) gotest.Options { return mutantTestRun(dir, lab, m.Race) }, err
}

// rerunLab runs lab's tests again with opts, those of the mutant's first run (mutantTestRun in the
// directory where its tree is, or its schema build's run), and returns the failures; Fresh makes
// go run them rather than replay its cached result.
func rerunLab(ctx context.Context, opts gotest.Options, lab *manifest.Lab) ([]signature.Failure, error) {
	report, err := gotest.Run(ctx, opts)
	if err != nil {
		return nil, err
	}
	return signature.Failures(report, lab)
}

// mutantRuns collects the failures of a chapter's mutants as their tasks finish; done is closed
// when every mutant has reported.
type mutantRuns struct {
	mu      sync.Mutex
	runs    []mutantRun
	pending int
	done    chan struct{}
}

func newMutantRuns(n int) *mutantRuns {
	r := &mutantRuns{runs: make([]mutantRun, n), pending: n, done: make(chan struct{})}
	if n == 0 {
		close(r.done)
	}
	return r
}

func (r *mutantRuns) put(i int, run mutantRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs[i] = run
	r.pending--
	if r.pending == 0 {
		close(r.done)
	}
}

// all returns the collected runs by mutant index; call it after done.
func (r *mutantRuns) all() []mutantRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.runs)
}

// mutantFailures returns the normalised failures of one mutant run; a run that did not happen
// (the mutant could not be applied or built) has none, which rule 5 reports.
func mutantFailures(ch *manifest.Chapter, m *manifest.Mutant, report *gotest.Report) ([]signature.Failure, error) {
	if report == nil {
		return nil, nil
	}
	lab, err := ch.Lab(m.Lab)
	if err != nil {
		return nil, nil // rule 5 reports the unknown lab
	}
	return signature.Failures(report, lab)
}

// checkSignatures proves rule 7 for ch from a fresh run of each mutant (fresh, by mutant index):
// the committed signature file lists the chapter's mutants and no run contradicts it
// (signature.Mutant.Inconsistencies); no two mutants of a lab share a signature; no run of a
// mutant that dev check made (the first, and any rerun) is named another mutant
// (signature.File.Match), so the name a learner is shown is the mistake's or none; and the run
// compared with the file names exactly that mutant (or the one it is named as, NamedAs).
func checkSignatures(fsys fs.FS, ch *manifest.Chapter, fresh []mutantRun) Check {
	regenerate := fmt.Sprintf("run `%s`", signature.GenerateCommand(ch.Number))
	file, err := signature.Load(fsys, ch.Number)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail("%s is missing: %s", signature.Path(ch.Number), regenerate)
	case err != nil:
		return fail("%v: %s", err, regenerate)
	}
	var stale []string
	if len(file.Mutants) != len(ch.Mutants) {
		stale = append(stale, fmt.Sprintf("the file has %d mutant(s), the manifest %d", len(file.Mutants), len(ch.Mutants)))
	}
	for i, m := range ch.Mutants {
		sig, ok := file.Mutant(m.Name)
		switch {
		case !ok:
			stale = append(stale, fmt.Sprintf("mutant %s: not in the file", m.Name))
		case sig.Lab != m.Lab:
			stale = append(stale, fmt.Sprintf("mutant %s: the file says lab %s, the manifest %s", m.Name, sig.Lab, m.Lab))
		case sig.NamedAs != m.NamedAs:
			stale = append(stale, fmt.Sprintf("mutant %s: the file says it is named as %q, the manifest %q", m.Name, sig.NamedAs, m.NamedAs))
		case i >= len(file.Mutants) || file.Mutants[i].Name != m.Name:
			stale = append(stale, fmt.Sprintf("mutant %s: not in the manifest's order", m.Name))
		default:
			for _, p := range sig.Inconsistencies(fresh[i].failures) {
				stale = append(stale, fmt.Sprintf("mutant %s: %s", m.Name, p))
			}
		}
	}
	if len(stale) > 0 {
		return Check{Detail: strings.Join(append([]string{
			fmt.Sprintf("signatures of chapter %s are stale: %s", ch.Number, regenerate)}, stale...), "\n")}
	}

	var problems, notes []string
	for i, m := range ch.Mutants {
		sig, _ := file.Mutant(m.Name)
		want := shownName(m)
		var twins []string
		for _, o := range file.Mutants {
			if m.NamedAs == "" && o.NamedAs == "" && o.Name != m.Name && o.Lab == m.Lab && len(sig.Failures) > 0 && slices.Equal(o.Failures, sig.Failures) {
				twins = append(twins, o.Name)
			}
		}
		if len(twins) > 0 {
			problems = append(problems, fmt.Sprintf("mutant %s: has the same signature as %s, so a learner making either mistake would be told both; "+
				"make a test of lab %s fail them differently, or give the one whose name covers both mistakes to the other as named_as", m.Name, strings.Join(twins, ", "), m.Lab))
			continue
		}
		// The name proof: whatever name the kit shows for any run of m that dev check made is m's
		// (or the one m is named as), or none.
		if wrong := fresh[i].misnamed(file, m.Lab, want); len(wrong) > 0 {
			problems = append(problems, fmt.Sprintf("mutant %s: its own failures are named %s, another mistake: a learner who makes mistake %s would be told of %s; "+
				"make a test of lab %s fail them differently, or remove the name that cannot be told apart", m.Name, strings.Join(wrong, ", "), m.Name, strings.Join(wrong, ", "), m.Lab))
			continue
		}
		if len(sig.Failures) == 0 {
			if len(sig.Unstable) > 0 {
				problems = append(problems, fmt.Sprintf("mutant %s: none of its failures is the same from run to run (%s), so no learner's run can be matched to it; "+
					"make a test of lab %s fail it the same way every time", m.Name, strings.Join(sig.Unstable, ", "), m.Lab))
			}
			continue // a mutant no test catches: rule 5 reports it
		}
		if fresh[i].varied {
			notes = append(notes, fmt.Sprintf("note: mutant %s: a run disagreed with the file and a later run agreed; a test of lab %s fails differently from run to run, "+
				"which the generating runs did not see (run `%s` again, or make the test deterministic)", m.Name, m.Lab, signature.GenerateCommand(ch.Number)))
		}
		var names []string
		for _, o := range file.Match(m.Lab, fresh[i].failures) {
			names = append(names, o.Name)
		}
		switch {
		case len(names) == 0:
			problems = append(problems, fmt.Sprintf("mutant %s: its run matches no known mistake", m.Name))
		case !slices.Equal(names, []string{want}):
			problems = append(problems, fmt.Sprintf("mutant %s: its run is named %s; a run must name exactly its own mistake (%s)",
				m.Name, strings.Join(names, ", "), want))
		}
	}
	if len(problems) > 0 {
		return Check{Detail: strings.Join(append(problems, notes...), "\n")}
	}
	return Check{OK: true, Detail: strings.Join(notes, "\n")}
}

// Signatures runs the mutants of the chapters of b's course (all, or opts.Chapters) that have
// signature files (HasSignatures) and returns their signature files, in chapter order. A named
// chapter without mutants is an error. opts.Out gets one line per mutant as it finishes.
func Signatures(ctx context.Context, b *tree.Builder, opts Options) ([]*signature.File, error) {
	chapters, err := selectChapters(b.Course(), opts.Chapters)
	if err != nil {
		return nil, err
	}
	if len(opts.Chapters) > 0 {
		for _, ch := range chapters {
			if !HasSignatures(ch) {
				return nil, fmt.Errorf("chapter %s has no signatures: it is an observe chapter or has no mutants", ch.Number)
			}
		}
	} else {
		chapters = slices.DeleteFunc(slices.Clone(chapters), func(ch *manifest.Chapter) bool { return !HasSignatures(ch) })
	}
	out := opts.output()
	okMark, failMark := opts.marks()
	sigs := make([][]signature.Mutant, len(chapters))
	var jobs []job
	tools := &runTools{}
	for c, ch := range chapters {
		sigs[c] = make([]signature.Mutant, len(ch.Mutants))
		schema := &chapterSchema{tools: tools}
		for i, m := range ch.Mutants {
			jobs = append(jobs, job{
				dir:    fmt.Sprintf("%s-%03d", ch.Number, i),
				usesGo: true,
				run: func(ctx context.Context, dir string) (func(), error) {
					if err := schema.prepare(ctx, b, ch, dir); err != nil {
						return nil, err
					}
					check, sig, err := signMutant(ctx, b, ch, m, schema, dir)
					if err != nil {
						return nil, err
					}
					return func() {
						sigs[c][i] = sig
						if !check.OK {
							fmt.Fprintf(out, "%s %s %s: %s\n", ch.Number, failMark, m.Name, strings.ReplaceAll(check.Detail, "\n", "\n      "))
							return
						}
						line := fmt.Sprintf("%s %s %s: %d failing test(s)", ch.Number, okMark, m.Name, len(sig.Failures))
						if len(sig.Unstable) > 0 {
							line += fmt.Sprintf(", unstable from run to run (left out): %s", strings.Join(sig.Unstable, ", "))
						}
						fmt.Fprintln(out, line)
					}, nil
				},
			})
		}
	}
	if err := runJobs(ctx, "dev signatures", "course-signatures-", opts, jobs); err != nil {
		return nil, err
	}
	files := make([]*signature.File, len(chapters))
	for c, ch := range chapters {
		files[c] = &signature.File{Chapter: ch.Number, GeneratedBy: signature.GenerateCommand(ch.Number), Mutants: sigs[c]}
	}
	return files, nil
}

// signMutant runs m's lab tests SignatureRuns times against the mutated target (the chapter's
// schema build when m is woven into it, else a tree of its own in dir) and returns rule 5's
// check of the first run and m's signature: the failures every run shares.
func signMutant(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, m *manifest.Mutant, schema *chapterSchema, dir string) (Check, signature.Mutant, error) {
	sig := signature.Mutant{Name: m.Name, Lab: m.Lab, Failures: []signature.Failure{}, NamedAs: m.NamedAs}
	check, report, rerun, err := proveMutant(ctx, b, ch, m, schema, dir)
	if err != nil || report == nil || report.BuildFailed {
		return check, sig, err
	}
	lab, err := ch.Lab(m.Lab)
	if err != nil {
		return check, sig, nil // rule 5 reports the unknown lab
	}
	first, err := signature.Failures(report, lab)
	if err != nil {
		return Check{}, sig, err
	}
	runs := [][]signature.Failure{first}
	for len(runs) < SignatureRuns {
		again, err := rerunLab(ctx, rerun(lab), lab)
		if err != nil {
			return Check{}, sig, err
		}
		runs = append(runs, again)
	}
	stable, unstable := signature.Stable(runs)
	if stable != nil {
		sig.Failures = stable
	}
	sig.Unstable = unstable
	return check, sig, nil
}
