package labsrc_test

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/labsrc"
)

// src joins lines into a file, so that line numbers in the tests are easy to count.
func src(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

func TestRegions(t *testing.T) {
	got, err := labsrc.Regions(src(
		"package p",                // 1
		"func f() int {",           // 2
		"\t//lab:begin 7.1",        // 3
		"\treturn 1",               // 4
		"\t//lab:stub",             // 5
		"\t//\tpanic(LAB_PENDING)", // 6
		"\t//lab:end",              // 7
		"}",                        // 8
		"func g() {",               // 9
		"\t//lab:begin 7.12",       // 10
		"\t//lab:end",              // 11
		"}",                        // 12
	))
	require.NoError(t, err)
	want := []labsrc.Region{{Lab: "7.1", StartLine: 3, EndLine: 7}, {Lab: "7.12", StartLine: 10, EndLine: 11}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Regions (-want +got):\n%s", diff)
	}
}

func TestRegionsErrors(t *testing.T) {
	tests := []struct {
		name string
		src  []byte
		want string
	}{
		{"nested", src("package p", "//lab:begin 1.1", "//lab:begin 1.2", "//lab:end", "//lab:end"),
			"line 3: //lab:begin inside the region of lab 1.1 that starts on line 2"},
		{"unterminated", src("package p", "", "//lab:begin 1.1", "x := 1"),
			"line 3: the region of lab 1.1 has no //lab:end"},
		{"end without begin", src("package p", "//lab:end"), "line 2: //lab:end without //lab:begin"},
		{"stub outside", src("package p", "//lab:stub"), "line 2: //lab:stub outside a lab region"},
		{"duplicate stub", src("package p", "//lab:begin 1.1", "//lab:stub", "//lab:stub", "//lab:end"),
			"line 4: second //lab:stub in the region of lab 1.1 (the first is on line 3)"},
		{"missing id", src("package p", "//lab:begin", "//lab:end"), "line 2: //lab:begin needs a lab id"},
		{"bad id", src("package p", "//lab:begin seven", "//lab:end"), `line 2: //lab:begin needs a lab id like 7.1, got "seven"`},
		{"typo in marker", src("package p", "//lab:begin 1.1", "//lab:ned"), `line 3: unknown marker "//lab:ned"`},
		{"code after stub", src("package p", "//lab:begin 1.1", "//lab:stub", "panic(LAB_PENDING)", "//lab:end"),
			"line 4: lab 1.1: every line between //lab:stub (line 3) and //lab:end must be a comment"},
		{"argument after end", src("package p", "//lab:begin 1.1", "//lab:end 1.1"), "line 3: //lab:end takes nothing after it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := labsrc.Regions(tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Regions error = %v, want one containing %q", err, tt.want)
			}
			_, err = labsrc.Stub("x.go", tt.src, nil)
			if err == nil || !strings.Contains(err.Error(), "x.go: "+tt.want) {
				t.Errorf("Stub error = %v, want one containing %q", err, "x.go: "+tt.want)
			}
		})
	}
}

var reference = src(
	"package p",
	"",
	"import (",
	"\t\"fmt\"",
	"\tstr \"strconv\"",
	"\t\"strings\"",
	")",
	"",
	"// Shout upper-cases s.",
	"func Shout(s string) (string, error) {",
	"\t//lab:begin 1.1",
	"\tif s == \"\" {",
	"\t\treturn \"\", fmt.Errorf(\"empty\")",
	"\t}",
	"\treturn strings.ToUpper(s), nil",
	"\t//lab:stub",
	"\t//\treturn \"\", fmt.Errorf(\"%s\", LAB_PENDING)",
	"\t//lab:end",
	"}",
	"",
	"// Count formats n.",
	"func Count(n int) string {",
	"\t//lab:begin 1.2",
	"\treturn str.Itoa(n)",
	"\t//lab:end",
	"}",
)

