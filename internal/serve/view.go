package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/learn-tinypi/course/internal/sessionlog"
	"github.com/learn-tinypi/course/internal/transcript"
	"github.com/learn-tinypi/course/solutions/tinypi"
)

// The actors the responsibilities view names.
const (
	ActorModel   = "model"
	ActorAgent   = "agent"
	ActorTool    = "tool"
	ActorSession = "session"
)

// Event states at a stage.
const (
	StateCommitted = "committed"
	StatePlanned   = "planned"
)

// View is everything the page shows of one log and one chosen tool call: the JSON the page's
// script renders. The script computes nothing about the log; it only draws this.
type View struct {
	Lang    string `json:"lang"`
	LogPath string `json:"logPath"`
	// Calls are the tool/call events of the log; Call is the chosen one (nil when the log has
	// none: then Stages holds one stage, the whole log).
	Calls  []CallChoice `json:"calls"`
	Call   *CallChoice  `json:"call"`
	Events []EventView  `json:"events"`
	Stages []Stage      `json:"stages"`
	Actors []Actor      `json:"actors"`
	// Compare is the comparison with the reference log; nil without one.
	Compare *Compare `json:"compare,omitempty"`
	// Texts are the page's labels in Lang.
	Texts map[string]string `json:"texts"`
}

// CallChoice is one tool call a learner can follow through the stages.
type CallChoice struct {
	Seq    int    `json:"seq"`
	CallID string `json:"callId"`
	Name   string `json:"name"`
}

// EventView is one event of the log as the payload view lists it.
type EventView struct {
	Seq     int    `json:"seq"`
	Line    int    `json:"line"`
	Type    string `json:"type"`
	Summary string `json:"summary"`
	// Payload is the event's line, indented.
	Payload string `json:"payload"`
	// Actor is who produced the event (one of the Actor* names).
	Actor           string `json:"actor"`
	SourceEventSeqs []int  `json:"sourceEventSeqs,omitempty"`
	Ignorable       bool   `json:"ignorable,omitempty"`
	// Focus names the event's part in the chosen call's round trip: "assistant", "call",
	// "start", "result" or "request"; empty for the others.
	Focus string `json:"focus,omitempty"`
	// FirstDifference marks the event where the comparison with the reference first differs.
	FirstDifference bool `json:"firstDifference,omitempty"`
}

// Stage is one of the six stages of the chosen call's round trip.
type Stage struct {
	N       int    `json:"n"`
	Title   string `json:"title"`
	Caption string `json:"caption"`
	// Actor is the actor responsible at this stage; Duty what it does.
	Actor string `json:"actor"`
	Duty  string `json:"duty"`
	// States holds each event's state at this stage, by seq: committed or planned.
	States []string `json:"states"`
	// History is the message history at this stage: the messages of the committed events,
	// then the chosen call's result as a pending entry while it is not committed.
	History []MessageView `json:"history"`
	// HistoryNote says what the history is at this stage.
	HistoryNote string `json:"historyNote"`
	// Missing is set when the stage's event is not in the log (a run that stopped early).
	Missing bool `json:"missing,omitempty"`
}

// MessageView is one message of a history.
type MessageView struct {
	Role string `json:"role"`
	// Seq is the event the message comes from; -1 for a pending entry.
	Seq     int         `json:"seq"`
	Blocks  []BlockView `json:"blocks"`
	Pending bool        `json:"pending,omitempty"`
}

// BlockView is one content block: text, thinking, or a tool call ("name · id · arguments").
type BlockView struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// Actor is one of the four parties of a round trip.
type Actor struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	About string `json:"about"`
	// Events are the chosen call's events this actor produces.
	Events []int `json:"events"`
}

// Compare is a log set beside a reference log, aligned as course transcript aligns runs.
type Compare struct {
	ReferencePath string       `json:"referencePath"`
	Rows          []CompareRow `json:"rows"`
	// First is the index in Rows of the first difference; -1 when the logs agree.
	First int `json:"first"`
	// Summary says where the first difference is, or that the logs agree.
	Summary string `json:"summary"`
}

// CompareRow is one aligned line; an absent side is "·".
type CompareRow struct {
	Section   string `json:"section"`
	Learner   string `json:"learner"`
	Reference string `json:"reference"`
	Differs   bool   `json:"differs"`
}

// chain is the chosen call's events: the assistant message that asked for it, the tool/call,
// its tool/start, its tool/result and the next model/request; -1 where the log has none.
type chain struct {
	assistant, call, start, result, request int
}

