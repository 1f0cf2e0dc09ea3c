package cli

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/heldout"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// heldoutMessages are the texts of `course test --heldout`.
var heldoutMessages = i18n.Catalog{
	"test.flag.heldout": {
		ZH: "运行本章的保留用例（只在课程工具里，练习目录里没有）：只报告你的判决和应有的是否一致，不显示用例内容",
		EN: "run the chapter's held-out cases (kept in the kit, not in the practice directory): reports only whether your verdict agrees with the right one, never the case",
	},
	"heldout.flags": {ZH: "--heldout 不能和 --lab、--all 一起用", EN: "--heldout cannot be used with --lab or --all"},
	"heldout.none": {
		ZH: "第 %s 章没有保留用例（保留用例属于第 14 章评测收官）。",
		EN: "chapter %s has no held-out cases (they belong to chapter 14, the evaluation capstone).",
	},
	"heldout.title":   {ZH: "第 %s 章的保留用例（%d 个）：", EN: "Held-out cases of chapter %s (%d):"},
	"heldout.agrees":  {ZH: "  保留用例 %d  通过：你的判决和应有的一致", EN: "  held-out %d  pass: your verdict agrees with the right one"},
	"heldout.differs": {ZH: "  保留用例 %d  未通过：你的判决和应有的不一致", EN: "  held-out %d  FAIL: your verdict differs from the right one"},
	"heldout.problem": {ZH: "  保留用例 %d  未通过：%s", EN: "  held-out %d  FAIL: %s"},
	"heldout.summary": {ZH: "通过 %d，失败 %d", EN: "%d passed, %d failed"},
	"heldout.advice": {
		ZH: "保留用例不显示内容。先让 course test 全部通过，再对照 Lab 卡片检查你的判断：多出来的文件、失败的命令、正好等于预算、步数和 token 怎么数。",
		EN: "Held-out cases show no content. First make course test pass, then hold your checks against the lab cards: extra files, failed commands, exactly the budget, how steps and tokens are counted.",
	},
	"heldout.testfiles": {
		ZH: "你的测试文件和起始代码的不一样（%s）：保留用例只用起始代码里的测试文件运行，你加的、改过的测试文件不参与。",
		EN: "your test files differ from the starter's (%s): the held-out cases run with the starter's test files only; the ones you added or changed take no part.",
	},
	"heldout.build": {ZH: "代码没有编译通过，保留用例没有运行：\n%s", EN: "the code does not build; no held-out case ran:\n%s"},
}

// runHeldout is `course test --heldout`: it runs ch's held-out cases against the package in root
// and prints one line per case, then the totals.
func (a *app) runHeldout(ctx context.Context, root string, b *tree.Builder, ch *manifest.Chapter) error {
	cases, err := heldout.Load(b.FS(), ch.Number)
	if err != nil {
		return err
	}
	if len(cases) == 0 {
		fmt.Fprintln(a.stdout, a.p.text("heldout.none", ch.Number))
		return nil
	}
	starter, err := b.Starter(ch)
	if err != nil {
		return err
	}
	// The harness joins the chapter's package: the module's root package, or the chapter's own.
	pkgDir := ch.PackageDirIn(root)
	testFiles := map[string][]byte{}
	for name, data := range starter {
		if path.Dir(name) == ch.PackageDir() && strings.HasSuffix(name, "_test.go") {
			testFiles[path.Base(name)] = data
		}
	}
	differ, err := heldout.DifferentTestFiles(pkgDir, testFiles)
	if err != nil {
		return err
	}
	if len(differ) > 0 {
		for i, name := range differ {
			if q := strconv.Quote(name); q[1:len(q)-1] != name {
				differ[i] = q // a name with escapes is shown quoted, never raw on the terminal
			}
		}
		fmt.Fprintln(a.stdout, a.p.text("heldout.testfiles", strings.Join(differ, ", ")))
	}
	outcomes, err := heldout.Run(ctx, b.FS(), ch.Number, cases, pkgDir, heldout.Options{Env: gotest.OfflineEnv(), Timeout: a.testTimeout, TestFiles: testFiles})
	if errors.Is(err, heldout.ErrBuild) {
		fmt.Fprintln(a.stdout, style{a.color}.bad(a.p.text("heldout.build", err.Error())))
		return errSilentFailure
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, a.p.text("heldout.title", ch.Number, len(cases)))
	passed, failed := 0, 0
	for i, o := range outcomes {
		switch {
		case o.Agrees:
			passed++
			fmt.Fprintln(a.stdout, style{a.color}.ok(a.p.text("heldout.agrees", i+1)))
		case o.Problem != "":
			failed++
			fmt.Fprintln(a.stdout, style{a.color}.bad(a.p.text("heldout.problem", i+1, o.Problem)))
		default:
			failed++
			fmt.Fprintln(a.stdout, style{a.color}.bad(a.p.text("heldout.differs", i+1)))
		}
	}
	fmt.Fprintln(a.stdout, a.p.text("heldout.summary", passed, failed))
	if failed > 0 {
		fmt.Fprintln(a.stdout, a.p.text("heldout.advice"))
		return errSilentFailure
	}
	return nil
}
