package tinypi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// This file is chapter 12's hooks: the places where a program built on the loop may look at,
// change or refuse what the loop is about to do, without changing the loop. Every hook is
// optional. A hook is code the loop does not trust: one that returns an error or panics becomes
// an error result for its call (or a failed turn for TransformContext), never a crash or a hang.

// LoopHooks are the hooks of a run (AgentLoopOptions.Hooks).
//
// A run whose ExecuteToolCall is set runs each call through that executor, as chapter 07 does:
// BeforeToolCall, AfterToolCall, PrepareArguments, the execution modes and ToolOutput.Terminate
// apply only to calls the registry runs. TransformContext and ShouldStopAfterTurn apply to every
// run.
//
// Cost: TransformContext gets a deep copy of the whole request, on every request, and with a
// session its answer is logged whole; over a long run both grow with the square of the number of
// turns. Keep it for runs that need it.
//
// Concurrency: TransformContext, BeforeToolCall and ShouldStopAfterTurn are called on the run's
// own goroutine, one at a time; BeforeToolCall in call order. AfterToolCall is called right
// after its call's body, on that call's goroutine: in parallel mode, calls of one batch may be in
// AfterToolCall at the same time, so it must be safe for concurrent use.
type LoopHooks struct {
	// TransformContext, when set, is given a copy of the messages of every model request and
	// returns the messages the model gets instead: the place to drop, shorten or add context.
	// With a Session, what it returns is logged right after the request's model/request as a
	// model/context event, so the log holds what the model saw. An error (or a panic) fails the
	// turn: the model is not asked and the turn's assistant message has stop reason error.
	TransformContext func(ctx context.Context, messages []Message) ([]Message, error)
	// BeforeToolCall, when set, is asked about every call whose arguments passed the schema,
	// with the arguments the tool would get. A decision with Block set refuses the call: it gets
	// an error result whose text is the decision's Reason ("Tool execution was blocked" when
	// Reason is empty), and its tool does not run.
	BeforeToolCall func(ctx context.Context, call ToolCall, args json.RawMessage) (ToolCallDecision, error)
	// AfterToolCall, when set, is given the outcome of every call whose tool ran (not of a call
	// that was refused before) and may override its fields one by one: a nil field of the
	// override keeps the outcome's value.
	AfterToolCall func(ctx context.Context, call ToolCall, outcome ToolCallOutcome) (ToolResultOverride, error)
	// ShouldStopAfterTurn, when set, is asked after every turn that ran a tool batch and did not
	// already end the run (the batch did not terminate, ctx was not cancelled). True ends the run
	// with RunStopRequested before the next model request. A panic ends the run with RunError.
	ShouldStopAfterTurn func(ctx context.Context, turn TurnSummary) bool
}

// ToolCallDecision is what BeforeToolCall decided about one call.
type ToolCallDecision struct {
	Block  bool
	Reason string
}

// ToolCallOutcome is what a call's tool produced: the fields of its result, and whether it asks
// for the run to end (ToolOutput.Terminate).
type ToolCallOutcome struct {
	Content   []ContentBlock
	Details   map[string]any
	IsError   bool
	Terminate bool
}

// ToolResultOverride is what AfterToolCall changes. Each field that is not nil replaces the
// outcome's field of the same name; the others stay as the tool left them.
type ToolResultOverride struct {
	Content   []ContentBlock
	Details   map[string]any
	IsError   *bool
	Terminate *bool
}

// TurnSummary is what ShouldStopAfterTurn is told about the turn that just ended: its assistant
// message, the results of its batch in call order, and how many model requests the run has made.
type TurnSummary struct {
	Assistant AssistantMessage
	Results   []ToolResultMessage
	Steps     int
}

// The reasons chapter 12 adds to RunReason.
const (
	// RunTerminated: every result of the last tool batch asked for the run to end.
	RunTerminated RunReason = "terminated"
	// RunStopRequested: LoopHooks.ShouldStopAfterTurn said to stop.
	RunStopRequested RunReason = "stopRequested"
)

// EventModelContext is the type of the event that logs what TransformContext returned for a
// request. It is ignorable: it does not change the message history, so a reader that does not
// know it may skip it. Its SourceEventSeqs is [seq of the request's model/request].
const EventModelContext SessionEventType = "model/context"

// BlockedToolCallText is the text of a blocked call's result when the hook gave no reason.
const BlockedToolCallText = "Tool execution was blocked"

// preparedCall is one call after preparation: either result is set (the call was refused and its
// tool does not run) or tool and args are what its body runs with.
type preparedCall struct {
	call   ToolCall
	tool   Tool
	args   json.RawMessage
	result *ToolResultMessage
}

// callHook runs a hook, turning a panic into an error that names the hook.
func callHook[T any](name string, hook func() (T, error)) (out T, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero T
			out, err = zero, fmt.Errorf("%s panicked: %v", name, p)
		}
	}()
	return hook()
}

