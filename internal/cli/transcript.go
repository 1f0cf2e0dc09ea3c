package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/progress"
	"github.com/learn-tinypi/course/internal/transcript"
	"github.com/learn-tinypi/course/solutions/tinypi"
)

// transcriptMessages are the texts of `course transcript` and of its hint in `course test` (part
// of the catalog, messages.go). The renderer's own words come from transcript.LabelsIn.
var transcriptMessages = i18n.Catalog{
	"transcript.short": {ZH: "把一个聚焦测试驱动的运行与参考运行并排对比", EN: "show the run a focused test drove next to the reference run"},
	"transcript.long": {
		ZH: "course test 运行 agent 章节的聚焦测试时，每个测试把它驱动的那次运行（请求、事件、工具调用与结果、最终 transcript）\n" +
			"记录在练习目录的 .course/transcripts/ 中。\n\n" +
			"course transcript TEST 在本章 target（参考实现）上运行同一个测试，把你的运行和参考运行按行对齐、并排显示，\n" +
			"用 ▶ 标出第一处不同。终端较窄时两次运行上下排列。不带 TEST 时列出已记录的测试。",
		EN: "When course test runs the focused tests of an agent chapter, each test records the run it drove (requests, events,\n" +
			"tool calls and results, the final transcript) in .course/transcripts/ of the practice directory.\n\n" +
			"course transcript TEST runs the same test on the chapter's target (the reference), aligns your run with the reference\n" +
			"run line by line and shows them side by side, the first difference marked ▶. On a narrow terminal the runs are stacked.\n" +
			"Without TEST it lists the recorded tests.",
	},
	"transcript.example": {
		ZH: "  course transcript\n  course transcript TestLab7_1_纯文本Stop\n  course transcript TestLab7_2_单工具往返 --dir ../tinypi-07",
		EN: "  course transcript\n  course transcript TestLab7_1_纯文本Stop\n  course transcript TestLab7_2_单工具往返 --dir ../tinypi-07",
	},
	"transcript.flag.dir":   {ZH: "练习目录（默认当前目录）", EN: "the practice directory (default: the current directory)"},
	"transcript.flag.width": {ZH: "输出宽度（列数）；0 表示终端宽度", EN: "output width in columns; 0 means the terminal's width"},
	"transcript.none": {
		ZH: "还没有运行记录（%s）。先运行 course test：agent 章节的聚焦测试会记录它们驱动的运行。",
		EN: "no run records yet (%s). Run course test first: the focused tests of an agent chapter record the runs they drive.",
	},
	"transcript.chapter": {
		ZH: "第 %s 章的聚焦测试不记录运行，course transcript 在这里没有可对比的东西：它用于会记录运行的章节（%s）。\n" +
			"本章请看 course test 的失败信息和提示；course diagnose %s 名字 显示一个已知错误让哪些测试怎样失败。",
		EN: "the focused tests of chapter %s record no runs, so course transcript has nothing to compare here: it is for the chapters whose\n" +
			"tests record them (%s). Here, read course test's failures and hints; course diagnose %s NAME shows which tests a known mistake fails, and how.",
	},
	"transcript.list":    {ZH: "已记录的运行（%s）：", EN: "recorded runs (%s):"},
	"transcript.failed":  {ZH: "失败", EN: "failed"},
	"transcript.passed":  {ZH: "通过", EN: "passed"},
	"transcript.unknown": {ZH: "没有 %s 的运行记录（%s）。先运行 course test；已记录的测试可用 course transcript 列出。", EN: "no run record of %s (%s). Run course test first; course transcript lists the recorded tests."},
	"transcript.running": {ZH: "在第 %s 章的 target 上运行参考：go test -run %s .", EN: "running the reference on chapter %s's target: go test -run %s ."},
	"transcript.ref.build": {
		ZH: "参考实现没有构建成功（这是课程的问题，不是你的）：\n%s",
		EN: "the reference did not build (a problem of the course, not yours):\n%s",
	},
	"transcript.ref.missing": {ZH: "参考运行没有 %s 的记录。", EN: "the reference run left no record of %s."},
	"transcript.ref.failed":  {ZH: "注意：参考实现上的 %s 也失败了。", EN: "note: %s failed on the reference too."},
	"transcript.stale": {
		ZH: "%s 的运行记录比你的代码旧（普通的 go test 不会记录运行），重新记录：go test -run %s .",
		EN: "the run record of %s is older than your code (a plain go test records nothing); recording it again: go test -run %s .",
	},
	"transcript.stillstale": {
		ZH: "注意：%s 的运行记录仍然比你的代码旧，下面显示的可能不是你现在的代码的运行。",
		EN: "warning: the run record of %s is still older than your code; what follows may not be the run of your current code.",
	},
	"transcript.hint": {ZH: "对比你的运行与参考运行：course transcript %s", EN: "compare your run with the reference run: course transcript %s"},
}

