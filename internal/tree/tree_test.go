package tree_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/hang"
	"github.com/learn-tinypi/course/internal/labsrc"
	"github.com/learn-tinypi/course/internal/tree"
)

const kitImport = "github.com/learn-tinypi/course/solutions/tinypi"

// testFS is a small course next to the kit's real go.mod and go.sum: two rebuild chapters and
// an observe chapter 00 that observes the second one (its file calls chapter 02's code).
func testFS(t *testing.T) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{
		"checkpoints/course.yaml": {Data: []byte(`module: tinypi
go: "1.26"
kit_import: ` + kitImport + `
requires:
  - github.com/santhosh-tekuri/jsonschema/v6
  - golang.org/x/text
  - github.com/google/go-cmp
`)},
		"checkpoints/00-tour.yaml": {Data: []byte(`number: "00"
slug: tour
title: 导览
title_en: Tour
mode: observe
observes: "02"
files: [tour.go]
test_file: ch00_tour_test.go
doc: docs/00-tour.md
labs:
  - {id: "0.1", title: 读, title_en: Read, keyword: 读, pattern: ^TestLab0_1_, tests: 1}
`)},
		"checkpoints/01-base.yaml": {Data: []byte(`number: "01"
slug: base
title: 基础
title_en: Base
mode: rebuild
files: [doc.go, base.go, wire]
test_file: ch01_base_test.go
doc: docs/01-base.md
labs:
  - {id: "1.1", title: 问候, title_en: Greet, keyword: 问候, pattern: ^TestLab1_1_, tests: 1}
`)},
		"checkpoints/02-tools.yaml": {Data: []byte(`number: "02"
slug: tools
title: 工具
title_en: Tools
mode: rebuild
files: [tool.go]
test_file: ch02_tools_test.go
doc: docs/02-tools.md
labs:
  - {id: "2.1", title: 编译, title_en: Compile, keyword: 编译, pattern: ^TestLab2_1_, tests: 1}
  - {id: "2.2", title: 长度, title_en: Length, keyword: 长度, pattern: ^TestLab2_2_, tests: 1}
mutants:
  - {name: off-by-one, lab: "2.2", file: tool.go, find: "len(s)", replace: "len(s) + 1", explain: 多一, explain_en: One too many}
`)},
		"solutions/tinypi/doc.go":            {Data: []byte("// Package tinypi is a test.\npackage tinypi\n")},
		"solutions/tinypi/base.go":           {Data: []byte("package tinypi\n\n// Greet greets.\nfunc Greet() string {\n\t//lab:begin 1.1\n\treturn \"hi\"\n\t//lab:end\n}\n")},
		"solutions/tinypi/ch01_base_test.go": {Data: []byte("package tinypi\n\nimport \"testing\"\n\nfunc TestLab1_1_Greet(t *testing.T) {\n\tif Greet() != \"hi\" {\n\t\tt.Error(\"no greeting\")\n\t}\n}\n")},
		"solutions/tinypi/tour.go":           {Data: []byte("package tinypi\n\n// Tour measures the tour.\nfunc Tour() string { return Length(\"tour\") }\n")},
		"solutions/tinypi/ch00_tour_test.go": {Data: []byte("package tinypi\n\nimport \"testing\"\n\nfunc TestLab0_1_Tour(t *testing.T) {\n\tif Tour() != \"4\" {\n\t\tt.Error(Tour())\n\t}\n}\n")},
		"solutions/tinypi/wire/wire.go":      {Data: []byte("// Package wire is a test.\npackage wire\n\n// Name is a name.\nconst Name = \"wire\"\n")},
		"solutions/tinypi/wire/data.txt":     {Data: []byte("data\n")},
		"solutions/tinypi/unowned.go":        {Data: []byte("package tinypi\n")},
		"solutions/tinypi/tool.go": {Data: []byte(`package tinypi

import (
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"` + kitImport + `/wire"
)

// Compile compiles a schema.
func Compile(s string) (*jsonschema.Schema, error) {
	//lab:begin 2.1
	c := jsonschema.NewCompiler()
	return c.Compile(s + wire.Name)
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// Length measures s.
func Length(s string) string {
	//lab:begin 2.2
	return fmt.Sprint(len(s))
	//lab:end
}
`)},
		"solutions/tinypi/ch02_tools_test.go": {Data: []byte(`package tinypi_test

import (
	"testing"

	"` + kitImport + `"
)

func TestLab2_2_Length(t *testing.T) {
	if got := tinypi.Length("ab"); got != "2" {
		t.Errorf("Length = %q", got)
	}
}
`)},
	}
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := fs.ReadFile(course.Content(), name)
		require.NoError(t, err)
		fsys[name] = &fstest.MapFile{Data: data}
	}
	return fsys
}

