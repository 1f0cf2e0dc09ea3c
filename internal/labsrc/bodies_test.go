package labsrc_test

import (
	"errors"
	"go/format"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/labsrc"
)

// TestStubKeepsMarkersOfStubs proves that a starter keeps the markers around each stub, in a form
// gofmt leaves alone and labsrc can read back: the stub is the region's body.
func TestStubKeepsMarkersOfStubs(t *testing.T) {
	got, err := labsrc.Stub("p.go", reference, map[string]string{"1.1": "m1", "1.2": "m2"})
	require.NoError(t, err)
	if formatted, err := format.Source(got); err != nil || string(formatted) != string(got) {
		t.Errorf("the starter is not gofmt-stable (err %v):\n%s", err, got)
	}
	if strings.Contains(string(got), "//lab:stub") || strings.Contains(string(got), "LAB_PENDING") {
		t.Errorf("the starter keeps the //lab:stub part:\n%s", got)
	}
	regions, err := labsrc.Regions(got)
	require.NoError(t, err, "Regions of the starter")
	if diff := cmp.Diff([]labsrc.Region{{Lab: "1.1", StartLine: 9, EndLine: 12}, {Lab: "1.2", StartLine: 17, EndLine: 20}}, regions); diff != "" {
		t.Errorf("regions of the starter (-want +got):\n%s\n%s", diff, got)
	}
	bodies, err := labsrc.Bodies(got, "1.1")
	require.NoError(t, err)
	want := []string{"\t// TODO(Lab 1.1): 见 labs/1.1.md (see labs/1.1.en.md)\n\treturn \"\", fmt.Errorf(\"%s\", \"m1\")\n"}
	if diff := cmp.Diff(want, bodies); diff != "" {
		t.Errorf("Bodies(starter, 1.1) (-want +got):\n%s", diff)
	}
	typeCheck(t, got)
}

func TestStubKeepingMarkers(t *testing.T) {
	got, err := labsrc.StubKeepingMarkers("p.go", reference, map[string]string{"1.2": "m2"}, []string{"1.1", "1.2"})
	require.NoError(t, err)
	bodies, err := labsrc.Bodies(got, "1.1")
	if err != nil {
		t.Fatalf("Bodies: %v\n%s", err, got)
	}
	want := []string{"\tif s == \"\" {\n\t\treturn \"\", fmt.Errorf(\"empty\")\n\t}\n\treturn strings.ToUpper(s), nil\n"}
	if diff := cmp.Diff(want, bodies); diff != "" {
		t.Errorf("reference body of 1.1 (-want +got):\n%s", diff)
	}
	if strings.Contains(string(got), "//lab:stub") {
		t.Errorf("a marked reference region keeps its //lab:stub part:\n%s", got)
	}
	// 1.2 is stubbed: marking it changes nothing.
	if b, _ := labsrc.Bodies(got, "1.2"); len(b) != 1 || !strings.Contains(b[0], `panic("m2")`) {
		t.Errorf("Bodies(1.2) = %q, want the stub", b)
	}
	typeCheck(t, got)
}

// learner is a learner's file with two regions of lab 3.1 and one of 3.2.
var learner = "package p\n\nfunc f() {\n\t//lab:begin 3.1\n\tx := 1\n\t_ = x\n\t//lab:end\n}\n\n" +
	"func g() {\n\t//lab:begin 3.2\n\t//lab:end\n\t//lab:begin 3.1\n\tpanic(\"todo\")\n\t//lab:end\n}\n"

