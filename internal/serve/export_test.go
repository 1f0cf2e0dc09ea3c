package serve

import "github.com/learn-tinypi/course/internal/i18n"

// CatalogProblems checks the page's catalog as every catalog of the kit is checked.
func CatalogProblems() []string { return i18n.Problems(messages) }
