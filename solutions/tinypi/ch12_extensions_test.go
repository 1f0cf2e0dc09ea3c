package tinypi

// Focused tests of chapter 12, resources and extensions. Each test belongs to one lab:
//
//	go test -run '^TestLab12_1_' .   上下文文件
//	go test -run '^TestLab12_2_' .   提示模板
//	go test -run '^TestLab12_3_' .   准备调用
//	go test -run '^TestLab12_4_' .   执行模式
//	go test -run '^TestLab12_5_' .   结果钩子
//	go test -run '^TestLab12_6_' .   请求与回合钩子
//
// The resource tests build their files under t.TempDir() and show paths relative to it
// ("p/pipe/AGENTS.md"), so that messages read the same from one run to the next. Runs are spelled
// out as traces, one line per thing that happened ("start c1", "before c1 {"path":"a.md"}",
// "body c1", "end c1"), and results as "c1 error=false 读到 a.md".

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi/internal/labtest"
)

// --- helpers ----------------------------------------------------------------------------------

// ch12rPatience is how long a load may take before the test gives up on it.
const ch12rPatience = 5 * time.Second

// ch12rMkdir makes the directory base/name (slash-separated) and returns its path.
func ch12rMkdir(t *testing.T, base, name string) string {
	t.Helper()
	p := filepath.Join(base, filepath.FromSlash(name))
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// ch12rFifo makes a named pipe at base/name (and the directories it needs) and returns its path.
func ch12rFifo(t *testing.T, base, name string) string {
	t.Helper()
	p := filepath.Join(base, filepath.FromSlash(name))
	ch12rMkdir(t, base, filepath.ToSlash(filepath.Dir(filepath.FromSlash(name))))
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// ch12rSparse makes base/name (and the directories it needs) a file of size bytes, all zero, that
// takes no space on disk.
func ch12rSparse(t *testing.T, base, name string, size int64) {
	t.Helper()
	ch12rMkdir(t, base, filepath.ToSlash(filepath.Dir(filepath.FromSlash(name))))
	f, err := os.Create(filepath.Join(base, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

// ch12rLocked makes base/name unreadable (mode 000), restoring it when the test ends.
func ch12rLocked(t *testing.T, base, name string) {
	t.Helper()
	p := filepath.Join(base, filepath.FromSlash(name))
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(p, 0o700) })
}

// ch12rRel shows p relative to base, slash-separated.
func ch12rRel(base, p string) string {
	if rel, err := filepath.Rel(base, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

// ch12rText shows a text for a message: quoted when short, else its length and ends.
func ch12rText(s string) string {
	if len(s) <= 60 {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%d bytes %q…%q", len(s), s[:10], s[len(s)-10:])
}

// ch12rFiles shows context files as "PATH CONTENT", PATH relative to base.
func ch12rFiles(base string, files []ContextFile) []string {
	out := []string{}
	for _, f := range files {
		out = append(out, ch12rRel(base, f.Path)+" "+ch12rText(f.Content))
	}
	return out
}

// ch12rTemplates shows templates as "NAME PATH BODY", PATH relative to base.
func ch12rTemplates(base string, templates []PromptTemplate) []string {
	out := []string{}
	for _, p := range templates {
		out = append(out, p.Name+" "+ch12rRel(base, p.Path)+" "+ch12rText(p.Body))
	}
	return out
}

// ch12rProblems returns the paths of problems relative to base, sorted, and fails the test for a
// problem whose reason is empty or more than one line.
func ch12rProblems(t *testing.T, what, base string, problems []ResourceProblem) []string {
	t.Helper()
	out := []string{}
	for _, p := range problems {
		rel := ch12rRel(base, p.Path)
		if strings.TrimSpace(p.Reason) == "" || strings.ContainsAny(p.Reason, "\r\n") {
			t.Errorf("%s: the problem of %s has reason %q, want one line that says what is wrong", what, rel, p.Reason)
		}
		out = append(out, rel)
	}
	slices.Sort(out)
	return out
}

// ch12rList compares two lists of lines. When they differ it fails the test, naming the first
// item that differs on the message's first line, then listing both.
func ch12rList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	gotItem, wantItem := "nothing", "nothing"
	if i < len(got) {
		gotItem = got[i]
	}
	if i < len(want) {
		wantItem = want[i]
	}
	count := ""
	switch n := len(got) - len(want); {
	case n > 0:
		count = fmt.Sprintf(" (%d more than wanted)", n)
	case n < 0:
		count = fmt.Sprintf(" (%d fewer than wanted)", -n)
	}
	t.Errorf("%s: item %d is %s, want %s%s\nwant:\n\t%s\ngot:\n\t%s", what, i+1, gotItem, wantItem, count,
		strings.Join(want, "\n\t"), strings.Join(got, "\n\t"))
}

// ch12rLockedProblem removes from problems (paths relative to base) the problem of the
// unreadable file or directory locked, and fails the test when there is none. It is called only
// when the test does not run as root, so that the other comparisons, and their messages, are the
// same for every user.
func ch12rLockedProblem(t *testing.T, what string, problems []string, locked string) []string {
	t.Helper()
	i := slices.Index(problems, locked)
	if i < 0 {
		t.Errorf("%s: no problem for %s, which cannot be read (mode 000); problems: %v", what, locked, problems)
		return problems
	}
	return slices.Delete(slices.Clone(problems), i, i+1)
}

// ch12rError shows an error for a message, with base replaced by $TMP and the working directory
// by $CWD, so that the message is the same on every machine and in every run.
func ch12rError(base string, err error) string {
	if err == nil {
		return "nil"
	}
	msg := strings.ReplaceAll(err.Error(), base, "$TMP")
	if cwd, werr := os.Getwd(); werr == nil {
		msg = strings.ReplaceAll(msg, cwd, "$CWD")
	}
	return msg
}

// ch12rWithin runs f in a goroutine and returns its result, turning a stub's panic into the
// test's failure. When f has not returned within ch12rPatience, it opens each of pipes for writing
// (which lets a reader waiting on one go on) and fails the test.
func ch12rWithin[T any](t *testing.T, what string, pipes []string, f func() T) T {
	t.Helper()
	type outcome struct {
		value T
		panic any
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			o.panic = recover()
			done <- o
		}()
		o.value = f()
	}()
	timer := time.NewTimer(ch12rPatience)
	defer timer.Stop()
	select {
	case o := <-done:
		if o.panic != nil {
			failOnPanic(t, o.panic)
		}
		return o.value
	case <-timer.C:
	}
	for _, p := range pipes {
		if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	}
	select {
	case <-done:
	case <-time.After(ch12rPatience):
	}
	t.Fatalf("%s did not return within %v; it returned only once the test opened the named pipe for writing, or not at all", what, ch12rPatience)
	var zero T
	return zero
}

// ch12rAllocated runs f and returns how many bytes the program allocated meanwhile.
func ch12rAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// ch12rContextLoad is what LoadContextFiles returned.
type ch12rContextLoad struct {
	files    []ContextFile
	problems []ResourceProblem
	err      error
}

func ch12rLoadContext(t *testing.T, workspace, root string) ch12rContextLoad {
	t.Helper()
	return callLab(t, func() ch12rContextLoad {
		files, problems, err := LoadContextFiles(workspace, root)
		return ch12rContextLoad{files, problems, err}
	})
}

// ch12rTemplateLoad is what LoadPromptTemplates returned.
type ch12rTemplateLoad struct {
	templates []PromptTemplate
	problems  []ResourceProblem
	err       error
}

func ch12rLoadTemplates(t *testing.T, dirs ...string) ch12rTemplateLoad {
	t.Helper()
	return callLab(t, func() ch12rTemplateLoad {
		templates, problems, err := LoadPromptTemplates(dirs...)
		return ch12rTemplateLoad{templates, problems, err}
	})
}

// --- Lab 12.1 上下文文件 ----------------------------------------------------------------------

// The layout of TestLab12_1_上下文文件_Order, the root being p and the workspace p/pkg/e/ws:
//
//	AGENTS.md           above the root
//	p/AGENTS.md         "\n  project rules\n\n"
//	p/CLAUDE.md         ignored: p has an AGENTS.md
//	p/pkg/CLAUDE.md     "package rules" (p/pkg has no AGENTS.md)
//	p/pkg/e/AGENTS.md   white space only: skipped without a problem, and p/pkg/e/CLAUDE.md is not taken
//	p/pkg/e/ws/AGENTS.md and CLAUDE.md
func TestLab12_1_上下文文件_Order(t *testing.T) {
	base := t.TempDir()
	labtest.WriteFiles(t, base, map[string]string{
		"AGENTS.md":            "above the root",
		"p/AGENTS.md":          "\n  project rules\n\n",
		"p/CLAUDE.md":          "claude of the project",
		"p/pkg/CLAUDE.md":      "package rules",
		"p/pkg/e/AGENTS.md":    " \n\t\n",
		"p/pkg/e/CLAUDE.md":    "claude beside an empty AGENTS.md",
		"p/pkg/e/ws/AGENTS.md": "workspace rules\n",
		"p/pkg/e/ws/CLAUDE.md": "claude of the workspace",
	})
	root, ws := filepath.Join(base, "p"), filepath.Join(base, "p", "pkg", "e", "ws")
	want := []string{`p/AGENTS.md "project rules"`, `p/pkg/CLAUDE.md "package rules"`, `p/pkg/e/ws/AGENTS.md "workspace rules"`}
	check := func(call string, got ch12rContextLoad, want []string) {
		t.Helper()
		if got.err != nil {
			t.Errorf("%s: error %s, want none", call, ch12rError(base, got.err))
		}
		ch12rList(t, call+" files", ch12rFiles(base, got.files), want)
		ch12rList(t, call+" problems", ch12rProblems(t, call, base, got.problems), []string{})
	}

	check("LoadContextFiles(p/pkg/e/ws, p)", ch12rLoadContext(t, ws, root), want)
	check("LoadContextFiles(p/pkg/e/ws, p/pkg/e/ws)", ch12rLoadContext(t, ws, ws), []string{`p/pkg/e/ws/AGENTS.md "workspace rules"`})

	// An empty root is the filesystem root: the file above p is loaded too. (Files above the
	// test's directory, if this machine has any, are left out of the comparison.)
	all := ch12rLoadContext(t, ws, "")
	var ours []ContextFile
	for _, f := range all.files {
		if strings.HasPrefix(f.Path, base+string(filepath.Separator)) {
			ours = append(ours, f)
		}
	}
	if all.err != nil {
		t.Errorf(`LoadContextFiles(p/pkg/e/ws, ""): error %s, want none`, ch12rError(base, all.err))
	}
	ch12rList(t, `LoadContextFiles(p/pkg/e/ws, "") files under the test's directory`, ch12rFiles(base, ours),
		[]string{`AGENTS.md "above the root"`, `p/AGENTS.md "project rules"`, `p/pkg/CLAUDE.md "package rules"`, `p/pkg/e/ws/AGENTS.md "workspace rules"`})

	// A workspace outside the root is refused, naming both, and nothing is read.
	for _, c := range []struct{ call, workspace, root string }{
		{"LoadContextFiles(other, p)", filepath.Join(base, "other"), root},
		{"LoadContextFiles(p2, p)", filepath.Join(base, "p2"), root},
		{"LoadContextFiles(., p)", base, root},
	} {
		got := ch12rLoadContext(t, c.workspace, c.root)
		if got.err == nil || !strings.Contains(got.err.Error(), c.workspace) || !strings.Contains(got.err.Error(), c.root) {
			t.Errorf("%s, the workspace outside the root: error %s, want an error naming %s and %s", c.call, ch12rError(base, got.err),
				strings.ReplaceAll(c.workspace, base, "$TMP"), strings.ReplaceAll(c.root, base, "$TMP"))
		}
		if len(got.files) != 0 || len(got.problems) != 0 {
			t.Errorf("%s, the workspace outside the root: %d files and %d problems, want none", c.call, len(got.files), len(got.problems))
		}
	}

	// Relative paths, not cleaned, are made absolute from the working directory.
	t.Chdir(filepath.Join(base, "p", "pkg"))
	check("LoadContextFiles(e/../e/ws/, ..) in p/pkg", ch12rLoadContext(t, "e/../e/ws/", ".."), want)
}

// The layout of TestLab12_1_上下文文件_Skipped, the root being p and the workspace
// p/pipe/full/over/latin1/huge/locked/ws (every directory's file is skipped but full's and ws's):
//
//	p/AGENTS.md                  a directory (p/CLAUDE.md is not taken in its place)
//	p/pipe/AGENTS.md             a named pipe (p/pipe/CLAUDE.md is not taken)
//	.../full/AGENTS.md           exactly 32768 bytes: loaded
//	.../over/CLAUDE.md           32769 bytes
//	.../latin1/AGENTS.md         "caf\xe9", not UTF-8
//	.../huge/AGENTS.md           64 MiB (sparse: takes no space on disk)
//	.../locked/AGENTS.md         mode 000 (only when the test does not run as root, who reads it anyway)
//	.../ws/AGENTS.md             a symbolic link to elsewhere/rules.md, "  linked rules \n"
func TestLab12_1_上下文文件_Skipped(t *testing.T) {
	base := t.TempDir()
	const full, over = "p/pipe/full", "p/pipe/full/over"
	const latin1, huge, locked, ws = over + "/latin1", over + "/latin1/huge", over + "/latin1/huge/locked", over + "/latin1/huge/locked/ws"
	labtest.WriteFiles(t, base, map[string]string{
		"p/CLAUDE.md":         "claude of the root",
		"p/pipe/CLAUDE.md":    "claude beside a named pipe",
		full + "/AGENTS.md":   strings.Repeat("x", 32768),
		over + "/CLAUDE.md":   strings.Repeat("x", 32769),
		latin1 + "/AGENTS.md": "caf\xe9",
		"elsewhere/rules.md":  "  linked rules \n",
	})
	ch12rMkdir(t, base, "p/AGENTS.md")
	pipe := ch12rFifo(t, base, "p/pipe/AGENTS.md")
	ch12rSparse(t, base, huge+"/AGENTS.md", 64<<20)
	ch12rMkdir(t, base, ws)
	if err := os.Symlink(filepath.Join(base, "elsewhere", "rules.md"), filepath.Join(base, ws, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	unreadable := os.Geteuid() != 0
	if unreadable {
		labtest.WriteFiles(t, base, map[string]string{locked + "/AGENTS.md": "locked rules"})
		ch12rLocked(t, base, locked+"/AGENTS.md")
	}

	call := "LoadContextFiles(" + ws + ", p)"
	var got ch12rContextLoad
	allocated := ch12rAllocated(func() {
		got = ch12rWithin(t, call, []string{pipe}, func() ch12rContextLoad {
			files, problems, err := LoadContextFiles(filepath.Join(base, ws), filepath.Join(base, "p"))
			return ch12rContextLoad{files, problems, err}
		})
	})
	if got.err != nil {
		t.Errorf("%s: error %s, want none (the files that cannot be used are problems)", call, ch12rError(base, got.err))
	}
	ch12rList(t, call+" files", ch12rFiles(base, got.files),
		[]string{full + `/AGENTS.md 32768 bytes "xxxxxxxxxx"…"xxxxxxxxxx"`, ws + `/AGENTS.md "linked rules"`})
	problems := ch12rProblems(t, call, base, got.problems)
	if unreadable {
		problems = ch12rLockedProblem(t, call, problems, locked+"/AGENTS.md")
	}
	ch12rList(t, call+" problems", problems, []string{"p/AGENTS.md", "p/pipe/AGENTS.md", over + "/CLAUDE.md", latin1 + "/AGENTS.md", huge + "/AGENTS.md"})
	if allocated > 16<<20 {
		t.Errorf("%s allocated more than 16 MiB; the largest file is huge/AGENTS.md (64 MiB), of which at most 32769 bytes are to be read", call)
	}
}

func TestLab12_1_上下文文件_SystemPrompt(t *testing.T) {
	files := []ContextFile{
		{Path: "/home/ada/AGENTS.md", Content: "Answer in English."},
		{Path: "/home/ada/proj/CLAUDE.md", Content: "Run go test.\n\nNever push."},
	}
	cases := []struct {
		what  string
		base  string
		files []ContextFile
		want  string
	}{
		{"a base and two files", "You are tinypi.", files,
			"You are tinypi.\n\n<context-file path=\"/home/ada/AGENTS.md\">\nAnswer in English.\n</context-file>\n\n" +
				"<context-file path=\"/home/ada/proj/CLAUDE.md\">\nRun go test.\n\nNever push.\n</context-file>"},
		{"an empty base and one file", "", files[:1], "<context-file path=\"/home/ada/AGENTS.md\">\nAnswer in English.\n</context-file>"},
		{"a base and no files (nil)", "You are tinypi.\n", nil, "You are tinypi.\n"},
		{"a base and no files (empty)", "You are tinypi.", []ContextFile{}, "You are tinypi."},
		{"nothing", "", nil, ""},
	}
	for _, c := range cases {
		got := callLab(t, func() string { return SystemPromptWithContext(c.base, c.files) })
		if got != c.want {
			t.Errorf("SystemPromptWithContext(%s) = %q, want %q", c.what, got, c.want)
		}
	}
}

// --- Lab 12.2 提示模板 ------------------------------------------------------------------------

// The directories of TestLab12_2_提示模板_Load:
//
//	user/      review.md ("  user review of $1\n"), zeta.md, fix_bug-2.md; skipped: Review.md, -draft.md,
//	           _draft.md, "my review.md", .md (bad names); ignored: notes.txt, README, sub/nested.md
//	project/   review.md ("project review of $1"), alpha.md
//	none/      does not exist
//	file       a regular file, not a directory
//	locked/    mode 000 (only when the test does not run as root, who lists it anyway)
func TestLab12_2_提示模板_Load(t *testing.T) {
	base := t.TempDir()
	labtest.WriteFiles(t, base, map[string]string{
		"user/review.md":     "  user review of $1\n",
		"user/zeta.md":       "\n\nzeta\n",
		"user/fix_bug-2.md":  "fix $@",
		"user/Review.md":     "capital",
		"user/-draft.md":     "dash",
		"user/_draft.md":     "underscore",
		"user/my review.md":  "space",
		"user/.md":           "no name",
		"user/notes.txt":     "not a template",
		"user/README":        "not a template",
		"user/sub/nested.md": "in a subdirectory",
		"project/review.md":  "project review of $1",
		"project/alpha.md":   "alpha",
		"file":               "a file",
		"locked/hidden.md":   "hidden",
	})
	user, project := filepath.Join(base, "user"), filepath.Join(base, "project")
	none, file, locked := filepath.Join(base, "none"), filepath.Join(base, "file"), filepath.Join(base, "locked")
	dirs := []string{user, none, file, project}
	unreadable := os.Geteuid() != 0
	if unreadable {
		ch12rLocked(t, base, "locked")
		dirs = append(dirs, locked)
	}

	check := func(call string, got ch12rTemplateLoad, want []string) {
		t.Helper()
		if got.err != nil {
			t.Errorf("%s: error %s, want none", call, ch12rError(base, got.err))
		}
		ch12rList(t, call+" templates", ch12rTemplates(base, got.templates), want)
		problems := ch12rProblems(t, call, base, got.problems)
		if unreadable {
			problems = ch12rLockedProblem(t, call, problems, "locked")
		}
		ch12rList(t, call+" problems", problems, []string{"file", "user/-draft.md", "user/.md", "user/Review.md", "user/_draft.md", "user/my review.md"})
	}
	check("LoadPromptTemplates(user, none, file, project[, locked])", ch12rLoadTemplates(t, dirs...), []string{
		`alpha project/alpha.md "alpha"`,
		`fix_bug-2 user/fix_bug-2.md "fix $@"`,
		`review project/review.md "project review of $1"`,
		`zeta user/zeta.md "zeta"`,
	})
	// The other way round, the user's review wins.
	slices.Reverse(dirs)
	check("LoadPromptTemplates([locked, ]project, file, none, user)", ch12rLoadTemplates(t, dirs...), []string{
		`alpha project/alpha.md "alpha"`,
		`fix_bug-2 user/fix_bug-2.md "fix $@"`,
		`review user/review.md "user review of $1"`,
		`zeta user/zeta.md "zeta"`,
	})
}

// The templates of TestLab12_2_提示模板_Skipped, all in one directory:
//
//	ok.md       "  ok $1 \n": loaded
//	full.md     exactly 32768 bytes: loaded
//	link.md     a symbolic link to elsewhere/linked.md: loaded
//	big.md      32769 bytes
//	huge.md     64 MiB (sparse)
//	latin1.md   "caf\xe9", not UTF-8
//	pipe.md     a named pipe
//	locked.md   mode 000 (only when the test does not run as root)
func TestLab12_2_提示模板_Skipped(t *testing.T) {
	base := t.TempDir()
	labtest.WriteFiles(t, base, map[string]string{
		"prompts/ok.md":       "  ok $1 \n",
		"prompts/full.md":     strings.Repeat("y", 32768),
		"prompts/big.md":      strings.Repeat("y", 32769),
		"prompts/latin1.md":   "caf\xe9",
		"elsewhere/linked.md": "linked $@\n",
	})
	ch12rSparse(t, base, "prompts/huge.md", 64<<20)
	pipe := ch12rFifo(t, base, "prompts/pipe.md")
	if err := os.Symlink(filepath.Join(base, "elsewhere", "linked.md"), filepath.Join(base, "prompts", "link.md")); err != nil {
		t.Fatal(err)
	}
	unreadable := os.Geteuid() != 0
	if unreadable {
		labtest.WriteFiles(t, base, map[string]string{"prompts/locked.md": "locked"})
		ch12rLocked(t, base, "prompts/locked.md")
	}

	const call = "LoadPromptTemplates(prompts)"
	var got ch12rTemplateLoad
	allocated := ch12rAllocated(func() {
		got = ch12rWithin(t, call, []string{pipe}, func() ch12rTemplateLoad {
			templates, problems, err := LoadPromptTemplates(filepath.Join(base, "prompts"))
			return ch12rTemplateLoad{templates, problems, err}
		})
	})
	if got.err != nil {
		t.Errorf("%s: error %s, want none (the files that cannot be used are problems)", call, ch12rError(base, got.err))
	}
	ch12rList(t, call+" templates", ch12rTemplates(base, got.templates), []string{
		`full prompts/full.md 32768 bytes "yyyyyyyyyy"…"yyyyyyyyyy"`,
		`link prompts/link.md "linked $@"`,
		`ok prompts/ok.md "ok $1"`,
	})
	problems := ch12rProblems(t, call, base, got.problems)
	if unreadable {
		problems = ch12rLockedProblem(t, call, problems, "prompts/locked.md")
	}
	ch12rList(t, call+" problems", problems, []string{"prompts/big.md", "prompts/huge.md", "prompts/latin1.md", "prompts/pipe.md"})
	if allocated > 16<<20 {
		t.Errorf("%s allocated more than 16 MiB; the largest file is huge.md (64 MiB), of which at most 32769 bytes are to be read", call)
	}
}

func TestLab12_2_提示模板_Expand(t *testing.T) {
	templates := []PromptTemplate{
		{Name: "cost", Body: "Costs $$5, $x, $0, $ and $", Path: "/p/cost.md"},
		{Name: "last", Body: "$9 after $1", Path: "/p/last.md"},
		{Name: "review", Body: "Review $1 for $2.\nFocus: $@", Path: "/p/review.md"},
	}
	cases := []struct {
		input  string
		want   string
		wantOK bool
	}{
		{"/review main.go bugs", "Review main.go for bugs.\nFocus: main.go bugs", true},
		{"  \n/review   a.go\t b.go  c.go \n", "Review a.go for b.go.\nFocus: a.go b.go c.go", true},
		{"/review\tmain.go", "Review main.go for .\nFocus: main.go", true},
		{"/review\nmain.go", "Review main.go for .\nFocus: main.go", true},
		{"/review", "Review  for .\nFocus: ", true},
		{"/review $2 x", "Review $2 for x.\nFocus: $2 x", true},
		{"/review $@ $$", "Review $@ for $$.\nFocus: $@ $$", true},
		{"/cost", "Costs $5, $x, $0, $ and $", true},
		{"/last a b c d e f g h i", "i after a", true},
		{"/reviewx a.go", "/reviewx a.go", false},
		{"/review.go", "/review.go", false},
		{"/unknown a.go", "/unknown a.go", false},
		{"  /unknown", "  /unknown", false},
		{"review a.go", "review a.go", false},
		{"please /review a.go", "please /review a.go", false},
		{"/", "/", false},
		{"", "", false},
	}
	for _, c := range cases {
		type result struct {
			text string
			ok   bool
		}
		got := callLab(t, func() result {
			text, ok := ExpandPromptTemplate(c.input, templates)
			return result{text, ok}
		})
		if got.text != c.want || got.ok != c.wantOK {
			t.Errorf("ExpandPromptTemplate(%q) = %q, %v; want %q, %v", c.input, got.text, got.ok, c.want, c.wantOK)
		}
	}
}

// --- helpers ----------------------------------------------------------------------------------

// ch12Trace collects lines from any goroutine.
type ch12Trace struct {
	mu    sync.Mutex
	lines []string
}

func (tr *ch12Trace) add(format string, args ...any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.lines = append(tr.lines, fmt.Sprintf(format, args...))
}

func (tr *ch12Trace) all() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string{}, tr.lines...)
}

// ch12PathSchema is the schema of the tools below: {"path": string}, nothing else.
const ch12PathSchema = `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`

// ch12Path returns the path of arguments the schema accepted.
func ch12Path(args json.RawMessage) string {
	var a struct{ Path string }
	_ = json.Unmarshal(args, &a)
	return a.Path
}

// ch12ReadTool is a tool named name taking {"path"}: its body adds "body ID ARGS" to tr (when
// tr is not nil) and answers "读到 PATH".
func ch12ReadTool(name string, tr *ch12Trace) Tool {
	return Tool{
		ToolDefinition: ToolDefinition{Name: name, Parameters: ch12PathSchema},
		Execute: func(_ context.Context, args json.RawMessage, _ ToolExecContext) (ToolOutput, error) {
			if tr != nil {
				tr.add("body %s", args)
			}
			return ToolOutput{Content: []ContentBlock{Text("读到 " + ch12Path(args))}}, nil
		},
	}
}

// ch12Call is a call of tool name with the given arguments.
func ch12Call(id, name, args string) ToolCall {
	return ToolCall{ID: id, Name: name, Arguments: args}
}

// ch12ToolUse is an assistant message asking for calls.
func ch12ToolUse(calls ...ToolCall) AssistantMessage {
	var content []ContentBlock
	for _, c := range calls {
		content = append(content, c)
	}
	return AssistantMessage{Content: content, StopReason: StopReasonToolUse}
}

// ch12Results renders the tool results of a transcript, in transcript order:
// "c1 error=false 读到 a.md".
func ch12Results(messages []Message) []string {
	out := []string{}
	for _, m := range messages {
		if r, ok := m.(ToolResultMessage); ok {
			out = append(out, fmt.Sprintf("%s error=%v %s", r.ToolCallID, r.IsError, TextOf(r.Content)))
		}
	}
	return out
}

// ch12Run runs the loop with opts (OnEvent is set here) and returns its result and what it
// reported: "start c1", "end c1", "turn_end stop 2". It fails the test when the run does not
// return within ch10Patience or returns an error.
func ch12Run(t *testing.T, opts AgentLoopOptions) (AgentRunResult, []string) {
	t.Helper()
	result, events, _ := ch12RunWith(t, opts, nil)
	return result, events
}

// ch12RunWith is ch12Run that also adds each reported event to tr, when tr is set, as it
// happens, and returns the error of RunAgentLoop instead of failing on it. An OnEvent already in
// opts is called too, first.
func ch12RunWith(t *testing.T, opts AgentLoopOptions, tr *ch12Trace) (AgentRunResult, []string, error) {
	t.Helper()
	return ch12RunIn(t, context.Background(), opts, tr)
}

// ch12RunIn is ch12RunWith with the run's context.
func ch12RunIn(t *testing.T, ctx context.Context, opts AgentLoopOptions, tr *ch12Trace) (AgentRunResult, []string, error) {
	t.Helper()
	var events []string
	also := opts.OnEvent
	opts.OnEvent = func(e LoopEvent) {
		if also != nil {
			also(e)
		}
		line := ""
		switch e := e.(type) {
		case ToolStartEvent:
			line = "start " + e.Call.ID
		case ToolEndEvent:
			line = "end " + e.Result.ToolCallID
		case TurnEndEvent:
			line = fmt.Sprintf("turn_end %s %d", e.Reason, e.Steps)
		default:
			return
		}
		events = append(events, line)
		if tr != nil {
			tr.add("%s", line)
		}
	}
	type outcome struct {
		result AgentRunResult
		err    error
	}
	returned := false
	o := ch10Within(t, "RunAgentLoop", "a tool body, a hook or the loop waits for something that never comes", func() outcome {
		var o outcome
		runLab(t, func() { o.result, o.err = RunAgentLoop(ctx, opts) })
		returned = true
		return o
	})
	if !returned {
		t.FailNow() // the run did not return (its failure is reported above)
	}
	if o.err != nil && tr == nil {
		t.Fatalf("RunAgentLoop: %v", o.err)
	}
	return o.result, events, o.err
}

// ch12Answer is an assistant message that answers without tools.
func ch12Answer(text string) AssistantMessage {
	return AssistantMessage{Content: []ContentBlock{Text(text)}, StopReason: StopReasonStop}
}

// ch12End checks how a run ended.
func ch12End(t *testing.T, result AgentRunResult, reason RunReason, steps int) {
	t.Helper()
	if result.Reason != reason || result.Steps != steps {
		t.Errorf("the run ended with reason %q after %d steps, want %q after %d", result.Reason, result.Steps, reason, steps)
	}
}

// --- Lab 12.3 准备调用 ---------------------------------------------------------------------------

// ch12OldShapeTool is ch12ReadTool whose PrepareArguments accepts the old shape {"file": …} and
// adds "prepare ARGS" to tr for every call it prepares.
func ch12OldShapeTool(tr *ch12Trace) Tool {
	tool := ch12ReadTool("read", tr)
	tool.PrepareArguments = func(args json.RawMessage) (json.RawMessage, error) {
		tr.add("prepare %s", args)
		var old struct {
			File *string `json:"file"`
		}
		if json.Unmarshal(args, &old) == nil && old.File != nil {
			return json.RawMessage(`{"path":"` + *old.File + `"}`), nil
		}
		return args, nil
	}
	return tool
}

func TestLab12_3_准备调用_Order(t *testing.T) {
	tr := &ch12Trace{}
	model := NewScriptedModel(ch12ToolUse(
		ch12Call("c1", "read", `{"file":"a.md"}`), // the old shape: PrepareArguments turns it into {"path":"a.md"}
		ch12Call("c2", "nope", `{"path":"x"}`),    // no such tool
		ch12Call("c3", "read", `{"path":7}`),      // prepared as it is, then refused by the schema
		ch12Call("c4", "read", `{"path":"b.md"}`),
		ch12Call("c5", "read", ""), // no arguments: prepared as {}, then refused (path is required)
	), ch12Answer("好的"))
	result, _ := ch12Run(t, AgentLoopOptions{
		Model: model,
		Tools: MustRegistry(ch12OldShapeTool(tr)),
		Hooks: &LoopHooks{BeforeToolCall: func(_ context.Context, call ToolCall, args json.RawMessage) (ToolCallDecision, error) {
			tr.add("before %s %s", call.ID, args)
			return ToolCallDecision{}, nil
		}},
	})
	ch12End(t, result, RunStop, 2)
	// Every call is prepared on the run's goroutine, in call order; the bodies run afterwards
	// (in parallel: their order among themselves is not fixed, so they are listed last, sorted).
	trace := tr.all()
	var bodies []string
	prepared := []string{}
	for _, line := range trace {
		if strings.HasPrefix(line, "body ") {
			bodies = append(bodies, line)
		} else {
			prepared = append(prepared, line)
		}
	}
	slices.Sort(bodies)
	ch11Diff(t, "PrepareArguments and BeforeToolCall, in the order they were called", []string{
		`prepare {"file":"a.md"}`,
		`before c1 {"path":"a.md"}`,
		`prepare {"path":7}`,
		`prepare {"path":"b.md"}`,
		`before c4 {"path":"b.md"}`,
		`prepare {}`,
	}, prepared)
	ch11Diff(t, "the tool bodies (sorted)", []string{`body {"path":"a.md"}`, `body {"path":"b.md"}`}, bodies)
	got := ch12Results(result.Messages)
	if len(got) != 5 {
		t.Fatalf("the transcript holds %d tool results, want 5 (one per call): %q", len(got), got)
	}
	ch11Diff(t, "the results of c1, c2 and c4", []string{
		"c1 error=false 读到 a.md",
		"c2 error=true Tool nope not found",
		"c4 error=false 读到 b.md",
	}, []string{got[0], got[1], got[3]})
	for _, i := range []int{2, 4} {
		if want := fmt.Sprintf(`c%d error=true Validation failed for tool "read": `, i+1); !strings.HasPrefix(got[i], want) {
			t.Errorf("result %d is %q, want it to start with %q", i+1, got[i], want)
		}
	}
}

func TestLab12_3_准备调用_BeforeAnyBody(t *testing.T) {
	for _, logged := range []bool{false, true} {
		t.Run(fmt.Sprintf("session=%v", logged), func(t *testing.T) { ch12ParallelBatch(t, logged, true) })
	}
}

func TestLab12_3_准备调用_Block(t *testing.T) {
	tr := &ch12Trace{}
	s := NewSession("s")
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("整理 docs")})
	model := NewScriptedModel(ch12ToolUse(
		ch12Call("c1", "write", `{"path":"a.md"}`),
		ch12Call("c2", "write", `{"path":"b.md"}`),
		ch12Call("c3", "read", `{"path":"c.md"}`),
		ch12Call("c4", "read", `{"path":"d.md"}`),
	), ch12Answer("好的"))
	result, _ := ch12Run(t, AgentLoopOptions{
		Model:   model,
		Session: s,
		Tools:   MustRegistry(ch12ReadTool("read", tr), ch12ReadTool("write", tr)),
		Hooks: &LoopHooks{BeforeToolCall: func(_ context.Context, call ToolCall, _ json.RawMessage) (ToolCallDecision, error) {
			switch call.ID {
			case "c1":
				return ToolCallDecision{Block: true, Reason: "计划模式下不能写文件"}, nil
			case "c2":
				return ToolCallDecision{Block: true}, nil
			case "c4":
				return ToolCallDecision{Reason: "只是说明，不阻拦"}, nil // a reason without Block does not block
			}
			return ToolCallDecision{}, nil
		}},
	})
	ch12End(t, result, RunStop, 2)
	ch11Diff(t, "the results", []string{
		"c1 error=true 计划模式下不能写文件",
		"c2 error=true Tool execution was blocked",
		"c3 error=false 读到 c.md",
		"c4 error=false 读到 d.md",
	}, ch12Results(result.Messages))
	bodies := tr.all()
	slices.Sort(bodies)
	ch11Diff(t, "the tool bodies that ran (sorted)", []string{`body {"path":"c.md"}`, `body {"path":"d.md"}`}, bodies)
	// A blocked call never starts: no tool/start; its result points at its tool/call.
	ch11Diff(t, "the log", []string{
		"0 user/message user:整理 docs",
		"1 turn/start 1",
		"2 model/request through=1 messages=1",
		"3 assistant/message assistant:[c1 c2 c3 c4]",
		"4 tool/call c1",
		"5 tool/call c2",
		"6 tool/call c3",
		"7 tool/call c4",
	}, ch11Lines(ch11Events(t, s))[:min(8, len(ch11Events(t, s)))])
	var starts, results []string
	for _, line := range ch11Lines(ch11Events(t, s)) {
		if strings.Contains(line, " tool/start ") {
			starts = append(starts, line[strings.Index(line, " ")+1:])
		}
		if strings.Contains(line, " tool/result ") {
			results = append(results, line[strings.Index(line, " ")+1:])
		}
	}
	slices.Sort(starts)
	ch11Diff(t, "the tool/start events (sorted, without their seq)", []string{"tool/start c3 <-6", "tool/start c4 <-7"}, starts)
	ch11Diff(t, "the tool/result events (without their seq)", []string{"tool/result c1 <-4", "tool/result c2 <-5", "tool/result c3 <-6", "tool/result c4 <-7"}, results)
}

func TestLab12_3_准备调用_FailingHooks(t *testing.T) {
	tr := &ch12Trace{}
	tool := ch12ReadTool("read", tr)
	tool.PrepareArguments = func(args json.RawMessage) (json.RawMessage, error) {
		switch ch12Path(args) {
		case "bad":
			return nil, errors.New("参数形状不对")
		case "boom":
			panic("boom")
		}
		return args, nil
	}
	model := NewScriptedModel(ch12ToolUse(
		ch12Call("c1", "read", `{"path":"bad"}`),
		ch12Call("c2", "read", `{"path":"boom"}`),
		ch12Call("c3", "read", `{"path":"deny"}`),
		ch12Call("c4", "read", `{"path":"crash"}`),
		ch12Call("c5", "read", `{"path":"fine"}`),
	), ch12Answer("好的"))
	result, _ := ch12Run(t, AgentLoopOptions{
		Model: model,
		Tools: MustRegistry(tool),
		Hooks: &LoopHooks{BeforeToolCall: func(_ context.Context, _ ToolCall, args json.RawMessage) (ToolCallDecision, error) {
			switch ch12Path(args) {
			case "deny":
				return ToolCallDecision{}, errors.New("策略服务不可用")
			case "crash":
				panic("oops")
			}
			return ToolCallDecision{}, nil
		}},
	})
	// A failing hook answers its own call with an error result; the run goes on.
	ch12End(t, result, RunStop, 2)
	ch11Diff(t, "the results", []string{
		`c1 error=true Preparing arguments failed for tool "read": 参数形状不对`,
		`c2 error=true Preparing arguments failed for tool "read": prepareArguments panicked: boom`,
		`c3 error=true beforeToolCall failed for tool "read": 策略服务不可用`,
		`c4 error=true beforeToolCall failed for tool "read": beforeToolCall panicked: oops`,
		"c5 error=false 读到 fine",
	}, ch12Results(result.Messages))
	ch11Diff(t, "the tool bodies that ran", []string{`body {"path":"fine"}`}, tr.all())
}

// --- Lab 12.5 结果钩子 ---------------------------------------------------------------------------

// ch12RawTool answers every call with content "raw", details {"n": 1} and Terminate as given;
// a call whose path is "fail" fails with "磁盘满了".
func ch12RawTool(name string, terminate bool) Tool {
	return Tool{
		ToolDefinition: ToolDefinition{Name: name, Parameters: ch12PathSchema},
		Execute: func(_ context.Context, args json.RawMessage, _ ToolExecContext) (ToolOutput, error) {
			if ch12Path(args) == "fail" {
				return ToolOutput{}, errors.New("磁盘满了")
			}
			return ToolOutput{Content: []ContentBlock{Text("raw")}, Details: map[string]any{"n": 1}, Terminate: terminate}, nil
		},
	}
}

// ch12Detailed renders the tool results of a transcript with their details:
// "a error=false raw map[n:1]".
func ch12Detailed(messages []Message) []string {
	out := []string{}
	for _, m := range messages {
		if r, ok := m.(ToolResultMessage); ok {
			out = append(out, fmt.Sprintf("%s error=%v %s %v", r.ToolCallID, r.IsError, TextOf(r.Content), r.Details))
		}
	}
	return out
}

func ch12Bool(b bool) *bool { return &b }

func TestLab12_5_结果钩子_Overrides(t *testing.T) {
	tr := &ch12Trace{}
	model := NewScriptedModel(ch12ToolUse(
		ch12Call("a", "t", `{"path":"a"}`),
		ch12Call("b", "t", `{"path":"b"}`),
		ch12Call("c", "t", `{"path":"c"}`),
		ch12Call("d", "t", `{"path":"d"}`),
		ch12Call("e", "nope", `{}`),
		ch12Call("f", "t", `{"path":"fail"}`),
		ch12Call("g", "t", `{"path":"g"}`),
	), ch12Answer("好的"))
	result, _ := ch12Run(t, AgentLoopOptions{
		Model: model,
		Tools: MustRegistry(ch12RawTool("t", false)),
		Hooks: &LoopHooks{AfterToolCall: func(_ context.Context, call ToolCall, out ToolCallOutcome) (ToolResultOverride, error) {
			tr.add("%s got %s %v error=%v terminate=%v", call.ID, TextOf(out.Content), out.Details, out.IsError, out.Terminate)
			switch call.ID {
			case "a":
				return ToolResultOverride{Content: []ContentBlock{Text("已脱敏")}}, nil
			case "b":
				return ToolResultOverride{IsError: ch12Bool(true)}, nil
			case "c":
				return ToolResultOverride{Details: map[string]any{"m": 2}}, nil
			case "d":
				out.Details["n"] = 99 // the hook's own copy: what it does not return does not count
				out.Content[0] = Text("改了")
			case "g":
				// Empty but set: not nil, so they replace the tool's content and details.
				return ToolResultOverride{Content: []ContentBlock{}, Details: map[string]any{}}, nil
			}
			return ToolResultOverride{}, nil
		}},
	})
	ch12End(t, result, RunStop, 2)
	// Each field the hook set replaces the tool's; the others stay.
	ch11Diff(t, "the results", []string{
		"a error=false 已脱敏 map[n:1]",
		"b error=true raw map[n:1]",
		"c error=false raw map[m:2]",
		"d error=false raw map[n:1]",
		"e error=true Tool nope not found map[]",
		"f error=true 磁盘满了 map[]",
		"g error=false  map[]",
	}, ch12Detailed(result.Messages))
	got := tr.all()
	slices.Sort(got)
	// The hook sees every call whose tool ran, a failed one too, and not a refused call (e).
	ch11Diff(t, "what AfterToolCall was given (sorted)", []string{
		"a got raw map[n:1] error=false terminate=false",
		"b got raw map[n:1] error=false terminate=false",
		"c got raw map[n:1] error=false terminate=false",
		"d got raw map[n:1] error=false terminate=false",
		"f got 磁盘满了 map[] error=true terminate=false",
		"g got raw map[n:1] error=false terminate=false",
	}, got)
}

func TestLab12_5_结果钩子_FailingHook(t *testing.T) {
	model := NewScriptedModel(ch12ToolUse(
		ch12Call("a", "finish", `{"path":"a"}`),
		ch12Call("b", "finish", `{"path":"b"}`),
		ch12Call("c", "finish", `{"path":"c"}`),
	), ch12Answer("好的"))
	result, _ := ch12Run(t, AgentLoopOptions{
		Model: model,
		Tools: MustRegistry(ch12RawTool("finish", true)),
		Hooks: &LoopHooks{AfterToolCall: func(_ context.Context, call ToolCall, _ ToolCallOutcome) (ToolResultOverride, error) {
			switch call.ID {
			case "a":
				return ToolResultOverride{Terminate: ch12Bool(true)}, errors.New("审计日志写不进去")
			case "b":
				panic("boom")
			}
			return ToolResultOverride{}, nil
		}},
	})
	// A failed hook turns its call's result into an error result that does not ask to terminate,
	// so the batch does not end the run: the model is asked again.
	ch11Diff(t, "the results", []string{
		`a error=true afterToolCall failed for tool "finish": 审计日志写不进去 map[]`,
		`b error=true afterToolCall failed for tool "finish": afterToolCall panicked: boom map[]`,
		"c error=false raw map[n:1]",
	}, ch12Detailed(result.Messages))
	if result.Reason == RunTerminated {
		t.Errorf("the run ended with reason %q: a call whose AfterToolCall failed must not ask to terminate", result.Reason)
	}
	ch12End(t, result, RunStop, 2)
}

func TestLab12_5_结果钩子_Terminate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		calls  []ToolCall
		after  func(ToolCall) ToolResultOverride // nil: no hook
		reason RunReason
		steps  int
	}{
		{"one call that terminates", []ToolCall{ch12Call("a", "finish", `{"path":"a"}`)}, nil, RunTerminated, 1},
		{"every call terminates", []ToolCall{ch12Call("a", "finish", `{"path":"a"}`), ch12Call("b", "finish", `{"path":"b"}`)}, nil, RunTerminated, 1},
		{"one of two terminates", []ToolCall{ch12Call("a", "finish", `{"path":"a"}`), ch12Call("b", "plain", `{"path":"b"}`)}, nil, RunStop, 2},
		{"only the last call terminates", []ToolCall{ch12Call("a", "plain", `{"path":"a"}`), ch12Call("b", "finish", `{"path":"b"}`)}, nil, RunStop, 2},
		{"the other call is refused", []ToolCall{ch12Call("a", "finish", `{"path":"a"}`), ch12Call("b", "nope", `{}`)}, nil, RunStop, 2},
		{"the other call fails", []ToolCall{ch12Call("a", "finish", `{"path":"a"}`), ch12Call("b", "finish", `{"path":"fail"}`)}, nil, RunStop, 2},
		{"the hook asks every call to terminate", []ToolCall{ch12Call("a", "plain", `{"path":"a"}`), ch12Call("b", "plain", `{"path":"b"}`)},
			func(ToolCall) ToolResultOverride { return ToolResultOverride{Terminate: ch12Bool(true)} }, RunTerminated, 1},
		{"the hook takes one call's terminate back", []ToolCall{ch12Call("a", "finish", `{"path":"a"}`), ch12Call("b", "finish", `{"path":"b"}`)},
			func(c ToolCall) ToolResultOverride {
				if c.ID == "b" {
					return ToolResultOverride{Terminate: ch12Bool(false)}
				}
				return ToolResultOverride{}
			}, RunStop, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := NewScriptedModel(ch12ToolUse(tc.calls...), ch12Answer("好的"))
			s := NewSession("s")
			ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("收尾")})
			opts := AgentLoopOptions{Model: model, Session: s, Tools: MustRegistry(ch12RawTool("finish", true), ch12RawTool("plain", false))}
			if tc.after != nil {
				opts.Hooks = &LoopHooks{AfterToolCall: func(_ context.Context, call ToolCall, _ ToolCallOutcome) (ToolResultOverride, error) {
					return tc.after(call), nil
				}}
			}
			result, events := ch12Run(t, opts)
			if result.Reason != tc.reason || result.Steps != tc.steps {
				t.Errorf("%s: the run ended with reason %q after %d steps, want %q after %d", tc.name, result.Reason, result.Steps, tc.reason, tc.steps)
			}
			if model.Calls() != tc.steps {
				t.Errorf("the model was asked %d times, want %d", model.Calls(), tc.steps)
			}
			if want := fmt.Sprintf("turn_end %s %d", tc.reason, tc.steps); len(events) == 0 || events[len(events)-1] != want {
				t.Errorf("the last event is %q, want %q", events[len(events)-1:], want)
			}
			lines := ch11Lines(ch11Events(t, s))
			want := "turn/end 1 terminated"
			if tc.reason != RunTerminated {
				want = "turn/end 2 stop"
			}
			if last := lines[len(lines)-1]; !strings.HasSuffix(last, want) {
				t.Errorf("the log ends with %q, want a %q", last, want)
			}
		})
	}

	// ctx is cancelled while the batch runs, and the batch asks to end: cancellation is checked
	// first (afterTurn calls stopAfterTools before stopAfterBatch), so the run ends aborted.
	t.Run("cancelled during a batch that asks to end", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		tool := Tool{
			ToolDefinition: ToolDefinition{Name: "finish", Parameters: ch12PathSchema},
			Execute: func(context.Context, json.RawMessage, ToolExecContext) (ToolOutput, error) {
				cancel() // the user interrupts the run while its last call runs
				return ToolOutput{Content: []ContentBlock{Text("raw")}, Terminate: true}, nil
			},
		}
		model := NewScriptedModel(ch12ToolUse(ch12Call("a", "finish", `{"path":"a"}`)), ch12Answer("好的"))
		s := NewSession("s")
		ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("收尾")})
		result, events, err := ch12RunIn(t, ctx, AgentLoopOptions{Model: model, Session: s, Tools: MustRegistry(tool)}, nil)
		if err != nil {
			t.Fatalf("RunAgentLoop: %v", err)
		}
		ch12End(t, result, RunAborted, 1)
		if want := "turn_end aborted 1"; len(events) == 0 || events[len(events)-1] != want {
			t.Errorf("the last event is %q, want %q", events[len(events)-1:], want)
		}
		lines := ch11Lines(ch11Events(t, s))
		if last := lines[len(lines)-1]; !strings.HasSuffix(last, "turn/end 1 aborted") {
			t.Errorf("the log ends with %q, want a %q", last, "turn/end 1 aborted")
		}
	})
	// The loop never hands batchTerminates an empty batch, but the card says what it answers
	// then: no call asked to end, so nothing ends.
	t.Run("an empty batch", func(t *testing.T) {
		if callLab(t, func() bool { return batchTerminates(nil) }) {
			t.Error("batchTerminates of an empty batch = true, want false: no call asked to end the run")
		}
	})
}

