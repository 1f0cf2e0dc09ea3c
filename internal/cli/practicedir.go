package cli

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

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

// labCommand is the exact command that runs lab l's focused tests.
func labCommand(l *manifest.Lab) string {
	return "go test -run " + shellQuote(l.Pattern) + " ."
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
