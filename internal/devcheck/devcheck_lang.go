package devcheck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/learn-tinypi/course/internal/cards"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// cardLanguages are the languages every lab card exists in, with the hint heading each uses.
var cardLanguages = []struct{ lang, hintHeading string }{
	{"zh", cards.HintHeadingZH},
	{"en", cards.HintHeadingEN},
}

// languageTask is the check that every lab of ch has a card in Chinese and in English, and that
// each card ends with the hint section of its own language, which `course test` prints under a
// failing lab.
func languageTask(b *tree.Builder, ch *manifest.Chapter) task {
	return task{
		name: "languages: every lab has a zh and an en card, each ending with its hint (" +
			cards.HintHeadingZH + " / " + cards.HintHeadingEN + ")",
		run: func(context.Context, string) (Check, error) {
			return checkCardLanguages(b.FS(), ch), nil
		},
	}
}

// checkCardLanguages lists every missing card, every card that does not parse (no hint, an empty
// hint, a section after the hint) and every card whose hint heading is the other language's.
func checkCardLanguages(fsys fs.FS, ch *manifest.Chapter) Check {
	var problems []string
	for _, lab := range ch.Labs {
		for _, l := range cardLanguages {
			path := cards.ContentPath(lab.ID, l.lang)
			card, err := cards.Read(fsys, path)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				problems = append(problems, fmt.Sprintf("lab %s has no %s card: %s is missing", lab.ID, l.lang, path))
			case err != nil:
				problems = append(problems, err.Error())
			case !slices.Contains(strings.Split(card.Text, "\n"), l.hintHeading):
				problems = append(problems, fmt.Sprintf("%s: the hint heading of a %s card is %q", path, l.lang, l.hintHeading))
			}
		}
	}
	if len(problems) > 0 {
		return Check{Detail: strings.Join(problems, "\n")}
	}
	return pass()
}
