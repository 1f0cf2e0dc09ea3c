package sessionlog

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/learn-tinypi/course/internal/i18n"
)

// Kind says what is wrong with a log.
type Kind string

// The kinds of damage.
const (
	// KindTorn: the last line is not complete JSON; the writer stopped in the middle of it.
	KindTorn Kind = "torn"
	// KindDamaged: a line before the last is not a valid event (bad JSON, a missing or wrong
	// field, a reference to no event).
	KindDamaged Kind = "damaged"
	// KindUnknownType: an event of a type this reader does not know, not marked ignorable.
	KindUnknownType Kind = "unknown-type"
	// KindSeq: an event's seq is not the number of events before it.
	KindSeq Kind = "seq"
	// KindHeader: the first line is not a tinypi-session header.
	KindHeader Kind = "header"
	// KindVersion: the header names a version this reader does not read.
	KindVersion Kind = "version"
	// KindBOM: the file starts with a UTF-8 byte order mark, which no writer of session logs
	// writes (an editor adds it on saving).
	KindBOM Kind = "bom"
	// KindLongLine: a line longer than the line limit (Options.MaxLineBytes, MaxLineBytes unless
	// set); Limit says how long.
	KindLongLine Kind = "long-line"
	// KindNotRegular: the path is not a regular file (a FIFO, a device, a directory, a socket);
	// it was not opened for reading, or not read.
	KindNotRegular Kind = "not-regular"
	// KindTooLarge: the file is larger than the limit it was read with.
	KindTooLarge Kind = "too-large"
)

// Refused reports whether k is a refusal of the file as a whole, before any of it is read as a
// log: a path that is not a regular file or a file above the size limit. A caller that reads
// the file because a user named it treats these as bad input.
func (k Kind) Refused() bool { return k == KindNotRegular || k == KindTooLarge }

// Error is a log that cannot be read, and where.
type Error struct {
	Kind Kind
	// Path is the file, when the log was read from one.
	Path string
	// Line is the 1-based line number of the damage (the header is line 1), and Offset where
	// that line starts in the file.
	Line   int
	Offset int64
	// Detail says what the line holds, in English, for the error text.
	Detail string
	// Intact is, for KindTorn, the number of events before the torn line.
	Intact int
	// Unterminated is, for KindTorn, whether the torn line lacks its "\n", as a crash leaves
	// it (tinypi.LoadSession cuts such a line off the file when it loads the session).
	Unterminated bool
	// Seq and WantSeq are the seq found and expected (KindSeq); Type the unknown type
	// (KindUnknownType), or "compaction" for a damaged compaction event (KindDamaged); Version
	// the header's version (KindVersion).
	Seq, WantSeq int
	Type         string
	Version      int
	// Mode is the file's mode (KindNotRegular); Size its size and Limit the limit it broke
	// (KindTooLarge; Limit is also the longest line of KindLongLine).
	Mode        fs.FileMode
	Size, Limit int64
}

func (e *Error) Error() string {
	where := "session log"
	if e.Path != "" {
		where += " " + e.Path
	}
	switch e.Kind {
	case KindNotRegular:
		return fmt.Sprintf("%s: %s: %s", where, e.Kind, fileType(e.Mode, "en"))
	case KindTooLarge:
		return fmt.Sprintf("%s: %s: %d bytes, the limit is %d", where, e.Kind, e.Size, e.Limit)
	case KindLongLine:
		return fmt.Sprintf("%s: line %d: %s: longer than %d bytes", where, e.Line, e.Kind, e.Limit)
	}
	return fmt.Sprintf("%s: line %d: %s: %s", where, e.Line, e.Kind, e.Detail)
}