// transcriptCommand is `course transcript [TEST] [--dir DIR] [--width N]`.
func (a *app) transcriptCommand() *cobra.Command {
	var dir string
	var width int
	c := &cobra.Command{
		Use:     "transcript [TEST] [--dir DIR]",
		Short:   a.p.text("transcript.short"),
		Long:    a.p.text("transcript.long"),
		Example: a.p.text("transcript.example"),
		Args:    a.argsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			root, prov, err := practice.Find(dir)
			if err != nil {
				if errors.Is(err, practice.ErrNotPractice) {
					return &notPracticeError{dir: dir, err: err}
				}
				return err
			}
			recDir := filepath.Join(root, filepath.FromSlash(transcriptsDir))
			recs, err := transcript.LoadDir(recDir)
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				if err := a.chapterRecordsRuns(prov.Chapter); err != nil {
					return err
				}
			}
			if len(args) == 0 {
				a.listTranscripts(recs)
				return nil
			}
			test := args[0]
			learner := transcript.Select(recs, test)
			if len(learner) == 0 {
				return a.usagef("transcript.unknown", test, transcriptsDir)
			}
			if recordsStale(root, recDir, test) {
				// A record older than the code may show a run the code no longer makes.
				if learner, err = a.rerecord(c, root, recDir, test); err != nil {
					return err
				}
				if len(learner) == 0 {
					return a.usagef("transcript.unknown", test, transcriptsDir)
				}
			}
			reference, err := a.referenceRecords(c, prov.Chapter, test)
			if err != nil {
				return err
			}
			return a.renderTranscripts(learner, reference, width)
		},
	}
	c.Flags().StringVar(&dir, "dir", ".", a.p.text("transcript.flag.dir"))
	c.Flags().IntVar(&width, "width", 0, a.p.text("transcript.flag.width"))
	return c
}

// recordsStale reports whether a file of the practice directory root (its code or tests) changed
// after the oldest run record of test in recDir was written.
func recordsStale(root, recDir, test string) bool {
	entries, err := os.ReadDir(recDir)
	if err != nil {
		return false
	}
	var oldest time.Time
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		name := filepath.Join(recDir, e.Name())
		rec, err := transcript.Load(name)
		if err != nil || len(transcript.Select([]tinypi.RunRecord{rec}, test)) == 0 {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if oldest.IsZero() || info.ModTime().Before(oldest) {
			oldest = info.ModTime()
		}
	}
	if oldest.IsZero() {
		return false
	}
	stale, err := progress.Stale(root, &progress.Progress{RanAt: oldest})
	return err == nil && stale
}

// rerecord runs test's top-level test in the practice directory root so that it records its run
// again, and returns the new records of test.
func (a *app) rerecord(c *cobra.Command, root, recDir, test string) ([]tinypi.RunRecord, error) {
	top, _, _ := strings.Cut(test, "/")
	run := "^" + regexp.QuoteMeta(top) + "$"
	fmt.Fprintln(a.stdout, a.p.text("transcript.stale", test, shellQuote(run)))
	if _, err := gotest.Run(c.Context(), gotest.Options{Dir: root, Run: run, Env: transcriptEnv(root)}); err != nil {
		return nil, err
	}
	if recordsStale(root, recDir, test) {
		fmt.Fprintln(a.stdout, a.p.text("transcript.stillstale", test))
	}
	recs, err := transcript.LoadDir(recDir)
	if err != nil {
		return nil, err
	}
	return transcript.Select(recs, test), nil
}

