package progress_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/progress"
)

func chapter() *manifest.Chapter {
	return &manifest.Chapter{Number: "07", Labs: []*manifest.Lab{
		{ID: "7.1", StubTitle: "收集", Pattern: "^TestLab7_1_", Tests: 1},
		{ID: "7.2", StubTitle: "往返", Pattern: "^TestLab7_2_", Tests: 2},
		{ID: "7.3", StubTitle: "终态", Pattern: "^TestLab7_3_", Tests: 1},
	}}
}

var ranAt = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func TestFromReport(t *testing.T) {
	ch := chapter()
	tests := []struct {
		name   string
		report gotest.Report
		want   []progress.Lab
	}{{
		name: "starter: every test stops at a stub, its own or an earlier one",
		report: gotest.Report{ExitCode: 1, Tests: []gotest.TestResult{
			{Name: "TestLab7_1_A", Failed: true, FirstFailure: "Lab 7.1 收集 尚未实现"},
			{Name: "TestLab7_2_A", Failed: true, FirstFailure: "Lab 7.1 收集 尚未实现"},
			{Name: "TestLab7_2_B", Failed: true, FirstFailure: "panic: Lab 7.2 往返 尚未实现"},
			{Name: "TestLab7_3_A", Failed: true, FirstFailure: "Lab 7.3 终态 尚未实现"},
		}},
		want: []progress.Lab{
			{ID: "7.1", State: progress.NotStarted, Total: 1, FirstFailure: "TestLab7_1_A: Lab 7.1 收集 尚未实现"},
			{ID: "7.2", State: progress.NotStarted, Total: 2, FirstFailure: "TestLab7_2_A: Lab 7.1 收集 尚未实现"},
			{ID: "7.3", State: progress.NotStarted, Total: 1, FirstFailure: "TestLab7_3_A: Lab 7.3 终态 尚未实现"},
		},
	}, {
		name: "done, red, and a later lab's message does not count as a stub",
		report: gotest.Report{ExitCode: 1, Tests: []gotest.TestResult{
			{Name: "TestLab7_1_A", Passed: true},
			{Name: "TestLab7_1_A/sub", Failed: true, FirstFailure: "subtests do not count"},
			{Name: "TestLab7_2_A", Failed: true, FirstFailure: "got 1, want 2"},
			{Name: "TestLab7_2_B", Failed: true, FirstFailure: "Lab 7.2 往返 尚未实现"},
			{Name: "TestLab7_3_A", Failed: true, FirstFailure: "Lab 7.9 别的 尚未实现"},
		}},
		want: []progress.Lab{
			{ID: "7.1", State: progress.Done, Passed: 1, Total: 1},
			{ID: "7.2", State: progress.Red, Total: 2, FirstFailure: "TestLab7_2_A: got 1, want 2"},
			{ID: "7.3", State: progress.Red, Total: 1, FirstFailure: "TestLab7_3_A: Lab 7.9 别的 尚未实现"},
		},
	}, {
		name: "a missing test keeps a lab from being done or not started",
		report: gotest.Report{Tests: []gotest.TestResult{
			{Name: "TestLab7_1_A", Failed: true, FirstFailure: "Lab 7.1 收集 尚未实现"},
			{Name: "TestLab7_2_A", Passed: true},
		}},
		want: []progress.Lab{
			{ID: "7.1", State: progress.NotStarted, Total: 1, FirstFailure: "TestLab7_1_A: Lab 7.1 收集 尚未实现"},
			{ID: "7.2", State: progress.Red, Passed: 1, Total: 2},
			{ID: "7.3", State: progress.Red, Total: 1},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := progress.FromReport(ch, ch.Labs, &tt.report, ranAt)
			want := progress.Progress{Chapter: "07", RanAt: ranAt, Labs: tt.want}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("FromReport (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildFailureKeepsStates(t *testing.T) {
	ch := chapter()
	old := &progress.Progress{Chapter: "07", RanAt: ranAt, Labs: []progress.Lab{
		{ID: "7.1", State: progress.Done, Passed: 1, Total: 1},
		{ID: "7.2", State: progress.Red, Total: 2},
	}}
	later := ranAt.Add(time.Minute)
	run := progress.FromReport(ch, ch.Labs, &gotest.Report{BuildFailed: true, ExitCode: 1}, later)
	got := progress.Merge(ch, old, run)
	want := progress.Progress{Chapter: "07", RanAt: later, BuildFailed: true, Labs: old.Labs}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Merge (-want +got):\n%s", diff)
	}
}

func TestMergeOneLab(t *testing.T) {
	ch := chapter()
	old := &progress.Progress{Chapter: "07", RanAt: ranAt, Labs: []progress.Lab{
		{ID: "7.1", State: progress.Done, Passed: 1, Total: 1},
		{ID: "7.2", State: progress.NotStarted, Total: 2},
		{ID: "7.9", State: progress.Done}, // not a lab of the chapter any more
	}}
	run := progress.Progress{Chapter: "07", RanAt: ranAt.Add(time.Hour), Labs: []progress.Lab{
		{ID: "7.3", State: progress.Red, Total: 1},
		{ID: "7.2", State: progress.Done, Passed: 2, Total: 2},
	}}
	got := progress.Merge(ch, old, run)
	want := progress.Progress{Chapter: "07", RanAt: ranAt.Add(time.Hour), Labs: []progress.Lab{
		{ID: "7.1", State: progress.Done, Passed: 1, Total: 1},
		{ID: "7.2", State: progress.Done, Passed: 2, Total: 2},
		{ID: "7.3", State: progress.Red, Total: 1},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Merge (-want +got):\n%s", diff)
	}
	if next := got.Next(ch); next == nil || next.ID != "7.3" {
		t.Errorf("Next = %v, want 7.3", next)
	}
	if n := got.DoneCount(ch); n != 2 {
		t.Errorf("DoneCount = %d, want 2", n)
	}
	// Another chapter's progress is not merged.
	other := progress.Merge(ch, &progress.Progress{Chapter: "06", Labs: old.Labs}, run)
	if _, ok := other.Lab("7.1"); ok {
		t.Error("Merge kept a lab from another chapter's progress")
	}
}

func TestNextAndHintLabs(t *testing.T) {
	ch := chapter()
	var none *progress.Progress
	if next := none.Next(ch); next == nil || next.ID != "7.1" {
		t.Errorf("Next without progress = %v, want 7.1", next)
	}
	p := progress.Progress{Labs: []progress.Lab{
		{ID: "7.1", State: progress.Done},
		{ID: "7.2", State: progress.NotStarted},
		{ID: "7.3", State: progress.Red},
	}}
	if diff := cmp.Diff([]string{"7.2", "7.3"}, progress.HintLabs(p)); diff != "" {
		t.Errorf("HintLabs (-want +got):\n%s", diff)
	}
	p.Labs[2].State = progress.NotStarted
	if diff := cmp.Diff([]string{"7.2"}, progress.HintLabs(p)); diff != "" {
		t.Errorf("HintLabs, later lab at its stub (-want +got):\n%s", diff)
	}
	for i := range p.Labs {
		p.Labs[i].State = progress.Done
	}
	if p.Next(ch) != nil || len(progress.HintLabs(p)) != 0 {
		t.Errorf("all done: Next = %v, HintLabs = %v, want nothing", p.Next(ch), progress.HintLabs(p))
	}
}

func TestSaveLoad(t *testing.T) {
	root := t.TempDir()
	if _, err := progress.Load(root); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load without a file: %v, want fs.ErrNotExist", err)
	}
	p := progress.Progress{Chapter: "07", RanAt: ranAt, Labs: []progress.Lab{{ID: "7.1", State: progress.Red, Total: 1}}}
	if err := progress.Save(root, p); err != nil {
		t.Fatal(err)
	}
	got, err := progress.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&p, got); diff != "" {
		t.Errorf("Load after Save (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(filepath.Join(root, ".course"))
	if len(entries) != 1 {
		t.Errorf(".course holds %d entries after Save, want only progress.json (no temporary files)", len(entries))
	}
	// A broken file is an error, not an empty progress.
	if err := os.WriteFile(filepath.Join(root, ".course", "progress.json"), []byte("{bad"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := progress.Load(root); err == nil {
		t.Error("Load of a broken file succeeded")
	}
}

func TestSaveFailureLeavesNothing(t *testing.T) {
	root := t.TempDir()
	// .course/progress.json is a non-empty directory: the rename must fail.
	if err := os.MkdirAll(filepath.Join(root, ".course", "progress.json", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := progress.Save(root, progress.Progress{Chapter: "07"}); err == nil {
		t.Fatal("Save over a directory succeeded")
	}
	entries, _ := os.ReadDir(filepath.Join(root, ".course"))
	if len(entries) != 1 {
		t.Errorf(".course holds %d entries after a failed Save, want 1 (no temporary file)", len(entries))
	}
}

func TestStale(t *testing.T) {
	root := t.TempDir()
	write := func(name string, mod time.Time) {
		t.Helper()
		file := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(file, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	write("agentloop.go", ranAt.Add(-time.Minute))
	write(".git/index", ranAt.Add(time.Hour))
	write(".course/progress.json", ranAt.Add(time.Hour))
	p := &progress.Progress{Chapter: "07", RanAt: ranAt}
	if stale, err := progress.Stale(root, p); err != nil || stale {
		t.Errorf("Stale = %v, %v; want false (only .git and .course changed)", stale, err)
	}
	write("sub/helper.go", ranAt.Add(time.Second))
	if stale, err := progress.Stale(root, p); err != nil || !stale {
		t.Errorf("Stale = %v, %v; want true after a file changed", stale, err)
	}
}

// TestEvaluateUnfinished: a test whose binary exited before it reported counts as failed (gotest
// sets Failed on it), and the tests that never ran leave their lab red.
func TestEvaluateUnfinished(t *testing.T) {
	ch := chapter()
	report := &gotest.Report{Tests: []gotest.TestResult{
		{Name: "TestLab7_1_A", Failed: true, Unfinished: true},
	}, Exits: []gotest.Exit{{Test: "TestLab7_1_A"}}}
	p := progress.FromReport(ch, ch.Labs, report, ranAt)
	want := []progress.Lab{
		{ID: "7.1", State: progress.Red, Total: 1, FirstFailure: "TestLab7_1_A"},
		{ID: "7.2", State: progress.Red, Total: 2},
		{ID: "7.3", State: progress.Red, Total: 1},
	}
	if diff := cmp.Diff(want, p.Labs); diff != "" {
		t.Errorf("labs (-want +got):\n%s", diff)
	}
}

// TestDistrust: a run with edited focused tests marks no lab done.
func TestDistrust(t *testing.T) {
	p := progress.Progress{Labs: []progress.Lab{
		{ID: "7.1", State: progress.Done, Passed: 1, Total: 1},
		{ID: "7.2", State: progress.NotStarted, Total: 2, FirstFailure: "TestLab7_2_A: Lab 7.2 往返 尚未实现"},
	}}
	p.Distrust("focused tests changed")
	want := []progress.Lab{
		{ID: "7.1", State: progress.Red, Passed: 1, Total: 1, FirstFailure: "focused tests changed"},
		{ID: "7.2", State: progress.NotStarted, Total: 2, FirstFailure: "TestLab7_2_A: Lab 7.2 往返 尚未实现"},
	}
	if diff := cmp.Diff(want, p.Labs); diff != "" {
		t.Errorf("labs (-want +got):\n%s", diff)
	}
	if n := p.DoneCount(chapter()); n != 0 {
		t.Errorf("DoneCount = %d, want 0", n)
	}
}