// findChain finds the round trip of the tool/call at seq callSeq.
func findChain(events []sessionlog.Event, callSeq int) chain {
	c := chain{assistant: -1, call: callSeq, start: -1, result: -1, request: -1}
	id := events[callSeq].Call.CallID
	for i := callSeq - 1; i >= 0; i-- {
		if m, ok := events[i].Message.(tinypi.AssistantMessage); ok && slices.ContainsFunc(m.Content, func(b tinypi.ContentBlock) bool {
			tc, ok := b.(tinypi.ToolCall)
			return ok && tc.ID == id
		}) {
			c.assistant = i
			break
		}
	}
	for _, e := range events[callSeq+1:] {
		if !slices.Contains(e.SourceEventSeqs, callSeq) {
			continue
		}
		switch e.Type {
		case sessionlog.TypeToolStart:
			c.start = e.Seq
		case sessionlog.TypeToolResult:
			c.result = e.Seq
		}
		if c.result >= 0 {
			break // the reader checked that a start comes before its result
		}
	}
	if c.result >= 0 {
		for _, e := range events[c.result+1:] {
			if e.Type == sessionlog.TypeModelRequest && e.Request.ThroughSeq >= c.result {
				c.request = e.Seq
				break
			}
		}
	}
	return c
}

// calls lists the tool/call events of events.
func calls(events []sessionlog.Event) []CallChoice {
	var out []CallChoice
	for _, e := range events {
		if e.Type == sessionlog.TypeToolCall {
			out = append(out, CallChoice{Seq: e.Seq, CallID: e.Call.CallID, Name: e.Call.Name})
		}
	}
	return out
}

// buildView computes the view of log for the tool/call at callSeq (-1: the first one, or the
// whole log when there is none). It fails only when callSeq names no tool/call.
func buildView(log *sessionlog.Log, logPath string, callSeq int, lang string) (*View, error) {
	t := texts(lang)
	v := &View{Lang: lang, LogPath: logPath, Calls: calls(log.Events), Texts: pageTexts(lang)}
	if v.Calls == nil {
		v.Calls = []CallChoice{}
	}
	if callSeq == -1 && len(v.Calls) > 0 {
		callSeq = v.Calls[0].Seq
	}
	if callSeq != -1 {
		i := slices.IndexFunc(v.Calls, func(c CallChoice) bool { return c.Seq == callSeq })
		if i < 0 {
			return nil, &noCallError{seq: callSeq, calls: v.Calls}
		}
		v.Call = &v.Calls[i]
	}
	ch := chain{assistant: -1, call: -1, start: -1, result: -1, request: -1}
	if v.Call != nil {
		ch = findChain(log.Events, v.Call.Seq)
	}
	for _, e := range log.Events {
		v.Events = append(v.Events, eventView(e, ch))
	}
	if v.Events == nil {
		v.Events = []EventView{}
	}
	if v.Call == nil {
		v.Stages = []Stage{wholeLog(log.Events, t)}
	} else {
		v.Stages = stages(log.Events, ch, *v.Call, t)
	}
	v.Actors = actors(ch, t)
	return v, nil
}

// noCallError is a ?call= that names no tool/call of the log.
type noCallError struct {
	seq   int
	calls []CallChoice
}

func (e *noCallError) Error() string {
	return fmt.Sprintf("no tool/call at seq %d", e.seq)
}

func eventView(e sessionlog.Event, ch chain) EventView {
	v := EventView{Seq: e.Seq, Line: e.Line, Type: string(e.Type), Summary: summary(e), Payload: payload(e),
		Actor: producer(e.Type), SourceEventSeqs: e.SourceEventSeqs, Ignorable: e.Ignorable}
	switch e.Seq {
	case ch.assistant:
		v.Focus = "assistant"
	case ch.call:
		v.Focus = "call"
	case ch.start:
		v.Focus = "start"
	case ch.result:
		v.Focus = "result"
	case ch.request:
		v.Focus = "request"
	}
	return v
}

// producer is the actor that makes an event of type t. A tool/start is the tool runtime's: it
// logs it just before the tool's body runs.
func producer(t sessionlog.Type) string {
	switch t {
	case sessionlog.TypeAssistantMessage:
		return ActorModel
	case sessionlog.TypeToolStart, sessionlog.TypeToolResult:
		return ActorTool
	case sessionlog.TypeUserMessage, sessionlog.TypeToolCall, sessionlog.TypeModelRequest, sessionlog.TypeTurnStart, sessionlog.TypeTurnEnd:
		return ActorAgent
	}
	return ActorSession
}