// --- Lab 12.4 执行模式 ---------------------------------------------------------------------------

func TestLab12_4_执行模式_Parallel(t *testing.T) {
	for _, logged := range []bool{false, true} {
		t.Run(fmt.Sprintf("session=%v", logged), func(t *testing.T) { ch12ParallelBatch(t, logged, false) })
	}
}

// ch12ParallelBatch runs a batch of three calls in parallel mode, with or without a session.
// With hooked set, the run has a BeforeToolCall hook that checks no body starts before every call
// is prepared and takes the default mode; without it, the run asks for ToolParallel by name.
func ch12ParallelBatch(t *testing.T, logged, hooked bool) {
	const n = 3
	tr := &ch12Trace{}
	var bodiesStarted atomic.Int32
	started := make(chan struct{}, n)
	allStarted := make(chan struct{})
	var once sync.Once
	ended := map[string]chan struct{}{"c1": make(chan struct{}), "c2": make(chan struct{}), "c3": make(chan struct{})}
	// Each body waits until every body has started (they run at the same time), then c3
	// returns first, c2 once c3's tool_end was reported, c1 once c2's was.
	tool := Tool{
		ToolDefinition: ToolDefinition{Name: "slow", Parameters: ch12PathSchema},
		Execute: func(ctx context.Context, args json.RawMessage, _ ToolExecContext) (ToolOutput, error) {
			id := ch12Path(args)
			bodiesStarted.Add(1)
			started <- struct{}{}
			if len(started) == n {
				once.Do(func() { close(allStarted) })
			}
			select {
			case <-allStarted:
			case <-time.After(ch10Patience / 5):
				return ToolOutput{}, errors.New("the other bodies never started: the calls did not run at the same time")
			}
			switch id {
			case "c1":
				<-ended["c2"]
			case "c2":
				<-ended["c3"]
			}
			return ToolOutput{Content: []ContentBlock{Text("完成 " + id)}}, nil
		},
	}
	var s *Session
	if logged {
		s = NewSession("s")
		ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("并行")})
	}
	model := NewScriptedModel(ch12ToolUse(ch12Call("c1", "slow", `{"path":"c1"}`), ch12Call("c2", "slow", `{"path":"c2"}`), ch12Call("c3", "slow", `{"path":"c3"}`)), ch12Answer("好的"))
	early := false
	opts := AgentLoopOptions{
		Model: model, Session: s, Tools: MustRegistry(tool),
		OnEvent: func(e LoopEvent) {
			if end, ok := e.(ToolEndEvent); ok {
				close(ended[end.Result.ToolCallID])
			}
		},
	}
	if !hooked {
		opts.ToolExecution = ToolParallel // asked for by name: lab 12.4 decides what it means
	}
	if hooked {
		opts.Hooks = &LoopHooks{BeforeToolCall: func(_ context.Context, call ToolCall, _ json.RawMessage) (ToolCallDecision, error) {
			tr.add("before %s", call.ID)
			// Let any body that was already set going run, so that one started too early shows.
			for range 100 {
				runtime.Gosched()
			}
			if bodiesStarted.Load() > 0 {
				early = true
			}
			return ToolCallDecision{}, nil
		}}
	}
	result, events := ch12Run(t, opts)
	ch12End(t, result, RunStop, 2)
	if early {
		t.Fatalf("a tool body started while the batch was still being prepared: every call is prepared, in call order, before any body starts")
	}
	if got := tr.all(); hooked && !slices.Equal(got, []string{"before c1", "before c2", "before c3"}) {
		t.Fatalf("BeforeToolCall was called for %d calls, not once for each of c1, c2, c3 in call order", len(got))
	}
	ch11Diff(t, "the events", []string{"start c1", "start c2", "start c3", "end c3", "end c2", "end c1", "turn_end stop 2"}, events)
	ch11Diff(t, "the results (in call order, whatever order they finished in)", []string{
		"c1 error=false 完成 c1", "c2 error=false 完成 c2", "c3 error=false 完成 c3",
	}, ch12Results(result.Messages))
	if !logged {
		return
	}
	var results []string
	for _, line := range ch11Lines(ch11Events(t, s)) {
		if strings.Contains(line, " tool/result ") {
			results = append(results, line)
		}
	}
	ch11Diff(t, "the tool/result events (the commit cursor keeps call order)", []string{"10 tool/result c1 <-4", "11 tool/result c2 <-5", "12 tool/result c3 <-6"}, results)
}

