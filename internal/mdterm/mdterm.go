// Package mdterm renders the course's Markdown (CommonMark with GitHub tables) for a terminal:
// headings, emphasis, code, lists, block quotes and tables with ANSI styles, and paragraphs
// wrapped to the terminal's width. Wrapping knows Chinese: a line may break between two Chinese
// characters (never before a closing mark such as "，" or after an opening one such as "（"),
// wide characters count two columns, and a line break in the source between two Chinese
// characters joins them without a space. Code blocks are never wrapped.
//
// The styles use the terminal's own basic colours, so the output reads on dark and light
// backgrounds alike.
package mdterm

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"golang.org/x/text/width"
)

// minWidth is the narrowest width Render wraps to, whatever width it is given.
const minWidth = 10

// Render returns the Markdown src rendered for a terminal width columns wide. Every line but the
// lines of a code block (and a word longer than the width, which is cut) fits in width columns.
func Render(src string, width int) string {
	source := []byte(src)
	doc := goldmark.New(goldmark.WithExtensions(extension.Table)).Parser().Parse(text.NewReader(source))
	r := renderer{src: source}
	lines := r.blocks(doc, max(width, minWidth))
	return strings.Join(lines, "\n") + "\n"
}

// style is a set of text attributes.
type style uint8

const (
	bold style = 1 << iota
	italic
	underline
	faint
	code    // inline code and code blocks
	heading // the colour of headings
)

// sgr returns the escape sequence that turns s on, "" for no style.
func (s style) sgr() string {
	var codes []string
	for _, a := range []struct {
		s    style
		code string
	}{{bold, "1"}, {faint, "2"}, {italic, "3"}, {underline, "4"}, {code, "36"}, {heading, "35"}} {
		if s&a.s != 0 {
			codes = append(codes, a.code)
		}
	}
	if len(codes) == 0 {
		return ""
	}
	return "\x1b[" + strings.Join(codes, ";") + "m"
}

const reset = "\x1b[0m"

// cell is one character of inline text with its style.
type cell struct {
	r rune
	s style
}

// softBreak stands, among cells, for a line break of the source inside a paragraph.
const softBreak = '\n'

// hardBreak stands, among cells, for a hard line break (two spaces or a backslash at a line end).
const hardBreak = '\r'

type renderer struct {
	src []byte
}

// blocks renders the block children of n, separated by blank lines (none in a tight list item).
func (r renderer) blocks(n ast.Node, width int) []string {
	tight := false
	if _, ok := n.(*ast.ListItem); ok {
		if l, ok := n.Parent().(*ast.List); ok {
			tight = l.IsTight
		}
	}
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, r.block(c, width)...)
	}
	return out
}

// block renders one block node as lines at most width columns wide.
func (r renderer) block(n ast.Node, width int) []string {
	width = max(width, minWidth/2) // deep nesting in a narrow terminal
	switch n := n.(type) {
	case *ast.Heading:
		s := bold | heading
		if n.Level == 1 {
			s |= underline
		}
		return styled(wrap(r.inline(n, s), width))
	case *ast.Paragraph, *ast.TextBlock:
		return styled(wrap(r.inline(n, 0), width))
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return r.code(n)
	case *ast.HTMLBlock:
		return r.raw(n.Lines())
	case *ast.ThematicBreak:
		return []string{faint.sgr() + strings.Repeat("─", min(width, 40)) + reset}
	case *ast.Blockquote:
		bar := faint.sgr() + "│" + reset
		lines := r.blocks(n, width-2)
		for i, l := range lines {
			if l == "" {
				lines[i] = bar
			} else {
				lines[i] = bar + " " + l
			}
		}
		return lines
	case *ast.List:
		return r.list(n, width)
	case *east.Table:
		return r.table(n, width)
	}
	return r.blocks(n, width)
}

// list renders a list: each item's first line after its marker, the next ones indented under it.
func (r renderer) list(n *ast.List, width int) []string {
	var out []string
	number := n.Start
	markerWidth := 2
	if n.IsOrdered() {
		markerWidth = len(strconv.Itoa(n.Start+n.ChildCount()-1)) + 2
	}
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		if len(out) > 0 && !n.IsTight {
			out = append(out, "")
		}
		marker := "•"
		if n.IsOrdered() {
			marker = strconv.Itoa(number) + "."
			number++
		}
		marker += strings.Repeat(" ", markerWidth-utf8.RuneCountInString(marker))
		for i, l := range r.blocks(item, width-markerWidth) {
			switch {
			case i == 0:
				out = append(out, marker+l)
			case l == "":
				out = append(out, "")
			default:
				out = append(out, strings.Repeat(" ", markerWidth)+l)
			}
		}
	}
	return out
}

