package tinypi

// Helpers of chapter 11's focused tests that later chapters' tests use too. They live apart
// from the tests so that, in a later chapter's directory, a plain `go test` compiles them
// without the earlier chapter's tests (see manifest.EarlierTestsTag in the kit).

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
