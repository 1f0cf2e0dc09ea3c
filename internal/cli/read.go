package cli

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/mdterm"
)

// readMessages are the texts of `course read` (part of the catalog, messages.go).
var readMessages = i18n.Catalog{
	"read.short": {ZH: "在终端里阅读一章的正文", EN: "read a chapter's text in the terminal"},
	"read.long": {
		ZH: "course read NN 显示第 NN 章的正文：中文是 docs/NN-<slug>.md，英文（--lang en 或英文 locale）是 docs/NN-<slug>.en.md；\n" +
			"某种语言的正文缺失时，显示另一种语言的正文，并在标准错误上说明。在终端上用 Markdown 渲染（按终端宽度换行，\n" +
			"使用终端自己的基本颜色，深色、浅色背景都清楚）；输出不是终端、设置了 NO_COLOR、TERM=dumb 或给了 --plain 时，原样输出 Markdown，\n" +
			"方便用 less、grep 或重定向到文件。",
		EN: "course read NN shows chapter NN's text: in Chinese docs/NN-<slug>.md, in English (--lang en or an English locale)\n" +
			"docs/NN-<slug>.en.md; when the text is missing in one language the other is shown, and stderr says so. On a terminal it\n" +
			"is rendered as Markdown (wrapped to the terminal's width, in the terminal's own basic colours, clear on a dark or light\n" +
			"background); when the output is not a terminal, NO_COLOR is set, TERM=dumb or --plain is given, the Markdown is printed\n" +
			"as it is, for less, grep or a file.",
	},
	"read.example": {
		ZH: "  course read 07\n  course read 07 --plain | less\n  course read 07 --plain > 07.md",
		EN: "  course read 07\n  course read 07 --plain | less\n  course read 07 --lang en",
	},
	"read.flag.plain": {ZH: "原样输出 Markdown，不渲染", EN: "print the Markdown as it is, without rendering"},
	"read.fallback": {
		ZH: "第 %s 章的正文还没有中文版（%s），下面是英文版。",
		EN: "Chapter %s's text has no English version yet (%s); showing the Chinese one.",
	},
	"read.missing": {
		ZH: "第 %s 章的正文 %s 不在课程内容中：%v",
		EN: "chapter %s's text %s is not in the course content: %v",
	},
}

// readCommand is `course read NN [--plain]`.
func (a *app) readCommand() *cobra.Command {
	var plain bool
	c := &cobra.Command{
		Use:     "read NN [--plain]",
		Short:   a.p.text("read.short"),
		Long:    a.p.text("read.long"),
		Example: a.p.text("read.example"),
		Args:    a.argsRange(1, 1),
		RunE: func(c *cobra.Command, args []string) error {
			b, ch, err := a.chapter(args[0])
			if err != nil {
				return err
			}
			text, err := a.chapterText(b.FS(), ch)
			if err != nil {
				return err
			}
			if plain || !a.color {
				_, err := a.stdout.Write(text)
				return err
			}
			// One column less than the terminal: a character in the last column makes some
			// terminals wrap the line.
			_, err = fmt.Fprint(a.stdout, mdterm.Render(string(text), a.outputWidth(0)-1))
			return err
		},
	}
	c.Flags().BoolVar(&plain, "plain", false, a.p.text("read.flag.plain"))
	return c
}

// chapterText returns ch's text in the output language; when that language has none, the text
// in the other language, with a note on stderr (not stdout: `course read NN --plain > file`
// keeps the Markdown clean).
func (a *app) chapterText(fsys fs.FS, ch *manifest.Chapter) ([]byte, error) {
	want, other := "zh", "en"
	if a.p.lang == langEN {
		want, other = "en", "zh"
	}
	text, err := fs.ReadFile(fsys, ch.DocPath(want))
	if errors.Is(err, fs.ErrNotExist) {
		if alt, altErr := fs.ReadFile(fsys, ch.DocPath(other)); altErr == nil {
			fmt.Fprintln(a.stderr, a.p.text("read.fallback", ch.Number, ch.DocPath(want)))
			return alt, nil
		}
	}
	if err != nil {
		return nil, errors.New(a.p.text("read.missing", ch.Number, ch.DocPath(want), err))
	}
	return text, nil
}
