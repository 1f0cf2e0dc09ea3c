package practice_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/history"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/tree"
)

// Reference lines of chapter 02's labs: a practice directory must not contain them.
const (
	answer21 = "return strings.ToUpper(s)"
	answer22 = "return len(s) * 2"
)

// fakeCourse is a course of two chapters, using the kit's real go.mod and go.sum and practice
// templates.
func fakeCourse(t *testing.T) fstest.MapFS {
	t.Helper()
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	fsys := fstest.MapFS{
		"checkpoints/course.yaml": file(`module: tinypi
go: "1.26"
kit_import: github.com/learn-tinypi/course/solutions/tinypi
requires: []
`),
		"checkpoints/01-base.yaml": file(`number: "01"
slug: base
title: 基础
title_en: Base
mode: rebuild
files: [base.go]
test_file: ch01_base_test.go
doc: docs/01-base.md
labs:
  - {id: "1.1", title: 基础, title_en: Base, keyword: 基础, pattern: ^TestLab1_1_, tests: 1}
`),
		"checkpoints/02-words.yaml": file(`number: "02"
slug: words
title: 单词
title_en: Words
mode: rebuild
files: [words.go]
test_file: ch02_words_test.go
doc: docs/02-words.md
labs:
  - {id: "2.1", title: 大写, title_en: Upper, keyword: 大写, pattern: ^TestLab2_1_, tests: 1}
  - {id: "2.2", title: 宽度, title_en: Width, stub_title: 计算宽度, keyword: 宽度, pattern: ^TestLab2_2_, tests: 1}
`),
		"solutions/tinypi/base.go":           file("// Package tinypi is a test.\npackage tinypi\n\n// Base is the base.\nfunc Base() int {\n\t//lab:begin 1.1\n\treturn 1\n\t//lab:end\n}\n"),
		"solutions/tinypi/ch01_base_test.go": file("package tinypi\n\nimport \"testing\"\n\nfunc TestLab1_1_Base(t *testing.T) { _ = Base() }\n"),
		"labs/01/1.1.md":                     file("# Lab 1.1 基础\n"),
		"labs/01/1.1.en.md":                  file("# Lab 1.1 Base\n"),
		"solutions/tinypi/words.go": file(`package tinypi

import "strings"

// Upper shouts.
func Upper(s string) string {
	//lab:begin 2.1
	` + answer21 + `
	//lab:end
}

// Width measures.
func Width(s string) int {
	//lab:begin 2.2
	` + answer22 + `
	//lab:end
}
`),
		"solutions/tinypi/ch02_words_test.go": file(`package tinypi

import "testing"

func TestLab2_1_Upper(t *testing.T) { _ = Upper("a") }

func TestLab2_2_Width(t *testing.T) { _ = Width("a") }
`),
		"labs/02/2.1.md":    file("# Lab 2.1 大写\n"),
		"labs/02/2.1.en.md": file("# Lab 2.1 Upper\n"),
		"labs/02/2.2.md":    file("# Lab 2.2 宽度\n"),
		"labs/02/2.2.en.md": file("# Lab 2.2 Width\n"),
		"docs/01-base.md":   file("# 基础\n"),
		"docs/02-words.md":  file("# 单词\n"),
	}
	for _, name := range []string{"go.mod", "go.sum", "practice/LEARNING.md.tmpl", "practice/LEARNING.en.md.tmpl", "practice/AGENTS.md.tmpl", "practice/gitignore"} {
		data, err := fs.ReadFile(course.Content(), name)
		require.NoError(t, err)
		fsys[name] = &fstest.MapFile{Data: data}
	}
	return fsys
}

type fixture struct {
	b  *tree.Builder
	h  *history.History
	ch *manifest.Chapter
}

func newFixture(t *testing.T, fsys fs.FS) fixture {
	t.Helper()
	b, err := tree.NewBuilder(fsys)
	require.NoError(t, err)
	h, err := history.Build(b)
	require.NoError(t, err)
	ch, err := b.Course().Chapter("02")
	require.NoError(t, err)
	return fixture{b, h, ch}
}

