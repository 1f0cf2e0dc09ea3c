package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/learn-tinypi/course/internal/carry"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/tree"
)

// carryFrom plans `course practice NN DIR --from PREV` and proves it: the learner's labs of
// PREV (and of the chain PREV was made from) in ch's starter, and the earlier chapters' focused
// tests passing on that tree with -race. It only reads PREV and writes nothing but a temporary
// directory it removes; any reason not to go on is an error that says what to do, and DIR is
// left as it was.
func (a *app) carryFrom(ctx context.Context, b *tree.Builder, ch *manifest.Chapter, prev, dir string) (*carry.Plan, error) {
	if strings.TrimSpace(prev) == "" {
		return nil, &usageError{a.p.text("from.empty")}
	}
	root, prov, err := practice.Find(prev)
	if errors.Is(err, practice.ErrNotPractice) {
		return nil, &usageError{a.p.text("from.not.practice", prev)}
	}
	if err != nil {
		return nil, &usageError{a.p.text("from.unreadable", prev, err)}
	}
	plan, err := carry.New(b, root, prov, ch)
	var refusal *carry.Refusal
	if errors.As(err, &refusal) && refusal.Kind == carry.RefuseStub {
		// Not bad input: a check failed (the lab's tests would fail on its stub), found
		// before the proof.
		return nil, errors.New(a.stubText(refusal, root, ch, dir))
	}
	if errors.As(err, &refusal) {
		return nil, &usageError{a.refusalText(refusal, root, ch, dir)}
	}
	if err != nil {
		return nil, fmt.Errorf("carrying from %s: %w", root, err)
	}
	chapters := carry.ProofChapters(b.Course(), ch)
	numbers := make([]string, len(chapters))
	for i, c := range chapters {
		numbers[i] = c.Number
	}
	fmt.Fprintln(a.stderr, a.p.text("from.proving", strings.Join(numbers, ", ")))
	proof, err := plan.Prove(ctx, carry.ProofOptions{TestTimeout: a.testTimeout})
	if err != nil {
		return nil, fmt.Errorf("proving the code carried from %s: %w", root, err)
	}
	if proof.RaceUnavailable != "" {
		fmt.Fprintln(a.stderr, a.p.text("from.norace", proof.RaceUnavailable))
	}
	if proof.Report != nil && proof.Report.Environment != "" {
		return nil, fmt.Errorf("%s", a.p.text("from.environment", proof.Report.Environment))
	}
	if f := proof.Failure; f != nil {
		// Failed tests: exit code 1, as for any failed test (README), not 2.
		return nil, errors.New(a.proofFailureText(f, root, ch, dir))
	}
	return plan, nil
}

// refusalText says why PREV cannot be carried from, and what to do instead.
func (a *app) refusalText(r *carry.Refusal, root string, ch *manifest.Chapter, dir string) string {
	fresh := "course practice " + ch.Number + " " + shellQuote(dir)
	var why string
	switch r.Kind {
	case carry.RefuseTargetObserve:
		why = a.p.text("from.refuse.target.observe", ch.Number)
	case carry.RefuseSourceObserve:
		why = a.p.text("from.refuse.source.observe", root, r.Chapter)
	case carry.RefuseUnknownChapter:
		why = a.p.text("from.refuse.unknown", root, r.Chapter)
	case carry.RefuseNotEarlier:
		why = a.p.text("from.refuse.not.earlier", root, r.Chapter, ch.Number)
	case carry.RefuseNoTestHashes:
		why = a.p.text("from.refuse.no.hashes", root)
	case carry.RefuseTestsChanged:
		why = a.p.text("from.refuse.tests.changed", root, strings.Join(r.Files, ", "))
	case carry.RefuseKitChanged:
		why = a.p.text("from.refuse.kit.changed", root, strings.Join(r.Files, ", "))
	case carry.RefuseMarkers:
		detail := r.Detail
		if detail == "" {
			detail = a.p.text("from.markers.gone")
		}
		if r.Lab == "" {
			why = a.p.text("from.refuse.markers.file", root, r.File, detail)
		} else {
			why = a.p.text("from.refuse.markers", root, r.Lab, r.File, detail)
		}
	default: // RefuseUnreadable, RefuseSyntax
		why = a.p.text("from.refuse.file", root, r.File, r.Detail)
	}
	return why + "\n" + a.p.text("from.nothing.written", fresh)
}

