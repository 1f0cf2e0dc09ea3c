package sessionlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// envelope is one event line as it is written.
type envelope struct {
	Type            *Type           `json:"type"`
	Seq             *int            `json:"seq"`
	Time            string          `json:"time"`
	Data            json.RawMessage `json:"data"`
	SourceEventSeqs []int           `json:"sourceEventSeqs"`
	Ignorable       bool            `json:"ignorable"`
}

// decodeLine decodes line lineNo on its own: what one line must be whatever the lines before it.
// Event.Data is set when withData is.
func decodeLine(line []byte, lineNo int, withData bool) (Event, error) {
	if !withData {
		if e, ok := decodeFast(line, lineNo); ok {
			return e, nil
		}
	}
	return decodeSlow(line, lineNo)
}

// decodeSlow is decodeLine in the plain way: the envelope, then the payload its type wants. It
// is the definition of a valid line and of the error for an invalid one; decodeFast gives the
// same event for a valid line in one decoding of the line.
func decodeSlow(line []byte, lineNo int) (Event, error) {
	damaged := func(format string, args ...any) (Event, error) {
		return Event{}, &Error{Kind: KindDamaged, Line: lineNo, Detail: fmt.Sprintf(format, args...)}
	}
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		return damaged("not a JSON object: %v", err)
	}
	if env.Type == nil || *env.Type == "" {
		return damaged("no \"type\"")
	}
	if env.Seq == nil {
		return damaged("no \"seq\"")
	}
	e := Event{Type: *env.Type, Seq: *env.Seq, Data: env.Data, SourceEventSeqs: env.SourceEventSeqs,
		Ignorable: env.Ignorable, Line: lineNo, Bytes: len(line)}
	if env.Time != "" {
		t, err := time.Parse(time.RFC3339Nano, env.Time)
		if err != nil {
			return damaged("time %q is not an RFC 3339 time", env.Time)
		}
		e.Time = t
	}
	switch codeOf(e.Type) {
	case codeUserMessage, codeAssistantMessage, codeToolResult:
		m, err := decodeMessage(e.Data)
		if err != nil {
			return damaged("%s: %v", e.Type, err)
		}
		want := map[Type]tinypi.Role{TypeUserMessage: tinypi.RoleUser, TypeAssistantMessage: tinypi.RoleAssistant, TypeToolResult: tinypi.RoleToolResult}[e.Type]
		if m.MessageRole() != want {
			return damaged("%s holds a %s message, want %s", e.Type, m.MessageRole(), want)
		}
		e.Message = m
	case codeToolCall:
		var c Call
		if err := json.Unmarshal(e.Data, &c); err != nil || c.CallID == "" || c.Name == "" {
			return damaged("tool/call needs data {\"callId\",\"name\",\"arguments\"}")
		}
		e.Call = &c
	case codeToolStart:
		var c Call
		if err := json.Unmarshal(e.Data, &c); err != nil || c.CallID == "" || c.Name == "" {
			return damaged("tool/start needs data {\"callId\",\"name\"}")
		}
		e.Call = &c
	case codeModelRequest:
		var rq struct {
			ThroughSeq *int `json:"throughSeq"`
			Messages   *int `json:"messages"`
		}
		if err := json.Unmarshal(e.Data, &rq); err != nil || rq.ThroughSeq == nil || rq.Messages == nil {
			return damaged("model/request needs data {\"throughSeq\",\"messages\"}")
		}
		e.Request = &Request{ThroughSeq: *rq.ThroughSeq, Messages: *rq.Messages}
	case codeCompaction:
		c, err := decodeCompaction(e.Data, e.Seq)
		if err != nil {
			// Type sends the learner to chapter 11, which defines the event.
			return Event{}, &Error{Kind: KindDamaged, Line: lineNo, Type: string(TypeCompaction), Detail: "compaction: " + err.Error()}
		}
		e.Compaction = c
	}
	return e, nil
}

// compactionFields are the fields of a compaction's data, in the order they are written.
var compactionFields = []string{"summary", "firstKeptSeq", "tokensBefore", "reason", "readFiles", "changedFiles"}

// decodeCompaction decodes the data of the compaction event at seq and checks its shape: every
// field present, a summary, a known reason, a count of tokens, an earlier event as the cut, lists
// of file names. It does not check that the cut is a cut point of chapter 11 (see the package
// comment): a compaction whose firstKeptSeq is an earlier event derives a well-defined history.
func decodeCompaction(data json.RawMessage, seq int) (*Compaction, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return nil, errors.New(`needs data {"summary","firstKeptSeq","tokensBefore","reason","readFiles","changedFiles"}`)
	}
	for _, name := range compactionFields {
		if v, ok := fields[name]; !ok || string(v) == "null" {
			return nil, fmt.Errorf("no %q: the data needs \"summary\", \"firstKeptSeq\", \"tokensBefore\", \"reason\", \"readFiles\" and \"changedFiles\"", name)
		}
	}
	var c Compaction
	if json.Unmarshal(fields["summary"], &c.Summary) != nil {
		return nil, fmt.Errorf("summary %s is not a string", cutText(fields["summary"], 80))
	}
	if c.Summary == "" {
		return nil, errors.New("the summary is empty")
	}
	if json.Unmarshal(fields["reason"], &c.Reason) != nil {
		return nil, fmt.Errorf("reason %s is not a string", cutText(fields["reason"], 80))
	}
	switch c.Reason {
	case CompactionThreshold, CompactionOverflow, CompactionManual:
	default:
		return nil, fmt.Errorf("reason %q, want %q, %q or %q", c.Reason, CompactionThreshold, CompactionOverflow, CompactionManual)
	}
	if json.Unmarshal(fields["tokensBefore"], &c.TokensBefore) != nil || c.TokensBefore < 0 {
		return nil, fmt.Errorf("tokensBefore %s, want a number of tokens (0 or more)", cutText(fields["tokensBefore"], 80))
	}
	if seq == 0 {
		return nil, errors.New("a compaction at seq 0 has no earlier event to keep from (firstKeptSeq)")
	}
	if json.Unmarshal(fields["firstKeptSeq"], &c.FirstKeptSeq) != nil || c.FirstKeptSeq < 0 || c.FirstKeptSeq >= seq {
		return nil, fmt.Errorf("firstKeptSeq %s, want the seq of an earlier event (0 to %d)", cutText(fields["firstKeptSeq"], 80), seq-1)
	}
	for _, list := range []struct {
		name  string
		names *[]string
	}{{"readFiles", &c.ReadFiles}, {"changedFiles", &c.ChangedFiles}} {
		if json.Unmarshal(fields[list.name], list.names) != nil {
			return nil, fmt.Errorf("%s %s, want a list of file names (strings)", list.name, cutText(fields[list.name], 80))
		}
		if i := slices.Index(*list.names, ""); i >= 0 {
			return nil, fmt.Errorf("%s[%d] is an empty file name", list.name, i)
		}
	}
	return &c, nil
}

