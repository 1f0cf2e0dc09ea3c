package tinypi

import (
	"context"
	"fmt"
)

// This file is the agent loop's side of the session log: what RunAgentLoop does when
// AgentLoopOptions.Session is set. Appending a well-formed event the loop made itself cannot
// fail, so such a failure is a bug in the runtime and panics (an Agent turns the panic into a
// run that ends with error); only the flush barriers, which do I/O, fail as errors.

// logRequest opens a turn and freezes the request's messages from the log.
func (r *loopRun) logRequest(ctx context.Context) ([]Message, error) {
	r.turn++
	r.mustLog(r.opts.Session.Append(SessionEvent{Type: EventTurnStart, Turn: r.turn}))
	r.turnOpen = true
	//lab:begin 10.4
	return r.opts.Session.ModelRequest(ctx)
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// endTurn logs the turn/end of the open turn, if any, with reason.
func (r *loopRun) endTurn(reason string) {
	if r.opts.Session == nil || !r.turnOpen {
		return
	}
	r.turnOpen = false
	r.mustLog(r.opts.Session.Append(SessionEvent{Type: EventTurnEnd, Turn: r.turn, Reason: reason}))
}

// logMessage logs a user or assistant message the run added to its transcript.
func (r *loopRun) logMessage(m Message) {
	if r.opts.Session == nil {
		return
	}
	//lab:begin 10.4
	r.mustLog(r.opts.Session.AppendMessage(m))
	//lab:end
}

// logCalls logs the calls of a batch; nil without a session.
func (r *loopRun) logCalls(calls []ToolCall) *ToolBatchLog {
	if r.opts.Session == nil || len(calls) == 0 {
		return nil
	}
	batch, err := r.opts.Session.BeginToolBatch(calls)
	r.mustLog(0, err)
	return batch
}

// logResult commits the result of call i of batch; nothing without a session.
func (r *loopRun) logResult(batch *ToolBatchLog, i int, result ToolResultMessage) {
	if batch == nil {
		return
	}
	_, err := batch.Finish(i, result)
	r.mustLog(0, err)
}

// mustLog panics when appending an event the loop made failed; see the file comment.
func (r *loopRun) mustLog(_ int, err error) {
	if err != nil {
		panic(fmt.Sprintf("tinypi: the agent loop could not log its own event: %v", err))
	}
}

// runBatch runs the calls of one assistant message and appends their results to the transcript
// in call order: as chapter 07 does without a session, through the log with one.
func (r *loopRun) runBatch(ctx context.Context, calls []ToolCall) {
	//chapter:begin 12
	// The calls of the registry go through the hooks (toolbatch.go); those of a run whose
	// ExecuteToolCall replaces the registry run as below.
	r.batchTerminated = false
	if r.opts.ExecuteToolCall == nil {
		r.runHookedBatch(ctx, calls)
		return
	}
	//chapter:end
	if r.opts.Session != nil {
		r.runLoggedToolBatch(ctx, calls)
		return
	}
	r.runToolBatch(ctx, calls)
}

// runLoggedToolBatch runs a batch whose calls go through the log: every tool/call is appended
// before any tool runs, each body runs only after its tool/start is flushed, and results enter
// the log, and the transcript, through the commit cursor in call order, whatever order the calls
// finish in. A call whose tool/start cannot be flushed (the run was aborted, the disk failed)
// does not run: its result says so. Every logged call gets a result.
func (r *loopRun) runLoggedToolBatch(ctx context.Context, calls []ToolCall) {
	//lab:begin 10.4
	batch := r.logCalls(calls)
	for _, call := range calls {
		r.emit(ToolStartEvent{Call: call})
	}
	results := make([]ToolResultMessage, len(calls))
	completed := make(chan int, len(calls))
	for i, call := range calls {
		go func() {
			if err := batch.Start(ctx, i); err != nil {
				results[i] = notStarted(call, err)
			} else {
				results[i] = r.executeOne(ctx, call)
			}
			completed <- i
		}()
	}
	for range calls {
		i := <-completed
		r.emit(ToolEndEvent{Result: results[i]})
		committed, err := batch.Finish(i, results[i])
		r.mustLog(0, err)
		r.messages = append(r.messages, messagesOf(committed)...)
	}
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// notStarted is the result of a call whose body did not run because its start could not be
// logged: ctx was cancelled, or the flush failed.
func notStarted(call ToolCall, err error) ToolResultMessage {
	result := ErrorToolResult(call, fmt.Sprintf("Tool call was not started: %v", err))
	result.Details = map[string]any{"code": ToolNotStarted}
	return result
}

// messagesOf converts results to messages.
func messagesOf(results []ToolResultMessage) []Message {
	out := make([]Message, len(results))
	for i, r := range results {
		out[i] = r
	}
	return out
}