// stubText says which labs of PREV are still the starter's stubs, found before any proof, and
// the two ways on: write them in PREV, or start from the reference.
func (a *app) stubText(r *carry.Refusal, root string, ch *manifest.Chapter, dir string) string {
	fresh := "course practice " + ch.Number + " " + shellQuote(dir)
	labs := make([]string, len(r.Labs))
	for i, id := range r.Labs {
		labs[i] = id + " (" + r.Files[i] + ")"
	}
	fix := "cd " + shellQuote(root) + " && course test --lab " + r.Labs[0]
	return a.p.text("from.stub", strings.Join(labs, ", ")) + "\n" + a.p.text("from.stub.ways", fix, fresh)
}

// proofFailureText says which earlier lab failed on the combined tree, with the failing test,
// and the two ways on: fix it in PREV, or start from the reference.
func (a *app) proofFailureText(f *carry.Failure, root string, ch *manifest.Chapter, dir string) string {
	fresh := "course practice " + ch.Number + " " + shellQuote(dir)
	var b strings.Builder
	switch {
	case f.Build != "":
		if f.BuildLab != "" {
			b.WriteString(a.p.text("from.fail.build.lab", f.BuildLab))
		} else {
			b.WriteString(a.p.text("from.fail.build"))
		}
		b.WriteString("\n" + indent(clipLines(f.Build, 12), "  "))
	case f.Lab != nil:
		whose := a.p.text("from.fail.reference")
		if f.Learner {
			whose = a.p.text("from.fail.learner")
		}
		b.WriteString(a.p.text("from.fail.lab", f.Lab.ID, f.Test, whose))
		if f.Message != "" {
			b.WriteString("\n  " + f.Message)
		}
	default:
		b.WriteString(a.p.text("from.fail.output"))
		b.WriteString("\n" + indent(clipLines(f.Output, 12), "  "))
	}
	fix := "cd " + shellQuote(root) + " && course test"
	if f.Lab != nil {
		fix += " --lab " + f.Lab.ID
	}
	b.WriteString("\n" + a.p.text("from.fail.ways", fix, fresh))
	return b.String()
}

// printCarried says where the code of every earlier lab of the new directory comes from, and
// which of the learner's own declarations came along.
func (a *app) printCarried(plan *carry.Plan) {
	fmt.Fprintln(a.stdout, a.p.text("from.origins", plan.From.Number))
	a.printOriginLines(plan.Earlier)
	if len(plan.Helpers) > 0 {
		names := make([]string, len(plan.Helpers))
		for i, h := range plan.Helpers {
			names[i] = h.Name + " (" + h.File + ")"
		}
		fmt.Fprintln(a.stdout, a.p.text("from.helpers", strings.Join(names, ", ")))
	}
}

// printOriginLines writes one line per earlier lab: its id and where its code comes from.
func (a *app) printOriginLines(earlier []practice.LabOrigin) {
	for _, o := range earlier {
		fmt.Fprintf(a.stdout, "  %-5s %s\n", o.Lab, a.originText(o))
	}
}

// originText says in a few words where one earlier lab's code comes from.
func (a *app) originText(o practice.LabOrigin) string {
	switch {
	case o.Learner():
		return a.p.text("origin.learner", o.Written)
	case o.Reason == practice.ReasonChanged && o.Kept != "":
		return a.p.text("origin.changed.kept", o.Changed, o.Decl, o.File, o.Kept)
	case o.Reason == practice.ReasonChanged:
		return a.p.text("origin.changed", o.Changed, o.Decl, o.File)
	case o.Reason == practice.ReasonClash:
		return a.p.text("origin.clash", o.Decl, o.Changed, o.File)
	case o.Reason == practice.ReasonNotWritten:
		return a.p.text("origin.not.written")
	}
	return a.p.text("origin.reference")
}