// files returns the paths of the regular files under dir, slash-separated, except .git's.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err)
	slices.Sort(paths)
	return paths
}

func TestCreate(t *testing.T) {
	f := newFixture(t, fakeCourse(t))
	dir := filepath.Join(t.TempDir(), "mine")
	require.NoError(t, practice.Create(context.Background(), dir, f.b, f.h, f.ch, "zh"))

	starter, err := f.b.Starter(f.ch)
	require.NoError(t, err)
	want := append(starter.Paths(), ".course/practice.json", ".gitignore", "AGENTS.md", "LEARNING.md",
		"labs/2.1.en.md", "labs/2.1.md", "labs/2.2.en.md", "labs/2.2.md")
	slices.Sort(want)
	got := files(t, dir)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}

	// No answers: the starter's stubs, never this chapter's reference code.
	for _, p := range got {
		data, err := os.ReadFile(filepath.Join(dir, p))
		require.NoError(t, err)
		for _, answer := range []string{answer21, answer22} {
			if strings.Contains(string(data), answer) {
				t.Errorf("%s contains the answer %q", p, answer)
			}
		}
	}
	words, _ := os.ReadFile(filepath.Join(dir, "words.go"))
	if !strings.Contains(string(words), "Lab 2.2 计算宽度 尚未实现") {
		t.Errorf("words.go lacks lab 2.2's pending message:\n%s", words)
	}

	learning, _ := os.ReadFile(filepath.Join(dir, "LEARNING.md"))
	for _, part := range []string{"# 第 02 章练习：", "labs/2.1.md", "go test -run '^TestLab2_1_' .", "go test -run '^TestLab2_2_' .",
		"Lab 2.1 大写 尚未实现", "course test", "git diff", "course --lang en practice 02 DIR"} {
		if !strings.Contains(string(learning), part) {
			t.Errorf("LEARNING.md lacks %q:\n%s", part, learning)
		}
	}
	if strings.Contains(string(learning), "Chapter 02 practice") {
		t.Errorf("a Chinese LEARNING.md holds the English guide too:\n%s", learning)
	}

	// One commit holding every file, and a clean work tree: `git diff` starts empty.
	repo, err := git.PlainOpen(dir)
	require.NoError(t, err)
	head, err := repo.Head()
	require.NoError(t, err)
	if head.Name().Short() != "main" {
		t.Errorf("branch = %s, want main", head.Name().Short())
	}
	commit, err := repo.CommitObject(head.Hash())
	require.NoError(t, err)
	if commit.NumParents() != 0 {
		t.Errorf("the commit has %d parents; a practice directory carries no course history", commit.NumParents())
	}
	if commit.Author.Email != history.AuthorEmail {
		t.Errorf("author = %s, want %s", commit.Author.Email, history.AuthorEmail)
	}
	var committed []string
	ctree, _ := commit.Tree()
	ctree.Files().ForEach(func(f *object.File) error { committed = append(committed, f.Name); return nil })
	slices.Sort(committed)
	if diff := cmp.Diff(got, committed); diff != "" {
		t.Errorf("committed files (-on disk +committed):\n%s", diff)
	}
	wt, _ := repo.Worktree()
	if status, err := wt.Status(); err != nil || !status.IsClean() {
		t.Errorf("work tree not clean after Create: %v %v", status, err)
	}

	// Find from a subdirectory.
	root, prov, err := practice.Find(filepath.Join(dir, "labs"))
	require.NoError(t, err)
	if root != dir {
		t.Errorf("root = %s, want %s", root, dir)
	}
	wantProv := practice.Provenance{Chapter: "02", Parent: f.h.Parent(f.ch), Target: f.h.Target(f.ch),
		Module: "tinypi", Labs: []string{"2.1", "2.2"}, Lang: "zh"}
	if prov.Parent == "" || prov.Target == "" || prov.CreatedAt == "" || prov.KitVersion == "" {
		t.Errorf("provenance has empty fields: %+v", prov)
	}
	prov.CreatedAt, prov.KitVersion = "", ""
	if len(prov.TestFiles) == 0 {
		t.Errorf("provenance records no test file hashes")
	}
	prov.TestFiles = nil // TestChangedTestFiles checks them
	if diff := cmp.Diff(&wantProv, prov); diff != "" {
		t.Errorf("provenance (-want +got):\n%s", diff)
	}
}

