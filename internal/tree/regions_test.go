package tree_test

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/tree"
)

// regionsFS is a course of three rebuild chapters in which chapter 03 extends loop.go, a file of
// chapter 01: it adds a field and lab 3.1's method, and replaces a line inside lab 1.1's region.
func regionsFS(t *testing.T) fstest.MapFS {
	t.Helper()
	chapter := func(n, slug, files, extra string) *fstest.MapFile {
		major := strings.TrimLeft(n, "0")
		return &fstest.MapFile{Data: []byte(`number: "` + n + `"
slug: ` + slug + `
title: 章` + n + `
title_en: Chapter ` + n + `
mode: rebuild
files: [` + files + `]
test_file: ch` + n + `_test.go
doc: docs/` + n + `.md
labs:
  - {id: "` + major + `.1", title: 实验` + n + `, title_en: Lab ` + n + `, keyword: 实验` + n + `, pattern: ^TestLab` + major + `_1_, tests: 1}
` + extra)}
	}
	test := func(lab string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("package tinypi\n\nimport \"testing\"\n\nfunc TestLab" + lab + "_1_X(t *testing.T) {}\n")}
	}
	fsys := fstest.MapFS{
		"checkpoints/course.yaml":   {Data: []byte("module: tinypi\ngo: \"1.26\"\nkit_import: " + kitImport + "\n")},
		"checkpoints/01-loop.yaml":  chapter("01", "loop", "loop.go", ""),
		"checkpoints/02-other.yaml": chapter("02", "other", "other.go", ""),
		"checkpoints/03-queue.yaml": chapter("03", "queue", "queue.go", `extends: [loop.go]
mutants:
  - {name: zero, lab: "3.1", file: loop.go, find: "return l.n", replace: "return 0", explain: 零, explain_en: Zero}
`),
		"solutions/tinypi/ch01_test.go": test("1"),
		"solutions/tinypi/ch02_test.go": test("2"),
		"solutions/tinypi/ch03_test.go": test("3"),
		"solutions/tinypi/other.go":     {Data: []byte("package tinypi\n\n// Other is other.\nfunc Other() {\n\t//lab:begin 2.1\n\t//lab:end\n}\n")},
		"solutions/tinypi/queue.go":     {Data: []byte("package tinypi\n\n// Queue queues.\ntype Queue struct{}\n")},
		"solutions/tinypi/loop.go": {Data: []byte(`package tinypi

import (
	"fmt"
	//chapter:begin 03
	"sync"
	//chapter:end
)

// Loop loops.
type Loop struct {
	n int
	//chapter:begin 03
	mu sync.Mutex
	//chapter:end
}

// Run runs.
func (l *Loop) Run(pending []string) {
	//lab:begin 1.1
	//chapter:begin 03
	l.mu.Lock()
	defer l.mu.Unlock()
	//chapter:before
	// // nothing to lock yet
	//chapter:end
	for _, m := range pending {
		fmt.Println(m, l.n)
	}
	//lab:end
}

//chapter:begin 03

// Len measures the loop.
func (l *Loop) Len() int {
	//lab:begin 3.1
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
	//lab:end
}

//chapter:end
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

const loopBefore03 = `package tinypi

import (
	"fmt"
)

// Loop loops.
type Loop struct {
	n int
}

// Run runs.
func (l *Loop) Run(pending []string) {
	// nothing to lock yet
	for _, m := range pending {
		fmt.Println(m, l.n)
	}
}
`

const loop03 = `package tinypi

import (
	"fmt"
	"sync"
)

// Loop loops.
type Loop struct {
	n  int
	mu sync.Mutex
}

// Run runs.
func (l *Loop) Run(pending []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range pending {
		fmt.Println(m, l.n)
	}
}

// Len measures the loop.
func (l *Loop) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}
`

const loop03Starter = `package tinypi

import (
	"fmt"
	"sync"
)

// Loop loops.
type Loop struct {
	n  int
	mu sync.Mutex
}

// Run runs.
func (l *Loop) Run(pending []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range pending {
		fmt.Println(m, l.n)
	}
}

// Len measures the loop.
func (l *Loop) Len() int {
	//lab:begin 3.1
	// TODO(Lab 3.1): 见 labs/3.1.md (see labs/3.1.en.md)
	panic("Lab 3.1 实验03 尚未实现")
	//lab:end
}
`

func TestChapterRegions(t *testing.T) {
	b := newBuilder(t, regionsFS(t))
	chs := b.Course().Chapters
	ch01, ch02, ch03 := chs[0], chs[1], chs[2]
	build := func(name string, f func() (tree.Tree, error)) tree.Tree {
		t.Helper()
		tr, err := f()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for p, data := range tr {
			if strings.Contains(string(data), "//chapter:") {
				t.Errorf("%s: %s has a chapter marker:\n%s", name, p, data)
			}
		}
		return tr
	}
	target01 := build("target 01", func() (tree.Tree, error) { return b.Target(ch01) })
	target02 := build("target 02", func() (tree.Tree, error) { return b.Target(ch02) })
	parent03 := build("parent 03", func() (tree.Tree, error) { return b.Parent(ch03) })
	starter03 := build("starter 03", func() (tree.Tree, error) { return b.Starter(ch03) })
	target03 := build("target 03", func() (tree.Tree, error) { return b.Target(ch03) })
	starter01 := build("starter 01", func() (tree.Tree, error) { return b.Starter(ch01) })
	mutant03 := build("mutant 03", func() (tree.Tree, error) { return b.Mutant(ch03, ch03.Mutants[0]) })

	for name, got := range map[string]tree.Tree{"target 01": target01, "target 02": target02, "parent 03": parent03} {
		if diff := cmp.Diff(loopBefore03, string(got["loop.go"])); diff != "" {
			t.Errorf("%s: loop.go (-want +got):\n%s", name, diff)
		}
	}
	if !parent03.Equal(target02) {
		t.Error("the parent of 03 is not the target of 02")
	}
	if diff := cmp.Diff(loop03, string(target03["loop.go"])); diff != "" {
		t.Errorf("target 03: loop.go (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(loop03Starter, string(starter03["loop.go"])); diff != "" {
		t.Errorf("starter 03: loop.go (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(starter01["loop.go"]), "panic(\"Lab 1.1 实验01 尚未实现\")") || strings.Contains(string(starter01["loop.go"]), "Lock") {
		t.Errorf("starter 01: loop.go does not stub lab 1.1 in chapter 01's version:\n%s", starter01["loop.go"])
	}
	if want := strings.Replace(loop03, "return l.n", "return 0", 1); string(mutant03["loop.go"]) != want {
		t.Errorf("mutant 03: loop.go =\n%s\nwant\n%s", mutant03["loop.go"], want)
	}

	files, err := b.LabFiles(ch03, ch03.Labs[0])
	if err != nil || !cmp.Equal([]string{"loop.go"}, files) {
		t.Errorf("LabFiles(03, 3.1) = %v, %v; want [loop.go]", files, err)
	}
	files, err = b.LabFiles(ch01, ch01.Labs[0])
	if err != nil || !cmp.Equal([]string{"loop.go"}, files) {
		t.Errorf("LabFiles(01, 1.1) = %v, %v; want [loop.go]", files, err)
	}
	stub, err := b.StubBodies(ch03, ch03.Labs[0], "loop.go")
	if want := []string{"\t// TODO(Lab 3.1): 见 labs/3.1.md (see labs/3.1.en.md)\n\tpanic(\"Lab 3.1 实验03 尚未实现\")\n"}; err != nil || !cmp.Equal(want, stub) {
		t.Errorf("StubBodies(03, 3.1) = %q, %v; want %q", stub, err, want)
	}
	ref, err := b.ReferenceBodies(ch03, ch03.Labs[0], "loop.go")
	if want := []string{"\tl.mu.Lock()\n\tdefer l.mu.Unlock()\n\treturn l.n\n"}; err != nil || !cmp.Equal(want, ref) {
		t.Errorf("ReferenceBodies(03, 3.1) = %q, %v; want %q", ref, err, want)
	}
	// Lab 1.1's reference is chapter 01's version of it, without chapter 03's lines.
	ref, err = b.ReferenceBodies(ch01, ch01.Labs[0], "loop.go")
	if want := []string{"\t// nothing to lock yet\n\tfor _, m := range pending {\n\t\tfmt.Println(m, l.n)\n\t}\n"}; err != nil || !cmp.Equal(want, ref) {
		t.Errorf("ReferenceBodies(01, 1.1) = %q, %v; want %q", ref, err, want)
	}

	for _, ch := range chs {
		src, err := b.Sources(ch)
		if err != nil || !strings.Contains(strings.Join(src, " "), "solutions/tinypi/loop.go") {
			t.Errorf("Sources(%s) = %v, %v; want loop.go among them", ch.Number, src, err)
		}
	}
}

func TestChapterRegionErrors(t *testing.T) {
	tests := []struct {
		name, file, old, new string
		chapter              int // index of the chapter whose target is built
		want                 string
	}{
		{"region of an unknown chapter", "solutions/tinypi/loop.go", "//chapter:begin 03\n\n", "//chapter:begin 07\n\n", 2,
			"solutions/tinypi/loop.go:33: //chapter:begin 07: the course has no chapter 07"},
		{"region of a chapter that does not extend the file", "solutions/tinypi/loop.go", "//chapter:begin 03\n\n", "//chapter:begin 02\n\n", 0,
			"solutions/tinypi/loop.go:33: //chapter:begin 02: chapter 02 neither owns loop.go nor lists it under extends: in checkpoints/02-other.yaml"},
		{"extends without a region", "checkpoints/03-queue.yaml", "extends: [loop.go]", "extends: [loop.go, other.go]", 2,
			"chapter 03 lists other.go under extends:, but solutions/tinypi/other.go has no //chapter:begin 03 region"},
		{"file with a region not listed under extends", "checkpoints/03-queue.yaml", "extends: [loop.go]", "extends: []", 0,
			"solutions/tinypi/loop.go:5: //chapter:begin 03: chapter 03 neither owns loop.go nor lists it under extends:"},
		{"before line not commented", "solutions/tinypi/loop.go", "\t// // nothing to lock yet", "\tl.n = 0", 0,
			"solutions/tinypi/loop.go:25: chapter 03: every line between //chapter:before (line 24) and //chapter:end must be commented out"},
		{"lab region straddles a chapter marker", "solutions/tinypi/loop.go", "\t//lab:end\n}\n\n//chapter:end", "}\n\n//chapter:end\n//lab:end", 2,
			"solutions/tinypi/loop.go:43: //chapter:end inside the region of lab 3.1"},
		{"missing end", "solutions/tinypi/loop.go", "\t//lab:end\n}\n\n//chapter:end", "\t//lab:end\n}\n", 1,
			"solutions/tinypi/loop.go:33: the region of chapter 03 has no //chapter:end"},
		{"lab of the extending chapter outside its region", "solutions/tinypi/loop.go", "\t//lab:begin 1.1\n", "\t//lab:begin 3.1\n", 0,
			"solutions/tinypi/loop.go:20: lab 3.1 of chapter 03, which extends this file, must sit in the live lines of a //chapter:begin 03 region"},
		{"lab of no chapter concerned", "solutions/tinypi/loop.go", "\t//lab:begin 1.1\n", "\t//lab:begin 2.1\n", 0,
			"solutions/tinypi/loop.go:20: lab 2.1 is not a lab of the chapter that owns this file, nor of a chapter that extends it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := regionsFS(t)
			data := string(fsys[tt.file].Data)
			if !strings.Contains(data, tt.old) {
				t.Fatalf("test setup: %q not in %s", tt.old, tt.file)
			}
			fsys[tt.file] = &fstest.MapFile{Data: []byte(strings.Replace(data, tt.old, tt.new, 1))}
			b := newBuilder(t, fsys)
			_, err := b.Target(b.Course().Chapters[tt.chapter])
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
