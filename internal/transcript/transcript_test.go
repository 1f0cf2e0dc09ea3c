package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/goleak"

	"github.com/learn-tinypi/course/internal/columns"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/solutions/tinypi"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// --- records built by hand -----------------------------------------------------------------------

func question() tinypi.UserMessage {
	return tinypi.UserMessage{Content: []tinypi.ContentBlock{tinypi.Text("请读取 README.md，并告诉我项目名。")}, Timestamp: 1}
}

func readCall(id string) tinypi.ToolCall {
	return tinypi.ToolCall{ID: id, Name: "read", Arguments: `{"path":"README.md"}`}
}

func firstAnswer() tinypi.AssistantMessage {
	return tinypi.AssistantMessage{
		Content:    []tinypi.ContentBlock{tinypi.Text("我先读取项目说明。"), readCall("call-1")},
		StopReason: tinypi.StopReasonToolUse,
		Timestamp:  2,
	}
}

func finalAnswer() tinypi.AssistantMessage {
	return tinypi.AssistantMessage{Content: []tinypi.ContentBlock{tinypi.Text("项目名是 tiny-pi。")}, StopReason: tinypi.StopReasonStop, Timestamp: 4}
}

func readResult() tinypi.ToolResultMessage {
	return tinypi.ToolResultMessage{ToolCallID: "call-1", ToolName: "read", Content: []tinypi.ContentBlock{tinypi.Text("# tiny-pi")}, Timestamp: 3}
}

var readTool = tinypi.ToolDefinition{Name: "read", Description: "Read a file.", Parameters: `{"type":"object"}`}

// referenceRun is the README round trip as the reference loop runs it.
func referenceRun() tinypi.RunRecord {
	return tinypi.RunRecord{
		Test: "TestLab7_2_单工具往返",
		Requests: []tinypi.Request{
			{SystemPrompt: "你是 tinypi。", Messages: []tinypi.Message{question()}, Tools: []tinypi.ToolDefinition{readTool}},
			{SystemPrompt: "你是 tinypi。", Messages: []tinypi.Message{question(), firstAnswer(), readResult()}, Tools: []tinypi.ToolDefinition{readTool}},
		},
		Events: []tinypi.LoopEvent{
			tinypi.ModelEvent{Event: tinypi.StartEvent{}},
			tinypi.ModelEvent{Event: tinypi.TextDeltaEvent{Delta: "我先读取项目说明。"}},
			tinypi.ModelEvent{Event: tinypi.ToolCallDeltaEvent{ContentIndex: 1, Delta: `{"path":"README.md"}`}},
			tinypi.ModelEvent{Event: tinypi.ToolCallEndEvent{ContentIndex: 1, ToolCall: readCall("call-1")}},
			tinypi.ModelEvent{Event: tinypi.DoneEvent{Message: firstAnswer()}},
			tinypi.AssistantMessageEvent{Message: firstAnswer()},
			tinypi.ToolStartEvent{Call: readCall("call-1")},
			tinypi.ToolProgressEvent{CallID: "call-1", Content: []tinypi.ContentBlock{tinypi.Text("reading README.md")}},
			tinypi.ToolEndEvent{Result: readResult()},
			tinypi.ModelEvent{Event: tinypi.StartEvent{}},
			tinypi.ModelEvent{Event: tinypi.TextDeltaEvent{Delta: "项目名是 tiny-pi。"}},
			tinypi.ModelEvent{Event: tinypi.DoneEvent{Message: finalAnswer()}},
			tinypi.AssistantMessageEvent{Message: finalAnswer()},
			tinypi.TurnEndEvent{Reason: tinypi.RunStop, Steps: 2},
		},
		Result: tinypi.AgentRunResult{
			Reason:   tinypi.RunStop,
			Steps:    2,
			Messages: []tinypi.Message{question(), firstAnswer(), readResult(), finalAnswer()},
		},
	}
}

