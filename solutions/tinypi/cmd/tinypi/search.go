package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"syscall"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// The search tools, ls, find and grep, let the agent see a repository it was not told about,
// also when it runs read-only. They are the command's, next to the runtime's coding tools, and
// confined the same way: every path goes through tinypi.LocalPath and an os.Root opened on the
// workspace, so nothing outside it is listed or read, and a symbolic link is listed as a link,
// never followed. Their output is bounded (searchMaxResults lines, searchMaxVisit entries walked,
// files over grepMaxFileBytes and binary files skipped).
const (
	searchMaxResults  = 200
	searchMaxVisit    = 50000
	grepMaxFileBytes  = 1 << 20
	grepMaxLineLength = 300
)

// searchTools are ls, find and grep on the workspace root.
func searchTools(root *os.Root) []tinypi.Tool {
	s := searcher{root: root, fsys: root.FS()}
	return []tinypi.Tool{
		{ToolDefinition: tinypi.ToolDefinition{
			Name:        "ls",
			Description: "List a directory of the workspace: one entry a line, directories end with /, links with @.",
			Parameters:  `{"type":"object","properties":{"path":{"type":"string","description":"directory relative to the workspace; default ."}},"additionalProperties":false}`,
		}, Execute: s.ls},
		{ToolDefinition: tinypi.ToolDefinition{
			Name:        "find",
			Description: "Find files of the workspace whose name (or, for a pattern with /, whose path) matches a glob pattern such as *.go or cmd/*/main.go. .git and .tinypi are skipped.",
			Parameters:  `{"type":"object","properties":{"pattern":{"type":"string","minLength":1},"path":{"type":"string","description":"directory to search; default ."}},"required":["pattern"],"additionalProperties":false}`,
		}, Execute: s.find},
		{ToolDefinition: tinypi.ToolDefinition{
			Name:        "grep",
			Description: "Search the text files of the workspace for a regular expression (Go RE2 syntax); glob limits the files by name. Prints path:line: text.",
			Parameters:  `{"type":"object","properties":{"pattern":{"type":"string","minLength":1},"path":{"type":"string","description":"directory or file to search; default ."},"glob":{"type":"string"}},"required":["pattern"],"additionalProperties":false}`,
		}, Execute: s.grep},
	}
}

// searcher runs the search tools on the workspace's root (fsys is its fs.FS).
type searcher struct {
	root *os.Root
	fsys fs.FS
}

// localDir is the call's path made local ("." when empty).
func localDir(p string) (string, error) {
	if p == "" || p == "." {
		return ".", nil
	}
	return tinypi.LocalPath(p)
}

func (s searcher) ls(ctx context.Context, raw json.RawMessage, _ tinypi.ToolExecContext) (tinypi.ToolOutput, error) {
	var args struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return tinypi.ToolOutput{}, err
	}
	dir, err := localDir(args.Path)
	if err != nil {
		return tinypi.ToolOutput{}, fmt.Errorf("ls %s: %w", args.Path, err)
	}
	entries, err := fs.ReadDir(s.fsys, dir)
	if err != nil {
		return tinypi.ToolOutput{}, fmt.Errorf("ls %s: %w", args.Path, err)
	}
	var lines []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			name += "@"
		case e.IsDir():
			name += "/"
		}
		lines = append(lines, name)
	}
	return resultLines(lines[:min(len(lines), searchMaxResults)], "entries", len(entries)), nil
}

func (s searcher) find(ctx context.Context, raw json.RawMessage, _ tinypi.ToolExecContext) (tinypi.ToolOutput, error) {
	var args struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return tinypi.ToolOutput{}, err
	}
	if _, err := path.Match(args.Pattern, ""); err != nil {
		return tinypi.ToolOutput{}, fmt.Errorf("find: pattern %q: %w", args.Pattern, err)
	}
	dir, err := localDir(args.Path)
	if err != nil {
		return tinypi.ToolOutput{}, fmt.Errorf("find %s: %w", args.Path, err)
	}
	var found []string
	matches := 0
	err = s.walk(ctx, dir, func(p string, d fs.DirEntry) error {
		subject := d.Name()
		if strings.Contains(args.Pattern, "/") {
			subject = p
		}
		if ok, _ := path.Match(args.Pattern, subject); ok {
			matches++
			if len(found) < searchMaxResults {
				if d.IsDir() {
					p += "/"
				}
				found = append(found, p)
			}
		}
		return nil
	})
	if err != nil {
		return tinypi.ToolOutput{}, fmt.Errorf("find: %w", err)
	}
	return resultLines(found, "matches", matches), nil
}

