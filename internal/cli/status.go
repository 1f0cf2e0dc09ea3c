package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/cards"
	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/progress"
	"github.com/learn-tinypi/course/internal/tree"
)

// progressMessages are the texts of `course status`, `course next`, `course watch` and of the hints
// `course test` prints. They join the catalog when the package starts.
var progressMessages = i18n.Catalog{
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
	"status.header":  {ZH: "Lab\t标题\t状态\t通过", EN: "lab\ttitle\tstate\tpassed"},
	"state.done":     {ZH: "完成", EN: "done"},
	"state.red":      {ZH: "红灯", EN: "red"},
	"state.pending":  {ZH: "未开始", EN: "not started"},
	"state.unknown":  {ZH: "未运行", EN: "not run"},
	"status.bar":     {ZH: "%s %d/%d 个 Lab 完成", EN: "%s %d/%d labs done"},
	"status.build":   {ZH: "这次构建失败，下面是上一次运行的状态。修好构建后再运行 course status。", EN: "this run did not build; the states below are from the run before. Fix the build, then run course status again."},
	"status.next":    {ZH: "下一个 Lab：%s %s", EN: "next lab: %s %s"},
	"status.next.card": {
		ZH: "  读卡片：course next（或打开 %s）", EN: "  read its card: course next (or open %s)",
	},
	"status.next.run":    {ZH: "  运行：  %s", EN: "  run:           %s"},
	"status.alldone":     {ZH: "第 %s 章的 %d 个 Lab 全部完成，恭喜！", EN: "chapter %s: all %d labs are done. Congratulations!"},
	"status.solution":    {ZH: "对照参考答案（任一 Lab）：course solution --lab %s", EN: "compare with the reference (any lab): course solution --lab %s"},
	"status.nextchapter": {ZH: "下一章 %s %s：course practice %s %s", EN: "next chapter, %s %s: course practice %s %s"},
	"status.lastchapter": {ZH: "这是课程的最后一章。", EN: "this is the last chapter of the course."},
	"progress.save":      {ZH: "注意：无法保存进度（%v）", EN: "warning: the progress could not be saved (%v)"},
	"hint.label":         {ZH: "提示：", EN: "Hint: "},
}

// dirArg is the practice directory a command's optional DIR argument names: the current
// directory when there is none.
func dirArg(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return "."
}

// practiceChapter finds the practice directory enclosing dir and loads its chapter.
func (a *app) practiceChapter(dir string) (root string, b *tree.Builder, ch *manifest.Chapter, err error) {
	root, prov, err := practice.Find(dir)
	if err != nil {
		if errors.Is(err, practice.ErrNotPractice) {
			return "", nil, nil, &notPracticeError{dir: dir, err: err}
		}
		return "", nil, nil, err
	}
	b, ch, err = a.chapter(prov.Chapter)
	if err != nil {
		return "", nil, nil, err
	}
	a.fromCwd = relFromCwd(root)
	return root, b, ch, nil
}

// relFromCwd returns dir relative to the current directory, "" when it is the current directory
// (or the current directory is unknown).
func relFromCwd(dir string) string {
	cwd, err := os.Getwd()
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(cwd, dir)
	if err != nil {
		return dir
	}
	if rel == "." {
		return ""
	}
	return rel
}

// insideRoot reports whether rel, a practice directory relative to the current directory, is
// an ancestor of it ("..", "../.."): the current directory is inside the practice directory.
func insideRoot(rel string) bool {
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if part != ".." {
			return false
		}
	}
	return rel != ""
}

// labTestCommand is the command that runs lab's focused tests from the current directory.
func (a *app) labTestCommand(lab *manifest.Lab) string {
	switch {
	case a.fromCwd == "":
		return practice.TestCommand(lab)
	case insideRoot(a.fromCwd):
		// go finds the module from a subdirectory; the package is the practice directory.
		return strings.TrimSuffix(practice.TestCommand(lab), ".") + filepath.ToSlash(a.fromCwd)
	default:
		return "cd " + shellQuote(a.fromCwd) + " && " + practice.TestCommand(lab)
	}
}

