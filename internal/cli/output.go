package cli

import (
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/learn-tinypi/course/internal/columns"
	"golang.org/x/term"
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

// writeTableNotes writes rows like writeTable, each followed by its note (complete lines) when
// notes has one for the row's index.
func writeTableNotes(w io.Writer, rows [][]string, notes map[int]string) error {
	var table strings.Builder
	if err := writeTable(&table, rows); err != nil {
		return err
	}
	var b strings.Builder
	for i, line := range strings.SplitAfter(table.String(), "\n") {
		b.WriteString(line)
		b.WriteString(notes[i])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// outputWidth is the --width value, else the terminal's width, else $COLUMNS, else 120.
func (a *app) outputWidth(flag int) int {
	if flag > 0 {
		return flag
	}
	if f, ok := a.stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if a.getenv != nil {
		if w, err := strconv.Atoi(a.getenv("COLUMNS")); err == nil && w > 0 {
			return w
		}
	}
	return 120
}