// summary is an event on one line, as the payload view's entry and the comparison show it.
func summary(e sessionlog.Event) string {
	switch {
	case e.Message != nil:
		s := transcript.DescribeMessage(e.Message)
		if len(e.SourceEventSeqs) > 0 {
			s += fmt.Sprintf("  ← seq %d", e.SourceEventSeqs[0])
		}
		return s
	case e.Type == sessionlog.TypeToolStart:
		return fmt.Sprintf("%s(%s) starts  ← seq %d", e.Call.Name, e.Call.CallID, e.SourceEventSeqs[0])
	case e.Call != nil:
		return fmt.Sprintf("%s(%s %s)", e.Call.Name, e.Call.CallID, e.Call.Arguments)
	case e.Request != nil:
		return fmt.Sprintf("%d messages through seq %d", e.Request.Messages, e.Request.ThroughSeq)
	}
	var compact bytes.Buffer
	if json.Compact(&compact, e.Data) == nil {
		return compact.String()
	}
	return ""
}

// payload is the event as its line holds it, indented (the line's own field order is kept).
func payload(e sessionlog.Event) string {
	env := struct {
		Type            string          `json:"type"`
		Seq             int             `json:"seq"`
		Data            json.RawMessage `json:"data,omitempty"`
		SourceEventSeqs []int           `json:"sourceEventSeqs,omitempty"`
		Ignorable       bool            `json:"ignorable,omitempty"`
	}{string(e.Type), e.Seq, e.Data, e.SourceEventSeqs, e.Ignorable}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(env); err != nil {
		return string(e.Data)
	}
	return strings.TrimRight(b.String(), "\n")
}

// stages computes the six stages of the round trip ch of call.
func stages(events []sessionlog.Event, ch chain, call CallChoice, t textFunc) []Stage {
	n := len(events)
	// through is how many events are committed at each stage; a missing event leaves the
	// stage at the end of the log.
	at := func(seq, plus int) (int, bool) {
		if seq < 0 {
			return n, true
		}
		return seq + plus, false
	}
	type spec struct {
		actor     string
		committed int
		missing   bool
		derived   bool // the history is deriveMessages' projection, not a preview
	}
	var specs [6]spec
	c1, m1 := at(ch.assistant, 1)
	specs[0] = spec{actor: ActorModel, committed: c1, missing: m1}
	specs[1] = spec{actor: ActorAgent, committed: ch.call + 1}
	c3, m3 := at(ch.result, 0)
	specs[2] = spec{actor: ActorTool, committed: c3, missing: m3}
	c4, m4 := at(ch.result, 1)
	specs[3] = spec{actor: ActorSession, committed: c4, missing: m4}
	c5, m5 := at(ch.request, 0)
	specs[4] = spec{actor: ActorSession, committed: c5, missing: m5 || m4, derived: true}
	c6, m6 := at(ch.request, 1)
	specs[5] = spec{actor: ActorAgent, committed: c6, missing: m6 || m4, derived: true}

	args := []any{call.Name, call.CallID, ch.assistant, ch.call, ch.result, ch.request, ch.start}
	var out []Stage
	for i, s := range specs {
		// A log with the call's tool/start (chapter 10 on) gets the stage 3 texts that name it.
		started := ""
		if i == 2 && ch.start >= 0 {
			started = ".started"
		}
		st := Stage{N: i + 1, Actor: s.actor, Missing: s.missing,
			Title:   t(fmt.Sprintf("stage%d.title", i+1)),
			Caption: t(fmt.Sprintf("stage%d.caption%s", i+1, started), args...),
			Duty:    t(fmt.Sprintf("stage%d.duty", i+1), args...)}
		if s.missing {
			st.Caption = t(fmt.Sprintf("stage%d.missing%s", i+1, started), args...)
		}
		for seq := range n {
			state := StatePlanned
			if seq < s.committed {
				state = StateCommitted
			}
			st.States = append(st.States, state)
		}
		// The history of a stage: before the next request, what the committed events hold;
		// from stage 5 on, what deriveMessages gives for the events the request runs through.
		through := s.committed
		if s.derived && ch.request >= 0 {
			through = events[ch.request].Request.ThroughSeq + 1
		}
		st.History = history(events[:through])
		if ch.result < 0 || ch.result >= s.committed {
			st.History = append(st.History, MessageView{Role: string(tinypi.RoleToolResult), Seq: -1, Pending: true,
				Blocks: []BlockView{{Kind: "text", Text: t("pending.result", call.CallID)}}})
		}
		st.HistoryNote = t(fmt.Sprintf("stage%d.history", i+1), args...)
		out = append(out, st)
	}
	return out
}

