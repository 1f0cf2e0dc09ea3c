package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/doctor"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// doctorMessages are the texts of `course doctor` (part of the catalog, messages.go).
var doctorMessages = i18n.Catalog{
	"doctor.short": {ZH: "检查这台机器能不能学这门课：Go、模块缓存、git、终端", EN: "check that this machine is ready for the course: Go, the module cache, git, the terminal"},
	"doctor.long": {
		ZH: "course doctor 逐项检查，并对每个问题给出要运行的准确命令：\n" +
			"  go       go 命令在 PATH 中，版本不低于课程要求（checkpoints/course.yaml 的 go）；\n" +
			"  模块缓存 在临时目录里生成第一个重建章节的 target，断网（GOPROXY=off）运行 go mod download 和 go build ./...：\n" +
			"           练习目录能不能离线构建；\n" +
			"  Go 环境  用你自己的 GOFLAGS、GOPROXY、GOWORK、GOTOOLCHAIN（环境变量或 go env 文件）像 course test 那样编译测试，\n" +
			"           并指出已知会弄坏练习目录的设置（例如 GOFLAGS=-mod=vendor）；\n" +
			"  git      可选：练习目录不需要它，但 git diff（看你改了什么）需要；\n" +
			"  终端     输出是不是终端、NO_COLOR、TERM=dumb（决定有没有颜色和符号），以及 CLI 选用的语言和原因。\n\n" +
			"必需的检查（go、模块缓存、Go 环境）失败时退出码为 1。",
		EN: "course doctor checks, one by one, and gives the exact command to run for every problem:\n" +
			"  go            the go command is on PATH and at least the course's version (go in checkpoints/course.yaml);\n" +
			"  module cache  writes the first rebuild chapter's target into a temporary directory and runs go mod download and\n" +
			"                go build ./... there with the network off (GOPROXY=off): can a practice directory build offline?\n" +
			"  go environment  compiles the tests as course test does, with your own GOFLAGS, GOPROXY, GOWORK and GOTOOLCHAIN\n" +
			"                (environment or go's env file), and names settings known to break a practice directory\n" +
			"                (GOFLAGS=-mod=vendor, for example);\n" +
			"  git           optional: the practice directory works without it, but git diff (to see your changes) needs it;\n" +
			"  terminal      whether the output is a terminal, NO_COLOR, TERM=dumb (they decide colour and symbols), and the\n" +
			"                language the CLI picked and why.\n\n" +
			"Exit code 1 when a required check (go, the module cache, the go environment) fails.",
	},
	"doctor.example": {ZH: "  course doctor\n  course doctor --lang en", EN: "  course doctor\n  course doctor --lang zh"},

	"doctor.go.ok":       {ZH: "go：%s（%s），课程需要 %s 或更新版本", EN: "go: %s (%s); the course needs %s or newer"},
	"doctor.go.missing":  {ZH: "go：找不到 go 命令", EN: "go: the go command was not found"},
	"doctor.go.old":      {ZH: "go：%s（%s）太旧，课程需要 %s 或更新版本", EN: "go: %s (%s) is too old; the course needs %s or newer"},
	"doctor.go.broken":   {ZH: "go：%s 无法运行：%v", EN: "go: %s does not run: %v"},
	"doctor.fix.install": {ZH: "安装 Go %s 或更新版本：https://go.dev/dl/", EN: "install Go %s or newer: https://go.dev/dl/"},
	"doctor.fix.path": {
		ZH: "然后让 shell 找到它并确认版本（Linux/macOS 的默认安装位置）：export PATH=\"/usr/local/go/bin:$PATH\" && go version",
		EN: "then let your shell find it and check the version (the default install location on Linux/macOS): export PATH=\"/usr/local/go/bin:$PATH\" && go version",
	},
	"doctor.fix.broken": {ZH: "运行 go version 看看哪里不对；必要时从 https://go.dev/dl/ 重新安装。", EN: "run go version to see what is wrong; reinstall from https://go.dev/dl/ if needed."},

	"doctor.cache.ok":      {ZH: "模块缓存：第 %s 章的练习模块可以离线构建（%s）", EN: "module cache: chapter %s's practice module builds offline (%s)"},
	"doctor.cache.skipped": {ZH: "模块缓存：跳过（先修好 go）", EN: "module cache: skipped (fix go first)"},
	"doctor.cache.failed":  {ZH: "模块缓存：第 %s 章的练习模块不能离线构建（%s 失败）：", EN: "module cache: chapter %s's practice module does not build offline (%s failed):"},
	"doctor.fix.cache": {
		ZH: "联网一次，在课程工具仓库的根目录（你安装 course 的那个目录）填充模块缓存：go mod download",
		EN: "with the network on, fill the module cache once in the kit's root (the repository you installed course from): go mod download",
	},
	"doctor.fix.cache.build": {ZH: "或者联网构建一次课程工具：go build ./...", EN: "or build the kit once with the network on: go build ./..."},

	"doctor.env.ok":      {ZH: "Go 环境：course test 用你的设置（%s）能构建并运行测试", EN: "go environment: course test builds and runs the tests with your settings (%s)"},
	"doctor.env.default": {ZH: "默认值", EN: "the defaults"},
	"doctor.env.skipped": {ZH: "Go 环境：跳过（先修好模块缓存）", EN: "go environment: skipped (fix the module cache first)"},
	"doctor.env.failed":  {ZH: "Go 环境：用你的设置（%s），%s 失败，course test 也会失败：", EN: "go environment: with your settings (%s), %s fails, and so would course test:"},
	"doctor.env.bad":     {ZH: "Go 环境：%s 会让练习目录的构建失败", EN: "go environment: %s breaks the build of a practice directory"},
	"doctor.fix.env": {
		ZH: "去掉这个设置（环境变量和 go env 文件里都要去掉）：unset %[1]s && go env -u %[1]s",
		EN: "remove the setting (from the environment and from go's env file): unset %[1]s && go env -u %[1]s",
	},
	"doctor.git.ok":      {ZH: "git：%s", EN: "git: %s"},
	"doctor.git.missing": {ZH: "git：找不到（可选）。练习目录不需要 git，但 git diff（看你改了什么）需要它。", EN: "git: not found (optional). The practice directory works without git, but git diff (to see your changes) needs it."},
	"doctor.fix.git":     {ZH: "安装 git：https://git-scm.com/downloads ，然后确认：git --version", EN: "install git: https://git-scm.com/downloads , then check: git --version"},

	"doctor.term.tty":     {ZH: "终端：输出是终端，显示颜色和符号", EN: "terminal: the output is a terminal; colour and symbols are on"},
	"doctor.term.notty":   {ZH: "终端：输出不是终端（管道或文件），纯文本，没有颜色和符号", EN: "terminal: the output is not a terminal (a pipe or a file); plain text, no colour or symbols"},
	"doctor.term.nocolor": {ZH: "终端：设置了 NO_COLOR，没有颜色和符号（要颜色：unset NO_COLOR）", EN: "terminal: NO_COLOR is set; no colour or symbols (for colour: unset NO_COLOR)"},
	"doctor.term.dumb":    {ZH: "终端：TERM=dumb，没有颜色和符号，course read 输出纯 Markdown（要颜色：export TERM=xterm-256color）", EN: "terminal: TERM=dumb; no colour or symbols, course read prints plain Markdown (for colour: export TERM=xterm-256color)"},
	"doctor.lang.from":    {ZH: "语言：中文，来自 %s（英文：course --lang en doctor，或 export %s=en_US.UTF-8）", EN: "language: English, from %s (Chinese: course --lang zh doctor, or export %s=zh_CN.UTF-8)"},
	"doctor.lang.dir": {
		ZH: "语言：中文，练习目录 %s 记住的语言（创建它时用的语言，记在 .course/practice.json 的 \"lang\" 里）；只让一条命令用英文：course --lang en doctor",
		EN: "language: English, the one the practice directory %s remembers (it was made in it; \"lang\" in .course/practice.json); Chinese for one command: course --lang zh doctor",
	},
	"doctor.lang.default": {
		ZH: "语言：中文（默认：没有 --lang，LC_ALL、LC_MESSAGES、LANG 都没有设置；英文：course --lang en doctor，或 export LANG=en_US.UTF-8）",
		EN: "language: Chinese (the default: no --lang, and LC_ALL, LC_MESSAGES and LANG are unset; English: course --lang en doctor, or export LANG=en_US.UTF-8)",
	},

	"doctor.ok":     {ZH: "doctor：必需的检查全部通过。", EN: "doctor: every required check passed."},
	"doctor.failed": {ZH: "doctor：%d 个必需的检查没有通过。按上面的说明修好，再运行 course doctor。", EN: "doctor: %d required check(s) failed. Fix them as shown above, then run course doctor again."},
}

