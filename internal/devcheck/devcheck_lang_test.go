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
