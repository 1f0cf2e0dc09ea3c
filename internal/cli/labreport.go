package cli

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/progress"
	"github.com/learn-tinypi/course/internal/transcript"
)

// labReportMessages are the texts of the report `course test` and `course watch` print after a
// run: the lab table, the summary line, what it says when nothing ran and when a test binary
// exited in a test.
var labReportMessages = i18n.Catalog{
	"test.header":        {ZH: "Lab\t标题\t通过\t第一条失败", EN: "lab\ttitle\tpassed\tfirst failure"},
	"test.build":         {ZH: "构建失败，没有运行任何测试：", EN: "the build failed, so no test ran:"},
	"test.build.short":   {ZH: "构建失败", EN: "build failed"},
	"test.needs":         {ZH: "先做 Lab %[1]s：这个 Lab 的测试要用到它（course test --lab %[1]s）。%[2]s", EN: "do lab %[1]s first: this lab's tests need it (course test --lab %[1]s). %[2]s"},
	"test.next.needs":    {ZH: "下一步：先做 Lab %[1]s：读 %[2]s，然后运行 course test --lab %[1]s", EN: "next: lab %[1]s first: read %[2]s, then run course test --lab %[1]s"},
	"test.missing":       {ZH: "没有运行（测试不存在？）", EN: "did not run (test missing?)"},
	"test.next":          {ZH: "下一步：读 %s，然后运行 %s", EN: "next: read %s, then run %s"},
	"test.done":          {ZH: "全部通过。用 git diff 回顾你的改动。", EN: "all passed. Review your changes with git diff."},
	"test.summary":       {ZH: "通过 %d，失败 %d", EN: "%d passed, %d failed"},
	"test.build.more":    {ZH: "……（还有 %d 行：运行 go build ./... 查看全部）", EN: "... (%d more lines: run go build ./... to see them all)"},
	"test.build.nothing": {ZH: "没有运行任何测试：代码没有通过编译（见上面的错误）。修好它，再运行 course test。", EN: "nothing ran: the code did not compile (see the errors above). Fix it, then run course test again."},
	"test.build.env": {
		ZH: "这看起来是 Go 环境的问题（模块下载、vendor、GOFLAGS、工具链），不是你的代码：运行 course doctor，它会逐项检查并给出修复命令。",
		EN: "this looks like a problem of the Go environment (module downloads, vendoring, GOFLAGS, the toolchain), not of your code: run course doctor, which checks each setting and gives the fix.",
	},
	"test.exit": {
		ZH: "测试进程在 %s 运行时退出了，测试没来得及报告结果（os.Exit、log.Fatal、另一个 goroutine 里的 panic？）。它最后的输出：",
		EN: "the test process exited while %s was running, before the test reported a result (os.Exit, log.Fatal, a panic in another goroutine?). Its last output:",
	},
	"test.exit.notest":   {ZH: "测试进程提前退出了，后面的测试没有运行。它最后的输出：", EN: "the test process exited early; the tests after it did not run. Its last output:"},
	"test.exit.nooutput": {ZH: "（没有输出）", EN: "(no output)"},
	"test.exited":        {ZH: "测试进程在本测试报告结果之前退出（见下）", EN: "the test process exited before this test reported a result (see below)"},
	"test.notrun.exit":   {ZH: "没有运行：测试进程在 %s 中退出了", EN: "did not run: the test process exited in %s"},
}

// labOutcome is what the focused tests of one lab did.
type labOutcome struct {
	lab           *manifest.Lab
	passed, total int
	firstFailure  string
	// needs is the earlier lab whose stub the first failure stopped at ("" when none): this
	// lab's tests need that lab done first, and this lab's own hint is not the point yet.
	needs string
}

