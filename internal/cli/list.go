package cli

import (
	"strconv"

	"github.com/spf13/cobra"
)

// listCommand is `course list`.
func (a *app) listCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   a.p.text("list.short"),
		Long:    a.p.text("list.long"),
		Example: a.p.text("list.example"),
		Args:    a.argsRange(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			b, err := a.builder()
			if err != nil {
				return err
			}
			rows := [][]string{splitTabs(a.p.text("list.header"))}
			for _, ch := range b.Course().Chapters {
				rows = append(rows, []string{
					ch.Number,
					a.chapterTitle(ch),
					a.modeName(ch),
					strconv.Itoa(len(ch.Labs)),
					strconv.Itoa(focusedTests(ch)),
				})
			}
			return writeTable(a.stdout, rows)
		},
	}
}
