// Package textpair holds a chapter text and its translation in step. The two texts of a chapter
// (docs/NN-slug.md in Chinese, docs/NN-slug.en.md in English) are written separately, in the
// voice of each language, but must teach the same things in the same places: the same headings
// level by level, the same code blocks byte for byte, the same labs named in the same sections,
// the same links. Compare lists every way two texts differ in that structure, naming the section,
// so that a change made to one text and not the other is caught where it was made.
package textpair

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Outline is the structure of a text that its translation must share.
type Outline struct {
	// Sections are the text's sections in order: each starts at a heading and runs to the next
	// one. Text before the first heading is a section of level 0 with an empty title.
	Sections []Section
}

// Section is one heading and what follows it up to the next heading.
type Section struct {
	Level int    // 1 for #, 2 for ##, ...; 0 for the text before the first heading
	Title string // the heading's text
	Line  int    // the heading's line, 1-based
	// Code holds the section's code blocks (fenced and indented), each as its info string, a
	// line end, and its content.
	Code []string
	// Labs are the lab ids the section names ("Lab 7.1", "lab 7.1"), sorted, each once.
	Labs []string
	// Links are the destinations of the section's links and images, in order.
	Links []string
}

// labID finds a lab named in prose: "Lab 7.1", "lab 10.2", "Labs 7.1", and in Chinese texts
// "实践 1.1" (a lab box's title) too.
var labID = regexp.MustCompile(`(?i)(?:\blabs?|实践)\s*(\d{1,2}\.\d{1,2})\b`)

// Parse returns the outline of a Markdown text.
func Parse(src []byte) Outline {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	doc := md.Parser().Parse(text.NewReader(src))
	var out Outline
	cur := &Section{Line: 1} // the text before the first heading
	start := 0               // offset of the current section in src
	closeSection := func(end int) {
		labs := map[string]bool{}
		for _, m := range labID.FindAllSubmatch(src[start:end], -1) {
			labs[string(m[1])] = true
		}
		for id := range labs {
			cur.Labs = append(cur.Labs, id)
		}
		slices.Sort(cur.Labs)
		out.Sections = append(out.Sections, *cur)
	}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			offset := lineStart(src, n)
			closeSection(offset)
			start = offset
			cur = &Section{Level: n.Level, Title: plainText(n, src), Line: 1 + bytes.Count(src[:offset], []byte("\n"))}
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock:
			info := ""
			if n.Info != nil {
				info = string(n.Info.Segment.Value(src))
			}
			cur.Code = append(cur.Code, info+"\n"+lines(n, src))
			return ast.WalkSkipChildren, nil
		case *ast.CodeBlock:
			cur.Code = append(cur.Code, "\n"+lines(n, src))
			return ast.WalkSkipChildren, nil
		case *ast.Link:
			cur.Links = append(cur.Links, string(n.Destination))
		case *ast.Image:
			cur.Links = append(cur.Links, string(n.Destination))
		case *ast.AutoLink:
			cur.Links = append(cur.Links, string(n.URL(src)))
		}
		return ast.WalkContinue, nil
	})
	closeSection(len(src))
	if len(out.Sections) > 1 {
		first := lineOffset(src, out.Sections[1].Line)
		if len(bytes.TrimSpace(src[:first])) == 0 {
			out.Sections = out.Sections[1:] // nothing before the first heading
		}
	}
	return out
}

// lineOffset returns the offset of 1-based line in src.
func lineOffset(src []byte, line int) int {
	off := 0
	for i := 1; i < line; i++ {
		j := bytes.IndexByte(src[off:], '\n')
		if j < 0 {
			return len(src)
		}
		off += j + 1
	}
	return off
}

// lineStart returns the offset of the start of the line on which block n begins.
func lineStart(src []byte, n ast.Node) int {
	segs := n.Lines()
	if segs.Len() == 0 {
		return 0
	}
	off := segs.At(0).Start
	return bytes.LastIndexByte(src[:off], '\n') + 1
}

// lines returns the text of a block's lines.
func lines(n ast.Node, src []byte) string {
	var b strings.Builder
	segs := n.Lines()
	for i := range segs.Len() {
		seg := segs.At(i)
		b.Write(seg.Value(src))
	}
	return b.String()
}