func newBuilder(t *testing.T, fsys fs.FS) *tree.Builder {
	t.Helper()
	b, err := tree.NewBuilder(fsys)
	require.NoError(t, err)
	return b
}

func TestTrees(t *testing.T) {
	b := newBuilder(t, testFS(t))
	ch1, ch2 := b.Course().Chapters[1], b.Course().Chapters[2]

	parent1, err := b.Parent(ch1)
	require.NoError(t, err)
	if diff := cmp.Diff([]string{"go.mod", "go.sum"}, parent1.Paths()); diff != "" {
		t.Errorf("Parent(01) paths (-want +got):\n%s", diff)
	}
	target1, err := b.Target(ch1)
	require.NoError(t, err)
	// Chapter 00's file needs chapter 02: it is not in chapter 01's trees.
	want1 := []string{"base.go", "ch01_base_test.go", "doc.go", "go.mod", "go.sum", "wire/data.txt", "wire/wire.go"}
	if diff := cmp.Diff(want1, target1.Paths()); diff != "" {
		t.Errorf("Target(01) paths (-want +got):\n%s", diff)
	}
	parent2, err := b.Parent(ch2)
	require.NoError(t, err)
	if !target1.Equal(parent2) {
		t.Errorf("Parent(02) differs from Target(01)")
	}
	target2, err := b.Target(ch2)
	require.NoError(t, err)
	want := []string{"base.go", "ch00_tour_test.go", "ch01_base_test.go", "ch02_tools_test.go", "doc.go", "go.mod", "go.sum",
		"tool.go", "tour.go", "wire/data.txt", "wire/wire.go"}
	if diff := cmp.Diff(want, target2.Paths()); diff != "" {
		t.Errorf("Target(02) paths (-want +got):\n%s", diff)
	}

	// Chapter 01's focused tests are behind the build tag in chapter 02's trees, with a line that
	// says why; chapter 02's own tests and those of chapter 00, which observes 02, are not.
	wantHead := "//go:build allchapters\n\n// Chapter 01's focused tests. In a later chapter's directory a plain `go test` leaves them\n"
	if got := string(target2["ch01_base_test.go"]); !strings.HasPrefix(got, wantHead) || !strings.HasSuffix(got, string(target1["ch01_base_test.go"])) {
		t.Errorf("Target(02) ch01_base_test.go: want chapter 01's tests behind %q:\n%s", wantHead, got)
	}
	for name, tr := range map[string]tree.Tree{"Target(01)": target1, "Target(02)": target2} {
		for _, f := range []string{"ch00_tour_test.go", "ch01_base_test.go", "ch02_tools_test.go"} {
			if src, ok := tr[f]; ok && strings.Contains(string(src), "//go:build") && !(name == "Target(02)" && f == "ch01_base_test.go") {
				t.Errorf("%s %s has a build constraint, want none (it is the chapter's own):\n%s", name, f, src)
			}
		}
	}

	tool := string(target2["tool.go"])
	for _, s := range []string{"//lab:", `"tinypi/wire"`, "return c.Compile(s + wire.Name)"} {
		if s == "//lab:" == strings.Contains(tool, s) {
			t.Errorf("Target tool.go: contains %q = %v, want %v:\n%s", s, !(s == "//lab:"), s != "//lab:", tool)
		}
	}
	if strings.Contains(tool, kitImport) || !strings.Contains(string(target2["ch02_tools_test.go"]), "\t\"tinypi\"\n") {
		t.Errorf("kit import not rewritten:\n%s\n%s", tool, target2["ch02_tools_test.go"])
	}

	wantMod := `module tinypi

go 1.26.0

require github.com/santhosh-tekuri/jsonschema/v6 v6.0.3

require (
	github.com/google/go-cmp v0.7.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
`
	if diff := cmp.Diff(wantMod, string(target2["go.mod"])); diff != "" {
		t.Errorf("go.mod (-want +got):\n%s", diff)
	}

	starter, err := b.Starter(ch2)
	require.NoError(t, err)
	st := string(starter["tool.go"])
	for _, s := range []string{`panic("Lab 2.1 编译 尚未实现")`, `panic("Lab 2.2 长度 尚未实现")`, "// TODO(Lab 2.1)", "// TODO(Lab 2.2)"} {
		if !strings.Contains(st, s) {
			t.Errorf("Starter tool.go lacks %q:\n%s", s, st)
		}
	}
	// The markers of a stub stay around it; the //lab:stub part does not.
	wantStub := "\t//lab:begin 2.1\n\t// TODO(Lab 2.1): 见 labs/2.1.md (see labs/2.1.en.md)\n\tpanic(\"Lab 2.1 编译 尚未实现\")\n\t//lab:end\n"
	if !strings.Contains(st, wantStub) || strings.Contains(st, "//lab:stub") {
		t.Errorf("Starter tool.go lacks the marked stub %q (or keeps //lab:stub):\n%s", wantStub, st)
	}
	if strings.Contains(st, `"fmt"`) || strings.Contains(st, "tinypi/wire") {
		t.Errorf("Starter tool.go keeps imports its stubs made unused:\n%s", st)
	}
	if string(starter["ch02_tools_test.go"]) != string(target2["ch02_tools_test.go"]) {
		t.Errorf("Starter test file differs from the target's")
	}

	stage1, err := b.Progressive(ch2, 1)
	require.NoError(t, err)
	s1 := string(stage1["tool.go"])
	if !strings.Contains(s1, "\treturn c.Compile(s + wire.Name)\n}") || !strings.Contains(s1, `panic("Lab 2.2 长度 尚未实现")`) {
		t.Errorf("Progressive(02, 1) tool.go should have lab 2.1 from the reference and 2.2 stubbed:\n%s", s1)
	}
	if s0, _ := b.Progressive(ch2, 0); !s0.Equal(starter) {
		t.Errorf("Progressive(02, 0) differs from the starter")
	}
	if s2, _ := b.Progressive(ch2, 2); !s2.Equal(target2) {
		t.Errorf("Progressive(02, 2) differs from the target")
	}
	if _, err := b.Progressive(ch2, 3); err == nil {
		t.Errorf("Progressive(02, 3) succeeded, want an out-of-range error")
	}

	mutant, err := b.Mutant(ch2, ch2.Mutants[0])
	require.NoError(t, err)
	if !strings.Contains(string(mutant["tool.go"]), "fmt.Sprint(len(s) + 1)") {
		t.Errorf("mutant not applied:\n%s", mutant["tool.go"])
	}

	unowned, err := b.UnownedFiles()
	require.NoError(t, err)
	if diff := cmp.Diff([]string{"unowned.go"}, unowned); diff != "" {
		t.Errorf("UnownedFiles (-want +got):\n%s", diff)
	}

	// The trees are real modules: target, starter and mutant build offline, tests included.
	for name, tr := range map[string]tree.Tree{"target": target2, "starter": starter, "mutant": mutant, "parent": parent2, "stage1": stage1} {
		goBuild(t, name, tr)
	}
}

