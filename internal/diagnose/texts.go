package diagnose

import (
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
)

// Language is the language a diagnosis is printed in. The diagnosis program gets it as its -lang
// flag, so that the runs speak the same language as the rest.
type Language string

// The languages a diagnosis speaks. Chinese is the default: any other value prints Chinese.
const (
	LangZH Language = i18n.ZH
	LangEN Language = i18n.EN
)

// messages are the words of a diagnosis. The runs themselves are printed by the chapter's
// diagnosis program in its own words.
var messages = i18n.Catalog{
	"list.header": {ZH: "第 %s 章可以诊断的错误写法（运行 course diagnose %s 名字）：", EN: "Mistakes chapter %s can diagnose (run course diagnose %s NAME):"},
	"list.header.tests": {
		ZH: "第 %s 章的已知错误写法。本章没有逐轮打印运行的诊断程序：course diagnose %s 名字 把错误写进本章 target，\n运行它所属 Lab 的聚焦测试，打印哪些测试失败、第一条失败信息是什么（course test 遇到正好这样的失败时会点名它）：",
		EN: "The known mistakes of chapter %s. The chapter has no diagnosis program that prints runs round by round: course diagnose %s NAME\nwrites the mistake into the chapter's target, runs its lab's focused tests and prints which fail and with what first message\n(course test names the mistake when your failures are exactly these):",
	},
	"tests.intro": {
		ZH: "用这个错误写法运行 Lab %s 的聚焦测试（go test -run %s .）。参考实现通过其中每一个（course dev check 证明）。",
		EN: "The focused tests of lab %s run on this mistake (go test -run %s .). The reference passes every one of them (course dev check proves it).",
	},
	"tests.pass":     {ZH: "通过", EN: "passes"},
	"tests.fail":     {ZH: "失败", EN: "FAILS"},
	"tests.build":    {ZH: "错误写法没有编译成功（这是课程的问题，不是你的）：\n%s", EN: "the mistake did not compile (a problem of the course, not yours):\n%s"},
	"tests.footer":   {ZH: "你的 course test 在 Lab %s 上失败得和上面一样（同样的测试、同样的第一条信息）时，它会点名这个错误写法。", EN: "When course test shows lab %s failing exactly like this (the same tests, the same first messages), it names this mistake."},
	"tests.uncaught": {ZH: "（没有测试失败：Lab %s 的测试抓不住这个错误写法，这是课程的问题。）", EN: "(no test failed: the tests of lab %s do not catch this mistake, which is a problem of the course.)"},

	"header":      {ZH: "== 诊断：第 %s 章 · %s（Lab %s）==", EN: "== diagnosis: chapter %s · %s (Lab %s) =="},
	"explain":     {ZH: "错误写法：%s", EN: "the mistake: %s"},
	"intro":       {ZH: "下面是同一个诊断程序（%s，属于本章内容）分别在错误写法和参考实现上的运行，逐轮打印。", EN: "Below, the same diagnosis program (%s, part of this chapter) runs on the mistake and on the reference, printed round by round."},
	"side.mutant": {ZH: "######## 错误写法 %s ########", EN: "######## mistake %s ########"},
	"side.target": {ZH: "######## 参考实现 ########", EN: "######## reference ########"},

	"compare":        {ZH: "== 对照 ==", EN: "== comparison =="},
	"col.side":       {ZH: "写法", EN: "code"},
	"col.scenario":   {ZH: "场景", EN: "scenario"},
	"col.rounds":     {ZH: "轮数", EN: "rounds"},
	"col.steps":      {ZH: "steps", EN: "steps"},
	"col.executions": {ZH: "工具执行", EN: "executions"},
	"col.unpaired":   {ZH: "未配对", EN: "unpaired"},
	"col.end":        {ZH: "结束", EN: "end"},
	"row.mutant":     {ZH: "错误写法 %s", EN: "mistake %s"},
	"row.target":     {ZH: "参考实现", EN: "reference"},
	"diff.header":    {ZH: "== 同一场景下与参考实现不同的行：%s ==", EN: "== lines that differ from the reference in the same scenario: %s =="},
	"diff.none":      {ZH: "（没有不同的行：这个场景看不出这个错误）", EN: "(no line differs: this scenario does not show the mistake)"},
	"diff.target":    {ZH: "参考 |", EN: "reference |"},
	"diff.mutant":    {ZH: "错误 |", EN: "mistake   |"},
}

// texts are the words of a diagnosis in one language.
type texts struct {
	// lang is passed on to the diagnosis program.
	lang Language
}

// text formats the message id in the texts' language.
func (t texts) text(id string, args ...any) string {
	return messages.Text(string(t.lang), id, args...)
}

// explanation is m's explanation in the texts' language.
func (t texts) explanation(m *manifest.Mutant) string {
	if t.lang == LangEN && m.ExplainEN != "" {
		return m.ExplainEN
	}
	return m.Explain
}

// textsFor returns the texts of lang: English for LangEN, Chinese otherwise.
func textsFor(lang Language) texts {
	if lang == LangEN {
		return texts{lang: LangEN}
	}
	return texts{lang: LangZH}
}
