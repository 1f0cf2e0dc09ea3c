package sessionlog

import "github.com/learn-tinypi/course/internal/i18n"

// CatalogProblems checks the catalog of explanations as every catalog of the kit is checked.
func CatalogProblems() []string { return i18n.Problems(errorMessages) }

// DecodeFast and DecodeSlow are the two decoders of one line (see decodeLine).
func DecodeFast(line []byte) (Event, bool) { return decodeFast(line, 2) }

func DecodeSlow(line []byte) (Event, error) { return decodeSlow(line, 2) }

// LineLimit is the longest line ReadFile accepts with opts.
func LineLimit(opts Options) int { return opts.maxLineBytes() }