func TestCreateIntoEmptyDir(t *testing.T) {
	f := newFixture(t, fakeCourse(t))
	dir := t.TempDir()
	before, err := os.Stat(dir)
	require.NoError(t, err)
	require.NoError(t, practice.Create(context.Background(), dir, f.b, f.h, f.ch, "zh"))
	if root, _, err := practice.Find(dir); err != nil || root != dir {
		t.Errorf("Find after Create into an empty dir = %s, %v; want %s", root, err, dir)
	}
	// The directory itself is kept (it may be the shell's working directory).
	if after, err := os.Stat(dir); err != nil || !os.SameFile(before, after) {
		t.Errorf("Create replaced the existing empty directory")
	}
	if _, err := git.PlainOpen(dir); err != nil {
		t.Errorf("no git repository in the existing directory: %v", err)
	}
	assertOnly(t, filepath.Dir(dir), filepath.Base(dir))
}

func TestCreateRefusesNonEmptyDir(t *testing.T) {
	f := newFixture(t, fakeCourse(t))
	parent := t.TempDir()
	dir := filepath.Join(parent, "busy")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644))
	err := practice.Create(context.Background(), dir, f.b, f.h, f.ch, "zh")
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("err = %v, want a not-empty error", err)
	}
	if diff := cmp.Diff([]string{"notes.txt"}, files(t, dir)); diff != "" {
		t.Errorf("dir changed (-want +got):\n%s", diff)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(data) != "mine" {
		t.Errorf("notes.txt = %q, want it untouched", data)
	}
	assertOnly(t, parent, "busy")
}

// assertOnly fails unless dir holds exactly the named entries.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if diff := cmp.Diff(names, got); diff != "" {
		t.Errorf("entries of %s (-want +got):\n%s", dir, diff)
	}
}

func TestCreateUnwritableParent(t *testing.T) {
	f := newFixture(t, fakeCourse(t))
	parent := t.TempDir()
	// A regular file as the parent fails even for root, who may write to a read-only directory.
	blocker := filepath.Join(parent, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o644))
	if err := practice.Create(context.Background(), filepath.Join(blocker, "p"), f.b, f.h, f.ch, "zh"); err == nil {
		t.Fatal("Create under a regular file succeeded")
	}
	assertOnly(t, parent, "file")
}

// flipCtx is a context that reports cancellation from its n-th Err call on, to fail Create
// after it has started writing.
type flipCtx struct {
	context.Context
	calls atomic.Int32
	n     int32
}

func (c *flipCtx) Err() error {
	if c.calls.Add(1) >= c.n {
		return context.Canceled
	}
	return nil
}

func TestCreateFailureMidwayLeavesNothing(t *testing.T) {
	f := newFixture(t, fakeCourse(t))
	// Create checks ctx before writing and again after writing the files; fail on the second.
	ctx := &flipCtx{Context: context.Background(), n: 2}
	parent := t.TempDir()
	err := practice.Create(ctx, filepath.Join(parent, "p"), f.b, f.h, f.ch, "zh")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if ctx.calls.Load() < 2 {
		t.Fatalf("Create stopped before writing (%d ctx checks); the test proves nothing", ctx.calls.Load())
	}
	assertOnly(t, parent)
}

func TestCreateMissingCard(t *testing.T) {
	fsys := fakeCourse(t)
	delete(fsys, "labs/02/2.2.en.md")
	f := newFixture(t, fsys)
	parent := t.TempDir()
	err := practice.Create(context.Background(), filepath.Join(parent, "p"), f.b, f.h, f.ch, "zh")
	if err == nil || !strings.Contains(err.Error(), "2.2") {
		t.Fatalf("err = %v, want an error naming lab 2.2's card", err)
	}
	assertOnly(t, parent)
}