// labOutcome counts the tests of lab l in the report, as progress counts them, and words the
// first failure for the learner.
func (a *app) labOutcome(l *manifest.Lab, report *gotest.Report) labOutcome {
	tests := progress.LabTests(l, report)
	o := labOutcome{lab: l}
	o.passed, o.total = progress.Count(l, tests)
	for _, t := range tests {
		if !t.Passed {
			o.firstFailure = t.Name + ": " + a.failureText(l, t)
			if m := pendingRE.FindStringSubmatch(t.FirstFailure); m != nil && m[1] != l.ID {
				o.needs = m[1]
				o.firstFailure = t.Name + ": " + a.p.text("test.needs", m[1], a.failureText(l, t))
			}
			break
		}
	}
	if o.firstFailure == "" && o.passed < o.total {
		exit, exited := report.Exited()
		switch {
		case report.BuildFailed:
			o.firstFailure = a.p.text("test.build.short")
		case exited && exit.Test != "":
			o.firstFailure = a.p.text("test.notrun.exit", exit.Test)
		default:
			o.firstFailure = a.p.text("test.missing")
		}
	}
	return o
}

// buildOutputLines is how many lines of a failed build `course test` shows.
const buildOutputLines = 15

// printTestReport prints the per-lab table, with the hint of each lab in hints under its row,
// and the total line, and reports whether everything passed.
func (a *app) printTestReport(labs []*manifest.Lab, report *gotest.Report, hints []string) bool {
	st := style{a.color}
	if report.BuildFailed {
		fmt.Fprintln(a.stdout, st.bad(a.p.text("test.build")))
		fmt.Fprintln(a.stdout, firstLines(report.BuildOutput, buildOutputLines, a.p.text("test.build.more")))
	}
	outcomes := make([]labOutcome, len(labs))
	_, exited := report.Exited()
	for i, l := range labs {
		outcomes[i] = a.labOutcome(l, report)
		if outcomes[i].needs != "" {
			// It stopped at an earlier lab's stub: "do that lab first" is the hint.
			hints = slices.DeleteFunc(slices.Clone(hints), func(id string) bool { return id == l.ID })
		}
		if exited && len(progress.LabTests(l, report)) == 0 {
			// The test process ended before this lab's tests ran: its hint is not the point.
			hints = slices.DeleteFunc(slices.Clone(hints), func(id string) bool { return id == l.ID })
		}
	}
	rows := [][]string{splitTabs(a.p.text("test.header"))}
	passed, failed := 0, 0
	var next *manifest.Lab
	needs := "" // the earlier lab next's tests stopped at, when it is not among labs
	for _, o := range outcomes {
		passed += o.passed
		failed += o.total - o.passed
		count := strconv.Itoa(o.passed) + "/" + strconv.Itoa(o.total)
		if o.passed == o.total {
			count = st.ok(count)
		} else {
			count = st.bad(count)
			if next == nil {
				next = o.lab
				if !slices.ContainsFunc(labs, func(l *manifest.Lab) bool { return l.ID == o.needs }) {
					needs = o.needs
				}
			}
		}
		rows = append(rows, []string{o.lab.ID, a.labTitle(o.lab), count, o.firstFailure})
	}
	_ = writeTableNotes(a.stdout, rows, a.labHints(labs, hints))
	if exit, ok := report.Exited(); ok {
		a.printExit(exit)
	}
	if report.BuildFailed {
		// Nothing ran: a summary "0 passed, 9 failed" would say the tests ran and failed.
		fmt.Fprintln(a.stdout, st.bad(a.p.text("test.build.nothing")))
		if environmental(report.BuildOutput) {
			fmt.Fprintln(a.stdout, a.p.text("test.build.env"))
		}
	} else {
		fmt.Fprintln(a.stdout, a.p.text("test.summary", passed, failed))
	}
	ok := failed == 0 && !report.BuildFailed && report.ExitCode == 0
	switch {
	case needs != "" && !report.BuildFailed:
		fmt.Fprintln(a.stdout, a.p.text("test.next.needs", needs, a.cardPath(&manifest.Lab{ID: needs})))
	case next != nil && !report.BuildFailed:
		fmt.Fprintln(a.stdout, a.p.text("test.next", a.cardPath(next), a.labTestCommand(next)))
	case ok:
		fmt.Fprintln(a.stdout, st.ok(a.p.text("test.done")))
	case report.BuildOutput != "" && !report.BuildFailed:
		// go test failed outside any focused test (for example in TestMain): show why.
		fmt.Fprintln(a.stdout, strings.TrimRight(report.BuildOutput, "\n"))
	}
	return ok
}

