package diagnose

import "github.com/learn-tinypi/course/internal/manifest"

// Language is the language a diagnosis is printed in. The diagnosis program gets it as its -lang
// flag, so that the runs speak the same language as the rest.
type Language string

// The languages a diagnosis speaks. Chinese is the default: any other value prints Chinese.
const (
	LangZH Language = "zh"
	LangEN Language = "en"
)

// texts are the words of a diagnosis, kept in one place so that a translation touches nothing
// else. The runs themselves are printed by the chapter's diagnosis program in its own words.
type texts struct {
	// lang is passed on to the diagnosis program.
	lang Language

	listHeader string

	header, explain, intro, mutantSide, targetSide string

	compare, colSide, colScenario, colRounds, colSteps, colExecutions, colUnpaired, colEnd string
	rowMutant, rowTarget                                                                   string
	checks                                                                                 map[string]string

	diffHeader, diffNone, diffTarget, diffMutant string
}

// checkLabel is the column heading of a fact the runs check in their final answers.
func (t texts) checkLabel(key string) string {
	if label, ok := t.checks[key]; ok {
		return label
	}
	return key
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
		return english()
	}
	return chinese()
}

func chinese() texts {
	return texts{
		lang: LangZH,

		listHeader: "第 %s 章可以诊断的错误写法（运行 course diagnose %s 名字）：",

		header:     "== 诊断：第 %s 章 · %s（Lab %s）==",
		explain:    "错误写法：%s",
		intro:      "下面是同一个诊断程序（%s，属于本章内容）分别在错误写法和参考实现上的运行，逐轮打印。",
		mutantSide: "######## 错误写法 %s ########",
		targetSide: "######## 参考实现 ########",

		compare:       "== 对照 ==",
		colSide:       "写法",
		colScenario:   "场景",
		colRounds:     "轮数",
		colSteps:      "steps",
		colExecutions: "工具执行",
		colUnpaired:   "未配对",
		colEnd:        "结束",
		rowMutant:     "错误写法 %s",
		rowTarget:     "参考实现",
		checks: map[string]string{
			"weather": "含天气",
			"fx":      "含汇率",
			"project": "含项目名",
		},

		diffHeader: "== 同一场景下与参考实现不同的行：%s ==",
		diffNone:   "（没有不同的行：这个场景看不出这个错误）",
		diffTarget: "参考 |",
		diffMutant: "错误 |",
	}
}

func english() texts {
	return texts{
		lang: LangEN,

		listHeader: "Mistakes chapter %s can diagnose (run course diagnose %s NAME):",

		header:     "== diagnosis: chapter %s · %s (Lab %s) ==",
		explain:    "the mistake: %s",
		intro:      "Below, the same diagnosis program (%s, part of this chapter) runs on the mistake and on the reference, printed round by round.",
		mutantSide: "######## mistake %s ########",
		targetSide: "######## reference ########",

		compare:       "== comparison ==",
		colSide:       "code",
		colScenario:   "scenario",
		colRounds:     "rounds",
		colSteps:      "steps",
		colExecutions: "executions",
		colUnpaired:   "unpaired",
		colEnd:        "end",
		rowMutant:     "mistake %s",
		rowTarget:     "reference",
		checks: map[string]string{
			"weather": "has_weather",
			"fx":      "has_rate",
			"project": "has_project",
		},

		diffHeader: "== lines that differ from the reference in the same scenario: %s ==",
		diffNone:   "(no line differs: this scenario does not show the mistake)",
		diffTarget: "reference |",
		diffMutant: "mistake   |",
	}
}
