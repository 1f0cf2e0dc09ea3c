package sessionlog

import "github.com/learn-tinypi/course/internal/i18n"

// CatalogProblems checks the catalog of explanations as every catalog of the kit is checked.
func CatalogProblems() []string { return i18n.Problems(errorMessages) }
