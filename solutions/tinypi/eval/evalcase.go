package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// This file is chapter 14's evaluation case: a task the agent has not seen, with everything
// needed to run it again and to judge the result without a person looking. A case is a
// directory:
//
//	case.json     the prompt, the budget and what the result must be (EvalCaseFile)
//	script.jsonl  the model's answers when the case runs offline (LoadScript)
//	workspace/    the files the agent starts with
//
// The case never changes: every run works on a fresh copy of workspace/.

// MaxEvalCaseBytes bounds case.json, and MaxEvalWorkspaceBytes the files of a workspace fixture
// together: a case is small, and a directory that is not one must not be read whole.
const (
	MaxEvalCaseBytes      = 1 << 20
	MaxEvalWorkspaceBytes = 64 << 20
)

// EvalBudget is what a run may spend. Zero means no limit.
type EvalBudget struct {
	// Steps is the most model requests (assistant messages) the run may make.
	Steps int `json:"steps"`
	// Tokens is the most tokens (the sum of the assistant messages' Usage.Total) it may use.
	Tokens int `json:"tokens"`
}

// EvalExpect is what the final workspace and the session log must show.
type EvalExpect struct {
	// Files are the files the agent must leave, by slash-separated path relative to the
	// workspace, with their exact content: a file it must change or create.
	Files map[string]string `json:"files"`
	// Absent are the paths that must not exist at the end: a file it must delete.
	Absent []string `json:"absent"`
	// Commands are commands the agent must run with the bash tool, in this order (others may
	// come before, between and after them), each with a result that is not an error.
	Commands []string `json:"commands"`
}

// EvalCaseFile is case.json.
type EvalCaseFile struct {
	Prompt string     `json:"prompt"`
	Budget EvalBudget `json:"budget"`
	Expect EvalExpect `json:"expect"`
}

// EvalCase is one loaded case.
type EvalCase struct {
	// Name is the case's directory name, e.g. "03-rename-function".
	Name   string
	Prompt string
	Budget EvalBudget
	Expect EvalExpect
	// Script holds the model's answers for an offline run (script.jsonl).
	Script []tinypi.AssistantMessage
	// Workspace is the fixture directory the agent starts from; a run copies it, never
	// changes it.
	Workspace string
}

// LoadEvalCase reads the case in dir. A case.json over MaxEvalCaseBytes, with a field it does not
// know, without a prompt, with a path that leaves the workspace, a path not written in its one
// canonical form (see canonicalCasePath) or a path both expected and absent is refused, as are a
// script LoadScript refuses and a missing workspace directory. case.json, script.jsonl and
// workspace/ must be a regular file, a regular file and a directory, never a symbolic link: a case
// may come from someone else, and a link would make it read a file outside it.
func LoadEvalCase(dir string) (EvalCase, error) {
	name := filepath.Base(dir)
	for _, part := range []string{"case.json", "script.jsonl"} {
		if info, err := os.Lstat(filepath.Join(dir, part)); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			return EvalCase{}, fmt.Errorf("tinypi: eval case %s: %s is a symbolic link; a case's files must be in its directory", name, part)
		}
	}
	data, err := readRegularFile(filepath.Join(dir, "case.json"), MaxEvalCaseBytes)
	if err != nil {
		return EvalCase{}, fmt.Errorf("tinypi: eval case %s: %w", name, err)
	}
	var file EvalCaseFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return EvalCase{}, fmt.Errorf("tinypi: eval case %s: case.json: %w", name, err)
	}
	if file.Prompt == "" {
		return EvalCase{}, fmt.Errorf("tinypi: eval case %s: case.json has no prompt", name)
	}
	if file.Budget.Steps < 0 || file.Budget.Tokens < 0 {
		return EvalCase{}, fmt.Errorf("tinypi: eval case %s: a negative budget", name)
	}
	for p := range file.Expect.Files {
		if err := canonicalCasePath(p); err != nil {
			return EvalCase{}, fmt.Errorf("tinypi: eval case %s: expect.files: %w", name, err)
		}
	}
	for _, p := range file.Expect.Absent {
		if err := canonicalCasePath(p); err != nil {
			return EvalCase{}, fmt.Errorf("tinypi: eval case %s: expect.absent: %w", name, err)
		}
		if _, ok := file.Expect.Files[p]; ok {
			return EvalCase{}, fmt.Errorf("tinypi: eval case %s: %s is in both expect.files and expect.absent", name, p)
		}
	}
	script, err := tinypi.LoadScript(filepath.Join(dir, "script.jsonl"))
	if err != nil {
		return EvalCase{}, fmt.Errorf("tinypi: eval case %s: %w", name, err)
	}
	ws := filepath.Join(dir, "workspace")
	if info, err := os.Lstat(ws); err != nil || !info.IsDir() {
		return EvalCase{}, fmt.Errorf("tinypi: eval case %s: no workspace directory", name)
	}
	return EvalCase{Name: name, Prompt: file.Prompt, Budget: file.Budget, Expect: file.Expect,
		Script: script, Workspace: ws}, nil
}

