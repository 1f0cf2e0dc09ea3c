package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"

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
			"标出第一处不同。日志有损坏时，网页和终端都会说明问题和修复办法。只监听本机（127.0.0.1），Ctrl-C 停止。\n\n" +
			"--check 不启动网页：读取日志，打印网页首先会显示的内容（或日志的问题）后退出，能显示时退出码为 0，否则为 1。",
		EN: "course serve starts a web page on this machine that shows a session log (JSONL): pick a tool call and follow it\n" +
			"through six stages (the model asks, the call is registered, runs, its result is committed, messages are derived,\n" +
			"the request is frozen), in three views: message history, event payloads, responsibilities.\n\n" +
			"Without LOG it opens the newest .jsonl under sessions/ of the practice directory. --reference REF puts a reference\n" +
			"run's log beside it, the first difference marked. A damaged log is explained, with its repair, on the page and in\n" +
			"the terminal. It listens on this machine only (127.0.0.1); Ctrl-C stops it.\n\n" +
			"--check starts no page: it reads the log, prints what the page would show first (or what is wrong with the log)\n" +
			"and exits, with code 0 when the page can show the log and 1 when it cannot.",
	},
	"serve.example": {
		ZH: "  course serve\n  course serve sessions/run.jsonl --reference ref.jsonl\n  course serve run.jsonl --port 0\n  course serve run.jsonl --check",
		EN: "  course serve\n  course serve sessions/run.jsonl --reference ref.jsonl\n  course serve run.jsonl --port 0\n  course serve run.jsonl --check",
	},
	"serve.flag.addr":      {ZH: "监听地址（默认只监听本机）", EN: "address to listen on (default: this machine only)"},
	"serve.flag.port":      {ZH: "端口；0 表示任选一个空闲端口", EN: "port; 0 picks any free port"},
	"serve.flag.reference": {ZH: "参考运行的会话日志，与 LOG 对比", EN: "a reference run's session log to compare LOG with"},
	"serve.flag.remote":    {ZH: "允许监听非本机地址（网页会被网络上的其他机器看到）", EN: "allow an address other than this machine's (other machines on the network can see the page)"},
	"serve.flag.dir":       {ZH: "不带 LOG 时在哪个练习目录下找 sessions/（默认当前目录）", EN: "the practice directory whose sessions/ is searched without LOG (default: the current directory)"},
	"serve.remote":         {ZH: "%s 不是本机地址：网页会被网络上的其他机器看到。确实需要时加上 --allow-remote。", EN: "%s is not a loopback address: other machines on the network could see the page. Add --allow-remote if you mean it."},
	"serve.missing":        {ZH: "没有这个日志文件：%s。检查路径；不带参数的 course serve 会用 sessions/ 下最新的日志", EN: "no such log file: %s. Check the path; course serve without one takes the newest log under sessions/"},
	"serve.nolog":          {ZH: "%s 下没有会话日志（*.jsonl）。给出日志路径：course serve LOG", EN: "no session log (*.jsonl) under %s. Name a log: course serve LOG"},
	"serve.url":            {ZH: "在浏览器中打开：%s （Ctrl-C 停止）", EN: "open in a browser: %s (Ctrl-C stops)"},
	"serve.log":            {ZH: "日志：%s", EN: "log: %s"},
	"serve.reference":      {ZH: "参考：%s", EN: "reference: %s"},
	"serve.bad":            {ZH: "%s：%s\n  %s\n  修复：%s", EN: "%s: %s\n  %s\n  repair: %s"},
	"serve.bad.page":       {ZH: "网页会显示同样的说明；修复后刷新即可。", EN: "The page shows the same; reload it after the repair."},
	"serve.stopped":        {ZH: "已停止。", EN: "stopped."},
	"serve.flag.check":     {ZH: "不启动网页：检查日志，打印网页首先显示的内容后退出（能显示时退出码 0，否则 1）", EN: "start no page: check the log, print what the page shows first and exit (0 when it can be shown, 1 when not)"},
	"serve.check.events":   {ZH: "事件：%d 个；工具调用：%d 个", EN: "events: %d; tool calls: %d"},
	"serve.check.call":     {ZH: "跟踪 %s %s（seq %d），共 %d 个阶段：", EN: "following %s %s (seq %d) through %d stages:"},
	"serve.check.whole":    {ZH: "没有工具调用：网页显示整个日志。", EN: "no tool call: the page shows the whole log."},
	"serve.check.compare":  {ZH: "与参考运行对比：%s", EN: "compared with the reference run: %s"},
}

