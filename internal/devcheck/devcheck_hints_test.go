package devcheck

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
)

func TestHintProblems(t *testing.T) {
	ch := &manifest.Chapter{Number: "09", Labs: []*manifest.Lab{
		{ID: "9.1", StubTitle: "一", Pattern: "^TestLab9_1_", Tests: 1},
		{ID: "9.2", StubTitle: "二", Pattern: "^TestLab9_2_", Tests: 1},
	}}
	cardsFS := func(drop string) fstest.MapFS {
		fsys := fstest.MapFS{
			"labs/09/9.2.md":    {Data: []byte("# Lab 9.2 · 二\n\n## 提示\n\n先看测试。\n")},
			"labs/09/9.2.en.md": {Data: []byte("# Lab 9.2 · Two\n\n## Hint\n\nRead the test.\n")},
		}
		if drop != "" {
			fsys[drop] = &fstest.MapFile{Data: []byte("# Lab 9.2\n")}
		}
		return fsys
	}
	stubbed := &gotest.Report{ExitCode: 1, Tests: []gotest.TestResult{
		{Name: "TestLab9_1_A", Passed: true},
		{Name: "TestLab9_2_A", Failed: true, FirstFailure: "Lab 9.2 二 尚未实现"},
	}}
	tests := []struct {
		name   string
		fsys   fstest.MapFS
		report *gotest.Report
		want   []string
	}{
		{"stub shows its hint", cardsFS(""), stubbed, nil},
		{"English card without hint", cardsFS("labs/09/9.2.en.md"), stubbed, []string{"lab 9.2: no hint", "9.2.en.md"}},
		{"Chinese card without hint", cardsFS("labs/09/9.2.md"), stubbed, []string{"lab 9.2: no hint", "9.2.md"}},
		{"a stub that passes has no hint to show", cardsFS(""), &gotest.Report{Tests: []gotest.TestResult{
			{Name: "TestLab9_1_A", Passed: true},
			{Name: "TestLab9_2_A", Passed: true},
		}}, []string{"would not show lab 9.2's hint", "9.2=done"}},
		{"build failure is left to the stub check", cardsFS(""), &gotest.Report{BuildFailed: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(hintProblems(tt.fsys, ch, 1, tt.report), "\n")
			if len(tt.want) == 0 && got != "" {
				t.Fatalf("hintProblems = %q, want none", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("hintProblems = %q, want it to contain %q", got, w)
				}
			}
		})
	}
}