func TestBuilderErrors(t *testing.T) {
	tests := []struct {
		name, file, old, new, want string
	}{
		{"missing file", "checkpoints/02-tools.yaml", "files: [tool.go]", "files: [tool.go, gone.go]",
			`chapter 02 lists "gone.go", but solutions/tinypi/gone.go cannot be read`},
		{"lab without region", "solutions/tinypi/tool.go", "//lab:begin 2.2", "//lab:begin 2.1",
			"chapter 02: lab 2.2 has no //lab:begin 2.2 region"},
		{"region of a foreign lab", "solutions/tinypi/tool.go", "//lab:begin 2.2", "//lab:begin 3.1",
			"solutions/tinypi/tool.go:23: lab 3.1 is not a lab of chapter 02"},
		{"malformed region", "solutions/tinypi/tool.go", "len(s))\n\t//lab:end", "len(s))",
			"solutions/tinypi/tool.go: line 23: the region of lab 2.2 has no //lab:end"},
		{"mutant not found", "checkpoints/02-tools.yaml", `find: "len(s)"`, `find: "cap(s)"`,
			"mutant off-by-one in tool.go: the text to find does not occur"},
		{"region in an observe chapter's file", "solutions/tinypi/tour.go", "{ return Length(\"tour\") }",
			"{\n\t//lab:begin 0.1\n\treturn Length(\"tour\")\n\t//lab:end\n}",
			"solutions/tinypi/tour.go:5: chapter 00 is an observe chapter, whose files have no lab regions (found //lab:begin 0.1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := testFS(t)
			data := string(fsys[tt.file].Data)
			if !strings.Contains(data, tt.old) {
				t.Fatalf("test setup: %q not in %s", tt.old, tt.file)
			}
			fsys[tt.file] = &fstest.MapFile{Data: []byte(strings.Replace(data, tt.old, tt.new, 1))}
			b := newBuilder(t, fsys)
			ch := b.Course().Chapters[2]
			_, err := b.Target(ch)
			if tt.name == "mutant not found" {
				_, err = b.Mutant(ch, ch.Mutants[0])
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestNewBuilderRequireWithoutVersion(t *testing.T) {
	fsys := testFS(t)
	fsys["checkpoints/course.yaml"].Data = append(fsys["checkpoints/course.yaml"].Data, "  - example.com/unknown\n"...)
	_, err := tree.NewBuilder(fsys)
	if err == nil || !strings.Contains(err.Error(), "requires example.com/unknown, but the kit's go.mod does not require it") {
		t.Errorf("NewBuilder error = %v", err)
	}
}

func TestWrite(t *testing.T) {
	tr := tree.Tree{"go.mod": []byte("module m\n"), "a/b/c.txt": []byte("c")}

	t.Run("new directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "x", "out")
		require.NoError(t, tr.Write(dir))
		assertDir(t, dir, tr)
		assertNoTemp(t, filepath.Dir(dir))
	})
	t.Run("empty directory", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, tr.Write(dir))
		assertDir(t, dir, tr)
	})
	t.Run("non-empty directory is refused and kept", func(t *testing.T) {
		dir := t.TempDir()
		keep := filepath.Join(dir, "mine.txt")
		require.NoError(t, os.WriteFile(keep, []byte("mine"), 0o644))
		err := tr.Write(dir)
		if err == nil || !strings.Contains(err.Error(), "is not empty") {
			t.Fatalf("Write error = %v, want a not-empty error", err)
		}
		assertDir(t, dir, tree.Tree{"mine.txt": []byte("mine")})
		assertNoTemp(t, filepath.Dir(dir))
	})
	t.Run("a file is refused", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "f")
		require.NoError(t, os.WriteFile(file, nil, 0o644))
		if err := tr.Write(file); err == nil {
			t.Fatal("Write onto a file succeeded")
		}
	})
	t.Run("bad path leaves nothing", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		err := tree.Tree{"ok.txt": nil, "../evil": nil}.Write(dir)
		if err == nil {
			t.Fatal("Write with ../evil succeeded")
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 0 {
			t.Errorf("Write left %v behind", entries)
		}
	})
	t.Run("error while writing leaves nothing", func(t *testing.T) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		// "a" is both a file and a directory: the second write fails after the first succeeded.
		err := tree.Tree{"a": []byte("file"), "a/b": []byte("x")}.Write(dir)
		if err == nil {
			t.Fatal("Write of a conflicting tree succeeded")
		}
		if entries, _ := os.ReadDir(parent); len(entries) != 0 {
			t.Errorf("Write left %v behind", entries)
		}
	})
}