func TestLab12_4_执行模式_Sequential(t *testing.T) {
	traced := func(tr *ch12Trace, name string, mode ToolExecutionMode) Tool {
		tool := ch12ReadTool(name, nil)
		tool.ExecutionMode = mode
		tool.Execute = func(_ context.Context, args json.RawMessage, _ ToolExecContext) (ToolOutput, error) {
			tr.add("body %s", ch12Path(args))
			return ToolOutput{Content: []ContentBlock{Text("ok")}}, nil
		}
		return tool
	}
	// Sequential: each call is announced, prepared (BeforeToolCall), run and ended before the next.
	sequential := []string{"start c1", "before c1", "body c1", "end c1", "start c2", "before c2", "body c2", "end c2", "turn_end stop 2"}
	for _, tc := range []struct {
		name  string
		mode  ToolExecutionMode
		tools func(*ch12Trace) []Tool
		calls []ToolCall
		want  []string // the whole trace, or its first lines when the rest has no fixed order
	}{
		{"the run is sequential", ToolSequential,
			func(tr *ch12Trace) []Tool { return []Tool{traced(tr, "plain", "")} },
			[]ToolCall{ch12Call("c1", "plain", `{"path":"c1"}`), ch12Call("c2", "plain", `{"path":"c2"}`)}, sequential},
		{"one tool of the batch is sequential", "",
			func(tr *ch12Trace) []Tool {
				return []Tool{traced(tr, "plain", ToolParallel), traced(tr, "careful", ToolSequential)}
			},
			[]ToolCall{ch12Call("c1", "plain", `{"path":"c1"}`), ch12Call("c2", "careful", `{"path":"c2"}`)}, sequential},
		{"tools declared parallel", ToolParallel,
			func(tr *ch12Trace) []Tool { return []Tool{traced(tr, "plain", ToolParallel)} },
			[]ToolCall{ch12Call("c1", "plain", `{"path":"c1"}`), ch12Call("c2", "plain", `{"path":"c2"}`)},
			[]string{"start c1", "start c2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &ch12Trace{}
			model := NewScriptedModel(ch12ToolUse(tc.calls...), ch12Answer("好的"))
			result, _, err := ch12RunWith(t, AgentLoopOptions{
				Model: model, Tools: MustRegistry(tc.tools(tr)...), ToolExecution: tc.mode,
				Hooks: &LoopHooks{BeforeToolCall: func(_ context.Context, call ToolCall, _ json.RawMessage) (ToolCallDecision, error) {
					tr.add("before %s", call.ID)
					return ToolCallDecision{}, nil
				}},
			}, tr)
			if err != nil {
				t.Fatalf("RunAgentLoop: %v", err)
			}
			ch12End(t, result, RunStop, 2)
			got := tr.all()
			if len(tc.want) == len(sequential) {
				at := func(line string) int { return slices.Index(got, line) }
				switch {
				case at("start c2") < at("end c1"):
					t.Fatalf("%s: c2 started before c1 ended, so the calls did not run one after the other", tc.name)
				case at("before c2") < at("end c1"):
					t.Fatalf("%s: c2 was prepared (BeforeToolCall) before c1 ended: in sequential mode each call is prepared only when the one before it is done", tc.name)
				case at("before c1") < at("start c1"):
					t.Fatalf("%s: c1 was prepared before its tool_start: announce a call, then prepare it", tc.name)
				}
			}
			ch11Diff(t, tc.name+": what happened, in order", tc.want, got[:min(len(tc.want), len(got))])
			ch11Diff(t, "the results", []string{"c1 error=false ok", "c2 error=false ok"}, ch12Results(result.Messages))
		})
	}

	// Sequential with a session: each call that runs logs its tool/start just before its body;
	// a refused call (c2, blocked) never started and logs none; results are logged as each call
	// finishes, in call order.
	s := NewSession("s")
	ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("一个一个来")})
	model := NewScriptedModel(ch12ToolUse(ch12Call("c1", "read", `{"path":"a.md"}`), ch12Call("c2", "read", `{"path":"b.md"}`),
		ch12Call("c3", "read", `{"path":"c.md"}`)), ch12Answer("好的"))
	result, _ := ch12Run(t, AgentLoopOptions{
		Model: model, Session: s, ToolExecution: ToolSequential, Tools: MustRegistry(ch12ReadTool("read", nil)),
		Hooks: &LoopHooks{BeforeToolCall: func(_ context.Context, call ToolCall, _ json.RawMessage) (ToolCallDecision, error) {
			return ToolCallDecision{Block: call.ID == "c2"}, nil
		}},
	})
	ch12End(t, result, RunStop, 2)
	ch11Diff(t, "the log of a sequential batch whose second call is blocked", []string{
		"0 user/message user:一个一个来",
		"1 turn/start 1",
		"2 model/request through=1 messages=1",
		"3 assistant/message assistant:[c1 c2 c3]",
		"4 tool/call c1",
		"5 tool/call c2",
		"6 tool/call c3",
		"7 tool/start c1 <-4",
		"8 tool/result c1 <-4",
		"9 tool/result c2 <-5",
		"10 tool/start c3 <-6",
		"11 tool/result c3 <-6",
		"12 turn/end 1 toolUse",
		"13 turn/start 2",
		"14 model/request through=13 messages=5",
		"15 assistant/message assistant:好的",
		"16 turn/end 2 stop",
	}, ch11Lines(ch11Events(t, s)))
}

