package sessionproof

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// The crash test's writer process is this test binary started again with childEnv set; these
// variables tell it where to write and which script to play.
const (
	childPathEnv = "SESSIONPROOF_PATH"
	childSeedEnv = "SESSIONPROOF_SEED"
)

// crashTurns is the number of turns of a crash script.
const crashTurns = 10

// opKind is one step of a crash script.
type opKind int

const (
	opUser opKind = iota
	opTurnStart
	opRequest
	opAssistant
	opBegin
	opStart
	opFinish
	opTurnEnd
	opFlush
)

// crashOp is one step: which fields are set depends on kind.
type crashOp struct {
	kind    opKind
	turn    int
	reason  string
	message tinypi.Message
	calls   []tinypi.ToolCall
	call    int
	result  tinypi.ToolResultMessage
}

// crashScript returns the script of seed: turns of a user message, a request, an assistant
// message asking for zero to four calls, the batch started and finished in a random schedule,
// and the turn's end, with a flush after about every third step. The writer process and the
// test build the same script from the same seed.
func crashScript(seed uint64) []crashOp {
	rng := rand.New(rand.NewPCG(seed, 0))
	var ops []crashOp
	add := func(op crashOp) {
		ops = append(ops, op)
		if rng.IntN(3) == 0 {
			ops = append(ops, crashOp{kind: opFlush})
		}
	}
	for turn := 1; turn <= crashTurns; turn++ {
		// Text that JSON must escape, so that the file's encoding is part of what is proven.
		add(crashOp{kind: opUser, message: tinypi.UserMessage{Content: []tinypi.ContentBlock{tinypi.Text(fmt.Sprintf("turn %d: \"quote\"\nnew line, 中文, \\ and \u2028", turn))}, Timestamp: int64(turn)}})
		add(crashOp{kind: opTurnStart, turn: turn})
		add(crashOp{kind: opRequest})
		calls := make([]tinypi.ToolCall, rng.IntN(5))
		content := []tinypi.ContentBlock{tinypi.Text(fmt.Sprint("answer ", turn))}
		for i := range calls {
			calls[i] = tinypi.ToolCall{ID: fmt.Sprintf("t%d-c%d", turn, i), Name: "bash", Arguments: fmt.Sprintf(`{"command":"echo %d"}`, i)}
			content = append(content, calls[i])
		}
		stop := tinypi.StopReasonStop
		if len(calls) > 0 {
			stop = tinypi.StopReasonToolUse
		}
		add(crashOp{kind: opAssistant, message: tinypi.AssistantMessage{Content: content, StopReason: stop, Usage: tinypi.Usage{Input: turn, Output: 2, Total: turn + 2}, Timestamp: int64(100 + turn)}})
		if len(calls) > 0 {
			add(crashOp{kind: opBegin, calls: calls})
			for _, op := range schedule(rng, len(calls)) {
				if op < len(calls) {
					add(crashOp{kind: opStart, call: op})
					continue
				}
				i := op - len(calls)
				add(crashOp{kind: opFinish, call: i, result: tinypi.ToolResultMessage{
					Content:   []tinypi.ContentBlock{tinypi.Text(fmt.Sprintf("%d\n", i))},
					Details:   map[string]any{"exitCode": float64(i % 2), "stdout": fmt.Sprint(i)},
					IsError:   i%2 == 1,
					Timestamp: int64(1000*turn + i),
				}})
			}
		}
		add(crashOp{kind: opTurnEnd, turn: turn, reason: string(stop)})
	}
	return append(ops, crashOp{kind: opFlush})
}

// playModel applies ops to the model and returns the number of events after each op.
func playModel(m *logModel, ops []crashOp) []int {
	var batch *batchModel
	lens := make([]int, len(ops))
	for i, op := range ops {
		switch op.kind {
		case opUser:
			m.user(op.message.(tinypi.UserMessage))
		case opTurnStart:
			m.turnStart(op.turn)
		case opRequest:
			m.modelRequest()
		case opAssistant:
			m.assistant(op.message.(tinypi.AssistantMessage))
		case opBegin:
			batch = m.beginBatch(op.calls)
		case opStart:
			m.start(batch, op.call)
		case opFinish:
			m.finish(batch, op.call, op.result)
		case opTurnEnd:
			m.turnEnd(op.turn, op.reason)
		}
		lens[i] = len(m.events)
	}
	return lens
}

// crashChild is the writer process: it creates the session file, plays the script and, after
// every flush step, writes "flushed STEPS EVENTS" to stdout: STEPS steps are done and the
// first EVENTS events are on disk. At the end of the script it writes "end" and waits to be
// killed (or for its stdin to close). It returns the exit code.
func crashChild() int {
	seed, err := strconv.ParseUint(os.Getenv(childSeedEnv), 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		return 2
	}
	if err := playSession(os.Getenv(childPathEnv), crashScript(seed), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		return 2
	}
	fmt.Fprintln(os.Stdout, "end")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// playSession plays ops on a new session file at path, reporting each flush to progress. The
// session is left open: the process is meant to die with it.
func playSession(path string, ops []crashOp, progress io.Writer) error {
	ctx := context.Background()
	s, err := tinypi.CreateSession(tinypi.SessionOptions{ID: "crash", Path: path, FlushWindow: 100 * time.Microsecond})
	if err != nil {
		return err
	}
	var batch *tinypi.ToolBatchLog
	for i, op := range ops {
		switch op.kind {
		case opUser, opAssistant:
			_, err = s.AppendMessage(op.message)
		case opTurnStart:
			_, err = s.Append(tinypi.SessionEvent{Type: tinypi.EventTurnStart, Turn: op.turn})
		case opRequest:
			_, err = s.ModelRequest(ctx)
		case opBegin:
			batch, err = s.BeginToolBatch(op.calls)
		case opStart:
			err = batch.Start(ctx, op.call)
		case opFinish:
			_, err = batch.Finish(op.call, op.result)
		case opTurnEnd:
			_, err = s.Append(tinypi.SessionEvent{Type: tinypi.EventTurnEnd, Turn: op.turn, Reason: op.reason})
		case opFlush:
			if err = s.Flush(ctx); err == nil {
				_, err = fmt.Fprintf(progress, "flushed %d %d\n", i+1, s.Len())
			}
		}
		if err != nil {
			return fmt.Errorf("step %d (kind %d): %w", i, op.kind, err)
		}
	}
	return nil
}
