package tinypi

import (
	"context"
	"regexp"
)

// This file is the agent loop's side of compaction (chapter 11): what RunAgentLoop does when
// AgentLoopOptions.Compaction is set along with a Session. The loop calls it from two places:
// compactBeforeRequest before each turn, retryAfterOverflow after a model turn.

// CompactionEvent (chapter 11) reports one attempt to compact the run's session: Compaction is
// what was logged, or nil when the attempt failed, and Error says why (the session is then
// unchanged). An attempt at the threshold that fails does not stop the run; the request is made
// as it is.
type CompactionEvent struct {
	Reason     string
	Compaction *Compaction
	Error      string
}

// EventType implements LoopEvent.
func (CompactionEvent) EventType() string { return "compaction" }

func (CompactionEvent) isLoopEvent() {}

// contextOverflow matches what providers say when a request does not fit the model's context
// window (OpenAI "context_length_exceeded" and "maximum context length", Anthropic "prompt is too
// long", others "exceeds the context window" or "too many tokens").
var contextOverflow = regexp.MustCompile(`(?i)context[ _]length|context window|maximum context|prompt is too long|too many (input )?tokens|input is too long`)

// IsContextOverflow reports whether a model turn failed because its request was too long for the
// model's context window: stop reason error, and an error message that says so.
func IsContextOverflow(a AssistantMessage) bool {
	return a.StopReason == StopReasonError && contextOverflow.MatchString(a.ErrorMessage)
}

// compactionOptions returns the run's compaction options with the run's model as the summary
// model when none is set, and false when the run does not compact (no options or no session).
func (r *loopRun) compactionOptions() (CompactionOptions, bool) {
	if r.opts.Compaction == nil || r.opts.Session == nil {
		return CompactionOptions{}, false
	}
	opts := *r.opts.Compaction
	if opts.Model == nil {
		opts.Model = r.opts.Model
	}
	return opts, true
}

// compact makes one compaction attempt and reports it; it reports whether the log changed.
func (r *loopRun) compact(ctx context.Context, opts CompactionOptions, reason string) bool {
	c, err := r.opts.Session.Compact(ctx, opts, reason)
	if err != nil {
		r.emit(CompactionEvent{Reason: reason, Error: err.Error()})
		return false
	}
	r.emit(CompactionEvent{Reason: reason, Compaction: &c})
	return true
}

// compactBeforeRequest compacts the session before a turn opens when its context has passed the
// threshold (CompactionOptions.ShouldCompact of Session.ContextTokens).
func (r *loopRun) compactBeforeRequest(ctx context.Context) {
	opts, ok := r.compactionOptions()
	if !ok {
		return
	}
	//lab:begin 11.6
	if opts.ShouldCompact(r.opts.Session.ContextTokens()) {
		r.compact(ctx, opts, CompactionThreshold)
	}
	//lab:stub
	//	_ = opts
	//	panic(LAB_PENDING)
	//lab:end
}

// retryAfterOverflow is asked about every model turn's assistant message before it is appended.
// When the model refused the request as too long for its context, it compacts the session
// (reason overflow) inside the open turn and asks once more: the turn logs a second
// model/request, and the refusal is neither logged nor kept in the transcript. It retries once:
// when the compaction fails, or the second answer is refused again, that answer is what the turn
// returns, and the run ends with error as for any failed turn.
func (r *loopRun) retryAfterOverflow(ctx context.Context, assistant AssistantMessage) AssistantMessage {
	opts, ok := r.compactionOptions()
	if !ok || !IsContextOverflow(assistant) {
		return assistant
	}
	//lab:begin 11.6
	if !r.compact(ctx, opts, CompactionOverflow) {
		return assistant
	}
	messages, err := r.opts.Session.ModelRequest(ctx)
	if err != nil {
		return failedTurn(err)
	}
	//chapter:begin 12
	if messages, err = r.transformContext(ctx, messages); err != nil {
		return failedTurn(err)
	}
	//chapter:end
	stream := r.opts.Model.Stream(ctx, Request{
		SystemPrompt: r.opts.Context.SystemPrompt,
		Messages:     messages,
		Tools:        r.opts.Tools.Definitions(),
	})
	for event := range stream.All() {
		r.emit(ModelEvent{Event: event})
	}
	retried, err := stream.Result()
	if err != nil {
		return failedTurn(err)
	}
	return retried
	//lab:stub
	//	_ = opts
	//	panic(LAB_PENDING)
	//lab:end
}