func TestLab12_4_执行模式_Pool(t *testing.T) {
	// The run goes on in a synctest bubble: synctest.Wait returns once every goroutine of the run is
	// blocked, so "how many bodies are running now" is read when nothing more can start.
	synctest.Test(t, func(t *testing.T) {
		const calls, limit = 5, 2
		var active, most atomic.Int32
		release := make(chan struct{})
		tool := Tool{
			ToolDefinition: ToolDefinition{Name: "wait", Parameters: ch12PathSchema},
			Execute: func(_ context.Context, _ json.RawMessage, _ ToolExecContext) (ToolOutput, error) {
				now := active.Add(1)
				for {
					m := most.Load()
					if now <= m || most.CompareAndSwap(m, now) {
						break
					}
				}
				<-release
				active.Add(-1)
				return ToolOutput{Content: []ContentBlock{Text("ok")}}, nil
			},
		}
		var batch []ToolCall
		for i := range calls {
			id := fmt.Sprintf("c%d", i+1)
			batch = append(batch, ch12Call(id, "wait", `{"path":"`+id+`"}`))
		}
		model := NewScriptedModel(ch12ToolUse(batch...), ch12Answer("好的"))
		type outcome struct {
			result AgentRunResult
			panic  any
		}
		runDone := make(chan outcome, 1)
		go func() {
			var o outcome
			defer func() {
				o.panic = recover() // a stub's panic: reported below through the lab guard's words
				runDone <- o
			}()
			o.result, _ = RunAgentLoop(context.Background(), AgentLoopOptions{Model: model, Tools: MustRegistry(tool), MaxParallelTools: limit})
		}()
		defer close(release) // on every way out, so that no body is left waiting
		// Let the bodies through one at a time: each release lets one body end and the next begin.
		for ended := 0; ended < calls; ended++ {
			synctest.Wait()
			select {
			case o := <-runDone:
				if o.panic != nil {
					failOnPanic(t, o.panic)
				}
				t.Fatalf("the run ended (%s) before every tool body had run", o.result.Reason)
			default:
			}
			if got, want := int(active.Load()), min(limit, calls-ended); got != want {
				t.Fatalf("%d tool bodies were running with %d of %d ended and MaxParallelTools %d, want %d", got, ended, calls, limit, want)
			}
			release <- struct{}{}
		}
		o := <-runDone
		if o.panic != nil {
			failOnPanic(t, o.panic)
		}
		ch12End(t, o.result, RunStop, 2)
		if got := most.Load(); got != limit {
			t.Errorf("at most %d tool bodies ran at once, want %d (MaxParallelTools)", got, limit)
		}
		// Options a run cannot honour are refused before anything runs.
		for _, bad := range []AgentLoopOptions{
			{Model: NewScriptedModel(), MaxParallelTools: -1},
			{Model: NewScriptedModel(), ToolExecution: "random"},
		} {
			if _, err := RunAgentLoop(context.Background(), bad); err == nil {
				t.Errorf("RunAgentLoop with MaxParallelTools %d and ToolExecution %q: no error, want one", bad.MaxParallelTools, bad.ToolExecution)
			}
		}
	})
}

