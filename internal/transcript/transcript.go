// Package transcript shows the run a failing focused test drove next to the reference run of the
// same test, with the first difference marked.
//
// The focused tests of an agent chapter write a tinypi.RunRecord per test when
// tinypi.RunRecordDirEnv is set; tinypi only writes records, this package reads them (decode.go).
// It renders each record as numbered lines (the requests, every event in the loop's order, the
// final transcript and the result), aligns two renderings section by section and prints them
// side by side, or one above the other on a narrow terminal.
package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/learn-tinypi/course/internal/columns"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// Load reads one record.
func Load(path string) (tinypi.RunRecord, error) {
	rec, err := readRecord(path)
	if err != nil {
		return tinypi.RunRecord{}, fmt.Errorf("loading a run record: %w", err)
	}
	return rec, nil
}

// LoadDir reads every record (*.json) in dir, sorted by test name. A dir that does not exist
// holds no records.
func LoadDir(dir string) ([]tinypi.RunRecord, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the run records: %w", err)
	}
	var recs []tinypi.RunRecord
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		rec, err := Load(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	slices.SortFunc(recs, func(a, b tinypi.RunRecord) int { return strings.Compare(a.Test, b.Test) })
	return recs, nil
}

// Select returns the records of test: the record named test, or when test is a top-level test
// with subtests, the records of its subtests ("test/...").
func Select(recs []tinypi.RunRecord, test string) []tinypi.RunRecord {
	var out []tinypi.RunRecord
	for _, r := range recs {
		if r.Test == test || strings.HasPrefix(r.Test, test+"/") {
			out = append(out, r)
		}
	}
	return out
}

// Section is a named part of a run's rendering.
type Section struct {
	Name  string
	Lines []string
}

// Section names. Requests are "request 1", "request 2", ...
const (
	SectionEvents     = "events"
	SectionTranscript = "transcript"
	SectionResult     = "result"
)

// Sections renders rec: one section per request (its system prompt, tools and messages), the
// events in the loop's order, the final transcript and the result. Timestamps are left out:
// results made while the loop runs carry wall-clock times that differ between any two runs.
func Sections(rec tinypi.RunRecord) []Section {
	var out []Section
	for i, req := range rec.Requests {
		names := make([]string, len(req.Tools))
		for k, t := range req.Tools {
			names[k] = t.Name
		}
		lines := []string{
			"system      " + strconv.Quote(req.SystemPrompt),
			"tools       " + orNone(strings.Join(names, ", ")),
		}
		for _, m := range req.Messages {
			lines = append(lines, describeMessage(m))
		}
		out = append(out, Section{Name: requestSection(i + 1), Lines: lines})
	}
	if len(rec.Requests) == 0 {
		out = append(out, Section{Name: requestSection(1), Lines: []string{"(no request)"}})
	}
	events := make([]string, len(rec.Events))
	for i, e := range rec.Events {
		events[i] = describeEvent(e)
	}
	if len(events) == 0 {
		events = []string{"(no events)"}
	}
	out = append(out, Section{Name: SectionEvents, Lines: events})
	transcript := make([]string, len(rec.Result.Messages))
	for i, m := range rec.Result.Messages {
		transcript[i] = describeMessage(m)
	}
	if len(transcript) == 0 {
		transcript = []string{"(empty)"}
	}
	out = append(out, Section{Name: SectionTranscript, Lines: transcript})
	var result []string
	if rec.Result.Reason != "" || rec.Err == "" {
		result = append(result, fmt.Sprintf("reason %s, steps %d", orNone(string(rec.Result.Reason)), rec.Result.Steps))
	}
	if rec.Err != "" {
		result = append(result, "ended by: "+oneLine(rec.Err))
	}
	out = append(out, Section{Name: SectionResult, Lines: result})
	return out
}

func requestSection(n int) string { return "request " + strconv.Itoa(n) }

// Row is one line of a comparison: the line each run has at this place.
type Row struct {
	Section            string
	Learner, Reference string
	// HasLearner and HasReference are false where that run's section is shorter, or where the
	// run has no such section at all.
	HasLearner, HasReference bool
	// Reordered marks tool_end events of one concurrent batch that both runs have, in another
	// order: calls running at once may complete in any order, so this is not a difference.
	Reordered bool
}

// Differs reports whether the two runs differ at this row.
func (r Row) Differs() bool {
	if r.Reordered {
		return false
	}
	return r.HasLearner != r.HasReference || r.Learner != r.Reference
}

