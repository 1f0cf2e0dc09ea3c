package sessionlog

import (
	"fmt"

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
)

// Error is a log that cannot be read, and where.
type Error struct {
	Kind Kind
	// Path is the file, when the log was read from one.
	Path string
	// Line is the 1-based line number of the damage (the header is line 1).
	Line int
	// Detail says what the line holds, in English, for the error text.
	Detail string
	// Intact is, for KindTorn, the number of events before the torn line.
	Intact int
	// Seq and WantSeq are the seq found and expected (KindSeq); Type the unknown type
	// (KindUnknownType); Version the header's version (KindVersion).
	Seq, WantSeq int
	Type         string
	Version      int
}

func (e *Error) Error() string {
	where := "session log"
	if e.Path != "" {
		where += " " + e.Path
	}
	return fmt.Sprintf("%s: line %d: %s: %s", where, e.Line, e.Kind, e.Detail)
}

// errorMessages explain each kind of damage and its repair, in both languages.
var errorMessages = i18n.Catalog{
	"torn.what": {
		ZH: "第 %[1]d 行（最后一行）不完整：写入在这一行的中途停止了（例如进程被中断）。它之前的 %[2]d 个事件完好。",
		EN: "line %[1]d (the last line) is incomplete: writing stopped in the middle of it (the process was interrupted, for example). The %[2]d events before it are intact.",
	},
	"torn.fix": {
		ZH: "删除第 %[1]d 行即可得到一份完好的日志：sed -i '%[1]dd' %[2]s；或者重新运行一次。",
		EN: "delete line %[1]d to keep the intact log: sed -i '%[1]dd' %[2]s; or run again.",
	},
	"damaged.what": {
		ZH: "第 %[1]d 行不是有效的事件：%[2]s。损坏出现在最后一行之前，所以这不是写入中断，而是日志被改动过或写入方有错。",
		EN: "line %[1]d is not a valid event: %[2]s. The damage comes before the last line, so this is no interrupted write: the log was edited, or its writer has a bug.",
	},
	"damaged.fix": {
		ZH: "对照 docs/serve.md 中的格式修正第 %[1]d 行，或修好写入方后重新运行。",
		EN: "correct line %[1]d against the format in docs/serve.md, or fix the writer and run again.",
	},
	"unknown-type.what": {
		ZH: "第 %[1]d 行的事件类型 %[2]q 未知，且没有标记 \"ignorable\": true，读取方不能跳过它。",
		EN: "line %[1]d has the event type %[2]q, which this kit does not know, and it is not marked \"ignorable\": true, so a reader cannot skip it.",
	},
	"unknown-type.fix": {
		ZH: "检查类型的拼写（已知类型见 docs/serve.md）；若这是新增的、不影响消息历史的事件，写入时加上 \"ignorable\": true。",
		EN: "check the type's spelling (docs/serve.md lists the known types); if it is a new event that does not change the message history, write it with \"ignorable\": true.",
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
	"title": {ZH: "会话日志无法读取", EN: "the session log cannot be read"},
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
		return text("what", e.Line, e.Intact), text("fix", e.Line, path)
	case KindUnknownType:
		return text("what", e.Line, e.Type), text("fix")
	case KindSeq:
		return text("what", e.Line, e.Seq, e.WantSeq), text("fix")
	case KindHeader:
		return text("what", e.Detail), text("fix")
	case KindVersion:
		return text("what", e.Version, Version), text("fix")
	default:
		return text("what", e.Line, e.Detail), text("fix", e.Line)
	}
}

// Title is the heading of an explanation, in lang.
func Title(lang string) string { return errorMessages.Text(lang, "title") }
