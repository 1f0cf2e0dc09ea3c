package serve

import "github.com/learn-tinypi/course/internal/i18n"

// CatalogProblems checks the page's catalog as every catalog of the kit is checked.
func CatalogProblems() []string { return i18n.Problems(messages) }

// CatalogTexts returns every text of the page's catalog, in both languages.
func CatalogTexts() []string {
	var out []string
	for _, m := range messages {
		out = append(out, m.ZH, m.EN)
	}
	return out
}
