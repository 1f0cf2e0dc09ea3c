package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/labsrc"
	"github.com/learn-tinypi/course/internal/linediff"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// solutionMessages are the texts of `course solution`.
var solutionMessages = i18n.Catalog{
	"solution.short": {ZH: "Lab 通过后，把参考实现与你的代码做对比", EN: "once a lab passes, compare the reference with your code"},
	"solution.long": {
		ZH: "course solution --lab ID 先运行这个 Lab 的聚焦测试；全部通过后，逐个区域（//lab:begin ID 与 //lab:end\n" +
			"之间）显示参考实现相对你的代码的差异：以 - 开头的行只在你的代码里，以 + 开头的行只在参考实现里。\n" +
			"它只读不写，你的文件不会被改动。\n\n" +
			"Lab 还没通过时它拒绝显示（退出码 1），并给出运行测试的命令。--peek 跳过测试直接显示，\n" +
			"但会先提醒：看了参考答案，这个 Lab 的练习就被剧透了。",
		EN: "course solution --lab ID first runs the lab's focused tests; when they all pass it shows, region by region (the\n" +
			"lines between //lab:begin ID and //lab:end), how the reference differs from your code: lines starting with -\n" +
			"are only in your code, lines starting with + only in the reference. It only reads: your files are not changed.\n\n" +
			"While the lab is not green it refuses (exit code 1) and shows the command that runs the tests. --peek skips the\n" +
			"tests and shows the reference anyway, after warning that it spoils the lab.",
	},
	"solution.example": {
		ZH: "  course solution --lab 7.1\n  course solution --lab 非执行终态 --peek",
		EN: "  course solution --lab 7.1\n  course solution --lab 非执行终态 --peek",
	},
	"solution.flag.lab":  {ZH: "要对比的 Lab：编号（7.3）或关键词", EN: "the lab to compare: its id (7.3) or keyword"},
	"solution.flag.peek": {ZH: "不等测试通过就看参考实现（会剧透这个 Lab）", EN: "show the reference before the lab passes (spoils the lab)"},
	"solution.running":   {ZH: "先确认 Lab %s 已通过：go test -run %s .", EN: "checking that lab %s passes first: go test -run %s ."},
	"solution.notgreen": {
		ZH: "Lab %s 还没有通过（%d/%d 个测试通过），参考实现要等它通过后才显示。先让测试变绿：\n  course test --lab %s\n（一定要现在看，可以用 course solution --lab %s --peek，但这会剧透这个 Lab。）",
		EN: "lab %s is not green yet (%d/%d tests pass); the reference is shown once it passes. Make the tests pass first:\n  course test --lab %s\n(To look now anyway, course solution --lab %s --peek shows it, but that spoils the lab.)",
	},
	"solution.build":   {ZH: "代码没有通过编译，参考实现要等 Lab %s 通过后才显示。先修好编译错误：\n  course test --lab %s", EN: "the code does not compile; the reference is shown once lab %s passes. Fix the build first:\n  course test --lab %s"},
	"solution.spoiler": {ZH: "⚠ 剧透警告：下面是 Lab %s 的参考实现。看了它，这个 Lab 的练习就失去了大半意义。", EN: "⚠ spoiler: below is the reference for lab %s. Looking at it takes most of the exercise out of the lab."},
	"solution.green":   {ZH: "Lab %s 已通过。参考实现与你的代码的差异（- 你的代码，+ 参考实现）：", EN: "lab %s passes. How the reference differs from your code (- yours, + reference):"},
	"solution.region":  {ZH: "── %s:%d · Lab %s · 区域 %d/%d ──", EN: "── %s:%d · lab %s · region %d/%d ──"},
	"solution.same":    {ZH: "（与参考实现完全相同）", EN: "(identical to the reference)"},
	"solution.labels":  {ZH: "你的代码\t参考实现", EN: "yours\treference"},
}

// solutionCommand is `course solution --lab ID [--peek] [DIR]`.
func (a *app) solutionCommand() *cobra.Command {
	var (
		labFlag string
		peek    bool
	)
	c := &cobra.Command{
		Use:     "solution --lab ID [--peek] [DIR]",
		Short:   a.p.text("solution.short"),
		Long:    a.p.text("solution.long"),
		Example: a.p.text("solution.example"),
		Args:    a.argsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			root, b, ch, lab, err := a.practiceLab(dirArg(args), labFlag, "course solution")
			if err != nil {
				return err
			}
			files, err := readLabFiles(root, b, ch, lab)
			if err != nil {
				return a.labFileError(err)
			}
			st := style{a.color}
			if peek {
				fmt.Fprintln(a.stdout, st.bold(a.p.text("solution.spoiler", lab.ID)))
			} else {
				if err := a.requireGo(b.Course()); err != nil {
					return err
				}
				if changed := a.changedTests(root); len(changed) > 0 {
					a.printTestsChanged(changed)
					return errSilentFailure
				}
				fmt.Fprintln(a.stderr, a.p.text("solution.running", lab.ID, shellQuote(lab.Pattern)))
				report, err := gotest.Run(c.Context(), gotest.Options{Dir: root, Run: lab.Pattern, Packages: []string{lab.PackagePattern()}})
				if err != nil {
					return err
				}
				if report.BuildFailed {
					fmt.Fprintln(a.stderr, a.p.text("solution.build", lab.ID, shellQuote(lab.ID)))
					return errSilentFailure
				}
				if o := a.labOutcome(lab, report); o.passed < o.total {
					fmt.Fprintln(a.stderr, a.p.text("solution.notgreen", lab.ID, o.passed, o.total, shellQuote(lab.ID), shellQuote(lab.ID)))
					return errSilentFailure
				}
				fmt.Fprintln(a.stdout, st.ok(a.p.text("solution.green", lab.ID)))
			}
			return a.printSolution(b, ch, lab, files)
		},
	}
	c.Flags().StringVar(&labFlag, "lab", "", a.p.text("solution.flag.lab"))
	c.Flags().BoolVar(&peek, "peek", false, a.p.text("solution.flag.peek"))
	return c
}

