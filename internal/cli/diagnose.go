package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/diagnose"
	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
)

// diagnoseMessages are the texts of `course diagnose` (part of the catalog, messages.go).
var diagnoseMessages = i18n.Catalog{
	"diagnose.short": {ZH: "运行一个已知的错误写法，逐轮对照参考实现", EN: "run a known mistake and compare it round by round with the reference"},
	"diagnose.long": {
		ZH: "course diagnose NN 列出第 NN 章可以诊断的错误写法（课程的 mutant），每个附一句说明。\n\n" +
			"course diagnose NN 名字 把这个错误真的写进本章 target，用本章的诊断程序 cmd/diagnose\n" +
			"（桩模型 + 内存工具，离线、结果固定）分别运行错误写法和参考实现，逐轮打印：assistant 的文字、\n" +
			"工具调用、哪些执行了哪些被丢弃、历史 role 序列、未配对的调用 id、工具执行次数、结束方式和最终回答，\n" +
			"最后给出对照表和不同的行。需要 go 命令；临时目录用完即删。\n\n" +
			"诊断程序属于本章内容，练习目录里也有：在练习目录中运行 go run ./cmd/diagnose all，诊断的就是你自己的 loop。\n\n" +
			"没有诊断程序的章节（07 以外的章节）：course diagnose NN 名字 把错误写进 target，运行它所属 Lab 的聚焦测试，\n" +
			"打印哪些测试失败、第一条失败信息是什么：正是犯这个错误时 course test 给你看的。",
		EN: "course diagnose NN lists the mistakes of chapter NN that can be diagnosed (the course's mutants), each with a\n" +
			"one-line explanation.\n\n" +
			"course diagnose NN NAME writes that mistake into the chapter's target for real and runs the chapter's diagnosis\n" +
			"program cmd/diagnose (stub models and in-memory tools, offline, always the same output) on the mistake and on\n" +
			"the reference. It prints each run round by round: the assistant's text, the tool calls, which ran and which were\n" +
			"dropped, the role sequence, the unpaired call ids, the tool executions, how the run ended and the final answer,\n" +
			"then a comparison table and the lines that differ. Needs the go command; temporary directories are removed.\n\n" +
			"The program is part of the chapter, so your practice directory has it too: go run ./cmd/diagnose all there\n" +
			"diagnoses your own loop.\n\n" +
			"Chapters without a diagnosis program (all but 07): course diagnose NN NAME writes the mistake into the target,\n" +
			"runs its lab's focused tests and prints which fail and with what first message: what course test shows you\n" +
			"when you make that mistake.",
	},
	"diagnose.example": {
		ZH: "  course diagnose 07\n  course diagnose 07 first-call-only\n  cd ../tinypi-07 && go run ./cmd/diagnose weather-fx-skip weather-fx-reask",
		EN: "  course diagnose 07\n  course diagnose 07 first-call-only\n  cd ../tinypi-07 && go run ./cmd/diagnose weather-fx-skip weather-fx-reask",
	},
	"diagnose.none":     {ZH: "第 %s 章没有已知的错误写法（mutant），没有可诊断的。", EN: "chapter %s has no known mistakes (mutants): there is nothing to diagnose."},
	"diagnose.testing":  {ZH: "正在把错误写法 %s 写进第 %s 章的 target，运行 Lab %s 的聚焦测试……", EN: "writing mistake %s into the target of chapter %s and running the focused tests of lab %s..."},
	"diagnose.unknown":  {ZH: "第 %s 章没有名为 %q 的错误写法。可用的：\n%s", EN: "chapter %s has no mistake named %q. Available:\n%s"},
	"diagnose.building": {ZH: "正在构建并运行 %s（错误写法 %s 与参考实现）……", EN: "building and running %s (mistake %s and the reference)..."},
}

// diagnoseCommand is `course diagnose NN [NAME]`.
func (a *app) diagnoseCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "diagnose NN [NAME]",
		Short:   a.p.text("diagnose.short"),
		Long:    a.p.text("diagnose.long"),
		Example: a.p.text("diagnose.example"),
		Args:    a.argsRange(1, 2),
		RunE: func(c *cobra.Command, args []string) error {
			b, ch, err := a.chapter(args[0])
			if err != nil {
				return err
			}
			if len(args) == 1 {
				err := diagnose.WriteList(a.stdout, b, ch, diagnose.Language(a.p.lang))
				if errors.Is(err, diagnose.ErrNoDriver) {
					return a.usagef("diagnose.none", ch.Number)
				}
				return err
			}
			mutants, err := diagnose.List(b, ch)
			if errors.Is(err, diagnose.ErrNoDriver) {
				return a.usagef("diagnose.none", ch.Number)
			}
			if err != nil {
				return err
			}
			// Refuse an unknown name before anything is built.
			if !slices.ContainsFunc(mutants, func(m *manifest.Mutant) bool { return m.Name == args[1] }) {
				return a.usagef("diagnose.unknown", ch.Number, args[1], a.mistakeList(mutants))
			}
			if err := a.requireGo(b.Course()); err != nil {
				return err
			}
			if ch.Diagnosis != nil {
				fmt.Fprintln(a.stderr, a.p.text("diagnose.building", ch.Diagnosis.Program, args[1]))
			} else {
				m := mutants[slices.IndexFunc(mutants, func(m *manifest.Mutant) bool { return m.Name == args[1] })]
				fmt.Fprintln(a.stderr, a.p.text("diagnose.testing", args[1], ch.Number, m.Lab))
			}
			err = diagnose.Run(c.Context(), b, ch, args[1], diagnose.Language(a.p.lang), a.stdout)
			if errors.Is(err, gotest.ErrNoGo) {
				return errors.New(a.p.text("err.no.go", b.Course().GoVersion))
			}
			return err
		},
	}
}

// mistakeList is one line per mistake: its name, padded, and its explanation in the output
// language.
func (a *app) mistakeList(mutants []*manifest.Mutant) string {
	rows := make([][]string, len(mutants))
	for i, m := range mutants {
		explain := m.Explain
		if a.p.lang == langEN && m.ExplainEN != "" {
			explain = m.ExplainEN
		}
		rows[i] = []string{"  " + m.Name, explain}
	}
	var b strings.Builder
	_ = writeTable(&b, rows) // a strings.Builder does not fail
	return strings.TrimRight(b.String(), "\n")
}
