package tinypi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// RunReason says why RunAgentLoop returned.
type RunReason string

// The reasons a run ends.
const (
	// RunStop: the model answered without asking for tools.
	RunStop RunReason = "stop"
	// RunLength: the model's output was cut off; its tool calls were not run.
	RunLength RunReason = "length"
	// RunError: the model failed, or its message did not form a runnable tool batch.
	RunError RunReason = "error"
	// RunAborted: the context was cancelled.
	RunAborted RunReason = "aborted"
	// RunMaxSteps: MaxSteps model requests were made and the model still wanted more.
	RunMaxSteps RunReason = "maxSteps"
)

// DefaultMaxSteps bounds the model requests of a run when AgentLoopOptions.MaxSteps is zero.
const DefaultMaxSteps = 32

// Reasons recorded in the details of a skipped tool result (details["reason"]).
const (
	SkipLength         = "length"
	SkipError          = "error"
	SkipAborted        = "aborted"
	SkipUnexpectedStop = "unexpected-stop"
)

// AgentContext is what the caller brings to a run.
type AgentContext struct {
	SystemPrompt string
	// Messages belong to the caller: the loop works on a deep copy and never changes them.
	Messages []Message
	// Tools is not sent to the model. What the model may call always comes from
	// AgentLoopOptions.Tools, the same registry that runs the calls.
	Tools []ToolDefinition
}

// ToolExecutor runs one tool call. The default executor runs ExecuteToolCall on the options'
// registry, which looks the tool up and checks the arguments against its schema; tests inject
// their own. An error (or a panic) becomes an error result for the call. The result always
// answers the call it was given: the loop sets its ToolCallID and ToolName from the call,
// whatever the executor put there.
type ToolExecutor func(ctx context.Context, call ToolCall, exec ToolExecContext) (ToolResultMessage, error)

// AgentLoopOptions configures one run.
type AgentLoopOptions struct {
	Context AgentContext
	Model   Model
	// Tools is the registry: its definitions go into every request and its tools run the calls.
	Tools *Registry
	// ExecuteToolCall, when set, replaces the registry's executor.
	ExecuteToolCall ToolExecutor
	// MaxSteps bounds the number of model requests; zero means DefaultMaxSteps.
	MaxSteps int
	// OnEvent receives every LoopEvent. It is never called concurrently, also while tools run
	// in parallel, so the events it sees form one total order. turn_end is the last call: none
	// follows it, not even a late progress report of a tool.
	OnEvent func(LoopEvent)
	//chapter:begin 09
	// Steering, when set, is polled once before each model request: before the first one (so
	// what was queued before the run started is in it), after every tool batch (unless the run
	// ends because it was cancelled), and whenever the model answered without asking for tools.
	// The messages it returns are appended, each reported by a QueuedMessageEvent, before the
	// next model request; the calls of the batch have all run. A message taken after the last
	// allowed request stays in the transcript of the run that ends at MaxSteps.
	Steering func() []Message
	// FollowUp, when set, is polled only when the run would otherwise stop (the model answered
	// without tools and Steering had nothing). Its messages are appended and the run goes on.
	FollowUp func() []Message
	//chapter:end
	//chapter:begin 10
	// Session, when set, is the run's event log and the only source of what the model sees. The
	// run starts from Session.Messages() (Context.Messages is ignored), logs every message it
	// adds, logs each tool call before it runs, and builds every request from the log. Steering
	// and FollowUp may then hand over only user and assistant messages: a message the log refuses
	// (a tool result, which enters the log only through its batch) makes the run panic rather than
	// sit in the transcript unlogged. The run does not close the session.
	Session *Session
	//chapter:end
	//chapter:begin 11
	// Compaction, when set with a Session, compacts the session before a request whose context
	// passes the threshold, and once after a model turn refused as too long for the context
	// (then the turn asks again); each attempt is reported by a CompactionEvent. Requests are
	// built from the log, so after a compaction they hold the summary and the kept messages,
	// while the run's transcript (AgentRunResult.Messages) keeps every message of the run.
	Compaction *CompactionOptions
	//chapter:end
	//chapter:begin 12
	// Hooks, when set, are called around the run's model requests and tool calls (chapter 12).
	Hooks *LoopHooks
	// ToolExecution is how the calls of a batch run: ToolParallel (also when empty) or
	// ToolSequential. A batch holding a call of a ToolSequential tool runs sequentially in
	// either mode.
	ToolExecution ToolExecutionMode
	// MaxParallelTools bounds how many tool bodies of one batch run at once in parallel mode.
	// Zero, the default, does not bound them: the calls of a batch are what one model message
	// asked for, and most tool bodies wait (on a process, a file, the network) rather than
	// compute, so a bound would only make them wait in line. Set it when the tools share a
	// scarce resource (a rate-limited API, a small machine).
	MaxParallelTools int
	//chapter:end
}