// Comparison is two runs of one test, aligned row by row.
type Comparison struct {
	Test string
	// LearnerFailed is whether the learner's test failed.
	LearnerFailed bool
	Rows          []Row
	// First is the index in Rows of the first row that differs; -1 when the runs agree.
	First int
}

// Compare aligns the renderings of two runs. Sections are matched by name (request 1 with
// request 1, events with events), lines within a section by position.
func Compare(learner, reference tinypi.RunRecord) Comparison {
	test := learner.Test
	if test == "" {
		test = reference.Test
	}
	c := CompareSections(test, Sections(learner), Sections(reference))
	c.LearnerFailed = learner.Failed
	return c
}

// CompareSections aligns two renderings of any kind of run (a run record's Sections, a session
// log's): sections are matched by name, request sections ("request N") first in number order,
// then the fixed sections (events, transcript, result) and then every other name in the order
// the learner's rendering, then the reference's, first has it; lines within a section by
// position. In the events section, tool_end lines of one concurrent batch that differ only in
// order are marked Reordered.
func CompareSections(test string, ls, rs []Section) Comparison {
	c := Comparison{Test: test, First: -1}
	for _, name := range sectionOrder(ls, rs) {
		l, r := find(ls, name), find(rs, name)
		start := len(c.Rows)
		for i := range max(len(l), len(r)) {
			row := Row{Section: name}
			if i < len(l) {
				row.Learner, row.HasLearner = l[i], true
			}
			if i < len(r) {
				row.Reference, row.HasReference = r[i], true
			}
			c.Rows = append(c.Rows, row)
		}
		if name == SectionEvents {
			markReordered(c.Rows[start:])
		}
	}
	for i, row := range c.Rows {
		if row.Differs() {
			c.First = i
			break
		}
	}
	return c
}

