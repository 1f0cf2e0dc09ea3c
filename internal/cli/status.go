package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/progress"
)

// statusMessages are the texts of `course status`.
var statusMessages = i18n.Catalog{
	"status.short": {ZH: "显示每个 Lab 的进度和下一步的准确命令", EN: "show each lab's progress and the exact command for the next one"},
	"status.long": {
		ZH: "在练习目录 DIR（默认为当前目录）运行本章的聚焦测试，显示每个 Lab 的状态、进度条和下一个 Lab 的准确命令。\n\n" +
			"状态由测试得出：完成（全部测试通过）、红灯（有测试以别的原因失败，或没有运行）、\n" +
			"未开始（每个测试都停在桩上，即失败信息是本 Lab 或更早 Lab 的 \"尚未实现\"）。\n" +
			"构建失败的一次运行不改变任何 Lab 的状态。\n\n" +
			"结果保存在 .course/progress.json（course test、course watch 也会更新它），重启后仍在；\n" +
			"course next 用它找到下一个 Lab。测试失败不算命令失败：能显示状态就退出 0，构建失败时退出 1。",
		EN: "Run the chapter's focused tests in the practice directory DIR (the current directory by default) and show each lab's\n" +
			"state, a progress bar and the exact command for the next lab.\n\n" +
			"The states come from the tests: done (every test passes), red (a test failed for another reason, or did not run),\n" +
			"not started (every test stops at a stub: it fails with the \"尚未实现\" message of this lab or an earlier one).\n" +
			"A run that does not build changes no lab's state.\n\n" +
			"The result is kept in .course/progress.json (course test and course watch update it too), so it survives a restart;\n" +
			"course next reads it to find the next lab. Red labs are not a failure of the command: it exits 0 when it could show\n" +
			"the status, 1 when the build failed.",
	},
	"status.example": {ZH: "  course status\n  course status ../tinypi-07\n  course --lang en status", EN: "  course status\n  course status ../tinypi-07\n  course --lang en status"},
	"status.build":   {ZH: "这次构建失败，下面是上一次运行的状态。修好构建后再运行 course status。", EN: "this run did not build; the states below are from the run before. Fix the build, then run course status again."},
	"status.next":    {ZH: "下一个 Lab：%s %s", EN: "next lab: %s %s"},
	"status.next.card": {
		ZH: "  读卡片：course next（或打开 %s）", EN: "  read its card: course next (or open %s)",
	},
	"status.next.run":         {ZH: "  运行：  %s", EN: "  run:           %s"},
	"status.alldone":          {ZH: "第 %s 章的 %d 个 Lab 全部完成，恭喜！", EN: "chapter %s: all %d labs are done. Congratulations!"},
	"status.solution":         {ZH: "对照参考答案（任一 Lab）：course solution --lab %s", EN: "compare with the reference (any lab): course solution --lab %s"},
	"status.nextchapter":      {ZH: "下一章 %s %s：course practice %s %s", EN: "next chapter, %s %s: course practice %s %s"},
	"status.nextchapter.from": {ZH: "想接着用你自己的代码（而不是参考代码）：course practice %s %s --from %s", EN: "to go on with your own code instead of the reference's: course practice %s %s --from %s"},
	"status.origins":          {ZH: "前面各章的 Lab 用的是谁的代码（这个目录带入自第 %s 章）：", EN: "whose code the earlier labs are (this directory was carried from chapter %s):"},
	"status.lastchapter":      {ZH: "这是课程的最后一章。", EN: "this is the last chapter of the course."},
}

// statusCommand is `course status [DIR]`.
func (a *app) statusCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "status [DIR]",
		Short:   a.p.text("status.short"),
		Long:    a.p.text("status.long"),
		Example: a.p.text("status.example"),
		Args:    a.argsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			root, b, ch, err := a.practiceChapter(dirArg(args))
			if err != nil {
				return err
			}
			if err := a.requireGo(b.Course()); err != nil {
				return err
			}
			run, err := a.runLabs(c.Context(), root, ch, ch.Labs)
			if err != nil {
				return err
			}
			report := run.report
			if report.BuildFailed {
				st := style{a.color}
				fmt.Fprintln(a.stdout, st.bad(a.p.text("test.build")))
				fmt.Fprintln(a.stdout, strings.TrimRight(report.BuildOutput, "\n"))
				fmt.Fprintln(a.stdout, a.p.text("status.build"))
			}
			a.printStatus(b.Course(), ch, root, run.progress)
			if _, prov, err := practice.Find(root); err == nil && len(prov.Earlier) > 0 {
				a.printOrigins(prov)
			}
			if len(run.testsChanged) > 0 {
				a.printTestsChanged(run.testsChanged)
			}
			if report.BuildFailed {
				return errSilentFailure
			}
			return nil
		},
	}
}

// printStatus prints the lab table, the progress bar and what to do next.
func (a *app) printStatus(c *manifest.Course, ch *manifest.Chapter, root string, p progress.Progress) {
	a.printLabProgress(ch, p)
	next := p.Next(ch)
	if next != nil {
		fmt.Fprintln(a.stdout, a.p.text("status.next", next.ID, a.labTitle(next)))
		fmt.Fprintln(a.stdout, a.p.text("status.next.card", a.cardPath(next)))
		fmt.Fprintln(a.stdout, a.p.text("status.next.run", a.labTestCommand(next)))
		return
	}
	st := style{a.color}
	fmt.Fprintln(a.stdout, st.ok(a.p.text("status.alldone", ch.Number, len(ch.Labs))))
	if len(ch.Labs) > 0 && ch.Rebuild() {
		fmt.Fprintln(a.stdout, a.p.text("status.solution", ch.Labs[0].ID))
	}
	if following := nextChapter(c, ch); following != nil {
		dir := filepath.Join(filepath.Dir(root), "tinypi-"+following.Number)
		fmt.Fprintln(a.stdout, a.p.text("status.nextchapter", following.Number, a.chapterTitle(following), following.Number, shellQuote(dir)))
		if following.Rebuild() && ch.Rebuild() {
			fmt.Fprintln(a.stdout, a.p.text("status.nextchapter.from", following.Number, shellQuote(dir), shellQuote(root)))
		}
	} else {
		fmt.Fprintln(a.stdout, a.p.text("status.lastchapter"))
	}
}

// nextChapter returns the chapter after ch in the course, or nil.
func nextChapter(c *manifest.Course, ch *manifest.Chapter) *manifest.Chapter {
	for i, other := range c.Chapters {
		if other.Number == ch.Number && i+1 < len(c.Chapters) {
			return c.Chapters[i+1]
		}
	}
	return nil
}

// printOrigins says, in a directory made with --from, where each earlier lab's code comes from.
func (a *app) printOrigins(prov *practice.Provenance) {
	fmt.Fprintln(a.stdout)
	fmt.Fprintln(a.stdout, a.p.text("status.origins", prov.From))
	a.printOriginLines(prov.Earlier)
}
