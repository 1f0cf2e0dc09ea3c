package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/devcheck"
)

// devCheckCommand is `course dev check [NN...]`.
func (a *app) devCheckCommand() *cobra.Command {
	var parallel, flakeRuns int
	var force bool
	c := &cobra.Command{
		Use:     "check [NN...]",
		Short:   a.p.text("devcheck.short"),
		Long:    a.p.text("devcheck.long"),
		Example: a.p.text("devcheck.example"),
		RunE: func(c *cobra.Command, args []string) error {
			b, err := a.builder()
			if err != nil {
				return err
			}
			numbers, err := a.chapterArgs(args, nil)
			if err != nil {
				return err
			}
			if err := a.requireGo(b.Course()); err != nil {
				return err
			}
			cache := a.devCheckCache()
			result, err := devcheck.Run(c.Context(), b, devcheck.Options{
				Chapters:  numbers,
				Parallel:  parallel,
				Out:       a.stdout,
				ASCII:     !a.color,
				FlakeRuns: flakeRuns,
				Cache:     cache,
				Force:     force,
			})
			if err != nil {
				return err
			}
			if result.CacheErr != nil {
				fmt.Fprintln(a.stderr, a.p.text("devcheck.cache.off", result.CacheErr))
			}
			for _, ch := range result.Chapters {
				a.printProvenance(ch, cache != nil && result.CacheErr == nil)
			}
			devcheck.PrintFailures(a.stdout, devcheck.Options{ASCII: !a.color}, result)
			failed := 0
			for _, ch := range result.Chapters {
				for _, check := range ch.Checks {
					if !check.OK {
						failed++
					}
				}
			}
			st := style{a.color}
			// The verdict, then a plain count line that CI log readers recognise
			// ("N passed, M failed" is a closing line understood in any language).
			defer fmt.Fprintf(a.stdout, "devcheck: %d passed, %d failed\n", result.Total()-failed, failed)
			if result.OK() && failed == 0 {
				fmt.Fprintln(a.stdout, st.ok(a.p.text("devcheck.ok")))
				return nil
			}
			fmt.Fprintln(a.stdout, st.bad(a.p.text("devcheck.failed", failed)))
			return errSilentFailure
		},
	}
	c.Flags().IntVar(&parallel, "parallel", 0, a.p.text("devcheck.flag.parallel"))
	c.Flags().IntVar(&flakeRuns, "flake-runs", 0, a.p.text("devcheck.flag.flakeruns", devcheck.DefaultFlakeRuns))
	c.Flags().BoolVar(&force, "force", false, a.p.text("devcheck.flag.force"))
	return c
}

// devCheckCache returns the proof cache of dev check (devcheck.DefaultCacheDir, identified by the
// running kit), or nil, after a warning, when there is none to use.
func (a *app) devCheckCache() *devcheck.Cache {
	dir, err := devcheck.DefaultCacheDir(a.getenv)
	if err != nil {
		fmt.Fprintln(a.stderr, a.p.text("devcheck.cache.off", err))
		return nil
	}
	kit, err := devcheck.KitIdentity()
	if err != nil {
		fmt.Fprintln(a.stderr, a.p.text("devcheck.cache.off", err))
		return nil
	}
	return &devcheck.Cache{Dir: dir, Kit: kit}
}

// printProvenance says where the checks of chapter r come from: proven now (and stored, when
// cached is true and the proof passed) or taken from the cache. A cache problem of the chapter
// is a warning on stderr.
func (a *app) printProvenance(r devcheck.ChapterResult, cached bool) {
	failed := 0
	for _, c := range r.Checks {
		if !c.OK {
			failed++
		}
	}
	switch {
	case r.Cached:
		fmt.Fprintln(a.stdout, a.p.text("devcheck.chapter.cached", r.Number, len(r.Checks), r.ProvenAt.Local().Format("2006-01-02 15:04")))
	case failed > 0:
		fmt.Fprintln(a.stdout, a.p.text("devcheck.chapter.failed", r.Number, failed, len(r.Checks)))
	case cached && r.CacheErr == nil:
		fmt.Fprintln(a.stdout, a.p.text("devcheck.chapter.stored", r.Number, len(r.Checks)))
	default:
		fmt.Fprintln(a.stdout, a.p.text("devcheck.chapter.proven", r.Number, len(r.Checks)))
	}
	if r.CacheErr != nil {
		fmt.Fprintln(a.stderr, a.p.text("devcheck.cache.chapter", r.Number, r.CacheErr))
	}
}
