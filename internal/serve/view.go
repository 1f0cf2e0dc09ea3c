package serve

import (
	"bytes"
	"context"
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

// How much of a log one View holds: what a screen shows, whatever the log's length.
const (
	// allEventsUpTo: a log of at most this many events is shown whole.
	allEventsUpTo = 200
	// eventContext: in a longer log, the events shown before and after each event of the
	// chosen round trip (and at the start and end of a log without calls, eventContext*5).
	eventContext = 20
	// historyShown: the last messages of a stage's history that are shown.
	historyShown = 40
	// callsShown: the calls the selector lists around the chosen one.
	callsShown = 100
	// batchShown: the calls of a batch listed around the chosen one.
	batchShown = 40
	// textShown, payloadShown, summaryShown: the bytes of one block's text, one event's payload
	// and one line of summary that are shown.
	textShown    = 4096
	payloadShown = 16384
	summaryShown = 400
	// blocksShown and messageShown: the blocks of one message shown, and the bytes of text of
	// all of them (a message of ten thousand tool calls is shown by its first ones).
	blocksShown  = 20
	messageShown = 16384
	// filesShown: the names of one list of a compaction's files that are shown.
	filesShown = 40
)

// View is everything the page shows of one log and one chosen tool call: the JSON the page's
// script renders. The script computes nothing about the log; it only draws this.
type View struct {
	Lang    string `json:"lang"`
	LogPath string `json:"logPath"`
	// Calls are the tool/calls the selector lists: all of them, or in a long log those around
	// the chosen one; CallCount counts all of them. Call is the chosen one (nil when the log
	// has none: then Stages holds one stage, the whole log). PrevCall and NextCall are the
	// calls before and after it in the log.
	Calls     []CallChoice `json:"calls"`
	CallCount int          `json:"callCount"`
	Call      *CallChoice  `json:"call"`
	PrevCall  *CallChoice  `json:"prevCall,omitempty"`
	NextCall  *CallChoice  `json:"nextCall,omitempty"`
	// Events are the events shown, in log order: all of a short log, and of a long one those
	// around the chosen round trip; EventCount counts all of them and HiddenAfter those left
	// out after the last one shown.
	Events      []EventView `json:"events"`
	EventCount  int         `json:"eventCount"`
	HiddenAfter int         `json:"hiddenAfter,omitempty"`
	Stages      []Stage     `json:"stages"`
	Actors      []Actor     `json:"actors"`
	// Batch lists the calls the model asked for together with the chosen one (its siblings,
	// the chosen one included), when there are several; BatchSize counts all of them.
	Batch     []BatchCall `json:"batch,omitempty"`
	BatchSize int         `json:"batchSize,omitempty"`
	// Notice says what is shown instead of the whole file: a torn last line.
	Notice *Problem `json:"notice,omitempty"`
	// Compare is the comparison with the reference log; nil without one.
	Compare *Compare `json:"compare,omitempty"`
	// Texts are the page's labels in Lang.
	Texts map[string]string `json:"texts"`
	// Follow is set on the page of a log course serve --follow follows: the page shows each
	// tool call's round trip live (follow.go).
	Follow bool `json:"follow,omitempty"`
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
	// Payload is the event's line, indented, cut to payloadShown bytes; PayloadCut is the
	// number of bytes left out.
	Payload    string `json:"payload"`
	PayloadCut int    `json:"payloadCut,omitempty"`
	// Actor is who produced the event (one of the Actor* names).
	Actor           string `json:"actor"`
	SourceEventSeqs []int  `json:"sourceEventSeqs,omitempty"`
	Ignorable       bool   `json:"ignorable,omitempty"`
	// Focus names the event's part in the chosen call's round trip: "assistant", "call",
	// "start", "result" or "request"; "sibling" for another call of its batch; "compaction"
	// for the compaction whose summary the round trip's last history starts with (of a log
	// without calls, the latest one); empty for the others.
	Focus string `json:"focus,omitempty"`
	// Compaction is the data of a compaction event; nil for the other types.
	Compaction *CompactionView `json:"compaction,omitempty"`
	// FirstDifference marks the event where the comparison with the reference first differs.
	FirstDifference bool `json:"firstDifference,omitempty"`
	// HiddenBefore is the number of events left out between the event shown before this one
	// (or the start of the log) and this one.
	HiddenBefore int `json:"hiddenBefore,omitempty"`
}

// CompactionView is a compaction event's data as the payload view lists it.
type CompactionView struct {
	Reason       string `json:"reason"`
	TokensBefore int    `json:"tokensBefore"`
	FirstKeptSeq int    `json:"firstKeptSeq"`
	// Summary is the summary, cut to textShown bytes; SummaryCut is the number of bytes left out.
	Summary    string `json:"summary"`
	SummaryCut int    `json:"summaryCut,omitempty"`
	// ReadFiles and ChangedFiles are the first filesShown names of each list (each cut to
	// summaryShown bytes); ReadHidden and ChangedHidden count the names left out.
	ReadFiles     []string `json:"readFiles"`
	ReadHidden    int      `json:"readHidden,omitempty"`
	ChangedFiles  []string `json:"changedFiles"`
	ChangedHidden int      `json:"changedHidden,omitempty"`
}

// Stage is one of the six stages of the chosen call's round trip.
type Stage struct {
	N       int    `json:"n"`
	Title   string `json:"title"`
	Caption string `json:"caption"`
	// Actor is the actor responsible at this stage; Duty what it does.
	Actor string `json:"actor"`
	Duty  string `json:"duty"`
	// Committed is the number of events committed at this stage: those with seq < Committed.
	Committed int `json:"committed"`
	// States holds the state at this stage of each event of View.Events, in the same order:
	// committed or planned.
	States []string `json:"states"`
	// History is the message history at this stage: the messages of the committed events,
	// the last historyShown of them (HistoryHidden counts the earlier ones left out), then the
	// chosen call's result as a pending entry while it is not committed. After a compaction
	// the history starts with its summary message (MessageView.Summary), which is always shown:
	// the messages left out are then those between it and the ones shown.
	History       []MessageView `json:"history"`
	HistoryHidden int           `json:"historyHidden,omitempty"`
	// HistoryNote says what the history is at this stage.
	HistoryNote string `json:"historyNote"`
	// Missing is set when the stage's event is not in the log (a run that stopped early).
	Missing bool `json:"missing,omitempty"`
	// Cursor is, for a call of a batch, the commit cursor at this stage: how many of the
	// batch's results are committed (they are committed in call order).
	Cursor int `json:"cursor"`
}

// MessageView is one message of a history.
type MessageView struct {
	Role string `json:"role"`
	// Seq is the event the message comes from; -1 for a pending entry.
	Seq     int         `json:"seq"`
	Blocks  []BlockView `json:"blocks"`
	Pending bool        `json:"pending,omitempty"`
	// HiddenBlocks is the number of the message's blocks left out after those shown.
	HiddenBlocks int `json:"hiddenBlocks,omitempty"`
	// Summary marks the summary message of a compaction (Seq is the compaction's); Label says
	// what it stands for ("summary of seq 0–8").
	Summary bool   `json:"summary,omitempty"`
	Label   string `json:"label,omitempty"`
}

// BlockView is one content block: text, thinking, or a tool call ("name · id · arguments").
type BlockView struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Cut is the number of bytes of the text left out (textShown are shown).
	Cut int `json:"cut,omitempty"`
}