// cutText is b as text, cut to at most n bytes (a detail quotes no more of a line).
func cutText(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + "…"
}

// fastLine is an event line with the payloads of every known type in one struct, so that a
// valid line is decoded by one json.Unmarshal (the message inside by tinypi's decoder). Its
// fields need no allocation of their own: a missing field is a zero value or an unset flag.
type fastLine struct {
	Type            string    `json:"type"`
	Seq             intField  `json:"seq"`
	Time            timeField `json:"time"`
	SourceEventSeqs []int     `json:"sourceEventSeqs"`
	Ignorable       bool      `json:"ignorable"`
	Data            fastData  `json:"data"`
}

type fastData struct {
	Message    messageField `json:"message"`
	CallID     string       `json:"callId"`
	Name       string       `json:"name"`
	Arguments  string       `json:"arguments"`
	ThroughSeq intField     `json:"throughSeq"`
	Messages   intField     `json:"messages"`
}

// intField is an integer and whether the line had it.
type intField struct {
	v   int
	set bool
}

func (f *intField) UnmarshalJSON(data []byte) error {
	n, err := strconv.Atoi(string(data)) // no copy: the conversion does not escape
	if err != nil {
		return err // not an integer (a string, a fraction, null): decodeSlow explains it
	}
	f.v, f.set = n, true
	return nil
}

// timeField is the time of a line, parsed where the line holds it; set is false when the line
// has none.
type timeField struct {
	t   time.Time
	set bool
}

func (f *timeField) UnmarshalJSON(data []byte) error {
	f.set = true
	// time.Time reads RFC 3339 strictly, from the bytes; anything it refuses (an empty or
	// unusual time) is left to decodeSlow, which says whether it is a time at all.
	return f.t.UnmarshalJSON(data)
}

// messageField decodes a message with tinypi.UnmarshalMessage where the line holds it.
type messageField struct {
	m   tinypi.Message
	err error
	set bool
}

func (f *messageField) UnmarshalJSON(data []byte) error {
	f.set = true
	f.m, f.err = tinypi.UnmarshalMessage(data)
	return nil // an error is decodeFast's to see: it falls back to decodeSlow
}

// decodeFast decodes a valid line of a type with a decoded payload (a message, a call, a
// request) without its Data; ok is false for anything else (an invalid line, another type, a
// payload that is not an object), which decodeSlow then decodes and explains.
func decodeFast(line []byte, lineNo int) (Event, bool) {
	var l fastLine
	if err := json.Unmarshal(line, &l); err != nil || l.Type == "" || !l.Seq.set {
		return Event{}, false
	}
	e := Event{Type: Type(l.Type), Seq: l.Seq.v, SourceEventSeqs: l.SourceEventSeqs, Ignorable: l.Ignorable, Line: lineNo, Bytes: len(line)}
	if l.Time.set {
		e.Time = l.Time.t
	}
	c := codeOf(e.Type)
	switch c {
	case codeOther, codeTurnStart, codeTurnEnd, codeCompaction:
		// Their Data is all a reader shows of them (and compares): decodeSlow keeps it. A
		// compaction, rare, is checked field by field there.
		return Event{}, false
	}
	d := &l.Data
	switch c {
	case codeUserMessage, codeAssistantMessage, codeToolResult:
		if !d.Message.set || d.Message.err != nil || d.Message.m == nil || d.Message.m.MessageRole() != roleOf[c] {
			return Event{}, false
		}
		e.Message = d.Message.m
	case codeToolCall, codeToolStart:
		if d.CallID == "" || d.Name == "" {
			return Event{}, false
		}
		e.Call = &Call{CallID: d.CallID, Name: d.Name, Arguments: d.Arguments}
	case codeModelRequest:
		if !d.ThroughSeq.set || !d.Messages.set {
			return Event{}, false
		}
		e.Request = &Request{ThroughSeq: d.ThroughSeq.v, Messages: d.Messages.v}
	}
	return e, true
}

// roleOf is the role of the message of each message type.
var roleOf = map[typeCode]tinypi.Role{codeUserMessage: tinypi.RoleUser, codeAssistantMessage: tinypi.RoleAssistant, codeToolResult: tinypi.RoleToolResult}

// decodeMessage decodes data {"message": ...} with tinypi's own decoder.
func decodeMessage(data json.RawMessage) (tinypi.Message, error) {
	var d struct {
		Message json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(data, &d); err != nil || len(d.Message) == 0 {
		return nil, errors.New("needs data {\"message\"}")
	}
	return tinypi.UnmarshalMessage(d.Message)
}