// sectionOrder lists the section names of both runs: requests up to the larger count, then the
// fixed sections.
func sectionOrder(a, b []Section) []string {
	var names []string
	for _, s := range append(slices.Clone(a), b...) {
		if strings.HasPrefix(s.Name, "request ") && !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	slices.SortStableFunc(names, func(x, y string) int {
		nx, _ := strconv.Atoi(strings.TrimPrefix(x, "request "))
		ny, _ := strconv.Atoi(strings.TrimPrefix(y, "request "))
		return nx - ny
	})
	names = append(names, SectionEvents, SectionTranscript, SectionResult)
	for _, s := range append(slices.Clone(a), b...) {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	return names
}

func find(sections []Section, name string) []string {
	for _, s := range sections {
		if s.Name == name {
			return s.Lines
		}
	}
	return nil
}

// markReordered marks each maximal block of rows where both runs have tool_end events, when the
// two blocks hold the same events in another order.
func markReordered(rows []Row) {
	isEnd := func(r Row) bool {
		return r.HasLearner && r.HasReference &&
			strings.HasPrefix(r.Learner, "tool_end ") && strings.HasPrefix(r.Reference, "tool_end ")
	}
	for i := 0; i < len(rows); {
		if !isEnd(rows[i]) {
			i++
			continue
		}
		j := i
		for j < len(rows) && isEnd(rows[j]) {
			j++
		}
		var l, r []string
		for _, row := range rows[i:j] {
			l, r = append(l, row.Learner), append(r, row.Reference)
		}
		if !slices.Equal(l, r) {
			slices.Sort(l)
			slices.Sort(r)
			if slices.Equal(l, r) {
				for k := i; k < j; k++ {
					rows[k].Reordered = rows[k].Learner != rows[k].Reference
				}
			}
		}
		i = j
	}
}

// MinSideBySide is the narrowest width at which Render puts the runs side by side.
const MinSideBySide = 80

// Options configure Render.
type Options struct {
	// Width is the terminal's width in columns; 0 means 120. Below MinSideBySide the runs are
	// printed one above the other.
	Width  int
	Labels Labels // zero fields take DefaultLabels()
	// ASCII draws markers and rules with plain ASCII characters, for output that is not a
	// terminal (a pipe, a file, NO_COLOR).
	ASCII bool
}

// glyphs are the markers in the gutter of a row and the lines that frame the columns.
type glyphs struct {
	first, differs, sameSet, bar, rule, none string
}

func glyphsFor(ascii bool) glyphs {
	if ascii {
		return glyphs{first: ">", differs: "!", sameSet: "~", bar: "|", rule: "-", none: "."}
	}
	return glyphs{first: "▶", differs: "≠", sameSet: "~", bar: "│", rule: "─", none: "·"}
}

// Render prints c: a heading with the test's name, then every section with its numbered rows,
// the first differing row marked ▶ and later ones ≠, and finally the first difference in full
// (the columns may have cut it short).
func Render(w io.Writer, c Comparison, opts Options) error {
	labels := withDefaults(opts.Labels)
	g := glyphsFor(opts.ASCII)
	width := opts.Width
	if width <= 0 {
		width = 120
	}
	var b strings.Builder
	b.WriteString(c.Test)
	if c.LearnerFailed {
		b.WriteString(" " + labels.TestFailed)
	}
	b.WriteString("\n")
	numWidth := len(strconv.Itoa(len(c.Rows)))
	sideBySide := width >= MinSideBySide
	gutter := 2 + numWidth + 2 // marker, space, number, two spaces
	col := (width - gutter - 3) / 2
	if sideBySide {
		fmt.Fprintf(&b, "%s%s %s %s\n", strings.Repeat(" ", gutter), pad(labels.Learner, col), g.bar, labels.Reference)
	}
	reordered := false
	section := ""
	for i, row := range c.Rows {
		if row.Section != section {
			section = row.Section
			rule := g.rule + g.rule + " " + section + " "
			b.WriteString(rule + strings.Repeat(g.rule, max(3, width-columns.Width(rule))) + "\n")
		}
		mark := " "
		switch {
		case i == c.First:
			mark = g.first
		case row.Differs():
			mark = g.differs
		case row.Reordered:
			mark, reordered = g.sameSet, true
		}
		num := fmt.Sprintf("%*d", numWidth, i+1)
		switch {
		case sideBySide:
			line := fmt.Sprintf("%s %s  %s %s %s", mark, num, pad(fit(g.side(row.Learner, row.HasLearner), col), col), g.bar, fit(g.side(row.Reference, row.HasReference), col))
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		case row.HasLearner && row.HasReference && row.Learner == row.Reference:
			fmt.Fprintf(&b, "%s %s  %s\n", mark, num, fit(row.Learner, width-gutter))
		default:
			// One above the other: the learner's line, then the reference's under it.
			lw, rw := columns.Width(labels.Learner), columns.Width(labels.Reference)
			lab := max(lw, rw)
			fmt.Fprintf(&b, "%s %s  %s  %s\n", mark, num, pad(labels.Learner, lab), fit(g.side(row.Learner, row.HasLearner), width-gutter-lab-2))
			fmt.Fprintf(&b, "%s  %s  %s\n", strings.Repeat(" ", gutter-2), pad(labels.Reference, lab), fit(g.side(row.Reference, row.HasReference), width-gutter-lab-2))
		}
	}
	b.WriteString("\n")
	if reordered {
		b.WriteString(labels.Reordered + "\n")
	}
	if c.First < 0 {
		b.WriteString(labels.Same + "\n")
	} else {
		row := c.Rows[c.First]
		fmt.Fprintf(&b, "%s %s\n", g.first, fmt.Sprintf(labels.FirstDifference, c.First+1, row.Section))
		lab := max(columns.Width(labels.Learner), columns.Width(labels.Reference))
		fmt.Fprintf(&b, "  %s  %s\n", pad(labels.Learner, lab), g.side(row.Learner, row.HasLearner))
		fmt.Fprintf(&b, "  %s  %s\n", pad(labels.Reference, lab), g.side(row.Reference, row.HasReference))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func withDefaults(l Labels) Labels {
	d := DefaultLabels()
	for _, f := range []struct {
		dst *string
		def string
	}{
		{&l.Learner, d.Learner}, {&l.Reference, d.Reference}, {&l.FirstDifference, d.FirstDifference},
		{&l.Same, d.Same}, {&l.TestFailed, d.TestFailed}, {&l.Reordered, d.Reordered},
	} {
		if *f.dst == "" {
			*f.dst = f.def
		}
	}
	return l
}

// side is a row's text for one run; a run without a line here shows the "none" glyph.
func (g glyphs) side(text string, ok bool) string {
	if !ok {
		return g.none
	}
	return text
}

// --- rendering runs -----------------------------------------------------------------------------

// DescribeMessage renders one message on one line, as the transcript sections show it: the role
// padded to a column, then its content (text quoted, tool calls as name(id arguments)), and for
// a tool result its call id, tool name and error flag.
func DescribeMessage(m tinypi.Message) string { return describeMessage(m) }

func describeMessage(m tinypi.Message) string {
	switch m := m.(type) {
	case tinypi.UserMessage:
		return "user        " + describeContent(m.Content)
	case tinypi.AssistantMessage:
		s := "assistant   " + string(m.StopReason)
		if c := describeContent(m.Content); c != "" {
			s += "  " + c
		}
		if m.ErrorMessage != "" {
			s += "  error " + strconv.Quote(m.ErrorMessage)
		}
		return s
	case tinypi.ToolResultMessage:
		return "toolResult  " + describeResult(m)
	case nil:
		return "<nil message>"
	default:
		return fmt.Sprintf("<%T>", m)
	}
}

func describeResult(r tinypi.ToolResultMessage) string {
	s := fmt.Sprintf("%s %s → %s", orNone(r.ToolCallID), r.ToolName, describeContent(r.Content))
	if r.IsError {
		s += "  isError"
	}
	if len(r.Details) > 0 {
		if d, err := json.Marshal(r.Details); err == nil { // keys come out sorted
			s += "  details " + string(d)
		}
	}
	return s
}

func describeContent(content []tinypi.ContentBlock) string {
	parts := make([]string, 0, len(content))
	for _, block := range content {
		switch b := block.(type) {
		case tinypi.TextContent:
			parts = append(parts, strconv.Quote(b.Text))
		case tinypi.ThinkingContent:
			parts = append(parts, "thinking "+strconv.Quote(b.Thinking))
		case tinypi.ToolCall:
			parts = append(parts, describeCall(b))
		default:
			parts = append(parts, fmt.Sprintf("<%T>", b))
		}
	}
	return strings.Join(parts, " + ")
}

func describeCall(c tinypi.ToolCall) string {
	return fmt.Sprintf("%s(%s %s)", c.Name, orNone(c.ID), c.Arguments)
}

func describeEvent(e tinypi.LoopEvent) string {
	if e == nil {
		return "<nil event>"
	}
	head := fmt.Sprintf("%-17s ", e.EventType())
	switch e := e.(type) {
	case tinypi.ModelEvent:
		return head + describeModelEvent(e.Event)
	case tinypi.AssistantMessageEvent:
		return head + strings.TrimPrefix(describeMessage(e.Message), "assistant   ")
	case tinypi.ToolStartEvent:
		return head + describeCall(e.Call)
	case tinypi.ToolProgressEvent:
		return head + orNone(e.CallID) + " " + describeContent(e.Content)
	case tinypi.ToolEndEvent:
		return head + describeResult(e.Result)
	case tinypi.ToolSkippedEvent:
		return head + describeResult(e.Result)
	case tinypi.TurnEndEvent:
		return head + fmt.Sprintf("%s, steps %d", orNone(string(e.Reason)), e.Steps)
	default:
		return strings.TrimSpace(head)
	}
}

func describeModelEvent(e tinypi.AssistantEvent) string {
	if e == nil {
		return "<nil>"
	}
	switch e := e.(type) {
	case tinypi.TextDeltaEvent:
		return "text_delta " + strconv.Quote(e.Delta)
	case tinypi.ThinkingDeltaEvent:
		return "thinking_delta " + strconv.Quote(e.Delta)
	case tinypi.ToolCallDeltaEvent:
		return "toolcall_delta " + strconv.Quote(e.Delta)
	case tinypi.ToolCallEndEvent:
		return "toolcall_end " + describeCall(e.ToolCall)
	case tinypi.DoneEvent:
		return "done " + string(e.Message.StopReason)
	case tinypi.ErrorEvent:
		return fmt.Sprintf("error %s %s", e.Message.StopReason, strconv.Quote(e.Message.ErrorMessage))
	default:
		return e.EventType()
	}
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps free text (a panic value) on one line.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ⏎ ", "\n", " ⏎ ", "\t", " ").Replace(strings.TrimSpace(s))
}

// --- columns ------------------------------------------------------------------------------------

// fit cuts s to at most n columns, ending a cut line with "…".
func fit(s string, n int) string {
	if columns.Width(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	used := 0
	for _, r := range s {
		w := columns.RuneWidth(r)
		if used+w > n-1 {
			break
		}
		b.WriteRune(r)
		used += w
	}
	return b.String() + "…"
}

// pad fills s with spaces to n columns.
func pad(s string, n int) string {
	return s + strings.Repeat(" ", max(0, n-columns.Width(s)))
}
