package tinypi

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// This file is chapter 12's tool batch: how the calls of one assistant message run once tools
// have hooks and execution modes. Every call goes through the same steps: prepare (find the
// tool, prepare and check its arguments, BeforeToolCall), run the body, finish (AfterToolCall).
// How the bodies of a batch are scheduled is the execution mode.

// ToolExecutionMode says whether calls may run alongside each other.
type ToolExecutionMode string

// The execution modes, of a run (AgentLoopOptions.ToolExecution) or of a tool
// (Tool.ExecutionMode). The empty mode is ToolParallel.
const (
	// ToolParallel: the calls of a batch are prepared one by one in call order, then their bodies
	// run concurrently; results still enter the transcript in call order.
	ToolParallel ToolExecutionMode = "parallel"
	// ToolSequential: each call is prepared, run and finished before the next call is prepared.
	ToolSequential ToolExecutionMode = "sequential"
)

// callOutcome is a call's result and whether it asks for the run to end. panicked is set when
// the runtime's own code (not a tool or a hook: those become error results) panicked while it
// ran the call on a tool goroutine; the run's goroutine panics with it once the batch is over,
// as it would have had the code run there.
type callOutcome struct {
	result    ToolResultMessage
	terminate bool
	panicked  any
}

// checkToolExecution checks the chapter 12 options of a run.
func checkToolExecution(opts AgentLoopOptions) error {
	//lab:begin 12.4
	switch opts.ToolExecution {
	case "", ToolParallel, ToolSequential:
	default:
		return fmt.Errorf("tinypi: RunAgentLoop: ToolExecution is %q, want %q or %q", opts.ToolExecution, ToolParallel, ToolSequential)
	}
	if opts.MaxParallelTools < 0 {
		return fmt.Errorf("tinypi: RunAgentLoop: MaxParallelTools is %d, want 0 (no bound) or more", opts.MaxParallelTools)
	}
	return nil
	//lab:stub
	//	if opts.ToolExecution != "" || opts.MaxParallelTools != 0 {
	//		panic(LAB_PENDING)
	//	}
	//	return nil
	//lab:end
}

// runHookedBatch runs the calls of one assistant message through the registry and the hooks, and
// appends their results to the transcript in call order; with a session, through the log's commit
// cursor. runBatch (session_loop.go) sends every batch here but those of a run whose
// ExecuteToolCall replaces the registry: they run as chapter 07's do, since the executor owns the
// whole call and there is nothing for the hooks to prepare.
func (r *loopRun) runHookedBatch(ctx context.Context, calls []ToolCall) {
	b := &toolBatch{run: r, log: r.logCalls(calls), calls: calls, results: make([]*ToolResultMessage, len(calls))}
	outcomes := make([]callOutcome, len(calls))
	if r.runsSequentially(calls) {
		b.runSequentially(ctx, outcomes)
	} else {
		b.runInParallel(ctx, outcomes)
	}
	r.batchTerminated = batchTerminates(outcomes)
}

// runsSequentially reports whether a batch runs one call after the other: the run asks for it,
// or a call's tool may not run alongside others.
func (r *loopRun) runsSequentially(calls []ToolCall) bool {
	//lab:begin 12.4
	if r.opts.ToolExecution == ToolSequential {
		return true
	}
	for _, call := range calls {
		if tool, ok := r.opts.Tools.Lookup(call.Name); ok && tool.ExecutionMode == ToolSequential {
			return true
		}
	}
	return false
	//lab:stub
	//	// A batch whose run and tools say nothing about modes runs in parallel.
	//	for _, call := range calls {
	//		if tool, ok := r.opts.Tools.Lookup(call.Name); ok && tool.ExecutionMode != "" {
	//			panic(LAB_PENDING)
	//		}
	//	}
	//	if r.opts.ToolExecution != "" {
	//		panic(LAB_PENDING)
	//	}
	//	return false
	//lab:end
}

// toolBatch is one batch being run. Only the run's goroutine calls commit; bodies run on their
// own goroutines and hand their outcome back through a channel.
type toolBatch struct {
	run     *loopRun
	log     *ToolBatchLog // nil without a session
	calls   []ToolCall
	results []*ToolResultMessage // without a session: results[i] once call i finished
	next    int                  // without a session: the calls before next are in the transcript
}

// runSequentially takes each call through all its steps, tool_start to tool_end, before the
// next call is prepared.
func (b *toolBatch) runSequentially(ctx context.Context, outcomes []callOutcome) {
	//lab:begin 12.4
	r := b.run
	for i, call := range b.calls {
		r.emit(ToolStartEvent{Call: call})
		outcomes[i] = b.runPrepared(ctx, i, r.prepareCall(ctx, call))
		r.emit(ToolEndEvent{Result: outcomes[i].result})
		b.commit(i, outcomes[i].result)
	}
	//lab:stub
	//	_, _ = ctx, outcomes
	//	panic(LAB_PENDING)
	//lab:end
}

