package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/progress"
)

func statusChapter() (*manifest.Course, *manifest.Chapter) {
	ch := &manifest.Chapter{Number: "07", Title: "循环", TitleEN: "Loop", Mode: manifest.ModeRebuild, Labs: []*manifest.Lab{
		{ID: "7.1", Title: "完成纯文本 stop", TitleEN: "Stop", StubTitle: "收集", Pattern: "^TestLab7_1_", Tests: 1},
		{ID: "7.2", Title: "闭合单工具往返", TitleEN: "Round trip", StubTitle: "往返", Pattern: "^TestLab7_2_", Tests: 2},
	}}
	next := &manifest.Chapter{Number: "08", Title: "下一章", TitleEN: "Next"}
	return &manifest.Course{Chapters: []*manifest.Chapter{ch, next}}, ch
}

var hintCards = fstest.MapFS{
	"labs/07/7.1.md":    {Data: []byte("# Lab 7.1 · 完成纯文本 stop\n\n## 提示\n\n先看测试。\n\n再看切片。\n")},
	"labs/07/7.1.en.md": {Data: []byte("# Lab 7.1 · Stop\n\n## Hint\n\nRead the test.\n")},
	"labs/07/7.2.md":    {Data: []byte("# Lab 7.2 · 闭合单工具往返\n\n## 提示\n\n配对结果。\n")},
}

func TestPrintTestReportHints(t *testing.T) {
	_, ch := statusChapter()
	report := &gotest.Report{ExitCode: 1, Tests: []gotest.TestResult{
		{Name: "TestLab7_1_A", Failed: true, FirstFailure: "Lab 7.1 收集 尚未实现"},
		{Name: "TestLab7_2_A", Failed: true, FirstFailure: "Lab 7.1 收集 尚未实现"},
		{Name: "TestLab7_2_B", Failed: true, FirstFailure: "Lab 7.2 往返 尚未实现"},
	}}
	hints := progress.HintLabs(progress.FromReport(ch, ch.Labs, report, time.Time{}))
	tests := []struct {
		lang, want string
	}{{langZH, "" +
		"Lab  标题             通过  第一条失败\n" +
		"7.1  完成纯文本 stop  0/1   TestLab7_1_A: Lab 7.1 收集 尚未实现\n" +
		"     提示：先看测试。\n" +
		"\n" +
		"     再看切片。\n" +
		"7.2  闭合单工具往返   0/2   TestLab7_2_A: 先做 Lab 7.1：这个 Lab 的测试要用到它（course test --lab 7.1）。Lab 7.1 收集 尚未实现\n" +
		"通过 0，失败 3\n" +
		"下一步：读 labs/7.1.md，然后运行 go test -run '^TestLab7_1_' .\n",
	}, {langEN, "" +
		"lab  title       passed  first failure\n" +
		"7.1  Stop        0/1     TestLab7_1_A: Lab 7.1 收集 尚未实现 (lab 7.1, \"Stop\", is not implemented yet)\n" +
		"     Hint: Read the test.\n" +
		"7.2  Round trip  0/2     TestLab7_2_A: do lab 7.1 first: this lab's tests need it (course test --lab 7.1). Lab 7.1 收集 尚未实现 (lab 7.1 is not implemented yet)\n" +
		"0 passed, 3 failed\n" +
		"next: read labs/7.1.en.md, then run go test -run '^TestLab7_1_' .\n",
	}}
	for _, tt := range tests {
		var out strings.Builder
		a := &app{p: printer{lang: tt.lang}, stdout: &out, content: hintCards}
		a.printTestReport(ch.Labs, report, hints)
		if diff := cmp.Diff(tt.want, out.String()); diff != "" {
			t.Errorf("%s output (-want +got):\n%s", tt.lang, diff)
		}
	}
}

func TestLabHintFallsBackToChinese(t *testing.T) {
	_, ch := statusChapter()
	a := &app{p: printer{lang: langEN}, content: hintCards}
	if got := a.labHint(ch.Labs[1]); got != "配对结果。" {
		t.Errorf("labHint(7.2) in English without an English card = %q, want the Chinese hint", got)
	}
}