// AgentRunResult is how a run ended.
type AgentRunResult struct {
	Reason RunReason
	// Messages is the transcript: the input followed by every assistant message and tool
	// result of the run, in order.
	Messages []Message
	// Steps is the number of model requests that completed.
	Steps int
}

// LoopEvent is what a run reports while it works. The set is closed: ModelEvent,
// AssistantMessageEvent, ToolStartEvent, ToolProgressEvent, ToolEndEvent, ToolSkippedEvent and
// TurnEndEvent, plus the events a later chapter adds, each saying so in its doc comment.
type LoopEvent interface {
	// EventType is the event's name: "model_event", "assistant_message", "tool_start",
	// "tool_progress", "tool_end", "tool_skipped", "turn_end", or that of a later chapter's event.
	EventType() string
	isLoopEvent()
}

// ModelEvent forwards one event of the model's stream.
type ModelEvent struct{ Event AssistantEvent }

// AssistantMessageEvent announces a complete assistant message, appended to the transcript.
type AssistantMessageEvent struct{ Message AssistantMessage }

// ToolStartEvent announces that a call is about to run.
type ToolStartEvent struct{ Call ToolCall }

// ToolProgressEvent carries partial output of the running call CallID.
type ToolProgressEvent struct {
	CallID  string
	Content []ContentBlock
}

// ToolEndEvent carries the result of a call that ran.
type ToolEndEvent struct{ Result ToolResultMessage }

// ToolSkippedEvent carries the result written for a call that was not run.
type ToolSkippedEvent struct{ Result ToolResultMessage }

// TurnEndEvent ends the run; it is always the last event and there is exactly one.
type TurnEndEvent struct {
	Reason RunReason
	Steps  int
}

// EventType implements LoopEvent.
func (ModelEvent) EventType() string { return "model_event" }

// EventType implements LoopEvent.
func (AssistantMessageEvent) EventType() string { return "assistant_message" }

// EventType implements LoopEvent.
func (ToolStartEvent) EventType() string { return "tool_start" }

// EventType implements LoopEvent.
func (ToolProgressEvent) EventType() string { return "tool_progress" }

// EventType implements LoopEvent.
func (ToolEndEvent) EventType() string { return "tool_end" }

// EventType implements LoopEvent.
func (ToolSkippedEvent) EventType() string { return "tool_skipped" }

// EventType implements LoopEvent.
func (TurnEndEvent) EventType() string { return "turn_end" }

func (ModelEvent) isLoopEvent()            {}
func (AssistantMessageEvent) isLoopEvent() {}
func (ToolStartEvent) isLoopEvent()        {}
func (ToolProgressEvent) isLoopEvent()     {}
func (ToolEndEvent) isLoopEvent()          {}
func (ToolSkippedEvent) isLoopEvent()      {}
func (TurnEndEvent) isLoopEvent()          {}