// forgotResult is a learner's run that does not append the tool result: the second request
// lacks it.
func forgotResult() tinypi.RunRecord {
	rec := referenceRun()
	rec.Failed = true
	rec.Requests[1].Messages = []tinypi.Message{question(), firstAnswer()}
	rec.Result.Messages = []tinypi.Message{question(), firstAnswer(), finalAnswer()}
	return rec
}

// stubbed is a learner's run that a stub ended before the first request.
func stubbed() tinypi.RunRecord {
	return tinypi.RunRecord{Test: "TestLab7_2_单工具往返", Failed: true, Err: "Lab 7.2 闭合单工具往返 尚未实现"}
}

// allKinds has every event and content kind a record can hold.
func allKinds() tinypi.RunRecord {
	rec := referenceRun()
	skipped := tinypi.ToolResultMessage{
		ToolCallID: "call-2", ToolName: "read", IsError: true,
		Content: []tinypi.ContentBlock{tinypi.Text("not run")},
		Details: map[string]any{"skipped": true, "reason": "length", "n": 2.0, "list": []any{"a", 1.0}},
	}
	failed := tinypi.AssistantMessage{StopReason: tinypi.StopReasonError, ErrorMessage: "upstream 500", Usage: tinypi.Usage{Input: 3, Output: 4, Total: 7}, ID: "msg-1", Model: "m"}
	rec.Events = append(rec.Events,
		tinypi.ModelEvent{Event: tinypi.ThinkingDeltaEvent{ContentIndex: 2, Delta: "hmm"}},
		tinypi.ModelEvent{Event: tinypi.ErrorEvent{Message: failed}},
		tinypi.ToolSkippedEvent{Result: skipped},
		tinypi.ToolProgressEvent{CallID: "call-3"},
		tinypi.TurnEndEvent{Reason: tinypi.RunAborted, Steps: 0},
	)
	rec.Result.Messages = append(rec.Result.Messages,
		tinypi.AssistantMessage{Content: []tinypi.ContentBlock{tinypi.ThinkingContent{Thinking: "hmm"}}, StopReason: tinypi.StopReasonLength},
		skipped)
	rec.Err = "panic: line one\nline two"
	return rec
}

// --- the record file -------------------------------------------------------------------------------

func TestRecordRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, rec := range []tinypi.RunRecord{allKinds(), stubbed(), {Test: "TestEmpty"}} {
		if err := tinypi.WriteRunRecord(dir, rec); err != nil {
			t.Fatalf("WriteRunRecord(%s): %v", rec.Test, err)
		}
		got, err := Load(filepath.Join(dir, tinypi.RunRecordFile(rec.Test)))
		if err != nil {
			t.Fatalf("Load(%s): %v", rec.Test, err)
		}
		if diff := cmp.Diff(rec, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("record of %s after a round trip (-wrote +read):\n%s", rec.Test, diff)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestRunRecordFile(t *testing.T) {
	long := strings.Repeat("非", 100)
	tests := []struct{ test, want string }{
		{"TestLab7_1_纯文本Stop", "TestLab7_1_纯文本Stop.json"},
		{"TestLab7_3_非执行终态_其余分支/error_with_calls", "TestLab7_3_非执行终态_其余分支%2Ferror_with_calls.json"},
		{`TestX/a:b*c?.."<>|\`, "TestX%2Fa%3Ab%2Ac%3F%2E%2E%22%3C%3E%7C%5C.json"},
		{"TestX/a_b", "TestX%2Fa_b.json"},
	}
	for _, tt := range tests {
		if got := tinypi.RunRecordFile(tt.test); got != tt.want {
			t.Errorf("RunRecordFile(%q) = %q, want %q", tt.test, got, tt.want)
		}
	}
	a, b := tinypi.RunRecordFile(long+"a"), tinypi.RunRecordFile(long+"b")
	if a == b || len(a) > 200 || len(b) > 200 {
		t.Errorf("long names: %q and %q, want two different names of at most 200 bytes", a, b)
	}
	if tinypi.RunRecordFile("TestX/a") == tinypi.RunRecordFile("TestX_a") {
		t.Errorf("TestX/a and TestX_a share a file name")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct{ name, content, want string }{
		{"notjson.json", "{", "unexpected end of JSON input"},
		{"format.json", `{"format":9,"test":"T"}`, "format 9, want 1"},
		{"event.json", `{"format":1,"events":[{"type":"tool_exploded"}],"result":{"messages":[]}}`, `event 1: unknown loop event type "tool_exploded"`},
		{"model.json", `{"format":1,"events":[{"type":"model_event","event":{"type":"bogus"}}],"result":{"messages":[]}}`, `unknown model event type "bogus"`},
		{"role.json", `{"format":1,"events":[{"type":"tool_end","result":{"role":"user","content":[]}}],"result":{"messages":[]}}`, "user message where a toolResult message belongs"},
		{"turnend.json", `{"format":1,"events":[{"type":"turn_end","reason":"stop"}],"result":{"messages":[]}}`, "turn_end without steps"},
		{"call.json", `{"format":1,"events":[{"type":"tool_start","call":{"type":"text","text":"x"}}],"result":{"messages":[]}}`, `block of type "text" where a tool call belongs`},
		{"nocall.json", `{"format":1,"events":[{"type":"tool_start"}],"result":{"messages":[]}}`, "tool call missing"},
		{"block.json", `{"format":1,"events":[{"type":"tool_progress","content":[{"type":"image"}]}],"result":{"messages":[]}}`, `unknown type "image"`},
		{"nomodel.json", `{"format":1,"events":[{"type":"model_event"}],"result":{"messages":[]}}`, "model_event without its event"},
	}
	for _, tt := range tests {
		_, err := Load(write(tt.name, tt.content))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%s) = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want a not-exist error", err)
	}
}

func TestLoadDirAndSelect(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "records")
	if recs, err := LoadDir(dir); err != nil || len(recs) != 0 {
		t.Fatalf("LoadDir(missing) = %v, %v; want no records and no error", recs, err)
	}
	for _, name := range []string{"TestB/two", "TestA", "TestB/one", "TestBB"} {
		if err := tinypi.WriteRunRecord(dir, tinypi.RunRecord{Test: name}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a record"), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := func(recs []tinypi.RunRecord) []string {
		var out []string
		for _, r := range recs {
			out = append(out, r.Test)
		}
		return out
	}
	if diff := cmp.Diff([]string{"TestA", "TestB/one", "TestB/two", "TestBB"}, names(recs)); diff != "" {
		t.Errorf("LoadDir (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"TestB/one", "TestB/two"}, names(Select(recs, "TestB"))); diff != "" {
		t.Errorf("Select(TestB) (-want +got): its subtests, not TestBB:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"TestB/two"}, names(Select(recs, "TestB/two"))); diff != "" {
		t.Errorf("Select(TestB/two) (-want +got):\n%s", diff)
	}
}

// TestRecorderRecordsARealRun drives the reference loop through a RunRecorder: the record holds
// what the loop did, the test's own callback still sees every event, and what the caller
// changes afterwards does not reach the record.
func TestRecorderRecordsARealRun(t *testing.T) {
	model := tinypi.NewScriptedModel(firstAnswer(), finalAnswer())
	read := tinypi.Tool{
		ToolDefinition: readTool,
		Execute: func(ctx context.Context, args json.RawMessage, exec tinypi.ToolExecContext) (tinypi.ToolOutput, error) {
			exec.Progress(tinypi.Text("reading README.md"))
			return tinypi.ToolOutput{Content: []tinypi.ContentBlock{tinypi.Text("# tiny-pi")}}, nil
		},
	}
	var seen []string
	rec := tinypi.NewRunRecorder("TestReal")
	opts := rec.Wrap(tinypi.AgentLoopOptions{
		Context: tinypi.AgentContext{SystemPrompt: "你是 tinypi。", Messages: []tinypi.Message{question()}},
		Model:   model,
		Tools:   tinypi.MustRegistry(read),
		OnEvent: func(e tinypi.LoopEvent) { seen = append(seen, e.EventType()) },
	})
	res, err := tinypi.RunAgentLoop(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.End(res, "")
	res.Messages[0].(tinypi.UserMessage).Content[0] = tinypi.Text("changed afterwards")
	got := rec.Record(false)

	if diff := cmp.Diff(model.Requests(), got.Requests); diff != "" {
		t.Errorf("recorded requests (-model saw +recorded):\n%s", diff)
	}
	var kinds []string
	for _, e := range got.Events {
		kinds = append(kinds, e.EventType())
	}
	if diff := cmp.Diff(seen, kinds); diff != "" {
		t.Errorf("recorded events (-callback saw +recorded):\n%s", diff)
	}
	want := referenceRun()
	want.Test = "TestReal"
	ignoreTimes := cmpopts.IgnoreFields(tinypi.ToolResultMessage{}, "Timestamp")
	if diff := cmp.Diff(want.Result, got.Result, ignoreTimes, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("recorded result (-want +got):\n%s", diff)
	}
	c := Compare(got, want)
	if c.First != -1 {
		t.Errorf("the recorded run differs from the hand-built reference at row %d: %+v", c.First+1, c.Rows[c.First])
	}

	// A nil model stays nil, so the loop still refuses it.
	if opts := tinypi.NewRunRecorder("TestNil").Wrap(tinypi.AgentLoopOptions{}); opts.Model != nil {
		t.Errorf("Wrap turned a nil Model into %T", opts.Model)
	}
}

// --- comparing and rendering -------------------------------------------------------------------

func TestCompare(t *testing.T) {
	same := Compare(referenceRun(), referenceRun())
	if same.First != -1 {
		t.Errorf("identical runs: First = %d, want -1", same.First)
	}

	c := Compare(forgotResult(), referenceRun())
	if c.First < 0 {
		t.Fatalf("a run without the tool result: no difference found")
	}
	first := c.Rows[c.First]
	want := Row{Section: "request 2", Learner: "", HasLearner: false, HasReference: true,
		Reference: `toolResult  call-1 read → "# tiny-pi"`}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("first difference (-want +got):\n%s", diff)
	}
	// Sections stay aligned: the events of both runs start on the same row.
	for _, row := range c.Rows {
		if row.Section == SectionEvents {
			if row.Learner != row.Reference {
				t.Errorf("events differ at %+v; the learner's events are the reference's", row)
			}
		}
	}

	s := Compare(stubbed(), referenceRun())
	if s.First != 0 || s.Rows[0].Learner != "(no request)" {
		t.Errorf("stubbed run: First = %d, row 1 = %+v; want row 1 with (no request)", s.First, s.Rows[0])
	}
	last := s.Rows[len(s.Rows)-1]
	if last.Section != SectionResult || last.Learner != "ended by: Lab 7.2 闭合单工具往返 尚未实现" {
		t.Errorf("stubbed run: last row = %+v, want the stub's message in the result", last)
	}
}

func TestCompareReorderedToolEnds(t *testing.T) {
	end := func(id string) tinypi.LoopEvent {
		return tinypi.ToolEndEvent{Result: tinypi.ToolResultMessage{ToolCallID: id, ToolName: "read"}}
	}
	run := func(events ...tinypi.LoopEvent) tinypi.RunRecord {
		return tinypi.RunRecord{Test: "T", Events: events, Result: tinypi.AgentRunResult{Reason: tinypi.RunStop}}
	}
	turnEnd := tinypi.TurnEndEvent{Reason: tinypi.RunStop, Steps: 1}

	c := Compare(run(end("a"), end("b"), end("c"), turnEnd), run(end("c"), end("a"), end("b"), turnEnd))
	if c.First != -1 {
		t.Errorf("same tool_end events in another order: First = %d, want -1", c.First)
	}
	if !c.Rows[1].Reordered {
		t.Errorf("row 2 = %+v, want it marked reordered", c.Rows[1])
	}
	c = Compare(run(end("a"), end("b"), turnEnd), run(end("a"), end("c"), turnEnd))
	if c.First != 2 {
		t.Errorf("different tool_end events: First = %d, want 2 (row 3)", c.First)
	}
}

func TestRender(t *testing.T) {
	zh := LabelsIn(i18n.ZH)
	tests := []struct {
		name              string
		learner, ref      tinypi.RunRecord
		opts              Options
		wantFirstInOutput string
	}{
		{"forgot_result_wide", forgotResult(), referenceRun(), Options{Width: 140}, "▶ first difference: line 8 (request 2)"},
		{"forgot_result_narrow", forgotResult(), referenceRun(), Options{Width: 60}, "▶ first difference: line 8 (request 2)"},
		{"stubbed_zh", stubbed(), referenceRun(), Options{Width: 100, Labels: zh}, "▶ 第一处不同：第 1 行（request 1）"},
		{"same", referenceRun(), referenceRun(), Options{Width: 0}, "the two runs agree"},
		{"forgot_result_ascii", forgotResult(), referenceRun(), Options{Width: 100, ASCII: true}, "> first difference: line 8 (request 2)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Render(&buf, Compare(tt.learner, tt.ref), tt.opts); err != nil {
				t.Fatal(err)
			}
			got := buf.String()
			if !strings.Contains(got, tt.wantFirstInOutput) {
				t.Errorf("output lacks %q:\n%s", tt.wantFirstInOutput, got)
			}
			width := tt.opts.Width
			if width == 0 {
				width = 120
			}
			for i, line := range strings.Split(got, "\n") {
				if w := columns.Width(line); w > width && !strings.HasPrefix(line, "  ") {
					t.Errorf("line %d is %d columns wide, more than %d: %q", i+1, w, width, line)
				}
			}
			golden(t, filepath.Join("testdata", tt.name+".golden"), got)
		})
	}
}

// golden compares got with the file, or rewrites the file with -update.
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func TestFit(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"项目名是", 5, "项目…"},
		{"项目名是", 8, "项目名是"},
		{"abc", 0, ""},
	}
	for _, tt := range tests {
		if got := fit(tt.s, tt.n); got != tt.want || columns.Width(got) > max(tt.n, 0) {
			t.Errorf("fit(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// TestCompareSectionsOfAnyRendering checks the alignment other renderings (a session log's)
// use: fixed sections first, then names only one side has, nothing dropped.
func TestCompareSectionsOfAnyRendering(t *testing.T) {
	learner := []Section{{Name: SectionEvents, Lines: []string{"a", "b"}}, {Name: "extra", Lines: []string{"x"}}}
	reference := []Section{{Name: SectionEvents, Lines: []string{"a", "c", "d"}}, {Name: SectionTranscript, Lines: []string{"t"}}}
	c := CompareSections("run", learner, reference)
	want := []Row{
		{Section: SectionEvents, Learner: "a", Reference: "a", HasLearner: true, HasReference: true},
		{Section: SectionEvents, Learner: "b", Reference: "c", HasLearner: true, HasReference: true},
		{Section: SectionEvents, Reference: "d", HasReference: true},
		{Section: SectionTranscript, Reference: "t", HasReference: true},
		{Section: "extra", Learner: "x", HasLearner: true},
	}
	if diff := cmp.Diff(want, c.Rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	if c.First != 1 || c.Test != "run" {
		t.Errorf("First = %d, Test = %q; want 1 and \"run\"", c.First, c.Test)
	}
}
