package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/progress"
	"github.com/learn-tinypi/course/internal/watch"
)

// watchDebounce is how long saves must be quiet before the tests rerun; pollInterval is how
// often --poll (and the fallback when file events cannot start) scans the files.
const (
	watchDebounce = 200 * time.Millisecond
	pollInterval  = time.Second
)

// watchMessages are the texts of `course watch`.
var watchMessages = i18n.Catalog{
	"watch.short": {ZH: "保存文件时自动重新运行当前 Lab 的测试", EN: "rerun the current lab's tests whenever a file is saved"},
	"watch.long": {
		ZH: "在练习目录 DIR（默认为当前目录）监视文件：保存 .go 文件（以及 go.mod、go.sum、testdata/ 下的文件）后约 200 毫秒，\n" +
			"重新运行当前 Lab 的测试。当前 Lab 是第一个未完成的 Lab（来自 .course/progress.json，没有时先运行全部测试）；\n" +
			"--lab 固定一个 Lab。每次运行显示这个 Lab 的结果和提示、全部 Lab 的状态表和进度条；在终端里每次运行前清屏。\n" +
			"测试还在运行时保存文件，这次运行会被停止并重新开始；一个测试运行超过 --timeout（默认 1 分钟）会被停止，并说明可能的原因。\n\n" +
			"按 Enter 立即重新运行，输入 q 再按 Enter（或 Ctrl-C）退出。\n" +
			"文件系统不发送事件时（有些网络文件系统、虚拟机共享目录），用 --poll 每秒检查一次修改时间；\n" +
			"文件事件无法启动时会自动这样做，并告诉你。Enter 键总是可用。",
		EN: "Watch the practice directory DIR (the current directory by default): about 200 ms after a .go file (or go.mod, go.sum,\n" +
			"a file under testdata/) is saved, rerun the current lab's tests. The current lab is the first unfinished one (from\n" +
			".course/progress.json; without it every test runs first); --lab pins one lab. Each run shows that lab's result and\n" +
			"hint, the table of every lab and the progress bar; on a terminal the screen is cleared before each run.\n" +
			"A save while the tests still run stops that run and starts again; a test running longer than --timeout (1 minute by\n" +
			"default) is stopped, with its likely cause.\n\n" +
			"Press Enter to run again now; type q and Enter (or Ctrl-C) to quit.\n" +
			"When the file system sends no events (some network file systems, shared folders of virtual machines), --poll checks\n" +
			"the modification times every second instead; it does so by itself, and says so, when file events cannot start.\n" +
			"The Enter key always works.",
	},
	"watch.example":   {ZH: "  course watch\n  course watch --lab 7.3\n  course watch --poll ../tinypi-07", EN: "  course watch\n  course watch --lab 7.3\n  course watch --poll ../tinypi-07"},
	"watch.flag.lab":  {ZH: "固定监视一个 Lab：编号（7.3）或关键词", EN: "pin one lab: its id (7.3) or keyword"},
	"watch.flag.poll": {ZH: "每秒检查修改时间，而不用文件系统事件", EN: "check modification times every second instead of using file-system events"},
	"watch.events":    {ZH: "正在监视 %s：保存文件后自动重新运行。", EN: "watching %s: saving a file reruns the tests."},
	"watch.polling":   {ZH: "正在每秒检查 %s 的修改时间（--poll）。", EN: "checking the modification times in %s every second (--poll)."},
	"watch.noevents":  {ZH: "文件系统事件无法启动（%v）：改为每秒检查修改时间。如果保存后没有反应，按 Enter 运行测试。", EN: "file-system events could not start (%v): checking modification times every second instead. If a save does not rerun the tests, press Enter."},
	"watch.keys":      {ZH: "按 Enter 立即重新运行，输入 q 回车退出。", EN: "press Enter to run again, q and Enter to quit."},
	"watch.labdone":   {ZH: "Lab %s 完成！下一次运行转到 Lab %s。", EN: "lab %s is done! The next run moves on to lab %s."},
	"watch.restart":   {ZH: "文件有修改：停止这次运行，重新开始。", EN: "files changed: stopping this run and starting again."},
	"watch.alldone":   {ZH: "全部 Lab 完成。输入 q 回车退出。", EN: "every lab is done. Type q and Enter to quit."},
}

