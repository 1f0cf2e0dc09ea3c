package devcheck

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/tree"
)

// regionsLoop is loop.go of regionsCourse: chapter 01's loop, which chapter 03 extends with a
// mutex, a replaced line inside lab 1.1 and a method holding lab 3.1.
const regionsLoop = `package tinypi

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
`

// regionsCourse is a course of three rebuild chapters in which chapter 03 extends loop.go, a
// file of chapter 01.
func regionsCourse(t *testing.T) fstest.MapFS {
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
		"checkpoints/course.yaml":   {Data: []byte("module: tinypi\ngo: \"1.26\"\nkit_import: github.com/learn-tinypi/course/solutions/tinypi\n")},
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
		"solutions/tinypi/loop.go":      {Data: []byte(regionsLoop)},
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

// regionChecks runs the region checks of chapter number of fsys, by name.
func regionChecks(t *testing.T, fsys fs.FS, number string) map[string]Check {
	t.Helper()
	b, err := tree.NewBuilder(fsys)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := b.Course().Chapter(number)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Check{}
	for _, task := range regionTasks(b, ch) {
		c, err := task.run(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		out[task.name] = c
	}
	return out
}

func TestRegionChecksPass(t *testing.T) {
	fsys := regionsCourse(t)
	for _, n := range []string{"01", "02", "03"} {
		checks := regionChecks(t, fsys, n)
		if len(checks) != 3 {
			t.Errorf("chapter %s: %d region checks, want 3", n, len(checks))
		}
		for name, c := range checks {
			if !c.OK {
				t.Errorf("chapter %s: %s failed:\n%s", n, name, c.Detail)
			}
		}
	}
}

// TestRegionChecksFail breaks each rule in the course and expects its check to fail, with a
// detail that names the problem, in the chapters it concerns only.
func TestRegionChecksFail(t *testing.T) {
	tests := []struct {
		name   string
		change func(fstest.MapFS)
		check  string
		failIn []string // chapters whose check fails; it passes in the others
		detail string
	}{
		{
			name: "starter leaks a change outside the chapter's regions",
			// strings is imported outside any region, but only lab 3.1's code uses it: stubbing
			// lab 3.1 drops the import, a line of chapter 01's code.
			change: func(fsys fstest.MapFS) {
				src := strings.Replace(regionsLoop, "\t\"fmt\"\n", "\t\"fmt\"\n\t\"strings\"\n", 1)
				src = strings.Replace(src, "\treturn l.n\n", "\treturn len(strings.Repeat(\"x\", l.n))\n", 1)
				fsys["solutions/tinypi/loop.go"] = &fstest.MapFile{Data: []byte(src)}
				fsys["checkpoints/03-queue.yaml"].Data = []byte(strings.Replace(string(fsys["checkpoints/03-queue.yaml"].Data), "return l.n", "strings.Repeat", 1))
			},
			check:  parentCheck,
			failIn: []string{"03"},
			detail: `loop.go: line 5 of the parent, "\"strings\"", is not in the starter, and is no before line of a //chapter:begin 03 region`,
		},
		{
			name: "chapter marker in a file that is not Go",
			change: func(fsys fstest.MapFS) {
				fsys["solutions/tinypi/notes.txt"] = &fstest.MapFile{Data: []byte("notes\n//chapter:begin 03\nmore\n//chapter:end\n")}
				fsys["checkpoints/01-loop.yaml"].Data = []byte(strings.Replace(string(fsys["checkpoints/01-loop.yaml"].Data), "files: [loop.go]", "files: [loop.go, notes.txt]", 1))
			},
			check:  markersCheck,
			failIn: []string{"01", "02", "03"},
			detail: "notes.txt:2 of the target is a chapter marker",
		},
		{
			name: "before line not commented",
			change: func(fsys fstest.MapFS) {
				fsys["solutions/tinypi/loop.go"].Data = []byte(strings.Replace(regionsLoop, "\t// // nothing to lock yet", "\t_ = l", 1))
			},
			check:  regionsCheck,
			failIn: []string{"01", "02", "03"},
			detail: "solutions/tinypi/loop.go:25: chapter 03: every line between //chapter:before (line 24) and //chapter:end must be commented out with //",
		},
		{
			name: "extends a file without a region",
			change: func(fsys fstest.MapFS) {
				fsys["checkpoints/03-queue.yaml"].Data = []byte(strings.Replace(string(fsys["checkpoints/03-queue.yaml"].Data), "extends: [loop.go]", "extends: [loop.go, other.go]", 1))
			},
			check:  regionsCheck,
			failIn: []string{"02", "03"},
			detail: "chapter 03 lists other.go under extends:, but solutions/tinypi/other.go has no //chapter:begin 03 region",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := regionsCourse(t)
			tt.change(fsys)
			for _, n := range []string{"01", "02", "03"} {
				c, ok := regionChecks(t, fsys, n)[tt.check]
				wantFail := strings.Contains(strings.Join(tt.failIn, " "), n)
				switch {
				case !ok:
					t.Errorf("chapter %s has no check %q", n, tt.check)
				case wantFail && (c.OK || !strings.Contains(c.Detail, tt.detail)):
					t.Errorf("chapter %s: %s: OK=%v, detail:\n%s\nwant it to fail with %q", n, tt.check, c.OK, c.Detail, tt.detail)
				case !wantFail && !c.OK:
					t.Errorf("chapter %s: %s failed:\n%s", n, tt.check, c.Detail)
				}
			}
		})
	}
}

// TestCacheKeyOfExtendedFiles: editing a chapter region of a file changes the proof key of the
// file's owner and of every later chapter, and so does the manifest of the chapter that extends
// it; a file the extending chapter owns changes only its own key.
func TestCacheKeyOfExtendedFiles(t *testing.T) {
	cache := &Cache{Kit: "kit", Go: "go"}
	keys := func(fsys fs.FS) map[string]string {
		t.Helper()
		b, err := tree.NewBuilder(fsys)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, ch := range b.Course().Chapters {
			if out[ch.Number], err = cache.Key(b, ch, Options{}); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	base := keys(regionsCourse(t))
	tests := []struct {
		name    string
		change  func(fstest.MapFS)
		changed map[string]bool
	}{
		{"chapter 03's region of loop.go", func(fsys fstest.MapFS) {
			fsys["solutions/tinypi/loop.go"].Data = []byte(strings.Replace(regionsLoop, "return l.n", "return l.n + 0", 1))
		}, map[string]bool{"01": true, "02": true, "03": true}},
		{"chapter 03's manifest", func(fsys fstest.MapFS) {
			fsys["checkpoints/03-queue.yaml"].Data = append(fsys["checkpoints/03-queue.yaml"].Data, "# more\n"...)
		}, map[string]bool{"01": true, "02": true, "03": true}},
		{"chapter 03's own file", func(fsys fstest.MapFS) {
			fsys["solutions/tinypi/queue.go"].Data = append(fsys["solutions/tinypi/queue.go"].Data, "// more\n"...)
		}, map[string]bool{"01": false, "02": false, "03": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := regionsCourse(t)
			tt.change(fsys)
			got := keys(fsys)
			for n, want := range tt.changed {
				if (got[n] != base[n]) != want {
					t.Errorf("chapter %s: key changed = %v, want %v", n, got[n] != base[n], want)
				}
			}
		})
	}
}

func TestModRequirements(t *testing.T) {
	parent := "module tinypi\n\ngo 1.26.0\n\nrequire (\n\tgolang.org/x/text v0.1.0 // indirect\n\texample.com/a v1.0.0 // indirect\n)\n"
	starter := "module tinypi\n\ngo 1.26.0\n\nrequire golang.org/x/text v0.1.0\n\nrequire example.com/a v1.0.0 // indirect\n"
	if a, b := modRequirements([]byte(parent)), modRequirements([]byte(starter)); a != b {
		t.Errorf("go.mod files differing only in indirect marks and grouping: %q != %q", a, b)
	}
	other := strings.Replace(starter, "v0.1.0", "v0.2.0", 1)
	if a, b := modRequirements([]byte(parent)), modRequirements([]byte(other)); a == b {
		t.Errorf("go.mod files requiring different versions compare equal: %q", a)
	}
}
