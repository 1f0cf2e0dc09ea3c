package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/serve"
	"github.com/learn-tinypi/course/internal/sessionlog"
)

// serveMessages are the texts of `course serve`.
var serveMessages = i18n.Catalog{
	"serve.short": {ZH: "在浏览器中逐阶段查看一次会话日志中的工具调用往返", EN: "follow a tool call's round trip through a session log, stage by stage, in the browser"},
	"serve.long": {
		ZH: "course serve 在本机启动一个网页，展示一份会话日志（JSONL）：选一个工具调用，分六个阶段观察它\n" +
			"（模型给出调用、登记、运行、提交结果、派生消息、冻结请求），有消息历史、事件载荷、执行职责三个视角。\n\n" +
			"不带 LOG 时，打开当前练习目录 sessions/ 下最新的 .jsonl。--reference REF 把参考运行的日志放在旁边，\n" +
			"标出第一处不同。日志有损坏时，网页和终端都会说明问题和修复办法。只监听本机（127.0.0.1），只回答发给这个地址的请求，\n" +
			"拒绝来自其他网站页面的请求；同时最多计算 4 个页面，再多的请求会立即得到 503（稍后刷新即可）；超过 1 MiB 的一行只显示开头。\n" +
			"Ctrl-C 停止。LOG 必须是普通文件（命名管道、设备、目录会被拒绝），大于 --max-size（默认 256MiB）的也会被拒绝。\n\n" +
			"--check 不启动网页：读取日志，打印网页首先会显示的内容（或日志的问题）后退出，能显示时退出码为 0，否则为 1。\n\n" +
			"--follow 跟踪一个还在写的日志（例如 tinypi 启动时打印的 session 文件）：网页上多出“正在运行的会话”一栏，\n" +
			"日志每追加一个事件就更新，每个工具调用的往返走到哪个阶段（给出调用、登记、运行、提交结果、发送）当场可见。",
		EN: "course serve starts a web page on this machine that shows a session log (JSONL): pick a tool call and follow it\n" +
			"through six stages (the model asks, the call is registered, runs, its result is committed, messages are derived,\n" +
			"the request is frozen), in three views: message history, event payloads, responsibilities.\n\n" +
			"Without LOG it opens the newest .jsonl under sessions/ of the practice directory. --reference REF puts a reference\n" +
			"run's log beside it, the first difference marked. A damaged log is explained, with its repair, on the page and in\n" +
			"the terminal. It listens on this machine only (127.0.0.1) and answers only requests addressed to it, and none from\n" +
			"another site's page; it computes at most 4 pages at once (one more gets 503: reload in a moment), and shows a line\n" +
			"longer than 1 MiB by its start. Ctrl-C stops it.\n" +
			"LOG must be a regular file (a named pipe, a device or a directory is refused), and one larger than --max-size (default\n" +
			"256MiB) is refused too.\n\n" +
			"--check starts no page: it reads the log, prints what the page would show first (or what is wrong with the log)\n" +
			"and exits, with code 0 when the page can show the log and 1 when it cannot.\n\n" +
			"--follow follows a log that is still being written (the session file tinypi prints when it starts, for example):\n" +
			"the page gets a panel of the running session that updates as each event is appended, each tool call's round\n" +
			"trip appearing as it happens (asked, registered, runs, result committed, sent).",
	},
	"serve.example": {
		ZH: "  course serve\n  course serve sessions/run.jsonl --reference ref.jsonl\n  course serve run.jsonl --port 0\n  course serve run.jsonl --check\n  course serve --follow .tinypi/session-TIME.jsonl",
		EN: "  course serve\n  course serve sessions/run.jsonl --reference ref.jsonl\n  course serve run.jsonl --port 0\n  course serve run.jsonl --check\n  course serve --follow .tinypi/session-TIME.jsonl",
	},
	"serve.flag.addr":      {ZH: "监听地址（默认只监听本机）", EN: "address to listen on (default: this machine only)"},
	"serve.flag.port":      {ZH: "端口；0 表示任选一个空闲端口", EN: "port; 0 picks any free port"},
	"serve.flag.reference": {ZH: "参考运行的会话日志，与 LOG 对比", EN: "a reference run's session log to compare LOG with"},
	"serve.flag.remote":    {ZH: "允许监听非本机地址（网络上能连到这台机器、拿到带令牌地址的人都能读这个日志）", EN: "allow an address other than this machine's (anyone on the network who can reach it and has the address with its token can read the log)"},
	"serve.flag.maxsize":   {ZH: "读取的日志最大多大（例如 256MiB、1GiB；0 表示不限）", EN: "the largest log read (for example 256MiB, 1GiB; 0 for no limit)"},
	"serve.flag.dir":       {ZH: "不带 LOG 时在哪个练习目录下找 sessions/（默认当前目录）", EN: "the practice directory whose sessions/ is searched without LOG (default: the current directory)"},
	"serve.remote":         {ZH: "%s 不是本机地址：网页会被网络上的其他机器看到。确实需要时加上 --allow-remote。", EN: "%s is not a loopback address: other machines on the network could see the page. Add --allow-remote if you mean it."},
	"serve.missing":        {ZH: "没有这个日志文件：%s。检查路径；不带参数的 course serve 会用 sessions/ 下最新的日志", EN: "no such log file: %s. Check the path; course serve without one takes the newest log under sessions/"},
	"serve.unreadable":     {ZH: "无法读取 %s：%s。检查路径和文件的权限", EN: "%s cannot be read: %s. Check the path and the file's permissions"},
	"serve.nolog":          {ZH: "%s 下没有会话日志（*.jsonl）。给出日志路径：course serve LOG", EN: "no session log (*.jsonl) under %s. Name a log: course serve LOG"},
	"serve.url":            {ZH: "在浏览器中打开：%s （Ctrl-C 停止）", EN: "open in a browser: %s (Ctrl-C stops)"},
	"serve.port":           {ZH: "--port %d 不是端口号：端口在 0 到 65535 之间（0 表示任选一个空闲端口）", EN: "--port %d is not a port: ports are 0 to 65535 (0 picks any free port)"},
	"serve.addr.port":      {ZH: "--addr %s 里带了端口：--addr 只写主机（例如 127.0.0.1 或 ::1），端口用 --port 给出", EN: "--addr %s holds a port: --addr takes the host only (127.0.0.1 or ::1, for example); give the port with --port"},
	"serve.inuse":          {ZH: "端口 %[1]d 已被占用（也许另一个 course serve 还在运行）：停掉它，或换一个端口，例如 course serve --port 0（任选一个空闲端口）", EN: "port %[1]d is already in use (another course serve, perhaps): stop it, or choose another port, for example course serve --port 0 (any free port)"},
	"serve.listen":         {ZH: "无法在 %s 上监听：%v", EN: "cannot listen on %s: %v"},
	"serve.exposed": {
		ZH: "警告：--allow-remote 让 course serve 监听 %[1]s。网络上任何能连到这台机器 %[2]d 端口、并拿到下面带令牌的地址的人，\n都能读到这个日志：提示词、工具输出、文件内容，agent 看到的一切。只在信任的网络上使用，用完按 Ctrl-C 停止。",
		EN: "warning: --allow-remote has course serve listen on %[1]s. Anyone on the network who can reach this machine on port %[2]d\nand has the address below, with its token, can read this log: prompts, tool output, file contents, everything the agent saw.\nUse it on a network you trust only, and stop it with Ctrl-C when done.",
	},
	"serve.log":            {ZH: "日志：%s", EN: "log: %s"},
	"serve.reference":      {ZH: "参考：%s", EN: "reference: %s"},
	"serve.bad":            {ZH: "%s：%s\n  %s\n  修复：%s", EN: "%s: %s\n  %s\n  repair: %s"},
	"serve.bad.page":       {ZH: "网页会显示同样的说明；修复后刷新即可。", EN: "The page shows the same; reload it after the repair."},
	"serve.interrupted":    {ZH: "已中断：日志没有读完，什么也没有显示。", EN: "interrupted: the log was not read to its end; nothing is shown."},
	"serve.stopped":        {ZH: "已停止。", EN: "stopped."},
	"serve.flag.follow":    {ZH: "跟踪还在写的日志：网页随日志增长，实时显示每个工具调用的往返", EN: "follow a log still being written: the page shows each tool call's round trip live as the log grows"},
	"serve.following":      {ZH: "跟踪中：日志每追加一个事件，网页就更新", EN: "following: the page updates as each event is appended to the log"},
	"serve.flag.check":     {ZH: "不启动网页：检查日志，打印网页首先显示的内容后退出（能显示时退出码 0，否则 1）", EN: "start no page: check the log, print what the page shows first and exit (0 when it can be shown, 1 when not)"},
	"serve.refused":        {ZH: "%s：%s\n  %s\n  %s", EN: "%s: %s\n  %s\n  %s"},
	"serve.check.torn":     {ZH: "注意：%s\n  显示的是它之前完好的 %d 个事件，与 LoadSession 保留的相同。\n  修复：%s", EN: "note: %s\n  shown: the %d intact events before it, as LoadSession keeps them.\n  repair: %s"},
	"serve.check.torn.one": {ZH: "注意：%s\n  显示的是它之前完好的 %d 个事件，与 LoadSession 保留的相同。\n  修复：%s", EN: "note: %s\n  shown: the %d intact event before it, as LoadSession keeps it.\n  repair: %s"},
	"serve.check.events":   {ZH: "事件：%d 个；工具调用：%d 个", EN: "events: %d; tool calls: %d"},
	"serve.check.call":     {ZH: "跟踪 %s %s（seq %d），共 %d 个阶段：", EN: "following %s %s (seq %d) through %d stages:"},
	"serve.check.whole":    {ZH: "没有工具调用：网页显示整个日志。", EN: "no tool call: the page shows the whole log."},
	"serve.check.compare":  {ZH: "与参考运行对比：%s", EN: "compared with the reference run: %s"},
}