// plainText returns the text of an inline container (a heading), markup removed.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			if t, ok := c.(*ast.Text); ok {
				b.Write(t.Segment.Value(src))
				if t.SoftLineBreak() {
					b.WriteByte(' ')
				}
			}
			if s, ok := c.(*ast.String); ok {
				b.Write(s.Value)
			}
		}
		return ast.WalkContinue, nil
	})
	return strings.TrimSpace(b.String())
}

// Compare lists how the translation (en, at enName) departs from the text (zh, at zhName) in
// structure: a missing or extra section, a heading of another level, a code block that is not
// byte for byte the same, labs named in other sections, other link destinations. A link to a
// chapter text may point to its translation instead (x.md and x.en.md are one destination).
// resolves, when not nil, is asked about every relative link of both texts and a link it
// refuses is listed too. None means the two agree.
func Compare(zhName string, zh []byte, enName string, en []byte, resolves func(name, dest string) bool) []string {
	a, b := Parse(zh), Parse(en)
	var problems []string
	n := min(len(a.Sections), len(b.Sections))
	for i := range n {
		sa, sb := a.Sections[i], b.Sections[i]
		where := fmt.Sprintf("section %d (%s line %d %q, %s line %d %q)", i+1, zhName, sa.Line, sa.Title, enName, sb.Line, sb.Title)
		if sa.Level != sb.Level {
			problems = append(problems, fmt.Sprintf("%s: heading level %d in %s, %d in %s", where, sa.Level, zhName, sb.Level, enName))
		}
		if len(sa.Code) != len(sb.Code) {
			problems = append(problems, fmt.Sprintf("%s: %d code block(s) in %s, %d in %s", where, len(sa.Code), zhName, len(sb.Code), enName))
		}
		for j := range min(len(sa.Code), len(sb.Code)) {
			if sa.Code[j] != sb.Code[j] {
				problems = append(problems, fmt.Sprintf("%s: code block %d differs: %s", where, j+1, firstDifference(sa.Code[j], sb.Code[j])))
			}
		}
		if !slices.Equal(sa.Labs, sb.Labs) {
			problems = append(problems, fmt.Sprintf("%s: labs named %v in %s, %v in %s", where, sa.Labs, zhName, sb.Labs, enName))
		}
		if la, lb := normalLinks(sa.Links), normalLinks(sb.Links); !slices.Equal(la, lb) {
			problems = append(problems, fmt.Sprintf("%s: links %v in %s, %v in %s", where, sa.Links, zhName, sb.Links, enName))
		}
	}
	for i, s := range a.Sections[n:] {
		problems = append(problems, fmt.Sprintf("section %d (%s line %d %q) has no counterpart in %s", n+i+1, zhName, s.Line, s.Title, enName))
	}
	for i, s := range b.Sections[n:] {
		problems = append(problems, fmt.Sprintf("section %d (%s line %d %q) has no counterpart in %s", n+i+1, enName, s.Line, s.Title, zhName))
	}
	if resolves != nil {
		for _, t := range []struct {
			name    string
			outline Outline
		}{{zhName, a}, {enName, b}} {
			for _, s := range t.outline.Sections {
				for _, dest := range s.Links {
					if relative(dest) && !resolves(t.name, dest) {
						problems = append(problems, fmt.Sprintf("%s line %d: the link %q does not resolve", t.name, s.Line, dest))
					}
				}
			}
		}
	}
	return problems
}

// normalLinks returns links with a translation's x.en.md written x.md and #anchors removed
// (a heading's anchor is in its own language).
func normalLinks(links []string) []string {
	out := make([]string, len(links))
	for i, l := range links {
		l, _, _ = strings.Cut(l, "#")
		out[i] = strings.Replace(l, ".en.md", ".md", 1)
	}
	return out
}

// relative reports whether dest is a link inside the content: not a URL, not only an anchor.
func relative(dest string) bool {
	return dest != "" && !strings.HasPrefix(dest, "#") && !strings.Contains(dest, "://") && !strings.HasPrefix(dest, "mailto:")
}

// firstDifference says where two code blocks first differ, as line N and both versions of it.
func firstDifference(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			if i == 0 {
				return fmt.Sprintf("info string %q, %q", x, y)
			}
			return fmt.Sprintf("line %d: %q, %q", i, x, y)
		}
	}
	return "they differ"
}