// indent puts prefix before every line of s.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// fromMessages are the texts of `course practice NN DIR --from PREV`.
var fromMessages = i18n.Catalog{
	"practice.flag.from": {
		ZH: "从更早一章的练习目录 PREV 带入你自己写的 Lab 代码（先用 -race 证明它们在新代码上仍然通过）",
		EN: "carry your own lab code from PREV, the practice directory of an earlier chapter (proven first: its tests must still pass with -race)",
	},
	"from.empty":        {ZH: "--from 需要一个练习目录：course practice NN DIR --from PREV", EN: "--from needs a practice directory: course practice NN DIR --from PREV"},
	"from.not.practice": {ZH: "%s 不是练习目录（它和它的上级目录里都没有 .course/practice.json）：--from 要的是用 course practice 创建的更早一章的目录", EN: "%s is not a practice directory (neither it nor a directory above it has .course/practice.json): --from takes the directory of an earlier chapter that course practice created"},
	"from.unreadable":   {ZH: "读不了 %s 的练习记录：%v", EN: "cannot read the practice record of %s: %v"},
	"from.proving":      {ZH: "正在证明带入的代码：在合并后的代码上用 -race 运行第 %s 章的聚焦测试……", EN: "proving the carried code: running the focused tests of chapters %s on the combined code with -race..."},
	"from.norace":       {ZH: "这台机器不能用 -race（%s），证明没有用它。", EN: "-race cannot be used on this machine (%s); the proof ran without it."},
	"from.environment":  {ZH: "证明没能运行（与你的代码无关）：%s", EN: "the proof could not run (this is not about your code): %s"},
	"from.nothing.written": {
		ZH: "什么也没有写入。要从参考代码开始，不带 --from：\n  %s",
		EN: "nothing was written. To start from the reference's code instead, leave out --from:\n  %s",
	},
	"from.refuse.target.observe": {ZH: "第 %s 章是观察章节，没有要写的代码，也就没有地方放带入的代码。", EN: "chapter %s is an observe chapter: it has no code to write, so there is nowhere to carry code into."},
	"from.refuse.source.observe": {ZH: "%s 是观察章节（第 %s 章）的练习目录，里面没有你写的 Lab。", EN: "%s is the practice directory of an observe chapter (%s): it holds no labs you wrote."},
	"from.refuse.unknown":        {ZH: "%s 记录的第 %s 章不在这门课里。", EN: "%s records chapter %s, which is not in this course."},
	"from.refuse.not.earlier":    {ZH: "%s 是第 %s 章的练习目录，不在第 %s 章之前：--from 只能从更早的一章带入。", EN: "%s is the practice directory of chapter %s, which does not come before chapter %s: --from carries from an earlier chapter only."},
	"from.refuse.no.hashes":      {ZH: "%s 是旧版 course 创建的，没有记录测试文件的指纹，看不出测试有没有被改过。", EN: "%s was made by an older course command that did not record its test files, so whether they were edited cannot be told."},
	"from.refuse.tests.changed":  {ZH: "%s 的聚焦测试被改过：%s。改过的测试证明不了什么；用 course reset --tests 恢复它们（你的代码不动），再试。", EN: "the focused tests of %s were edited: %s. Edited tests prove nothing; restore them with course reset --tests (your code stays), then try again."},
	"from.refuse.kit.changed":    {ZH: "%s 是另一个版本的课程创建的，它的测试和这个版本不同：%s。", EN: "%s was made by another version of the course, whose tests differ from this one's: %s."},
	"from.refuse.markers":        {ZH: "%s 里 Lab %s 的标记（//lab:begin、//lab:end）坏了，在 %s：%s。看 git diff 找回它们。", EN: "%s: the markers of lab %s (//lab:begin, //lab:end) are damaged, in %s: %s. git diff shows how to get them back."},
	"from.refuse.markers.file":   {ZH: "%s 里 %s 的 Lab 标记（//lab:begin、//lab:end）坏了：%s。看 git diff 找回它们。", EN: "%s: the lab markers (//lab:begin, //lab:end) of %s are damaged: %s. git diff shows how to get them back."},
	"from.markers.gone":          {ZH: "标记不见了", EN: "the markers are gone"},
	"from.refuse.file":           {ZH: "%s 里的 %s 读不了或不是合法的 Go 代码：%s", EN: "%s: %s cannot be read or is not valid Go: %s"},
	"from.fail.lab": {
		ZH: "带入的代码没有通过证明，什么也没有写入。Lab %s 的测试 %s 失败（%s）：",
		EN: "the carried code did not pass its proof, and nothing was written. Lab %s, test %s failed (%s):",
	},
	"from.stub": {
		ZH: "这些 Lab 还是练习目录起始时的桩，没有人写过：%s。桩的测试不会通过，所以没有运行证明，什么也没有写入。",
		EN: "these labs are still the starter's stubs, never written: %s. A stub's tests cannot pass, so no proof ran, and nothing was written.",
	},
	"from.stub.ways": {
		ZH: "两条路：\n  1. 先在原来的目录里写完它，再运行本命令：%s\n  2. 从参考代码开始，不带 --from：%s",
		EN: "two ways on:\n  1. write it in its own directory first, then run this command again: %s\n  2. start from the reference's code, without --from: %s",
	},
	"from.fail.learner":   {ZH: "这个 Lab 是你写的", EN: "you wrote this lab"},
	"from.fail.reference": {ZH: "这个 Lab 用参考代码，是你别处的代码让它失败了", EN: "this lab is the reference's code; your code elsewhere makes it fail"},
	"from.fail.build":     {ZH: "带入的代码合并后编译不通过，什么也没有写入：", EN: "the combined code does not build, and nothing was written:"},
	"from.fail.build.lab": {ZH: "带入的代码合并后编译不通过（错误在你写的 Lab %s 里），什么也没有写入：", EN: "the combined code does not build (the error is in lab %s, which you wrote), and nothing was written:"},
	"from.fail.output":    {ZH: "聚焦测试都通过了，但 go test 失败了，什么也没有写入：", EN: "every focused test passed but go test failed, and nothing was written:"},
	"from.fail.ways": {
		ZH: "两条路：\n  1. 在原来的目录里修好它，再运行本命令：%s\n  2. 从参考代码开始，不带 --from：%s",
		EN: "two ways on:\n  1. fix it where you wrote it, then run this command again: %s\n  2. start from the reference's code, without --from: %s",
	},
	"from.origins":        {ZH: "前面各章的 Lab 用的是谁的代码（带入自第 %s 章的练习目录）：", EN: "whose code the earlier labs are (carried from the practice directory of chapter %s):"},
	"from.helpers":        {ZH: "随你的代码一起带入的你自己的声明：%s", EN: "your own declarations that came along with your code: %s"},
	"origin.learner":      {ZH: "你的代码（写于第 %s 章）", EN: "yours (written in chapter %s)"},
	"origin.changed":      {ZH: "参考代码：第 %s 章改写了它所在的 %s（%s），你的代码没法原样带入", EN: "the reference's: chapter %s rewrote %s (%s) around it, so your code could not be carried exactly"},
	"origin.changed.kept": {ZH: "参考代码：第 %s 章改写了它所在的 %s（%s），你的代码没法原样带入；你的版本留在 %s，可以对照", EN: "the reference's: chapter %s rewrote %s (%s) around it, so your code could not be carried exactly; yours is kept in %s to compare with"},
	"origin.clash":        {ZH: "参考代码：你的声明 %s 和第 %s 章新加的声明重名（%s）", EN: "the reference's: your declaration %s has the name of one chapter %s adds (%s)"},
	"origin.not.written":  {ZH: "参考代码：这条练习链里没有做过这个 Lab", EN: "the reference's: this chain of practice directories never did this lab"},
	"origin.reference":    {ZH: "参考代码", EN: "the reference's"},
}