// printSolution prints, for every region of lab, the diff from the learner's body to the
// reference's.
func (a *app) printSolution(b *tree.Builder, ch *manifest.Chapter, lab *manifest.Lab, files []labFile) error {
	labels := splitTabs(a.p.text("solution.labels"))
	total := 0
	for _, f := range files {
		total += len(f.bodies)
	}
	n := 0
	for _, f := range files {
		ref, err := b.ReferenceBodies(ch, lab, f.path)
		if err != nil {
			return err
		}
		if len(ref) != len(f.bodies) {
			return a.labFileError(&labsrc.MarkerError{File: f.path, Lab: lab.ID,
				Detail: fmt.Sprintf("%d region(s), the starter has %d", len(f.bodies), len(ref))})
		}
		begins := beginLines(f.src, lab.ID)
		for i, body := range f.bodies {
			n++
			line := 0
			if i < len(begins) {
				line = begins[i]
			}
			fmt.Fprintln(a.stdout)
			fmt.Fprintln(a.stdout, a.p.text("solution.region", f.path, line, lab.ID, n, total))
			if body == ref[i] {
				fmt.Fprintln(a.stdout, a.p.text("solution.same"))
				continue
			}
			fmt.Fprint(a.stdout, a.colorDiff(unifiedDiff(
				fmt.Sprintf("%s (%s)", f.path, labels[0]), fmt.Sprintf("%s (%s)", f.path, labels[1]),
				line+1, body, ref[i])))
		}
	}
	return nil
}

// colorDiff colours the removed and added lines of a unified diff on a terminal.
func (a *app) colorDiff(diff string) string {
	if !a.color {
		return diff
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(diff, "\n") {
		switch {
		case strings.HasPrefix(line, "---"), strings.HasPrefix(line, "+++"):
			b.WriteString("\x1b[1m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n")
		case strings.HasPrefix(line, "-"):
			b.WriteString("\x1b[31m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n")
		case strings.HasPrefix(line, "+"):
			b.WriteString("\x1b[32m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n")
		case strings.HasPrefix(line, "@@"):
			b.WriteString("\x1b[36m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n")
		default:
			b.WriteString(line)
		}
	}
	return b.String()
}

// diffContext is how many unchanged lines a hunk shows around a change.
const diffContext = 3

// unifiedDiff returns the unified diff from old to new, labelled oldName and newName, whose first
// line is line number first in both; "" when they are equal. It finds a longest common
// subsequence of lines, which is plenty for a lab region of a few dozen lines.
func unifiedDiff(oldName, newName string, first int, old, new string) string {
	a, b := diffLines(old), diffLines(new)
	ops := linediff.Diff(a, b)
	if !linediff.Changed(ops) {
		return ""
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	for i := 0; i < len(ops); {
		// Find the next change and the hunk around it.
		for i < len(ops) && ops[i].Kind == linediff.Keep {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(0, i-diffContext)
		end := i
		for end < len(ops) {
			if ops[end].Kind != linediff.Keep {
				end++
				continue
			}
			// An unchanged run longer than twice the context ends the hunk.
			run := end
			for run < len(ops) && ops[run].Kind == linediff.Keep {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = run
		}
		oldStart, newStart := ops[start].Old, ops[start].New
		oldCount, newCount := 0, 0
		for _, op := range ops[start:end] {
			if op.Kind != linediff.Insert {
				oldCount++
			}
			if op.Kind != linediff.Delete {
				newCount++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(first+oldStart, oldCount), hunkRange(first+newStart, newCount))
		for _, op := range ops[start:end] {
			out.WriteByte(byte(op.Kind))
			out.WriteString(op.Text)
			out.WriteByte('\n')
		}
		i = end
	}
	return out.String()
}

// hunkRange formats a unified diff range: "start,count", or "start" for one line.
func hunkRange(start, count int) string {
	if count == 1 {
		return fmt.Sprint(start)
	}
	if count == 0 {
		start-- // an empty range names the line before it
	}
	return fmt.Sprintf("%d,%d", start, count)
}

// diffLines splits text into lines without their line ends; a final line end adds no line.
func diffLines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}