// --- Lab 12.6 请求与回合钩子 -----------------------------------------------------------------------

// ch12Requests renders the messages of every request a scripted model received.
func ch12Requests(model *ScriptedModel) [][]string {
	out := [][]string{}
	for _, req := range model.Requests() {
		out = append(out, ch10Messages(req.Messages))
	}
	return out
}

func TestLab12_6_请求与回合钩子_TransformContext(t *testing.T) {
	for _, logged := range []bool{false, true} {
		t.Run(fmt.Sprintf("session=%v", logged), func(t *testing.T) { ch12Transform(t, logged) })
	}
	t.Run("overflow retry", ch12TransformRetry)
}

// ch12TransformRetry runs chapter 11's overflow retry with a TransformContext hook: the retry is
// a model request too, transformed and, with the session, followed by its model/context.
func ch12TransformRetry(t *testing.T) {
	s := ch11History(t) // 0 user u1 … 3 assistant a1 (usage 1000+10) … 6 user u3
	refusal := AssistantMessage{StopReason: StopReasonError, ErrorMessage: "400: prompt is too long: 213000 tokens > 200000 maximum"}
	model := NewScriptedModel(refusal, ch12Answer("done"))
	tr := &ch12Trace{}
	result, _ := ch12Run(t, AgentLoopOptions{
		Model: model, Session: s,
		Compaction: &CompactionOptions{Model: NewScriptedModel(ch12Answer("S")), KeepRecentTokens: 1},
		Hooks: &LoopHooks{TransformContext: func(_ context.Context, messages []Message) ([]Message, error) {
			last := messages[len(messages)-1]
			tr.add("%d messages, the last %s", len(messages), ch10Message(last))
			return []Message{UserText("[前文已省略]"), last}, nil
		}},
	})
	ch12End(t, result, RunStop, 1)
	ch11Diff(t, "what TransformContext was given (the request, then its retry after the compaction)", []string{
		"4 messages, the last user:u3",
		"2 messages, the last user:u3",
	}, tr.all())
	if requests := ch12Requests(model); len(requests) == 2 {
		ch11Diff(t, "the retried request", []string{"user:[前文已省略]", "user:u3"}, requests[1])
	} else {
		t.Errorf("the model got %d requests, want 2 (the refused one and its retry)", len(requests))
	}
	ch11Diff(t, "the log of the turn", []string{
		"7 turn/start 1",
		"8 model/request through=7 messages=4",
		"9 model/context <-8",
		"10 compaction first=6 overflow tokens=1012 read=[] changed=[]",
		"11 model/request through=10 messages=2",
		"12 model/context <-11",
		"13 assistant/message assistant:done",
		"14 turn/end 1 stop",
	}, ch11From(ch11Lines(ch11Events(t, s)), 7))
}

