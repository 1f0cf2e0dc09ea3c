package textpair

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const zhText = "# 第一章\n\n导言，见 [第二章](02-next.md)。\n\n## 做法\n\nLab 1.1 要求：\n\n```go\nfmt.Println(\"你好\")\n```\n\n### 细节\n\n见实践 1.2。\n"

const enText = "# Chapter one\n\nIntroduction; see [chapter two](02-next.en.md).\n\n## How\n\nLab 1.1 asks:\n\n```go\nfmt.Println(\"你好\")\n```\n\n### Details\n\nSee lab 1.2.\n"

func TestParse(t *testing.T) {
	got := Parse([]byte(zhText))
	want := Outline{Sections: []Section{
		{Level: 1, Title: "第一章", Line: 1, Links: []string{"02-next.md"}},
		{Level: 2, Title: "做法", Line: 5, Labs: []string{"1.1"}, Code: []string{"go\nfmt.Println(\"你好\")\n"}},
		{Level: 3, Title: "细节", Line: 13, Labs: []string{"1.2"}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

func TestCompare(t *testing.T) {
	all := func(string, string) bool { return true }
	if got := Compare("zh.md", []byte(zhText), "en.md", []byte(enText), all); len(got) != 0 {
		t.Fatalf("Compare of a faithful translation = %q, want no problem", got)
	}
	tests := []struct {
		name string
		en   string
		want string // a part of the one problem expected
	}{
		{"a new section", enText + "\n## Extra\n\nMore.\n", `section 4 (en.md line 17 "Extra") has no counterpart in zh.md`},
		{"a section dropped", strings.Replace(enText, "### Details\n\nSee lab 1.2.\n", "", 1), `section 3 (zh.md line 13 "细节") has no counterpart in en.md`},
		{"another level", strings.Replace(enText, "### Details", "## Details", 1), "heading level 3 in zh.md, 2 in en.md"},
		{"a code comment translated", strings.Replace(enText, `"你好"`, `"hello"`, 1), `code block 1 differs: line 1: "fmt.Println(\"你好\")", "fmt.Println(\"hello\")"`},
		{"a new code block", strings.Replace(enText, "See lab 1.2.\n", "See lab 1.2.\n\n```sh\ngo test\n```\n", 1), "0 code block(s) in zh.md, 1 in en.md"},
		{"another info string", strings.Replace(enText, "```go", "```golang", 1), `info string "go", "golang"`},
		{"a lab moved", strings.Replace(strings.Replace(enText, "See lab 1.2.", "See it.", 1), "Lab 1.1 asks", "Lab 1.1 and Lab 1.2 ask", 1), "labs named [1.1] in zh.md, [1.1 1.2] in en.md"},
		{"another link", strings.Replace(enText, "02-next.en.md", "03-other.md", 1), "links [02-next.md] in zh.md, [03-other.md] in en.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare("zh.md", []byte(zhText), "en.md", []byte(tt.en), all)
			if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), tt.want) {
				t.Errorf("Compare = %q, want a problem containing %q", got, tt.want)
			}
		})
	}
	broken := func(name, dest string) bool { return dest != "02-next.en.md" }
	got := Compare("zh.md", []byte(zhText), "en.md", []byte(enText), broken)
	if want := []string{`en.md line 1: the link "02-next.en.md" does not resolve`}; !cmp.Equal(want, got) {
		t.Errorf("Compare with a broken link = %q, want %q", got, want)
	}
}
