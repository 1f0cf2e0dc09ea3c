package cli

import (
	"io"
	"strings"

	"github.com/learn-tinypi/course/internal/columns"
)

// writeTable writes rows as columns separated by two spaces, padded by display width. The last
// column is not padded, and no line ends in spaces.
func writeTable(w io.Writer, rows [][]string) error {
	_, err := io.WriteString(w, columns.Table(rows, ""))
	return err
}

// style adds colour and symbols when the output is a terminal, and nothing otherwise, so that
// redirected output and NO_COLOR users get plain text.
type style struct {
	color bool
}

// ok marks s as a success.
func (s style) ok(text string) string {
	if !s.color {
		return text
	}
	return "\x1b[32m✓ " + text + "\x1b[0m"
}

// bad marks s as a failure.
func (s style) bad(text string) string {
	if !s.color {
		return text
	}
	return "\x1b[31m✗ " + text + "\x1b[0m"
}

// bold emphasises s.
func (s style) bold(text string) string {
	if !s.color {
		return text
	}
	return "\x1b[1m" + text + "\x1b[0m"
}

// splitTabs splits a tab-separated catalog message into table cells.
func splitTabs(s string) []string {
	return strings.Split(s, "\t")
}
