package signature_test

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/signature"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain message kept", "result = stop/2 steps, want stop/1", "result = stop/2 steps, want stop/1"},
		{"surrounding space trimmed", "  turn_end events = 2, want 1 \t", "turn_end events = 2, want 1"},
		{"line number after a go file", "panic at agentloop.go:123 in loop", "panic at agentloop.go:_ in loop"},
		{"line and column", "x/y/z.go:12:7: oops", "x/y/z.go:_: oops"},
		{"pointer", "got &{0xc000123abc}, want nil", "got &{0x_}, want nil"},
		{"durations", "timed out after 2m0s (limit 1.5s, step 300ms, 20µs)", "timed out after _s (limit _s, step _s, _s)"},
		{"goroutine id", "goroutine 17 [running]", "goroutine _ [running]"},
		{"unix milliseconds", "timestamp 1712345678901 too old", "timestamp _ too old"},
		{"short numbers stay", "want 3 calls, got 12345", "want 3 calls, got 12345"},
		{"words ending in s after digits stay apart", "stop/2 steps", "stop/2 steps"},
		{"a read racing with a write: the read", "data race: read in tinypi.(*Agent).Abort (agent.go), write in tinypi.(*Agent).start (agent.go)", "data race: read in tinypi.(*Agent).Abort (agent.go)"},
		{"the read second", "data race: read in tinypi.(*Agent).State (agent.go), write in tinypi.(*Agent).callSubscriber.func1 (agent.go)", "data race: read in tinypi.(*Agent).State (agent.go)"},
		{"two writes stay", "data race: write in a.f (a.go), write in a.g (a.go)", "data race: write in a.f (a.go), write in a.g (a.go)"},
		{"a race without accesses stays", "data race", "data race"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, signature.Normalize(tt.in), "Normalize(%q)", tt.in)
		})
	}
}

func TestFailures(t *testing.T) {
	lab := &manifest.Lab{ID: "7.1", Pattern: "^TestLab7_1_"}
	report := &gotest.Report{Tests: []gotest.TestResult{
		{Name: "TestLab7_1_Z", Failed: true, FirstFailure: "late after 1.2s"},
		{Name: "TestLab7_1_A", Failed: true, FirstFailure: "got 2, want 1"},
		{Name: "TestLab7_1_Pass", Passed: true},
		{Name: "TestLab7_2_Other", Failed: true, FirstFailure: "not this lab"},
	}}
	got, err := signature.Failures(report, lab)
	require.NoError(t, err)
	want := []signature.Failure{
		{Test: "TestLab7_1_A", Message: "got 2, want 1"},
		{Test: "TestLab7_1_Z", Message: "late after _s"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Failures (-want +got):\n%s", diff)
	}

	// A header alone would give two different mistakes one signature: the diff's first lines
	// are part of the message.
	report.Tests = []gotest.TestResult{
		{Name: "TestLab7_1_Order", Failed: true, FirstFailure: "transcript (-want +got):",
			Difference: []string{"- \"follow-up a\",", "+ \"follow-up b\","}},
		{Name: "TestLab7_1_Late", Failed: true, FirstFailure: "events (-want +got):",
			Difference: []string{"- \"turn_end after 3s\""}},
	}
	got, err = signature.Failures(report, lab)
	require.NoError(t, err)
	want = []signature.Failure{
		{Test: "TestLab7_1_Late", Message: "events (-want +got):\n- \"turn_end after _s\""},
		{Test: "TestLab7_1_Order", Message: "transcript (-want +got):\n- \"follow-up a\",\n+ \"follow-up b\","},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Failures of diff headers (-want +got):\n%s", diff)
	}

	report.BuildFailed = true
	got, err = signature.Failures(report, lab)
	assert.NoError(t, err)
	assert.Empty(t, got, "Failures of a failed build")
}

func TestMatch(t *testing.T) {
	a := signature.Failure{Test: "TestLab7_1_A", Message: "a"}
	b := signature.Failure{Test: "TestLab7_1_B", Message: "b"}
	c := signature.Failure{Test: "TestLab7_1_C", Message: "c"}
	f := &signature.File{Chapter: "07", Mutants: []signature.Mutant{
		{Name: "only-a", Lab: "7.1", Failures: []signature.Failure{a}},
		{Name: "a-and-b", Lab: "7.1", Failures: []signature.Failure{a, b}},
		{Name: "uncaught", Lab: "7.1", Failures: []signature.Failure{}},
		{Name: "other-lab", Lab: "7.2", Failures: []signature.Failure{a}},
		{Name: "also-a", Lab: "7.1", Failures: []signature.Failure{a}},
		{Name: "needs-c", Lab: "7.1", Failures: []signature.Failure{c}},
		{Name: "c-maybe-b", Lab: "7.1", Failures: []signature.Failure{c}, Unstable: []string{"TestLab7_1_B"}},
		{Name: "b-like-only-b", Lab: "7.1", Failures: []signature.Failure{b}, NamedAs: "only-b"},
	}}
	names := func(ms []signature.Mutant) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}
	tests := []struct {
		name     string
		lab      string
		failures []signature.Failure
		want     []string
	}{
		{"exactly the signature: a contained signature is not named", "7.1", []signature.Failure{b, a}, []string{"a-and-b"}},
		{"equal signatures keep manifest order", "7.1", []signature.Failure{a}, []string{"only-a", "also-a"}},
		{"every pair must be there; a mutant named as another is never named", "7.1", []signature.Failure{b}, nil},
		{"same test, other message", "7.1", []signature.Failure{{Test: "TestLab7_1_C", Message: "other"}}, nil},
		{"exact message", "7.1", []signature.Failure{c}, []string{"needs-c", "c-maybe-b"}},
		{"a failure of an unstable test is allowed", "7.1", []signature.Failure{c, {Test: "TestLab7_1_B", Message: "whatever"}}, []string{"c-maybe-b"}},
		{"one failure more than the signature names nothing", "7.1", []signature.Failure{a, c}, nil},
		{"only the lab's mutants", "7.2", []signature.Failure{a}, []string{"other-lab"}},
		{"only the lab's failures", "7.2", []signature.Failure{a, b}, nil},
		{"no failures, no match (the empty signature never matches)", "7.1", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, names(f.Match(tt.lab, tt.failures))); diff != "" {
				t.Errorf("Match(%s, %v) (-want +got):\n%s", tt.lab, tt.failures, diff)
			}
		})
	}
}