// serveCommand is `course serve [LOG] [--reference REF] [--addr A] [--port N]`.
func (a *app) serveCommand() *cobra.Command {
	var addr, reference, dir string
	var port int
	var remote, check bool
	c := &cobra.Command{
		Use:     "serve [LOG] [--reference REF] [--check]",
		Short:   a.p.text("serve.short"),
		Long:    a.p.text("serve.long"),
		Example: a.p.text("serve.example"),
		Args:    a.argsRange(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if !remote && !serve.IsLoopback(addr) {
				return a.usagef("serve.remote", addr)
			}
			var log string
			if len(args) == 1 {
				log = args[0]
			} else {
				root := dir
				if r, _, err := practice.Find(dir); err == nil {
					root = r
				}
				newest, err := serve.NewestLog(root)
				if errors.Is(err, serve.ErrNoLog) {
					return a.usagef("serve.nolog", filepath.Join(root, serve.SessionsDir))
				}
				if err != nil {
					return err
				}
				log = newest
			}
			opts := serve.Options{Log: log, Reference: reference, Lang: a.p.lang}
			// A path that is not there is a typo, not a log the page should explain: refuse it
			// before anything listens.
			paths := []string{log}
			if reference != "" {
				paths = append(paths, reference)
			}
			for _, path := range paths {
				if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
					return a.usagef("serve.missing", path)
				}
			}
			if check {
				return a.checkServe(opts)
			}
			// Read the logs once now, to say in the terminal what the page will say.
			for _, path := range []string{log, reference} {
				if path == "" {
					continue
				}
				if _, err := sessionlog.ReadFile(path); err != nil {
					a.printProblem(serve.Explain(err, path, a.p.lang))
					fmt.Fprintln(a.stderr, a.p.text("serve.bad.page"))
				}
			}
			h, err := serve.NewHandler(opts)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
			if err != nil {
				return fmt.Errorf("course serve: %w", err)
			}
			fmt.Fprintln(a.stdout, a.p.text("serve.log", log))
			if reference != "" {
				fmt.Fprintln(a.stdout, a.p.text("serve.reference", reference))
			}
			fmt.Fprintln(a.stdout, a.p.text("serve.url", "http://"+ln.Addr().String()+"/"))
			if err := serve.Serve(c.Context(), ln, h); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, a.p.text("serve.stopped"))
			return nil
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1", a.p.text("serve.flag.addr"))
	c.Flags().IntVar(&port, "port", 7410, a.p.text("serve.flag.port"))
	c.Flags().StringVar(&reference, "reference", "", a.p.text("serve.flag.reference"))
	c.Flags().BoolVar(&remote, "allow-remote", false, a.p.text("serve.flag.remote"))
	c.Flags().StringVar(&dir, "dir", ".", a.p.text("serve.flag.dir"))
	c.Flags().BoolVar(&check, "check", false, a.p.text("serve.flag.check"))
	return c
}

// printProblem says in the terminal what the page says about a log it cannot show.
func (a *app) printProblem(p *serve.Problem) {
	where := p.File
	if p.Line > 0 {
		where += ":" + strconv.Itoa(p.Line)
	}
	fmt.Fprintln(a.stderr, a.p.text("serve.bad", where, p.Title, p.What, p.Repair))
}

// checkServe is --check: it builds the page's view once and prints its first screen in short
// (the log, the call it follows and the titles of its stages, the comparison's verdict), or
// what is wrong with a log and a failure.
func (a *app) checkServe(opts serve.Options) error {
	v, p := serve.Load(opts, -1)
	if p != nil {
		a.printProblem(p)
		return errSilentFailure
	}
	fmt.Fprintln(a.stdout, a.p.text("serve.log", opts.Log))
	if opts.Reference != "" {
		fmt.Fprintln(a.stdout, a.p.text("serve.reference", opts.Reference))
	}
	fmt.Fprintln(a.stdout, a.p.text("serve.check.events", len(v.Events), len(v.Calls)))
	if v.Call == nil {
		fmt.Fprintln(a.stdout, a.p.text("serve.check.whole"))
	} else {
		fmt.Fprintln(a.stdout, a.p.text("serve.check.call", v.Call.Name, v.Call.CallID, v.Call.Seq, len(v.Stages)))
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
