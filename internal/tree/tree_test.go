package tree_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/tree"
)

const kitImport = "github.com/learn-tinypi/course/solutions/tinypi"

// testFS is a small course of two chapters next to the kit's real go.mod and go.sum.
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
		"checkpoints/01-base.yaml": {Data: []byte(`number: "01"
slug: base
title: 基础
title_en: Base
mode: observe
files: [doc.go, wire]
doc: docs/01-base.md
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
		"solutions/tinypi/doc.go":        {Data: []byte("// Package tinypi is a test.\npackage tinypi\n")},
		"solutions/tinypi/wire/wire.go":  {Data: []byte("// Package wire is a test.\npackage wire\n\n// Name is a name.\nconst Name = \"wire\"\n")},
		"solutions/tinypi/wire/data.txt": {Data: []byte("data\n")},
		"solutions/tinypi/unowned.go":    {Data: []byte("package tinypi\n")},
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
		if err != nil {
			t.Fatal(err)
		}
		fsys[name] = &fstest.MapFile{Data: data}
	}
	return fsys
}

func newBuilder(t *testing.T, fsys fs.FS) *tree.Builder {
	t.Helper()
	b, err := tree.NewBuilder(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTrees(t *testing.T) {
	b := newBuilder(t, testFS(t))
	ch1, ch2 := b.Course().Chapters[0], b.Course().Chapters[1]

	parent1, err := b.Parent(ch1)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"go.mod", "go.sum"}, parent1.Paths()); diff != "" {
		t.Errorf("Parent(01) paths (-want +got):\n%s", diff)
	}
	target1, err := b.Target(ch1)
	if err != nil {
		t.Fatal(err)
	}
	parent2, err := b.Parent(ch2)
	if err != nil {
		t.Fatal(err)
	}
	if !target1.Equal(parent2) {
		t.Errorf("Parent(02) differs from Target(01)")
	}
	target2, err := b.Target(ch2)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ch02_tools_test.go", "doc.go", "go.mod", "go.sum", "tool.go", "wire/data.txt", "wire/wire.go"}
	if diff := cmp.Diff(want, target2.Paths()); diff != "" {
		t.Errorf("Target(02) paths (-want +got):\n%s", diff)
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
	if err != nil {
		t.Fatal(err)
	}
	st := string(starter["tool.go"])
	for _, s := range []string{`panic("Lab 2.1 编译 尚未实现")`, `panic("Lab 2.2 长度 尚未实现")`, "// TODO(Lab 2.1)", "// TODO(Lab 2.2)"} {
		if !strings.Contains(st, s) {
			t.Errorf("Starter tool.go lacks %q:\n%s", s, st)
		}
	}
	if strings.Contains(st, `"fmt"`) || strings.Contains(st, "tinypi/wire") {
		t.Errorf("Starter tool.go keeps imports its stubs made unused:\n%s", st)
	}
	if string(starter["ch02_tools_test.go"]) != string(target2["ch02_tools_test.go"]) {
		t.Errorf("Starter test file differs from the target's")
	}

	stage1, err := b.Progressive(ch2, 1)
	if err != nil {
		t.Fatal(err)
	}
	s1 := string(stage1["tool.go"])
	if !strings.Contains(s1, "return c.Compile(s + wire.Name)") || !strings.Contains(s1, `panic("Lab 2.2 长度 尚未实现")`) {
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
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mutant["tool.go"]), "fmt.Sprint(len(s) + 1)") {
		t.Errorf("mutant not applied:\n%s", mutant["tool.go"])
	}

	unowned, err := b.UnownedFiles()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"unowned.go"}, unowned); diff != "" {
		t.Errorf("UnownedFiles (-want +got):\n%s", diff)
	}

	// The trees are real modules: target, starter and mutant build offline, tests included.
	for name, tr := range map[string]tree.Tree{"target": target2, "starter": starter, "mutant": mutant, "parent": parent2} {
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
			ch := b.Course().Chapters[1]
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
		if err := tr.Write(dir); err != nil {
			t.Fatal(err)
		}
		assertDir(t, dir, tr)
		assertNoTemp(t, filepath.Dir(dir))
	})
	t.Run("empty directory", func(t *testing.T) {
		dir := t.TempDir()
		if err := tr.Write(dir); err != nil {
			t.Fatal(err)
		}
		assertDir(t, dir, tr)
	})
	t.Run("non-empty directory is refused and kept", func(t *testing.T) {
		dir := t.TempDir()
		keep := filepath.Join(dir, "mine.txt")
		if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := tr.Write(dir)
		if err == nil || !strings.Contains(err.Error(), "is not empty") {
			t.Fatalf("Write error = %v, want a not-empty error", err)
		}
		assertDir(t, dir, tree.Tree{"mine.txt": []byte("mine")})
		assertNoTemp(t, filepath.Dir(dir))
	})
	t.Run("a file is refused", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(file, nil, 0o644); err != nil {
			t.Fatal(err)
		}
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
	if err != nil {
		t.Fatal(err)
	}
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
	if err := tr.Write(dir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "vet", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: go vet ./... failed: %v\n%s", name, err, out)
	}
}
