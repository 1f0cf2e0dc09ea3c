package labsrc

import (
	"fmt"
	"strings"
)

// MarkerError reports that a learner's file no longer has a lab's //lab:begin … //lab:end
// markers in a usable shape, so the kit cannot tell which lines are the lab's code.
type MarkerError struct {
	// File is the file's name as the learner knows it ("agentloop.go"). Bodies and ReplaceBodies
	// leave it empty; a caller that knows the name sets it.
	File string
	// Lab is the lab whose markers were looked for.
	Lab string
	// Detail says what is wrong with the markers; empty when none of the lab's markers is left.
	Detail string
}

func (e *MarkerError) Error() string {
	file := e.File
	if file == "" {
		file = "the file"
	}
	if e.Detail == "" {
		return fmt.Sprintf("the markers //lab:begin %s … //lab:end were removed from %s; restore them or use --force", e.Lab, file)
	}
	return fmt.Sprintf("the markers //lab:begin %s … //lab:end in %s are damaged (%s); restore them or use --force", e.Lab, file, e.Detail)
}

// span is one //lab:begin … //lab:end pair of a learner's file: body is src[bodyStart:bodyEnd],
// the bytes between the end of the //lab:begin line and the start of the //lab:end line.
type span struct {
	lab                string
	beginLine          int
	bodyStart, bodyEnd int
}

// spans finds every marker pair of src. Learner files are read leniently: only //lab:begin and
// //lab:end lines count, and they must pair up without nesting. A problem gives a *MarkerError
// for lab.
func spans(src []byte, lab string) ([]span, error) {
	if !labIDRE.MatchString(lab) {
		return nil, fmt.Errorf("lab id %q: want one like 7.1", lab)
	}
	var (
		out  []span
		open *span
	)
	s := string(src)
	for off, n := 0, 1; off < len(s); n++ {
		lineEnd := len(s)
		next := len(s)
		if i := strings.IndexByte(s[off:], '\n'); i >= 0 {
			lineEnd, next = off+i, off+i+1
		}
		keyword, arg, _ := strings.Cut(strings.TrimSpace(s[off:lineEnd]), " ")
		switch keyword {
		case beginMarker:
			if open != nil {
				return nil, &MarkerError{Lab: lab, Detail: fmt.Sprintf("line %d: //lab:begin %s comes before the //lab:end of //lab:begin %s on line %d", n, strings.TrimSpace(arg), open.lab, open.beginLine)}
			}
			open = &span{lab: strings.TrimSpace(arg), beginLine: n, bodyStart: next}
		case endMarker:
			if open == nil {
				return nil, &MarkerError{Lab: lab, Detail: fmt.Sprintf("line %d: //lab:end has no //lab:begin before it", n)}
			}
			open.bodyEnd = off
			out = append(out, *open)
			open = nil
		}
		off = next
	}
	if open != nil {
		return nil, &MarkerError{Lab: lab, Detail: fmt.Sprintf("line %d: //lab:begin %s has no //lab:end after it", open.beginLine, open.lab)}
	}
	var mine []span
	for _, sp := range out {
		if sp.lab == lab {
			mine = append(mine, sp)
		}
	}
	if len(mine) == 0 {
		return nil, &MarkerError{Lab: lab}
	}
	return mine, nil
}

// Bodies returns, in order, the text between each //lab:begin <lab> line of src and its
// //lab:end line: whole lines, each with its line end, exactly as they are in src. Missing or
// unbalanced markers give a *MarkerError.
func Bodies(src []byte, lab string) ([]string, error) {
	sps, err := spans(src, lab)
	if err != nil {
		return nil, err
	}
	bodies := make([]string, len(sps))
	for i, sp := range sps {
		bodies[i] = string(src[sp.bodyStart:sp.bodyEnd])
	}
	return bodies, nil
}

// ReplaceBodies returns src with the text between each //lab:begin <lab> line and its //lab:end
// line replaced by the body of the same index; src must have exactly len(bodies) such regions.
// A non-empty body that does not end in a line end gets one, so //lab:end stays on its own line.
// ReplaceBodies(src, lab, Bodies(src, lab)) is src. Missing or unbalanced markers, or a different
// number of regions, give a *MarkerError.
func ReplaceBodies(src []byte, lab string, bodies []string) ([]byte, error) {
	sps, err := spans(src, lab)
	if err != nil {
		return nil, err
	}
	if len(sps) != len(bodies) {
		return nil, &MarkerError{Lab: lab, Detail: fmt.Sprintf("lab %s has %d region(s) here, want %d", lab, len(sps), len(bodies))}
	}
	var b strings.Builder
	last := 0
	for i, sp := range sps {
		b.Write(src[last:sp.bodyStart])
		body := bodies[i]
		if body != "" && !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		b.WriteString(body)
		last = sp.bodyEnd
	}
	b.Write(src[last:])
	return []byte(b.String()), nil
}

// Dedent removes from every line of body the leading white space that all its non-blank lines
// share, for showing a region's code on its own. Blank lines become empty.
func Dedent(body string) string {
	lines := strings.SplitAfter(body, "\n")
	prefix, first := "", true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = indent, false
			continue
		}
		for !strings.HasPrefix(indent, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			if strings.HasSuffix(l, "\n") {
				b.WriteString("\n")
			}
			continue
		}
		b.WriteString(strings.TrimPrefix(l, prefix))
	}
	return b.String()
}
