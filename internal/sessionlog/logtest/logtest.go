// Package logtest writes synthetic session logs for tests and benchmarks: any number of turns of
// the shape a one-tool agent run logs, valid line for line (seqs, references, request counts).
package logtest

import (
	"bytes"
	"fmt"
	"os"
)

// Header is the header line of every log this package writes, without its newline.
const Header = `{"format":"tinypi-session","version":1,"session":"synthetic"}`

// EventsPerTurn is the number of events of one turn: turn/start, user/message, model/request,
// assistant/message with one tool call, tool/call, tool/result, model/request, the answer,
// turn/end.
const EventsPerTurn = 9

// Turn appends turn i (from 0) of a synthetic log to b. Its call is call-<i>, a read of
// file-<i>.md, at seq 9i+4; its result at 9i+5; the request after it at 9i+6.
func Turn(b *bytes.Buffer, i int) {
	s, m := EventsPerTurn*i, 4*i // the seq of the turn's first event, the messages before it
	const t = "2026-12-01T10:00:00Z"
	fmt.Fprintf(b, `{"type":"turn/start","seq":%d,"time":%q,"data":{"turn":%d}}`+"\n", s, t, i+1)
	fmt.Fprintf(b, `{"type":"user/message","seq":%d,"time":%q,"data":{"message":{"role":"user","content":[{"type":"text","text":"读取 file-%d.md，并概述它的内容。"}],"timestamp":1796185096215}}}`+"\n", s+1, t, i)
	fmt.Fprintf(b, `{"type":"model/request","seq":%d,"time":%q,"data":{"throughSeq":%d,"messages":%d}}`+"\n", s+2, t, s+1, m+1)
	fmt.Fprintf(b, `{"type":"assistant/message","seq":%d,"time":%q,"data":{"message":{"role":"assistant","content":[{"type":"text","text":"我先读取这个文件。"},{"type":"toolCall","id":"call-%d","name":"read","arguments":"{\"path\":\"file-%d.md\"}"}],"stopReason":"toolUse","usage":{"input":120,"output":30,"total":150},"timestamp":1796185096215}}}`+"\n", s+3, t, i, i)
	fmt.Fprintf(b, `{"type":"tool/call","seq":%d,"time":%q,"data":{"callId":"call-%d","name":"read","arguments":"{\"path\":\"file-%d.md\"}"}}`+"\n", s+4, t, i, i)
	fmt.Fprintf(b, `{"type":"tool/result","seq":%d,"time":%q,"data":{"message":{"role":"toolResult","content":[{"type":"text","text":"# file %d\n这是第 %d 个文件：一个用 Go 写的、会调用工具的 LLM agent 运行时的说明。\nA small agent runtime, line two.\n"}],"toolCallId":"call-%d","toolName":"read","timestamp":1796185096215}},"sourceEventSeqs":[%d]}`+"\n", s+5, t, i, i, i, s+4)
	fmt.Fprintf(b, `{"type":"model/request","seq":%d,"time":%q,"data":{"throughSeq":%d,"messages":%d}}`+"\n", s+6, t, s+5, m+3)
	fmt.Fprintf(b, `{"type":"assistant/message","seq":%d,"time":%q,"data":{"message":{"role":"assistant","content":[{"type":"text","text":"file-%d.md 说明了这个项目：一个用 Go 写的 agent 运行时。"}],"stopReason":"stop","usage":{"input":300,"output":40,"total":340},"timestamp":1796185096215}}}`+"\n", s+7, t, i)
	fmt.Fprintf(b, `{"type":"turn/end","seq":%d,"time":%q,"data":{"turn":%d,"reason":"stop"}}`+"\n", s+8, t, i+1)
}

// Log returns a log of turns turns, or when turns is 0 of as many turns as make at least
// minBytes, and the number of turns.
func Log(turns, minBytes int) ([]byte, int) {
	var b bytes.Buffer
	b.WriteString(Header + "\n")
	n := 0
	for ; (turns > 0 && n < turns) || (turns == 0 && b.Len() < minBytes); n++ {
		Turn(&b, n)
	}
	return b.Bytes(), n
}

// WriteFile writes Log(turns, minBytes) to path and returns its size and number of turns.
func WriteFile(path string, turns, minBytes int) (int64, int, error) {
	data, n := Log(turns, minBytes)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return 0, 0, err
	}
	return int64(len(data)), n, nil
}