// RunAgentLoop drives one run: it asks the model, runs the tool calls the model asks for,
// feeds their results back, and repeats until the model answers, a terminal state is reached,
// ctx is cancelled or MaxSteps requests were made.
//
// Invariant: every tool call that enters the transcript is answered by a tool result with the
// same ID before the loop asks the model again or returns, whether the call ran or not.
//
// Cancellation is checked before each model request and after each tool batch; the model and
// every tool, also in a parallel batch, receive ctx itself. Running tools are awaited and their
// results kept. A cancellation during a model turn whose message asks for tools still pairs
// every call: the batch runs with the cancelled ctx, then the run ends aborted.
//
// Events: turn_end is the last event ever delivered. A tool's progress is delivered only while
// its executor runs: a report made after the executor returned (from a goroutine the tool left
// behind) is dropped, so every tool_progress of a call comes before its tool_end. The returned error is only for invalid options: model and
// tool failures are reported through the result's Reason and the transcript. No goroutine
// started by RunAgentLoop outlives it.
func RunAgentLoop(ctx context.Context, opts AgentLoopOptions) (AgentRunResult, error) {
	if opts.Model == nil {
		return AgentRunResult{}, errors.New("tinypi: RunAgentLoop: AgentLoopOptions.Model is nil")
	}
	if opts.MaxSteps < 0 {
		return AgentRunResult{}, fmt.Errorf("tinypi: RunAgentLoop: MaxSteps is %d, want 0 (default) or more", opts.MaxSteps)
	}
	//chapter:begin 12
	if err := checkToolExecution(opts); err != nil {
		return AgentRunResult{}, err
	}
	//chapter:end
	run := newLoopRun(opts)
	for steps := 1; ; steps++ {
		if result, done := run.stopBeforeRequest(ctx, steps); done {
			return result, nil
		}
		//chapter:begin 09
		if steps == 1 {
			run.takeSteering() // what was queued before the first request goes into it
		}
		//chapter:end
		assistant := run.collectModelTurn(ctx)
		if result, done := run.afterTurn(ctx, assistant, steps); done {
			return result, nil
		}
	}
}

// loopRun is the state of one run. Only the goroutine of RunAgentLoop touches messages; tool
// goroutines write their own slot of a result slice and report through emit.
type loopRun struct {
	opts     AgentLoopOptions
	execute  ToolExecutor
	maxSteps int
	messages []Message
	//chapter:begin 10
	turn     int  // the number of the current turn
	turnOpen bool // a turn/start was logged without its turn/end
	//chapter:end
	//chapter:begin 12
	batchTerminated bool // every result of the last batch asked for the run to end
	//chapter:end

	emitMu sync.Mutex // serialises OnEvent
}

func newLoopRun(opts AgentLoopOptions) *loopRun {
	r := &loopRun{opts: opts, execute: opts.ExecuteToolCall, maxSteps: opts.MaxSteps}
	if r.execute == nil {
		// The registry is captured here, so the executor needs only the call. ExecuteToolCall
		// (chapter 06) looks the tool up and checks the arguments against its schema.
		//lab:begin 7.2
		r.execute = func(ctx context.Context, call ToolCall, exec ToolExecContext) (ToolResultMessage, error) {
			return ExecuteToolCall(ctx, call, opts.Tools, exec), nil
		}
		//lab:stub
		//	r.execute = func(context.Context, ToolCall, ToolExecContext) (ToolResultMessage, error) {
		//		panic(LAB_PENDING)
		//	}
		//lab:end
	}
	if r.maxSteps == 0 {
		r.maxSteps = DefaultMaxSteps
	}
	r.messages = ownMessages(opts.Context.Messages)
	//chapter:begin 10
	if opts.Session != nil {
		r.messages = opts.Session.Messages()
	}
	//chapter:end
	return r
}

// ownMessages returns the run's own transcript: a deep copy of the caller's messages, so that
// nothing the run appends or changes reaches the caller.
func ownMessages(input []Message) []Message {
	//lab:begin 7.1
	return CloneMessages(input)
	//lab:end
}

// emit delivers one event; the lock gives all events, from any goroutine, one total order.
func (r *loopRun) emit(event LoopEvent) {
	if r.opts.OnEvent == nil {
		return
	}
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	r.opts.OnEvent(event)
}

// finish is the only way out of a run: it emits the single turn_end.
func (r *loopRun) finish(reason RunReason, steps int) AgentRunResult {
	//lab:begin 7.1
	//chapter:begin 10
	r.endTurn(string(reason))
	//chapter:end
	r.emit(TurnEndEvent{Reason: reason, Steps: steps})
	return AgentRunResult{Reason: reason, Messages: r.messages, Steps: steps}
	//lab:end
}

