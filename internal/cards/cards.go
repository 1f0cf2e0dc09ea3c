// Package cards reads lab cards: the short Markdown pages (labs/NN/N.M.md in Chinese,
// labs/NN/N.M.en.md in English) that tell a learner what one lab asks for. A card has a title
// line, bullet fields (goal, file, steps, run, expected) and, as its last section, a hint
// (`## 提示` or `## Hint`), which `course test` prints under a failing lab.
package cards

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// Hint headings: Chinese cards use the first, English cards the second.
const (
	HintHeadingZH = "## 提示"
	HintHeadingEN = "## Hint"
)

// ErrNoHint is returned (wrapped) by Parse and Load for a card without a hint section or with an
// empty one.
var ErrNoHint = errors.New("the card has no hint: its last section must be `" + HintHeadingZH +
	"` (Chinese) or `" + HintHeadingEN + "` (English) followed by a paragraph")

// Card is one parsed lab card.
type Card struct {
	// Title is the text of the `# ` title line, for example "Lab 7.1 · 完成纯文本 stop".
	Title string
	// Fields are the top-level bullet fields in order.
	Fields []Field
	// Hint is the text of the hint section, without its heading and surrounding blank lines.
	Hint string
	// Text is the whole card as it was read.
	Text string
}

// Field is one top-level bullet of a card, `- **目标：** text` or `- **Goal:** text`.
type Field struct {
	// Name is the bold label without its colon: "目标", "Goal".
	Name string
	// Value is the rest of the bullet: the text after the label and the bullet's continuation
	// lines (nested steps included), with the bullet's two-space indentation removed.
	Value string
}

// Field returns the value of the field named name, and whether the card has it.
func (c Card) Field(name string) (string, bool) {
	for _, f := range c.Fields {
		if f.Name == name {
			return f.Value, true
		}
	}
	return "", false
}

// Parse reads a card. It fails when the card has no `# ` title line as its first non-blank line,
// or no hint (the error wraps ErrNoHint), or when another `## ` section follows the hint.
func Parse(data []byte) (Card, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	card := Card{Text: text}
	lines := strings.Split(text, "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) || !strings.HasPrefix(lines[i], "# ") {
		return Card{}, errors.New("the card does not start with a `# Lab N.M · title` line")
	}
	card.Title = strings.TrimSpace(strings.TrimPrefix(lines[i], "# "))

	hintAt := -1
	var field *Field
	for j := i + 1; j < len(lines); j++ {
		line := lines[j]
		if strings.HasPrefix(line, "## ") {
			field = nil
			heading := strings.TrimSpace(line)
			switch {
			case heading == HintHeadingZH || heading == HintHeadingEN:
				hintAt = j
			case hintAt >= 0:
				return Card{}, fmt.Errorf("line %d: section %q follows the hint; the hint must be the card's last section", j+1, heading)
			}
			continue
		}
		if hintAt >= 0 {
			continue
		}
		if name, value, ok := fieldLine(line); ok {
			card.Fields = append(card.Fields, Field{Name: name, Value: value})
			field = &card.Fields[len(card.Fields)-1]
			continue
		}
		if field != nil && strings.HasPrefix(line, "  ") {
			field.Value += "\n" + strings.TrimPrefix(line, "  ")
			continue
		}
		field = nil
	}
	for k := range card.Fields {
		card.Fields[k].Value = strings.TrimSpace(card.Fields[k].Value)
	}
	if hintAt < 0 {
		return Card{}, ErrNoHint
	}
	card.Hint = strings.TrimSpace(strings.Join(lines[hintAt+1:], "\n"))
	if card.Hint == "" {
		return Card{}, fmt.Errorf("line %d: the hint section is empty: %w", hintAt+1, ErrNoHint)
	}
	return card, nil
}

// fieldLine splits a top-level bullet `- **Name：** value` (or `- **Name:** value`) into its name
// and value.
func fieldLine(line string) (name, value string, ok bool) {
	rest, ok := strings.CutPrefix(line, "- **")
	if !ok {
		return "", "", false
	}
	label, value, ok := strings.Cut(rest, "**")
	if !ok {
		return "", "", false
	}
	name = strings.TrimSpace(strings.TrimRight(label, ":："))
	if name == "" || name == label {
		return "", "", false // a bold word without a colon is not a field label
	}
	return name, strings.TrimSpace(value), true
}

// ContentPath is where the card of lab (an id such as "7.1") in lang ("zh" or "en") lives in the
// course content: labs/07/7.1.md, labs/07/7.1.en.md.
func ContentPath(lab, lang string) string {
	major, _, _ := strings.Cut(lab, ".")
	n, err := strconv.Atoi(major)
	dir := "labs/" + major + "/"
	if err == nil {
		dir = fmt.Sprintf("labs/%02d/", n)
	}
	return dir + fileName(lab, lang)
}

// PracticePath is where the card of lab in lang lives inside a practice directory: labs/7.1.md,
// labs/7.1.en.md.
func PracticePath(lab, lang string) string {
	return "labs/" + fileName(lab, lang)
}

func fileName(lab, lang string) string {
	if lang == "" || lang == "zh" {
		return lab + ".md"
	}
	return lab + "." + lang + ".md"
}

// Load reads and parses the card of lab in lang from the course content. chapter is accepted for
// symmetry with the manifest ("07" or "7"); the card's folder follows from the lab id, and a
// lab that does not belong to chapter is an error.
func Load(fsys fs.FS, chapter, lab, lang string) (Card, error) {
	major, _, _ := strings.Cut(lab, ".")
	if a, errA := strconv.Atoi(major); errA == nil {
		if b, errB := strconv.Atoi(chapter); errB == nil && a != b {
			return Card{}, fmt.Errorf("lab %s is not a lab of chapter %s", lab, chapter)
		}
	}
	return Read(fsys, ContentPath(lab, lang))
}

// LoadPractice reads and parses the card of lab in lang from a practice directory's file system
// (os.DirFS of its root).
func LoadPractice(fsys fs.FS, lab, lang string) (Card, error) {
	return Read(fsys, PracticePath(lab, lang))
}

// Read reads and parses the card at path in fsys; its errors name the path.
func Read(fsys fs.FS, path string) (Card, error) {
	data, err := fs.ReadFile(fsys, path)
	if err != nil {
		return Card{}, fmt.Errorf("lab card: %w", err)
	}
	card, err := Parse(data)
	if err != nil {
		return Card{}, fmt.Errorf("lab card %s: %w", path, err)
	}
	return card, nil
}
