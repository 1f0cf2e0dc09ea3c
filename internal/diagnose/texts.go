package diagnose

// texts are the words of a diagnosis, kept in one place so that a translation touches nothing
// else. The runs themselves are printed by the chapter's diagnosis program in its own words.
type texts struct {
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

func chinese() texts {
	return texts{
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