func TestFindNotPractice(t *testing.T) {
	_, _, err := practice.Find(t.TempDir())
	if !errors.Is(err, practice.ErrNotPractice) {
		t.Fatalf("err = %v, want ErrNotPractice", err)
	}
	if !strings.Contains(err.Error(), "course practice 07 ./mydir") {
		t.Errorf("message %q does not say how to create a practice directory", err)
	}
}

func TestFindBrokenProvenance(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".course"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".course", "practice.json"), []byte("{"), 0o644))
	_, _, err := practice.Find(dir)
	if err == nil || errors.Is(err, practice.ErrNotPractice) || !strings.Contains(err.Error(), "practice.json") {
		t.Errorf("err = %v, want an error about the broken practice.json", err)
	}
}

// userFiles are a learner's own files in the directory a practice directory is asked for.
var userFiles = map[string]string{
	"go.mod":     "module mine\n\ngo 1.22\n",
	".gitignore": "secret.txt\n",
	"main.go":    "package main\n\nfunc main() { println(\"mine\") }\n",
}

// writeUserFiles writes userFiles into dir.
func writeUserFiles(t *testing.T, dir string) {
	t.Helper()
	for name, data := range userFiles {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
}

// contents returns every file below dir, .git included, with its content.
func contents(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		got[filepath.ToSlash(rel)] = string(data)
		return err
	})
	require.NoError(t, err)
	return got
}

func TestCreateEmptyNameRefused(t *testing.T) {
	f := newFixture(t, fakeCourse(t))
	dir := t.TempDir()
	writeUserFiles(t, dir)
	t.Chdir(dir)
	err := practice.Create(context.Background(), "", f.b, f.h, f.ch, "zh")
	if !errors.Is(err, tree.ErrNoDir) {
		t.Fatalf("Create(\"\") = %v, want tree.ErrNoDir", err)
	}
	want := map[string]string{}
	for name, data := range userFiles {
		want[name] = data
	}
	if diff := cmp.Diff(want, contents(t, dir)); diff != "" {
		t.Errorf("the current directory after Create(\"\") (-want +got):\n%s", diff)
	}
}

// TestCreateCurrentDirCancelledAtEveryStep creates a practice directory in the (empty) current
// directory "." of a parent holding the learner's files, and cancels it at every step: nothing
// may change. Without a cancellation it succeeds in place.
func TestCreateCurrentDirCancelledAtEveryStep(t *testing.T) {
	f := newFixture(t, fakeCourse(t))
	for n := int32(1); ; n++ {
		parent := t.TempDir()
		writeUserFiles(t, parent)
		dir := filepath.Join(parent, "p")
		require.NoError(t, os.Mkdir(dir, 0o755))
		t.Chdir(dir)
		ctx := &flipCtx{Context: context.Background(), n: n}
		err := practice.Create(ctx, ".", f.b, f.h, f.ch, "zh")
		want := map[string]string{}
		for name, data := range userFiles {
			want[name] = data
		}
		if err == nil {
			if n < 4 {
				t.Fatalf("Create succeeded after only %d context checks: the test proves nothing", n)
			}
			if _, _, err := practice.Find(dir); err != nil {
				t.Errorf("Find after Create(\".\") = %v", err)
			}
			for name, data := range userFiles {
				got, err := os.ReadFile(filepath.Join(parent, name))
				if err != nil || string(got) != data {
					t.Errorf("the learner's %s = %q, %v after Create; want it untouched", name, got, err)
				}
			}
			return
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled at check %d: err = %v, want context.Canceled", n, err)
		}
		if diff := cmp.Diff(want, contents(t, parent)); diff != "" {
			t.Errorf("cancelled at check %d: files (-want +got):\n%s", n, diff)
		}
		assertOnly(t, dir)
	}
}