func TestMarshalLoadRoundTrip(t *testing.T) {
	f := &signature.File{
		Chapter:     "07",
		GeneratedBy: signature.GenerateCommand("07"),
		Mutants: []signature.Mutant{{Name: "m", Lab: "7.1", Failures: []signature.Failure{
			{Test: "TestLab7_1_A", Message: "messages (-want +got) <html> & more"},
		}}},
	}
	data, err := f.Marshal()
	require.NoError(t, err)
	assert.Contains(t, string(data), "<html> & more", "Marshal escapes HTML")
	assert.True(t, strings.HasSuffix(string(data), "}\n"), "Marshal = %s; want it to end in a line end", data)
	again, err := f.Marshal()
	require.NoError(t, err)
	assert.Equal(t, string(data), string(again), "Marshal is not deterministic")
	fsys := fstest.MapFS{"checkpoints/signatures/07.json": {Data: data}}
	got, err := signature.Load(fsys, "07")
	require.NoError(t, err)
	if diff := cmp.Diff(f, got); diff != "" {
		t.Errorf("Load(Marshal(f)) (-want +got):\n%s", diff)
	}
}

func TestLoadErrors(t *testing.T) {
	fsys := fstest.MapFS{
		"checkpoints/signatures/06.json": {Data: []byte(`{"chapter": "07", "generated_by": "", "mutants": []}`)},
		"checkpoints/signatures/05.json": {Data: []byte(`{"chapter": "05", "typo": 1}`)},
	}
	_, err := signature.Load(fsys, "04")
	assert.ErrorIs(t, err, fs.ErrNotExist, "Load of a missing file")
	assert.True(t, signature.IsNotExist(err), "IsNotExist(%v)", err)
	_, err = signature.Load(fsys, "06")
	assert.ErrorContains(t, err, `chapter "07"`, "Load of another chapter's file")
	_, err = signature.Load(fsys, "05")
	assert.ErrorContains(t, err, "typo", "Load with an unknown field")
}

func TestStable(t *testing.T) {
	a := signature.Failure{Test: "TestA", Message: "a"}
	b1 := signature.Failure{Test: "TestB", Message: "first way"}
	b2 := signature.Failure{Test: "TestB", Message: "second way"}
	c := signature.Failure{Test: "TestC", Message: "sometimes"}
	tests := []struct {
		name         string
		runs         [][]signature.Failure
		wantStable   []signature.Failure
		wantUnstable []string
	}{
		{"no runs", nil, nil, nil},
		{"one run is all stable", [][]signature.Failure{{a, b1}}, []signature.Failure{a, b1}, nil},
		{"same in every run", [][]signature.Failure{{b1, a}, {a, b1}, {a, b1}}, []signature.Failure{a, b1}, nil},
		{"message varies", [][]signature.Failure{{a, b1}, {a, b2}, {a, b1}}, []signature.Failure{a}, []string{"TestB"}},
		{"fails in some runs only", [][]signature.Failure{{a, c}, {a}, {a, c}}, []signature.Failure{a}, []string{"TestC"}},
		{"nothing stable", [][]signature.Failure{{b1}, {b2}}, nil, []string{"TestB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stable, unstable := signature.Stable(tt.runs)
			if diff := cmp.Diff(tt.wantStable, stable); diff != "" {
				t.Errorf("stable (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantUnstable, unstable); diff != "" {
				t.Errorf("unstable (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInconsistencies(t *testing.T) {
	m := signature.Mutant{Name: "m", Lab: "7.1",
		Failures: []signature.Failure{{Test: "TestA", Message: "a"}},
		Unstable: []string{"TestRacy"},
	}
	tests := []struct {
		name string
		run  []signature.Failure
		want []string
	}{
		{"same run", []signature.Failure{{Test: "TestA", Message: "a"}}, nil},
		{"an unstable test may fail any way", []signature.Failure{{Test: "TestA", Message: "a"}, {Test: "TestRacy", Message: "x"}}, nil},
		{"message changed", []signature.Failure{{Test: "TestA", Message: "b"}},
			[]string{`TestA: the file says "a", the run gives "b"`}},
		{"no longer fails", nil,
			[]string{`TestA: the file says "a", the run does not fail it`}},
		{"new failure", []signature.Failure{{Test: "TestA", Message: "a"}, {Test: "TestNew", Message: "n"}},
			[]string{`TestNew: fails with "n", which the file does not have`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, m.Inconsistencies(tt.run)); diff != "" {
				t.Errorf("Inconsistencies (-want +got):\n%s", diff)
			}
		})
	}
}