// ch12Transform runs two turns with a TransformContext hook, with or without a session.
func ch12Transform(t *testing.T, logged bool) {
	var s *Session
	var input []Message
	if logged {
		s = NewSession("s")
		ch10Append(t, s, SessionEvent{Type: EventUserMessage, Message: UserText("读 a.md")})
	} else {
		input = []Message{UserText("读 a.md")}
	}
	model := NewScriptedModel(ch12ToolUse(ch12Call("c1", "read", `{"path":"a.md"}`)), ch12Answer("好的"))
	tr := &ch12Trace{}
	result, _ := ch12Run(t, AgentLoopOptions{
		Model: model, Session: s, Tools: MustRegistry(ch12ReadTool("read", nil)), Context: AgentContext{Messages: input},
		Hooks: &LoopHooks{TransformContext: func(_ context.Context, messages []Message) ([]Message, error) {
			tr.add("%q", ch10Messages(messages))
			last := messages[len(messages)-1]
			messages[0] = UserText("改掉了") // the hook's own copy: the log and the transcript keep theirs
			return []Message{UserText("[前文已省略]"), last}, nil
		}},
	})
	ch12End(t, result, RunStop, 2)
	ch11Diff(t, "what TransformContext was given, request by request", []string{
		`["user:读 a.md"]`,
		`["user:读 a.md" "assistant:[c1]" "toolResult:c1=读到 a.md"]`,
	}, tr.all())
	requests := ch12Requests(model)
	if len(requests) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(requests))
	}
	ch11Diff(t, "the first request", []string{"user:[前文已省略]", "user:读 a.md"}, requests[0])
	ch11Diff(t, "the second request", []string{"user:[前文已省略]", "toolResult:c1=读到 a.md"}, requests[1])
	ch11Diff(t, "the run's transcript", []string{"user:读 a.md", "assistant:[c1]", "toolResult:c1=读到 a.md", "assistant:好的"}, ch10Messages(result.Messages))
	if !logged {
		ch11Diff(t, "the caller's messages", []string{"user:读 a.md"}, ch10Messages(input))
		return
	}
	events := ch11Events(t, s)
	ch11Diff(t, "the log", []string{
		"0 user/message user:读 a.md",
		"1 turn/start 1",
		"2 model/request through=1 messages=1",
		"3 model/context <-2",
		"4 assistant/message assistant:[c1]",
		"5 tool/call c1",
		"6 tool/start c1 <-5",
		"7 tool/result c1 <-5",
		"8 turn/end 1 toolUse",
		"9 turn/start 2",
		"10 model/request through=9 messages=3",
		"11 model/context <-10",
		"12 assistant/message assistant:好的",
		"13 turn/end 2 stop",
	}, ch11Lines(events))
	// The model/context event holds what the model saw, and is ignorable.
	for _, seq := range []int{3, 11} {
		if seq >= len(events) {
			break
		}
		e := events[seq]
		var data struct{ Messages json.RawMessage }
		if err := json.Unmarshal(e.Raw, &data); err != nil || !e.Ignorable {
			t.Errorf("event %d: ignorable=%v, data %s (%v); want an ignorable event whose data is {\"messages\": [...]}", seq, e.Ignorable, e.Raw, err)
			continue
		}
		got, err := UnmarshalMessages(data.Messages)
		if err != nil {
			t.Errorf("event %d: the messages do not decode: %v", seq, err)
			continue
		}
		ch11Diff(t, fmt.Sprintf("the messages of event %d", seq), requests[(seq-3)/8], ch10Messages(got))
	}
}

