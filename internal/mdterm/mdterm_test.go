package mdterm

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/width"

	course "github.com/learn-tinypi/course"
)

// Escape sequences of the styles, spelled out so that no expected value comes from the code
// under test.
const (
	sBold    = "\x1b[1m"
	sItalic  = "\x1b[3m"
	sCode    = "\x1b[36m"
	sH1      = "\x1b[1;4;35m"
	sH2      = "\x1b[1;35m"
	sFaint   = "\x1b[2m"
	sLink    = "\x1b[4m"
	sBoldTab = "\x1b[1m"
	off      = "\x1b[0m"
)

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		name  string
		src   string
		width int
		want  string
	}{{
		name:  "headings without their marks",
		src:   "# 第一章\n\n## 小节\n\n正文。\n",
		width: 40,
		want:  sH1 + "第一章" + off + "\n\n" + sH2 + "小节" + off + "\n\n正文。\n",
	}, {
		name:  "Chinese wraps between any two characters, two columns each",
		src:   "一二三四五六七八九十一二三四五\n",
		width: 20,
		want:  "一二三四五六七八九十\n一二三四五\n",
	}, {
		name:  "a closing mark never starts a line",
		src:   "一二三四五六七八九，十\n",
		width: 18,
		want:  "一二三四五六七八\n九，十\n",
	}, {
		name:  "an opening mark never ends a line",
		src:   "一二三四五六七（八九）\n",
		width: 16,
		want:  "一二三四五六七\n（八九）\n",
	}, {
		name:  "Latin words wrap at spaces",
		src:   "one two three four five six\n",
		width: 10,
		want:  "one two\nthree four\nfive six\n",
	}, {
		name:  "a source line break joins Chinese without a space, Latin with one",
		src:   "中文\n继续，\nword 列表、\n`code`\nnext\n",
		width: 60,
		want:  "中文继续，word 列表、" + sCode + "code" + off + " next\n",
	}, {
		name:  "inline code breaks only at its spaces",
		src:   "运行 `Lab 7.1 收集模型终态 尚未实现` 吧\n",
		width: 24,
		want:  "运行 " + sCode + "Lab 7.1" + off + "\n" + sCode + "收集模型终态 尚未实现" + off + " 吧\n",
	}, {
		name:  "emphasis, strong, links",
		src:   "*斜* **粗** [卡片](labs/7.1.md) <https://go.dev>\n",
		width: 80,
		want: sItalic + "斜" + off + " " + sBold + "粗" + off + " " + sLink + "卡片" + off +
			sFaint + " (labs/7.1.md)" + off + " " + sLink + "https://go.dev" + off + "\n",
	}, {
		name:  "code blocks are indented, never wrapped, tabs as four spaces",
		src:   "```go\nfunc f() {\n\treturn \"a long line that is wider than the width\"\n}\n```\n",
		width: 20,
		want: "  " + sCode + "func f() {" + off + "\n" +
			"  " + sCode + "    return \"a long line that is wider than the width\"" + off + "\n" +
			"  " + sCode + "}" + off + "\n",
	}, {
		name:  "tight lists: bullets, numbers, a hanging indent",
		src:   "- 一二三四五六七八\n- 二\n\n1. a\n2. b\n",
		width: 12,
		want:  "• 一二三四五\n  六七八\n• 二\n\n1. a\n2. b\n",
	}, {
		name:  "nested list",
		src:   "- 外\n  - 内\n",
		width: 20,
		want:  "• 外\n  • 内\n",
	}, {
		name:  "block quote with a list",
		src:   "> **实践**\n>\n> - 目标\n> - 文件\n",
		width: 20,
		want:  sFaint + "│" + off + " " + sBold + "实践" + off + "\n" + sFaint + "│" + off + "\n" + sFaint + "│" + off + " • 目标\n" + sFaint + "│" + off + " • 文件\n",
	}, {
		name:  "a table that fits is aligned",
		src:   "| Lab | 函数 |\n|---|---|\n| 7.1 | `finish` |\n| 7.10 | 无 |\n",
		width: 40,
		want: sBoldTab + "Lab" + off + " " + sFaint + " │ " + off + sBoldTab + "函数" + off + "\n" +
			sFaint + "─────┼───────" + off + "\n" +
			"7.1 " + sFaint + " │ " + off + sCode + "finish" + off + "\n" +
			"7.10" + sFaint + " │ " + off + "无\n",
	}, {
		name:  "a table too wide lists each row",
		src:   "| 规则 | 例子 |\n|---|---|\n| 行可以以换行结束 | 两个事件 |\n| 注释 | 保活 |\n",
		width: 20,
		want: "• " + sBold + "规则：" + off + "行可以以换行\n  结束\n  " + sBold + "例子：" + off + "两个事件\n\n" +
			"• " + sBold + "规则：" + off + "注释\n  " + sBold + "例子：" + off + "保活\n",
	}, {
		name:  "a hard line break ends the line",
		src:   "第一行\\\n第二行\n",
		width: 40,
		want:  "第一行\n第二行\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Render(tc.src, tc.width)); diff != "" {
				t.Errorf("Render(%q, %d) (-want +got):\n%s", tc.src, tc.width, diff)
			}
		})
	}
}

var (
	escapes = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// codeLine is a line of a code block, maybe inside quotes and lists.
	codeLine = regexp.MustCompile("^(\x1b\\[2m│\x1b\\[0m|[ •0-9.])*  \x1b\\[36m[^\x1b]*\x1b\\[0m$")
)

// columns is the width of s on a terminal, counted independently of the package's own code.
func columns(s string) int {
	n := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}

// TestChapterTexts renders every chapter text of the course: narrow, every line but a code
// line fits; wide (tables aligned), every Chinese character of the text is there, in order.
func TestChapterTexts(t *testing.T) {
	docs, err := fs.Glob(course.Content(), "docs/[0-9][0-9]-*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no chapter texts in the course content (%v)", err)
	}
	for _, doc := range docs {
		src, err := fs.ReadFile(course.Content(), doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{40, 72} {
			for i, line := range strings.Split(Render(string(src), w), "\n") {
				if codeLine.MatchString(line) {
					continue // code blocks are not wrapped
				}
				if n := columns(escapes.ReplaceAllString(line, "")); n > w {
					t.Errorf("%s at width %d: line %d is %d columns wide: %q", doc, w, i+1, n, line)
				}
			}
		}
		han := func(s string) string {
			return strings.Map(func(r rune) rune {
				if unicode.Is(unicode.Han, r) {
					return r
				}
				return -1
			}, s)
		}
		if diff := cmp.Diff(han(string(src)), han(Render(string(src), 500))); diff != "" {
			t.Errorf("%s: Chinese text lost or changed (-source +rendered):\n%s", doc, diff)
		}
	}
}
