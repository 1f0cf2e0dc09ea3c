package cli

import (
	"io"
	"strings"

	"golang.org/x/text/width"
)

// displayWidth is how many terminal columns s takes: East Asian wide and full-width runes take
// two, so Chinese titles line up with ASCII ones. ANSI colour sequences take none.
func displayWidth(s string) int {
	n := 0
	inEscape := false
	for _, r := range s {
		if inEscape {
			inEscape = r != 'm'
			continue
		}
		if r == '\x1b' {
			inEscape = true
			continue
		}
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}

// writeTable writes rows as columns separated by two spaces, padded by display width. The last
// column is not padded, and no line ends in spaces.
func writeTable(w io.Writer, rows [][]string) error {
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(cell))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			line.WriteString(cell)
			if i < len(row)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-displayWidth(cell)+2))
			}
		}
		// An empty last cell (a lab without failures) leaves no trailing spaces.
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
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