// runPattern is the -run pattern that selects the tests of labs.
func runPattern(labs []*manifest.Lab) string {
	patterns := make([]string, len(labs))
	for i, l := range labs {
		patterns[i] = l.Pattern
	}
	return strings.Join(patterns, "|")
}

// labRun is one run of the focused tests of some labs of a chapter.
type labRun struct {
	// testsChanged lists the focused test files that differ from the practice's start: while it
	// is not empty no lab counts as done.
	testsChanged []string
	report       *gotest.Report
	outcome      progress.Progress // what the run found about the labs it ran
	progress     progress.Progress // the chapter's progress with the outcome merged in
}

// runLabs runs the focused tests of labs in the practice directory root, records the outcome in
// its progress file and returns the report, the outcome and the updated progress of the whole
// chapter. A progress file that cannot be written is a warning, not a failure.
func (a *app) runLabs(ctx context.Context, root string, ch *manifest.Chapter, labs []*manifest.Lab) (labRun, error) {
	changed := a.changedTests(root)
	if len(changed) > 0 {
		a.printTestsChanged(changed)
	}
	run := runPattern(labs)
	fmt.Fprintln(a.stdout, a.p.text("test.running", ch.Number, shellQuote(run)))
	started := time.Now()
	report, err := gotest.Run(ctx, gotest.Options{Dir: root, Run: run, Env: transcriptEnv(root), TestTimeout: a.testTimeout})
	if err != nil {
		return labRun{}, err
	}
	a.printTimedOut(ch, report) // timeout.go
	outcome := progress.FromReport(ch, labs, report, started)
	if len(changed) > 0 {
		outcome.Distrust(testsChangedReason(changed))
	}
	return labRun{testsChanged: changed, report: report, outcome: outcome,
		progress: a.recordProgress(root, ch, outcome, changed)}, nil
}

// changedTests returns the focused test files of the practice directory root that differ from
// the ones it was created with. A failure to check is a warning: the run still counts.
func (a *app) changedTests(root string) []string {
	_, prov, err := practice.Find(root)
	if err != nil {
		return nil
	}
	changed, err := prov.ChangedTestFiles(root)
	if err != nil {
		fmt.Fprintln(a.stderr, a.p.text("err.prefix", err))
		return nil
	}
	return changed
}

// printTestsChanged says loudly that the focused tests were edited, and how to restore them.
func (a *app) printTestsChanged(changed []string) {
	cmd := "course reset --tests"
	if a.fromCwd != "" {
		cmd += " " + shellQuote(a.fromCwd)
	}
	fmt.Fprintln(a.stdout, style{a.color}.bad(a.p.text("tests.changed", strings.Join(changed, ", "), cmd)))
}

// testsChangedReason is the first failure recorded for a lab that a run with edited focused
// tests cannot prove done.
func testsChangedReason(changed []string) string {
	return "focused tests changed (" + strings.Join(changed, ", ") + "): course reset --tests"
}

// savedProgress returns the progress file of root when it belongs to ch; nil when it is
// missing, unreadable or of another chapter.
func savedProgress(root string, ch *manifest.Chapter) *progress.Progress {
	p, err := progress.Load(root)
	if err != nil || p.Chapter != ch.Number {
		return nil
	}
	return p
}

// recordProgress merges a run's outcome into the progress file of root and returns the
// chapter's progress.
func (a *app) recordProgress(root string, ch *manifest.Chapter, run progress.Progress, testsChanged []string) progress.Progress {
	old, err := progress.Load(root)
	if err != nil {
		old = nil // missing or unreadable: this run starts it afresh
	}
	p := progress.Merge(ch, old, run)
	if len(testsChanged) > 0 {
		p.Distrust(testsChangedReason(testsChanged))
	}
	if err := progress.Save(root, p); err != nil {
		fmt.Fprintln(a.stderr, a.p.text("progress.save", err))
	}
	return p
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
	} else {
		fmt.Fprintln(a.stdout, a.p.text("status.lastchapter"))
	}
}