// localeVars are the environment variables detectLang reads, in its order.
var localeVars = []string{"LC_ALL", "LC_MESSAGES", "LANG"}

// finding is one line of the doctor's report.
type finding struct {
	kind   findingKind
	text   string
	detail string   // command output, shown indented
	fixes  []string // what to do, each with the exact command
}

// findingKind says whether a finding is fine, a required check that failed, an optional thing
// that is missing, or plain information.
type findingKind int

const (
	findingOK findingKind = iota
	findingFailed
	findingWarning
	findingInfo
	findingSkipped
)

// doctorCommand is `course doctor`.
func (a *app) doctorCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "doctor",
		Short:   a.p.text("doctor.short"),
		Long:    a.p.text("doctor.long"),
		Example: a.p.text("doctor.example"),
		Args:    a.argsRange(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			b, err := a.builder()
			if err != nil {
				return err
			}
			langFlag := ""
			if f := c.Flag(langFlagKey); f != nil {
				langFlag = f.Value.String()
			}
			goFinding, goBin := a.checkGo(c.Context(), b.Course())
			findings := []finding{goFinding}
			if goBin == "" {
				findings = append(findings, finding{kind: findingSkipped, text: a.p.text("doctor.cache.skipped")})
			} else {
				cache, err := a.checkModuleCache(c.Context(), b, goBin)
				if err != nil {
					return err
				}
				findings = append(findings, cache)
				env, err := a.checkEnvironment(c.Context(), b, goBin, cache.kind == findingOK)
				if err != nil {
					return err
				}
				findings = append(findings, env)
			}
			findings = append(findings, a.checkGit())
			findings = append(findings, a.checkTerminal(langFlag)...)
			failed := a.printFindings(findings)
			if failed > 0 {
				fmt.Fprintln(a.stdout, a.p.text("doctor.failed", failed))
				return errSilentFailure
			}
			fmt.Fprintln(a.stdout, a.p.text("doctor.ok"))
			return nil
		},
	}
}

