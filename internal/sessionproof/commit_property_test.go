package sessionproof

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// commitRuns is the number of random batches TestCommitOrderProperty drives through the
// ToolBatchLog.
const commitRuns = 10000

// TestCommitOrderProperty: whatever order the calls of a batch start and finish in, the log
// pairs every call with exactly one result, holds the results in call order, Finish hands out
// only the contiguous prefix of finished calls, the cached projection equals DeriveMessages of
// the log, and every model request froze exactly the messages derived before it.
func TestCommitOrderProperty(t *testing.T) {
	seed := baseSeed()
	for run := range commitRuns {
		rng := rand.New(rand.NewPCG(seed, uint64(run)))
		if err := commitRun(rng); err != nil {
			t.Fatalf("seed %d, run %d (replay with -seed %d): %v", seed, run, seed, err)
		}
	}
}

// randomCalls returns 1 to 8 calls with IDs unique in the run (prefix names the turn).
func randomCalls(rng *rand.Rand, prefix string) []tinypi.ToolCall {
	calls := make([]tinypi.ToolCall, 1+rng.IntN(8))
	for i := range calls {
		calls[i] = tinypi.ToolCall{ID: fmt.Sprintf("%s-call-%d", prefix, i), Name: []string{"read", "bash", "edit"}[rng.IntN(3)], Arguments: fmt.Sprintf(`{"n":%d}`, i)}
	}
	return calls
}

// schedule returns a random interleaving of the starts and finishes of n calls in which every
// call starts before it finishes: op i < n starts call i, op n+i finishes it. The finish order
// is a uniformly random permutation.
func schedule(rng *rand.Rand, n int) []int {
	var ops, live []int // live: calls started and not finished
	fresh := rng.Perm(n)
	for len(fresh)+len(live) > 0 {
		if j := rng.IntN(len(fresh) + len(live)); j < len(fresh) {
			ops, live = append(ops, fresh[j]), append(live, fresh[j])
			fresh = append(fresh[:j], fresh[j+1:]...)
		} else {
			j -= len(fresh)
			ops = append(ops, n+live[j])
			live = append(live[:j], live[j+1:]...)
		}
	}
	return ops
}

// resultFor is the result a tool returns for call i. Its ToolCallID is sometimes wrong on
// purpose: Finish must pair the result with call i whatever the result says.
func resultFor(rng *rand.Rand, i int) tinypi.ToolResultMessage {
	r := tinypi.ToolResultMessage{Content: []tinypi.ContentBlock{tinypi.Text(fmt.Sprintf("output of call %d", i))}, IsError: rng.IntN(4) == 0, Timestamp: int64(1000 + i)}
	if rng.IntN(3) == 0 {
		r.ToolCallID = "some-other-call"
	}
	return r
}

