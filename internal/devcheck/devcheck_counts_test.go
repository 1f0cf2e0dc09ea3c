package devcheck

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/learn-tinypi/course/internal/manifest"
)

func TestCheckCounts(t *testing.T) {
	const run1, run2 = "`go test -run '^TestLab9_1_' .`", "`go test -race -run '^TestLab9_2_' .`"
	card := func(expected string, run ...string) string {
		return "# Lab 9.1 · T\n\n- **目标：** 做。\n- **运行：** " + strings.Join(run, "") + "\n- **预期：** " + expected + "。失败测试……\n\n## 提示\n\n看。\n"
	}
	cardEN := func(expected string, run ...string) string {
		return "# Lab 9.1 · T\n\n- **Goal:** do.\n- **Run:** " + strings.Join(run, "") + ", then more\n- **Expected:** " + expected + ". Failures…\n\n## Hint\n\nRead.\n"
	}
	doc := func(box1, box2 string) string {
		return "# 第 9 章\n\n> **实践 9.1 · 一**\n>\n> - **运行：** " + run1 + "\n> - **预期：** " + box1 + "：说明。\n\n正文 `9/9`。\n\n> **实践 9.2 · 二**\n> - **预期：** " + box2 + "\n"
	}
	docEN := func(box1, box2 string) string {
		return "# Chapter 9\n\n> **Lab 9.1 · One**\n>\n> - **Expected:** " + box1 + ": why.\n\n> **Lab 9.2 · Two**\n> - **Expected:** " + box2 + "\n"
	}
	ch := &manifest.Chapter{Number: "09", Doc: "docs/09-agent.md", Labs: []*manifest.Lab{
		{ID: "9.1", Tests: 2, Pattern: "^TestLab9_1_"}, {ID: "9.2", Tests: 3, Pattern: "^TestLab9_2_", Race: true}}}
	good := map[string]string{
		"labs/09/9.1.md": card("`2/2`", run1), "labs/09/9.1.en.md": cardEN("`2/2`", run1),
		"labs/09/9.2.md": card("`3/3`", run2), "labs/09/9.2.en.md": cardEN("`3/3`", run2),
		"docs/09-agent.md":    doc("`2/2`", "本 Lab `3/3`，全章 `5/5`"),
		"docs/09-agent.en.md": docEN("`2/2`", "`3/3` for this lab and `5/5` for the chapter"),
	}
	tests := []struct {
		name   string
		change map[string]string
		want   []string // substrings of the detail; none when the check passes
	}{
		{name: "every count right"},
		{
			name:   "a Chinese card behind its lab",
			change: map[string]string{"labs/09/9.2.md": card("`2/2`", run2)},
			want:   []string{"labs/09/9.2.md: lab 9.2: the Expected line says `2/2`, but the lab has 3 focused test(s): `3/3`"},
		},
		{
			name:   "an English card without a count",
			change: map[string]string{"labs/09/9.1.en.md": cardEN("all pass", run1)},
			want:   []string{"labs/09/9.1.en.md: lab 9.1: the Expected line states no test count (`2/2`)"},
		},
		{
			name:   "a card without an Expected line",
			change: map[string]string{"labs/09/9.1.md": "# Lab 9.1 · T\n\n## 提示\n\n看。\n"},
			want:   []string{`labs/09/9.1.md: no line starts with "- **预期：**"`},
		},
		{
			name:   "a race lab's card without -race",
			change: map[string]string{"labs/09/9.2.en.md": cardEN("`3/3`", "`go test -run '^TestLab9_2_' .`")},
			want:   []string{"labs/09/9.2.en.md: lab 9.2: the Run line says `go test -run '^TestLab9_2_' .`, then more; want it to open with " + run2},
		},
		{
			name:   "-race for a lab course test runs without it",
			change: map[string]string{"docs/09-agent.md": strings.Replace(doc("`2/2`", "本 Lab `3/3`，全章 `5/5`"), run1, "`go test -race -run '^TestLab9_1_' .`", 1)},
			want:   []string{"docs/09-agent.md: the box of lab 9.1: the Run line says `go test -race -run '^TestLab9_1_' .`; want it to open with " + run1},
		},
		{
			name:   "a box of the Chinese text behind its lab",
			change: map[string]string{"docs/09-agent.md": doc("`1/2`", "本 Lab `3/3`，全章 `5/5`")},
			want:   []string{"docs/09-agent.md: the box of lab 9.1: the Expected line says `1/2`, but the lab has 2 focused test(s): `2/2`"},
		},
		{
			name:   "the chapter's count in the English text behind",
			change: map[string]string{"docs/09-agent.en.md": docEN("`2/2`", "`3/3` for this lab and `4/4` for the chapter")},
			want:   []string{"docs/09-agent.en.md: the box of lab 9.2: the Expected line says `4/4`, but the chapter has 5 focused test(s): `5/5`"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, text := range good {
				fsys[name] = &fstest.MapFile{Data: []byte(text)}
			}
			for name, text := range tt.change {
				fsys[name] = &fstest.MapFile{Data: []byte(text)}
			}
			got := checkCounts(fsys, ch)
			if len(tt.want) == 0 {
				if !got.OK {
					t.Fatalf("checkCounts failed:\n%s", got.Detail)
				}
				return
			}
			if got.OK {
				t.Fatalf("checkCounts passed; want a failure saying %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Detail, w) {
					t.Errorf("detail does not say %q:\n%s", w, got.Detail)
				}
			}
		})
	}
}

// TestCountsOfTheCourse runs the check on the course itself: every chapter's cards and texts
// state its labs' counts.
func TestCountsOfTheCourse(t *testing.T) {
	fsys := os.DirFS("../..")
	course, err := manifest.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range course.Chapters {
		if got := checkCounts(fsys, ch); !got.OK {
			t.Errorf("chapter %s:\n%s", ch.Number, got.Detail)
		}
	}
}
