package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/devcheck"
)

// devCheckCommand is `course dev check [NN...]`.
func (a *app) devCheckCommand() *cobra.Command {
	var parallel, flakeRuns int
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
			result, err := devcheck.Run(c.Context(), b, devcheck.Options{
				Chapters:  numbers,
				Parallel:  parallel,
				Out:       a.stdout,
				ASCII:     !a.color,
				FlakeRuns: flakeRuns,
			})
			if err != nil {
				return err
			}
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
	c.Flags().IntVar(&flakeRuns, "flake-runs", 0, a.p.text("devcheck.flag.flakeruns"))
	return c
}
