package cli

import (
	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/carry"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/progress"
)

// testMessages are the texts of `course test`.
var testMessages = i18n.Catalog{
	"test.short": {ZH: "在练习目录中运行本章的聚焦测试", EN: "run the chapter's focused tests in a practice directory"},
	"test.long": {
		ZH: "在练习目录 DIR（默认为当前目录）运行本章的聚焦测试，并按 Lab 汇总：编号、标题、通过数/总数，\n" +
			"以及第一个失败测试的第一条失败信息。最后一行是 \"通过 N，失败 M\"；构建失败时什么也没有运行，最后一行这样说。\n" +
			"一个测试只有自己报告了通过才算通过：测试进程在测试中途退出（os.Exit、log.Fatal、goroutine 里的 panic）时，\n" +
			"这个测试算失败，并显示进程最后的输出。聚焦测试文件和练习开始时不一样时，没有 Lab 算完成（course reset --tests 恢复）。\n" +
			"--lab 只运行一个 Lab，接受编号（7.3）或关键词（非执行终态）。有失败、构建失败或测试文件被改动时退出码为 1。",
		EN: "Run the chapter's focused tests in the practice directory DIR (the current directory by default) and sum them up per lab:\n" +
			"id, title, passed/total, and the first failure message of the first failing test. The last line is \"N passed, M failed\";\n" +
			"when the build failed nothing ran, and the last line says so. A test passes only when it reported its pass itself: when\n" +
			"the test process exits in the middle of a test (os.Exit, log.Fatal, a panic in a goroutine) the test fails and its last\n" +
			"output is shown. While the focused test files differ from the practice's start no lab counts as done (course reset --tests).\n" +
			"--lab runs one lab only; it takes an id (7.3) or a keyword (非执行终态). Exit code 1 when anything failed, the build failed\n" +
			"or the test files were changed.",
	},
	"test.example":  {ZH: "  course test\n  course test --lab 7.1\n  course test --lab 非执行终态 ../tinypi-07\n  course test --heldout ../tinypi-14", EN: "  course test\n  course test --lab 7.1\n  course test --lab 非执行终态 ../tinypi-07\n  course test --heldout ../tinypi-14"},
	"test.flag.lab": {ZH: "只运行一个 Lab：编号（7.3）或关键词", EN: "run one lab only: its id (7.3) or keyword"},
	"test.flag.all": {
		ZH: "也运行前面各章的聚焦测试（用 --from 带入了自己代码的目录里，改坏前面的 Lab 立刻就能看到）",
		EN: "run the focused tests of the earlier chapters too (in a directory made with --from, a change that breaks an earlier lab shows at once)",
	},
	"test.all.lab": {ZH: "--all 和 --lab 只能选一个", EN: "--all and --lab cannot be used together"},
}

// testCommand is `course test [--lab ID] [DIR]`.
func (a *app) testCommand() *cobra.Command {
	var labFlag string
	var all, heldoutFlag bool
	c := &cobra.Command{
		Use:     "test [--lab ID] [DIR]",
		Short:   a.p.text("test.short"),
		Long:    a.p.text("test.long"),
		Example: a.p.text("test.example"),
		Args:    a.argsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			root, b, ch, err := a.practiceChapter(dirArg(args))
			if err != nil {
				return err
			}
			if heldoutFlag {
				if all || labFlag != "" {
					return &usageError{a.p.text("heldout.flags")}
				}
				if err := a.requireGo(b.Course()); err != nil {
					return err
				}
				return a.runHeldout(c.Context(), root, b, ch) // heldout.go
			}
			labs := ch.Labs
			if all && labFlag != "" {
				return &usageError{a.p.text("test.all.lab")}
			}
			if all {
				// Every chapter's focused tests so far: in a directory made with --from, a
				// change that breaks an earlier lab shows at once.
				var earlier []*manifest.Lab
				for _, e := range carry.ProofChapters(b.Course(), ch) {
					earlier = append(earlier, e.Labs...)
				}
				labs = append(earlier, ch.Labs...)
			}
			if labFlag != "" {
				l, err := ch.Lab(labFlag)
				if err != nil {
					return a.unknownLab(ch, labFlag)
				}
				labs = []*manifest.Lab{l}
			}
			if err := a.requireGo(b.Course()); err != nil {
				return err
			}
			// Record the run for course status/next, and show the hints of the labs worked on.
			run, err := a.runLabs(c.Context(), root, ch, labs)
			if err != nil {
				return err
			}
			if !a.printTestReport(labs, run.report, progress.HintLabs(run.outcome)) {
				a.printKnownMistakes(b, ch, labs, run.report) // knownmistake.go
				a.printTranscriptHint(root, run.report)
				return errSilentFailure
			}
			if len(run.testsChanged) > 0 {
				// Green with edited tests proves nothing: say it again, last, and fail.
				a.printTestsChanged(run.testsChanged)
				return errSilentFailure
			}
			return nil
		},
	}
	c.Flags().StringVar(&labFlag, "lab", "", a.p.text("test.flag.lab"))
	c.Flags().BoolVar(&all, "all", false, a.p.text("test.flag.all"))
	c.Flags().BoolVar(&heldoutFlag, "heldout", false, a.p.text("test.flag.heldout"))
	a.addTimeoutFlag(c)
	return c
}