// printLabProgress prints the lab table of ch and the progress bar under it.
func (a *app) printLabProgress(ch *manifest.Chapter, p progress.Progress) {
	a.printLabTable(ch, p)
	done := p.DoneCount(ch)
	fmt.Fprintln(a.stdout, a.p.text("status.bar", a.progressBar(done, len(ch.Labs)), done, len(ch.Labs)))
}

// printLabTable prints one row per lab of ch: id, title, state and passed/total.
func (a *app) printLabTable(ch *manifest.Chapter, p progress.Progress) {
	rows := [][]string{splitTabs(a.p.text("status.header"))}
	for _, lab := range ch.Labs {
		l, ok := p.Lab(lab.ID)
		count := "-/" + strconv.Itoa(lab.Tests)
		if ok {
			count = strconv.Itoa(l.Passed) + "/" + strconv.Itoa(l.Total)
		}
		rows = append(rows, []string{lab.ID, a.labTitle(lab), a.stateCell(l.State, ok), count})
	}
	_ = writeTable(a.stdout, rows)
}

// stateCell names a lab's state, with a symbol and colour on a terminal.
func (a *app) stateCell(s progress.State, known bool) string {
	st := style{a.color}
	switch {
	case !known:
		return a.dot(a.p.text("state.unknown"))
	case s == progress.Done:
		return st.ok(a.p.text("state.done"))
	case s == progress.Red:
		return st.bad(a.p.text("state.red"))
	default:
		return a.dot(a.p.text("state.pending"))
	}
}

// dot marks a lab that has not been started, on a terminal only.
func (a *app) dot(text string) string {
	if !a.color {
		return text
	}
	return "· " + text
}

// progressBar draws done out of total in ten cells: block characters on a terminal, plain ASCII
// otherwise.
func (a *app) progressBar(done, total int) string {
	const cells = 10
	filled := 0
	if total > 0 {
		filled = done * cells / total
	}
	full, empty := "#", "-"
	if a.color {
		full, empty = "█", "░"
	}
	return "[" + strings.Repeat(full, filled) + strings.Repeat(empty, cells-filled) + "]"
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

// labHint returns the hint of lab's card in the output language, or "" when the card has none
// (the kit's checks make sure every card has one).
func (a *app) labHint(lab *manifest.Lab) string {
	if a.content == nil {
		return ""
	}
	card, err := cards.Read(a.content, lab.CardPath(a.p.lang))
	if err != nil && errors.Is(err, fs.ErrNotExist) && a.p.lang != langZH {
		card, err = cards.Read(a.content, lab.CardPath(langZH))
	}
	if err != nil {
		return ""
	}
	return card.Hint
}

// hintLines formats a hint to go under a lab's row: the label on the first line, every line
// indented.
func (a *app) hintLines(hint string) string {
	const indent = "     "
	var b strings.Builder
	for i, line := range strings.Split(hint, "\n") {
		if i == 0 {
			line = style{a.color}.bold(a.p.text("hint.label")) + line
		}
		if line != "" {
			b.WriteString(indent + line)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// writeTableNotes writes rows like writeTable, each followed by its note (complete lines) when
// notes has one for the row's index.
func writeTableNotes(w io.Writer, rows [][]string, notes map[int]string) error {
	var table strings.Builder
	if err := writeTable(&table, rows); err != nil {
		return err
	}
	var b strings.Builder
	for i, line := range strings.SplitAfter(table.String(), "\n") {
		b.WriteString(line)
		b.WriteString(notes[i])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// labHints returns the hint notes of the labs whose ids are in ids, keyed by their row in a
// table whose first row is a header and whose other rows follow labs.
func (a *app) labHints(labs []*manifest.Lab, ids []string) map[int]string {
	notes := map[int]string{}
	for i, lab := range labs {
		if !slices.Contains(ids, lab.ID) {
			continue
		}
		if hint := a.labHint(lab); hint != "" {
			notes[i+1] = a.hintLines(hint)
		}
	}
	return notes
}