// checkGo finds the go command and checks its version. It returns the go command's path when it
// is usable, or "" when it is not.
func (a *app) checkGo(ctx context.Context, c *manifest.Course) (finding, string) {
	want := c.GoVersion
	bin, err := a.lookPath("go")
	if err != nil {
		return finding{kind: findingFailed, text: a.p.text("doctor.go.missing"), fixes: []string{
			a.p.text("doctor.fix.install", want),
			a.p.text("doctor.fix.path"),
		}}, ""
	}
	env, err := doctor.GoEnv(ctx, bin, "GOVERSION")
	if err != nil {
		return finding{kind: findingFailed, text: a.p.text("doctor.go.broken", bin, err), fixes: []string{
			a.p.text("doctor.fix.broken"),
		}}, ""
	}
	have := env["GOVERSION"]
	if !doctor.NewEnough(have, want) {
		return finding{kind: findingFailed, text: a.p.text("doctor.go.old", have, bin, want), fixes: []string{
			a.p.text("doctor.fix.install", want),
			a.p.text("doctor.fix.path"),
		}}, ""
	}
	return finding{kind: findingOK, text: a.p.text("doctor.go.ok", have, bin, want)}, bin
}

// checkModuleCache builds the first rebuild chapter's target offline: the smallest practice
// module that needs every module of the course's go.mod.
func (a *app) checkModuleCache(ctx context.Context, b *tree.Builder, goBin string) (finding, error) {
	first, target, err := firstRebuildTarget(b)
	if err != nil {
		return finding{}, err
	}
	if first == nil {
		return finding{kind: findingSkipped, text: a.p.text("doctor.cache.skipped")}, nil
	}
	build, err := doctor.BuildOffline(ctx, goBin, target, b.Course().Requires)
	if err != nil {
		return finding{}, err
	}
	if !build.OK {
		return finding{
			kind:   findingFailed,
			text:   a.p.text("doctor.cache.failed", first.Number, build.Command),
			detail: clipLines(build.Output, 12),
			fixes:  []string{a.p.text("doctor.fix.cache"), a.p.text("doctor.fix.cache.build")},
		}, nil
	}
	cache := "GOMODCACHE"
	if env, err := doctor.GoEnv(ctx, goBin, "GOMODCACHE"); err == nil && env["GOMODCACHE"] != "" {
		cache = env["GOMODCACHE"]
	}
	return finding{kind: findingOK, text: a.p.text("doctor.cache.ok", first.Number, cache)}, nil
}

