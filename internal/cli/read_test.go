package cli

import (
	"bytes"
	"context"
	"io/fs"
	"strings"
	"testing"

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

func TestReadInEnglishSaysTheTextIsChinese(t *testing.T) {
	code, stdout, stderr := runCourse(t, map[string]string{"LANG": "en_US.UTF-8"}, nil, "read", "07")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := "Chapter 07's text is in Chinese only for now; every lab has an English card: " +
		"labs/7.1.en.md … labs/7.5.en.md (in your practice directory; create one: course practice 07 DIR).\n"
	if diff := cmp.Diff(want, stderr); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(stdout, "# Agent Loop") {
		t.Errorf("stdout starts with %q, want the chapter's heading", stdout[:min(len(stdout), 40)])
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