// serveCommand is `course serve [LOG] [--reference REF] [--addr A] [--port N] [--check]`.
func (a *app) serveCommand() *cobra.Command {
	var addr, reference, dir string
	var port int
	var remote, check, follow bool
	maxSize := byteSize(sessionlog.DefaultMaxBytes)
	c := &cobra.Command{
		Use:     "serve [LOG] [--reference REF] [--check | --follow]",
		Short:   a.p.text("serve.short"),
		Long:    a.p.text("serve.long"),
		Example: a.p.text("serve.example"),
		Args:    a.argsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if port < 0 || port > 65535 {
				return a.usagef("serve.port", port)
			}
			host, err := a.listenHost(addr)
			if err != nil {
				return err
			}
			if !remote && !serve.IsLoopback(host) {
				return a.usagef("serve.remote", visible(addr))
			}
			log, err := a.serveLog(args, dir)
			if err != nil {
				return err
			}
			limit := int64(maxSize)
			if limit == 0 {
				limit = -1 // --max-size 0: no limit
			}
			opts := serve.Options{Log: log, Reference: reference, Lang: a.p.lang, MaxBytes: limit, Follow: follow}
			// A path that is not there is a typo, and one that is no regular file or too large
			// is no log to show: refuse them before anything listens.
			paths := []string{log}
			if reference != "" {
				paths = append(paths, reference)
			}
			for _, path := range paths {
				if err := a.checkLogPath(path, limit); err != nil {
					return err
				}
			}
			if check {
				return a.checkServe(c.Context(), opts)
			}
			return a.serveLogs(c.Context(), opts, host, port, remote && !serve.IsLoopback(host))
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1", a.p.text("serve.flag.addr"))
	c.Flags().IntVar(&port, "port", 7410, a.p.text("serve.flag.port"))
	c.Flags().StringVar(&reference, "reference", "", a.p.text("serve.flag.reference"))
	c.Flags().BoolVar(&remote, "allow-remote", false, a.p.text("serve.flag.remote"))
	c.Flags().StringVar(&dir, "dir", ".", a.p.text("serve.flag.dir"))
	c.Flags().BoolVar(&check, "check", false, a.p.text("serve.flag.check"))
	c.Flags().BoolVar(&follow, "follow", false, a.p.text("serve.flag.follow"))
	c.Flags().Var(&maxSize, "max-size", a.p.text("serve.flag.maxsize"))
	return c
}

// listenHost turns --addr into the host to listen on: an IPv6 address may come in brackets
// ([::1]); a port is refused (it belongs in --port).
func (a *app) listenHost(addr string) (string, error) {
	host := addr
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if net.ParseIP(host) == nil {
		if _, _, err := net.SplitHostPort(addr); err == nil || strings.ContainsAny(host, "[]") {
			return "", a.usagef("serve.addr.port", visible(addr))
		}
	}
	return host, nil
}

// serveLog is the log course serve shows: LOG, or the newest log of the practice directory.
func (a *app) serveLog(args []string, dir string) (string, error) {
	if len(args) == 1 {
		return args[0], nil
	}
	root := dir
	if r, _, err := practice.Find(dir); err == nil {
		root = r
	}
	newest, err := serve.NewestLog(root)
	if errors.Is(err, serve.ErrNoLog) {
		return "", a.usagef("serve.nolog", visible(filepath.Join(root, serve.SessionsDir)))
	}
	return newest, err
}

// checkLogPath refuses, as bad input, a log path that does not exist, is not a regular file or
// is larger than limit (negative: none).
func (a *app) checkLogPath(path string, limit int64) error {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return a.usagef("serve.missing", visible(path))
	case err != nil:
		return a.usagef("serve.unreadable", visible(path), visible(err.Error()))
	}
	var refused *sessionlog.Error
	switch {
	case !info.Mode().IsRegular():
		refused = &sessionlog.Error{Kind: sessionlog.KindNotRegular, Path: path, Mode: info.Mode()}
	case limit >= 0 && info.Size() > limit:
		refused = &sessionlog.Error{Kind: sessionlog.KindTooLarge, Path: path, Size: info.Size(), Limit: limit}
	default:
		// Find out now whether it can be read; non-blocking, in case a FIFO took its place
		// since the Stat.
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return a.usagef("serve.unreadable", visible(path), visible(err.Error()))
		}
		f.Close()
		return nil
	}
	what, repair := refused.Explain(a.p.lang)
	return &usageError{msg: a.p.text("serve.refused", visible(path), sessionlog.Title(a.p.lang), visible(what), visible(repair))}
}

