package cards_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/cards"
	"github.com/learn-tinypi/course/internal/manifest"
)

const zhCard = `# Lab 7.1 · 完成纯文本 stop

- **目标：** 发起一次请求，
  并结束运行。
- **文件：** ` + "`agentloop.go`" + `
- **步骤：**
  1. 第一步。
  2. 第二步。
- **运行：** ` + "`go test -run '^TestLab7_1_' .`" + `

## 提示

先看测试。
再看 **加粗** 的部分。
`

func TestParse(t *testing.T) {
	card, err := cards.Parse([]byte(zhCard))
	if err != nil {
		t.Fatal(err)
	}
	want := cards.Card{
		Title: "Lab 7.1 · 完成纯文本 stop",
		Fields: []cards.Field{
			{Name: "目标", Value: "发起一次请求，\n并结束运行。"},
			{Name: "文件", Value: "`agentloop.go`"},
			{Name: "步骤", Value: "1. 第一步。\n2. 第二步。"},
			{Name: "运行", Value: "`go test -run '^TestLab7_1_' .`"},
		},
		Hint: "先看测试。\n再看 **加粗** 的部分。",
		Text: zhCard,
	}
	if diff := cmp.Diff(want, card); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
	if v, ok := card.Field("运行"); !ok || !strings.Contains(v, "TestLab7_1_") {
		t.Errorf("Field(运行) = %q, %v", v, ok)
	}
	if _, ok := card.Field("Goal"); ok {
		t.Error("Field(Goal) found a field the card does not have")
	}
}

func TestParseEnglishAndCRLF(t *testing.T) {
	src := "# Lab 1.2 · Double\r\n\r\n- **Goal:** double it.\r\n\r\n## Hint\r\n\r\nMultiply.\r\n"
	card, err := cards.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if card.Title != "Lab 1.2 · Double" || card.Hint != "Multiply." {
		t.Errorf("Parse = title %q hint %q", card.Title, card.Hint)
	}
	if diff := cmp.Diff([]cards.Field{{Name: "Goal", Value: "double it."}}, card.Fields); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		noHint    bool
		want      string
	}{
		{"no title", "- **目标：** x\n\n## 提示\n\nh\n", false, "does not start with"},
		{"empty", "", false, "does not start with"},
		{"no hint", "# Lab 1.1\n\n- **目标：** x\n", true, "has no hint"},
		{"empty hint", "# Lab 1.1\n\n## 提示\n\n  \n", true, "hint section is empty"},
		{"hint heading in another language is still a hint", "# Lab 1.1\n\n## Hint\n\nok\n", false, ""},
		{"section after the hint", "# Lab 1.1\n\n## 提示\n\nh\n\n## 附录\n\nx\n", false, "follows the hint"},
		{"hint-like heading", "# Lab 1.1\n\n## 提示与技巧\n\nh\n", true, "has no hint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cards.Parse([]byte(tt.src))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v, want success", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse error = %v, want one containing %q", err, tt.want)
			}
			if got := errors.Is(err, cards.ErrNoHint); got != tt.noHint {
				t.Errorf("errors.Is(err, ErrNoHint) = %v, want %v", got, tt.noHint)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	tests := []struct{ got, want string }{
		{cards.ContentPath("7.1", "zh"), "labs/07/7.1.md"},
		{cards.ContentPath("7.1", "en"), "labs/07/7.1.en.md"},
		{cards.ContentPath("12.3", ""), "labs/12/12.3.md"},
		{cards.PracticePath("7.1", "zh"), "labs/7.1.md"},
		{cards.PracticePath("7.1", "en"), "labs/7.1.en.md"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestLoad(t *testing.T) {
	fsys := fstest.MapFS{
		"labs/07/7.1.md":    {Data: []byte(zhCard)},
		"labs/7.1.en.md":    {Data: []byte("# Lab 7.1\n\n## Hint\n\nin practice\n")},
		"labs/07/7.2.en.md": {Data: []byte("# Lab 7.2\n")},
	}
	if c, err := cards.Load(fsys, "07", "7.1", "zh"); err != nil || c.Hint != "先看测试。\n再看 **加粗** 的部分。" {
		t.Errorf("Load(07, 7.1, zh) = %q, %v", c.Hint, err)
	}
	if c, err := cards.LoadPractice(fsys, "7.1", "en"); err != nil || c.Hint != "in practice" {
		t.Errorf("LoadPractice(7.1, en) = %q, %v", c.Hint, err)
	}
	if _, err := cards.Load(fsys, "07", "7.1", "en"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing card: %v, want fs.ErrNotExist", err)
	}
	_, err := cards.Load(fsys, "7", "7.2", "en")
	if !errors.Is(err, cards.ErrNoHint) || !strings.Contains(err.Error(), "labs/07/7.2.en.md") {
		t.Errorf("Load of a card without hint: %v, want ErrNoHint naming the path", err)
	}
	if _, err := cards.Load(fsys, "08", "7.1", "zh"); err == nil {
		t.Error("Load of a lab of another chapter succeeded")
	}
}

// TestRealCards parses every lab card of the course content in both languages: each has a title
// naming its lab and a hint.
func TestRealCards(t *testing.T) {
	content := course.Content()
	c, err := manifest.Load(content)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ch := range c.Chapters {
		for _, lab := range ch.Labs {
			for _, lang := range []string{"zh", "en"} {
				card, err := cards.Load(content, ch.Number, lab.ID, lang)
				if err != nil {
					t.Errorf("chapter %s: %v", ch.Number, err)
					continue
				}
				n++
				if !strings.HasPrefix(card.Title, "Lab "+lab.ID+" ") {
					t.Errorf("%s: title %q does not name lab %s", cards.ContentPath(lab.ID, lang), card.Title, lab.ID)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no cards checked")
	}
}