func assertDir(t *testing.T, dir string, want tree.Tree) {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = string(data)
		return err
	})
	require.NoError(t, err)
	wantS := map[string]string{}
	for p, d := range want {
		wantS[p] = string(d)
	}
	if diff := cmp.Diff(wantS, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", dir, diff)
	}
}

func assertNoTemp(t *testing.T, parent string) {
	t.Helper()
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary directory %s left behind", e.Name())
		}
	}
}

// goBuild writes tr into a temporary directory and compiles it, tests included, offline: the
// module cache the kit filled must be enough.
func goBuild(t *testing.T, name string, tr tree.Tree) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, tr.Write(dir))
	ctx, cancel := context.WithTimeout(context.Background(), hang.Bound(3*time.Minute))
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "vet", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gotest.OfflineEnv()...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: go vet ./... failed: %v\n%s", name, err, out)
	}
}

// TestObserveTrees checks the trees of an observe chapter: 00 observes 02, so its target, parent,
// starter and every progressive stage are chapter 02's target, which holds 00's files.
func TestObserveTrees(t *testing.T) {
	b := newBuilder(t, testFS(t))
	ch0, ch2 := b.Course().Chapters[0], b.Course().Chapters[2]
	target2, err := b.Target(ch2)
	require.NoError(t, err)
	if _, ok := target2["tour.go"]; !ok {
		t.Fatalf("Target(02) lacks chapter 00's tour.go: %v", target2.Paths())
	}
	trees := map[string]func() (tree.Tree, error){
		"Target":         func() (tree.Tree, error) { return b.Target(ch0) },
		"Parent":         func() (tree.Tree, error) { return b.Parent(ch0) },
		"Starter":        func() (tree.Tree, error) { return b.Starter(ch0) },
		"Progressive(1)": func() (tree.Tree, error) { return b.Progressive(ch0, 1) },
	}
	for name, build := range trees {
		got, err := build()
		require.NoErrorf(t, err, "%s(00)", name)
		if !got.Equal(target2) {
			t.Errorf("%s(00) differs from Target(02); paths %v", name, got.Paths())
		}
	}
	if _, err := b.Progressive(ch0, 2); err == nil {
		t.Errorf("Progressive(00, 2) succeeded, want an out-of-range error (chapter 00 has one lab)")
	}
	// The first rebuild chapter's parent is the empty module, whatever comes before it.
	parent1, err := b.Parent(b.Course().Chapters[1])
	require.NoError(t, err)
	if diff := cmp.Diff([]string{"go.mod", "go.sum"}, parent1.Paths()); diff != "" {
		t.Errorf("Parent(01) paths (-want +got):\n%s", diff)
	}
}