func TestStub(t *testing.T) {
	tests := []struct {
		name    string
		stubbed map[string]string
		want    []byte
	}{
		{"target keeps the reference and drops the markers", nil, src(
			"package p",
			"",
			"import (",
			"\t\"fmt\"",
			"\tstr \"strconv\"",
			"\t\"strings\"",
			")",
			"",
			"// Shout upper-cases s.",
			"func Shout(s string) (string, error) {",
			"\tif s == \"\" {",
			"\t\treturn \"\", fmt.Errorf(\"empty\")",
			"\t}",
			"\treturn strings.ToUpper(s), nil",
			"}",
			"",
			"// Count formats n.",
			"func Count(n int) string {",
			"\treturn str.Itoa(n)",
			"}",
		)},
		{"custom stub, strings becomes unused", map[string]string{"1.1": "Lab 1.1 喊 尚未实现"}, src(
			"package p",
			"",
			"import (",
			"\t\"fmt\"",
			"\tstr \"strconv\"",
			")",
			"",
			"// Shout upper-cases s.",
			"func Shout(s string) (string, error) {",
			"\t//lab:begin 1.1",
			"\t// TODO(Lab 1.1): 见 labs/1.1.md (see labs/1.1.en.md)",
			"\treturn \"\", fmt.Errorf(\"%s\", \"Lab 1.1 喊 尚未实现\")",
			"\t//lab:end",
			"}",
			"",
			"// Count formats n.",
			"func Count(n int) string {",
			"\treturn str.Itoa(n)",
			"}",
		)},
		{"default stub, named import becomes unused", map[string]string{"1.2": "Lab 1.2 \"数\" 尚未实现"}, src(
			"package p",
			"",
			"import (",
			"\t\"fmt\"",
			"\t\"strings\"",
			")",
			"",
			"// Shout upper-cases s.",
			"func Shout(s string) (string, error) {",
			"\tif s == \"\" {",
			"\t\treturn \"\", fmt.Errorf(\"empty\")",
			"\t}",
			"\treturn strings.ToUpper(s), nil",
			"}",
			"",
			"// Count formats n.",
			"func Count(n int) string {",
			"\t//lab:begin 1.2",
			"\t// TODO(Lab 1.2): 见 labs/1.2.md (see labs/1.2.en.md)",
			"\tpanic(\"Lab 1.2 \\\"数\\\" 尚未实现\")",
			"\t//lab:end",
			"}",
		)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := labsrc.Stub("p.go", reference, tt.stubbed)
			require.NoError(t, err)
			if diff := cmp.Diff(string(tt.want), string(got)); diff != "" {
				t.Errorf("Stub (-want +got):\n%s", diff)
			}
			typeCheck(t, got)
		})
	}
}

// TestStubAllLabsTypeChecks stubs every lab, so both functions that return values end in a stub,
// and proves the result still type-checks (panic is a terminating statement).
func TestStubAllLabsTypeChecks(t *testing.T) {
	got, err := labsrc.Stub("p.go", reference, map[string]string{"1.1": "a", "1.2": "b"})
	require.NoError(t, err)
	if strings.Contains(string(got), "strings") || strings.Contains(string(got), "strconv") {
		t.Errorf("unused imports kept:\n%s", got)
	}
	typeCheck(t, got)
}

func TestStubKeepsImportsStillUsed(t *testing.T) {
	in := src(
		"package p",
		"",
		"import \"strings\"",
		"",
		"func A() string { return strings.TrimSpace(\" a \") }",
		"",
		"func B() string {",
		"\t//lab:begin 2.1",
		"\treturn strings.ToUpper(\"b\")",
		"\t//lab:end",
		"}",
	)
	got, err := labsrc.Stub("p.go", in, map[string]string{"2.1": "pending"})
	require.NoError(t, err)
	if !strings.Contains(string(got), "import \"strings\"") {
		t.Errorf("the still-used import was removed:\n%s", got)
	}
	typeCheck(t, got)
}

func TestStubWithoutRegionsIsUnchanged(t *testing.T) {
	in := []byte("package p\n\nvar  x = 1\n") // not gofmt-ed on purpose
	got, err := labsrc.Stub("p.go", in, map[string]string{"1.1": "m"})
	require.NoError(t, err)
	if string(got) != string(in) {
		t.Errorf("Stub changed a file without regions:\n%s", got)
	}
}

func TestStubThatDoesNotParse(t *testing.T) {
	in := src("package p", "func f() {", "//lab:begin 1.1", "//lab:stub", "//\tpanic(LAB_PENDING", "//lab:end", "}")
	_, err := labsrc.Stub("bad.go", in, map[string]string{"1.1": "m"})
	if err == nil || !strings.Contains(err.Error(), "bad.go") || !strings.Contains(err.Error(), "does not parse after stubbing") {
		t.Errorf("Stub error = %v, want a parse error naming bad.go", err)
	}
}

func TestApply(t *testing.T) {
	in := []byte("a := 1\nb := 2\nc := 1\n")
	tests := []struct {
		find, replace string
		want, wantErr string
	}{
		{find: "b := 2", replace: "b := 3", want: "a := 1\nb := 3\nc := 1\n"},
		{find: "d := 4", wantErr: "does not occur"},
		{find: ":= 1", wantErr: "occurs 2 times (lines 1, 3)"},
		{find: "", wantErr: "empty"},
	}
	for _, tt := range tests {
		got, err := labsrc.Apply(in, tt.find, tt.replace)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Apply(%q) error = %v, want one containing %q", tt.find, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("Apply(%q) = %q, %v; want %q", tt.find, got, err, tt.want)
		}
	}
}

// typeCheck fails the test when src (a standard-library-only file) does not type-check.
func typeCheck(t *testing.T, src []byte) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	conf := types.Config{Importer: importer.Default()}
	if _, err := conf.Check("p", fset, []*ast.File{f}, nil); err != nil {
		t.Fatalf("type-check: %v\n%s", err, src)
	}
}