// errorMessages explain each kind of damage and its repair, in both languages.
var errorMessages = i18n.Catalog{
	"torn.what": {
		ZH: "第 %[1]d 行（最后一行）不完整：写入在这一行的中途停止了（例如进程被中断）。它之前的 %[2]d 个事件完好。",
		EN: "line %[1]d (the last line) is incomplete: writing stopped in the middle of it (the process was interrupted, for example). The %[2]d events before it are intact.",
	},
	"torn.what.one": {
		ZH: "第 %[1]d 行（最后一行）不完整：写入在这一行的中途停止了（例如进程被中断）。它之前的 %[2]d 个事件完好。",
		EN: "line %[1]d (the last line) is incomplete: writing stopped in the middle of it (the process was interrupted, for example). The %[2]d event before it is intact.",
	},
	"torn.fix": {
		ZH: "删除第 %[1]d 行，保留前 %[3]d 行：%[2]s；或者重新运行一次。",
		EN: "delete line %[1]d, keeping the first %[3]d lines: %[2]s; or run again.",
	},
	"torn.fix.cut": {
		ZH: "tinypi 的 LoadSession 下次加载这个会话时会自己截掉第 %[1]d 行。要自己截掉，保留前 %[3]d 行：%[2]s；或者重新运行一次。",
		EN: "tinypi's LoadSession cuts line %[1]d off when it loads this session again. To cut it yourself, keep the first %[3]d lines: %[2]s; or run again.",
	},
	"torn.header.what": {
		ZH: "第 1 行（头部）不完整：写入在头部的中途停止了，文件里还没有任何事件。",
		EN: "line 1 (the header) is incomplete: writing stopped in the middle of it, before any event was written.",
	},
	"torn.header.fix": {
		ZH: "这个文件里没有可以保留的内容：重新运行一次。",
		EN: "this file holds nothing to keep: run again.",
	},
	"damaged.what": {
		ZH: "第 %[1]d 行不是有效的事件：%[2]s。损坏出现在最后一行之前，所以这不是写入中断，而是日志被改动过或写入方有错。",
		EN: "line %[1]d is not a valid event: %[2]s. The damage comes before the last line, so this is no interrupted write: the log was edited, or its writer has a bug.",
	},
	"damaged.fix": {
		ZH: "对照第 10 章正文里的格式（course read 10，“信封和事件类型”一节）修正第 %[1]d 行，或修好写入方后重新运行。",
		EN: "correct line %[1]d against the format in chapter 10's text (course read 10, the section “信封和事件类型”, envelope and event types), or fix the writer and run again.",
	},
	"damaged.fix.compaction": {
		ZH: "对照第 11 章正文里 compaction 事件的格式（course read 11）修正第 %[1]d 行，或修好写入方后重新运行。",
		EN: "correct line %[1]d against the format of the compaction event in chapter 11's text (course read 11), or fix the writer and run again.",
	},
	"unknown-type.what": {
		ZH: "第 %[1]d 行的事件类型 %[2]q 未知，且没有标记 \"ignorable\": true，读取方不能跳过它。",
		EN: "line %[1]d has the event type %[2]q, which this kit does not know, and it is not marked \"ignorable\": true, so a reader cannot skip it.",
	},
	"unknown-type.fix": {
		ZH: "检查类型的拼写，已知的类型有：%[1]s；若这是新增的、不影响消息历史的事件，写入时加上 \"ignorable\": true。",
		EN: "check the type's spelling; the known types are %[1]s. If it is a new event that does not change the message history, write it with \"ignorable\": true.",
	},
	"seq.what": {
		ZH: "第 %[1]d 行的 seq 是 %[2]d，应为 %[3]d：seq 是它之前的事件数，必须连续。有事件丢失、重复或顺序被打乱。",
		EN: "line %[1]d has seq %[2]d, want %[3]d: seq is the number of events before it and must be contiguous. An event was lost, duplicated or moved.",
	},
	"seq.fix": {
		ZH: "写入方应在追加时取 seq = 当前事件数；修好后重新运行，或按行号把 seq 改回连续。",
		EN: "the writer must take seq = the number of events so far when it appends; fix it and run again, or renumber the seqs by line.",
	},
	"header.what": {
		ZH: "第 1 行不是会话日志的头部（%[1]s）。",
		EN: "line 1 is not a session log header (%[1]s).",
	},
	"header.fix": {
		ZH: "会话日志的第一行应为 {\"format\":\"tinypi-session\",\"version\":1}；确认打开的是 sessions/ 下的 .jsonl 文件。",
		EN: "a session log starts with the line {\"format\":\"tinypi-session\",\"version\":1}; check that this is a .jsonl file from sessions/.",
	},
	"version.what": {
		ZH: "日志的格式版本是 %[1]d，本课程工具只读取版本 %[2]d。",
		EN: "the log is format version %[1]d; this course kit reads version %[2]d only.",
	},
	"version.fix": {
		ZH: "让写入方与课程工具使用同一个版本：更新课程工具，或用本章的 tinypi 重新运行。",
		EN: "use a writer and a kit of the same version: update the course kit, or run again with this chapter's tinypi.",
	},
	"bom.what": {
		ZH: "文件以 UTF-8 字节顺序标记（BOM，字节 EF BB BF）开头：会话日志没有它，多半是某个编辑器保存时加上的。",
		EN: "the file starts with a UTF-8 byte order mark (BOM, the bytes EF BB BF), which a session log does not have: an editor probably added it on saving.",
	},
	"bom.fix": {
		ZH: "去掉开头的 3 个字节：%[1]s",
		EN: "remove the first 3 bytes: %[1]s",
	},
	"long-line.what": {
		ZH: "第 %[1]d 行超过 %[2]s：会话日志的一个事件不会这么长，这不是会话日志，或者这一行已经损坏。课程工具不读入这样的行。",
		EN: "line %[1]d is longer than %[2]s: no event of a session log is this long, so this is not a session log or the line is damaged. The kit does not read such a line.",
	},
	"long-line.fix": {
		ZH: "确认打开的是 sessions/ 下的 .jsonl 会话日志；是的话，修好写入方后重新运行。",
		EN: "check that this is a .jsonl session log from sessions/; if it is, fix the writer and run again.",
	},
	"not-regular.what": {
		ZH: "这不是普通文件，而是%[1]s：会话日志是普通文件，读取它可能会一直等下去或永远读不完，所以课程工具不打开它。",
		EN: "this is not a regular file but %[1]s: a session log is a regular file, and reading this could wait forever or never end, so the kit does not open it.",
	},
	"not-regular.fix": {
		ZH: "给出一个 .jsonl 文件的路径，例如 sessions/ 下的一份日志。",
		EN: "name a .jsonl file, for example a log under sessions/.",
	},
	"too-large.what": {
		ZH: "文件有 %[1]s，超过了 %[2]s 的上限：会话日志很少这么大，可能打开的不是会话日志。",
		EN: "the file is %[1]s, more than the limit of %[2]s: session logs are rarely this large, so this may not be one.",
	},
	"too-large.fix": {
		ZH: "确认路径；确实要读它，用 --max-size 放宽上限（例如 course serve --max-size 1GiB LOG；--max-size 0 表示不限）。",
		EN: "check the path; to read it anyway, raise the limit with --max-size (course serve --max-size 1GiB LOG, for example; --max-size 0 lifts it).",
	},
	"mode.fifo":      {ZH: "一个命名管道（FIFO）", EN: "a named pipe (FIFO)"},
	"mode.dir":       {ZH: "一个目录", EN: "a directory"},
	"mode.device":    {ZH: "一个设备文件", EN: "a device"},
	"mode.socket":    {ZH: "一个套接字", EN: "a socket"},
	"mode.irregular": {ZH: "一个特殊文件", EN: "a special file"},
	"title":          {ZH: "会话日志无法读取", EN: "the session log cannot be read"},
}