// Actor is one of the four parties of a round trip.
type Actor struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	About string `json:"about"`
	// Events are the chosen call's events this actor produces.
	Events []int `json:"events"`
}

// BatchCall is one call of the chosen call's batch and where its round trip is in the log.
type BatchCall struct {
	Seq    int    `json:"seq"`
	CallID string `json:"callId"`
	Name   string `json:"name"`
	// Start and Result are the seqs of its tool/start and tool/result; -1 when the log has none.
	Start  int  `json:"start"`
	Result int  `json:"result"`
	Chosen bool `json:"chosen,omitempty"`
}

// chain is the chosen call's events: the assistant message that asked for it, the tool/call,
// its tool/start, its tool/result and the next model/request; -1 where the log has none. Its
// compaction is the compaction whose summary the last stage's history starts with (without a
// call, the latest of the log); -1 for none.
type chain struct {
	assistant, call, start, result, request, compaction int
}

var noChain = chain{assistant: -1, call: -1, start: -1, result: -1, request: -1, compaction: -1}

// chainOf finds the round trip of call in log.
func chainOf(log *sessionlog.Log, call sessionlog.CallInfo) chain {
	c := chain{assistant: call.Asker, call: call.Seq, start: call.Start, result: call.Result, request: -1, compaction: -1}
	if c.result >= 0 {
		c.request = log.NextRequest(c.result, c.result)
	}
	return c
}

