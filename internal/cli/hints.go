package cli

import (
	"errors"
	"io/fs"
	"slices"
	"strings"

	"github.com/learn-tinypi/course/internal/cards"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
)

// hintMessages are the texts around the hints of lab cards.
var hintMessages = i18n.Catalog{
	"hint.label": {ZH: "提示：", EN: "Hint: "},
}

// labHint returns the hint of lab's card in the output language, or "" when the card has none
// (the kit's checks make sure every card has one).
func (a *app) labHint(lab *manifest.Lab) string {
	if a.content == nil {
		return ""
	}
	card, err := cards.Read(a.content, lab.CardPath(a.p.lang))
	if err != nil && errors.Is(err, fs.ErrNotExist) && a.p.lang != langZH {
		card, err = cards.Read(a.content, lab.CardPath(langZH))
	}
	if err != nil {
		return ""
	}
	return card.Hint
}

// hintLines formats a hint to go under a lab's row: the label on the first line, every line
// indented.
func (a *app) hintLines(hint string) string {
	const indent = "     "
	var b strings.Builder
	for i, line := range strings.Split(hint, "\n") {
		if i == 0 {
			line = style{a.color}.bold(a.p.text("hint.label")) + line
		}
		if line != "" {
			b.WriteString(indent + line)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// labHints returns the hint notes of the labs whose ids are in ids, keyed by their row in a
// table whose first row is a header and whose other rows follow labs.
func (a *app) labHints(labs []*manifest.Lab, ids []string) map[int]string {
	notes := map[int]string{}
	for i, lab := range labs {
		if !slices.Contains(ids, lab.ID) {
			continue
		}
		if hint := a.labHint(lab); hint != "" {
			notes[i+1] = a.hintLines(hint)
		}
	}
	return notes
}