func TestLab12_6_请求与回合钩子_TransformFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		hook func() ([]Message, error)
		want string
	}{
		{"error", func() ([]Message, error) { return nil, errors.New("摘要服务不可用") }, "transformContext failed: 摘要服务不可用"},
		{"panic", func() ([]Message, error) { panic("boom") }, "transformContext failed: transformContext panicked: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := NewScriptedModel(ch12Answer("不该被问到"))
			result, _ := ch12Run(t, AgentLoopOptions{
				Model:   model,
				Context: AgentContext{Messages: []Message{UserText("你好")}},
				Hooks:   &LoopHooks{TransformContext: func(context.Context, []Message) ([]Message, error) { return tc.hook() }},
			})
			ch12End(t, result, RunError, 1)
			if model.Calls() != 0 {
				t.Errorf("the model was asked %d times, want 0: a failed transform fails the turn before the request", model.Calls())
			}
			last, _ := result.Messages[len(result.Messages)-1].(AssistantMessage)
			if last.StopReason != StopReasonError || last.ErrorMessage != tc.want {
				t.Errorf("the turn's assistant message has stop reason %q and error %q, want %q and %q", last.StopReason, last.ErrorMessage, StopReasonError, tc.want)
			}
		})
	}
}

func TestLab12_6_请求与回合钩子_ShouldStopAfterTurn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tool   string
		stop   func() bool
		reason RunReason
		steps  int
		asked  []string
	}{
		{"stop", "read", func() bool { return true }, RunStopRequested, 1,
			[]string{"steps=1 assistant:[c1 c2] results=[toolResult:c1=读到 a.md toolResult:c2=读到 b.md]"}},
		{"go on", "read", func() bool { return false }, RunStop, 2,
			[]string{"steps=1 assistant:[c1 c2] results=[toolResult:c1=读到 a.md toolResult:c2=读到 b.md]"}},
		{"panic", "read", func() bool { panic("boom") }, RunError, 1,
			[]string{"steps=1 assistant:[c1 c2] results=[toolResult:c1=读到 a.md toolResult:c2=读到 b.md]"}},
		{"the batch terminated", "finish", func() bool { return false }, RunTerminated, 1, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := []string{}
			model := NewScriptedModel(ch12ToolUse(ch12Call("c1", tc.tool, `{"path":"a.md"}`), ch12Call("c2", tc.tool, `{"path":"b.md"}`)), ch12Answer("好的"))
			result, events := ch12Run(t, AgentLoopOptions{
				Model: model, Tools: MustRegistry(ch12ReadTool("read", nil), ch12RawTool("finish", true)),
				Hooks: &LoopHooks{ShouldStopAfterTurn: func(_ context.Context, turn TurnSummary) bool {
					var results []string
					for _, r := range turn.Results {
						results = append(results, ch10Message(r))
					}
					asked = append(asked, fmt.Sprintf("steps=%d %s results=%v", turn.Steps, ch10Message(turn.Assistant), results))
					// The hook's own copies: what it changes in them is not the run's history.
					if len(turn.Results) > 0 && len(turn.Results[0].Content) > 0 {
						turn.Results[0].Content[0] = Text("改掉了")
					}
					if len(turn.Assistant.Content) > 0 {
						turn.Assistant.Content[0] = Text("改掉了")
					}
					return tc.stop()
				}},
			})
			ch12End(t, result, tc.reason, tc.steps)
			ch11Diff(t, "what ShouldStopAfterTurn was asked (it is not asked after a turn without tools)", tc.asked, asked)
			transcript := []string{"assistant:[c1 c2]", "toolResult:c1=读到 a.md", "toolResult:c2=读到 b.md"}
			if tc.tool == "finish" {
				transcript = []string{"assistant:[c1 c2]", "toolResult:c1=raw", "toolResult:c2=raw"}
			}
			ch11Diff(t, "the transcript's first turn after the hook changed its TurnSummary", transcript,
				ch10Messages(result.Messages)[:min(3, len(result.Messages))])
			if model.Calls() != tc.steps {
				t.Errorf("the model was asked %d times, want %d", model.Calls(), tc.steps)
			}
			if want := fmt.Sprintf("turn_end %s %d", tc.reason, tc.steps); len(events) == 0 || events[len(events)-1] != want {
				t.Errorf("the last event is %q, want %q", events[len(events)-1:], want)
			}
		})
	}
}
