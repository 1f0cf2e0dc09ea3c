package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/tree"
)

// dirArg is the practice directory a command's optional DIR argument names: the current
// directory when there is none.
func dirArg(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return "."
}

// practiceDirMessages are the texts about the DIR argument and the practice directory's record.
var practiceDirMessages = i18n.Catalog{
	"err.no.dir":  {ZH: "没有这个目录：%s。检查路径；不写 DIR 时用当前目录。", EN: "no such directory: %s. Check the path; without DIR the current directory is used."},
	"err.not.dir": {ZH: "%s 不是目录：DIR 是练习目录（或其中的一个目录）。", EN: "%s is not a directory: DIR is a practice directory (or a directory inside one)."},
	"err.provenance": {
		ZH: "%[1]s 损坏了（%[2]s）。这个文件记录着练习目录属于哪一章，课程工具离不开它。\n" +
			"它在练习目录的 git 里：在 %[3]s 中运行 git checkout -- .course/practice.json 恢复它；\n" +
			"git 里也没有好的副本时，重新创建一个练习目录（course practice NN DIR），把你的代码复制过去。",
		EN: "%[1]s is damaged (%[2]s). It records which chapter this practice directory belongs to; the kit cannot work without it.\n" +
			"It is in the practice directory's git: restore it with git checkout -- .course/practice.json, run in %[3]s;\n" +
			"if git has no good copy either, create a new practice directory (course practice NN DIR) and copy your code over.",
	},
}

// findPractice is practice.Find with its errors worded for the learner: a DIR that is not
// there or is no directory (instead of the directory around it), a damaged practice.json.
func (a *app) findPractice(dir string) (string, *practice.Provenance, error) {
	if dir != "." && dir != "" {
		info, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", nil, a.usagef("err.no.dir", dir)
		case err == nil && !info.IsDir():
			return "", nil, a.usagef("err.not.dir", dir)
		}
	}
	root, prov, err := practice.Find(dir)
	var pe *practice.ProvenanceError
	switch {
	case errors.Is(err, practice.ErrNotPractice):
		return "", nil, &notPracticeError{dir: dir, err: err}
	case errors.As(err, &pe):
		return "", nil, a.usagef("err.provenance", pe.File, pe.Err, shellQuote(filepath.Dir(filepath.Dir(pe.File))))
	case err == nil && !a.langSet && knownLang(prov.Lang):
		// DIR may name another practice directory than the current one (course status DIR).
		a.p.lang, a.langDir = prov.Lang, root
	}
	return root, prov, err
}

// practiceLang returns the root of the practice directory enclosing dir and the language it was
// made in; lang is "" when dir is in none, or its record is unreadable or names no language the
// kit speaks (the command then says what is wrong with the record, if it needs it).
func practiceLang(dir string) (root, lang string) {
	root, prov, err := practice.Find(dir)
	if err != nil || !knownLang(prov.Lang) {
		return "", ""
	}
	return root, prov.Lang
}

// knownLang reports whether lang is a language the kit speaks.
func knownLang(lang string) bool { return lang == langZH || lang == langEN }

// practiceChapter finds the practice directory enclosing dir and loads its chapter.
func (a *app) practiceChapter(dir string) (root string, b *tree.Builder, ch *manifest.Chapter, err error) {
	root, prov, err := a.findPractice(dir)
	if err != nil {
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
		// go finds the module from a subdirectory; the package is named from there.
		return practice.TestCommandFrom(lab, filepath.ToSlash(a.fromCwd))
	default:
		return "cd " + shellQuote(a.fromCwd) + " && " + practice.TestCommand(lab)
	}
}

// cardPath is where lab l's card is inside a practice directory, in the output language.
func (a *app) cardPath(l *manifest.Lab) string {
	name := l.ID + ".md"
	if a.p.lang == langEN {
		name = l.ID + ".en.md"
	}
	return path.Join(filepath.ToSlash(a.fromCwd), "labs", name)
}

// practiceLab finds the practice directory enclosing dir and the lab labFlag names in its
// chapter, a rebuild chapter. cmd is the command line shown when --lab is missing.
func (a *app) practiceLab(dir, labFlag, cmd string) (root string, b *tree.Builder, ch *manifest.Chapter, lab *manifest.Lab, err error) {
	root, b, ch, err = a.practiceChapter(dir)
	if err != nil {
		return "", nil, nil, nil, err
	}
	if !ch.Rebuild() {
		return "", nil, nil, nil, a.usagef("err.lab.observe", ch.Number)
	}
	if labFlag == "" {
		example := "7.1"
		if len(ch.Labs) > 0 {
			example = ch.Labs[0].ID
		}
		return "", nil, nil, nil, a.usagef("err.lab.required", cmd, example)
	}
	lab, err = ch.Lab(labFlag)
	if err != nil {
		return "", nil, nil, nil, a.unknownLab(ch, labFlag)
	}
	return root, b, ch, lab, nil
}

// unknownLab is the usage error for a --lab value the chapter does not have.
func (a *app) unknownLab(ch *manifest.Chapter, value string) error {
	var b strings.Builder
	b.WriteString(a.p.text("err.unknown.lab", ch.Number, value))
	for _, l := range ch.Labs {
		fmt.Fprintf(&b, "\n  %s  %s  (%s)", l.ID, a.labTitle(l), l.Keyword)
	}
	return &usageError{msg: b.String()}
}