// prepareCall takes one call through the steps before its body, in this order: find the tool,
// prepare its arguments (empty arguments are "{}"), check the prepared arguments against the
// schema, ask BeforeToolCall with them. The first step that refuses the call gives its error
// result, and the later steps are not taken:
//
//   - no such tool: "Tool NAME not found";
//   - PrepareArguments failed: `Preparing arguments failed for tool "NAME": ERR`;
//   - the schema refused: `Validation failed for tool "NAME": ERR` (as ExecuteToolCall says it);
//   - BeforeToolCall failed: `beforeToolCall failed for tool "NAME": ERR`;
//   - BeforeToolCall blocked: the decision's Reason, or BlockedToolCallText.
//
// A hook that panics fails with "HOOK panicked: VALUE" as ERR (callHook).
func (r *loopRun) prepareCall(ctx context.Context, call ToolCall) preparedCall {
	refuse := func(text string) preparedCall {
		result := ErrorToolResult(call, text)
		return preparedCall{call: call, result: &result}
	}
	//lab:begin 12.3
	tool, ok := r.opts.Tools.Lookup(call.Name)
	if !ok {
		return refuse(fmt.Sprintf("Tool %s not found", call.Name))
	}
	args := json.RawMessage(call.Arguments)
	if strings.TrimSpace(call.Arguments) == "" {
		args = json.RawMessage("{}")
	}
	if tool.PrepareArguments != nil {
		prepared, err := callHook("prepareArguments", func() (json.RawMessage, error) { return tool.PrepareArguments(args) })
		if err != nil {
			return refuse(fmt.Sprintf("Preparing arguments failed for tool %q: %v", call.Name, err))
		}
		args = prepared
	}
	if err := r.opts.Tools.ValidateArguments(call.Name, string(args)); err != nil {
		return refuse(fmt.Sprintf("Validation failed for tool %q: %v", call.Name, err))
	}
	if hooks := r.opts.Hooks; hooks != nil && hooks.BeforeToolCall != nil {
		decision, err := callHook("beforeToolCall", func() (ToolCallDecision, error) {
			return hooks.BeforeToolCall(ctx, call, append(json.RawMessage(nil), args...))
		})
		if err != nil {
			return refuse(fmt.Sprintf("beforeToolCall failed for tool %q: %v", call.Name, err))
		}
		if decision.Block {
			return refuse(cmp.Or(decision.Reason, BlockedToolCallText))
		}
	}
	return preparedCall{call: call, tool: tool, args: args}
	//lab:stub
	//	// Without PrepareArguments and BeforeToolCall a call is prepared as chapter 06 does it.
	//	tool, ok := r.opts.Tools.Lookup(call.Name)
	//	if !ok {
	//		return refuse(fmt.Sprintf("Tool %s not found", call.Name))
	//	}
	//	if tool.PrepareArguments != nil || (r.opts.Hooks != nil && r.opts.Hooks.BeforeToolCall != nil) {
	//		_ = ctx
	//		panic(LAB_PENDING)
	//	}
	//	args := json.RawMessage(call.Arguments)
	//	if strings.TrimSpace(call.Arguments) == "" {
	//		args = json.RawMessage("{}")
	//	}
	//	if err := r.opts.Tools.ValidateArguments(call.Name, string(args)); err != nil {
	//		return refuse(fmt.Sprintf("Validation failed for tool %q: %v", call.Name, err))
	//	}
	//	return preparedCall{call: call, tool: tool, args: args}
	//lab:end
}

// finishCall gives AfterToolCall its say about the outcome of a call whose tool ran, and
// returns the outcome as the hook left it: each field it set replaces the tool's. The hook gets
// its own copy of the content and details. When the hook fails, the outcome is an error whose
// only content is `afterToolCall failed for tool "NAME": ERR`, with no details, and it does not
// terminate.
func (r *loopRun) finishCall(ctx context.Context, call ToolCall, out ToolCallOutcome) ToolCallOutcome {
	hooks := r.opts.Hooks
	if hooks == nil || hooks.AfterToolCall == nil {
		return out
	}
	//lab:begin 12.5
	override, err := callHook("afterToolCall", func() (ToolResultOverride, error) {
		given := out
		given.Content = slices.Clone(out.Content)
		given.Details = cloneDetails(out.Details)
		return hooks.AfterToolCall(ctx, call, given)
	})
	if err != nil {
		return ToolCallOutcome{
			Content: []ContentBlock{Text(fmt.Sprintf("afterToolCall failed for tool %q: %v", call.Name, err))},
			IsError: true,
		}
	}
	if override.Content != nil {
		out.Content = override.Content
	}
	if override.Details != nil {
		out.Details = override.Details
	}
	if override.IsError != nil {
		out.IsError = *override.IsError
	}
	if override.Terminate != nil {
		out.Terminate = *override.Terminate
	}
	return out
	//lab:stub
	//	_ = ctx
	//	panic(LAB_PENDING)
	//lab:end
}