func (s searcher) grep(ctx context.Context, raw json.RawMessage, _ tinypi.ToolExecContext) (tinypi.ToolOutput, error) {
	var args struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
		Glob    string `json:"glob"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return tinypi.ToolOutput{}, err
	}
	re, err := regexp.Compile(args.Pattern)
	if err != nil {
		return tinypi.ToolOutput{}, fmt.Errorf("grep: %w", err)
	}
	if _, err := path.Match(args.Glob, ""); err != nil {
		return tinypi.ToolOutput{}, fmt.Errorf("grep: glob %q: %w", args.Glob, err)
	}
	dir, err := localDir(args.Path)
	if err != nil {
		return tinypi.ToolOutput{}, fmt.Errorf("grep %s: %w", args.Path, err)
	}
	var found []string
	matches := 0
	err = s.walk(ctx, dir, func(p string, d fs.DirEntry) error {
		if !d.Type().IsRegular() {
			return nil // directories, links, devices, FIFOs
		}
		if args.Glob != "" {
			if ok, _ := path.Match(args.Glob, d.Name()); !ok {
				return nil
			}
		}
		n, lines := s.grepFile(p, re, searchMaxResults-len(found))
		matches += n
		found = append(found, lines...)
		return nil
	})
	if err != nil {
		return tinypi.ToolOutput{}, fmt.Errorf("grep: %w", err)
	}
	return resultLines(found, "matching lines", matches), nil
}

// grepFile returns how many lines of the file at p match re and the first room of them as
// "p:N: text"; a file too large or not text is skipped.
func (s searcher) grepFile(p string, re *regexp.Regexp, room int) (int, []string) {
	// O_NONBLOCK: a file replaced by a FIFO since the walk saw it must not hang the call; Stat
	// below refuses it.
	f, err := s.root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, nil
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() || info.Size() > grepMaxFileBytes {
		return 0, nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, grepMaxFileBytes)
	var lines []string
	n := 0
	for i := 1; sc.Scan(); i++ {
		line := sc.Text()
		if strings.IndexByte(line, 0) >= 0 {
			return 0, nil // binary
		}
		if re.MatchString(line) {
			n++
			if len(lines) < room {
				if r := []rune(line); len(r) > grepMaxLineLength {
					line = string(r[:grepMaxLineLength]) + "…"
				}
				lines = append(lines, fmt.Sprintf("%s:%d: %s", p, i, line))
			}
		}
	}
	return n, lines
}

// errVisitLimit ends a walk that has seen searchMaxVisit entries.
var errVisitLimit = errors.New("stopped after the first entries: narrow the path")

// walk calls visit for every entry under dir (dir itself excluded), in lexical order, skipping
// .git and .tinypi and following no link; it stops at ctx's end or after searchMaxVisit entries.
func (s searcher) walk(ctx context.Context, dir string, visit func(p string, d fs.DirEntry) error) error {
	seen := 0
	err := fs.WalkDir(s.fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil // an unreadable directory below: skipped
		}
		if p == dir {
			if !d.IsDir() {
				return visit(p, d) // a file given as the path
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if seen++; seen > searchMaxVisit {
			return errVisitLimit
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".tinypi") {
			return fs.SkipDir
		}
		return visit(p, d)
	})
	if errors.Is(err, errVisitLimit) {
		return nil // what was found so far stands; resultLines says the output is cut
	}
	return err
}

// resultLines is the tool's output: the lines, and a last line when there were more than it
// shows, or a line saying there were none.
func resultLines(lines []string, what string, total int) tinypi.ToolOutput {
	text := strings.Join(lines, "\n")
	switch {
	case total == 0:
		text = "(no " + what + ")"
	case total > len(lines):
		text += fmt.Sprintf("\n[%d of %d %s shown]", len(lines), total, what)
	}
	return tinypi.ToolOutput{Content: []tinypi.ContentBlock{tinypi.Text(text)}, Details: map[string]any{"count": total}}
}