// serveLogs listens, says where, reads the logs (saying in the terminal what the page will say
// about a log it cannot show) and serves the page until ctx ends. exposed is a listener other
// machines can reach: it warns, and every request must carry a random token.
func (a *app) serveLogs(ctx context.Context, opts serve.Options, host string, port int, exposed bool) error {
	h, err := serve.NewHandler(opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if errors.Is(err, syscall.EADDRINUSE) {
		return errors.New(a.p.text("serve.inuse", port))
	}
	if err != nil {
		return errors.New(a.p.text("serve.listen", net.JoinHostPort(host, strconv.Itoa(port)), err))
	}
	var token string
	// The address as it was asked for (0.0.0.0 rather than the listener's [::]), with the port
	// the listener has (--port 0 picks one).
	bound := net.JoinHostPort(host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	url := "http://" + bound + "/"
	if exposed {
		token, err = newToken()
		if err != nil {
			ln.Close()
			return err
		}
		url += "?token=" + token
		fmt.Fprintln(a.stderr, a.p.text("serve.exposed", bound, ln.Addr().(*net.TCPAddr).Port))
	}
	fmt.Fprintln(a.stdout, a.p.text("serve.log", visible(opts.Log)))
	if opts.Reference != "" {
		fmt.Fprintln(a.stdout, a.p.text("serve.reference", visible(opts.Reference)))
	}
	if opts.Follow {
		fmt.Fprintln(a.stdout, a.p.text("serve.following"))
	}
	fmt.Fprintln(a.stdout, a.p.text("serve.url", url))
	served := make(chan error, 1)
	go func() { served <- serve.Serve(ctx, ln, h, serve.ServeOptions{Host: host, Token: token}) }()
	// Read the logs now that the page is there, to say in the terminal what the page will say.
	if problems, err := h.Preload(ctx); err == nil {
		for _, p := range problems {
			a.printProblem(p)
			fmt.Fprintln(a.stderr, a.p.text("serve.bad.page"))
		}
	}
	if err := <-served; err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, a.p.text("serve.stopped"))
	return nil
}

// newToken returns 128 random bits, hex.
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("course serve: a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// printProblem says in the terminal what the page says about a log it cannot show.
func (a *app) printProblem(p *serve.Problem) {
	where := visible(p.File)
	if p.Line > 0 {
		where += ":" + strconv.Itoa(p.Line)
	}
	fmt.Fprintln(a.stderr, a.p.text("serve.bad", where, p.Title, visible(p.What), visible(p.Repair)))
}

// checkServe is --check: it builds the page's view once and prints its first screen in short
// (the log, the call it follows and the titles of its stages, the comparison's verdict), or
// what is wrong with a log and a failure. Everything taken from the log is printed with its
// control characters escaped: a log must not drive the terminal.
func (a *app) checkServe(ctx context.Context, opts serve.Options) error {
	v, p, err := serve.Load(ctx, opts, -1)
	if errors.Is(err, context.Canceled) {
		// Ctrl-C or SIGTERM in the middle of the read: it stopped there.
		fmt.Fprintln(a.stderr, a.p.text("serve.interrupted"))
		return errSilentFailure
	}
	if err != nil {
		return err
	}
	if p != nil {
		a.printProblem(p)
		return errSilentFailure
	}
	fmt.Fprintln(a.stdout, a.p.text("serve.log", visible(opts.Log)))
	if opts.Reference != "" {
		fmt.Fprintln(a.stdout, a.p.text("serve.reference", visible(opts.Reference)))
	}
	if v.Notice != nil {
		id := "serve.check.torn"
		if v.EventCount == 1 {
			id = "serve.check.torn.one"
		}
		fmt.Fprintln(a.stderr, a.p.text(id, visible(v.Notice.What), v.EventCount, visible(v.Notice.Repair)))
	}
	fmt.Fprintln(a.stdout, a.p.text("serve.check.events", v.EventCount, v.CallCount))
	if v.Call == nil {
		fmt.Fprintln(a.stdout, a.p.text("serve.check.whole"))
	} else {
		fmt.Fprintln(a.stdout, a.p.text("serve.check.call", visible(v.Call.Name), visible(v.Call.CallID), v.Call.Seq, len(v.Stages)))
		for _, st := range v.Stages {
			line := fmt.Sprintf("  %d %s", st.N, st.Title)
			if st.Missing {
				line += " · " + v.Texts["missing"]
			}
			fmt.Fprintln(a.stdout, line)
		}
	}
	if v.Compare != nil {
		fmt.Fprintln(a.stdout, a.p.text("serve.check.compare", v.Compare.Summary))
	}
	return nil
}

// visible returns s with everything that could drive a terminal written as an escape: control
// characters (ESC, BEL, newlines, ...), C1 controls, the marks that reorder text (U+202E, ...)
// and bytes that are not UTF-8.
func visible(s string) string {
	safe := true
	for _, r := range s {
		if r == utf8.RuneError || invisible(r) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && invisible(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case invisible(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// invisible reports whether r would act on a terminal instead of being shown.
func invisible(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// byteSize is a flag of a number of bytes, written with an optional unit: 1048576, 512KiB,
// 256MiB, 1GiB (KB, MB, GB and K, M, G are read as the binary units too).
type byteSize int64

func (s *byteSize) String() string {
	if *s == 0 {
		return "0"
	}
	return strings.ReplaceAll(sessionlog.FormatBytes(int64(*s)), " ", "")
}

func (s *byteSize) Type() string { return "size" }

func (s *byteSize) Set(text string) error {
	t := strings.TrimSpace(text)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') && t[i-1] != '.' {
		i--
	}
	units := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}
	unit, ok := units[strings.ToLower(strings.TrimSpace(t[i:]))]
	n, err := strconv.ParseFloat(t[:i], 64)
	if !ok || err != nil || n < 0 || n*unit > 1<<62 {
		return fmt.Errorf("%q is not a size: write a number of bytes with an optional unit, such as 256MiB or 1GiB (0 for no limit)", text)
	}
	*s = byteSize(n * unit)
	return nil
}
