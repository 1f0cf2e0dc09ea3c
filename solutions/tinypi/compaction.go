package tinypi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file is chapter 11: context compaction. A long session outgrows the model's context
// window; compaction asks the model for a summary of the older part of the log and logs it as a
// compaction event. From then on the log derives, for every request, the summary followed by the
// recent messages, kept verbatim. The events before the summary stay on disk: nothing is deleted.

// Compaction is the payload of a compaction event: the summary of the messages before
// FirstKeptSeq, and the files the session has read and changed, across every compaction so far.
type Compaction struct {
	// Summary is the model's summary of everything before FirstKeptSeq (the previous summary
	// included). Never empty.
	Summary string
	// FirstKeptSeq is the seq of the first event whose message is kept verbatim: one of the log's
	// CutPoints when the compaction was logged.
	FirstKeptSeq int
	// TokensBefore is the session's ContextTokens just before the compaction.
	TokensBefore int
	// Reason is CompactionThreshold, CompactionOverflow or CompactionManual.
	Reason string
	// ReadFiles and ChangedFiles are sorted and hold each path once; a changed file is not also
	// listed as read.
	ReadFiles    []string
	ChangedFiles []string
}

// Why a compaction was made (Compaction.Reason).
const (
	// CompactionThreshold: before a request, the context passed ContextWindow - ReserveTokens.
	CompactionThreshold = "threshold"
	// CompactionOverflow: the model refused a request because its context was too long.
	CompactionOverflow = "overflow"
	// CompactionManual: the caller asked for it (Session.Compact outside a run).
	CompactionManual = "manual"
)

// knownCompactionReason reports whether r is one of the three reasons.
func knownCompactionReason(r string) bool {
	return r == CompactionThreshold || r == CompactionOverflow || r == CompactionManual
}

func (c *Compaction) clone() *Compaction {
	if c == nil {
		return nil
	}
	out := *c
	out.ReadFiles = slices.Clone(c.ReadFiles)
	out.ChangedFiles = slices.Clone(c.ChangedFiles)
	return &out
}

// Defaults of CompactionOptions.
const (
	// DefaultReserveTokens is left free for the model's answer: a request is compacted when its
	// context would leave less than this much of the window.
	DefaultReserveTokens = 16384
	// DefaultKeepRecentTokens is about how much of the recent conversation a compaction keeps
	// verbatim.
	DefaultKeepRecentTokens = 20000
)

// CompactionOptions says when and how a session is compacted.
type CompactionOptions struct {
	// Model writes the summaries. In a run (AgentLoopOptions.Compaction) nil means the run's model.
	Model Model
	// ContextWindow is the model's context window in tokens; zero turns compaction before a
	// request off (an overflow is still compacted once).
	ContextWindow int
	// ReserveTokens is kept free for the answer; zero means DefaultReserveTokens.
	ReserveTokens int
	// KeepRecentTokens is how many tokens of recent messages a compaction aims to keep; zero
	// means DefaultKeepRecentTokens.
	KeepRecentTokens int
}

func (o CompactionOptions) reserve() int {
	if o.ReserveTokens == 0 {
		return DefaultReserveTokens
	}
	return o.ReserveTokens
}

func (o CompactionOptions) keepRecent() int {
	if o.KeepRecentTokens == 0 {
		return DefaultKeepRecentTokens
	}
	return o.KeepRecentTokens
}

