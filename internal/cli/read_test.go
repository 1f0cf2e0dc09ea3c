package cli

import (
	"bytes"
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	course "github.com/learn-tinypi/course"
)

// runCourse runs the course command with args and env variables, stdout and stderr buffered (so
// not a terminal), and returns the exit code and both outputs.
func runCourse(t *testing.T, env map[string]string, look func(string) (string, error), args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, Env{
		Stdout:   &stdout,
		Stderr:   &stderr,
		Getenv:   func(k string) string { return env[k] },
		Content:  course.Content(),
		LookPath: look,
	})
	return code, stdout.String(), stderr.String()
}

func TestReadPrintsPlainMarkdownWhenNotATerminal(t *testing.T) {
	want, err := fs.ReadFile(course.Content(), "docs/07-agent-loop.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"read", "07"}, {"read", "7", "--plain"}} {
		code, stdout, stderr := runCourse(t, nil, nil, args...)
		if code != exitOK || stderr != "" {
			t.Errorf("course %v: exit %d, stderr %q; want 0 and nothing", args, code, stderr)
		}
		if diff := cmp.Diff(string(want), stdout); diff != "" {
			t.Errorf("course %v: stdout is not the chapter text (-want +got):\n%s", args, diff)
		}
	}
}

// contentWith is the course content with files replaced or added (a nil value hides the file).
type contentWith map[string][]byte

func (c contentWith) Open(name string) (fs.File, error) {
	if data, ok := c[name]; ok {
		if data == nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return fstest.MapFS{name: {Data: data}}.Open(name)
	}
	return course.Content().Open(name)
}

// runCourseWith is runCourse over content.
func runCourseWith(t *testing.T, content fs.FS, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, Env{
		Stdout:  &stdout,
		Stderr:  &stderr,
		Getenv:  func(k string) string { return env[k] },
		Content: content,
	})
	return code, stdout.String(), stderr.String()
}

func TestReadFollowsTheLanguage(t *testing.T) {
	content := contentWith{
		"docs/07-agent-loop.md":    []byte("# 中文正文\n"),
		"docs/07-agent-loop.en.md": []byte("# English text\n"),
	}
	for _, tt := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"read", "07"}, "# 中文正文\n"},
		{nil, []string{"--lang", "en", "read", "07"}, "# English text\n"},
		{map[string]string{"LANG": "en_US.UTF-8"}, []string{"read", "07"}, "# English text\n"},
		{map[string]string{"LANG": "en_US.UTF-8"}, []string{"--lang", "zh", "read", "07"}, "# 中文正文\n"},
	} {
		code, stdout, stderr := runCourseWith(t, content, tt.env, tt.args...)
		if code != exitOK || stderr != "" || stdout != tt.want {
			t.Errorf("course %v (env %v): exit %d, stdout %q, stderr %q; want 0, %q and nothing", tt.args, tt.env, code, stdout, stderr, tt.want)
		}
	}
}

func TestReadFallsBackToTheOtherLanguage(t *testing.T) {
	onlyZH := contentWith{"docs/07-agent-loop.md": []byte("# 中文正文\n"), "docs/07-agent-loop.en.md": nil}
	code, stdout, stderr := runCourseWith(t, onlyZH, nil, "--lang", "en", "read", "07")
	if code != exitOK || stdout != "# 中文正文\n" {
		t.Errorf("English wanted, only Chinese there: exit %d, stdout %q; want 0 and the Chinese text", code, stdout)
	}
	if want := "Chapter 07's text has no English version yet (docs/07-agent-loop.en.md); showing the Chinese one.\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	onlyEN := contentWith{"docs/07-agent-loop.md": nil, "docs/07-agent-loop.en.md": []byte("# English text\n")}
	code, stdout, stderr = runCourseWith(t, onlyEN, nil, "read", "07")
	if code != exitOK || stdout != "# English text\n" {
		t.Errorf("Chinese wanted, only English there: exit %d, stdout %q; want 0 and the English text", code, stdout)
	}
	if want := "第 07 章的正文还没有中文版（docs/07-agent-loop.md），下面是英文版。\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	neither := contentWith{"docs/07-agent-loop.md": nil, "docs/07-agent-loop.en.md": nil}
	if code, _, stderr := runCourseWith(t, neither, nil, "read", "07"); code == exitOK || !strings.Contains(stderr, "docs/07-agent-loop.md") {
		t.Errorf("no text at all: exit %d, stderr %q; want a failure naming the text", code, stderr)
	}
}

func TestReadUnknownChapterListsChapters(t *testing.T) {
	code, stdout, stderr := runCourse(t, nil, nil, "read", "99")
	if code != exitUsage || stdout != "" {
		t.Errorf("exit %d, stdout %q; want %d and nothing", code, stdout, exitUsage)
	}
	if !strings.Contains(stderr, "没有第 99 章") || !strings.Contains(stderr, "\n  07  Agent Loop") {
		t.Errorf("stderr does not name the chapter and list the chapters:\n%s", stderr)
	}
}

func TestReadRendersOnAColourTerminal(t *testing.T) {
	// Run cannot be given a terminal, so the app is made as Run makes it on one.
	var stdout, stderr bytes.Buffer
	a := &app{
		stdout:  &stdout,
		stderr:  &stderr,
		getenv:  func(k string) string { return map[string]string{"COLUMNS": "41"}[k] },
		content: course.Content(),
		color:   true,
	}
	c := a.readCommand()
	c.SetArgs([]string{"07"})
	c.SetOut(&stderr)
	c.SetErr(&stderr)
	if err := c.ExecuteContext(context.Background()); err != nil || stderr.Len() > 0 {
		t.Fatalf("course read 07: %v, stderr %q", err, stderr.String())
	}
	// The chapter's title and first paragraph, wrapped to COLUMNS-1 = 40 columns, Chinese
	// characters counting two.
	heading := "\x1b[1;4;35mAgent Loop：一次 README 往返怎样调用模型\x1b[0m\n\x1b[1;4;35m两次\x1b[0m\n"
	if !strings.HasPrefix(stdout.String(), heading) {
		t.Errorf("stdout does not start with the chapter's title as a styled heading %q:\n%q", heading, stdout.String()[:min(stdout.Len(), 200)])
	}
	want := "前几章分别做好了零件：事件流、消息模型、\n" +
		"会回放脚本的模型、带 schema 校验的工具执\n" +
		"行器。这一章把它们接成一个会自己转起来的\n"
	if !strings.Contains(stdout.String(), "\n\n"+want) {
		t.Errorf("stdout does not have the first paragraph wrapped to 40 columns:\n%s", stdout.String()[:min(stdout.Len(), 600)])
	}
}