// listTranscripts prints every recorded test, whether it failed, and the command that shows it.
func (a *app) listTranscripts(recs []tinypi.RunRecord) {
	if len(recs) == 0 {
		fmt.Fprintln(a.stdout, a.p.text("transcript.none", transcriptsDir))
		return
	}
	fmt.Fprintln(a.stdout, a.p.text("transcript.list", transcriptsDir))
	st := style{a.color}
	var rows [][]string
	for _, rec := range recs {
		status := st.ok(a.p.text("transcript.passed"))
		if rec.Failed {
			status = st.bad(a.p.text("transcript.failed"))
		}
		rows = append(rows, []string{"  " + status, rec.Test, "course transcript " + testArg(rec.Test)})
	}
	_ = writeTable(a.stdout, rows)
}

// chapterRecordsRuns returns a usage error that says so when the focused tests of chapter record
// no runs (manifest.Chapter.RecordsRuns): "no run records yet, run course test" would send the
// learner round in circles.
func (a *app) chapterRecordsRuns(chapter string) error {
	b, ch, err := a.chapter(chapter)
	if err != nil || ch.RecordsRuns {
		return err
	}
	var recording []string
	for _, c := range b.Course().Chapters {
		if c.RecordsRuns {
			recording = append(recording, c.Number)
		}
	}
	return a.usagef("transcript.chapter", ch.Number, strings.Join(recording, ", "), ch.Number)
}

// referenceRecords runs test's top-level test on the target of chapter in a temporary directory
// and returns the records it wrote.
func (a *app) referenceRecords(c *cobra.Command, chapter, test string) ([]tinypi.RunRecord, error) {
	b, ch, err := a.chapter(chapter)
	if err != nil {
		return nil, err
	}
	if err := a.requireGo(b.Course()); err != nil {
		return nil, err
	}
	target, err := b.Target(ch)
	if err != nil {
		return nil, fmt.Errorf("building the target of chapter %s: %w", ch.Number, err)
	}
	tmp, err := os.MkdirTemp("", "course-transcript-")
	if err != nil {
		return nil, fmt.Errorf("preparing the reference run: %w", err)
	}
	defer os.RemoveAll(tmp)
	module := filepath.Join(tmp, "target")
	if err := target.Write(module); err != nil {
		return nil, fmt.Errorf("preparing the reference run: %w", err)
	}
	top, _, _ := strings.Cut(test, "/")
	run := "^" + regexp.QuoteMeta(top) + "$"
	fmt.Fprintln(a.stdout, a.p.text("transcript.running", ch.Number, shellQuote(run)))
	records := filepath.Join(tmp, "records")
	report, err := gotest.Run(c.Context(), gotest.Options{
		Dir: module,
		Run: run,
		// The tree is written to a new directory each time, and without -trimpath a package's
		// directory is part of its key in go's build cache: every transcript would compile the
		// same reference again. With it, the second one finds the build in the cache.
		Env: []string{tinypi.RunRecordDirEnv + "=" + records, "GOFLAGS=-trimpath"},
	})
	if err != nil {
		return nil, err
	}
	if report.BuildFailed {
		return nil, errors.New(a.p.text("transcript.ref.build", strings.TrimRight(report.BuildOutput, "\n")))
	}
	recs, err := transcript.LoadDir(records)
	if err != nil {
		return nil, err
	}
	return transcript.Select(recs, test), nil
}

// renderTranscripts prints each learner record next to the reference record of the same test.
func (a *app) renderTranscripts(learner, reference []tinypi.RunRecord, width int) error {
	opts := transcript.Options{
		// Symbols only on a terminal that takes colour; pipes and NO_COLOR get ASCII.
		ASCII:  !a.color,
		Width:  a.outputWidth(width),
		Labels: transcript.LabelsIn(a.p.lang), // the renderer's own catalog
	}
	for _, l := range learner {
		fmt.Fprintln(a.stdout)
		var ref *tinypi.RunRecord
		for i := range reference {
			if reference[i].Test == l.Test {
				ref = &reference[i]
			}
		}
		if ref == nil {
			fmt.Fprintln(a.stdout, a.p.text("transcript.ref.missing", l.Test))
			continue
		}
		if err := transcript.Render(a.stdout, transcript.Compare(l, *ref), opts); err != nil {
			return err
		}
		if ref.Failed {
			fmt.Fprintln(a.stdout, a.p.text("transcript.ref.failed", l.Test))
		}
	}
	return nil
}