// commitRun is one run: one or two turns, each a request, an assistant message asking for a
// random batch, the batch started and finished in a random schedule, and the turn's end; then a
// last request that must see every result.
func commitRun(rng *rand.Rand) error {
	ctx := context.Background()
	s := tinypi.NewSession("property")
	var m logModel
	check := func(what string, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	request := func() error {
		got, err := s.ModelRequest(ctx)
		if err != nil {
			return fmt.Errorf("ModelRequest: %w", err)
		}
		if d := diffMessages(m.modelRequest(), got); d != "" {
			return fmt.Errorf("ModelRequest returned other messages (-want +got):\n%s", d)
		}
		return nil
	}
	user := tinypi.UserMessage{Content: []tinypi.ContentBlock{tinypi.Text("run the tools")}, Timestamp: 1}
	if _, err := s.AppendMessage(user); err != nil {
		return check("AppendMessage(user)", err)
	}
	m.user(user)
	turns := 1 + rng.IntN(2)
	for turn := 1; turn <= turns; turn++ {
		if _, err := s.Append(tinypi.SessionEvent{Type: tinypi.EventTurnStart, Turn: turn}); err != nil {
			return check("Append(turn/start)", err)
		}
		m.turnStart(turn)
		if err := request(); err != nil {
			return err
		}
		calls := randomCalls(rng, fmt.Sprint("t", turn))
		content := []tinypi.ContentBlock{tinypi.Text("calling")}
		for _, c := range calls {
			content = append(content, c)
		}
		assistant := tinypi.AssistantMessage{Content: content, StopReason: tinypi.StopReasonToolUse, Timestamp: int64(10 * turn)}
		if _, err := s.AppendMessage(assistant); err != nil {
			return check("AppendMessage(assistant)", err)
		}
		m.assistant(assistant)
		if err := runBatch(ctx, rng, s, &m, calls); err != nil {
			return err
		}
		if _, err := s.Append(tinypi.SessionEvent{Type: tinypi.EventTurnEnd, Turn: turn, Reason: "toolUse"}); err != nil {
			return check("Append(turn/end)", err)
		}
		m.turnEnd(turn, "toolUse")
	}
	if err := request(); err != nil {
		return err
	}
	events := s.Events()
	if d := diffEvents(m.events, events); d != "" {
		return fmt.Errorf("the log differs from the expected one (-want +got):\n%s", d)
	}
	if _, err := checkLog(events); err != nil {
		return err
	}
	if d := diffMessages(tinypi.DeriveMessages(events), s.Messages()); d != "" {
		return fmt.Errorf("Messages() differs from DeriveMessages(Events()) (-derived +cached):\n%s", d)
	}
	return nil
}

// runBatch drives one batch through BeginToolBatch, Start and Finish in a random schedule and
// checks every Finish against the model's commit cursor.
func runBatch(ctx context.Context, rng *rand.Rand, s *tinypi.Session, m *logModel, calls []tinypi.ToolCall) error {
	b, err := s.BeginToolBatch(calls)
	if err != nil {
		return fmt.Errorf("BeginToolBatch: %w", err)
	}
	mb := m.beginBatch(calls)
	for i := range calls {
		if got, want := b.CallSeq(i), mb.callSeqs[i]; got != want {
			return fmt.Errorf("CallSeq(%d) = %d, want %d", i, got, want)
		}
	}
	n := len(calls)
	// One run in ten also checks the cached projection after every Finish, while results are
	// pending; every run checks it at its end.
	checkCache := rng.IntN(10) == 0
	for _, op := range schedule(rng, n) {
		if op < n {
			if err := b.Start(ctx, op); err != nil {
				return fmt.Errorf("Start(%d): %w", op, err)
			}
			m.start(mb, op)
			continue
		}
		i := op - n
		result := resultFor(rng, i)
		got, err := b.Finish(i, result)
		if err != nil {
			return fmt.Errorf("Finish(%d): %w", i, err)
		}
		if d := diffResults(m.finish(mb, i, result), got); d != "" {
			return fmt.Errorf("Finish(%d) committed other results (-want +got):\n%s", i, d)
		}
		if got, want := b.Committed(), mb.next; got != want {
			return fmt.Errorf("after Finish(%d): Committed() = %d, want %d", i, got, want)
		}
		if !checkCache {
			continue
		}
		if d := diffMessages(tinypi.DeriveMessages(s.Events()), s.Messages()); d != "" {
			return fmt.Errorf("after Finish(%d): Messages() differs from DeriveMessages(Events()) (-derived +cached):\n%s", i, d)
		}
	}
	if _, err := b.Finish(0, resultFor(rng, 0)); err == nil {
		return fmt.Errorf("a second Finish(0) succeeded, want an error")
	}
	return nil
}

// diffResults compares results as messages.
func diffResults(want, got []tinypi.ToolResultMessage) string {
	return diffMessages(asMessages(want), asMessages(got))
}

func asMessages(results []tinypi.ToolResultMessage) []tinypi.Message {
	out := make([]tinypi.Message, len(results))
	for i, r := range results {
		out[i] = r
	}
	return out
}
