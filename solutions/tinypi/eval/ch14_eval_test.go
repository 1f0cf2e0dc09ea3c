package eval

// Chapter 14's focused tests: the evaluation capstone. Labs 14.1 to 14.3 judge what a run left
// behind (a workspace on disk, a session log built by hand here, so that every rule is tested
// on its own); lab 14.4 runs a case end to end with the runtime of chapter 13; lab 14.5 runs a
// suite. Every expected value is spelled out; runs are bounded by ch14Deadline and synchronised
// on what the code reports (verdicts, progress lines, model requests), never on time.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/learn-tinypi/course/solutions/tinypi"
	"github.com/learn-tinypi/course/solutions/tinypi/internal/labtest"
)

// ch14ModelFunc is a function as a Model.
type ch14ModelFunc func(ctx context.Context, req tinypi.Request) *tinypi.AssistantStream

func (f ch14ModelFunc) Stream(ctx context.Context, req tinypi.Request) *tinypi.AssistantStream {
	return f(ctx, req)
}

// ch14Deadline bounds one run of a case: a correct one takes milliseconds.
const ch14Deadline = 5 * time.Second

// ch14Tree writes files (slash-separated path -> content) under a new directory and returns it.
func ch14Tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	labtest.WriteFiles(t, dir, files)
	return dir
}

// ch14Fixture is the fixture of lab 14.1's tests: a file at the top, files in directories.
func ch14Fixture() map[string]string {
	return map[string]string{
		"keep.txt":      "keep me\n",
		"greeting.txt":  "helo\n",
		"tmp/cache.txt": "stale\n",
		"src/app/a.txt": "a\n",
	}
}

// ch14Apply returns files with changes applied: a "" content deletes the path.
func ch14Apply(files map[string]string, changes map[string]string) map[string]string {
	out := map[string]string{}
	for p, c := range files {
		out[p] = c
	}
	for p, c := range changes {
		if c == "" {
			delete(out, p)
		} else {
			out[p] = c
		}
	}
	return out
}

func ch14CheckWorkspace(t *testing.T, fixture, final string, want EvalExpect) EvalCheck {
	t.Helper()
	return labtest.Call(t, func() EvalCheck { return CheckWorkspace(fixture, final, want) })
}

// ch14Diff is "" when got equals want, and otherwise says where they first differ (its first
// line) and shows both whole.
func ch14Diff(what, got, want string) string {
	if got == want {
		return ""
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			return fmt.Sprintf("%s, line %d: got %q, want %q\n\ngot:\n%s\n\nwant:\n%s", what, i+1, gl, wl, got, want)
		}
	}
	return ""
}

func ch14CheckString(c EvalCheck) string {
	return fmt.Sprintf("{Name:%q Pass:%v Detail:%q}", c.Name, c.Pass, c.Detail)
}

