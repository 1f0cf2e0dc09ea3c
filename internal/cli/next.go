package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/cards"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/progress"
)

// nextMessages are the texts of `course next`.
var nextMessages = i18n.Catalog{
	"next.short": {ZH: "显示下一个未完成 Lab 的卡片", EN: "show the card of the next unfinished lab"},
	"next.long": {
		ZH: "在练习目录 DIR（默认为当前目录）显示下一个未完成 Lab 的卡片（按 --lang 或 locale 选择语言，没有英文卡片时用中文）。\n\n" +
			"下一个 Lab 来自 .course/progress.json（course test、course status、course watch 写入）。\n" +
			"没有这个文件，或者上次运行之后改过文件时，先运行一次本章的聚焦测试。\n" +
			"--edit 用 $VISUAL 或 $EDITOR 打开卡片。全部完成时告诉你下一步做什么。",
		EN: "Show the card of the next unfinished lab of the practice directory DIR (the current directory by default), in the\n" +
			"language of --lang or the locale (Chinese when the English card is missing).\n\n" +
			"The next lab comes from .course/progress.json (written by course test, course status and course watch). When\n" +
			"there is no such file, or a file changed after the last run, the chapter's focused tests run first.\n" +
			"--edit opens the card in $VISUAL or $EDITOR. When every lab is done it says what to do next.",
	},
	"next.example":   {ZH: "  course next\n  course next --edit\n  EDITOR=nano course next --edit", EN: "  course next\n  course next --edit\n  EDITOR=nano course next --edit"},
	"next.flag.edit": {ZH: "用 $VISUAL 或 $EDITOR 打开卡片", EN: "open the card in $VISUAL or $EDITOR"},
	"next.rerun":     {ZH: "没有最近的测试结果：先运行一次测试。", EN: "no recent test results: running the tests first."},
	"next.header":    {ZH: "第 %s 章 · 下一个 Lab：%s（%s）", EN: "chapter %s · next lab: %s (%s)"},
	"next.alldone":   {ZH: "第 %s 章的 Lab 全部完成。运行 course status 看下一步。", EN: "every lab of chapter %s is done. Run course status to see what comes next."},
	"next.noeditor": {
		ZH: "没有设置编辑器：$VISUAL 和 $EDITOR 都是空的。设置其中一个，例如：\n  export EDITOR=nano\n或者直接打开卡片：%s",
		EN: "no editor set: $VISUAL and $EDITOR are both empty. Set one of them, for example:\n  export EDITOR=nano\nor open the card yourself: %s",
	},
	"next.nocard": {ZH: "练习目录里没有 %s，无法用编辑器打开；运行 course next 查看课程里的卡片。", EN: "the practice directory has no %s to open in an editor; run course next to see the course's card."},
	"next.editor": {ZH: "编辑器 %s 失败：%v", EN: "the editor %s failed: %v"},
}

// nextCommand is `course next [--edit] [DIR]`.
func (a *app) nextCommand() *cobra.Command {
	var edit bool
	c := &cobra.Command{
		Use:     "next [--edit] [DIR]",
		Short:   a.p.text("next.short"),
		Long:    a.p.text("next.long"),
		Example: a.p.text("next.example"),
		Args:    a.argsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			root, b, ch, err := a.practiceChapter(dirArg(args))
			if err != nil {
				return err
			}
			p, err := a.currentProgress(root, ch)
			if err != nil {
				return err
			}
			if p == nil {
				if err := a.requireGo(b.Course()); err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, a.p.text("next.rerun"))
				run, err := a.runLabs(c.Context(), root, ch, ch.Labs)
				if err != nil {
					return err
				}
				p = &run.progress
			}
			lab := p.Next(ch)
			if lab == nil {
				fmt.Fprintln(a.stdout, style{a.color}.ok(a.p.text("next.alldone", ch.Number)))
				return nil
			}
			if edit {
				return a.editCard(root, lab)
			}
			return a.printCard(root, ch, lab)
		},
	}
	c.Flags().BoolVar(&edit, "edit", false, a.p.text("next.flag.edit"))
	return c
}

// currentProgress returns the progress of root when it is recent: of this chapter, and no file
// changed since its run started. Otherwise it returns nil.
func (a *app) currentProgress(root string, ch *manifest.Chapter) (*progress.Progress, error) {
	p := savedProgress(root, ch)
	if p == nil {
		return nil, nil // missing, unreadable or foreign: the tests will tell
	}
	stale, err := progress.Stale(root, p)
	if err != nil {
		return nil, err
	}
	if stale {
		return nil, nil
	}
	return p, nil
}

// practiceCard returns the path inside root of lab's card in the output language, falling back
// to the Chinese card; "" when neither exists.
func (a *app) practiceCard(root string, lab *manifest.Lab) string {
	for _, lang := range []string{a.p.lang, langZH} {
		file := filepath.Join(root, filepath.FromSlash(cards.PracticePath(lab.ID, lang)))
		if _, err := os.Stat(file); err == nil {
			return file
		}
	}
	return ""
}

// printCard prints lab's card: the practice directory's copy (the learner may have added notes),
// or the course's when the practice directory has none.
func (a *app) printCard(root string, ch *manifest.Chapter, lab *manifest.Lab) error {
	var text []byte
	var err error
	shown := a.practiceCard(root, lab)
	if shown != "" {
		text, err = os.ReadFile(shown)
	} else {
		shown = lab.CardPath(a.p.lang)
		text, err = fs.ReadFile(a.content, shown)
		if errors.Is(err, fs.ErrNotExist) {
			shown = lab.CardPath(langZH)
			text, err = fs.ReadFile(a.content, shown)
		}
	}
	if err != nil {
		return fmt.Errorf("lab %s card: %w", lab.ID, err)
	}
	if rel, err := filepath.Rel(root, shown); err == nil && !strings.HasPrefix(rel, "..") {
		shown = filepath.ToSlash(rel)
	}
	fmt.Fprintln(a.stdout, style{a.color}.bold(a.p.text("next.header", ch.Number, lab.ID, shown)))
	fmt.Fprintln(a.stdout)
	fmt.Fprint(a.stdout, strings.TrimRight(string(text), "\n")+"\n")
	return nil
}

// editCard opens lab's card from the practice directory in $VISUAL or $EDITOR. The variable may
// hold arguments too ("code --wait").
func (a *app) editCard(root string, lab *manifest.Lab) error {
	file := a.practiceCard(root, lab)
	if file == "" {
		return errors.New(a.p.text("next.nocard", cards.PracticePath(lab.ID, a.p.lang)))
	}
	editor := strings.TrimSpace(a.getenv("VISUAL"))
	if editor == "" {
		editor = strings.TrimSpace(a.getenv("EDITOR"))
	}
	if editor == "" {
		rel, _ := filepath.Rel(root, file)
		return errors.New(a.p.text("next.noeditor", filepath.ToSlash(rel)))
	}
	words := strings.Fields(editor)
	cmd := exec.Command(words[0], append(words[1:], file)...)
	cmd.Dir = root
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.stdin, a.stdout, a.stderr
	if err := cmd.Run(); err != nil {
		return errors.New(a.p.text("next.editor", editor, err))
	}
	return nil
}