func TestPrintStatus(t *testing.T) {
	c, ch := statusChapter()
	tests := []struct {
		name  string
		color bool
		p     progress.Progress
		want  string
	}{{
		name: "one done, one red",
		p: progress.Progress{Chapter: "07", Labs: []progress.Lab{
			{ID: "7.1", State: progress.Done, Passed: 1, Total: 1},
			{ID: "7.2", State: progress.Red, Passed: 1, Total: 2},
		}},
		want: "" +
			"Lab  标题             状态  通过\n" +
			"7.1  完成纯文本 stop  完成  1/1\n" +
			"7.2  闭合单工具往返   红灯  1/2\n" +
			"[#####-----] 1/2 个 Lab 完成\n" +
			"下一个 Lab：7.2 闭合单工具往返\n" +
			"  读卡片：course next（或打开 labs/7.2.md）\n" +
			"  运行：  go test -run '^TestLab7_2_' .\n",
	}, {
		name:  "terminal: symbols and blocks; a lab never run",
		color: true,
		p: progress.Progress{Chapter: "07", Labs: []progress.Lab{
			{ID: "7.1", State: progress.NotStarted, Total: 1},
		}},
		want: "" +
			"Lab  标题             状态      通过\n" +
			"7.1  完成纯文本 stop  · 未开始  0/1\n" +
			"7.2  闭合单工具往返   · 未运行  -/2\n" +
			"[░░░░░░░░░░] 0/2 个 Lab 完成\n" +
			"下一个 Lab：7.1 完成纯文本 stop\n" +
			"  读卡片：course next（或打开 labs/7.1.md）\n" +
			"  运行：  go test -run '^TestLab7_1_' .\n",
	}, {
		name: "all done",
		p: progress.Progress{Chapter: "07", Labs: []progress.Lab{
			{ID: "7.1", State: progress.Done, Passed: 1, Total: 1},
			{ID: "7.2", State: progress.Done, Passed: 2, Total: 2},
		}},
		want: "" +
			"Lab  标题             状态  通过\n" +
			"7.1  完成纯文本 stop  完成  1/1\n" +
			"7.2  闭合单工具往返   完成  2/2\n" +
			"[##########] 2/2 个 Lab 完成\n" +
			"第 07 章的 2 个 Lab 全部完成，恭喜！\n" +
			"对照参考答案（任一 Lab）：course solution --lab 7.1\n" +
			"下一章 08 下一章：course practice 08 /work/tinypi-08\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			a := &app{p: printer{lang: langZH}, stdout: &out, color: tt.color}
			a.printStatus(c, ch, "/work/p07", tt.p)
			got := out.String()
			if tt.color {
				got = stripANSI(got)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// stripANSI removes colour sequences.
func stripANSI(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '\x1b':
			in = true
		case in:
			in = r != 'm'
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestProgressBar(t *testing.T) {
	plain := &app{}
	tests := []struct {
		done, total int
		want        string
	}{{0, 5, "[----------]"}, {2, 5, "[####------]"}, {5, 5, "[##########]"}, {1, 3, "[###-------]"}, {0, 0, "[----------]"}}
	for _, tt := range tests {
		if got := plain.progressBar(tt.done, tt.total); got != tt.want {
			t.Errorf("progressBar(%d, %d) = %q, want %q", tt.done, tt.total, got, tt.want)
		}
	}
	if got := (&app{color: true}).progressBar(2, 5); got != "[████░░░░░░]" {
		t.Errorf("terminal progressBar(2, 5) = %q", got)
	}
}

func TestEditCard(t *testing.T) {
	_, ch := statusChapter()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "labs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "labs", "7.1.md"), []byte("# Lab 7.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	var out bytes.Buffer
	a := &app{p: printer{lang: langEN}, stdout: &out, stderr: &out, getenv: func(k string) string { return env[k] }}

	err := a.editCard(root, ch.Labs[0])
	if err == nil || !strings.Contains(err.Error(), "$VISUAL and $EDITOR") || !strings.Contains(err.Error(), "labs/7.1.md") {
		t.Errorf("editCard without an editor: %v, want an error naming both variables and the card", err)
	}
	// The English card is missing: the Chinese one opens. VISUAL wins over EDITOR and may carry arguments.
	env["EDITOR"] = "false"
	env["VISUAL"] = "head -n 1"
	if err := a.editCard(root, ch.Labs[0]); err != nil {
		t.Fatalf("editCard: %v", err)
	}
	if out.String() != "# Lab 7.1\n" {
		t.Errorf("the editor printed %q, want the card's first line", out.String())
	}
	env["VISUAL"] = ""
	if err := a.editCard(root, ch.Labs[0]); err == nil || !strings.Contains(err.Error(), "the editor false failed") {
		t.Errorf("editCard with a failing editor: %v", err)
	}
	if err := a.editCard(root, ch.Labs[1]); err == nil || !strings.Contains(err.Error(), "labs/7.2.en.md") {
		t.Errorf("editCard of a missing card: %v", err)
	}
}

// TestPrintTestReportNoHintsForLabsNotReached: when the test process exited in lab 7.1, lab 7.2's
// tests never ran, and its hint is left out.
// TestPrintTestReportEarlierLabFirst: course test --lab 7.2 while lab 7.1 is still a stub that
// 7.2's tests run into says "do lab 7.1 first", and not 7.2's own hint, which is not the point yet.
func TestPrintTestReportEarlierLabFirst(t *testing.T) {
	_, ch := statusChapter()
	report := &gotest.Report{ExitCode: 1, Tests: []gotest.TestResult{
		{Name: "TestLab7_2_A", Failed: true, FirstFailure: "Lab 7.1 收集 尚未实现"},
		{Name: "TestLab7_2_B", Failed: true, FirstFailure: "Lab 7.1 收集 尚未实现"},
	}}
	var out strings.Builder
	a := &app{p: printer{lang: langZH}, stdout: &out, content: hintCards}
	a.printTestReport(ch.Labs[1:], report, []string{"7.2"})
	want := "" +
		"Lab  标题            通过  第一条失败\n" +
		"7.2  闭合单工具往返  0/2   TestLab7_2_A: 先做 Lab 7.1：这个 Lab 的测试要用到它（course test --lab 7.1）。Lab 7.1 收集 尚未实现\n" +
		"通过 0，失败 2\n" +
		"下一步：先做 Lab 7.1：读 labs/7.1.md，然后运行 course test --lab 7.1\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestPrintTestReportNoHintsForLabsNotReached(t *testing.T) {
	_, ch := statusChapter()
	report := &gotest.Report{ExitCode: 1,
		Tests: []gotest.TestResult{{Name: "TestLab7_1_A", Failed: true, Unfinished: true}},
		Exits: []gotest.Exit{{Test: "TestLab7_1_A", LastOutput: []string{"bye"}}}}
	var out strings.Builder
	a := &app{p: printer{lang: langZH}, stdout: &out, content: hintCards}
	a.printTestReport(ch.Labs, report, []string{"7.1", "7.2"})
	if !strings.Contains(out.String(), "先看测试。") {
		t.Errorf("output lacks lab 7.1's hint:\n%s", out.String())
	}
	if strings.Contains(out.String(), "配对结果。") {
		t.Errorf("output has the hint of lab 7.2, whose tests never ran:\n%s", out.String())
	}
}
