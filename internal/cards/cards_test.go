package cards_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.NoError(t, err)
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
	v, ok := card.Field("运行")
	assert.True(t, ok, "Field(运行) found")
	assert.Contains(t, v, "TestLab7_1_", "Field(运行)")
	_, ok = card.Field("Goal")
	assert.False(t, ok, "Field(Goal) found a field the card does not have")
}

func TestParseEnglishAndCRLF(t *testing.T) {
	src := "# Lab 1.2 · Double\r\n\r\n- **Goal:** double it.\r\n\r\n## Hint\r\n\r\nMultiply.\r\n"
	card, err := cards.Parse([]byte(src))
	require.NoError(t, err)
	assert.Equal(t, "Lab 1.2 · Double", card.Title, "Title")
	assert.Equal(t, "Multiply.", card.Hint, "Hint")
	assert.Equal(t, []cards.Field{{Name: "Goal", Value: "double it."}}, card.Fields, "Fields")
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
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
			assert.Equal(t, tt.noHint, errors.Is(err, cards.ErrNoHint), "errors.Is(err, ErrNoHint)")
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
		assert.Equal(t, tt.want, tt.got)
	}
}

func TestLoad(t *testing.T) {
	fsys := fstest.MapFS{
		"labs/07/7.1.md":    {Data: []byte(zhCard)},
		"labs/7.1.en.md":    {Data: []byte("# Lab 7.1\n\n## Hint\n\nin practice\n")},
		"labs/07/7.2.en.md": {Data: []byte("# Lab 7.2\n")},
	}
	c, err := cards.Load(fsys, "07", "7.1", "zh")
	if assert.NoError(t, err, "Load(07, 7.1, zh)") {
		assert.Equal(t, "先看测试。\n再看 **加粗** 的部分。", c.Hint, "Load(07, 7.1, zh)")
	}
	c, err = cards.LoadPractice(fsys, "7.1", "en")
	if assert.NoError(t, err, "LoadPractice(7.1, en)") {
		assert.Equal(t, "in practice", c.Hint, "LoadPractice(7.1, en)")
	}
	_, err = cards.Load(fsys, "07", "7.1", "en")
	assert.ErrorIs(t, err, fs.ErrNotExist, "Load of a missing card")
	_, err = cards.Load(fsys, "7", "7.2", "en")
	assert.ErrorIs(t, err, cards.ErrNoHint, "Load of a card without hint")
	assert.ErrorContains(t, err, "labs/07/7.2.en.md", "Load of a card without hint names the path")
	_, err = cards.Load(fsys, "08", "7.1", "zh")
	assert.Error(t, err, "Load of a lab of another chapter")
}

// TestRealCards parses every lab card of the course content in both languages: each has a title
// naming its lab and a hint.
func TestRealCards(t *testing.T) {
	content := course.Content()
	c, err := manifest.Load(content)
	require.NoError(t, err)
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