// watchCommand is `course watch [--lab ID] [--poll] [DIR]`.
func (a *app) watchCommand() *cobra.Command {
	var labFlag string
	var poll bool
	c := &cobra.Command{
		Use:     "watch [--lab ID] [--poll] [DIR]",
		Short:   a.p.text("watch.short"),
		Long:    a.p.text("watch.long"),
		Example: a.p.text("watch.example"),
		Args:    a.argsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			root, b, ch, err := a.practiceChapter(dirArg(args))
			if err != nil {
				return err
			}
			var pinned *manifest.Lab
			if labFlag != "" {
				if pinned, err = ch.Lab(labFlag); err != nil {
					return a.unknownLab(ch, labFlag)
				}
			}
			if err := a.requireGo(b.Course()); err != nil {
				return err
			}
			return a.watch(c.Context(), root, ch, pinned, poll)
		},
	}
	c.Flags().StringVar(&labFlag, "lab", "", a.p.text("watch.flag.lab"))
	c.Flags().BoolVar(&poll, "poll", false, a.p.text("watch.flag.poll"))
	a.addTimeoutFlag(c)
	return c
}

// watch runs the watch loop until the learner quits or ctx ends.
func (a *app) watch(ctx context.Context, root string, ch *manifest.Chapter, pinned *manifest.Lab, poll bool) error {
	var w *watch.Watcher
	notice := a.p.text("watch.polling", root)
	if !poll {
		var err error
		if w, err = watch.Start(root); err != nil {
			notice = a.p.text("watch.noevents", err)
		} else {
			notice = a.p.text("watch.events", root)
		}
	}
	if w == nil {
		w = watch.StartPolling(root, pollInterval)
	}
	defer w.Close()

	cfg := watch.Config{Changes: w.C, Debounce: watchDebounce}
	if a.stdin != nil {
		keys := watch.ReadKeys(a.stdin)
		defer keys.Stop()
		cfg.Manual, cfg.Quit = keys.Manual, keys.Quit
	}
	clear := isTerminal(a.stdout)
	cfg.Run = func(ctx context.Context) error {
		if clear {
			fmt.Fprint(a.stdout, "\x1b[H\x1b[2J")
		}
		fmt.Fprintln(a.stdout, notice)
		err := a.watchRun(ctx, root, ch, pinned)
		if errors.Is(context.Cause(ctx), watch.ErrRestart) {
			// A save (or Enter) during the run: its result would be outdated.
			fmt.Fprintln(a.stdout, a.p.text("watch.restart"))
			return err
		}
		fmt.Fprintln(a.stdout, a.p.text("watch.keys"))
		return err
	}
	return watch.Loop(ctx, cfg)
}

// watchRun runs the current lab's tests once and shows the result, the hint, the lab table and
// the progress bar. Without a progress file it runs every lab's tests.
func (a *app) watchRun(ctx context.Context, root string, ch *manifest.Chapter, pinned *manifest.Lab) error {
	labs := ch.Labs
	old := savedProgress(root, ch)
	switch {
	case pinned != nil:
		labs = []*manifest.Lab{pinned}
	case old != nil && old.Next(ch) != nil:
		labs = []*manifest.Lab{old.Next(ch)}
	}
	run, err := a.runLabs(ctx, root, ch, labs)
	if err != nil {
		return err
	}
	if !a.printTestReport(labs, run.report, progress.HintLabs(run.outcome)) {
		a.printTranscriptHint(root, run.report)
	}
	fmt.Fprintln(a.stdout)
	p := run.progress
	a.printLabProgress(ch, p)
	next := p.Next(ch)
	switch {
	case next == nil:
		fmt.Fprintln(a.stdout, style{a.color}.ok(a.p.text("watch.alldone")))
	case pinned == nil && len(labs) == 1 && next.ID != labs[0].ID:
		fmt.Fprintln(a.stdout, style{a.color}.ok(a.p.text("watch.labdone", labs[0].ID, next.ID)))
		fmt.Fprintln(a.stdout, a.p.text("status.next.run", a.labTestCommand(next)))
	}
	return nil
}