// EstimateTokens is the stated estimate of a message's size in tokens when no provider has
// counted it: the UTF-8 bytes of its text, thinking, tool call names and arguments, and tool
// result content, divided by four and rounded up. It overestimates English a little and
// underestimates Chinese; it only has to be in the right range, since a provider's own count
// replaces it as soon as there is one (ContextTokens).
func EstimateTokens(m Message) int {
	//lab:begin 11.1
	bytes := 0
	count := func(blocks []ContentBlock) {
		for _, b := range blocks {
			switch b := b.(type) {
			case TextContent:
				bytes += len(b.Text)
			case ThinkingContent:
				bytes += len(b.Thinking)
			case ToolCall:
				bytes += len(b.Name) + len(b.Arguments)
			}
		}
	}
	switch m := m.(type) {
	case UserMessage:
		count(m.Content)
	case AssistantMessage:
		count(m.Content)
	case ToolResultMessage:
		count(m.Content)
	}
	return (bytes + 3) / 4
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// ContextTokens estimates the context of a request holding messages. The last assistant message
// at index usableFrom or later that did not fail (stop reason neither error nor aborted) and
// whose usage counted something (input + cache read + cache write + output is not zero) counted
// the context it answered: that sum is taken as the size of everything up to and including it,
// and EstimateTokens is added for each message after it. Without such a message every message is estimated. Messages before usableFrom have usage
// that counted a context that no longer exists (they were kept across a compaction).
func ContextTokens(messages []Message, usableFrom int) int {
	//lab:begin 11.1
	total, from := 0, 0
	for i := len(messages) - 1; i >= usableFrom && i >= 0; i-- {
		a, ok := messages[i].(AssistantMessage)
		if !ok || a.StopReason == StopReasonError || a.StopReason == StopReasonAborted {
			continue
		}
		u := a.Usage
		if counted := u.Input + u.CacheRead + u.CacheWrite + u.Output; counted > 0 {
			total, from = counted, i+1
			break
		}
	}
	for _, m := range messages[from:] {
		total += EstimateTokens(m)
	}
	return total
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// ShouldCompact reports whether a context of tokens leaves less than ReserveTokens of the
// window: tokens > ContextWindow - ReserveTokens. A zero ContextWindow never compacts.
func (o CompactionOptions) ShouldCompact(tokens int) bool {
	//lab:begin 11.1
	return o.ContextWindow > 0 && tokens > o.ContextWindow-o.reserve()
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// latestCompaction returns the index in events of the last compaction event, or -1.
func latestCompaction(events []SessionEvent) int {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == EventCompaction && events[i].Compaction != nil {
			return i
		}
	}
	return -1
}

// CutPoints returns, in order, the seqs at which a compaction of events may start keeping
// messages verbatim (FirstKeptSeq). Seq c is a cut point when
//
//   - events[c] is a user/message outside a turn, or a turn/start right after a turn/end (a
//     turn that goes on with a run: the first turn after a prompt starts at the prompt);
//   - c is after the latest compaction's FirstKeptSeq (0 without one), so that the summary has
//     something new to cover;
//   - every tool/call before c has its tool/result before c: a cut never separates a call from
//     its result.
//
// events is a whole log: events[i].Seq == i.
func CutPoints(events []SessionEvent) []int {
	//lab:begin 11.2
	from := 0
	if i := latestCompaction(events); i >= 0 {
		from = events[i].Compaction.FirstKeptSeq
	}
	var cuts []int
	inTurn := false
	unanswered := map[int]bool{} // the seqs of the calls logged so far without a result
	for c, e := range events {
		candidate := false
		switch e.Type {
		case EventUserMessage:
			candidate = !inTurn
		case EventTurnStart:
			candidate = c > 0 && events[c-1].Type == EventTurnEnd
		}
		if candidate && c > from && len(unanswered) == 0 {
			cuts = append(cuts, c)
		}
		switch e.Type {
		case EventTurnStart:
			inTurn = true
		case EventTurnEnd:
			inTurn = false
		case EventToolCall:
			unanswered[c] = true
		case EventToolResult:
			if len(e.SourceEventSeqs) == 1 {
				delete(unanswered, e.SourceEventSeqs[0])
			}
		}
	}
	return cuts
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// FindCut chooses where a compaction of events starts keeping messages: the latest cut point
// whose kept messages (those of the events from the cut on) estimate at keepTokens or more, so
// that at least keepTokens are kept and as much as possible is summarised; when no cut keeps
// that much, the earliest cut point. ok is false when events have no cut point.
func FindCut(events []SessionEvent, keepTokens int) (cut int, ok bool) {
	//lab:begin 11.2
	cuts := CutPoints(events)
	if len(cuts) == 0 {
		return 0, false
	}
	// kept[i] is the estimate of the messages of events[i:], summed from the end.
	kept := make([]int, len(events)+1)
	for i := len(events) - 1; i >= 0; i-- {
		kept[i] = kept[i+1]
		if _, isMessage := messageRole(events[i].Type); isMessage {
			kept[i] += EstimateTokens(events[i].Message)
		}
	}
	for _, c := range slices.Backward(cuts) {
		if kept[c] >= keepTokens {
			return c, true
		}
	}
	return cuts[0], true
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// FilesTouched returns the files the session read and changed: those of prevRead and
// prevChanged (a previous compaction's lists), plus, for each tool/call with a seq in
// [from, to) whose tool/result did not fail (IsError false), the "path" argument of a read call
// (read) or of a write or edit call (changed), cleaned with path.Clean. A call without a
// string "path" is left out; a result is found by its sourceEventSeqs, never by call ID (a
// provider may reuse IDs). A file that was changed is not listed as read. Both lists are
// sorted and hold each path once; the inputs are not changed.
func FilesTouched(events []SessionEvent, from, to int, prevRead, prevChanged []string) (read, changed []string) {
	//lab:begin 11.3
	succeeded := map[int]bool{}
	for _, e := range events {
		if e.Type == EventToolResult && len(e.SourceEventSeqs) == 1 {
			if r, ok := e.Message.(ToolResultMessage); ok && !r.IsError {
				succeeded[e.SourceEventSeqs[0]] = true
			}
		}
	}
	readSet, changedSet := map[string]bool{}, map[string]bool{}
	for _, p := range prevRead {
		readSet[p] = true
	}
	for _, p := range prevChanged {
		changedSet[p] = true
	}
	for _, e := range events {
		if e.Type != EventToolCall || e.Call == nil || e.Seq < from || e.Seq >= to || !succeeded[e.Seq] {
			continue
		}
		var args struct {
			Path *string `json:"path"`
		}
		if json.Unmarshal([]byte(e.Call.Arguments), &args) != nil || args.Path == nil || *args.Path == "" {
			continue
		}
		p := path.Clean(*args.Path)
		switch e.Call.Name {
		case "read":
			readSet[p] = true
		case "write", "edit":
			changedSet[p] = true
		}
	}
	for p := range changedSet {
		delete(readSet, p)
		changed = append(changed, p)
	}
	for p := range readSet {
		read = append(read, p)
	}
	slices.Sort(read)
	slices.Sort(changed)
	return read, changed
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// CompactionSummaryMessage is the message a compaction puts first in every later request: a user
// message holding the summary and the file lists, stamped with the compaction event's time in
// milliseconds (0 when the event has no time).
func CompactionSummaryMessage(e SessionEvent) UserMessage {
	c := e.Compaction
	list := func(files []string) string {
		if len(files) == 0 {
			return "(none)"
		}
		return strings.Join(files, ", ")
	}
	text := "The conversation before this point was compacted into the summary below.\n\n<summary>\n" +
		c.Summary + "\n</summary>\n\nFiles read: " + list(c.ReadFiles) + "\nFiles changed: " + list(c.ChangedFiles)
	var at int64 // an event read from a line without a time has none
	if !e.Time.IsZero() {
		at = e.Time.UnixMilli()
	}
	return UserMessage{Content: []ContentBlock{Text(text)}, Timestamp: at}
}

// fromLatestCompaction is where DeriveMessages starts: when events hold a compaction event, the
// summary message, and the events from the compaction's FirstKeptSeq on (those before it add no
// message); otherwise no message, and all the events.
func fromLatestCompaction(events []SessionEvent) ([]SessionEvent, []Message) {
	i := latestCompaction(events)
	if i < 0 {
		return events, nil
	}
	//lab:begin 11.4
	first := events[i].Compaction.FirstKeptSeq
	kept, _ := slices.BinarySearchFunc(events, first, func(e SessionEvent, seq int) int { return e.Seq - seq })
	return events[kept:], []Message{CompactionSummaryMessage(events[i])}
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// rederiveAfterCompactionLocked drops the cached projection when an event not yet projected is a
// compaction: the messages before it are no longer derived, so the cache cannot be extended.
func (s *Session) rederiveAfterCompactionLocked() {
	if latestCompaction(s.events[s.derivedThrough:]) < 0 {
		return
	}
	//lab:begin 11.4
	s.derived = DeriveMessages(slices.Concat(s.base, s.events))
	s.baseDerived, s.derivedThrough = true, len(s.events)
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// logLocked returns the whole log, inherited events first. The events are shared: read only.
func (s *Session) logLocked() []SessionEvent {
	if len(s.base) == 0 {
		return s.events
	}
	return slices.Concat(s.base, s.events)
}

// checkCompactionLocked is checkLocked's rule for a compaction event, given the log before it.
func (s *Session) checkCompactionLocked(e SessionEvent) error {
	c := e.Compaction
	switch {
	case c == nil:
		return refuse("a compaction event needs its compaction")
	case strings.TrimSpace(c.Summary) == "":
		return refuse("a compaction event needs a summary")
	case !knownCompactionReason(c.Reason):
		return refuse("compaction reason %q is not %q, %q or %q", c.Reason, CompactionThreshold, CompactionOverflow, CompactionManual)
	case c.TokensBefore < 0:
		return refuse("a compaction's tokensBefore is %d, not a count", c.TokensBefore)
	case slices.Contains(c.ReadFiles, "") || slices.Contains(c.ChangedFiles, ""):
		return refuse("a compaction lists a file without a name")
	}
	if !slices.Contains(CutPoints(s.logLocked()), c.FirstKeptSeq) {
		return refuse("compaction firstKeptSeq %d is not a cut point of the log (a user/message outside a turn or a turn/start after a turn/end, with every earlier call answered before it)", c.FirstKeptSeq)
	}
	return nil
}

// ContextTokens is the size of the session's next request as ContextTokens counts it: the
// messages the log derives, with usage taken only from assistant messages logged after the
// latest compaction.
func (s *Session) ContextTokens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.contextTokensLocked()
}

func (s *Session) contextTokensLocked() int {
	messages := s.messagesLocked()
	log := s.logLocked()
	i := latestCompaction(log)
	if i < 0 {
		return ContextTokens(messages, 0)
	}
	// The summary, then one message per message event from FirstKeptSeq through the compaction.
	usable := 1
	for _, e := range log[log[i].Compaction.FirstKeptSeq:i] {
		if _, ok := messageRole(e.Type); ok {
			usable++
		}
	}
	return ContextTokens(messages, usable)
}

// ErrNothingToCompact is returned by Session.Compact when the log has no cut point: nothing
// before the recent messages can be summarised yet.
var ErrNothingToCompact = errors.New("tinypi: session: nothing to compact (the log has no cut point)")

// CompactionSystemPrompt is the system prompt of a summary request.
const CompactionSystemPrompt = "You summarise a conversation between a user and a coding agent so that the agent can continue the work from the summary alone. Keep the user's goals and constraints, decisions made and why, what was done, the state of the work, errors met and what is left to do. Name files, functions and commands exactly. Do not invent anything."

// CompactionInstruction ends the message of a summary request, after the conversation.
const CompactionInstruction = "Summarise the conversation above for the agent that continues it. When it begins with an earlier summary, merge that summary into yours. Answer with the summary only."

// CompactionResultChars bounds what a summary request shows of each tool result: its first
// CompactionResultChars characters (runes), then one line saying how many more there were. One read
// of a large log would otherwise make the summary request as long as the request it is meant to
// shorten, and the model would refuse it too. The summary needs what a result was about, not all of
// it, and the file lists keep the name of what was read.
const CompactionResultChars = 2000

// cutForSummary returns text when it has at most CompactionResultChars characters; otherwise its
// first CompactionResultChars characters and the line "[... N more characters left out]".
func cutForSummary(text string) string {
	n := 0
	for i := range text {
		if n == CompactionResultChars {
			return text[:i] + fmt.Sprintf("\n[... %d more characters left out]", utf8.RuneCountInString(text[i:]))
		}
		n++
	}
	return text
}

// ConversationText renders messages as plain text, for a summary request: each message is a
// header line ("[user]", "[assistant]", "[result of NAME]" or "[result of NAME, failed]") and its
// text, an assistant's tool calls each on a line "(call NAME ARGUMENTS)", messages separated by a
// blank line. Thinking is left out, and a tool result's text is cut to CompactionResultChars
// characters; the rest is written whole.
func ConversationText(messages []Message) string {
	var b strings.Builder
	for i, m := range messages {
		if i > 0 {
			b.WriteString("\n\n")
		}
		switch m := m.(type) {
		case UserMessage:
			b.WriteString("[user]\n" + TextOf(m.Content))
		case AssistantMessage:
			b.WriteString("[assistant]")
			for _, block := range m.Content {
				switch block := block.(type) {
				case TextContent:
					b.WriteString("\n" + block.Text)
				case ToolCall:
					b.WriteString("\n(call " + block.Name + " " + block.Arguments + ")")
				}
			}
		case ToolResultMessage:
			failed := ""
			if m.IsError {
				failed = ", failed"
			}
			b.WriteString("[result of " + m.ToolName + failed + "]\n" + cutForSummary(TextOf(m.Content)))
		}
	}
	return b.String()
}

// CompactionRequest is the summary request for messages: CompactionSystemPrompt, no tools, and
// one user message holding the messages as ConversationText between <conversation> tags, then
// CompactionInstruction. The conversation is sent as text, not as the messages themselves: a
// request that holds tool calls and results but defines no tools is refused by some providers
// (Anthropic's among them), and a summary request must not call tools.
func CompactionRequest(messages []Message) Request {
	text := "<conversation>\n" + ConversationText(messages) + "\n</conversation>\n\n" + CompactionInstruction
	return Request{SystemPrompt: CompactionSystemPrompt, Messages: []Message{UserText(text)}}
}

// Compact summarises the older part of the log and logs a compaction event. It flushes the log
// (a summary request is a model request: what it holds is on disk), chooses the cut with
// FindCut(log, KeepRecentTokens) and asks opts.Model for a summary of what the log derives before
// the cut (the previous summary first, when there is one): the request is CompactionRequest of
// those messages. The compaction carries the files of FilesTouched (the previous
// compaction's lists merged with the calls since its FirstKeptSeq) and TokensBefore, the
// session's ContextTokens before it.
//
// Compact changes the log only when it succeeds: a flush that fails, no cut point
// (ErrNothingToCompact), a model that fails, is cancelled or answers without text, all return an
// error and log nothing. Events may be appended while the model works; they are kept.
func (s *Session) Compact(ctx context.Context, opts CompactionOptions, reason string) (Compaction, error) {
	if opts.Model == nil {
		return Compaction{}, errors.New("tinypi: session: Compact needs CompactionOptions.Model")
	}
	if !knownCompactionReason(reason) {
		return Compaction{}, fmt.Errorf("tinypi: session: compaction reason %q is not %q, %q or %q", reason, CompactionThreshold, CompactionOverflow, CompactionManual)
	}
	//lab:begin 11.5
	if err := s.Flush(ctx); err != nil {
		return Compaction{}, fmt.Errorf("tinypi: session: flushing before the summary request: %w", err)
	}
	s.mu.Lock()
	log := s.logLocked()
	cut, ok := FindCut(log, opts.keepRecent())
	if !ok {
		s.mu.Unlock()
		return Compaction{}, ErrNothingToCompact
	}
	c := Compaction{Reason: reason, FirstKeptSeq: cut, TokensBefore: s.contextTokensLocked()}
	from := 0
	var prevRead, prevChanged []string
	if i := latestCompaction(log); i >= 0 {
		prev := log[i].Compaction
		from, prevRead, prevChanged = prev.FirstKeptSeq, prev.ReadFiles, prev.ChangedFiles
	}
	c.ReadFiles, c.ChangedFiles = FilesTouched(log, from, cut, prevRead, prevChanged)
	older := log[:cut]
	if i := latestCompaction(log); i >= cut {
		// The latest compaction was logged after the cut: the model sees that part as its
		// summary and the messages it kept, so that is what is summarised again.
		older = slices.Concat(older, log[i:i+1])
	}
	messages := DeriveMessages(older)
	s.mu.Unlock()
	stream := opts.Model.Stream(ctx, CompactionRequest(messages))
	for range stream.All() {
	}
	answer, err := stream.Result()
	if err == nil && (answer.StopReason == StopReasonError || answer.StopReason == StopReasonAborted) {
		err = fmt.Errorf("the model stopped with %s: %s", answer.StopReason, answer.ErrorMessage)
	}
	if err != nil {
		return Compaction{}, fmt.Errorf("tinypi: session: the summary request failed, nothing was compacted: %w", err)
	}
	var text strings.Builder
	for _, b := range answer.Content {
		if t, ok := b.(TextContent); ok {
			text.WriteString(t.Text)
		}
	}
	c.Summary = strings.TrimSpace(text.String())
	if c.Summary == "" {
		return Compaction{}, errors.New("tinypi: session: the summary request answered without text, nothing was compacted")
	}
	if _, err := s.Append(SessionEvent{Type: EventCompaction, Compaction: &c}); err != nil {
		return Compaction{}, err
	}
	return c, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}
