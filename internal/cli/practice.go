package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/history"
	"github.com/learn-tinypi/course/internal/practice"
)

// practiceCommand is `course practice NN DIR`.
func (a *app) practiceCommand() *cobra.Command {
	return &cobra.Command{
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
			b, ch, err := a.chapter(args[0])
			if err != nil {
				return err
			}
			h, err := history.Build(b)
			if err != nil {
				return fmt.Errorf("building the course history: %w", err)
			}
			if err := practice.Create(c.Context(), dir, b, h, ch); err != nil {
				return fmt.Errorf("creating the practice directory %s: %w", dir, err)
			}
			p := a.p
			fmt.Fprintln(a.stdout, p.text("practice.created", ch.Number, dir))
			fmt.Fprintln(a.stdout)
			fmt.Fprintln(a.stdout, p.text("practice.read"))
			fmt.Fprintln(a.stdout, "  "+filepath.Join(dir, "LEARNING.md"))
			if len(ch.Labs) > 0 {
				first := ch.Labs[0]
				fmt.Fprintln(a.stdout, "  "+filepath.Join(dir, filepath.FromSlash(a.cardPath(first))))
				fmt.Fprintln(a.stdout)
				fmt.Fprintln(a.stdout, p.text("practice.red", first.PendingMessage()))
				fmt.Fprintln(a.stdout, "  cd "+shellQuote(dir)+" && "+labCommand(first))
			}
			fmt.Fprintln(a.stdout)
			fmt.Fprintln(a.stdout, p.text("practice.then", "cd "+shellQuote(dir)+" && course status"))
			return nil
		},
	}
}
