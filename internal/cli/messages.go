package cli

import (
	"fmt"
	"strings"

	"github.com/learn-tinypi/course/internal/i18n"
)

// Languages the CLI speaks. Chinese is the default; English is chosen with --lang en or an
// English locale.
const (
	langZH = i18n.ZH
	langEN = i18n.EN
)

// catalog holds every user-facing text of the CLI, keyed by message id: the messages below and
// those each command file declares next to its code. Assembling them here, once, lets a translator
// find every part, and lets the tests check the whole catalog (i18n.Problems) and that no id is
// defined twice (i18n.MustMerge panics when the package starts).
var catalog = i18n.MustMerge(
	baseMessages,
	devSignaturesMessages,
	diagnoseMessages,
	doctorMessages,
	fromMessages,
	heldoutMessages,
	knownMistakeMessages,
	nextMessages,
	placeMessages,
	practiceDirMessages,
	readMessages,
	resetMessages,
	serveMessages,
	solutionMessages,
	statusMessages,
	testMessages,
	labReportMessages,
	labRunMessages,
	labMarkerMessages,
	hintMessages,
	labProgressMessages,
	timeoutMessages,
	transcriptMessages,
	watchMessages,
)

// baseMessages are the texts of the root command, its help, the errors every command shares and
// the commands without a catalog part of their own.
var baseMessages = i18n.Catalog{
	// Root command and help.
	"root.short": {ZH: "tinypi 课程工具：检查点、练习目录与聚焦测试", EN: "the tinypi course kit: checkpoints, practice directories and focused tests"},
	"root.long": {
		ZH: "course 带你一章一章地用 Go 构建 tinypi（一个调用工具的 LLM agent 运行时）。\n\n" +
			"每一章是一个检查点：parent 是上一章完成后的代码，target 是本章完成后的代码。\n" +
			"练习目录从 parent 出发，本章的 Lab 被替换成桩（stub），聚焦测试告诉你下一步做什么。\n\n" +
			"退出码：0 成功；1 测试失败或检查未通过；2 用法错误（未知章节、参数不对、不在练习目录中）。\n" +
			"语言：--lang zh|en；不指定时，LC_ALL/LC_MESSAGES/LANG 以 en 开头则用英文，否则用中文。",
		EN: "course guides you, chapter by chapter, through building tinypi (an LLM tool-calling agent runtime) in Go.\n\n" +
			"Every chapter is a checkpoint: its parent is the code after the previous chapter, its target the code after this one.\n" +
			"A practice directory starts from the parent with this chapter's labs replaced by stubs; focused tests tell you what to do next.\n\n" +
			"Exit codes: 0 success; 1 tests or checks failed; 2 usage error (unknown chapter, wrong arguments, not in a practice directory).\n" +
			"Language: --lang zh|en; without it, English when LC_ALL/LC_MESSAGES/LANG starts with \"en\", Chinese otherwise.",
	},
	"root.example":   {ZH: "  course list\n  course practice 07 ../tinypi-07", EN: "  course list\n  course practice 07 ../tinypi-07"},
	"flag.lang":      {ZH: "输出语言：zh 或 en", EN: "output language: zh or en"},
	"flag.help":      {ZH: "显示帮助", EN: "show help"},
	"help.usage":     {ZH: "用法：", EN: "Usage:"},
	"help.aliases":   {ZH: "别名：", EN: "Aliases:"},
	"help.examples":  {ZH: "示例：", EN: "Examples:"},
	"help.commands":  {ZH: "可用命令：", EN: "Available Commands:"},
	"help.flags":     {ZH: "参数：", EN: "Flags:"},
	"help.global":    {ZH: "全局参数：", EN: "Global Flags:"},
	"help.more":      {ZH: "运行 \"%s [命令] --help\" 查看命令的详细说明。", EN: "Use \"%s [command] --help\" for more information about a command."},
	"help.cmd.short": {ZH: "显示任一命令的帮助", EN: "show help for any command"},
	"help.cmd.long": {
		ZH: "course help 命令 显示这个命令的说明、用法、示例和参数；不带命令时显示所有命令。也可以写成 course 命令 --help。",
		EN: "course help COMMAND shows that command's explanation, usage, examples and flags; without a command it lists every command. course COMMAND --help does the same.",
	},
	"help.cmd.example": {ZH: "  course help\n  course help test\n  course help dev check", EN: "  course help\n  course help test\n  course help dev check"},

	// Errors shared by all commands.
	"err.prefix":        {ZH: "错误：%v", EN: "error: %v"},
	"err.usage.hint":    {ZH: "运行 %s --help 查看用法。", EN: "Run %s --help for usage."},
	"err.lang":          {ZH: "不支持的语言 %q：请用 zh 或 en", EN: "unsupported language %q: use zh or en"},
	"err.unknown.cmd":   {ZH: "未知命令 %q（%s）。可用命令：%s", EN: "unknown command %q (%s). Available commands: %s"},
	"err.args":          {ZH: "参数个数不对（收到 %[2]d 个）。用法：%[1]s", EN: "wrong number of arguments (got %[2]d). Usage: %[1]s"},
	"err.unknown.ch":    {ZH: "没有第 %s 章。可用的章节：", EN: "there is no chapter %s. Valid chapters:"},
	"err.empty.ch":      {ZH: "章节编号是空的：请写出一个章节编号，例如 07。可用的章节：", EN: "the chapter number is empty: give one, for example 07. Valid chapters:"},
	"err.no.go":         {ZH: "找不到 go 命令。请安装 Go %s 或更新版本（https://go.dev/dl/），并确认 go 在 PATH 中：go version；course doctor 会逐项检查并给出修复命令。", EN: "the go command was not found. Install Go %s or newer (https://go.dev/dl/) and make sure go is on your PATH: go version; course doctor checks everything and gives the fixes."},
	"err.content":       {ZH: "课程内容无法加载：%v", EN: "the course content cannot be loaded: %v"},
	"err.nonempty":      {ZH: "目录 %s 已存在且不为空；为了不覆盖你的文件，什么也没写。换一个新目录：\n  %s", EN: "directory %s exists and is not empty; nothing was written so that none of your files is overwritten. Use a new directory:\n  %s"},
	"err.notdir":        {ZH: "%s 是一个文件，不是目录；什么也没写。换一个新目录：\n  %s", EN: "%s is a file, not a directory; nothing was written. Use a new directory:\n  %s"},
	"err.not.practice":  {ZH: "%s 不在练习目录中（找不到 .course/practice.json）。\n先创建一个练习目录：\n  course practice 07 ./mydir\n  cd ./mydir && course test", EN: "%s is not inside a practice directory (no .course/practice.json found).\nCreate one first:\n  course practice 07 ./mydir\n  cd ./mydir && course test"},
	"err.unknown.lab":   {ZH: "第 %s 章没有 Lab %q。可用的 Lab：", EN: "chapter %s has no lab %q. Valid labs:"},
	"err.checkout.kind": {ZH: "--checkout 只接受 parent 或 target，收到 %q", EN: "--checkout takes parent or target, got %q"},
	"err.checkout.dir":  {ZH: "--checkout %s 需要一个目标目录：course checkpoint %s --checkout %s DIR", EN: "--checkout %s needs a directory: course checkpoint %s --checkout %s DIR"},
	"err.dir.noflag":    {ZH: "多出的参数 %q：要写出代码树，加上 --checkout target（或 parent）：\n  %s", EN: "unexpected argument %q: to write a tree, add --checkout target (or parent):\n  %s"},

	// course list
	"list.short":   {ZH: "列出所有章节", EN: "list every chapter"},
	"list.long":    {ZH: "列出课程的每一章：编号、标题、模式（rebuild 重建 / observe 观察）、Lab 数和聚焦测试数。", EN: "List every chapter of the course: number, title, mode (rebuild / observe), number of labs and of focused tests."},
	"list.example": {ZH: "  course list\n  course list --lang en", EN: "  course list\n  course list --lang en"},
	"list.header":  {ZH: "章节\t标题\t模式\tLab\t测试", EN: "chapter\ttitle\tmode\tlabs\ttests"},

	"mode.rebuild": {ZH: "重建", EN: "rebuild"},
	"mode.observe": {ZH: "观察", EN: "observe"},

	// course checkpoint
	"checkpoint.short": {ZH: "查看一章的检查点：parent、target、Lab 与命令", EN: "show a chapter's checkpoint: parent, target, labs and commands"},
	"checkpoint.long": {
		ZH: "显示第 NN 章的检查点：标题、模式、parent 与 target 的提交哈希、教学文件、聚焦测试文件，\n" +
			"以及每个 Lab 的编号、标题和运行它的准确命令。\n\n" +
			"提交哈希来自课程历史：每章一个提交，内容相同则哈希在任何机器上都相同。\n" +
			"--checkout parent|target DIR 把该代码树写到一个新的（或空的）目录 DIR。",
		EN: "Show chapter NN's checkpoint: title, mode, the parent and target commit hashes, teaching files, the focused test file,\n" +
			"and each lab's id, title and the exact command that runs it.\n\n" +
			"The hashes come from the course history: one commit per chapter; the same content gives the same hashes on every machine.\n" +
			"--checkout parent|target DIR writes that tree into a new (or empty) directory DIR.",
	},
	"checkpoint.example": {
		ZH: "  course checkpoint 07\n  course checkpoint 07 --checkout target ../tinypi-07-target",
		EN: "  course checkpoint 07\n  course checkpoint 07 --checkout target ../tinypi-07-target",
	},
	"checkpoint.flag.checkout": {ZH: "把 parent 或 target 代码树写到 DIR", EN: "write the parent or target tree into DIR"},
	"checkpoint.title":         {ZH: "检查点 %s · %s", EN: "Checkpoint %s · %s"},
	"checkpoint.mode":          {ZH: "模式：      %s", EN: "mode:       %s"},
	"checkpoint.parent":        {ZH: "parent：    %s", EN: "parent:     %s"},
	"checkpoint.parent.none":   {ZH: "（空模块：这是第一章）", EN: "(an empty module: this is the first chapter)"},
	"checkpoint.target":        {ZH: "target：    %s", EN: "target:     %s"},
	"checkpoint.files":         {ZH: "教学文件：  %s", EN: "teaching:   %s"},
	"checkpoint.extends":       {ZH: "扩展文件：  %s（前面章节的文件，本章在其中加入代码）", EN: "extends:    %s (earlier chapters' files this chapter adds code to)"},
	"checkpoint.testfile":      {ZH: "聚焦测试：  %s（%d 项）", EN: "tests:      %s (%d)"},
	"checkpoint.labs":          {ZH: "Lab：", EN: "Labs:"},
	"checkpoint.practice":      {ZH: "练习目录：  %s", EN: "practice:   %s"},
	"checkpoint.written":       {ZH: "已把 %s 代码树（提交 %s）写到 %s，共 %d 个文件。", EN: "wrote the %s tree (commit %s) into %s: %d files."},
	"checkpoint.written.next":  {ZH: "验证：cd %s && go build ./...", EN: "check it: cd %s && go build ./..."},

	// course practice
	"practice.short": {ZH: "创建一章的练习目录", EN: "create a practice directory for a chapter"},
	"practice.long": {
		ZH: "在 DIR 创建第 NN 章的练习目录：从 parent 出发，本章的 Lab 是桩，附带 Lab 卡片、LEARNING.md\n" +
			"和一个只有一个提交的 git 仓库（用 git diff 看你写了什么）。DIR 必须不存在或为空；出错时什么也不留下。",
		EN: "Create chapter NN's practice directory in DIR: it starts from the parent, this chapter's labs are stubs, and it comes\n" +
			"with lab cards, LEARNING.md and a git repository with one commit (git diff shows your work). DIR must not exist or be empty;\n" +
			"on error nothing is left behind.",
	},
	"practice.example": {ZH: "  course practice 07 ../tinypi-07\n  cd ../tinypi-07 && go test -run '^TestLab7_1_' .", EN: "  course practice 07 ../tinypi-07\n  cd ../tinypi-07 && go test -run '^TestLab7_1_' ."},
	"practice.created": {ZH: "已创建第 %s 章的练习目录：%s", EN: "created the practice directory for chapter %s: %s"},
	"practice.read":    {ZH: "先读：", EN: "read first:"},
	"practice.red":     {ZH: "第一次红灯（应当失败，并显示 %q%s）：", EN: "first red light (it should fail with %q%s):"},
	"practice.observe": {ZH: "这一章是观察模式，不写代码：运行本章的程序，再运行测试（应当全部通过）：", EN: "this chapter is for observing, with no code to write: run its program, then its tests (they pass from the start):"},
	"practice.install": {
		ZH: "course 命令还没有安装（不在 PATH 中）。在课程工具仓库的根目录安装一次，下面的 course 命令才能用：\n  %s",
		EN: "the course command is not installed yet (it is not on PATH). Install it once, in the kit's root, so that the course commands below work:\n  %s",
	},
	"practice.building": {
		ZH: "第一次构建：Go 的构建缓存里还没有标准库和课程依赖的 %d 个包。现在编译一次，让之后的 go test 几秒就开始（新机器上大约要一到两分钟，只有这一次）……",
		EN: "first build: Go's build cache does not hold %d packages of the standard library and the course's dependencies yet. Compiling them once now, so that go test starts in seconds afterwards (a minute or two on a new machine, this once)...",
	},
	"practice.built":        {ZH: "构建完成（%s）。", EN: "built (%s)."},
	"practice.build.failed": {ZH: "第一次构建没有成功（练习目录已经建好）：%v。course doctor 会查出原因。", EN: "the first build failed (the practice directory is made): %v. course doctor finds out why."},
	"practice.then":         {ZH: "之后，查看所有 Lab 的进度和下一步：\n  %s", EN: "then, to see every lab's progress and what to do next:\n  %s"},

	// course test

	// course dev
	"dev.short": {ZH: "课程作者的工具", EN: "tools for course authors"},
	"dev.long":  {ZH: "课程作者的工具。见 docs/authoring.md。", EN: "Tools for course authors. See docs/authoring.md."},
	"dev.example": {
		ZH: "  course dev check\n  course dev check 07",
		EN: "  course dev check\n  course dev check 07",
	},
	"devcheck.short": {ZH: "证明课程内容满足 docs/authoring.md 的约定", EN: "prove the course content keeps the docs/authoring.md contract"},
	"devcheck.long": {
		ZH: "对每一章（或指定的章节）证明：target 通过 vet 和 -race 聚焦测试；每个测试恰好匹配一个 Lab 模式；\n" +
			"starter 能构建且 Lab 1 先以自己的消息失败；渐进顺序成立；每个 mutant 被它的 Lab 抓住；\n" +
			"卡片与章节正文齐全；已知错误的失败签名（checkpoints/signatures/NN.json）没有过期，且每个 mutant\n" +
			"自己的失败恰好指出它自己的说明；每个聚焦测试在 target 上用 -race 连续运行多次（--flake-runs）从不失败；\n" +
			"每个渐进阶段的 go test ./... 只出现 Lab 的未实现消息。所有 go 命令离线运行。任一检查失败时退出码为 1。\n\n" +
			"全部检查通过的章节，其证明按它依赖的一切（参考代码、测试、清单、卡片、签名、工具包代码、Go 版本与环境、--flake-runs）\n" +
			"的哈希存入缓存（$COURSE_DEVCHECK_CACHE，默认在用户缓存目录的 tinypi-course/devcheck 下）；这些都没变时，\n" +
			"该章的检查直接取自缓存，行尾标 (cached)。--force 重新证明每一章。",
		EN: "Prove for every chapter (or the ones named): the target passes vet and the focused tests with -race; every test matches\n" +
			"exactly one lab pattern; the starter builds and lab 1 fails first with its own message; progressive order holds; every\n" +
			"mutant is caught by its lab; cards and chapter texts exist; the known mistakes' failure signatures\n" +
			"(checkpoints/signatures/NN.json) are up to date and each mutant's own failures point to exactly its own explanation;\n" +
			"every focused test passes many -race runs in a row on the target (--flake-runs); at every progressive stage\n" +
			"`go test ./...` shows only the labs' pending messages. Every go command runs offline. Exit code 1 when a check fails.\n\n" +
			"A chapter whose checks all pass has its proof stored in a cache, keyed by a hash of everything it depends on (reference\n" +
			"code, tests, manifests, cards, signatures, the kit's code, the Go version and environment, --flake-runs); while none of\n" +
			"it changes, the chapter's checks are taken from the cache and marked (cached). The cache is $COURSE_DEVCHECK_CACHE,\n" +
			"by default tinypi-course/devcheck in the user's cache directory. --force proves every chapter again.",
	},
	"devcheck.example":       {ZH: "  course dev check\n  course dev check 07", EN: "  course dev check\n  course dev check 07"},
	"devcheck.flag.parallel": {ZH: "同时运行的 go 命令数（0 表示默认）", EN: "go commands run at once (0 means the default)"},
	"devcheck.flag.flakeruns": {ZH: "每章聚焦测试在 target 上用 -race 重复运行的次数（0 表示默认 %d）",
		EN: "how many -race runs of each chapter's focused tests on its target prove there is no flaky test (0 means the default, %d)"},
	"devcheck.flag.force": {ZH: "重新证明每一章，不取缓存中的证明（CI 这样运行）",
		EN: "prove every chapter again instead of taking proofs from the cache (CI runs this way)"},
	"devcheck.chapter.proven": {ZH: "第 %s 章：本次证明，%d 项检查全部通过。", EN: "chapter %s: proven now, all %d checks passed."},
	"devcheck.chapter.stored": {ZH: "第 %s 章：本次证明，%d 项检查全部通过，证明已存入缓存。",
		EN: "chapter %s: proven now, all %d checks passed; the proof is stored in the cache."},
	"devcheck.chapter.failed": {ZH: "第 %s 章：本次证明，%d 项检查失败（共 %d 项），证明不存入缓存。",
		EN: "chapter %s: proven now, %d of %d checks failed; nothing is stored in the cache."},
	"devcheck.chapter.cached": {ZH: "第 %s 章：%d 项检查取自缓存 (cached)，证明于 %s，此后输入没有变化。",
		EN: "chapter %s: %d checks taken from the cache (cached), proven %s with the same inputs."},
	"devcheck.cache.off":     {ZH: "警告：不使用证明缓存：%v", EN: "warning: the proof cache is not used: %v"},
	"devcheck.cache.chapter": {ZH: "警告：第 %s 章没有用上证明缓存：%v", EN: "warning: chapter %s: the proof cache could not be used: %v"},
	"devcheck.ok":            {ZH: "dev check：全部检查通过。", EN: "dev check: every check passed."},
	"devcheck.failed":        {ZH: "dev check：%d 项检查失败。", EN: "dev check: %d checks failed."},
}

// printer renders catalog messages in one language.
type printer struct {
	lang string
}

// text returns the message id in the printer's language, formatted with args. An id missing
// from the catalog is a programming error; it shows up as "!id" so that the output still says
// something.
func (p printer) text(id string, args ...any) string {
	return catalog.Text(p.lang, id, args...)
}

// detectLang picks the language: the --lang value when given, else English when the first
// set one of LC_ALL, LC_MESSAGES and LANG starts with "en", else Chinese.
func detectLang(flag string, getenv func(string) string) (string, error) {
	switch strings.ToLower(flag) {
	case "":
	case langZH, "zh-cn", "zh_cn", "cn":
		return langZH, nil
	case langEN:
		return langEN, nil
	default:
		return langZH, fmt.Errorf("%w: %q", errBadLang, flag)
	}
	for _, name := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := getenv(name); v != "" {
			if strings.HasPrefix(strings.ToLower(v), "en") {
				return langEN, nil
			}
			return langZH, nil
		}
	}
	return langZH, nil
}

// langFromArgs finds the value of --lang in args before cobra parses them, because the help
// texts of every command are built in the chosen language.
func langFromArgs(args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--lang="); ok {
			return v
		}
		if a == "--lang" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}
