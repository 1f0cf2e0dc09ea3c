package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/atomicfile"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/labsrc"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/tree"
)

// backupDir is where `course reset --force` keeps the files it replaced, inside a practice
// directory.
const backupDir = ".course/backup"

// resetMessages are the texts of `course reset`.
var resetMessages = i18n.Catalog{
	"reset.short": {ZH: "把一个 Lab 的代码恢复成起始的桩，其余代码不动", EN: "put back the starter code of one lab, keeping everything else"},
	"reset.long": {
		ZH: "course reset --lab ID 在练习目录中，把该 Lab 的每个区域（//lab:begin ID 与 //lab:end 之间的行）\n" +
			"换回练习开始时的桩（TODO 行和 panic），区域外的代码、其他 Lab 的代码一字不改；\n" +
			"唯一的例外是只有被换掉的代码用到的 import 行，它们会被一起去掉，文件才能编译。\n\n" +
			"如果区域里已经有你写的、还没提交到 git 的代码，course reset 会拒绝并列出会丢失的区域，什么也不改（退出码 1）；\n" +
			"代码已经提交（区域和 HEAD 里的一样）时不会丢失任何东西，直接恢复。\n" +
			"加 --force 才会替换：先把要改的文件原样复制到 .course/backup/<时间>-lab-<ID>/ 下，再逐个文件原子写入。\n" +
			"course reset --tests 把改动过的聚焦测试文件恢复成练习开始时的样子（先备份）；它不和 --lab 一起用（退出码 2），两件事依次做。\n" +
			"标记被删除或损坏时，reset 说明是哪个文件、哪一行，什么也不改；把标记恢复后再试。",
		EN: "course reset --lab ID, in a practice directory, puts the starter's stub (the TODO line and the panic) back into\n" +
			"every region of the lab (the lines between //lab:begin ID and //lab:end). Code outside the regions and the\n" +
			"code of other labs stays byte for byte; the one exception are import lines only the replaced code used, which go\n" +
			"too, so that the file compiles.\n\n" +
			"When a region holds code you wrote that is not committed in git, course reset refuses, lists the regions whose code\n" +
			"would be lost and changes nothing (exit code 1); code committed as it is (the regions equal HEAD's) loses nothing and\n" +
			"is reset at once. With --force it replaces them: it first copies every file it changes, as it is, to\n" +
			".course/backup/<time>-lab-<ID>/, then writes each file atomically. course reset --tests puts edited focused\n" +
			"test files back (backed up first); it does not go with --lab (exit code 2): do the two one after the other.\n" +
			"When markers were removed or damaged, reset says which file and line and changes nothing; restore them and retry.",
	},
	"reset.example": {
		ZH: "  course reset --lab 7.3\n  course reset --lab 7.3 --force\n  course reset --lab 非执行终态 ../tinypi-07",
		EN: "  course reset --lab 7.3\n  course reset --lab 7.3 --force\n  course reset --lab 非执行终态 ../tinypi-07",
	},
	"reset.flag.lab":   {ZH: "要恢复的 Lab：编号（7.3）或关键词", EN: "the lab to reset: its id (7.3) or keyword"},
	"reset.flag.force": {ZH: "即使会丢失你写的代码也替换（先备份到 .course/backup/）", EN: "replace even code you wrote (it is backed up under .course/backup/ first)"},
	"err.lab.required": {ZH: "需要用 --lab 指定一个 Lab，例如：%s --lab %s", EN: "name a lab with --lab, for example: %s --lab %s"},
	"err.lab.observe":  {ZH: "第 %s 章是观察章节：它的 Lab 是阅读任务，没有要写的代码。", EN: "chapter %s is an observe chapter: its labs are reading tasks with no code to write."},
	"err.lab.file":     {ZH: "读取 %s 失败：%v", EN: "reading %s failed: %v"},
	"err.markers.gone": {
		ZH: "%[1]s 里 Lab %[2]s 的标记 //lab:begin %[2]s … //lab:end 不见了，课程工具找不到这个 Lab 的代码。\n把标记放回原处（git diff %[1]s 能看到它们原来的位置）再试。什么也没有改。",
		EN: "the markers //lab:begin %[2]s … //lab:end of lab %[2]s are gone from %[1]s, so the kit cannot find the lab's code.\nPut them back (git diff %[1]s shows where they were) and retry. Nothing was changed.",
	},
	"err.markers.damaged": {
		ZH: "%[1]s 里 Lab %[2]s 的标记 //lab:begin … //lab:end 损坏了（%[3]s）。\n把标记修好（git diff %[1]s 能看到它们原来的样子）再试。什么也没有改。",
		EN: "the markers //lab:begin … //lab:end of lab %[2]s in %[1]s are damaged (%[3]s).\nRepair them (git diff %[1]s shows how they were) and retry. Nothing was changed.",
	},
	"reset.nothing": {ZH: "Lab %s 已经是起始的桩，没有需要恢复的。", EN: "lab %s is already the starter's stub; nothing to reset."},
	"reset.refused": {
		ZH: "Lab %s 的以下区域里有你写的代码，恢复会丢失它们：\n%s\n什么也没有改。确实要恢复，请运行（会先备份到 %s/）：\n  %s",
		EN: "these regions of lab %s hold code you wrote, which a reset would lose:\n%s\nNothing was changed. To reset anyway (backed up under %s/ first), run:\n  %s",
	},
	"reset.region":     {ZH: "  %s:%d  （%d 行）", EN: "  %s:%d  (%d lines)"},
	"reset.imports":    {ZH: "%s：去掉了只有你的代码用到的 import：%s", EN: "%s: removed the imports only your code used: %s"},
	"reset.backup":     {ZH: "已备份到 %s", EN: "backed up to %s"},
	"reset.done":       {ZH: "已恢复 Lab %s 的起始代码：%s", EN: "reset lab %s to its starter code: %s"},
	"reset.nexttst":    {ZH: "运行这个 Lab 的测试：\n  course test --lab %s", EN: "run the lab's tests:\n  course test --lab %s"},
	"reset.flag.tests": {ZH: "把改动过的聚焦测试文件恢复成练习开始时的样子（先备份）", EN: "put the focused test files back as the practice started with them (backed up first)"},
	"reset.tests.none": {ZH: "聚焦测试文件和练习开始时一样，没有需要恢复的。", EN: "the focused test files are as the practice started with them; nothing to restore."},
	"reset.tests.done": {ZH: "已恢复聚焦测试文件：%s", EN: "restored the focused test files: %s"},
	"reset.both": {
		ZH: "--lab 和 --tests 恢复的是不同的东西，一次只做一件，什么也没有改。依次运行：\n  %[1]s\n  %[2]s",
		EN: "--lab and --tests reset different things, one at a time; nothing was changed. Run them one after the other:\n  %[1]s\n  %[2]s",
	},
	"reset.committed": {
		ZH: "Lab %s 区域里的代码已经提交在 git 里（%s），恢复不会丢失它：git show HEAD:%s 能看到它。",
		EN: "the code in lab %s's regions is committed in git (%s), so a reset loses nothing: git show HEAD:%s shows it.",
	},
}

