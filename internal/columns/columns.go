// Package columns lays text out in terminal columns. A terminal gives East Asian wide and
// full-width characters two columns, so a table of Chinese titles lines up only when it is
// padded by display width, not by bytes or runes.
package columns

import (
	"strings"

	"golang.org/x/text/width"
)

// RuneWidth is the number of columns r takes: two for East Asian wide and full-width runes, one
// for everything else.
func RuneWidth(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// Width is the number of columns s takes. ANSI colour sequences (ESC … m) take none, so a
// coloured cell pads like a plain one.
func Width(s string) int {
	n := 0
	inEscape := false
	for _, r := range s {
		switch {
		case inEscape:
			inEscape = r != 'm'
		case r == '\x1b':
			inEscape = true
		default:
			n += RuneWidth(r)
		}
	}
	return n
}

// Table lays rows out as columns two spaces apart, each padded to its widest cell, every line
// starting with indent. The last cell of a row is not padded, so no line ends in spaces.
func Table(rows [][]string, indent string) string {
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], Width(cell))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		var line strings.Builder
		for i, cell := range row {
			line.WriteString(cell)
			if i < len(row)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-Width(cell)+2))
			}
		}
		b.WriteString(indent + strings.TrimRight(line.String(), " ") + "\n")
	}
	return b.String()
}