// wholeLog is the one stage of a log without tool calls: everything committed.
func wholeLog(events []sessionlog.Event, t textFunc) Stage {
	st := Stage{N: 1, Actor: ActorSession, Title: t("whole.title"), Caption: t("whole.caption"), Duty: t("whole.duty"),
		History: history(events), HistoryNote: t("whole.history"), States: []string{}}
	for range events {
		st.States = append(st.States, StateCommitted)
	}
	return st
}

// history renders the messages DeriveMessages(events) projects, each with the seq of its event.
func history(events []sessionlog.Event) []MessageView {
	out := []MessageView{}
	for _, e := range sessionlog.MessageEvents(events) {
		mv := MessageView{Role: string(e.Message.MessageRole()), Seq: e.Seq}
		var content []tinypi.ContentBlock
		switch m := e.Message.(type) {
		case tinypi.UserMessage:
			content = m.Content
		case tinypi.AssistantMessage:
			content = m.Content
		case tinypi.ToolResultMessage:
			mv.Blocks = append(mv.Blocks, BlockView{Kind: "ref", Text: "toolCallId = " + m.ToolCallID})
			content = m.Content
		}
		for _, b := range content {
			switch b := b.(type) {
			case tinypi.TextContent:
				mv.Blocks = append(mv.Blocks, BlockView{Kind: "text", Text: b.Text})
			case tinypi.ThinkingContent:
				mv.Blocks = append(mv.Blocks, BlockView{Kind: "thinking", Text: b.Thinking})
			case tinypi.ToolCall:
				mv.Blocks = append(mv.Blocks, BlockView{Kind: "call", Text: b.Name + " · " + b.ID + " · " + b.Arguments})
			}
		}
		out = append(out, mv)
	}
	return out
}

// actors describes the four actors and the chosen call's events each produces.
func actors(ch chain, t textFunc) []Actor {
	only := func(seqs ...int) []int {
		out := []int{}
		for _, s := range seqs {
			if s >= 0 {
				out = append(out, s)
			}
		}
		return out
	}
	return []Actor{
		{ID: ActorModel, Name: t("actor.model"), About: t("actor.model.about"), Events: only(ch.assistant)},
		{ID: ActorAgent, Name: t("actor.agent"), About: t("actor.agent.about"), Events: only(ch.call, ch.request)},
		{ID: ActorTool, Name: t("actor.tool"), About: t("actor.tool.about"), Events: only(ch.start, ch.result)},
		{ID: ActorSession, Name: t("actor.session"), About: t("actor.session.about"), Events: only(ch.assistant, ch.call, ch.start, ch.result)},
	}
}

// sections renders a log for transcript.CompareSections: every event on a line, then the
// derived messages. Times are left out: they differ between any two runs.
func sections(log *sessionlog.Log) []transcript.Section {
	events := []string{}
	for _, e := range log.Events {
		events = append(events, fmt.Sprintf("%-17s %s", e.Type, summary(e)))
	}
	messages := []string{}
	for _, m := range sessionlog.DeriveMessages(log.Events) {
		messages = append(messages, transcript.DescribeMessage(m))
	}
	return []transcript.Section{
		{Name: transcript.SectionEvents, Lines: events},
		{Name: transcript.SectionTranscript, Lines: messages},
	}
}

// compare aligns log with ref and marks the first difference in v's events.
func compare(v *View, log, ref *sessionlog.Log, refPath string) {
	labels := transcript.LabelsIn(v.Lang)
	c := transcript.CompareSections("", sections(log), sections(ref))
	cmp := &Compare{ReferencePath: refPath, First: c.First, Rows: []CompareRow{}}
	for _, r := range c.Rows {
		row := CompareRow{Section: r.Section, Learner: "·", Reference: "·", Differs: r.Differs()}
		if r.HasLearner {
			row.Learner = r.Learner
		}
		if r.HasReference {
			row.Reference = r.Reference
		}
		cmp.Rows = append(cmp.Rows, row)
	}
	if c.First < 0 {
		cmp.Summary = labels.Same
	} else {
		cmp.Summary = fmt.Sprintf(labels.FirstDifference, c.First+1, c.Rows[c.First].Section)
		if c.Rows[c.First].Section == transcript.SectionEvents && c.First < len(v.Events) {
			// Rows of the events section come first, one per seq.
			v.Events[c.First].FirstDifference = true
		}
	}
	v.Compare = cmp
}