// resetCommand is `course reset --lab ID [--force] [DIR]`.
func (a *app) resetCommand() *cobra.Command {
	var (
		labFlag string
		force   bool
		tests   bool
	)
	c := &cobra.Command{
		Use:     "reset --lab ID [--force] [DIR] | reset --tests [DIR]",
		Short:   a.p.text("reset.short"),
		Long:    a.p.text("reset.long"),
		Example: a.p.text("reset.example"),
		Args:    a.argsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if tests && labFlag != "" {
				// Each can refuse on its own (the lab holds code a reset would lose): doing one
				// and reporting both would say something stayed changed that was not reset.
				dir := ""
				if len(args) == 1 {
					dir = " " + shellQuote(args[0])
				}
				return a.usagef("reset.both", "course reset --tests"+dir, "course reset --lab "+shellQuote(labFlag)+dir)
			}
			if tests {
				root, b, ch, err := a.practiceChapter(dirArg(args))
				if err != nil {
					return err
				}
				return a.resetTests(root, b, ch, time.Now())
			}
			root, b, ch, lab, err := a.practiceLab(dirArg(args), labFlag, "course reset")
			if err != nil {
				return err
			}
			return a.reset(root, b, ch, lab, force, time.Now())
		},
	}
	c.Flags().StringVar(&labFlag, "lab", "", a.p.text("reset.flag.lab"))
	c.Flags().BoolVar(&force, "force", false, a.p.text("reset.flag.force"))
	c.Flags().BoolVar(&tests, "tests", false, a.p.text("reset.flag.tests"))
	return c
}

// resetFile is a lab file that a reset changes: its new content and the regions the learner
// wrote code in.
type resetFile struct {
	labFile
	next    []byte
	written []lostRegion
	dropped []string // imports only the learner's code used, removed with it
}

// lostRegion is a region whose code a reset replaces.
type lostRegion struct {
	line, lines int // the //lab:begin line (1-based) and the number of lines of code in it
}

