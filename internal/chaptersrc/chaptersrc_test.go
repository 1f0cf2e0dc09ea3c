package chaptersrc_test

import (
	"errors"
	"go/format"
	"reflect"
	"strings"
	"testing"

	"github.com/learn-tinypi/course/internal/chaptersrc"
)

// src joins lines into a file, each line ended.
func src(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

var loop = src(
	"package p",
	"",
	"import (",
	"\t\"fmt\"",
	"\t//chapter:begin 09",
	"\t\"sync\"",
	"\t//chapter:end",
	")",
	"",
	"type queue struct {",
	"\tn int",
	"\t//chapter:begin 09",
	"\tmu sync.Mutex",
	"\t//chapter:end",
	"}",
	"",
	"func run(q *queue, pending []string) {",
	"\t//lab:begin 7.2",
	"\tfor _, m := range pending {",
	"\t\tfmt.Println(m)",
	"\t}",
	"\t//lab:end",
	"\t//chapter:begin 09",
	"\tq.mu.Lock()",
	"\tdefer q.mu.Unlock()",
	"\t//chapter:before",
	"\t// // nothing to lock",
	"\t// _ = q",
	"\t//chapter:end",
	"\t//chapter:begin 10",
	"\t//lab:begin 10.1",
	"\tfmt.Println(q.n)",
	"\t//lab:end",
	"\t//chapter:end",
	"}",
)

func TestDerive(t *testing.T) {
	tests := []struct {
		chapter string
		want    []byte
	}{
		{"07", src(
			"package p",
			"",
			"import (",
			"\t\"fmt\"",
			")",
			"",
			"type queue struct {",
			"\tn int",
			"}",
			"",
			"func run(q *queue, pending []string) {",
			"\t//lab:begin 7.2",
			"\tfor _, m := range pending {",
			"\t\tfmt.Println(m)",
			"\t}",
			"\t//lab:end",
			"\t// nothing to lock",
			"\t_ = q",
			"}",
		)},
		{"09", src(
			"package p",
			"",
			"import (",
			"\t\"fmt\"",
			"\t\"sync\"",
			")",
			"",
			"type queue struct {",
			"\tn  int", // gofmt realigns the fields
			"\tmu sync.Mutex",
			"}",
			"",
			"func run(q *queue, pending []string) {",
			"\t//lab:begin 7.2",
			"\tfor _, m := range pending {",
			"\t\tfmt.Println(m)",
			"\t}",
			"\t//lab:end",
			"\tq.mu.Lock()",
			"\tdefer q.mu.Unlock()",
			"}",
		)},
		{"10", src(
			"package p",
			"",
			"import (",
			"\t\"fmt\"",
			"\t\"sync\"",
			")",
			"",
			"type queue struct {",
			"\tn  int",
			"\tmu sync.Mutex",
			"}",
			"",
			"func run(q *queue, pending []string) {",
			"\t//lab:begin 7.2",
			"\tfor _, m := range pending {",
			"\t\tfmt.Println(m)",
			"\t}",
			"\t//lab:end",
			"\tq.mu.Lock()",
			"\tdefer q.mu.Unlock()",
			"\t//lab:begin 10.1",
			"\tfmt.Println(q.n)",
			"\t//lab:end",
			"}",
		)},
	}
	for _, tt := range tests {
		t.Run(tt.chapter, func(t *testing.T) {
			got, err := chaptersrc.Derive("loop.go", loop, tt.chapter)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(tt.want) {
				t.Errorf("Derive(%s) =\n%s\nwant\n%s", tt.chapter, got, tt.want)
			}
			if again, err := format.Source(got); err != nil || string(again) != string(got) {
				t.Errorf("Derive(%s) is not gofmt-stable (err %v)", tt.chapter, err)
			}
			if n := chaptersrc.MarkerLine(got); n != 0 {
				t.Errorf("Derive(%s) left a chapter marker on line %d", tt.chapter, n)
			}
		})
	}
}

func TestDeriveWithoutRegionsKeepsTheBytes(t *testing.T) {
	// Not gofmt-ed on purpose: a file without regions must come back byte for byte.
	in := []byte("package p\n\nvar x   = 1\n")
	got, err := chaptersrc.Derive("p.go", in, "07")
	if err != nil || string(got) != string(in) {
		t.Errorf("Derive = %q, %v; want the input unchanged", got, err)
	}
}

func TestDeriveRestoresACommentedLabRegion(t *testing.T) {
	in := src(
		"package p",
		"",
		"func f() int {",
		"\t//chapter:begin 09",
		"\t//lab:begin 7.1",
		"\treturn 2",
		"\t//lab:end",
		"\t//chapter:before",
		"\t// //lab:begin 7.1",
		"\t// return 1",
		"\t// //lab:end",
		"\t//chapter:end",
		"}",
	)
	got, err := chaptersrc.Derive("p.go", in, "08")
	if err != nil {
		t.Fatal(err)
	}
	want := src("package p", "", "func f() int {", "\t//lab:begin 7.1", "\treturn 1", "\t//lab:end", "}")
	if string(got) != string(want) {
		t.Errorf("Derive(08) =\n%s\nwant\n%s", got, want)
	}
}

func TestRegions(t *testing.T) {
	got, err := chaptersrc.Regions("loop.go", loop)
	if err != nil {
		t.Fatal(err)
	}
	want := []chaptersrc.Region{
		{Chapter: "09", BeginLine: 5, EndLine: 7},
		{Chapter: "09", BeginLine: 12, EndLine: 14},
		{Chapter: "09", BeginLine: 23, BeforeLine: 26, EndLine: 29},
		{Chapter: "10", BeginLine: 30, EndLine: 34},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Regions = %+v, want %+v", got, want)
	}
}

func TestRegionsMalformed(t *testing.T) {
	tests := []struct {
		name string
		src  []byte
		line int
		msg  string
	}{
		{"nested", src("package p", "//chapter:begin 09", "//chapter:begin 10", "//chapter:end", "//chapter:end"), 3, "do not nest"},
		{"missing end", src("package p", "", "//chapter:begin 09", "var x = 1"), 3, "has no //chapter:end"},
		{"stray end", src("package p", "//chapter:end"), 2, "without //chapter:begin"},
		{"stray before", src("package p", "//chapter:before"), 2, "outside a chapter region"},
		{"two befores", src("package p", "//chapter:begin 09", "//chapter:before", "//chapter:before", "//chapter:end"), 4, "second //chapter:before"},
		{"bad number", src("package p", "//chapter:begin 9", "//chapter:end"), 2, "two-digit chapter number"},
		{"no number", src("package p", "//chapter:begin", "//chapter:end"), 2, "two-digit chapter number"},
		{"unknown marker", src("package p", "//chapter:start 09"), 2, "unknown marker"},
		{"end with argument", src("package p", "//chapter:begin 09", "//chapter:end 09"), 3, "takes nothing"},
		{"before not commented", src("package p", "//chapter:begin 09", "var x = 2", "//chapter:before", "// var x = 1", "var y = 1", "//chapter:end"), 6, "must be commented out"},
		{"marker in before lines", src("package p", "//chapter:begin 09", "//chapter:before", "// //chapter:begin 08", "//chapter:end"), 4, "may not hold a chapter marker"},
		{"marker above a doc comment", src("package p", "", "//chapter:begin 09", "// F is new.", "func F() {}", "", "//chapter:end"), 3, "gofmt changes the file here"},
		{"lab opens outside, ends inside", src("package p", "func f() {", "\t//lab:begin 7.1", "\t//chapter:begin 09", "\t//lab:end", "\t//chapter:end", "}"), 5, "straddle"},
		{"lab opens inside, region ends", src("package p", "func f() {", "\t//chapter:begin 09", "\t//lab:begin 9.1", "\t//chapter:end", "\t//lab:end", "}"), 5, "straddle"},
		{"lab opens in live lines, ends in before lines", src("package p", "func f() {", "\t//chapter:begin 09", "\t//lab:begin 9.1", "\t//chapter:before", "\t// //lab:end", "\t//chapter:end", "}"), 5, "straddle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := chaptersrc.Regions("a/b.go", tt.src)
			var e *chaptersrc.Error
			if !errors.As(err, &e) {
				t.Fatalf("Regions error = %v, want a *chaptersrc.Error", err)
			}
			if e.File != "a/b.go" || e.Line != tt.line || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("Regions error = %v, want a/b.go:%d: …%s…", err, tt.line, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), "a/b.go:") {
				t.Errorf("error %q does not start with file:line", err)
			}
			if _, err := chaptersrc.Derive("a/b.go", tt.src, "09"); err == nil {
				t.Error("Derive accepted the malformed file")
			}
		})
	}
}

