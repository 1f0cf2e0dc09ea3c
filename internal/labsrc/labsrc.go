// Package labsrc finds lab regions in Go source and turns reference code into starter code, as
// docs/authoring.md describes:
//
//	//lab:begin 7.1
//	... reference lines, the code the learner writes ...
//	//lab:stub
//	//	panic(LAB_PENDING)
//	//lab:end
//
// The markers stand alone on their lines. The lines after //lab:stub are comments whose "//" is
// removed to form the starter's replacement; without //lab:stub the replacement is
// panic(LAB_PENDING). LAB_PENDING becomes the Go string literal of the lab's pending message.
//
// In a learner's tree a stubbed region keeps its //lab:begin and //lab:end markers around the
// stub, so the learner sees where to write and the kit can find the region again (Bodies,
// ReplaceBodies); the markers of regions kept as reference code are removed.
package labsrc

import (
	"bytes"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Marker lines and the placeholder, exactly as authors write them.
const (
	beginMarker = "//lab:begin"
	stubMarker  = "//lab:stub"
	endMarker   = "//lab:end"
	markerStart = "//lab:"
	// Pending is the placeholder in stub lines that becomes the pending message literal.
	Pending = "LAB_PENDING"
)

// defaultStub is the replacement of a region without //lab:stub.
const defaultStub = "panic(" + Pending + ")"

// labIDRE matches a lab id; chapter 00 has labs 0.M.
var labIDRE = regexp.MustCompile(`^(0|[1-9][0-9]*)\.[1-9][0-9]*$`)

// Region is one lab region of a file.
type Region struct {
	Lab       string // lab id, "7.1"
	StartLine int    // line of //lab:begin (1-based)
	EndLine   int    // line of //lab:end (1-based)
}

// region is a Region with what Stub needs: where the stub starts and the indentation.
type region struct {
	Region
	stubLine int    // line of //lab:stub, 0 when there is none
	indent   string // leading white space of the //lab:begin line
}

// Regions returns the lab regions of src in source order. Malformed markers (nested or
// unterminated regions, a stray //lab:end or //lab:stub, two //lab:stub in one region, an unknown
// //lab: marker, a stub line that is not a comment) give an error that names the lines.
func Regions(src []byte) ([]Region, error) {
	rs, err := parseRegions(src)
	if err != nil {
		return nil, err
	}
	out := make([]Region, len(rs))
	for i, r := range rs {
		out[i] = r.Region
	}
	return out, nil
}

func parseRegions(src []byte) ([]region, error) {
	var (
		out  []region
		open *region
	)
	for i, line := range splitLines(src) {
		n := i + 1
		trimmed := strings.TrimSpace(line)
		if open != nil && open.stubLine != 0 && !strings.HasPrefix(trimmed, markerStart) &&
			trimmed != "" && !strings.HasPrefix(trimmed, "//") {
			return nil, fmt.Errorf("line %d: lab %s: every line between //lab:stub (line %d) and //lab:end must be a comment", n, open.Lab, open.stubLine)
		}
		if !strings.HasPrefix(trimmed, markerStart) {
			continue
		}
		keyword, arg, _ := strings.Cut(trimmed, " ")
		arg = strings.TrimSpace(arg)
		switch keyword {
		case beginMarker:
			if open != nil {
				return nil, fmt.Errorf("line %d: //lab:begin inside the region of lab %s that starts on line %d (regions do not nest)", n, open.Lab, open.StartLine)
			}
			if !labIDRE.MatchString(arg) {
				return nil, fmt.Errorf("line %d: //lab:begin needs a lab id like 7.1, got %q", n, arg)
			}
			open = &region{Region: Region{Lab: arg, StartLine: n}, indent: line[:len(line)-len(strings.TrimLeftFunc(line, unicode.IsSpace))]}
		case stubMarker:
			switch {
			case arg != "":
				return nil, fmt.Errorf("line %d: //lab:stub takes nothing after it", n)
			case open == nil:
				return nil, fmt.Errorf("line %d: //lab:stub outside a lab region", n)
			case open.stubLine != 0:
				return nil, fmt.Errorf("line %d: second //lab:stub in the region of lab %s (the first is on line %d)", n, open.Lab, open.stubLine)
			}
			open.stubLine = n
		case endMarker:
			switch {
			case arg != "":
				return nil, fmt.Errorf("line %d: //lab:end takes nothing after it", n)
			case open == nil:
				return nil, fmt.Errorf("line %d: //lab:end without //lab:begin", n)
			}
			open.EndLine = n
			out = append(out, *open)
			open = nil
		default:
			return nil, fmt.Errorf("line %d: unknown marker %q (want //lab:begin N.M, //lab:stub or //lab:end)", n, keyword)
		}
	}
	if open != nil {
		return nil, fmt.Errorf("line %d: the region of lab %s has no //lab:end", open.StartLine, open.Lab)
	}
	return out, nil
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

// Stub rewrites a reference file for a learner tree. The regions of the labs in stubbed (lab id
// → pending message) keep their //lab:begin and //lab:end markers, and their reference lines are
// replaced by a TODO line and the stub:
//
//	//lab:begin 7.1
//	// TODO(Lab 7.1): 见 labs/7.1.md (see labs/7.1.en.md)
//	panic("Lab 7.1 收集模型终态 尚未实现")
//	//lab:end
//
// The regions of every other lab keep their reference lines and lose their markers and stub
// comments. Imports that the stubs left unused are removed, and the result is gofmt-ed. A file
// without regions comes back as is. filename is used in error messages only.
func Stub(filename string, src []byte, stubbed map[string]string) ([]byte, error) {
	return StubKeepingMarkers(filename, src, stubbed, nil)
}

// StubKeepingMarkers is Stub, except that the regions of the labs in marked that are kept as
// reference code keep their //lab:begin and //lab:end markers too (their //lab:stub part is still
// dropped), so that Bodies can find their reference lines in the result.
func StubKeepingMarkers(filename string, src []byte, stubbed map[string]string, marked []string) ([]byte, error) {
	regions, err := parseRegions(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filename, err)
	}
	if len(regions) == 0 {
		return src, nil
	}
	lines := splitLines(src)
	var b strings.Builder
	next := 0 // index of the next line of lines to copy
	removedAny := false
	for _, r := range regions {
		for ; next < r.StartLine-1; next++ {
			b.WriteString(lines[next] + "\n")
		}
		referenceEnd := r.EndLine - 1 // index of the line after the reference lines
		if r.stubLine != 0 {
			referenceEnd = r.stubLine - 1
		}
		msg, stub := stubbed[r.Lab]
		keepMarkers := stub || slices.Contains(marked, r.Lab)
		if keepMarkers {
			b.WriteString(lines[r.StartLine-1] + "\n")
		}
		if !stub {
			for i := r.StartLine; i < referenceEnd; i++ {
				b.WriteString(lines[i] + "\n")
			}
		} else {
			removedAny = true
			fmt.Fprintf(&b, "%s// TODO(Lab %s): 见 labs/%s.md (see labs/%s.en.md)\n", r.indent, r.Lab, r.Lab, r.Lab)
			var stubLines []string
			if r.stubLine == 0 {
				stubLines = []string{r.indent + defaultStub}
			} else {
				for i := r.stubLine; i < r.EndLine-1; i++ {
					stubLines = append(stubLines, uncomment(lines[i]))
				}
			}
			literal := strconv.Quote(msg)
			for _, l := range stubLines {
				b.WriteString(strings.ReplaceAll(l, Pending, literal) + "\n")
			}
		}
		if keepMarkers {
			b.WriteString(lines[r.EndLine-1] + "\n")
		}
		next = r.EndLine
	}
	for ; next < len(lines); next++ {
		b.WriteString(lines[next] + "\n")
	}

	out := []byte(b.String())
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, filename, out, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("%s: the file does not parse after stubbing (check the //lab:stub lines): %w", filename, err)
	}
	if removedAny {
		if err := deleteUnusedImports(fset, filename, src, file); err != nil {
			return nil, err
		}
	}
	var formatted bytes.Buffer
	if err := format.Node(&formatted, fset, file); err != nil {
		return nil, fmt.Errorf("%s: formatting the stubbed file: %w", filename, err)
	}
	return formatted.Bytes(), nil
}

// uncomment removes the first "//" of a stub line, keeping what is before and after it.
func uncomment(line string) string {
	before, after, found := strings.Cut(line, "//")
	if !found {
		return line // a blank line
	}
	return before + after
}

// Apply replaces the single occurrence of find in src by replace, which is how a mutant is made.
// find must occur exactly once: no occurrence or several give an error (with the lines).
func Apply(src []byte, find, replace string) ([]byte, error) {
	if find == "" {
		return nil, fmt.Errorf("the text to find is empty")
	}
	s := string(src)
	var lines []string
	for off := 0; ; {
		i := strings.Index(s[off:], find)
		if i < 0 {
			break
		}
		lines = append(lines, strconv.Itoa(1+strings.Count(s[:off+i], "\n")))
		off += i + len(find)
	}
	switch len(lines) {
	case 0:
		return nil, fmt.Errorf("the text to find does not occur: %q", find)
	case 1:
		return []byte(strings.Replace(s, find, replace, 1)), nil
	default:
		return nil, fmt.Errorf("the text to find occurs %d times (lines %s), want exactly once: %q", len(lines), strings.Join(lines, ", "), find)
	}
}