// reset puts the starter's bodies of lab back into its files under root. Nothing is written
// unless every file can be reset; without force, regions with the learner's code stop it.
func (a *app) reset(root string, b *tree.Builder, ch *manifest.Chapter, lab *manifest.Lab, force bool, now time.Time) error {
	files, err := readLabFiles(root, b, ch, lab)
	if err != nil {
		return a.labFileError(err)
	}
	var changes []resetFile
	for _, f := range files {
		stub, err := b.StubBodies(ch, lab, f.path)
		if err != nil {
			return err
		}
		next, err := labsrc.ReplaceBodies(f.src, lab.ID, stub)
		if err != nil {
			return a.labFileError(withFile(err, f.path))
		}
		if bytes.Equal(next, f.src) {
			continue
		}
		next, dropped := labsrc.DropUnusedImports(f.src, next)
		rf := resetFile{labFile: f, next: next, dropped: dropped}
		begins := beginLines(f.src, lab.ID)
		for i, body := range f.bodies {
			if i < len(stub) && body == stub[i] {
				continue
			}
			line := 0
			if i < len(begins) {
				line = begins[i]
			}
			rf.written = append(rf.written, lostRegion{line: line, lines: strings.Count(body, "\n")})
		}
		changes = append(changes, rf)
	}
	if len(changes) == 0 {
		fmt.Fprintln(a.stdout, a.p.text("reset.nothing", lab.ID))
		return nil
	}
	if !force && committed(root, lab.ID, changes) {
		// The learner's code is in git: nothing is lost, and no backup is needed.
		fmt.Fprintln(a.stdout, a.p.text("reset.committed", lab.ID, headShort(root), changes[0].path))
		force = true
	}
	if !force {
		var regions []string
		for _, rf := range changes {
			for _, r := range rf.written {
				regions = append(regions, a.p.text("reset.region", rf.path, r.line, r.lines))
			}
		}
		fmt.Fprintln(a.stderr, a.p.text("reset.refused", lab.ID, strings.Join(regions, "\n"), backupDir,
			"course reset --lab "+shellQuote(lab.ID)+" --force"))
		return errSilentFailure
	}
	if !committed(root, lab.ID, changes) {
		backup, err := backupFiles(root, "lab-"+lab.ID, changes, now)
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, a.p.text("reset.backup", backup))
	}
	var paths []string
	for _, rf := range changes {
		if err := atomicfile.Write(rf.name, rf.next, rf.mode); err != nil {
			return err
		}
		paths = append(paths, rf.path)
		if len(rf.dropped) > 0 {
			fmt.Fprintln(a.stdout, a.p.text("reset.imports", rf.path, strings.Join(rf.dropped, ", ")))
		}
	}
	st := style{a.color}
	fmt.Fprintln(a.stdout, st.ok(a.p.text("reset.done", lab.ID, strings.Join(paths, ", "))))
	fmt.Fprintln(a.stdout, a.p.text("reset.nexttst", shellQuote(lab.ID)))
	return nil
}

// beginLines returns the 1-based line numbers of the //lab:begin <lab> lines of src, in order.
func beginLines(src []byte, lab string) []int {
	var lines []int
	for i, line := range strings.Split(string(src), "\n") {
		keyword, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
		if keyword == "//lab:begin" && strings.TrimSpace(arg) == lab {
			lines = append(lines, i+1)
		}
	}
	return lines
}

// backupFiles copies the current content of every changed file to a new folder
// .course/backup/<time>-<what>/ under root (what is "lab-7.3" or "tests") and returns that folder, relative to root.
func backupFiles(root, what string, changes []resetFile, now time.Time) (string, error) {
	base := filepath.Join(root, filepath.FromSlash(backupDir))
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", backupDir, err)
	}
	stamp := now.UTC().Format("20060102T150405Z") + "-" + what
	name := stamp
	var dir string
	for n := 2; ; n++ {
		dir = filepath.Join(base, name)
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("creating the backup folder: %w", err)
		}
		name = fmt.Sprintf("%s-%d", stamp, n) // a second reset within the same second
	}
	for _, rf := range changes {
		if err := atomicfile.Write(filepath.Join(dir, filepath.FromSlash(rf.path)), rf.src, rf.mode); err != nil {
			return "", fmt.Errorf("backing up %s: %w", rf.path, err)
		}
	}
	return filepath.ToSlash(filepath.Join(backupDir, name)), nil
}

// resetTests puts the focused test files that differ from the practice's start back, after
// backing up their current content.
func (a *app) resetTests(root string, b *tree.Builder, ch *manifest.Chapter, now time.Time) error {
	_, prov, err := practice.Find(root)
	if err != nil {
		return err
	}
	changed, err := prov.ChangedTestFiles(root)
	if err != nil {
		return err
	}
	if len(changed) == 0 {
		fmt.Fprintln(a.stdout, a.p.text("reset.tests.none"))
		return nil
	}
	starter, err := b.Starter(ch)
	if err != nil {
		return err
	}
	var changes []resetFile
	for _, p := range changed {
		data, ok := starter[p]
		if !ok {
			return fmt.Errorf("restoring %s: the starter of chapter %s has no such file", p, ch.Number)
		}
		name := filepath.Join(root, filepath.FromSlash(p))
		rf := resetFile{labFile: labFile{path: p, name: name, mode: 0o644}, next: data}
		src, err := os.ReadFile(name)
		switch {
		case err == nil:
			rf.src = src
		case !errors.Is(err, fs.ErrNotExist): // a deleted file has nothing to back up
			return err
		}
		changes = append(changes, rf)
	}
	var existing []resetFile
	for _, rf := range changes {
		if rf.src != nil {
			existing = append(existing, rf)
		}
	}
	if len(existing) > 0 {
		backup, err := backupFiles(root, "tests", existing, now)
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, a.p.text("reset.backup", backup))
	}
	for _, rf := range changes {
		if err := atomicfile.Write(rf.name, rf.next, rf.mode); err != nil {
			return err
		}
	}
	fmt.Fprintln(a.stdout, style{a.color}.ok(a.p.text("reset.tests.done", strings.Join(changed, ", "))))
	return nil
}
