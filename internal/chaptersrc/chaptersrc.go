// Package chaptersrc finds chapter regions in Go source and derives each chapter's version of a
// reference file from them, as docs/authoring.md ("Later chapters extend earlier files")
// describes. An addition holds lines that chapter NN and every later chapter have:
//
//	//chapter:begin 09
//	... lines of chapter 09 on ...
//	//chapter:end
//
// A replacement also keeps the version of the chapters before NN, commented out, after
// //chapter:before; deriving an earlier chapter's version removes one "//" (and the space after
// it) from each of those lines:
//
//	//chapter:begin 09
//	for _, m := range nextBatch(queue) {
//	//chapter:before
//	// for _, m := range pending {
//	//chapter:end
//
// The markers stand alone on their lines, with any indentation. Regions do not nest; a lab region
// (//lab:begin … //lab:end) may hold a whole chapter region, or sit wholly inside one part (live
// lines or before lines) of one, but may not straddle a chapter marker.
package chaptersrc

import (
	"fmt"
	"go/format"
	"regexp"
	"strings"
	"unicode"
)

// Marker lines exactly as authors write them.
const (
	beginMarker  = "//chapter:begin"
	beforeMarker = "//chapter:before"
	endMarker    = "//chapter:end"
	markerStart  = "//chapter:"

	labBegin = "//lab:begin"
	labEnd   = "//lab:end"
)

// numberRE matches a chapter number as regions name it.
var numberRE = regexp.MustCompile(`^[0-9]{2}$`)

// Region is one chapter region of a file. Lines count from 1.
type Region struct {
	Chapter    string // "09": the first chapter whose version has the live lines
	BeginLine  int    // line of //chapter:begin
	BeforeLine int    // line of //chapter:before, 0 when the region is an addition
	EndLine    int    // line of //chapter:end
}

