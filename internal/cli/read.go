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
		ZH: "course read NN 显示第 NN 章的正文（docs/NN-<slug>.md）。在终端上用 Markdown 渲染（按终端宽度换行，\n" +
			"使用终端自己的基本颜色，深色、浅色背景都清楚）；输出不是终端、设置了 NO_COLOR、TERM=dumb 或给了 --plain 时，原样输出 Markdown，\n" +
			"方便用 less、grep 或重定向到文件。\n\n" +
			"章节正文目前只有中文；英文模式下会先提示这一点，并指向每个 Lab 的英文卡片 labs/N.M.en.md。",
		EN: "course read NN shows chapter NN's text (docs/NN-<slug>.md). On a terminal it is rendered as Markdown (wrapped to\n" +
			"the terminal's width, in the terminal's own basic colours, clear on a dark or light background); when the output is not a terminal, NO_COLOR is set,\n" +
			"TERM=dumb or --plain is given, the Markdown is printed as it is, for less, grep or a file.\n\n" +
			"Chapter texts are in Chinese only for now; in English mode the command says so first and points to each lab's\n" +
			"English card, labs/N.M.en.md.",
	},
	"read.example": {
		ZH: "  course read 07\n  course read 07 --plain | less\n  course read 07 --plain > 07.md",
		EN: "  course read 07\n  course read 07 --plain | less\n  course read 07 --lang en",
	},
	"read.flag.plain": {ZH: "原样输出 Markdown，不渲染", EN: "print the Markdown as it is, without rendering"},
	"read.zh.only": {
		ZH: "第 %s 章的正文目前只有中文；每个 Lab 都有英文卡片：%s（在练习目录里；创建：course practice %s DIR）。",
		EN: "Chapter %s's text is in Chinese only for now; every lab has an English card: %s (in your practice directory; create one: course practice %s DIR).",
	},
	"read.zh.only.nolabs": {
		ZH: "第 %s 章的正文目前只有中文。",
		EN: "Chapter %s's text is in Chinese only for now.",
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
			text, err := fs.ReadFile(b.FS(), ch.Doc)
			if err != nil {
				return errors.New(a.p.text("read.missing", ch.Number, ch.Doc, err))
			}
			if a.p.lang == langEN {
				// On stderr, so that `course read NN --plain > file` keeps the Markdown clean.
				fmt.Fprintln(a.stderr, a.chineseOnlyNote(ch))
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

// chineseOnlyNote is the one-line note that the chapter text has no English version yet, with the
// chapter's English lab cards.
func (a *app) chineseOnlyNote(ch *manifest.Chapter) string {
	if len(ch.Labs) == 0 {
		return a.p.text("read.zh.only.nolabs", ch.Number)
	}
	cards := "labs/" + ch.Labs[0].ID + ".en.md"
	if n := len(ch.Labs); n > 1 {
		cards += " … labs/" + ch.Labs[n-1].ID + ".en.md"
	}
	return a.p.text("read.zh.only", ch.Number, cards, ch.Number)
}