// builder builds the View of one log; it lives for one request.
type builder struct {
	ctx  context.Context
	log  *sessionlog.Log
	lang string
	t    textFunc
	path string
	// hugeLine is the longest line decoded (see the constant).
	hugeLine int
}

// noCallError is a ?call= that names no tool/call of the log: seq, or param when it is no
// number. calls are the calls to choose from (more of them left out).
type noCallError struct {
	seq   int
	param string
	calls []CallChoice
	more  int
}

func (e *noCallError) Error() string {
	return fmt.Sprintf("no tool/call at seq %d", e.seq)
}

func choice(c sessionlog.CallInfo) CallChoice {
	return CallChoice{Seq: c.Seq, CallID: c.ID, Name: c.Name}
}

// callWindow lists the calls of log around the one at position i of log.Calls(), at most
// callsShown of them, and how many are left out.
func callWindow(log *sessionlog.Log, i int) ([]CallChoice, int) {
	calls := log.Calls()
	from := max(0, min(i-callsShown/2, len(calls)-callsShown))
	to := min(len(calls), from+callsShown)
	out := []CallChoice{}
	for _, c := range calls[from:to] {
		out = append(out, choice(c))
	}
	return out, len(calls) - len(out)
}

// build computes the view of the tool/call at callSeq (-1: the first one, or the whole log when
// there is none). It fails with a *noCallError when callSeq names no tool/call.
func (b *builder) build(callSeq int) (*View, error) {
	log, t := b.log, b.t
	calls := log.Calls()
	v := &View{Lang: b.lang, LogPath: b.path, Texts: pageTexts(b.lang), EventCount: log.Len(), CallCount: len(calls)}
	if callSeq == -1 && len(calls) > 0 {
		callSeq = calls[0].Seq
	}
	index := 0
	ch := noChain
	if callSeq != -1 {
		call, ok := log.CallAt(callSeq)
		if !ok {
			choices, more := callWindow(log, 0)
			return nil, &noCallError{seq: callSeq, calls: choices, more: more}
		}
		index = log.CallIndex(callSeq)
		c := choice(call)
		v.Call = &c
		if index > 0 {
			prev := choice(calls[index-1])
			v.PrevCall = &prev
		}
		if index+1 < len(calls) {
			next := choice(calls[index+1])
			v.NextCall = &next
		}
		ch = chainOf(log, call)
	}
	v.Calls, _ = callWindow(log, index)

	var specs []stageSpec
	if v.Call != nil {
		specs = stageSpecs(log.Len(), ch)
		v.Batch, v.BatchSize = batchOf(log, index)
		if v.BatchSize < 2 {
			v.Batch, v.BatchSize = nil, 0
		}
	} else {
		specs = []stageSpec{{actor: ActorSession, committed: log.Len()}}
	}

	// Where each stage's history comes from (a compaction's summary, then message events),
	// and the messages shown of it: the summary always, then the last ones.
	hists := make([]sessionlog.History, len(specs))
	histories := make([][]int, len(specs))
	hidden := make([]int, len(specs))
	for i, s := range specs {
		through := s.committed
		if s.derived && ch.request >= 0 {
			rq, _ := log.RequestAt(ch.request)
			through = rq.ThroughSeq + 1
		}
		h := log.HistoryThrough(through - 1)
		hists[i] = h
		k, first := h.Len(), 0
		if h.Compaction >= 0 {
			histories[i] = append(histories[i], h.Compaction)
			first = 1
		}
		from := max(first, k-(historyShown-first))
		hidden[i] = from - first
		for m := from; m < k; m++ {
			histories[i] = append(histories[i], log.HistorySeq(h, m))
		}
	}
	if len(hists) > 0 {
		ch.compaction = hists[len(hists)-1].Compaction
	}
	shown := shownSeqs(log.Len(), ch)

	// The events to read: those shown, and the messages of every stage's history.
	need := slices.Clone(shown)
	for _, h := range histories {
		need = append(need, h...)
	}
	slices.Sort(need)
	need = slices.Compact(need)

	siblings := map[int]bool{}
	for _, c := range v.Batch {
		if !c.Chosen {
			siblings[c.Seq] = true
		}
	}
	isShown := map[int]bool{}
	for _, seq := range shown {
		isShown[seq] = true
	}
	messages := map[int]MessageView{}
	events := map[int]EventView{}
	firstKept := map[int]int{} // compaction seq → its firstKeptSeq, for the huge ones
	for _, h := range hists {
		if h.Compaction >= 0 {
			firstKept[h.Compaction] = h.FirstKept
		}
	}
	err := eachEvent(b.ctx, log, b.hugeLine, need, func(e sessionlog.Event) error {
		if isShown[e.Seq] {
			events[e.Seq] = b.eventView(e, ch, siblings)
		}
		switch {
		case e.Message != nil:
			messages[e.Seq] = messageView(e)
		case e.Compaction != nil:
			messages[e.Seq] = b.summaryView(e)
		}
		return nil
	}, func(e rawEvent) error {
		if isShown[e.seq] {
			events[e.seq] = b.rawEventView(e, ch, siblings)
		}
		switch e.typ {
		case sessionlog.TypeUserMessage, sessionlog.TypeAssistantMessage, sessionlog.TypeToolResult:
			messages[e.seq] = b.rawMessageView(e, -1)
		case sessionlog.TypeCompaction:
			kept, ok := firstKept[e.seq]
			if !ok {
				kept = -1
			}
			messages[e.seq] = b.rawMessageView(e, kept)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := b.ctx.Err(); err != nil {
		return nil, err
	}
	prev := -1
	for _, seq := range shown {
		ev := events[seq]
		ev.HiddenBefore = seq - prev - 1
		v.Events = append(v.Events, ev)
		prev = seq
	}
	if v.Events == nil {
		v.Events = []EventView{}
	}
	v.HiddenAfter = log.Len() - 1 - prev

	if v.Call == nil {
		st := Stage{N: 1, Actor: ActorSession, Title: t("whole.title"), Caption: t("whole.caption"), Duty: t("whole.duty"),
			HistoryNote: t("whole.history") + b.compactedNote(hists[0]), Committed: log.Len(), History: []MessageView{}, HistoryHidden: hidden[0]}
		st.States = states(shown, log.Len())
		for _, seq := range histories[0] {
			st.History = append(st.History, messages[seq])
		}
		v.Stages = []Stage{st}
	} else {
		from, to := batchCalls(log, index)
		v.Stages = b.stages(specs, ch, *v.Call, shown, hists, histories, hidden, messages, from, to)
	}
	v.Actors = actors(ch, t)
	return v, nil
}

// shownSeqs returns the seqs of the events a view shows, in order: all of a short log; of a
// long one, those around each event of the round trip ch (or the first and last events of a
// log without calls).
func shownSeqs(n int, ch chain) []int {
	if n <= allEventsUpTo {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	type span struct{ from, to int }
	var spans []span
	if ch.call < 0 {
		spans = []span{{0, eventContext * 5}, {n - eventContext*5, n}}
		if ch.compaction >= 0 {
			spans = append(spans, span{max(0, ch.compaction-eventContext), min(n, ch.compaction+eventContext+1)})
		}
	} else {
		for _, seq := range []int{ch.assistant, ch.call, ch.start, ch.result, ch.request, ch.compaction} {
			if seq >= 0 {
				spans = append(spans, span{max(0, seq-eventContext), min(n, seq+eventContext+1)})
			}
		}
		if ch.result < 0 || ch.request < 0 {
			// A stage that is missing stands at the end of the log: show the end.
			spans = append(spans, span{n - eventContext, n})
		}
	}
	var out []int
	for _, s := range spans {
		for seq := s.from; seq < s.to; seq++ {
			out = append(out, seq)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// states is the state of each shown event when the events before committed are committed.
func states(shown []int, committed int) []string {
	out := make([]string, len(shown))
	for i, seq := range shown {
		out[i] = StatePlanned
		if seq < committed {
			out[i] = StateCommitted
		}
	}
	return out
}

// batchCalls returns the calls of log asked for by the same assistant message as the call at
// position i of log.Calls(), as positions [from, to) of log.Calls(): a batch is logged together.
func batchCalls(log *sessionlog.Log, i int) (from, to int) {
	calls := log.Calls()
	asker := calls[i].Asker
	if asker < 0 {
		return i, i + 1
	}
	from, to = i, i+1
	for from > 0 && calls[from-1].Asker == asker {
		from--
	}
	for to < len(calls) && calls[to].Asker == asker {
		to++
	}
	return from, to
}

// batchOf lists the batch of the call at position i of log.Calls() (at most batchShown calls
// around it) and the number of calls in the batch.
func batchOf(log *sessionlog.Log, i int) ([]BatchCall, int) {
	from, to := batchCalls(log, i)
	lo := max(from, min(i-batchShown/2, to-batchShown))
	hi := min(to, lo+batchShown)
	var out []BatchCall
	for j, c := range log.Calls()[lo:hi] {
		out = append(out, BatchCall{Seq: c.Seq, CallID: c.ID, Name: c.Name, Start: c.Start, Result: c.Result, Chosen: lo+j == i})
	}
	return out, to - from
}

func (b *builder) eventView(e sessionlog.Event, ch chain, siblings map[int]bool) EventView {
	payload := payload(e)
	v := EventView{Seq: e.Seq, Line: e.Line, Type: string(e.Type), Summary: cut(summary(e, b.lang), summaryShown),
		Payload: cut(payload, payloadShown), Actor: producer(e.Type), SourceEventSeqs: e.SourceEventSeqs, Ignorable: e.Ignorable}
	if len(payload) > payloadShown {
		v.PayloadCut = len(payload) - len(strings.TrimSuffix(v.Payload, "…"))
	}
	if c := e.Compaction; c != nil {
		cv := &CompactionView{Reason: c.Reason, TokensBefore: c.TokensBefore, FirstKeptSeq: c.FirstKeptSeq}
		cv.Summary, cv.SummaryCut = cutCount(c.Summary, textShown)
		cv.ReadFiles, cv.ReadHidden = fileList(c.ReadFiles)
		cv.ChangedFiles, cv.ChangedHidden = fileList(c.ChangedFiles)
		v.Compaction = cv
	}
	v.Focus = focusOf(e.Seq, ch, siblings)
	return v
}

// focusOf is the part of the event at seq in the round trip ch (EventView.Focus).
func focusOf(seq int, ch chain, siblings map[int]bool) string {
	switch seq {
	case ch.assistant:
		return "assistant"
	case ch.call:
		return "call"
	case ch.start:
		return "start"
	case ch.result:
		return "result"
	case ch.request:
		return "request"
	case ch.compaction:
		return "compaction"
	}
	if siblings[seq] {
		return "sibling"
	}
	return ""
}

// cutCount is cut(s, n) and the number of bytes of s it left out.
func cutCount(s string, n int) (string, int) {
	shown := cut(s, n)
	return shown, len(s) - len(strings.TrimSuffix(shown, "…"))
}

// fileList is the first filesShown names of a compaction's list of files, each cut, and the
// number left out.
func fileList(names []string) ([]string, int) {
	out := []string{}
	for _, n := range names[:min(len(names), filesShown)] {
		out = append(out, cut(n, summaryShown))
	}
	return out, len(names) - len(out)
}

// producer is the actor that makes an event of type t. A tool/start is the tool runtime's: it
// logs it just before the tool's body runs. A compaction is the session's: it replaces the
// history before its cut with a summary.
func producer(t sessionlog.Type) string {
	switch t {
	case sessionlog.TypeAssistantMessage:
		return ActorModel
	case sessionlog.TypeToolStart, sessionlog.TypeToolResult:
		return ActorTool
	case sessionlog.TypeUserMessage, sessionlog.TypeToolCall, sessionlog.TypeModelRequest, sessionlog.TypeTurnStart, sessionlog.TypeTurnEnd:
		return ActorAgent
	case sessionlog.TypeCompaction:
		return ActorSession
	}
	return ActorSession
}

// summary is an event on one line, in lang, as the payload view's entry and the comparison
// show it (uncut).
func summary(e sessionlog.Event, lang string) string {
	t := texts(lang)
	switch {
	case e.Message != nil:
		s := transcript.DescribeMessage(e.Message)
		if len(e.SourceEventSeqs) > 0 {
			s += fmt.Sprintf("  ← seq %d", e.SourceEventSeqs[0])
		}
		return s
	case e.Type == sessionlog.TypeToolStart:
		return t("summary.start", e.Call.Name, e.Call.CallID, e.SourceEventSeqs[0])
	case e.Call != nil:
		return fmt.Sprintf("%s(%s %s)", e.Call.Name, e.Call.CallID, e.Call.Arguments)
	case e.Request != nil:
		if e.Request.Messages == 1 {
			return t("summary.request.one", e.Request.ThroughSeq)
		}
		return t("summary.request", e.Request.Messages, e.Request.ThroughSeq)
	case e.Compaction != nil:
		c := e.Compaction
		// The summary last, so that a cut summary line loses only its end.
		return t("summary.compaction", c.Reason, c.TokensBefore, c.FirstKeptSeq, len(c.ReadFiles), len(c.ChangedFiles), c.Summary)
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

// stageSpec is where a stage stands in the log.
type stageSpec struct {
	actor     string
	committed int  // the events with seq < committed are committed
	missing   bool // the stage's event is not in the log
	derived   bool // the history is deriveMessages' projection for the request, not a preview
}

// stageSpecs places the six stages of the round trip ch in a log of n events; a missing event
// leaves its stage at the end of the log.
func stageSpecs(n int, ch chain) []stageSpec {
	at := func(seq, plus int) (int, bool) {
		if seq < 0 {
			return n, true
		}
		return seq + plus, false
	}
	c1, m1 := at(ch.assistant, 1)
	c3, m3 := at(ch.result, 0)
	c4, m4 := at(ch.result, 1)
	c5, m5 := at(ch.request, 0)
	c6, m6 := at(ch.request, 1)
	return []stageSpec{
		{actor: ActorModel, committed: c1, missing: m1},
		{actor: ActorAgent, committed: ch.call + 1},
		{actor: ActorTool, committed: c3, missing: m3},
		{actor: ActorSession, committed: c4, missing: m4},
		{actor: ActorSession, committed: c5, missing: m5 || m4, derived: true},
		{actor: ActorAgent, committed: c6, missing: m6 || m4, derived: true},
	}
}

// stages computes the six stages of the round trip ch of call from their specs, with the
// histories (message seqs, hidden counts) computed for them and the calls of its batch
// (positions [batchFrom, batchTo) of the log's calls).
func (b *builder) stages(specs []stageSpec, ch chain, call CallChoice, shown []int, hists []sessionlog.History, histories [][]int, hidden []int,
	messages map[int]MessageView, batchFrom, batchTo int) []Stage {
	t := b.t
	through := -1
	if ch.request >= 0 {
		rq, _ := b.log.RequestAt(ch.request)
		through = rq.ThroughSeq
	}
	args := []any{call.Name, call.CallID, ch.assistant, ch.call, ch.result, ch.request, ch.start, through}
	batch := b.log.Calls()[batchFrom:batchTo]
	var out []Stage
	for i, s := range specs {
		// A log with the call's tool/start (chapter 10 on) gets the stage 3 texts that name it.
		started := ""
		if i == 2 && ch.start >= 0 {
			started = ".started"
		}
		st := Stage{N: i + 1, Actor: s.actor, Missing: s.missing, Committed: s.committed,
			Title:         t(fmt.Sprintf("stage%d.title", i+1)),
			Caption:       t(fmt.Sprintf("stage%d.caption%s", i+1, started), args...),
			Duty:          t(fmt.Sprintf("stage%d.duty", i+1), args...),
			HistoryHidden: hidden[i], History: []MessageView{}}
		if s.missing {
			st.Caption = t(fmt.Sprintf("stage%d.missing%s", i+1, started), args...)
		}
		st.States = states(shown, s.committed)
		for _, seq := range histories[i] {
			st.History = append(st.History, messages[seq])
		}
		if ch.result < 0 || ch.result >= s.committed {
			st.History = append(st.History, MessageView{Role: string(tinypi.RoleToolResult), Seq: -1, Pending: true,
				Blocks: []BlockView{{Kind: "text", Text: t("pending.result", call.CallID)}}})
		}
		for _, c := range batch {
			if c.Result >= 0 && c.Result < s.committed {
				st.Cursor++
			}
		}
		st.HistoryNote = t(fmt.Sprintf("stage%d.history", i+1), args...)
		if h := hists[i]; h.Compaction >= 0 && ch.result >= 0 && ch.result < s.committed && ch.result < h.FirstKept {
			// The result was committed, then compacted: only the summary speaks of it.
			st.HistoryNote = t("history.summarized", h.Compaction, h.FirstKept, call.CallID, ch.result)
		} else {
			st.HistoryNote += b.compactedNote(h)
		}
		out = append(out, st)
	}
	return out
}

// compactedNote is what a history note adds when the history starts with a compaction's
// summary: "" when it does not.
func (b *builder) compactedNote(h sessionlog.History) string {
	if h.Compaction < 0 {
		return ""
	}
	return " " + b.t("history.compacted", h.Compaction, h.FirstKept)
}

// summaryView renders the summary message of the compaction e as the history shows it: the
// message DeriveMessages puts first, marked as a summary and labelled with what it stands for.
func (b *builder) summaryView(e sessionlog.Event) MessageView {
	mv := messageView(sessionlog.Event{Seq: e.Seq, Message: sessionlog.SummaryMessage(e)})
	mv.Summary = true
	if kept := e.Compaction.FirstKeptSeq; kept > 0 {
		mv.Label = b.t("history.summary", kept-1)
	} else {
		mv.Label = b.t("history.summary.nothing")
	}
	return mv
}

// messageView renders the message of e, each text cut to textShown bytes.
func messageView(e sessionlog.Event) MessageView {
	mv := MessageView{Role: string(e.Message.MessageRole()), Seq: e.Seq, Blocks: []BlockView{}}
	budget := messageShown
	block := func(kind, text string) {
		if len(mv.Blocks) >= blocksShown || budget <= 0 {
			mv.HiddenBlocks++
			return
		}
		shown := cut(text, min(textShown, budget))
		budget -= len(shown)
		bv := BlockView{Kind: kind, Text: shown}
		if kept := len(strings.TrimSuffix(shown, "…")); kept < len(text) {
			bv.Cut = len(text) - kept
		}
		mv.Blocks = append(mv.Blocks, bv)
	}
	var content []tinypi.ContentBlock
	switch m := e.Message.(type) {
	case tinypi.UserMessage:
		content = m.Content
	case tinypi.AssistantMessage:
		content = m.Content
	case tinypi.ToolResultMessage:
		block("ref", "toolCallId = "+m.ToolCallID)
		content = m.Content
	}
	for _, c := range content {
		switch c := c.(type) {
		case tinypi.TextContent:
			block("text", c.Text)
		case tinypi.ThinkingContent:
			block("thinking", c.Thinking)
		case tinypi.ToolCall:
			block("call", c.Name+" · "+c.ID+" · "+c.Arguments)
		}
	}
	return mv
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
	session := only(ch.assistant, ch.call, ch.start, ch.result, ch.compaction)
	slices.Sort(session)
	sessionAbout := t("actor.session.about")
	if ch.compaction >= 0 {
		sessionAbout += " " + t("actor.session.compaction")
	}
	return []Actor{
		{ID: ActorModel, Name: t("actor.model"), About: t("actor.model.about"), Events: only(ch.assistant)},
		{ID: ActorAgent, Name: t("actor.agent"), About: t("actor.agent.about"), Events: only(ch.call, ch.request)},
		{ID: ActorTool, Name: t("actor.tool"), About: t("actor.tool.about"), Events: only(ch.start, ch.result)},
		{ID: ActorSession, Name: t("actor.session"), About: sessionAbout, Events: session},
	}
}
