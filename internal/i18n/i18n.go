// Package i18n holds the kit's one mechanism for user-facing text in two languages: a catalog of
// messages keyed by id, each a fmt format in Chinese and in English taking the same verbs.
//
// Every package that prints to a learner keeps its messages in a Catalog (it may assemble it from
// several parts with Merge) and checks it in a test with Problems, so that a translation can never
// drop or reorder an argument and no id is defined twice.
package i18n

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// The languages the kit speaks. Chinese is the default.
const (
	ZH = "zh"
	EN = "en"
)

// Message is one user-facing text in both languages. Both are fmt formats and take the same verbs.
type Message struct {
	ZH, EN string
}

// In returns the text of m in lang: English for EN, Chinese for anything else.
func (m Message) In(lang string) string {
	if lang == EN {
		return m.EN
	}
	return m.ZH
}

// Catalog maps message ids to messages.
type Catalog map[string]Message

// Text formats the message id in lang with args. An unknown id comes back as "!id", so that a
// missing message is visible instead of silently empty (tests check that none is missing).
func (c Catalog) Text(lang, id string, args ...any) string {
	m, ok := c[id]
	if !ok {
		return "!" + id
	}
	format := m.In(lang)
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}

// Merge returns one catalog holding every message of parts. It reports an error naming every id
// defined in more than one part, so that two files of one package cannot silently fight over an id.
func Merge(parts ...Catalog) (Catalog, error) {
	out := Catalog{}
	var dups []string
	for _, p := range parts {
		for id := range p {
			if _, dup := out[id]; dup {
				dups = append(dups, id)
			}
		}
		maps.Copy(out, p)
	}
	if len(dups) > 0 {
		sort.Strings(dups)
		return nil, fmt.Errorf("i18n: messages defined twice: %s", strings.Join(dups, ", "))
	}
	return out, nil
}

// MustMerge is Merge for catalogs assembled from literals when a package starts: a duplicate id
// there is a programming error, found by the package's first test.
func MustMerge(parts ...Catalog) Catalog {
	c, err := Merge(parts...)
	if err != nil {
		panic(err)
	}
	return c
}

// verbRE matches one fmt verb, with its optional explicit argument index, flags, width and
// precision.
var verbRE = regexp.MustCompile(`%(\[[0-9]+\])?[-+# 0]*[0-9]*(\.[0-9]+)?[a-zA-Z%]`)

// Problems returns, sorted by id, what is wrong with c: a message with an empty text in either
// language, or whose two texts do not take the same fmt verbs. A package's test fails on any.
func Problems(c Catalog) []string {
	var problems []string
	for _, id := range slices.Sorted(maps.Keys(c)) {
		m := c[id]
		if strings.TrimSpace(m.ZH) == "" || strings.TrimSpace(m.EN) == "" {
			problems = append(problems, fmt.Sprintf("message %q: zh=%q en=%q, want both non-empty", id, m.ZH, m.EN))
			continue
		}
		zh := verbRE.FindAllString(m.ZH, -1)
		en := verbRE.FindAllString(m.EN, -1)
		slices.Sort(zh)
		slices.Sort(en)
		if !slices.Equal(zh, en) {
			problems = append(problems, fmt.Sprintf("message %q: fmt verbs differ: zh %v, en %v", id, zh, en))
		}
	}
	return problems
}