// runInParallel announces every call, prepares them one by one in call order (so BeforeToolCall
// sees them in the model's order and no body starts before every call is prepared), then runs
// the bodies concurrently, at most MaxParallelTools at a time when it is set. tool_end comes as
// each call finishes; refused calls finish first, in call order.
func (b *toolBatch) runInParallel(ctx context.Context, outcomes []callOutcome) {
	r := b.run
	for _, call := range b.calls {
		r.emit(ToolStartEvent{Call: call})
	}
	prepared := make([]preparedCall, len(b.calls))
	for i, call := range b.calls {
		prepared[i] = r.prepareCall(ctx, call)
	}
	finished := make(chan int, len(b.calls))
	var runnable []int
	for i, p := range prepared {
		if p.result != nil {
			outcomes[i] = callOutcome{result: *p.result}
			finished <- i
		} else {
			runnable = append(runnable, i)
		}
	}
	workers := len(runnable)
	//lab:begin 12.4
	if r.opts.MaxParallelTools > 0 {
		workers = min(workers, r.opts.MaxParallelTools)
	}
	//lab:stub
	//	if r.opts.MaxParallelTools > 0 {
	//		panic(LAB_PENDING)
	//	}
	//lab:end
	queue := make(chan int, len(runnable))
	for _, i := range runnable {
		queue <- i
	}
	close(queue)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range queue {
				outcomes[i] = b.runPreparedOnGoroutine(ctx, i, prepared[i])
				finished <- i
			}
		})
	}
	var panicked any
	for range b.calls {
		i := <-finished
		if outcomes[i].panicked != nil {
			if panicked == nil {
				panicked = outcomes[i].panicked
			}
			continue
		}
		r.emit(ToolEndEvent{Result: outcomes[i].result})
		b.commit(i, outcomes[i].result)
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}

// runPreparedOnGoroutine is runPrepared on a tool goroutine: a panic of the runtime's own code is
// recovered into the outcome, for the run's goroutine to raise (callOutcome).
func (b *toolBatch) runPreparedOnGoroutine(ctx context.Context, i int, p preparedCall) (out callOutcome) {
	defer func() {
		if v := recover(); v != nil {
			out = callOutcome{panicked: v}
		}
	}()
	return b.runPrepared(ctx, i, p)
}

// runPrepared runs call i's body and finishes it, or returns the result of a refused call as it
// is. With a session the body runs only once its tool/start is written (ToolBatchLog.Start).
func (b *toolBatch) runPrepared(ctx context.Context, i int, p preparedCall) callOutcome {
	if p.result != nil {
		return callOutcome{result: *p.result}
	}
	if b.log != nil {
		if err := b.log.Start(ctx, i); err != nil {
			return callOutcome{result: notStarted(p.call, err)}
		}
	}
	out := b.run.finishCall(ctx, p.call, b.run.runBody(ctx, p))
	return callOutcome{
		result: ToolResultMessage{
			ToolCallID: p.call.ID,
			ToolName:   p.call.Name,
			Content:    out.Content,
			Details:    out.Details,
			IsError:    out.IsError,
			Timestamp:  time.Now().UnixMilli(),
		},
		terminate: out.Terminate,
	}
}

// runBody runs a prepared call's tool with its prepared arguments. Its progress reports are
// delivered only while it runs (as executeOne does for chapter 07's executor); an error or a
// panic becomes an error outcome.
func (r *loopRun) runBody(ctx context.Context, p preparedCall) ToolCallOutcome {
	var mu sync.Mutex
	running := true
	exec := ToolExecContext{ReportProgress: func(content []ContentBlock) {
		mu.Lock()
		defer mu.Unlock()
		if running {
			r.emit(ToolProgressEvent{CallID: p.call.ID, Content: content})
		}
	}}
	out, err := runTool(ctx, p.tool, p.args, exec)
	mu.Lock()
	running = false
	mu.Unlock()
	if err != nil {
		return ToolCallOutcome{Content: []ContentBlock{Text(err.Error())}, IsError: true}
	}
	return ToolCallOutcome{Content: out.Content, Details: out.Details, Terminate: out.Terminate}
}

// commit hands call i's result over: with a session to the log's commit cursor, which appends
// every result it can commit to the transcript too; without one, straight to the transcript once
// every call before it is there. Either way results reach the transcript in call order.
func (b *toolBatch) commit(i int, result ToolResultMessage) {
	r := b.run
	if b.log != nil {
		committed, err := b.log.Finish(i, result)
		r.mustLog(0, err)
		r.messages = append(r.messages, messagesOf(committed)...)
		return
	}
	b.results[i] = &result
	for b.next < len(b.calls) && b.results[b.next] != nil {
		r.messages = append(r.messages, *b.results[b.next])
		b.results[b.next] = nil
		b.next++
	}
}
