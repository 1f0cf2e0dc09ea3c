package tinypi

// Helpers of chapter 11's focused tests that later chapters' tests use too. They live apart
// from the tests so that, in a later chapter's directory, a plain `go test` compiles them
// without the earlier chapter's tests, which are behind the build tag allchapters there.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// ch11Line renders an event as ch10Line does, and a compaction with its payload.
func ch11Line(e SessionEvent) string {
	if e.Type == EventCompaction && e.Compaction != nil {
		c := e.Compaction
		return fmt.Sprintf("%d compaction first=%d %s tokens=%d read=%v changed=%v",
			e.Seq, c.FirstKeptSeq, c.Reason, c.TokensBefore, c.ReadFiles, c.ChangedFiles)
	}
	return ch10Line(e)
}

func ch11Lines(events []SessionEvent) []string {
	out := []string{}
	for _, e := range events {
		out = append(out, ch11Line(e))
	}
	return out
}

// ch11Events returns s.Events(), failing the test at once when it does not return (a lock
// never released).
func ch11Events(t *testing.T, s *Session) []SessionEvent {
	t.Helper()
	return ch10Within(t, "Events()", ch10LockWhy, s.Events)
}

// ch11Diff fails the test when two line lists differ, naming the first line that differs, then
// listing both. A line break inside a line (the summary message has several) is shown as \n.
// (The lists are compared by hand, not with cmp.Diff, whose output is not the same from one run to
// the next: course test names a mistake by the first message a test gives.)
func ch11Diff(t *testing.T, what string, want, got []string) bool {
	t.Helper()
	if slices.Equal(want, got) {
		return true
	}
	oneLine := func(l string) string { return strings.ReplaceAll(l, "\n", `\n`) }
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	wantLine, gotLine := "nothing", "nothing"
	if i < len(want) {
		wantLine = fmt.Sprintf("%q", oneLine(want[i]))
	}
	if i < len(got) {
		gotLine = fmt.Sprintf("%q", oneLine(got[i]))
	}
	list := func(lines []string) string {
		var b strings.Builder
		for _, l := range lines {
			b.WriteString("\n\t" + oneLine(l))
		}
		return b.String()
	}
	t.Errorf("%s: line %d is %s, want %s\nwant:%s\ngot:%s", what, i+1, gotLine, wantLine, list(want), list(got))
	return false
}

// ch11Log numbers events as a whole log: events[i].Seq = i.
func ch11Log(events ...SessionEvent) []SessionEvent {
	for i := range events {
		events[i].Seq = i
	}
	return events
}

func ch11User(text string) SessionEvent {
	return SessionEvent{Type: EventUserMessage, Message: UserText(text)}
}

func ch11Assistant(m AssistantMessage) SessionEvent {
	return SessionEvent{Type: EventAssistantMessage, Message: m}
}

func ch11TurnStart(n int) SessionEvent { return SessionEvent{Type: EventTurnStart, Turn: n} }

func ch11TurnEnd(n int, reason string) SessionEvent {
	return SessionEvent{Type: EventTurnEnd, Turn: n, Reason: reason}
}

func ch11Request(through, count int) SessionEvent {
	return SessionEvent{Type: EventModelRequest, ThroughSeq: through, Count: count}
}

// ch11SessionOf appends events to a new session in memory, each checked by the log's rules.
func ch11SessionOf(t *testing.T, events []SessionEvent) *Session {
	t.Helper()
	s := NewSession("s")
	for _, e := range events {
		e.Seq = 0
		ch10Append(t, s, e)
	}
	return s
}

// ch11From returns lines[i:], or nothing when there are not that many lines.
func ch11From(lines []string, i int) []string {
	if i > len(lines) {
		return nil
	}
	return lines[i:]
}

// ch11History is a session the next run starts from:
//
//	0 user u1  1 turn/start 1  2 model/request  3 assistant a1 (usage 1000+10)  4 turn/end 1 stop
//	5 user u2  6 user u3 (the new prompt)
//
// Its cut points are 5 and 6.
func ch11History(t *testing.T) *Session {
	a1 := ch10Answer("a1")
	a1.Usage = Usage{Input: 1000, Output: 10}
	return ch11SessionOf(t, ch11Log(ch11User("u1"), ch11TurnStart(1), ch11Request(1, 1), ch11Assistant(a1),
		ch11TurnEnd(1, "stop"), ch11User("u2"), ch11User("u3")))
}
