package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/history"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/tree"
)

// checkpointCommand is `course checkpoint NN [--checkout parent|target DIR]`.
func (a *app) checkpointCommand() *cobra.Command {
	var checkout string
	c := &cobra.Command{
		Use:     "checkpoint NN [--checkout parent|target DIR]",
		Short:   a.p.text("checkpoint.short"),
		Long:    a.p.text("checkpoint.long"),
		Example: a.p.text("checkpoint.example"),
		Args:    a.argsRange(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			var dir string
			if len(args) == 2 {
				dir = args[1]
				if dir == "" {
					kind := checkout
					if kind != "parent" {
						kind = "target"
					}
					return a.dirUsage(dir, tree.ErrNoDir, func(d string) string {
						return "course checkpoint " + args[0] + " --checkout " + kind + " " + shellQuote(d)
					})
				}
			}
			switch {
			case checkout == "" && dir != "":
				return a.usagef("err.dir.noflag", dir, "course checkpoint "+args[0]+" --checkout target "+shellQuote(dir))
			case checkout != "" && checkout != "parent" && checkout != "target":
				return a.usagef("err.checkout.kind", checkout)
			case checkout != "" && dir == "":
				return a.usagef("err.checkout.dir", checkout, args[0], checkout)
			}
			retry := func(d string) string {
				return "course checkpoint " + args[0] + " --checkout " + checkout + " " + shellQuote(d)
			}
			if dir != "" {
				if err := a.requireEmptyDir(dir, retry); err != nil {
					return err
				}
			}
			b, h, ch, err := a.chapterHistory(args[0])
			if err != nil {
				return err
			}
			if checkout != "" {
				return a.checkout(c.Context(), b, h, ch, checkout, dir, retry)
			}
			return a.printCheckpoint(b, h, ch)
		},
	}
	c.Flags().StringVar(&checkout, "checkout", "", a.p.text("checkpoint.flag.checkout"))
	return c
}

// printCheckpoint prints what a learner needs to locate chapter ch.
func (a *app) printCheckpoint(b *tree.Builder, h *history.History, ch *manifest.Chapter) error {
	p := a.p
	var out strings.Builder
	fmt.Fprintln(&out, style{a.color}.bold(p.text("checkpoint.title", ch.Number, a.chapterTitle(ch))))
	fmt.Fprintln(&out, p.text("checkpoint.mode", a.modeName(ch)))
	parent := h.Parent(ch)
	if parent == "" {
		parent = p.text("checkpoint.parent.none")
	}
	fmt.Fprintln(&out, p.text("checkpoint.parent", parent))
	fmt.Fprintln(&out, p.text("checkpoint.target", h.Target(ch)))
	fmt.Fprintln(&out, p.text("checkpoint.files", strings.Join(ch.TeachingFiles(), ", ")))
	if len(ch.Extends) > 0 {
		fmt.Fprintln(&out, p.text("checkpoint.extends", strings.Join(ch.Extends, ", ")))
	}
	fmt.Fprintln(&out, p.text("checkpoint.testfile", ch.TestFile, focusedTests(ch)))
	fmt.Fprintln(&out, p.text("checkpoint.labs"))
	rows := make([][]string, 0, len(ch.Labs))
	for _, l := range ch.Labs {
		rows = append(rows, []string{"  " + l.ID, a.labTitle(l), practice.TestCommand(l)})
	}
	if err := writeTable(&out, rows); err != nil {
		return err
	}
	fmt.Fprintln(&out, p.text("checkpoint.practice", "course practice "+ch.Number+" ./mydir"))
	_, err := fmt.Fprint(a.stdout, out.String())
	return err
}

// checkout writes the parent or target tree of ch into dir, in place when dir is an existing
// empty directory; retry is the command to run again with another directory.
func (a *app) checkout(ctx context.Context, b *tree.Builder, h *history.History, ch *manifest.Chapter, kind, dir string, retry func(string) string) error {
	var t tree.Tree
	var err error
	commit := h.Target(ch)
	if kind == "parent" {
		t, err = b.Parent(ch)
		commit = h.Parent(ch)
		if commit == "" {
			commit = "-"
		}
	} else {
		t, err = b.Target(ch)
	}
	if err != nil {
		return fmt.Errorf("building the %s tree of chapter %s: %w", kind, ch.Number, err)
	}
	if err := t.Fill(ctx, dir, nil); err != nil {
		return a.placeError("place.checkout", dir, err, retry)
	}
	fmt.Fprintln(a.stdout, a.p.text("checkpoint.written", kind, commit, dir, len(t)))
	fmt.Fprintln(a.stdout, a.p.text("checkpoint.written.next", shellQuote(dir)))
	return nil
}