// firstRebuildTarget returns the first rebuild chapter and its target: the smallest practice
// module that needs every module of the course's go.mod. Both are nil when the course has no
// rebuild chapter.
func firstRebuildTarget(b *tree.Builder) (*manifest.Chapter, tree.Tree, error) {
	for _, ch := range b.Course().Chapters {
		if !ch.Rebuild() {
			continue
		}
		target, err := b.Target(ch)
		if err != nil {
			return nil, nil, fmt.Errorf("building the target of chapter %s: %w", ch.Number, err)
		}
		return ch, target, nil
	}
	return nil, nil, nil
}

// checkEnvironment checks the go settings course test runs with (GOFLAGS, GOPROXY, GOWORK,
// GOTOOLCHAIN, from the environment or go's env file): it names the settings known to break a
// practice directory, and compiles the first rebuild chapter's tests with them. The build is
// skipped when the module cache check failed (it would fail for the same reason).
func (a *app) checkEnvironment(ctx context.Context, b *tree.Builder, goBin string, cacheOK bool) (finding, error) {
	env, err := doctor.GoEnv(ctx, goBin, doctor.Settings...)
	if err != nil {
		return finding{kind: findingFailed, text: a.p.text("doctor.go.broken", goBin, err), fixes: []string{a.p.text("doctor.fix.broken")}}, nil
	}
	env["GOWORK"] = a.getenv("GOWORK") // go env runs outside any module, with GOWORK=off
	var set []string
	for _, name := range doctor.Settings {
		if env[name] != "" {
			set = append(set, name+"="+env[name])
		}
	}
	settings := strings.Join(set, " ")
	if settings == "" {
		settings = a.p.text("doctor.env.default")
	}
	if bad := doctor.SettingProblems(env); len(bad) > 0 {
		f := finding{kind: findingFailed, text: a.p.text("doctor.env.bad", strings.Join(bad, ", "))}
		for _, kv := range bad {
			name, _, _ := strings.Cut(kv, "=")
			f.fixes = append(f.fixes, a.p.text("doctor.fix.env", name))
		}
		return f, nil
	}
	if !cacheOK {
		return finding{kind: findingSkipped, text: a.p.text("doctor.env.skipped")}, nil
	}
	first, target, err := firstRebuildTarget(b)
	if err != nil {
		return finding{}, err
	}
	if first == nil {
		return finding{kind: findingSkipped, text: a.p.text("doctor.env.skipped")}, nil
	}
	build, err := doctor.BuildAsCourseTest(ctx, goBin, target)
	if err != nil {
		return finding{}, err
	}
	if !build.OK {
		return finding{
			kind:   findingFailed,
			text:   a.p.text("doctor.env.failed", settings, build.Command),
			detail: clipLines(build.Output, 12),
		}, nil
	}
	return finding{kind: findingOK, text: a.p.text("doctor.env.ok", settings)}, nil
}

