//go:build unix

package sessionproof

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// crashTrials is the number of writer processes TestSessionSurvivesSIGKILL kills.
const crashTrials = 200

// TestSessionSurvivesSIGKILL starts a writer process that plays a random script on a session
// file and reports every flush, kills it with SIGKILL right after a randomly chosen report, and
// loads what it left: the load succeeds, every event reported flushed is there and equal to
// the script's, whatever else reached the file is the script's next events, the crash repair
// is exactly what the chapter's rules ask for, and no call is left without a result. Loading
// the repaired file again repairs nothing.
func TestSessionSurvivesSIGKILL(t *testing.T) {
	seed := baseSeed()
	for trial := range crashTrials {
		t.Run(fmt.Sprint("trial-", trial), func(t *testing.T) {
			t.Parallel()
			if err := crashTrial(t.TempDir(), seed+uint64(trial)); err != nil {
				t.Fatalf("seed %d (replay with -seed %d -run 'SIGKILL/trial-%d$'): %v", seed+uint64(trial), seed, trial, err)
			}
		})
	}
}

func crashTrial(dir string, seed uint64) error {
	path := filepath.Join(dir, "session.jsonl")
	ops := crashScript(seed)
	var full logModel
	lens := playModel(&full, ops)
	reports := 0
	for _, op := range ops {
		if op.kind == opFlush {
			reports++
		}
	}
	killAfter := 1 + rand.New(rand.NewPCG(seed, 1)).IntN(reports)

	flushed, err := runAndKill(path, seed, killAfter, lens)
	if err != nil {
		return err
	}
	s, repair, err := tinypi.LoadSession(path, tinypi.SessionOptions{})
	if err != nil {
		return fmt.Errorf("LoadSession after the kill (report %d, %d events flushed): %w", killAfter, flushed, err)
	}
	events := s.Events()
	if err := s.Close(); err != nil {
		return fmt.Errorf("Close: %w", err)
	}
	kept := len(events) - len(repair.Appended)
	if want := seqRange(kept, len(events)); !slices.Equal(repair.Appended, want) {
		return fmt.Errorf("repair.Appended = %v, want the seqs of the last %d events %v", repair.Appended, len(repair.Appended), want)
	}
	if kept < flushed || kept > len(full.events) {
		return fmt.Errorf("the file kept %d events; %d were reported flushed and the script has %d", kept, flushed, len(full.events))
	}
	if d := diffEvents(full.events[:kept], events[:kept]); d != "" {
		return fmt.Errorf("the %d events the file kept (%d reported flushed) differ from the script's (-want +got):\n%s", kept, flushed, d)
	}
	if err := checkRepair(events[:kept], events[kept:]); err != nil {
		return fmt.Errorf("crash repair after %d kept events: %w", kept, err)
	}
	if _, err := checkLog(events); err != nil {
		return fmt.Errorf("the repaired log: %w", err)
	}

	again, repair2, err := tinypi.LoadSession(path, tinypi.SessionOptions{})
	if err != nil {
		return fmt.Errorf("loading the repaired file: %w", err)
	}
	reloaded := again.Events()
	if err := again.Close(); err != nil {
		return fmt.Errorf("Close: %w", err)
	}
	if repair2.TornBytes != 0 || len(repair2.Appended) != 0 {
		return fmt.Errorf("loading the repaired file repaired again: %+v", repair2)
	}
	if d := diffEvents(events, reloaded); d != "" {
		return fmt.Errorf("the repaired file loads other events (-repaired +reloaded):\n%s", d)
	}
	return nil
}