func TestLabBodies(t *testing.T) {
	b := newBuilder(t, testFS(t))
	c := b.Course()
	ch0, ch1, ch2 := c.Chapters[0], c.Chapters[1], c.Chapters[2]
	lab21, lab22 := ch2.Labs[0], ch2.Labs[1]

	files, err := b.LabFiles(ch1, ch1.Labs[0])
	if err != nil || !cmp.Equal([]string{"base.go"}, files) {
		t.Errorf("LabFiles(01, 1.1) = %v, %v; want [base.go]", files, err)
	}
	files, err = b.LabFiles(ch2, lab22)
	if err != nil || !cmp.Equal([]string{"tool.go"}, files) {
		t.Errorf("LabFiles(02, 2.2) = %v, %v; want [tool.go]", files, err)
	}

	stub, err := b.StubBodies(ch2, lab21, "tool.go")
	require.NoError(t, err)
	wantStub := []string{"\t// TODO(Lab 2.1): 见 labs/2.1.md (see labs/2.1.en.md)\n\tpanic(\"Lab 2.1 编译 尚未实现\")\n"}
	if diff := cmp.Diff(wantStub, stub); diff != "" {
		t.Errorf("StubBodies(02, 2.1) (-want +got):\n%s", diff)
	}
	ref, err := b.ReferenceBodies(ch2, lab21, "tool.go")
	require.NoError(t, err)
	wantRef := []string{"\tc := jsonschema.NewCompiler()\n\treturn c.Compile(s + wire.Name)\n"}
	if diff := cmp.Diff(wantRef, ref); diff != "" {
		t.Errorf("ReferenceBodies(02, 2.1) (-want +got):\n%s", diff)
	}

	// What `course reset` does: the learner's attempt is replaced by the stub, which gives back
	// the starter's file exactly.
	starter, err := b.Starter(ch2)
	require.NoError(t, err)
	attempt, err := labsrc.ReplaceBodies(starter["tool.go"], "2.1", []string{"\treturn nil, nil\n"})
	require.NoError(t, err)
	reset, err := labsrc.ReplaceBodies(attempt, "2.1", stub)
	require.NoError(t, err)
	if diff := cmp.Diff(string(starter["tool.go"]), string(reset)); diff != "" {
		t.Errorf("resetting lab 2.1 (-starter +reset):\n%s", diff)
	}

	errs := []struct {
		name string
		err  func() error
		want string
	}{
		{"observe chapter", func() error { _, err := b.StubBodies(ch0, ch0.Labs[0], "tour.go"); return err },
			"chapter 00 is an observe chapter"},
		{"lab of another chapter", func() error { _, err := b.ReferenceBodies(ch2, ch1.Labs[0], "tool.go"); return err },
			"is not a lab of chapter 02"},
		{"file without the lab", func() error { _, err := b.StubBodies(ch2, lab21, "doc.go"); return err },
			"chapter 02: lab 2.1 has no region in doc.go"},
		{"file not in the tree", func() error { _, err := b.ReferenceBodies(ch1, ch1.Labs[0], "tool.go"); return err },
			"chapter 01: tool.go is not a file of the chapter's trees"},
		{"LabFiles of an observe chapter", func() error { _, err := b.LabFiles(ch0, ch0.Labs[0]); return err },
			"chapter 00 is an observe chapter"},
	}
	for _, tt := range errs {
		if err := tt.err(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error = %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

// TestSources: a chapter's sources are the kit's go.mod and go.sum and the reference files of
// every chapter in its trees (directories expanded), which are exactly the files of its target.
func TestSources(t *testing.T) {
	b := newBuilder(t, testFS(t))
	want := map[string][]string{
		"00": {"go.mod", "go.sum", "solutions/tinypi/base.go", "solutions/tinypi/ch00_tour_test.go", "solutions/tinypi/ch01_base_test.go",
			"solutions/tinypi/ch02_tools_test.go", "solutions/tinypi/doc.go", "solutions/tinypi/tool.go", "solutions/tinypi/tour.go",
			"solutions/tinypi/wire/data.txt", "solutions/tinypi/wire/wire.go"},
		"01": {"go.mod", "go.sum", "solutions/tinypi/base.go", "solutions/tinypi/ch01_base_test.go", "solutions/tinypi/doc.go",
			"solutions/tinypi/wire/data.txt", "solutions/tinypi/wire/wire.go"},
	}
	want["02"] = want["00"]
	for _, ch := range b.Course().Chapters {
		got, err := b.Sources(ch)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[ch.Number], got); diff != "" {
			t.Errorf("Sources(%s) (-want +got):\n%s", ch.Number, diff)
		}
		target, err := b.Target(ch)
		if err != nil {
			t.Fatal(err)
		}
		var fromTarget []string
		for _, p := range target.Paths() {
			if p != "go.mod" && p != "go.sum" {
				p = "solutions/tinypi/" + p
			}
			fromTarget = append(fromTarget, p)
		}
		slices.Sort(fromTarget)
		if diff := cmp.Diff(fromTarget, got); diff != "" {
			t.Errorf("Sources(%s) differs from its target's files (-target +sources):\n%s", ch.Number, diff)
		}
	}
}