// checkGit looks for git, which only `git diff` in the practice directory needs.
func (a *app) checkGit() finding {
	bin, err := a.lookPath("git")
	if err != nil {
		return finding{kind: findingWarning, text: a.p.text("doctor.git.missing"), fixes: []string{a.p.text("doctor.fix.git")}}
	}
	return finding{kind: findingOK, text: a.p.text("doctor.git.ok", bin)}
}

// checkTerminal says how the output looks and which language was picked, and why.
func (a *app) checkTerminal(langFlag string) []finding {
	var out []finding
	switch {
	case !isTerminal(a.stdout):
		out = append(out, finding{kind: findingInfo, text: a.p.text("doctor.term.notty")})
	case a.getenv("NO_COLOR") != "":
		out = append(out, finding{kind: findingInfo, text: a.p.text("doctor.term.nocolor")})
	default:
		out = append(out, finding{kind: findingInfo, text: a.p.text("doctor.term.tty")})
	}
	if isTerminal(a.stdout) && a.getenv("TERM") == "dumb" {
		out = append(out, finding{kind: findingInfo, text: a.p.text("doctor.term.dumb")})
	}
	if langFlag == "" && a.langDir != "" {
		return append(out, finding{kind: findingInfo, text: a.p.text("doctor.lang.dir", a.langDir)})
	}
	source, variable := langSource(langFlag, a.getenv)
	if source == "" {
		return append(out, finding{kind: findingInfo, text: a.p.text("doctor.lang.default")})
	}
	return append(out, finding{kind: findingInfo, text: a.p.text("doctor.lang.from", source, variable)})
}

// langSource says what decided the language, the way detectLang decides it: "--lang en", or the
// first set locale variable as NAME=value. variable is the locale variable to change to switch
// languages (LANG when none is set or --lang decided). source is "" when nothing decided.
func langSource(flag string, getenv func(string) string) (source, variable string) {
	for _, name := range localeVars {
		if v := getenv(name); v != "" {
			source, variable = name+"="+v, name
			break
		}
	}
	if variable == "" {
		variable = "LANG"
	}
	if flag != "" {
		source = "--lang " + flag
	}
	return source, variable
}

// printFindings prints one line per finding with its mark, its detail and fixes indented under it,
// and returns how many required checks failed.
func (a *app) printFindings(findings []finding) int {
	failed := 0
	for _, f := range findings {
		if f.kind == findingFailed {
			failed++
		}
		fmt.Fprintln(a.stdout, a.findingMark(f.kind)+" "+f.text)
		if f.detail != "" {
			for _, line := range strings.Split(f.detail, "\n") {
				fmt.Fprintln(a.stdout, "      "+line)
			}
		}
		arrow := "->"
		if a.color {
			arrow = "→"
		}
		for _, fix := range f.fixes {
			fmt.Fprintln(a.stdout, "    "+arrow+" "+fix)
		}
	}
	return failed
}

// findingMark is a coloured symbol on a terminal and a fixed-width ASCII word otherwise.
func (a *app) findingMark(k findingKind) string {
	if a.color {
		switch k {
		case findingOK:
			return "\x1b[32m✓\x1b[0m"
		case findingFailed:
			return "\x1b[31m✗\x1b[0m"
		case findingWarning:
			return "\x1b[33m!\x1b[0m"
		case findingSkipped:
			return "-"
		default:
			return "·"
		}
	}
	switch k {
	case findingOK:
		return "[ok]  "
	case findingFailed:
		return "[FAIL]"
	case findingWarning:
		return "[warn]"
	case findingSkipped:
		return "[skip]"
	default:
		return "[info]"
	}
}

// clipLines keeps the first n lines of s.
func clipLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}