// Error is a malformed chapter region: the file, the line and what is wrong there.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Regions returns the chapter regions of src in source order. Malformed markers give an *Error
// naming filename and the line: an unknown //chapter: marker, a number that is not two digits,
// nested or unterminated regions, a stray //chapter:before or //chapter:end, two
// //chapter:before in one region, a line after //chapter:before that is not a comment, a lab
// region that straddles a chapter marker.
func Regions(filename string, src []byte) ([]Region, error) {
	var (
		out  []Region
		open *Region
		// lab is the open lab region: its id, the line of its //lab:begin, and where that line
		// is (0 outside chapter regions, else 2*index+1 for live lines, 2*index+2 for before
		// lines of region index).
		labID    string
		labLine  int
		labPlace int
	)
	errAt := func(line int, format string, args ...any) error {
		return &Error{File: filename, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	place := func() int {
		switch {
		case open == nil:
			return 0
		case open.BeforeLine == 0:
			return 2*len(out) + 1
		default:
			return 2*len(out) + 2
		}
	}
	for i, line := range splitLines(src) {
		n := i + 1
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, markerStart) {
			keyword, arg, _ := strings.Cut(trimmed, " ")
			arg = strings.TrimSpace(arg)
			if labID != "" {
				// A chapter marker inside a lab region is fine only when the whole chapter
				// region is: the lab opened outside every chapter region.
				if labPlace != 0 {
					return nil, errAt(n, "%s inside the region of lab %s that starts on line %d within a chapter region (a lab region may not straddle a chapter marker)", keyword, labID, labLine)
				}
			}
			switch keyword {
			case beginMarker:
				if open != nil {
					return nil, errAt(n, "//chapter:begin inside the region of chapter %s that starts on line %d (chapter regions do not nest)", open.Chapter, open.BeginLine)
				}
				if !numberRE.MatchString(arg) {
					return nil, errAt(n, "//chapter:begin needs a two-digit chapter number like 09, got %q", arg)
				}
				open = &Region{Chapter: arg, BeginLine: n}
			case beforeMarker:
				switch {
				case arg != "":
					return nil, errAt(n, "//chapter:before takes nothing after it")
				case open == nil:
					return nil, errAt(n, "//chapter:before outside a chapter region")
				case open.BeforeLine != 0:
					return nil, errAt(n, "second //chapter:before in the region of chapter %s (the first is on line %d)", open.Chapter, open.BeforeLine)
				}
				open.BeforeLine = n
			case endMarker:
				switch {
				case arg != "":
					return nil, errAt(n, "//chapter:end takes nothing after it")
				case open == nil:
					return nil, errAt(n, "//chapter:end without //chapter:begin")
				}
				open.EndLine = n
				out = append(out, *open)
				open = nil
			default:
				return nil, errAt(n, "unknown marker %q (want //chapter:begin NN, //chapter:before or //chapter:end)", keyword)
			}
			continue
		}
		if open != nil && open.BeforeLine != 0 && trimmed != "" {
			if !strings.HasPrefix(trimmed, "//") {
				return nil, errAt(n, "chapter %s: every line between //chapter:before (line %d) and //chapter:end must be commented out with //", open.Chapter, open.BeforeLine)
			}
			trimmed = strings.TrimSpace(uncomment(trimmed))
			if strings.HasPrefix(trimmed, markerStart) {
				return nil, errAt(n, "chapter %s: a before line may not hold a chapter marker once uncommented (chapter regions do not nest)", open.Chapter)
			}
		}
		// Lab markers: as written in live lines and outside regions, uncommented in before lines.
		keyword, arg, _ := strings.Cut(trimmed, " ")
		switch keyword {
		case labBegin:
			if labID == "" {
				labID, labLine, labPlace = strings.TrimSpace(arg), n, place()
			}
		case labEnd:
			if labID != "" && labPlace != place() {
				return nil, errAt(n, "//lab:end of lab %s, whose //lab:begin on line %d is on the other side of a chapter marker (a lab region may not straddle a chapter marker)", labID, labLine)
			}
			labID = ""
		}
	}
	if open != nil {
		return nil, errAt(open.BeginLine, "the region of chapter %s has no //chapter:end", open.Chapter)
	}
	if len(out) > 0 {
		if n := gofmtMoves(src); n != 0 {
			return nil, errAt(n, "gofmt changes the file here: a //chapter: line right above a declaration's doc comment is read as a directive and moved below the comment, out of its place (put a blank line between the marker and the comment); otherwise gofmt the file")
		}
	}
	return out, nil
}

// gofmtMoves returns the line of src from which gofmt changes more than white space, 0 when it
// changes nothing else or src does not parse (the compiler reports that). gofmt moves a
// directive-like line such as //chapter:begin 09 to the end of a doc comment it is part of, which
// would move the code the region covers.
func gofmtMoves(src []byte) int {
	formatted, err := format.Source(src)
	if err != nil {
		return 0
	}
	type line struct {
		n    int
		text string
	}
	content := func(b []byte) []line {
		var out []line
		for i, l := range splitLines(b) {
			if f := strings.Join(strings.Fields(l), " "); f != "" {
				out = append(out, line{i + 1, f})
			}
		}
		return out
	}
	before, after := content(src), content(formatted)
	for i, l := range before {
		if i >= len(after) || after[i].text != l.text {
			return l.n
		}
	}
	if len(after) > len(before) {
		return len(splitLines(src))
	}
	return 0
}

// Derive returns chapter's version of src: for each region of a chapter up to chapter its live
// lines, for each region of a later chapter its before lines uncommented (or nothing), and no
// chapter markers; the result is gofmt-ed. A file without chapter regions comes back as it is.
// filename is used in error messages only.
func Derive(filename string, src []byte, chapter string) ([]byte, error) {
	if !numberRE.MatchString(chapter) {
		return nil, fmt.Errorf("deriving %s: chapter %q is not a two-digit number", filename, chapter)
	}
	regions, err := Regions(filename, src)
	if err != nil {
		return nil, err
	}
	if len(regions) == 0 {
		return src, nil
	}
	lines := splitLines(src)
	var b strings.Builder
	next := 0 // index of the next line of lines to copy
	for _, r := range regions {
		for ; next < r.BeginLine-1; next++ {
			b.WriteString(lines[next] + "\n")
		}
		liveEnd := r.EndLine - 1 // index of the line after the live lines
		if r.BeforeLine != 0 {
			liveEnd = r.BeforeLine - 1
		}
		if chapter >= r.Chapter {
			for i := r.BeginLine; i < liveEnd; i++ {
				b.WriteString(lines[i] + "\n")
			}
		} else if r.BeforeLine != 0 {
			for i := r.BeforeLine; i < r.EndLine-1; i++ {
				b.WriteString(uncomment(lines[i]) + "\n")
			}
		}
		next = r.EndLine
	}
	for ; next < len(lines); next++ {
		b.WriteString(lines[next] + "\n")
	}
	out, err := format.Source([]byte(b.String()))
	if err != nil {
		return nil, fmt.Errorf("%s: chapter %s's version of the file does not parse (check the chapter regions): %w", filename, chapter, err)
	}
	return out, nil
}

// MarkerLine returns the first line (from 1) of src that is a chapter marker, or 0 when there is
// none. A learner's tree must have none.
func MarkerLine(src []byte) int {
	for i, line := range splitLines(src) {
		if strings.HasPrefix(strings.TrimSpace(line), markerStart) {
			return i + 1
		}
	}
	return 0
}

// uncomment removes the first "//" of a line, and one space right after it, keeping the
// indentation before it. A blank line stays blank.
func uncomment(line string) string {
	rest := strings.TrimLeftFunc(line, unicode.IsSpace)
	if rest == "" {
		return ""
	}
	indent := line[:len(line)-len(rest)]
	return indent + strings.TrimPrefix(strings.TrimPrefix(rest, "//"), " ")
}

// splitLines splits src into lines without their line ends; a final line end adds no line.
func splitLines(src []byte) []string {
	s := strings.TrimSuffix(string(src), "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}