// canonicalCasePath accepts p, a path of a case's expect.files or expect.absent, only when it is
// the one way the judge writes that file: relative to the workspace, separated by single "/", with
// no ".", ".." or empty name and no "/" at the end ("docs/todo.md", not "./docs/todo.md",
// "docs//todo.md" or "docs/../docs/todo.md"). The judge compares paths as strings with the paths
// it finds in the workspace, so another spelling of a path would never meet its file: an absent
// "./old.txt" would pass while old.txt is still there, and an expected "./greeting.txt" would be
// missing. The error names the canonical form when there is one.
func canonicalCasePath(p string) error {
	clean, err := tinypi.LocalPath(p)
	switch {
	case err != nil:
		return err
	case clean == ".":
		return fmt.Errorf("path %q names the workspace itself, not a file", p)
	case clean != p:
		return fmt.Errorf("path %q is not canonical; write %q", p, clean)
	}
	return nil
}

// LoadEvalSuite loads every case in dir: each subdirectory holding a case.json, in the order of
// their names.
func LoadEvalSuite(dir string) ([]EvalCase, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("tinypi: eval suite: %w", err)
	}
	var cases []EvalCase
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, e.Name(), "case.json")); err != nil {
			continue
		}
		c, err := LoadEvalCase(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("tinypi: eval suite: no case in %s", dir)
	}
	return cases, nil
}

// readRegularFile reads the regular file at path, refusing anything else (a symbolic link as the
// last name is not followed) and anything over max bytes.
func readRegularFile(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", filepath.Base(path))
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: over %d bytes", filepath.Base(path), max)
	}
	return data, nil
}

// ReadWorkspaceFiles returns every regular file under dir, by slash-separated path, with its
// content. A symbolic link, a device or anything else that is not a directory or a regular file is
// an error, as is more than MaxEvalWorkspaceBytes in all: a workspace to judge is the agent's
// output, and may be hostile.
func ReadWorkspaceFiles(dir string) (map[string]string, error) {
	files := map[string]string{}
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", filepath.ToSlash(rel))
		}
		data, err := readRegularFile(path, MaxEvalWorkspaceBytes-total)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.ToSlash(rel), err)
		}
		total += int64(len(data))
		files[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tinypi: workspace: %w", err)
	}
	return files, nil
}

// CopyWorkspace copies the fixture directory src into dst, which must not exist yet: the
// directories and the regular files, with their permission bits (a script stays executable).
// Anything else in src is an error, and so is more than MaxEvalWorkspaceBytes in all.
func CopyWorkspace(src, dst string) error {
	files, err := ReadWorkspaceFiles(src)
	if err != nil {
		return err
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return fmt.Errorf("tinypi: workspace: %w", err)
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		info, err := os.Stat(filepath.Join(src, filepath.FromSlash(p)))
		if err != nil {
			return fmt.Errorf("tinypi: workspace: %w", err)
		}
		target := filepath.Join(dst, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fmt.Errorf("tinypi: workspace: %w", err)
		}
		if err := os.WriteFile(target, []byte(files[p]), info.Mode().Perm()); err != nil {
			return fmt.Errorf("tinypi: workspace: %w", err)
		}
	}
	return nil
}

// EvalCheck is one judgement of a verdict.
type EvalCheck struct {
	// Name says what was checked: "stop", "workspace", "paired", "commands" or "budget".
	Name string `json:"name"`
	Pass bool   `json:"pass"`
	// Detail says what was wrong when Pass is false; empty when it passed.
	Detail string `json:"detail,omitempty"`
}

// EvalVerdict is the structured result of one case (RunEvalCase).
type EvalVerdict struct {
	Case string `json:"case"`
	// Pass is true when every check passed.
	Pass   bool        `json:"pass"`
	Checks []EvalCheck `json:"checks"`
	// Reason is how the run ended.
	Reason tinypi.RunReason `json:"reason"`
	// Steps and Tokens are what the run spent (see EvalBudget).
	Steps  int `json:"steps"`
	Tokens int `json:"tokens"`
	// Wall is how long the case took, the copy of its workspace included.
	Wall time.Duration `json:"wallNanos"`
}