func TestRegionsAllowALabRegionAroundAChapterRegion(t *testing.T) {
	in := src(
		"package p",
		"",
		"func f() int {",
		"\t//lab:begin 7.1",
		"\tx := 1",
		"\t//chapter:begin 09",
		"\tx++",
		"\t//chapter:end",
		"\treturn x",
		"\t//lab:end",
		"}",
	)
	if _, err := chaptersrc.Regions("p.go", in); err != nil {
		t.Fatal(err)
	}
	got, err := chaptersrc.Derive("p.go", in, "07")
	if err != nil {
		t.Fatal(err)
	}
	want := src("package p", "", "func f() int {", "\t//lab:begin 7.1", "\tx := 1", "\treturn x", "\t//lab:end", "}")
	if string(got) != string(want) {
		t.Errorf("Derive(07) =\n%s\nwant\n%s", got, want)
	}
}

func TestDeriveUnparsableVersion(t *testing.T) {
	in := src("package p", "", "func f() {", "\t//chapter:begin 09", "\t}", "\t//chapter:end")
	if _, err := chaptersrc.Derive("p.go", in, "07"); err == nil || !strings.Contains(err.Error(), "chapter 07's version") {
		t.Errorf("Derive error = %v, want one naming chapter 07's version", err)
	}
}

func TestMarkerLine(t *testing.T) {
	if n := chaptersrc.MarkerLine(src("package p", "", "  //chapter:end")); n != 3 {
		t.Errorf("MarkerLine = %d, want 3", n)
	}
	if n := chaptersrc.MarkerLine(src("package p", "// chapter:end is prose here")); n != 0 {
		t.Errorf("MarkerLine = %d, want 0", n)
	}
}
