package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/progress"
)

// labProgressMessages are the texts of the lab table and progress bar of `course status` and
// `course watch`.
var labProgressMessages = i18n.Catalog{
	"status.header": {ZH: "Lab\t标题\t状态\t通过", EN: "lab\ttitle\tstate\tpassed"},
	"state.done":    {ZH: "完成", EN: "done"},
	"state.red":     {ZH: "红灯", EN: "red"},
	"state.pending": {ZH: "未开始", EN: "not started"},
	"state.unknown": {ZH: "未运行", EN: "not run"},
	"status.bar":    {ZH: "%s %d/%d 个 Lab 完成", EN: "%s %d/%d labs done"},
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