func TestBodies(t *testing.T) {
	tests := []struct {
		name, src, lab string
		want           []string
		wantErr        string // substring; "" for success
	}{
		{name: "two regions in order", src: learner, lab: "3.1",
			want: []string{"\tx := 1\n\t_ = x\n", "\tpanic(\"todo\")\n"}},
		{name: "empty region", src: learner, lab: "3.2", want: []string{""}},
		{name: "windows line ends", src: "//lab:begin 3.1\r\nx\r\n//lab:end\r\n", lab: "3.1", want: []string{"x\r\n"}},
		{name: "no final line end", src: "//lab:begin 3.1\nx\n//lab:end", lab: "3.1", want: []string{"x\n"}},
		{name: "stub marker in a learner file is just a line", src: "//lab:begin 3.1\n//lab:stub\n//lab:end\n", lab: "3.1", want: []string{"//lab:stub\n"}},
		{name: "markers removed", src: "package p\n", lab: "3.1",
			wantErr: "the markers //lab:begin 3.1 … //lab:end were removed from the file; restore them or use --force"},
		{name: "other lab only", src: learner, lab: "3.3", wantErr: "were removed"},
		{name: "similar id is not the lab", src: "//lab:begin 3.11\n//lab:end\n", lab: "3.1", wantErr: "were removed"},
		{name: "end removed", src: "a\n//lab:begin 3.1\nx\n", lab: "3.1",
			wantErr: "are damaged (line 2: //lab:begin 3.1 has no //lab:end after it)"},
		{name: "end of another region removed", src: "//lab:begin 3.2\n//lab:begin 3.1\n//lab:end\n", lab: "3.1",
			wantErr: "line 2: //lab:begin 3.1 comes before the //lab:end of //lab:begin 3.2 on line 1"},
		{name: "begin removed", src: "x\n//lab:end\n", lab: "3.1", wantErr: "line 2: //lab:end has no //lab:begin before it"},
		{name: "bad lab id", src: learner, lab: "seven", wantErr: `lab id "seven"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := labsrc.Bodies([]byte(tt.src), tt.lab)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Bodies error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Bodies (-want +got):\n%s", diff)
			}
			// Putting the bodies back changes nothing.
			same, err := labsrc.ReplaceBodies([]byte(tt.src), tt.lab, got)
			if err != nil || string(same) != tt.src {
				t.Errorf("ReplaceBodies(src, Bodies(src)) = %q, %v; want src unchanged", same, err)
			}
		})
	}
}

func TestMarkerErrorNamesTheFile(t *testing.T) {
	_, err := labsrc.Bodies([]byte("package p\n"), "7.3")
	var me *labsrc.MarkerError
	if !errors.As(err, &me) {
		t.Fatalf("error %v is not a *MarkerError", err)
	}
	me.File = "agentloop.go"
	want := "the markers //lab:begin 7.3 … //lab:end were removed from agentloop.go; restore them or use --force"
	if got := me.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestReplaceBodies(t *testing.T) {
	tests := []struct {
		name, src, lab string
		bodies         []string
		want, wantErr  string
	}{
		{name: "both regions", src: learner, lab: "3.1", bodies: []string{"\ty := 2\n", ""},
			want: "package p\n\nfunc f() {\n\t//lab:begin 3.1\n\ty := 2\n\t//lab:end\n}\n\n" +
				"func g() {\n\t//lab:begin 3.2\n\t//lab:end\n\t//lab:begin 3.1\n\t//lab:end\n}\n"},
		{name: "a missing line end is added", src: "//lab:begin 3.2\n//lab:end\n", lab: "3.2", bodies: []string{"x"},
			want: "//lab:begin 3.2\nx\n//lab:end\n"},
		{name: "too few bodies", src: learner, lab: "3.1", bodies: []string{"x\n"},
			wantErr: "are damaged (lab 3.1 has 2 region(s) here, want 1)"},
		{name: "markers removed", src: "package p\n", lab: "3.1", bodies: []string{"x\n"}, wantErr: "were removed"},
		{name: "unbalanced", src: "//lab:begin 3.1\n", lab: "3.1", bodies: []string{"x\n"}, wantErr: "has no //lab:end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := labsrc.ReplaceBodies([]byte(tt.src), tt.lab, tt.bodies)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ReplaceBodies error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("ReplaceBodies (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDedent(t *testing.T) {
	tests := []struct{ in, want string }{
		{"\tif x {\n\t\treturn\n\t}\n", "if x {\n\treturn\n}\n"},
		{"\t\ta\n\n\t  \n\t\tb\n", "a\n\n\nb\n"},
		{"\t\ta\n\tb\n", "\ta\nb\n"},
		{"  a\n\tb\n", "  a\n\tb\n"},
		{"", ""},
		{"\tx", "x"},
	}
	for _, tt := range tests {
		if got := labsrc.Dedent(tt.in); got != tt.want {
			t.Errorf("Dedent(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