// code renders a code block's lines indented, tabs as four spaces, never wrapped.
func (r renderer) code(n ast.Node) []string {
	var out []string
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		l := strings.TrimRight(string(seg.Value(r.src)), "\r\n")
		l = strings.ReplaceAll(l, "\t", "    ")
		if l == "" {
			out = append(out, "")
			continue
		}
		out = append(out, "  "+code.sgr()+l+reset)
	}
	return out
}

// raw returns the lines of raw HTML as they are.
func (r renderer) raw(lines *text.Segments) []string {
	var out []string
	for i := range lines.Len() {
		seg := lines.At(i)
		out = append(out, strings.TrimRight(string(seg.Value(r.src)), "\r\n"))
	}
	return out
}

// table renders a table with aligned columns when it fits in width, otherwise each row as an
// item that names each cell with its column's header.
func (r renderer) table(n *east.Table, width int) []string {
	var rows [][][]cell
	for row := n.FirstChild(); row != nil; row = row.NextSibling() {
		var cells [][]cell
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			s := style(0)
			if _, ok := row.(*east.TableHeader); ok {
				s = bold
			}
			cells = append(cells, joinBreaks(r.inline(c, s)))
		}
		rows = append(rows, cells)
	}
	if len(rows) == 0 {
		return nil
	}
	cols := len(rows[0])
	widths := make([]int, cols)
	for _, row := range rows {
		for i, c := range row[:min(len(row), cols)] {
			widths[i] = max(widths[i], cellsWidth(c))
		}
	}
	total := 3 * (cols - 1)
	for _, w := range widths {
		total += w
	}
	if total <= width {
		sep := faint.sgr() + " │ " + reset
		var out []string
		for k, row := range rows {
			var b strings.Builder
			for i := range cols {
				var c []cell
				if i < len(row) {
					c = row[i]
				}
				if i > 0 {
					b.WriteString(sep)
				}
				b.WriteString(render(c))
				if i < cols-1 {
					b.WriteString(strings.Repeat(" ", widths[i]-cellsWidth(c)))
				}
			}
			out = append(out, strings.TrimRight(b.String(), " "))
			if k == 0 {
				var rule []string
				for _, w := range widths {
					rule = append(rule, strings.Repeat("─", w))
				}
				out = append(out, faint.sgr()+strings.Join(rule, "─┼─")+reset)
			}
		}
		return out
	}
	var out []string
	header := rows[0]
	for _, row := range rows[1:] {
		if len(out) > 0 {
			out = append(out, "")
		}
		for i, c := range row {
			var line []cell
			if i < len(header) && len(header[i]) > 0 {
				line = append(append(line, header[i]...), cellsOf("：", bold)...)
			}
			line = append(line, c...)
			marker := "  "
			if i == 0 {
				marker = "• "
			}
			for k, l := range styled(wrap(line, width-2)) {
				if k == 0 {
					out = append(out, marker+l)
				} else {
					out = append(out, "  "+l)
				}
			}
		}
	}
	return out
}

// inline returns the text of n's inline children as cells, s added to each one's style.
func (r renderer) inline(n ast.Node, s style) []cell {
	var out []cell
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			out = append(out, cellsOf(string(c.Value(r.src)), s)...)
			switch {
			case c.HardLineBreak():
				out = append(out, cell{hardBreak, s})
			case c.SoftLineBreak():
				out = append(out, cell{softBreak, s})
			}
		case *ast.String:
			out = append(out, cellsOf(string(c.Value), s)...)
		case *ast.CodeSpan:
			out = append(out, joinBreaks(r.inline(c, s|code))...)
		case *ast.Emphasis:
			if c.Level >= 2 {
				out = append(out, r.inline(c, s|bold)...)
			} else {
				out = append(out, r.inline(c, s|italic)...)
			}
		case *ast.Link:
			label := r.inline(c, s|underline)
			out = append(out, label...)
			if dest := string(c.Destination); dest != plain(label) {
				out = append(out, cellsOf(" ("+dest+")", s|faint)...)
			}
		case *ast.AutoLink:
			out = append(out, cellsOf(string(c.Label(r.src)), s|underline)...)
		case *ast.Image:
			out = append(out, r.inline(c, s|italic)...)
		case *ast.RawHTML:
			for i := range c.Segments.Len() {
				seg := c.Segments.At(i)
				out = append(out, cellsOf(string(seg.Value(r.src)), s)...)
			}
		default:
			out = append(out, r.inline(c, s)...)
		}
	}
	return out
}

// cellsOf returns the characters of t with style s.
func cellsOf(t string, s style) []cell {
	out := make([]cell, 0, len(t))
	for _, r := range t {
		out = append(out, cell{r, s})
	}
	return out
}

