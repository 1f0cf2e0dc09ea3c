package tinypi

import (
	"context"
	"fmt"
)

// ToolBatchLog logs one tool batch: a tool/call for every call before any runs, a tool/start
// before each tool body, and the results through a commit cursor.
//
// Calls may finish in any order; a result is committed (appended as tool/result) only when every
// call before it has been committed, so the log holds the results in the model's call order and
// the committed results are always a prefix of the batch. Finish and Start may be called from
// the tool goroutines.
type ToolBatchLog struct {
	session  *Session
	calls    []ToolCall
	callSeqs []int                // callSeqs[i] is the seq of call i's tool/call
	finished []*ToolResultMessage // finished[i] is set when call i finished and is not committed yet
	next     int                  // the commit cursor: calls before it are committed
}

// BeginToolBatch appends a tool/call event for each call, in call order, before any of them
// runs, and returns the batch's log, which keeps calls: the caller does not change them afterwards.
// A call the log refuses (one without an ID) stops it with that error and no batch is returned;
// the tool/calls of the calls before it stay in the log.
func (s *Session) BeginToolBatch(calls []ToolCall) (*ToolBatchLog, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	//lab:begin 10.2
	b := &ToolBatchLog{session: s, calls: calls, callSeqs: make([]int, len(calls)), finished: make([]*ToolResultMessage, len(calls))}
	for i, call := range calls {
		seq, err := s.appendLocked(SessionEvent{Type: EventToolCall, Call: &call})
		if err != nil {
			return nil, err
		}
		b.callSeqs[i] = seq
	}
	return b, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// CallSeq returns the seq of call i's tool/call event.
func (b *ToolBatchLog) CallSeq(i int) int { return b.callSeqs[i] }

// Start logs that call i's body is about to run and waits for the log to be written: the barrier
// before a tool body, so that after a crash the log tells a call that may have had effects from
// one that never began.
//
// A call either starts (its tool/start is logged and its body runs) or it does not (nothing is
// logged and its result says TOOL_NOT_STARTED). When ctx is already done, Start logs nothing and
// returns ctx.Err(). Once the tool/start is logged the call has started: a cancellation that
// arrives after that no longer stops it, so Start waits for the write all the same and returns
// nil, and the body runs with the cancelled ctx. Only a write error makes Start fail after
// logging; the body must not run then, and since nothing more reaches the file after a write
// error, the file never holds that tool/start.
func (b *ToolBatchLog) Start(ctx context.Context, i int) error {
	//lab:begin 10.3
	if err := ctx.Err(); err != nil {
		return err
	}
	call := b.calls[i]
	if _, err := b.session.Append(SessionEvent{Type: EventToolStart, Call: &ToolCall{ID: call.ID, Name: call.Name}, SourceEventSeqs: []int{b.callSeqs[i]}}); err != nil {
		return err
	}
	return b.session.Flush(context.WithoutCancel(ctx))
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// Finish records the result of call i and commits every result the cursor can now pass: the
// contiguous run of finished calls from the cursor on. It returns the committed results, in call
// order (none when an earlier call is still running). A second result for a call is an error.
func (b *ToolBatchLog) Finish(i int, result ToolResultMessage) ([]ToolResultMessage, error) {
	s := b.session
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < b.next || b.finished[i] != nil {
		return nil, fmt.Errorf("tinypi: session: call %d (%s) already has a result", i, b.calls[i].ID)
	}
	result.ToolCallID, result.ToolName = b.calls[i].ID, b.calls[i].Name
	//lab:begin 10.2
	b.finished[i] = &result
	var committed []ToolResultMessage
	for b.next < len(b.calls) && b.finished[b.next] != nil {
		r := *b.finished[b.next]
		if _, err := s.appendLocked(SessionEvent{Type: EventToolResult, Message: r, SourceEventSeqs: []int{b.callSeqs[b.next]}}); err != nil {
			return committed, err
		}
		b.finished[b.next] = nil
		committed = append(committed, r)
		b.next++
	}
	return committed, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// Committed reports how many calls, from the first, have their result in the log.
func (b *ToolBatchLog) Committed() int {
	b.session.mu.Lock()
	defer b.session.mu.Unlock()
	return b.next
}