// stopBeforeRequest ends the run before its steps-th model request when the step limit is
// reached or ctx is cancelled. steps-1 requests have completed at this point. A cancellation
// during the last allowed batch was already reported by stopAfterTools.
func (r *loopRun) stopBeforeRequest(ctx context.Context, steps int) (AgentRunResult, bool) {
	//lab:begin 7.5
	if steps > r.maxSteps {
		return r.finish(RunMaxSteps, steps-1), true
	}
	if ctx.Err() != nil {
		return r.finish(RunAborted, steps-1), true
	}
	return AgentRunResult{}, false
	//lab:stub
	//	if ctx.Err() != nil || steps > r.maxSteps {
	//		panic(LAB_PENDING)
	//	}
	//	return AgentRunResult{}, false
	//lab:end
}

// collectModelTurn makes one model request with ctx, forwards its events, and appends the
// complete assistant message to the transcript exactly once. A stream that ends without a final
// event gives an assistant with stop reason error whose ErrorMessage is the stream's error.
func (r *loopRun) collectModelTurn(ctx context.Context) AssistantMessage {
	//lab:begin 7.1
	// Clip, so that a model that appends to what it was given cannot write into our slice.
	messages := slices.Clip(r.messages)
	//chapter:begin 11
	r.compactBeforeRequest(ctx)
	//chapter:end
	//chapter:begin 10
	if r.opts.Session != nil {
		logged, err := r.logRequest(ctx)
		if err != nil {
			return r.appendAssistant(failedTurn(err))
		}
		messages = logged
	}
	//chapter:end
	//chapter:begin 12
	messages, err := r.transformContext(ctx, messages)
	if err != nil {
		return r.appendAssistant(failedTurn(err))
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
	assistant, err := stream.Result()
	if err != nil {
		assistant = failedTurn(err)
	}
	//chapter:begin 11
	assistant = r.retryAfterOverflow(ctx, assistant)
	//chapter:end
	return r.appendAssistant(assistant)
	//lab:end
}

// appendAssistant appends the assistant message of a model turn to the transcript, exactly once,
// and reports it.
func (r *loopRun) appendAssistant(assistant AssistantMessage) AssistantMessage {
	//lab:begin 7.1
	r.messages = append(r.messages, assistant)
	//chapter:begin 10
	r.logMessage(assistant)
	//chapter:end
	r.emit(AssistantMessageEvent{Message: assistant})
	return assistant
	//lab:end
}

// failedTurn is the assistant of a model turn whose stream ended without a final event: stop
// reason error, the stream's error as its ErrorMessage. It is appended and reported like any
// other assistant, and the rules table ends the run with error.
func failedTurn(err error) AssistantMessage {
	//lab:begin 7.3
	return AssistantMessage{StopReason: StopReasonError, ErrorMessage: err.Error(), Timestamp: time.Now().UnixMilli()}
	//lab:end
}

// afterTurn applies the rules table to the assistant message of request steps: run the batch
// and go on, or finish.
func (r *loopRun) afterTurn(ctx context.Context, assistant AssistantMessage, steps int) (AgentRunResult, bool) {
	//lab:begin 7.1
	if assistant.StopReason == StopReasonStop && len(assistant.ToolCalls()) == 0 {
		//chapter:begin 10
		r.endTurn("stop")
		//chapter:end
		//chapter:begin 09
		if r.continueInsteadOfStop() {
			return AgentRunResult{}, false
		}
		//chapter:end
		return r.finish(RunStop, steps), true
	}
	//lab:stub
	//	if assistant.StopReason == StopReasonStop {
	//		panic(LAB_PENDING)
	//	}
	//lab:end
	//lab:begin 7.2
	if calls := assistant.ToolCalls(); assistant.StopReason == StopReasonToolUse && len(calls) > 0 {
		//chapter:begin 10
		r.runBatch(ctx, calls)
		//chapter:before
		// r.runToolBatch(ctx, calls)
		//chapter:end
		//chapter:begin 09
		if result, done := r.stopAfterTools(ctx, steps); done {
			return result, true
		}
		//chapter:before
		// return r.stopAfterTools(ctx, steps)
		//chapter:end
		//chapter:begin 12
		if result, done := r.stopAfterBatch(ctx, assistant, r.messages[len(r.messages)-len(calls):], steps); done {
			return result, true
		}
		//chapter:end
		//chapter:begin 10
		r.endTurn("toolUse")
		//chapter:end
		//chapter:begin 09
		r.takeSteering()
		return AgentRunResult{}, false
		//chapter:end
	}
	//lab:stub
	//	if assistant.StopReason == StopReasonToolUse {
	//		panic(LAB_PENDING)
	//	}
	//lab:end
	return r.finishWithoutExecuting(assistant, steps), true
}

//chapter:begin 09

// takeSteering polls the Steering hook and appends what it returns. It reports whether it
// appended anything.
func (r *loopRun) takeSteering() bool {
	if r.opts.Steering == nil {
		return false
	}
	//lab:begin 9.2
	return r.inject(r.opts.Steering())
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// continueInsteadOfStop is asked when the model answered without tools: steering first, then
// follow-ups. It reports whether messages were appended, so that the run goes on.
func (r *loopRun) continueInsteadOfStop() bool {
	if r.opts.Steering == nil && r.opts.FollowUp == nil {
		return false
	}
	//lab:begin 9.2
	if r.takeSteering() {
		return true
	}
	return r.opts.FollowUp != nil && r.inject(r.opts.FollowUp())
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// inject appends queued messages to the transcript, a copy of each, and reports each one.
func (r *loopRun) inject(messages []Message) bool {
	for _, m := range messages {
		m = CloneMessage(m)
		r.messages = append(r.messages, m)
		//chapter:end
		//chapter:begin 10
		r.logMessage(m)
		//chapter:end
		//chapter:begin 09
		r.emit(QueuedMessageEvent{Message: m})
	}
	return len(messages) > 0
}

// QueuedMessageEvent announces a message taken from the Steering or FollowUp hook and
// appended to the transcript before the next model request. Chapter 09 adds it to the set of
// loop events.
type QueuedMessageEvent struct{ Message Message }

// EventType implements LoopEvent.
func (QueuedMessageEvent) EventType() string { return "queued_message" }

func (QueuedMessageEvent) isLoopEvent() {}

//chapter:end

// runToolBatch runs the calls of one assistant message and appends their results in call
// order. A single call runs on this goroutine; a larger batch runs concurrently: every
// tool_start first, tool_end as each call completes, results by call index.
func (r *loopRun) runToolBatch(ctx context.Context, calls []ToolCall) {
	//lab:begin 7.4
	if len(calls) > 1 {
		for _, call := range calls {
			r.emit(ToolStartEvent{Call: call})
		}
		results := make([]ToolResultMessage, len(calls))
		completed := make(chan int, len(calls))
		for i, call := range calls {
			go func() {
				results[i] = r.executeOne(ctx, call)
				completed <- i
			}()
		}
		for range calls {
			i := <-completed
			r.emit(ToolEndEvent{Result: results[i]})
		}
		for _, result := range results {
			r.messages = append(r.messages, result)
		}
		return
	}
	//lab:stub
	//	if len(calls) > 1 {
	//		panic(LAB_PENDING)
	//	}
	//lab:end
	//lab:begin 7.2
	r.emit(ToolStartEvent{Call: calls[0]})
	result := r.executeOne(ctx, calls[0])
	r.emit(ToolEndEvent{Result: result})
	r.messages = append(r.messages, result)
	//lab:end
}

// executeOne runs one call through the executor with a progress reporter bound to the call.
// It always returns a result for the call: the executor's result answers this call (its
// ToolCallID and ToolName are set from the call, whatever the executor returned), and a failure
// becomes failedExecution's result. Progress is delivered only while the executor runs; a
// report that arrives after it returned is dropped, so no tool_progress follows the call's
// tool_end, and none follows turn_end.
func (r *loopRun) executeOne(ctx context.Context, call ToolCall) ToolResultMessage {
	//lab:begin 7.2
	var mu sync.Mutex // held while a report is delivered: none is in flight once running is false
	running := true
	exec := ToolExecContext{ReportProgress: func(content []ContentBlock) {
		mu.Lock()
		defer mu.Unlock()
		if running {
			r.emit(ToolProgressEvent{CallID: call.ID, Content: content})
		}
	}}
	result, err := r.callExecutor(ctx, call, exec)
	mu.Lock()
	running = false
	mu.Unlock()
	if err != nil {
		return failedExecution(call, err)
	}
	result.ToolCallID, result.ToolName = call.ID, call.Name
	return result
	//lab:end
}

// callExecutor calls the executor, turning a panic into an error: a tool goroutine that
// panicked would otherwise take the whole process down.
func (r *loopRun) callExecutor(ctx context.Context, call ToolCall, exec ToolExecContext) (result ToolResultMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool executor panicked: %v", p)
		}
	}()
	return r.execute(ctx, call, exec)
}

// failedExecution is the result of a call whose executor failed: paired with the call, the
// error's message as its text, no stack.
func failedExecution(call ToolCall, err error) ToolResultMessage {
	//lab:begin 7.4
	return ErrorToolResult(call, err.Error())
	//lab:end
}

// stopAfterTools ends the run after a tool batch when ctx was cancelled meanwhile: the batch's
// results are kept and no new request starts.
func (r *loopRun) stopAfterTools(ctx context.Context, steps int) (AgentRunResult, bool) {
	//lab:begin 7.5
	if ctx.Err() != nil {
		return r.finish(RunAborted, steps), true
	}
	return AgentRunResult{}, false
	//lab:stub
	//	if ctx.Err() != nil {
	//		panic(LAB_PENDING)
	//	}
	//	return AgentRunResult{}, false
	//lab:end
}

// finishWithoutExecuting handles every assistant message that does not form a runnable batch:
// no call runs, each call present gets a skipped result, and the run ends.
func (r *loopRun) finishWithoutExecuting(assistant AssistantMessage, steps int) AgentRunResult {
	//lab:begin 7.3
	reason, skip := RunError, SkipUnexpectedStop
	switch assistant.StopReason {
	case StopReasonLength:
		reason, skip = RunLength, SkipLength
	case StopReasonError:
		reason, skip = RunError, SkipError
	case StopReasonAborted:
		reason, skip = RunAborted, SkipAborted
	}
	//chapter:begin 10
	batch := r.logCalls(assistant.ToolCalls())
	for i, call := range assistant.ToolCalls() {
		result := skippedCall(call, skip)
		r.messages = append(r.messages, result)
		r.logResult(batch, i, result)
		r.emit(ToolSkippedEvent{Result: result})
	}
	//chapter:before
	// for _, call := range assistant.ToolCalls() {
	// 	result := skippedCall(call, skip)
	// 	r.messages = append(r.messages, result)
	// 	r.emit(ToolSkippedEvent{Result: result})
	// }
	//chapter:end
	return r.finish(reason, steps)
	//lab:end
}

// skippedCall is the result written for a call that the loop accepted but did not run.
func skippedCall(call ToolCall, reason string) ToolResultMessage {
	//lab:begin 7.3
	return ToolResultMessage{
		ToolCallID: call.ID,
		ToolName:   call.Name,
		Content:    []ContentBlock{Text(SkipExplanation(reason))},
		Details:    map[string]any{"skipped": true, "reason": reason},
		IsError:    true,
		Timestamp:  time.Now().UnixMilli(),
	}
	//lab:end
}

// SkipExplanation is the text of a skipped result, by reason: each reason has its own sentence.
func SkipExplanation(reason string) string {
	switch reason {
	case SkipLength:
		return "Tool call was not executed because the model response was truncated."
	case SkipError:
		return "Tool call was not executed because the model response ended with an error."
	case SkipAborted:
		return "Tool call was not executed because the model response was aborted."
	default:
		return "Tool call was not executed because the model stopped without asking for tool use."
	}
}