// runAndKill runs the writer process on path, kills it with SIGKILL right after its
// killAfter-th flush report and returns the number of events that report said were flushed.
// lens[i] is the number of events the script has after step i, to check each report against.
func runAndKill(path string, seed uint64, killAfter int, lens []int) (int, error) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=crash", childPathEnv+"="+path, childSeedEnv+"="+strconv.FormatUint(seed, 10))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	// The child waits on its stdin at the end of the script; it is never written to.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting the writer process: %w", err)
	}
	lines := bufio.NewScanner(stdout)
	flushed, seen := 0, 0
	for seen < killAfter && lines.Scan() {
		var steps, events int
		if _, err := fmt.Sscanf(lines.Text(), "flushed %d %d", &steps, &events); err != nil {
			continue // "end"
		}
		if steps < 1 || steps > len(lens) || events != lens[steps-1] {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return 0, fmt.Errorf("the writer reported %q; after %d steps the script has %d events", lines.Text(), steps, lens[min(max(steps, 1), len(lens))-1])
		}
		flushed, seen = events, seen+1
	}
	if seen < killAfter {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return 0, fmt.Errorf("the writer stopped after %d of %d reports: %v\n%s", seen, killAfter, lines.Err(), stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return 0, fmt.Errorf("killing the writer: %w", err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		return 0, fmt.Errorf("the writer ended with %v, not by SIGKILL:\n%s", err, stderr.String())
	}
	return flushed, nil
}

func seqRange(from, to int) []int {
	var out []int
	for seq := from; seq < to; seq++ {
		out = append(out, seq)
	}
	return out
}

// checkRepair checks the events crash repair appended to kept against the chapter's rules: a
// tool/call for every call the last assistant message asked for and the log lacks; then, in
// call order, a result for every call without one, TOOL_OUTCOME_UNKNOWN when its tool/start is
// in the log and TOOL_NOT_STARTED when not; then a turn/end "interrupted" when a turn is open.
func checkRepair(kept, appended []tinypi.SessionEvent) error {
	type open struct {
		call    tinypi.ToolCall
		started bool
	}
	calls := map[int]*open{}
	var order []int
	var lastAssistant tinypi.AssistantMessage
	loggedSince := map[string]bool{}
	turn, turnOpen := 0, false
	for _, e := range kept {
		switch e.Type {
		case tinypi.EventToolCall:
			calls[e.Seq] = &open{call: *e.Call}
			order = append(order, e.Seq)
			loggedSince[e.Call.ID] = true
		case tinypi.EventToolStart:
			calls[e.SourceEventSeqs[0]].started = true
		case tinypi.EventToolResult:
			delete(calls, e.SourceEventSeqs[0])
		case tinypi.EventAssistantMessage:
			lastAssistant = e.Message.(tinypi.AssistantMessage)
			loggedSince = map[string]bool{}
		case tinypi.EventTurnStart:
			turn, turnOpen = e.Turn, true
		case tinypi.EventTurnEnd:
			turnOpen = false
		}
	}
	var want []string // one line per expected event
	seq := len(kept)
	if lastAssistant.StopReason == tinypi.StopReasonToolUse {
		for _, c := range lastAssistant.ToolCalls() {
			if !loggedSince[c.ID] {
				want = append(want, fmt.Sprintf("%d tool/call %s %s", seq, c.ID, c.Name))
				calls[seq] = &open{call: c}
				order = append(order, seq)
				seq++
			}
		}
	}
	for _, callSeq := range order {
		o, ok := calls[callSeq]
		if !ok {
			continue
		}
		code := tinypi.ToolNotStarted
		if o.started {
			code = tinypi.ToolOutcomeUnknown
		}
		want = append(want, fmt.Sprintf("%d tool/result [%d] %s %s error=true code=%s", seq, callSeq, o.call.ID, o.call.Name, code))
		seq++
	}
	if turnOpen {
		want = append(want, fmt.Sprintf("%d turn/end %d interrupted", seq, turn))
	}
	var got []string
	for _, e := range appended {
		got = append(got, describeRepair(e))
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("repair appended\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	return nil
}

// describeRepair is the line checkRepair compares for an event crash repair appended.
func describeRepair(e tinypi.SessionEvent) string {
	switch e.Type {
	case tinypi.EventToolCall:
		return fmt.Sprintf("%d tool/call %s %s", e.Seq, e.Call.ID, e.Call.Name)
	case tinypi.EventToolResult:
		r := e.Message.(tinypi.ToolResultMessage)
		return fmt.Sprintf("%d tool/result %v %s %s error=%t code=%v", e.Seq, e.SourceEventSeqs, r.ToolCallID, r.ToolName, r.IsError, r.Details["code"])
	case tinypi.EventTurnEnd:
		return fmt.Sprintf("%d turn/end %d %s", e.Seq, e.Turn, e.Reason)
	}
	return fmt.Sprintf("%d %s (unexpected)", e.Seq, e.Type)
}