func TestLab14_1_检查工作区_Exact(t *testing.T) {
	fixture := ch14Tree(t, ch14Fixture())
	want := EvalExpect{
		Files:  map[string]string{"greeting.txt": "hello\n", "docs/new/todo.md": "- milk\n"},
		Absent: []string{"tmp/cache.txt"},
	}
	final := ch14Tree(t, ch14Apply(ch14Fixture(), map[string]string{
		"greeting.txt": "hello\n", "docs/new/todo.md": "- milk\n", "tmp/cache.txt": "",
	}))
	got := ch14CheckWorkspace(t, fixture, final, want)
	if wantCheck := `{Name:"workspace" Pass:true Detail:""}`; ch14CheckString(got) != wantCheck {
		t.Fatalf("the fixture with exactly the expected changes: got %s, want %s", ch14CheckString(got), wantCheck)
	}
	// An expected file may also be one the fixture has, unchanged; an empty directory left
	// behind is not a file.
	final2 := ch14Tree(t, ch14Fixture())
	if err := os.MkdirAll(filepath.Join(final2, "build", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	got = ch14CheckWorkspace(t, fixture, final2, EvalExpect{Files: map[string]string{"keep.txt": "keep me\n"}})
	if wantCheck := `{Name:"workspace" Pass:true Detail:""}`; ch14CheckString(got) != wantCheck {
		t.Fatalf("the fixture unchanged, an expected file that was already right, an empty directory: got %s, want %s", ch14CheckString(got), wantCheck)
	}
}

func TestLab14_1_检查工作区_Differences(t *testing.T) {
	want := EvalExpect{
		Files:  map[string]string{"greeting.txt": "hello\n", "docs/todo.md": "- milk\n"},
		Absent: []string{"tmp/cache.txt", "out.log"}, // out.log is in no fixture: it must not appear
	}
	good := map[string]string{"greeting.txt": "hello\n", "docs/todo.md": "- milk\n", "tmp/cache.txt": ""}
	for _, tt := range []struct {
		name    string
		changes map[string]string // applied to the fixture after good
		detail  string
	}{
		{"an expected file with other content", map[string]string{"greeting.txt": "hullo\n"},
			`greeting.txt: got "hullo\n", want "hello\n"`},
		{"an expected file without its last newline", map[string]string{"greeting.txt": "hello"},
			`greeting.txt: got "hello", want "hello\n"`},
		{"an expected file not created", map[string]string{"docs/todo.md": ""},
			`docs/todo.md: missing`},
		{"a file to delete still there", map[string]string{"tmp/cache.txt": "stale\n"},
			`tmp/cache.txt: should have been deleted`},
		{"a path of absent that the run created", map[string]string{"out.log": "x\n"},
			`out.log: should have been deleted`},
		{"a new file nobody asked for, in a directory", map[string]string{"build/out/x.tmp": "junk\n"},
			`build/out/x.tmp: not expected`},
		{"a fixture file changed that should not have been", map[string]string{"src/app/a.txt": "A\n"},
			`src/app/a.txt: got "A\n", want "a\n"`},
		{"a fixture file deleted that should not have been", map[string]string{"keep.txt": ""},
			`keep.txt: missing`},
		{"several differences, in the order of the paths", map[string]string{"keep.txt": "", "greeting.txt": "hi\n", "a.bak": "x"},
			`a.bak: not expected; greeting.txt: got "hi\n", want "hello\n"; keep.txt: missing`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fixture := ch14Tree(t, ch14Fixture())
			final := ch14Tree(t, ch14Apply(ch14Apply(ch14Fixture(), good), tt.changes))
			got := ch14CheckWorkspace(t, fixture, final, want)
			wantCheck := fmt.Sprintf("{Name:%q Pass:false Detail:%q}", "workspace", tt.detail)
			if ch14CheckString(got) != wantCheck {
				t.Fatalf("%s: got %s, want %s", tt.name, ch14CheckString(got), wantCheck)
			}
		})
	}
}

func TestLab14_1_检查工作区_Hostile(t *testing.T) {
	// The workspace is the agent's output: a symbolic link in it is refused, even one whose
	// target has the expected content.
	fixture := ch14Tree(t, map[string]string{"a.txt": "a\n"})
	final := ch14Tree(t, map[string]string{"real.txt": "b\n"})
	if err := os.Symlink("real.txt", filepath.Join(final, "a.txt")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	os.Remove(filepath.Join(final, "real.txt"))
	if err := os.WriteFile(filepath.Join(final, "real.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := ch14CheckWorkspace(t, fixture, final, EvalExpect{Files: map[string]string{"real.txt": "a\n"}})
	if want := `{Name:"workspace" Pass:false Detail:"tinypi: workspace: a.txt: not a regular file"}`; ch14CheckString(got) != want {
		t.Fatalf("a workspace with a symbolic link a.txt: got %s, want %s (the Detail is the error itself)",
			ch14CheckString(got), want)
	}
	// A fixture that cannot be read is no empty fixture: nothing can be judged against it.
	right := ch14Tree(t, map[string]string{"a.txt": "a\n"})
	got = ch14CheckWorkspace(t, filepath.Join(fixture, "missing"), right, EvalExpect{Files: map[string]string{"a.txt": "a\n"}})
	if got.Name != "workspace" || got.Pass || !strings.HasPrefix(got.Detail, "the fixture: ") {
		t.Fatalf("a fixture that does not exist: got %s, want a failed workspace check whose Detail starts with %q",
			ch14CheckString(got), "the fixture: ")
	}
}

// ch14Log numbers events by their index, as a session log does.
func ch14Log(events ...tinypi.SessionEvent) []tinypi.SessionEvent {
	for i := range events {
		events[i].Seq = i
	}
	return events
}

func ch14User() tinypi.SessionEvent {
	return tinypi.SessionEvent{Type: tinypi.EventUserMessage, Message: tinypi.UserText("go")}
}

func ch14Assistant(total int, calls ...tinypi.ToolCall) tinypi.SessionEvent {
	var content []tinypi.ContentBlock
	stop := tinypi.StopReasonStop
	for _, c := range calls {
		content = append(content, c)
		stop = tinypi.StopReasonToolUse
	}
	if len(content) == 0 {
		content = []tinypi.ContentBlock{tinypi.Text("done")}
	}
	return tinypi.SessionEvent{Type: tinypi.EventAssistantMessage, Message: tinypi.AssistantMessage{Content: content, StopReason: stop,
		Usage: tinypi.Usage{Input: total / 2, Output: total / 4, CacheRead: total - total/2 - total/4, Total: total}}}
}

func ch14Bash(id, command string) tinypi.ToolCall {
	args, _ := json.Marshal(map[string]string{"command": command})
	return tinypi.ToolCall{ID: id, Name: "bash", Arguments: string(args)}
}

func ch14Call(c tinypi.ToolCall) tinypi.SessionEvent {
	return tinypi.SessionEvent{Type: tinypi.EventToolCall, Call: &c}
}

// ch14Start is the tool/start of the call at callSeq: it carries the call too, and is no call.
func ch14Start(callSeq int, c tinypi.ToolCall) tinypi.SessionEvent {
	return tinypi.SessionEvent{Type: tinypi.EventToolStart, SourceEventSeqs: []int{callSeq}, Call: &c}
}

func ch14Result(callSeq int, id string, isError bool) tinypi.SessionEvent {
	return tinypi.SessionEvent{Type: tinypi.EventToolResult, SourceEventSeqs: []int{callSeq},
		Message: tinypi.ToolResultMessage{ToolCallID: id, ToolName: "bash", Content: []tinypi.ContentBlock{tinypi.Text("ok")}, IsError: isError}}
}

func TestLab14_2_检查日志_Paired(t *testing.T) {
	a, b := ch14Bash("c1", "ls"), ch14Bash("c2", "pwd")
	for _, tt := range []struct {
		name   string
		events []tinypi.SessionEvent
		want   string
	}{
		{"every call answered, in another order", ch14Log(ch14User(), ch14Assistant(10, a, b), ch14Call(a), ch14Call(b),
			ch14Result(3, "c2", false), ch14Result(2, "c1", true), ch14Assistant(10)),
			`{Name:"paired" Pass:true Detail:""}`},
		{"no tool call at all", ch14Log(ch14User(), ch14Assistant(10)),
			`{Name:"paired" Pass:true Detail:""}`},
		{"tool/start events between the calls and their results", ch14Log(ch14User(), ch14Assistant(10, a, b), ch14Call(a), ch14Call(b),
			ch14Start(2, a), ch14Start(3, b), ch14Result(2, "c1", false), ch14Result(3, "c2", false), ch14Assistant(10)),
			`{Name:"paired" Pass:true Detail:""}`},
		{"a call without a result", ch14Log(ch14User(), ch14Assistant(10, a, b), ch14Call(a), ch14Call(b),
			ch14Result(2, "c1", false), ch14Assistant(10)),
			`{Name:"paired" Pass:false Detail:"the call at seq 3 (c2) has no result"}`},
		{"a call with two results", ch14Log(ch14User(), ch14Assistant(10, a), ch14Call(a),
			ch14Result(2, "c1", false), ch14Result(2, "c1", false)),
			`{Name:"paired" Pass:false Detail:"the call at seq 2 (c1) has 2 results"}`},
		{"one call with two results, another with none", ch14Log(ch14User(), ch14Assistant(10, a, b), ch14Call(a), ch14Call(b),
			ch14Result(2, "c1", false), ch14Result(2, "c1", false), ch14Assistant(10)),
			`{Name:"paired" Pass:false Detail:"the call at seq 2 (c1) has 2 results"}`},
		{"a result that answers no call", ch14Log(ch14User(), ch14Assistant(10, a), ch14Call(a),
			ch14Result(2, "c1", false), ch14Result(1, "c1", false)),
			`{Name:"paired" Pass:false Detail:"the result at seq 4 answers seq 1, which is not a call before it"}`},
		{"a result that answers a tool/start", ch14Log(ch14User(), ch14Assistant(10, a), ch14Call(a), ch14Start(2, a), ch14Result(3, "c1", false)),
			`{Name:"paired" Pass:false Detail:"the result at seq 4 answers seq 3, which is not a call before it"}`},
		{"a result before its call", ch14Log(ch14User(), ch14Assistant(10, a), ch14Result(3, "c1", false), ch14Call(a)),
			`{Name:"paired" Pass:false Detail:"the result at seq 2 answers seq 3, which is not a call before it"}`},
		{"a result with another call's ID", ch14Log(ch14User(), ch14Assistant(10, a, b), ch14Call(a), ch14Call(b),
			ch14Result(2, "c2", false), ch14Result(3, "c1", false)),
			`{Name:"paired" Pass:false Detail:"the result at seq 4 has call ID \"c2\", its call at seq 2 has \"c1\""}`},
		{"a result that names no call", ch14Log(ch14User(), ch14Assistant(10, a), ch14Call(a),
			tinypi.SessionEvent{Type: tinypi.EventToolResult, Message: tinypi.ToolResultMessage{ToolCallID: "c1"}}),
			`{Name:"paired" Pass:false Detail:"the result at seq 3 names 0 calls, want 1"}`},
		{"a result that names two calls", ch14Log(ch14User(), ch14Assistant(10, a, b), ch14Call(a), ch14Call(b),
			tinypi.SessionEvent{Type: tinypi.EventToolResult, SourceEventSeqs: []int{2, 3}, Message: tinypi.ToolResultMessage{ToolCallID: "c1"}}),
			`{Name:"paired" Pass:false Detail:"the result at seq 4 names 2 calls, want 1"}`},
		{"four calls without results: the first is named", ch14Log(ch14User(), ch14Assistant(10, a, b, ch14Bash("c3", "id"), ch14Bash("c4", "date")),
			ch14Call(a), ch14Call(b), ch14Call(ch14Bash("c3", "id")), ch14Call(ch14Bash("c4", "date"))),
			`{Name:"paired" Pass:false Detail:"the call at seq 2 (c1) has no result"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := labtest.Call(t, func() EvalCheck { return CheckPairedCalls(tt.events) })
			if ch14CheckString(got) != tt.want {
				t.Fatalf("%s: got %s, want %s", tt.name, ch14CheckString(got), tt.want)
			}
		})
	}
}

func TestLab14_2_检查日志_Commands(t *testing.T) {
	ls, rm, check := ch14Bash("c1", "ls"), ch14Bash("c2", "rm x"), ch14Bash("c3", "sh check.sh")
	// A provider may number its calls per message: the second call has the first one's ID.
	again := ch14Bash("c3", "sh check.sh")
	// A command is the wanted one only when it is exactly that string.
	dry, spaced := ch14Bash("c4", "sh check.sh --dry-run"), ch14Bash("c5", " sh check.sh")
	write := tinypi.ToolCall{ID: "w1", Name: "write", Arguments: `{"command":"sh check.sh","path":"a","content":"b"}`}
	for _, tt := range []struct {
		name   string
		events []tinypi.SessionEvent
		want   []string
		check  string
	}{
		{"in order, with others around them", ch14Log(ch14User(), ch14Assistant(10, ls, rm, check), ch14Call(ls), ch14Call(rm), ch14Call(check),
			ch14Result(4, "c3", false), ch14Result(2, "c1", false), ch14Result(3, "c2", false)),
			[]string{"rm x", "sh check.sh"}, `{Name:"commands" Pass:true Detail:""}`},
		{"nothing wanted", ch14Log(ch14User(), ch14Assistant(10)), nil, `{Name:"commands" Pass:true Detail:""}`},
		{"a command that failed, then succeeded (the same call ID)", ch14Log(ch14User(), ch14Assistant(10, check), ch14Call(check), ch14Result(2, "c3", true),
			ch14Assistant(10, again), ch14Call(again), ch14Result(5, "c3", false)),
			[]string{"sh check.sh"}, `{Name:"commands" Pass:true Detail:""}`},
		{"a command without a result", ch14Log(ch14User(), ch14Assistant(10, ls, check), ch14Call(ls), ch14Call(check),
			ch14Result(2, "c1", false)),
			[]string{"sh check.sh"}, `{Name:"commands" Pass:false Detail:"\"sh check.sh\" was not run (successfully) in order; ran [\"ls\"]"}`},
		{"a command that only failed", ch14Log(ch14User(), ch14Assistant(10, ls, check), ch14Call(ls), ch14Call(check),
			ch14Result(2, "c1", false), ch14Result(3, "c3", true)),
			[]string{"sh check.sh"}, `{Name:"commands" Pass:false Detail:"\"sh check.sh\" was not run (successfully) in order; ran [\"ls\"]"}`},
		{"in the wrong order", ch14Log(ch14User(), ch14Assistant(10, check, rm), ch14Call(check), ch14Call(rm),
			ch14Result(2, "c3", false), ch14Result(3, "c2", false)),
			[]string{"rm x", "sh check.sh"}, `{Name:"commands" Pass:false Detail:"\"sh check.sh\" was not run (successfully) in order; ran [\"sh check.sh\" \"rm x\"]"}`},
		{"asked for by the model, never accepted as a call", ch14Log(ch14User(), ch14Assistant(10, rm)),
			[]string{"rm x"}, `{Name:"commands" Pass:false Detail:"\"rm x\" was not run (successfully) in order; ran []"}`},
		{"a command argument of another tool", ch14Log(ch14User(), ch14Assistant(10, write), ch14Call(write), ch14Result(2, "w1", false)),
			[]string{"sh check.sh"}, `{Name:"commands" Pass:false Detail:"\"sh check.sh\" was not run (successfully) in order; ran []"}`},
		{"a longer command that starts with the wanted one", ch14Log(ch14User(), ch14Assistant(10, dry), ch14Call(dry), ch14Result(2, "c4", false)),
			[]string{"sh check.sh"}, `{Name:"commands" Pass:false Detail:"\"sh check.sh\" was not run (successfully) in order; ran [\"sh check.sh --dry-run\"]"}`},
		{"the same command with a space before it", ch14Log(ch14User(), ch14Assistant(10, spaced), ch14Call(spaced), ch14Result(2, "c5", false)),
			[]string{"sh check.sh"}, `{Name:"commands" Pass:false Detail:"\"sh check.sh\" was not run (successfully) in order; ran [\" sh check.sh\"]"}`},
		{"wanted twice, run once", ch14Log(ch14User(), ch14Assistant(10, check), ch14Call(check), ch14Result(2, "c3", false)),
			[]string{"sh check.sh", "sh check.sh"}, `{Name:"commands" Pass:false Detail:"\"sh check.sh\" was not run (successfully) in order; ran [\"sh check.sh\"]"}`},
		{"a command that failed, then succeeded, asked for twice (the same call ID)", ch14Log(ch14User(), ch14Assistant(10, check), ch14Call(check), ch14Result(2, "c3", true),
			ch14Assistant(10, again), ch14Call(again), ch14Result(5, "c3", false)),
			[]string{"sh check.sh", "sh check.sh"}, `{Name:"commands" Pass:false Detail:"\"sh check.sh\" was not run (successfully) in order; ran [\"sh check.sh\"]"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := labtest.Call(t, func() EvalCheck { return CheckCommands(tt.events, tt.want) })
			if ch14CheckString(got) != tt.check {
				t.Fatalf("%s: got %s, want %s", tt.name, ch14CheckString(got), tt.check)
			}
		})
	}
}

// ch14BudgetLog is the log of lab 14.3's tests: four assistant messages, two calls with their
// results, a later user message. Usage.Total counts cached input too: it is more than Input +
// Output here. The third message's Total is more than all its parts together, as a provider's
// may be (reasoning tokens it reports in no part): the bill is the Total.
func ch14BudgetLog() []tinypi.SessionEvent {
	a := ch14Bash("c1", "ls")
	third := ch14Assistant(300)
	m := third.Message.(tinypi.AssistantMessage)
	m.Usage = tinypi.Usage{Input: 100, Output: 50, CacheRead: 100, Total: 300}
	third.Message = m
	return ch14Log(ch14User(), ch14Assistant(400, a), ch14Call(a), ch14Result(2, "c1", false),
		ch14Assistant(500, a), ch14Call(a), ch14Result(5, "c1", false), third,
		tinypi.SessionEvent{Type: tinypi.EventUserMessage, Message: tinypi.UserText("and then?")}, ch14Assistant(0))
}

// ch14BudgetCase is one budget and what CheckBudget must return for ch14BudgetLog.
type ch14BudgetCase struct {
	budget EvalBudget
	want   string
}

func ch14CheckBudgets(t *testing.T, cases []ch14BudgetCase) {
	t.Helper()
	events := ch14BudgetLog()
	for _, tt := range cases {
		got := labtest.Call(t, func() string {
			check, steps, tokens := CheckBudget(events, tt.budget)
			return fmt.Sprintf("%s %d steps %d tokens", ch14CheckString(check), steps, tokens)
		})
		if got != tt.want {
			t.Fatalf("budget %+v: got %s, want %s", tt.budget, got, tt.want)
		}
	}
}

func TestLab14_3_预算_Counts(t *testing.T) {
	ch14CheckBudgets(t, []ch14BudgetCase{
		{EvalBudget{}, `{Name:"budget" Pass:true Detail:""} 4 steps 1200 tokens`},
		{EvalBudget{Steps: 4, Tokens: 1200}, `{Name:"budget" Pass:true Detail:""} 4 steps 1200 tokens`},
		{EvalBudget{Steps: 4}, `{Name:"budget" Pass:true Detail:""} 4 steps 1200 tokens`},
		{EvalBudget{Tokens: 1200}, `{Name:"budget" Pass:true Detail:""} 4 steps 1200 tokens`},
	})
}

func TestLab14_3_预算_Over(t *testing.T) {
	ch14CheckBudgets(t, []ch14BudgetCase{
		{EvalBudget{Steps: 3, Tokens: 1200}, `{Name:"budget" Pass:false Detail:"4 steps, budget 3"} 4 steps 1200 tokens`},
		{EvalBudget{Steps: 4, Tokens: 1199}, `{Name:"budget" Pass:false Detail:"1200 tokens, budget 1199"} 4 steps 1200 tokens`},
		{EvalBudget{Steps: 1, Tokens: 100}, `{Name:"budget" Pass:false Detail:"4 steps, budget 1; 1200 tokens, budget 100"} 4 steps 1200 tokens`},
	})
}

// ch14PublicCases copies testdata/eval to a new directory and returns it: a run that works in
// the case's own workspace (a mistake of lab 14.4) must change only the test's copy, never the
// practice directory's cases.
func ch14PublicCases(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "eval")
	if err := CopyWorkspace(filepath.Join("..", "testdata", "eval"), dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ch14LoadCase loads a copy of a public case of testdata/eval.
func ch14LoadCase(t *testing.T, name string) EvalCase {
	t.Helper()
	c, err := LoadEvalCase(filepath.Join(ch14PublicCases(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ch14Run runs c with a deadline; a verdict or an error, never a hang.
func ch14Run(t *testing.T, c EvalCase, opts EvalOptions) (EvalVerdict, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ch14Deadline)
	defer cancel()
	var v EvalVerdict
	var err error
	labtest.Run(t, func() { v, err = RunEvalCase(ctx, c, opts) })
	return v, err
}

// ch14Summary is a verdict without its wall time.
func ch14Summary(v EvalVerdict) string {
	var checks []string
	for _, c := range v.Checks {
		checks = append(checks, ch14CheckString(c))
	}
	return fmt.Sprintf("case %q pass %v reason %q steps %d tokens %d\n  %s", v.Case, v.Pass, v.Reason, v.Steps, v.Tokens,
		strings.Join(checks, "\n  "))
}

func TestLab14_4_跑用例_Public(t *testing.T) {
	c := ch14LoadCase(t, "09-fix-and-check")
	tmp := t.TempDir()
	openBefore := labtest.OpenFiles(t)
	v, err := ch14Run(t, c, EvalOptions{TempDir: tmp})
	if err != nil {
		t.Fatalf("RunEvalCase: %v", err)
	}
	want := `case "09-fix-and-check" pass true reason "stop" steps 4 tokens 1350
  {Name:"stop" Pass:true Detail:""}
  {Name:"workspace" Pass:true Detail:""}
  {Name:"paired" Pass:true Detail:""}
  {Name:"commands" Pass:true Detail:""}
  {Name:"budget" Pass:true Detail:""}`
	if d := ch14Diff("verdict", ch14Summary(v), want); d != "" {
		t.Fatal(d)
	}
	if v.Wall <= 0 {
		t.Errorf("Wall = %v, want the time the case took", v.Wall)
	}
	if openAfter := labtest.OpenFiles(t); openAfter > openBefore {
		t.Errorf("%d more files open after the case than before: the runtime is closed (Runtime.Close) before the verdict", openAfter-openBefore)
	}
	if left := labtest.DirNames(t, tmp); len(left) != 0 {
		t.Errorf("TempDir holds %d entries after the case, want none: the copy of the workspace is removed", len(left))
	}
	calc, err := os.ReadFile(filepath.Join(c.Workspace, "calc.txt"))
	if err != nil || string(calc) != "x = 1 + 1\nresult = 3\n" {
		t.Errorf("the case's own calc.txt is %q (%v) after the run, want it unchanged %q: a run works on a copy",
			calc, err, "x = 1 + 1\nresult = 3\n")
	}
}

// ch14Case is a case made in the test: a fixture with one file and a script.
func ch14Case(t *testing.T, budget EvalBudget, expect EvalExpect, script ...tinypi.AssistantMessage) EvalCase {
	t.Helper()
	return EvalCase{Name: "made-here", Prompt: "do it", Budget: budget, Expect: expect, Script: script,
		Workspace: ch14Tree(t, map[string]string{"a.txt": "one\n"})}
}

func ch14ToolUse(total int, calls ...tinypi.ToolCall) tinypi.AssistantMessage {
	m := ch14Assistant(total, calls...).Message.(tinypi.AssistantMessage)
	return m
}

// ch14WantVerdict runs c and fails unless its verdict (without the wall time) is want.
func ch14WantVerdict(t *testing.T, c EvalCase, opts EvalOptions, want string) {
	t.Helper()
	v, err := ch14Run(t, c, opts)
	if err != nil {
		t.Fatalf("RunEvalCase: %v, want a verdict", err)
	}
	if d := ch14Diff("verdict", ch14Summary(v), want); d != "" {
		t.Fatal(d)
	}
}

func TestLab14_4_跑用例_Failures(t *testing.T) {
	write := func(content string) tinypi.ToolCall {
		args, _ := json.Marshal(map[string]string{"path": "a.txt", "content": content})
		return tinypi.ToolCall{ID: "w1", Name: "write", Arguments: string(args)}
	}
	t.Run("a wrong result fails only the workspace", func(t *testing.T) {
		c := ch14Case(t, EvalBudget{Steps: 2, Tokens: 100}, EvalExpect{Files: map[string]string{"a.txt": "two\n"}},
			ch14ToolUse(40, write("three\n")), ch14ToolUse(40))
		ch14WantVerdict(t, c, EvalOptions{TempDir: t.TempDir()}, `case "made-here" pass false reason "stop" steps 2 tokens 80
  {Name:"stop" Pass:true Detail:""}
  {Name:"workspace" Pass:false Detail:"a.txt: got \"three\\n\", want \"two\\n\""}
  {Name:"paired" Pass:true Detail:""}
  {Name:"commands" Pass:true Detail:""}
  {Name:"budget" Pass:true Detail:""}`)
	})
	t.Run("a file the run left beside the expected one fails the workspace", func(t *testing.T) {
		// The workspace is judged against the case's fixture, not against the copy the run changed:
		// against the copy, a file the agent added would be in both and go unnoticed.
		args, _ := json.Marshal(map[string]string{"path": "notes.txt", "content": "scratch\n"})
		notes := tinypi.ToolCall{ID: "w2", Name: "write", Arguments: string(args)}
		c := ch14Case(t, EvalBudget{}, EvalExpect{Files: map[string]string{"a.txt": "two\n"}},
			ch14ToolUse(40, write("two\n"), notes), ch14ToolUse(40))
		v, err := ch14Run(t, c, EvalOptions{TempDir: t.TempDir()})
		if err != nil {
			t.Fatalf("RunEvalCase: %v, want a verdict", err)
		}
		// The workspace check first: that is the one that must see notes.txt.
		want := `{Name:"workspace" Pass:false Detail:"notes.txt: not expected"}`
		if len(v.Checks) < 2 || ch14CheckString(v.Checks[1]) != want {
			t.Fatalf("a run that wrote notes.txt beside the expected a.txt: the workspace check is not %s (judge the copy against the case's fixture):\n%s", want, ch14Summary(v))
		}
		if d := ch14Diff("verdict", ch14Summary(v), `case "made-here" pass false reason "stop" steps 2 tokens 80
  {Name:"stop" Pass:true Detail:""}
  {Name:"workspace" Pass:false Detail:"notes.txt: not expected"}
  {Name:"paired" Pass:true Detail:""}
  {Name:"commands" Pass:true Detail:""}
  {Name:"budget" Pass:true Detail:""}`); d != "" {
			t.Fatal(d)
		}
	})
	t.Run("a run that fails is a verdict, not an error", func(t *testing.T) {
		c := ch14Case(t, EvalBudget{}, EvalExpect{}, tinypi.AssistantMessage{StopReason: tinypi.StopReasonError, ErrorMessage: "provider down"})
		ch14WantVerdict(t, c, EvalOptions{TempDir: t.TempDir()}, `case "made-here" pass false reason "error" steps 1 tokens 0
  {Name:"stop" Pass:false Detail:"the run ended with error: provider down"}
  {Name:"workspace" Pass:true Detail:""}
  {Name:"paired" Pass:true Detail:""}
  {Name:"commands" Pass:true Detail:""}
  {Name:"budget" Pass:true Detail:""}`)
	})
	t.Run("a run over budget fails, though it stopped", func(t *testing.T) {
		c := ch14Case(t, EvalBudget{Tokens: 30}, EvalExpect{}, ch14ToolUse(40))
		ch14WantVerdict(t, c, EvalOptions{TempDir: t.TempDir()}, `case "made-here" pass false reason "stop" steps 1 tokens 40
  {Name:"stop" Pass:true Detail:""}
  {Name:"workspace" Pass:true Detail:""}
  {Name:"paired" Pass:true Detail:""}
  {Name:"commands" Pass:true Detail:""}
  {Name:"budget" Pass:false Detail:"40 tokens, budget 30"}`)
	})
	t.Run("a run that goes on stops one step over the budget", func(t *testing.T) {
		var script []tinypi.AssistantMessage
		for range 10 {
			script = append(script, ch14ToolUse(10, ch14Bash("c1", "true")))
		}
		c := ch14Case(t, EvalBudget{Steps: 3}, EvalExpect{}, script...)
		ch14WantVerdict(t, c, EvalOptions{TempDir: t.TempDir()}, `case "made-here" pass false reason "maxSteps" steps 4 tokens 40
  {Name:"stop" Pass:false Detail:"the run ended with maxSteps"}
  {Name:"workspace" Pass:true Detail:""}
  {Name:"paired" Pass:true Detail:""}
  {Name:"commands" Pass:true Detail:""}
  {Name:"budget" Pass:false Detail:"4 steps, budget 3"}`)
	})
	t.Run("a given model answers instead of the script", func(t *testing.T) {
		c := ch14Case(t, EvalBudget{}, EvalExpect{Files: map[string]string{"a.txt": "two\n"}},
			ch14ToolUse(40, write("from the script\n")), ch14ToolUse(40))
		// An AGENTS.md above the copy is not the case's: only the copy is searched.
		tmp := t.TempDir()
		if err := os.WriteFile(filepath.Join(tmp, "AGENTS.md"), []byte("Rules from outside the case.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		model := tinypi.NewScriptedModel(ch14ToolUse(7, write("two\n")), ch14ToolUse(5))
		var inTempDir []int // what TempDir holds at each request
		watching := ch14ModelFunc(func(ctx context.Context, req tinypi.Request) *tinypi.AssistantStream {
			inTempDir = append(inTempDir, len(labtest.DirNames(t, tmp)))
			return model.Stream(ctx, req)
		})
		ch14WantVerdict(t, c, EvalOptions{TempDir: tmp, Model: watching, SystemPrompt: "You judge nothing."}, `case "made-here" pass true reason "stop" steps 2 tokens 12
  {Name:"stop" Pass:true Detail:""}
  {Name:"workspace" Pass:true Detail:""}
  {Name:"paired" Pass:true Detail:""}
  {Name:"commands" Pass:true Detail:""}
  {Name:"budget" Pass:true Detail:""}`)
		// (The messages name no temporary path: they are the same from run to run.)
		reqs := model.Requests()
		prompt := firstSystemPrompt(reqs)
		if len(reqs) != 2 || prompt != "You judge nothing." {
			t.Errorf("the given model saw %d requests, the first with a system prompt that holds the AGENTS.md from outside the copy: %v; want 2 requests and exactly EvalOptions.SystemPrompt %q",
				len(reqs), strings.Contains(prompt, "Rules from outside the case."), "You judge nothing.")
		}
		if fmt.Sprint(inTempDir) != "[2 2]" {
			t.Errorf("entries of TempDir at each request: %v, want [2 2] (its AGENTS.md and the run's directory with the copy)", inTempDir)
		}
	})
	t.Run("the workspace options reach the tools", func(t *testing.T) {
		c := ch14Case(t, EvalBudget{}, EvalExpect{Commands: []string{"sleep 60"}},
			ch14ToolUse(10, ch14Bash("c1", "sleep 60")), ch14ToolUse(10))
		// The command's time limit stops it long before the test's deadline.
		ch14WantVerdict(t, c, EvalOptions{TempDir: t.TempDir(), WorkspaceOptions: tinypi.WorkspaceOptions{CommandTimeout: 100 * time.Millisecond}},
			`case "made-here" pass false reason "stop" steps 2 tokens 20
  {Name:"stop" Pass:true Detail:""}
  {Name:"workspace" Pass:true Detail:""}
  {Name:"paired" Pass:true Detail:""}
  {Name:"commands" Pass:false Detail:"\"sleep 60\" was not run (successfully) in order; ran []"}
  {Name:"budget" Pass:true Detail:""}`)
	})
	t.Run("a cancelled evaluation aborts the run", func(t *testing.T) {
		c := ch14Case(t, EvalBudget{}, EvalExpect{}, ch14ToolUse(10))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var v EvalVerdict
		var err error
		labtest.Run(t, func() { v, err = RunEvalCase(ctx, c, EvalOptions{TempDir: t.TempDir()}) })
		if err != nil {
			t.Fatalf("RunEvalCase with a cancelled context: %v, want a verdict", err)
		}
		if v.Reason != tinypi.RunAborted || v.Pass || len(v.Checks) == 0 || v.Checks[0].Pass {
			t.Fatalf("RunEvalCase with a cancelled context: reason %q, pass %v; want reason aborted and a failed stop check:\n%s",
				v.Reason, v.Pass, ch14Summary(v))
		}
	})
}

func firstSystemPrompt(reqs []tinypi.Request) string {
	if len(reqs) == 0 {
		return ""
	}
	return reqs[0].SystemPrompt
}

func TestLab14_4_跑用例_CannotRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	c := ch14Case(t, EvalBudget{}, EvalExpect{}, ch14ToolUse(1))
	c.Workspace = filepath.Join(c.Workspace, "missing")
	tmp := t.TempDir()
	v, err := ch14Run(t, c, EvalOptions{TempDir: tmp})
	if err == nil {
		t.Fatalf("a case whose workspace is missing: no error, verdict\n%s\nwant an error and no verdict", ch14Summary(v))
	}
	if v.Case != "" || v.Checks != nil {
		t.Errorf("with the error %v, a verdict too:\n%s\nwant none", err, ch14Summary(v))
	}
	if left := labtest.DirNames(t, tmp); len(left) != 0 {
		t.Errorf("TempDir holds %d entries after a case that could not run, want none", len(left))
	}
	var pathErr *os.PathError
	if !errors.As(err, &pathErr) {
		t.Errorf("error %v does not wrap the *os.PathError of the missing workspace (use %%w)", err)
	}
}

func TestLab14_5_套件_PublicSuite(t *testing.T) {
	cases, err := LoadEvalSuite(ch14PublicCases(t))
	if err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	var report EvalReport
	labtest.Run(t, func() {
		ctx, cancel := context.WithTimeout(context.Background(), ch14Deadline)
		defer cancel()
		report = RunEvalSuite(ctx, cases, EvalOptions{TempDir: t.TempDir()}, &progress)
	})
	want := `[1/9] 01-fix-typo: pass (2 steps, 500 tokens)
[2/9] 02-add-todo: pass (2 steps, 555 tokens)
[3/9] 03-rename-function: pass (2 steps, 875 tokens)
[4/9] 04-delete-cache: pass (2 steps, 520 tokens)
[5/9] 05-count-rows: pass (3 steps, 975 tokens)
[6/9] 06-change-port: pass (3 steps, 990 tokens)
[7/9] 07-move-readme: pass (2 steps, 545 tokens)
[8/9] 08-recover-from-error: pass (4 steps, 1442 tokens)
[9/9] 09-fix-and-check: pass (4 steps, 1350 tokens)
`
	if d := ch14Diff("progress", progress.String(), want); d != "" {
		t.Fatal(d)
	}
	if report.Passed != 9 || report.Failed != 0 || len(report.Verdicts) != 9 {
		t.Fatalf("report: %d passed, %d failed, %d verdicts; want 9, 0, 9", report.Passed, report.Failed, len(report.Verdicts))
	}
}

// ch14ProgressModel answers every request the same way, and notes how many progress lines had
// been written when each request came: a suite reports a case before the next one starts.
type ch14ProgressModel struct {
	progress *strings.Builder
	seen     *[]int
	answer   tinypi.AssistantMessage
}

func (m ch14ProgressModel) Stream(ctx context.Context, req tinypi.Request) *tinypi.AssistantStream {
	*m.seen = append(*m.seen, strings.Count(m.progress.String(), "\n"))
	return tinypi.NewScriptedModel(m.answer).Stream(ctx, req)
}

func TestLab14_5_套件_Progress(t *testing.T) {
	good := ch14Case(t, EvalBudget{Steps: 1}, EvalExpect{})
	good.Name = "a-good"
	broken := ch14Case(t, EvalBudget{}, EvalExpect{})
	broken.Name = "b-broken"
	broken.Workspace = filepath.Join(broken.Workspace, "missing")
	bad := ch14Case(t, EvalBudget{Tokens: 5}, EvalExpect{Files: map[string]string{"a.txt": "two\n"}})
	bad.Name = "c-bad"
	last := ch14Case(t, EvalBudget{}, EvalExpect{})
	last.Name = "d-last"

	var progress strings.Builder
	var seen []int
	model := ch14ProgressModel{progress: &progress, seen: &seen, answer: ch14ToolUse(10)}
	var report EvalReport
	suiteTemp := t.TempDir()
	labtest.Run(t, func() {
		ctx, cancel := context.WithTimeout(context.Background(), ch14Deadline)
		defer cancel()
		report = RunEvalSuite(ctx, []EvalCase{good, broken, bad, last}, EvalOptions{TempDir: suiteTemp, Model: model}, &progress)
	})
	wantProgress := `[1/4] a-good: pass (1 steps, 10 tokens)
[2/4] b-broken: FAIL run
[3/4] c-bad: FAIL workspace, budget
[4/4] d-last: pass (1 steps, 10 tokens)
`
	if d := ch14Diff("progress", progress.String(), wantProgress); d != "" {
		t.Fatal(d)
	}
	if fmt.Sprint(seen) != "[0 2 3]" {
		t.Errorf("progress lines written when each model request came: %v, want [0 2 3] (a case's line before the next case starts)", seen)
	}
	if report.Passed != 2 || report.Failed != 2 || len(report.Verdicts) != 4 {
		t.Fatalf("report: %d passed, %d failed, %d verdicts; want 2, 2, 4", report.Passed, report.Failed, len(report.Verdicts))
	}
	var names []string
	for _, v := range report.Verdicts {
		names = append(names, fmt.Sprintf("%s:%v", v.Case, v.Pass))
	}
	if got := strings.Join(names, " "); got != "a-good:true b-broken:false c-bad:false d-last:true" {
		t.Errorf("verdicts: %s, want a-good:true b-broken:false c-bad:false d-last:true", got)
	}
	b := report.Verdicts[1]
	if len(b.Checks) != 1 || b.Checks[0].Name != "run" || b.Checks[0].Pass || !strings.Contains(b.Checks[0].Detail, "missing") {
		t.Errorf("the verdict of a case that cannot run:\n%s\nwant one failed check named \"run\" whose Detail is the error", ch14Summary(b))
	} else {
		// The Detail is the error itself, as RunEvalCase returns it for that case with the same
		// options (it names the missing workspace): nothing added before or after it.
		var caseErr error
		labtest.Run(t, func() { _, caseErr = RunEvalCase(context.Background(), broken, EvalOptions{TempDir: suiteTemp}) })
		// (The messages name no temporary path: they are the same from run to run.)
		switch detail := b.Checks[0].Detail; {
		case caseErr == nil:
			t.Errorf("RunEvalCase of the case that cannot run returned no error")
		case detail == caseErr.Error():
		case strings.Contains(detail, caseErr.Error()):
			before, after, _ := strings.Cut(detail, caseErr.Error())
			t.Errorf("the run check's Detail has %q before the error and %q after it; want the error alone (err.Error())", before, after)
		default:
			t.Errorf("the run check's Detail is not the error RunEvalCase returns for the case; want err.Error() itself")
		}
	}
	// A cancelled suite aborts its runs: no case passes.
	labtest.Run(t, func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		report = RunEvalSuite(ctx, []EvalCase{good, last}, EvalOptions{TempDir: t.TempDir(), Model: tinypi.NewScriptedModel(ch14ToolUse(10), ch14ToolUse(10))}, nil)
	})
	if report.Passed != 0 || report.Failed != 2 {
		t.Errorf("a suite with a cancelled context: %d passed, %d failed; want 0 and 2 (RunEvalCase gets the suite's ctx)", report.Passed, report.Failed)
	}
	// Without a progress writer the suite runs all the same.
	labtest.Run(t, func() {
		ctx, cancel := context.WithTimeout(context.Background(), ch14Deadline)
		defer cancel()
		report = RunEvalSuite(ctx, []EvalCase{good}, EvalOptions{TempDir: t.TempDir(), Model: tinypi.NewScriptedModel(ch14ToolUse(10))}, nil)
	})
	if report.Passed != 1 {
		t.Errorf("with a nil progress: %d passed, want 1", report.Passed)
	}
}

// ch14CaseDir writes a case directory under suite: case.json as given, the script and the
// workspace's files.
func ch14CaseDir(t *testing.T, suite, name, caseJSON string, workspace map[string]string, script ...tinypi.AssistantMessage) string {
	t.Helper()
	dir := filepath.Join(suite, name)
	labtest.WriteFiles(t, dir, map[string]string{"case.json": caseJSON})
	labtest.WriteFiles(t, filepath.Join(dir, "workspace"), workspace)
	var data []byte
	for _, m := range script {
		line, err := tinypi.MarshalMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		data = append(append(data, line...), '\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "script.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLab14_5_套件_CaseFiles(t *testing.T) {
	deleteOld := func(caseJSON string) string {
		return `{"prompt": "delete old.txt and greet properly", "expect": ` + caseJSON + `}`
	}
	rm := ch14Bash("c1", "rm old.txt")
	args, _ := json.Marshal(map[string]string{"path": "greeting.txt", "content": "hello\n"})
	greet := tinypi.ToolCall{ID: "w1", Name: "write", Arguments: string(args)}
	workspace := map[string]string{"old.txt": "old\n", "greeting.txt": "helo\n"}
	script := []tinypi.AssistantMessage{ch14ToolUse(10, rm, greet), ch14ToolUse(10)}

	// A path of expect is written as the judge writes the workspace's files, or the case is
	// refused when it is loaded: another spelling would never meet its file.
	refused := t.TempDir()
	for _, tt := range []struct {
		name, expect, err string
	}{
		{"absent-dot-slash", `{"absent": ["./old.txt"]}`, `tinypi: eval case absent-dot-slash: expect.absent: path "./old.txt" is not canonical; write "old.txt"`},
		{"absent-trailing-slash", `{"absent": ["old.txt/"]}`, `tinypi: eval case absent-trailing-slash: expect.absent: path "old.txt/" is not canonical; write "old.txt"`},
		{"absent-dot-dot", `{"absent": ["sub/../old.txt"]}`, `tinypi: eval case absent-dot-dot: expect.absent: path "sub/../old.txt" is not canonical; write "old.txt"`},
		{"absent-workspace", `{"absent": ["."]}`, `tinypi: eval case absent-workspace: expect.absent: path "." names the workspace itself, not a file`},
		{"files-dot-slash", `{"files": {"./greeting.txt": "hello\n"}}`, `tinypi: eval case files-dot-slash: expect.files: path "./greeting.txt" is not canonical; write "greeting.txt"`},
	} {
		dir := ch14CaseDir(t, refused, tt.name, deleteOld(tt.expect), workspace, script...)
		if c, err := LoadEvalCase(dir); err == nil || err.Error() != tt.err {
			t.Errorf("LoadEvalCase of a case whose expect is %s: case %q, error %v; want the error %q", tt.expect, c.Name, err, tt.err)
		}
	}

	// case.json and script.jsonl are the case's own files: a link to a file elsewhere, even a
	// good one, is refused, not followed.
	outside := ch14CaseDir(t, t.TempDir(), "outside", deleteOld(`{"absent": ["old.txt"]}`), workspace, script...)
	for _, part := range []string{"case.json", "script.jsonl"} {
		dir := ch14CaseDir(t, refused, "linked-"+strings.TrimSuffix(part, filepath.Ext(part)), deleteOld(`{"absent": ["old.txt"]}`), workspace, script...)
		os.Remove(filepath.Join(dir, part))
		if err := os.Symlink(filepath.Join(outside, part), filepath.Join(dir, part)); err != nil {
			t.Skip("no symbolic links here:", err)
		}
		want := fmt.Sprintf("tinypi: eval case %s: %s is a symbolic link; a case's files must be in its directory", filepath.Base(dir), part)
		if c, err := LoadEvalCase(dir); err == nil || err.Error() != want {
			t.Errorf("LoadEvalCase of a case whose %s is a symbolic link: case %q, error %v; want the error %q", part, c.Name, err, want)
		}
	}

	// The same case, its paths written canonically, loads and passes.
	suite := t.TempDir()
	ch14CaseDir(t, suite, "canonical", deleteOld(`{"files": {"greeting.txt": "hello\n"}, "absent": ["old.txt"]}`), workspace, script...)
	cases, err := LoadEvalSuite(suite)
	if err != nil {
		t.Fatalf("LoadEvalSuite of a suite with one canonical case: %v", err)
	}
	var progress strings.Builder
	labtest.Run(t, func() {
		ctx, cancel := context.WithTimeout(context.Background(), ch14Deadline)
		defer cancel()
		RunEvalSuite(ctx, cases, EvalOptions{TempDir: t.TempDir()}, &progress)
	})
	if d := ch14Diff("progress", progress.String(), "[1/1] canonical: pass (2 steps, 20 tokens)\n"); d != "" {
		t.Fatal(d)
	}
}