// batchTerminates reports whether a batch ends the run: it has calls and every one of them asks
// for it.
func batchTerminates(outcomes []callOutcome) bool {
	//lab:begin 12.5
	if len(outcomes) == 0 {
		return false
	}
	for _, o := range outcomes {
		if !o.terminate {
			return false
		}
	}
	return true
	//lab:stub
	//	for _, o := range outcomes {
	//		if o.terminate {
	//			panic(LAB_PENDING)
	//		}
	//	}
	//	return false
	//lab:end
}

// transformContext applies TransformContext to a copy of the messages of a request and, with a
// session, logs what it returned (Session.LogModelContext). Without the hook the messages are the
// request's as they are. When the hook fails, the error says "transformContext failed: ERR".
func (r *loopRun) transformContext(ctx context.Context, messages []Message) ([]Message, error) {
	hooks := r.opts.Hooks
	if hooks == nil || hooks.TransformContext == nil {
		return messages, nil
	}
	//lab:begin 12.6
	out, err := callHook("transformContext", func() ([]Message, error) {
		return hooks.TransformContext(ctx, CloneMessages(messages))
	})
	if err != nil {
		return nil, fmt.Errorf("transformContext failed: %w", err)
	}
	if r.opts.Session != nil {
		if _, err := r.opts.Session.LogModelContext(out); err != nil {
			return nil, err
		}
	}
	return out, nil
	//lab:stub
	//	_ = ctx
	//	panic(LAB_PENDING)
	//lab:end
}

// stopAfterBatch ends the run after a tool batch when the batch asked for it (every result
// terminates: stopIfTerminated) or, when it did not, ShouldStopAfterTurn says so. results are the
// batch's, in call order.
func (r *loopRun) stopAfterBatch(ctx context.Context, assistant AssistantMessage, results []Message, steps int) (AgentRunResult, bool) {
	if result, done := r.stopIfTerminated(steps); done {
		return result, true
	}
	hooks := r.opts.Hooks
	if hooks == nil || hooks.ShouldStopAfterTurn == nil {
		return AgentRunResult{}, false
	}
	//lab:begin 12.6
	turn := TurnSummary{Assistant: CloneMessage(assistant).(AssistantMessage), Steps: steps}
	for _, m := range results {
		turn.Results = append(turn.Results, CloneMessage(m).(ToolResultMessage))
	}
	stop, err := callHook("shouldStopAfterTurn", func() (bool, error) { return hooks.ShouldStopAfterTurn(ctx, turn), nil })
	switch {
	case err != nil:
		return r.finish(RunError, steps), true
	case stop:
		return r.finish(RunStopRequested, steps), true
	}
	return AgentRunResult{}, false
	//lab:stub
	//	_, _, _ = ctx, assistant, results
	//	panic(LAB_PENDING)
	//lab:end
}

// stopIfTerminated ends the run with RunTerminated when the batch that just ran asked for it.
func (r *loopRun) stopIfTerminated(steps int) (AgentRunResult, bool) {
	//lab:begin 12.5
	if r.batchTerminated {
		return r.finish(RunTerminated, steps), true
	}
	return AgentRunResult{}, false
	//lab:stub
	//	if r.batchTerminated {
	//		panic(LAB_PENDING)
	//	}
	//	return AgentRunResult{}, false
	//lab:end
}

// modelContextData is the payload of a model/context event.
type modelContextData struct {
	Messages json.RawMessage `json:"messages"`
}

// LogModelContext logs what the model is given for the latest model/request (what
// TransformContext returned, which the log cannot derive): an ignorable model/context event whose
// data is {"messages": [...]} and whose SourceEventSeqs is [seq of that model/request]. It fails
// when the log has no model/request.
func (s *Session) LogModelContext(messages []Message) (int, error) {
	encoded, err := MarshalMessages(messages)
	if err != nil {
		return 0, fmt.Errorf("tinypi: session: logging the model context: %w", err)
	}
	raw, err := json.Marshal(modelContextData{Messages: encoded})
	if err != nil {
		return 0, fmt.Errorf("tinypi: session: logging the model context: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	request := -1
	for i := len(s.events) - 1; i >= 0; i-- {
		if s.events[i].Type == EventModelRequest {
			request = s.events[i].Seq
			break
		}
	}
	if request < 0 {
		return 0, errors.New("tinypi: session: a model/context needs a model/request before it")
	}
	return s.appendLocked(SessionEvent{Type: EventModelContext, Ignorable: true, Raw: raw, SourceEventSeqs: []int{request}})
}