// TestChangedTestFiles: the hashes of the starter's test files are recorded when the practice
// directory is made, and an edited or deleted test file is reported; the learner's code is not.
func TestChangedTestFiles(t *testing.T) {
	f := newFixture(t, fakeCourse(t))
	dir := filepath.Join(t.TempDir(), "mine")
	require.NoError(t, practice.Create(context.Background(), dir, f.b, f.h, f.ch, "zh"))
	_, prov, err := practice.Find(dir)
	require.NoError(t, err)
	var tests []string
	for _, p := range files(t, dir) {
		if strings.HasSuffix(p, "_test.go") || strings.HasPrefix(p, "testdata/") {
			tests = append(tests, p)
		}
	}
	if len(tests) == 0 {
		t.Fatal("the fixture's starter has no test file")
	}
	if diff := cmp.Diff(tests, slices.Sorted(maps.Keys(prov.TestFiles))); diff != "" {
		t.Errorf("recorded test files (-on disk +recorded):\n%s", diff)
	}
	check := func(want []string) {
		t.Helper()
		got, err := prov.ChangedTestFiles(dir)
		require.NoError(t, err)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ChangedTestFiles (-want +got):\n%s", diff)
		}
	}
	check(nil)
	// The learner's work changes no test file.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "words.go"), []byte("package words\n"), 0o644))
	check(nil)
	// `return` at the top of a focused test.
	file := filepath.Join(dir, filepath.FromSlash(tests[0]))
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	edited := strings.Replace(string(data), "*testing.T) {", "*testing.T) { return;", 1)
	require.NoError(t, os.WriteFile(file, []byte(edited), 0o644))
	check([]string{tests[0]})
	require.NoError(t, os.Remove(file))
	check([]string{tests[0]})
	require.NoError(t, os.WriteFile(file, data, 0o644))
	check(nil)
}

func TestCreateInEnglish(t *testing.T) {
	f := newFixture(t, fakeCourse(t))
	dir := filepath.Join(t.TempDir(), "mine")
	require.NoError(t, practice.Create(context.Background(), dir, f.b, f.h, f.ch, "en"))
	learning, err := os.ReadFile(filepath.Join(dir, "LEARNING.md"))
	require.NoError(t, err)
	for _, part := range []string{"# Chapter 02 practice: Words", "## First red light", "labs/2.1.en.md",
		"go test -run '^TestLab2_1_' .", "`Lab 2.1 大写 尚未实现` (Chinese for: lab 2.1", "course test", "git diff"} {
		if !strings.Contains(string(learning), part) {
			t.Errorf("LEARNING.md lacks %q:\n%s", part, learning)
		}
	}
	if strings.Contains(string(learning), "第一次红灯") {
		t.Errorf("an English LEARNING.md holds the Chinese guide too:\n%s", learning)
	}
}

// TestTestCommand checks the card's run command: the lab's pattern quoted for the shell, -race
// for a race lab, and the lab's package, also from a directory below the practice directory.
func TestTestCommand(t *testing.T) {
	c, err := manifest.Load(course.Content())
	require.NoError(t, err, "loading the course")
	lab := func(number, id string) *manifest.Lab {
		t.Helper()
		ch, err := c.Chapter(number)
		require.NoError(t, err)
		l, err := ch.Lab(id)
		require.NoError(t, err)
		return l
	}
	tests := []struct {
		lab  *manifest.Lab
		root string
		want string
	}{
		{lab("07", "7.1"), ".", `go test -run '^TestLab7_1_' .`},
		{lab("07", "7.1"), "..", `go test -run '^TestLab7_1_' ..`},
		{lab("02", "2.1"), ".", `go test -race -run '^TestLab2_1_' .`},
		{lab("14", "14.1"), ".", `go test -run '^TestLab14_1_' ./eval`},
		{lab("14", "14.1"), "..", `go test -run '^TestLab14_1_' ../eval`},
		{lab("14", "14.1"), "../..", `go test -run '^TestLab14_1_' ../../eval`},
	}
	for _, tt := range tests {
		if got := practice.TestCommandFrom(tt.lab, tt.root); got != tt.want {
			t.Errorf("TestCommandFrom(lab %s, %q) = %s, want %s", tt.lab.ID, tt.root, got, tt.want)
		}
	}
	if got, want := practice.TestCommand(lab("14", "14.2")), `go test -run '^TestLab14_2_' ./eval`; got != want {
		t.Errorf("TestCommand(lab 14.2) = %s, want %s", got, want)
	}
}