// Explain says, in lang (i18n.EN or Chinese), what is wrong and how to repair it.
func (e *Error) Explain(lang string) (what, repair string) {
	text := func(id string, args ...any) string { return errorMessages.Text(lang, string(e.Kind)+"."+id, args...) }
	path := e.Path
	if path == "" {
		path = "LOG"
	}
	switch e.Kind {
	case KindTorn:
		if e.Line <= 1 {
			return text("header.what"), text("header.fix")
		}
		keep := e.Line - 1
		tmp := ShellQuote(path + ".tmp")
		cut := fmt.Sprintf("head -n %d %s > %s && mv %s %s", keep, ShellQuote(path), tmp, tmp, ShellQuote(path))
		fix := "fix"
		if e.Unterminated {
			fix = "fix.cut"
		}
		what := "what"
		if e.Intact == 1 {
			what = "what.one"
		}
		return text(what, e.Line, e.Intact), text(fix, e.Line, cut, keep)
	case KindBOM:
		tmp := ShellQuote(path + ".tmp")
		return text("what"), text("fix", fmt.Sprintf("tail -c +4 %s > %s && mv %s %s", ShellQuote(path), tmp, tmp, ShellQuote(path)))
	case KindLongLine:
		return text("what", e.Line, FormatBytes(e.Limit)), text("fix")
	case KindNotRegular:
		return text("what", fileType(e.Mode, lang)), text("fix")
	case KindTooLarge:
		return text("what", FormatBytes(e.Size), FormatBytes(e.Limit)), text("fix")
	case KindUnknownType:
		var known []string
		for _, t := range codeTypes[1:] {
			known = append(known, string(t))
		}
		return text("what", e.Line, e.Type), text("fix", strings.Join(known, ", "))
	case KindSeq:
		return text("what", e.Line, e.Seq, e.WantSeq), text("fix")
	case KindHeader:
		return text("what", e.Detail), text("fix")
	case KindVersion:
		return text("what", e.Version, Version), text("fix")
	default:
		if e.Kind == KindDamaged && e.Type == string(TypeCompaction) {
			return text("what", e.Line, e.Detail), text("fix.compaction", e.Line)
		}
		return text("what", e.Line, e.Detail), text("fix", e.Line)
	}
}

// Title is the heading of an explanation, in lang.
func Title(lang string) string { return errorMessages.Text(lang, "title") }

// fileType names the kind of file mode is, in lang.
func fileType(mode fs.FileMode, lang string) string {
	id := "mode.irregular"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		id = "mode.fifo"
	case mode.IsDir():
		id = "mode.dir"
	case mode&fs.ModeDevice != 0:
		id = "mode.device"
	case mode&fs.ModeSocket != 0:
		id = "mode.socket"
	}
	return errorMessages.Text(lang, id)
}

// FormatBytes writes a size for people: "512 bytes", "4.0 KiB", "256 MiB", "1.5 GiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	value, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if value < unit {
			break
		}
		value, suffix = value/unit, s
	}
	if value == float64(int64(value)) {
		return fmt.Sprintf("%d %s", int64(value), suffix)
	}
	return fmt.Sprintf("%.1f %s", value, suffix)
}

// ShellQuote quotes s for a POSIX shell (sh, bash, zsh on Linux and macOS) when it needs
// quoting, so that a printed command can be pasted as it is.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+:=@,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