// joinBreaks replaces the line breaks in cells with spaces, for text that is not wrapped.
func joinBreaks(cells []cell) []cell {
	for i := range cells {
		if cells[i].r == softBreak || cells[i].r == hardBreak {
			cells[i].r = ' '
		}
	}
	return cells
}

// plain returns the characters of cells without their styles.
func plain(cells []cell) string {
	var b strings.Builder
	for _, c := range cells {
		b.WriteRune(c.r)
	}
	return b.String()
}

// wrap breaks cells into lines at most width columns wide. A soft break becomes a space, or
// nothing between two wide characters; a hard break always ends the line.
func wrap(cells []cell, width int) [][]cell {
	var lines [][]cell
	for {
		i := 0
		for i < len(cells) && cells[i].r != hardBreak {
			i++
		}
		lines = append(lines, wrapLine(softBreaks(cells[:i]), width)...)
		if i == len(cells) {
			return lines
		}
		cells = cells[i+1:]
	}
}

// softBreaks replaces each soft break of cells by a space, or drops it where joins says so.
func softBreaks(cells []cell) []cell {
	out := make([]cell, 0, len(cells))
	for i, c := range cells {
		if c.r != softBreak {
			out = append(out, c)
			continue
		}
		if len(out) > 0 && i+1 < len(cells) && joins(out[len(out)-1].r, cells[i+1].r) {
			continue
		}
		out = append(out, cell{' ', c.s})
	}
	return out
}

// joins reports whether a line break of the source between a and b is dropped rather than
// read as a space: between two wide characters, or next to a wide punctuation mark ("、" or "，"
// followed by a Latin word).
func joins(a, b rune) bool {
	return wide(a) && wide(b) || wide(a) && unicode.IsPunct(a) || wide(b) && unicode.IsPunct(b)
}

// wrapLine breaks one line of cells (no breaks in it) into lines at most width columns wide.
func wrapLine(cells []cell, width int) [][]cell {
	var lines [][]cell
	for {
		for len(cells) > 0 && cells[0].r == ' ' {
			cells = cells[1:]
		}
		if len(cells) == 0 {
			return lines
		}
		w, last := 0, -1 // last: the latest index a new line may start at
		i := 0
		for ; i < len(cells); i++ {
			if i > 0 && canBreak(cells[i-1], cells[i]) {
				last = i
			}
			rw := runeWidth(cells[i].r)
			if w+rw > width && i > 0 {
				break
			}
			w += rw
		}
		if i == len(cells) {
			return append(lines, trimSpaces(cells))
		}
		cut := i // no place to break: cut the word
		if last > 0 {
			cut = last
		}
		lines = append(lines, trimSpaces(cells[:cut]))
		cells = cells[cut:]
	}
}

// trimSpaces returns cells without trailing spaces.
func trimSpaces(cells []cell) []cell {
	for len(cells) > 0 && cells[len(cells)-1].r == ' ' {
		cells = cells[:len(cells)-1]
	}
	return cells
}

// Characters a line may not start with, and characters it may not end with.
const (
	noLineStart = "，。、；：！？）」』】》〉”’…—·,.;:!?)]}%"
	noLineEnd   = "（「『【《〈“‘([{"
)

// canBreak reports whether a line may end after a and the next one start with b. Inside inline
// code, only at a space.
func canBreak(ca, cb cell) bool {
	a, b := ca.r, cb.r
	if a == ' ' || b == ' ' {
		return true
	}
	if ca.s&cb.s&code != 0 {
		return false
	}
	if strings.ContainsRune(noLineStart, b) || strings.ContainsRune(noLineEnd, a) {
		return false
	}
	return wide(a) || wide(b)
}

// wide reports whether r takes two columns of a terminal.
func wide(r rune) bool {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return true
	}
	return false
}

// runeWidth is the number of columns r takes.
func runeWidth(r rune) int {
	if wide(r) {
		return 2
	}
	return 1
}

// cellsWidth is the number of columns cells take.
func cellsWidth(cells []cell) int {
	w := 0
	for _, c := range cells {
		w += runeWidth(c.r)
	}
	return w
}

// styled renders each line of cells with its styles.
func styled(lines [][]cell) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = render(l)
	}
	return out
}

// render returns cells as text, each run of one style between its escape sequence and a reset.
func render(cells []cell) string {
	var b strings.Builder
	for i := 0; i < len(cells); {
		j := i
		for j < len(cells) && cells[j].s == cells[i].s {
			j++
		}
		on := cells[i].s.sgr()
		b.WriteString(on)
		for _, c := range cells[i:j] {
			b.WriteRune(c.r)
		}
		if on != "" {
			b.WriteString(reset)
		}
		i = j
	}
	return b.String()
}