// printExit says that a test binary exited in the middle of a test, and shows its last output.
func (a *app) printExit(exit gotest.Exit) {
	if exit.Test == "" {
		fmt.Fprintln(a.stdout, a.p.text("test.exit.notest"))
	} else {
		fmt.Fprintln(a.stdout, a.p.text("test.exit", exit.Test))
	}
	if len(exit.LastOutput) == 0 {
		fmt.Fprintln(a.stdout, "    "+a.p.text("test.exit.nooutput"))
		return
	}
	for _, line := range exit.LastOutput {
		fmt.Fprintln(a.stdout, "    "+line)
	}
}

// firstLines returns the first n lines of text, and more (with the number of lines left out)
// after them when there are more.
func firstLines(text string, n int, more string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + "\n" + fmt.Sprintf(more, len(lines)-n)
}

// environmentalBuild matches build output caused by the Go environment rather than by the code:
// modules that cannot be downloaded or found, vendoring, the toolchain, GOFLAGS.
var environmentalBuild = regexp.MustCompile(`module lookup disabled|GOPROXY|GOFLAGS|inconsistent vendoring|-mod=vendor|vendor/modules\.txt|cannot find module providing package|missing go\.sum entry|go: downloading|dial tcp|toolchain|GOTOOLCHAIN|go\.work|GOWORK|no required module provides package`)

// environmental reports whether a failed build's output looks like a problem of the Go
// environment, which `course doctor` checks, rather than of the learner's code.
func environmental(buildOutput string) bool {
	return environmentalBuild.MatchString(buildOutput)
}

// failureText is what the first-failure column shows for a failed test t of lab l: its first
// message, with the lines of a diff that carry the difference, and in English an explanation of
// a Chinese pending message.
func (a *app) failureText(l *manifest.Lab, t gotest.TestResult) string {
	text := t.FirstFailure
	if len(t.Difference) > 0 {
		text += " " + strings.Join(t.Difference, " ")
	}
	if t.Unfinished && t.FirstFailure == "" {
		text = a.p.text("test.exited")
	}
	if a.p.lang != langZH {
		text = explainPending(text, l)
	}
	return text
}

// explainPending adds, after the pending message of lab (or of an earlier lab of the same
// chapter, which the message names) found in text, what it says in English.
func explainPending(text string, lab *manifest.Lab) string {
	m := pendingRE.FindStringSubmatchIndex(text)
	if m == nil {
		return text
	}
	meaning := practice.PendingMeaning(lab)
	if id := text[m[2]:m[3]]; id != lab.ID {
		meaning = practice.PendingMeaning(&manifest.Lab{ID: id})
	}
	return text[:m[1]] + " (" + meaning + ")" + text[m[1]:]
}

// pendingRE matches a stub's pending message, "Lab 7.1 收集模型终态 尚未实现".
var pendingRE = regexp.MustCompile(`Lab (\d+\.\d+) [^\n]*?尚未实现`)

// printTranscriptHint prints, after a failed `course test`, the command that shows the run of the
// first failing test that recorded one.
func (a *app) printTranscriptHint(root string, report *gotest.Report) {
	recs, err := transcript.LoadDir(filepath.Join(root, filepath.FromSlash(transcriptsDir)))
	if err != nil {
		return // the hint is a courtesy; `course transcript` reports a broken record itself
	}
	for _, t := range report.Failed() {
		for _, rec := range transcript.Select(recs, t.Name) {
			if rec.Failed {
				fmt.Fprintln(a.stdout, a.p.text("transcript.hint", testArg(t.Name)))
				return
			}
		}
	}
}
