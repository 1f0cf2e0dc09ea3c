package devcheck

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/learn-tinypi/course/internal/manifest"
)

func TestCheckCardLanguages(t *testing.T) {
	zh := "# Lab 9.1 · 标题\n\n- **目标：** 做一件事。\n\n## 提示\n\n先看测试。\n"
	en := "# Lab 9.1 · Title\n\n- **Goal:** do one thing.\n\n## Hint\n\nRead the test first.\n"
	ch := &manifest.Chapter{Number: "09", Labs: []*manifest.Lab{{ID: "9.1"}}}
	tests := []struct {
		name  string
		files map[string]string
		want  []string // substrings of the detail, in order; none when the check passes
	}{
		{
			name:  "both cards with hints",
			files: map[string]string{"labs/09/9.1.md": zh, "labs/09/9.1.en.md": en},
		},
		{
			name:  "English card missing",
			files: map[string]string{"labs/09/9.1.md": zh},
			want:  []string{"lab 9.1 has no en card: labs/09/9.1.en.md is missing"},
		},
		{
			name:  "Chinese card missing",
			files: map[string]string{"labs/09/9.1.en.md": en},
			want:  []string{"lab 9.1 has no zh card: labs/09/9.1.md is missing"},
		},
		{
			name: "English card without a hint",
			files: map[string]string{
				"labs/09/9.1.md":    zh,
				"labs/09/9.1.en.md": "# Lab 9.1 · Title\n\n- **Goal:** do one thing.\n",
			},
			want: []string{"labs/09/9.1.en.md", "no hint"},
		},
		{
			name: "empty hint",
			files: map[string]string{
				"labs/09/9.1.md":    "# Lab 9.1 · 标题\n\n## 提示\n\n",
				"labs/09/9.1.en.md": en,
			},
			want: []string{"labs/09/9.1.md", "empty"},
		},
		{
			name: "Chinese card with the English hint heading",
			files: map[string]string{
				"labs/09/9.1.md":    strings.Replace(zh, "## 提示", "## Hint", 1),
				"labs/09/9.1.en.md": en,
			},
			want: []string{`labs/09/9.1.md: the hint heading of a zh card is "## 提示"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, text := range tt.files {
				fsys[name] = &fstest.MapFile{Data: []byte(text)}
			}
			got := checkCardLanguages(fsys, ch)
			if got.OK != (len(tt.want) == 0) {
				t.Fatalf("checkCardLanguages() OK = %v, want %v; detail:\n%s", got.OK, len(tt.want) == 0, got.Detail)
			}
			rest := got.Detail
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("detail %q does not contain %q (in order)", got.Detail, w)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

func TestCheckTexts(t *testing.T) {
	ch := &manifest.Chapter{Number: "07", Doc: "docs/07-loop.md"}
	zh := "# 循环\n\n见 [第 06 章](06-tool.md)。\n\n## 实践 7.1\n\n```go\nx := 1\n```\n"
	en := "# The loop\n\nSee [chapter 06](06-tool.en.md).\n\n## Lab 7.1\n\n```go\nx := 1\n```\n"
	fsys := fstest.MapFS{
		"docs/07-loop.md":    {Data: []byte(zh)},
		"docs/07-loop.en.md": {Data: []byte(en)},
		"docs/06-tool.md":    {Data: []byte("# 工具\n")},
		"docs/06-tool.en.md": {Data: []byte("# Tools\n")},
	}
	if c := checkTexts(fsys, ch); !c.OK {
		t.Errorf("a pair in step: %s", c.Detail)
	}

	fsys["docs/07-loop.en.md"] = &fstest.MapFile{Data: []byte(strings.Replace(en, "x := 1", "x := 2", 1))}
	c := checkTexts(fsys, ch)
	if want := `section 2 (docs/07-loop.md line 5 "实践 7.1", docs/07-loop.en.md line 5 "Lab 7.1"): code block 1 differs: line 1: "x := 1", "x := 2"`; c.OK || c.Detail != want {
		t.Errorf("a code block changed in one text: %+v, want the detail %q", c, want)
	}

	delete(fsys, "docs/06-tool.en.md")
	fsys["docs/07-loop.en.md"] = &fstest.MapFile{Data: []byte(en)}
	c = checkTexts(fsys, ch)
	if want := `docs/07-loop.en.md line 1: the link "06-tool.en.md" does not resolve`; c.OK || c.Detail != want {
		t.Errorf("a link that does not resolve: %+v, want the detail %q", c, want)
	}

	delete(fsys, "docs/07-loop.en.md")
	c = checkTexts(fsys, ch)
	if c.OK || !strings.HasPrefix(c.Detail, "docs/07-loop.en.md is missing") {
		t.Errorf("no English text: %+v, want a failure naming docs/07-loop.en.md", c)
	}
}
