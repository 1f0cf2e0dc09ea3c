package transcript

import "github.com/learn-tinypi/course/internal/i18n"

// labelMessages are the words Render prints, in both languages. LabelsIn picks one language; the
// package's test checks the catalog with i18n.Problems, as every catalog of the kit is checked.
var labelMessages = i18n.Catalog{
	"learner":    {ZH: "你的运行", EN: "your run"},
	"reference":  {ZH: "参考运行", EN: "reference run"},
	"first":      {ZH: "第一处不同：第 %[1]d 行（%[2]s）", EN: "first difference: line %[1]d (%[2]s)"},
	"same":       {ZH: "两次运行一致。", EN: "the two runs agree."},
	"testfailed": {ZH: "（测试失败）", EN: "(test failed)"},
	"reordered":  {ZH: "~ 同一批并发工具的 tool_end，完成顺序不同（不算不同）", EN: "~ tool_end events of one concurrent batch, completed in another order (not a difference)"},
}

// Labels are the words Render prints. LabelsIn gives them in either language; a caller may also
// set its own.
type Labels struct {
	Learner, Reference string // column headings, e.g. "your run", "reference run"
	// FirstDifference is a format taking the line number (%[1]d) and the section (%[2]s).
	FirstDifference string
	Same            string // printed when the runs agree
	TestFailed      string // printed after the test name when the learner's test failed
	Reordered       string // explains the "~" marker
}

// LabelsIn returns the labels in lang: i18n.EN for English, Chinese otherwise.
func LabelsIn(lang string) Labels {
	text := func(id string) string { return labelMessages.Text(lang, id) }
	return Labels{
		Learner:         text("learner"),
		Reference:       text("reference"),
		FirstDifference: text("first"),
		Same:            text("same"),
		TestFailed:      text("testfailed"),
		Reordered:       text("reordered"),
	}
}

// DefaultLabels returns the English labels.
func DefaultLabels() Labels {
	return LabelsIn(i18n.EN)
}
