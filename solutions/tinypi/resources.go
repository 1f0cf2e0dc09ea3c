package tinypi

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// This file is chapter 12's resources: the text files a user keeps beside the code to steer the
// agent. Context files (AGENTS.md) are added to the system prompt of every request; prompt
// templates (review.md) are prompts the user calls by name, "/review main.go". A resource that
// cannot be used is skipped and reported as a problem, never an error: one bad file must not keep
// the agent from starting, and the files around it still load.

// Context file names, in order of preference.
const (
	// AgentsFileName is the preferred name of a directory's context file.
	AgentsFileName = "AGENTS.md"
	// ClaudeFileName is accepted as a directory's context file when it has no AGENTS.md.
	ClaudeFileName = "CLAUDE.md"
)

// MaxResourceBytes is the size limit of a resource file: a context file or prompt template larger
// than this is skipped (and reported). A file of exactly this size is accepted.
const MaxResourceBytes = 32 << 10

// resourceOpenFlags opens a resource for reading without blocking: opening a named pipe for
// reading would otherwise wait until some other process opens it for writing.
const resourceOpenFlags = os.O_RDONLY | syscall.O_NONBLOCK

// ContextFile is a context file that was loaded.
type ContextFile struct {
	// Path is the file's absolute path: its directory joined with AGENTS.md or CLAUDE.md (a
	// symbolic link keeps its own path).
	Path string
	// Content is the file's text without the white space around it. Never empty.
	Content string
}

// ResourceProblem is a resource file (or a directory of templates) that was skipped, and why.
type ResourceProblem struct {
	// Path is the path of the file or directory that was skipped.
	Path string
	// Reason says in one line of English what is wrong with it ("is a directory, not a regular
	// file", "is larger than 32768 bytes").
	Reason string
}

// readResource reads the resource file at path and returns its text without the white space
// around it, or an error that says in one line why the file cannot be used:
//
//   - the file, after following symbolic links, is not a regular file (a directory, a named pipe,
//     a device). It is opened without blocking and its mode checked before anything is read, so
//     a named pipe never makes it wait;
//   - it cannot be opened or read (no permission);
//   - it is larger than MaxResourceBytes. At most MaxResourceBytes+1 bytes are ever read (through
//     io.LimitReader), so a huge file is never read whole;
//   - it is not valid UTF-8.
func readResource(path string) (string, error) {
	//lab:begin 12.1
	f, err := os.OpenFile(path, resourceOpenFlags, 0)
	if err != nil {
		return "", fmt.Errorf("cannot be opened: %w", pathErrorCause(err))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("cannot be examined: %w", pathErrorCause(err))
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("is a %s, not a regular file", fileKind(info.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxResourceBytes+1))
	if err != nil {
		return "", fmt.Errorf("cannot be read: %w", pathErrorCause(err))
	}
	if len(data) > MaxResourceBytes {
		return "", fmt.Errorf("is larger than %d bytes", MaxResourceBytes)
	}
	if !utf8.Valid(data) {
		return "", errors.New("is not valid UTF-8 text")
	}
	return strings.TrimSpace(string(data)), nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// pathErrorCause drops the operation and path that an *fs.PathError adds to its cause ("open
// /p/AGENTS.md: permission denied" becomes "permission denied"): a ResourceProblem names the
// path already.
func pathErrorCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// LoadContextFiles loads the context files that apply to workspace, from root down.
//
// workspace and root are made absolute and cleaned (filepath.Abs); an empty root is the
// filesystem root. workspace must be root or a directory inside it; otherwise LoadContextFiles
// returns an error naming both and reads nothing.
//
// The directories from root down to workspace, both included, are visited in that order. In each,
// the first of AGENTS.md and CLAUDE.md that is there (os.Lstat finds it) is that directory's
// context file, and the other is ignored even when it is there too. A symbolic link is followed.
// The files are returned outermost first and the workspace's last: the nearer a file is to the
// workspace, the later it comes, and where two files disagree the later one wins. That order is
// their precedence.
//
// A file that cannot be used is skipped and reported as a ResourceProblem, never as an error, and
// the other files still load: one that is not a regular file after following links (a directory,
// a named pipe: it is never waited on), one that cannot be read, one larger than
// MaxResourceBytes (a bounded read of at most MaxResourceBytes+1 bytes decides; the file is never
// read whole), one that is not valid UTF-8. A skipped file is still its directory's file: the
// directory's CLAUDE.md is not taken in its place. Content is the text without the white space
// around it; a file that is empty once trimmed is skipped without a problem (and is still its
// directory's file). Problems come in the order their directories are visited.
func LoadContextFiles(workspace, root string) ([]ContextFile, []ResourceProblem, error) {
	//lab:begin 12.1
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return nil, nil, fmt.Errorf("tinypi: context files: workspace %q: %w", workspace, err)
	}
	if root == "" {
		root = string(filepath.Separator)
	}
	top, err := filepath.Abs(root)
	if err != nil {
		return nil, nil, fmt.Errorf("tinypi: context files: root %q: %w", root, err)
	}
	if rel, err := filepath.Rel(top, ws); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, nil, fmt.Errorf("tinypi: context files: workspace %s is not inside root %s", ws, top)
	}
	var dirs []string
	for d := ws; ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == top || d == filepath.Dir(d) {
			break
		}
	}
	slices.Reverse(dirs)
	var files []ContextFile
	var problems []ResourceProblem
	for _, dir := range dirs {
		for _, name := range []string{AgentsFileName, ClaudeFileName} {
			path := filepath.Join(dir, name)
			if _, err := os.Lstat(path); err != nil {
				continue
			}
			content, err := readResource(path)
			switch {
			case err != nil:
				problems = append(problems, ResourceProblem{Path: path, Reason: err.Error()})
			case content != "":
				files = append(files, ContextFile{Path: path, Content: content})
			}
			break
		}
	}
	return files, problems, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// SystemPromptWithContext returns base followed by the context files, in the order given. Each
// file is a block
//
//	<context-file path="PATH">
//	CONTENT
//	</context-file>
//
// with PATH and CONTENT as they are, and the parts (base, then the blocks) are joined by a blank
// line ("\n\n"). An empty base adds no part, so the result then starts with the first block;
// without files the result is base unchanged.
func SystemPromptWithContext(base string, files []ContextFile) string {
	//lab:begin 12.1
	var parts []string
	if base != "" {
		parts = append(parts, base)
	}
	for _, f := range files {
		parts = append(parts, "<context-file path=\""+f.Path+"\">\n"+f.Content+"\n</context-file>")
	}
	return strings.Join(parts, "\n\n")
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// PromptTemplate is a prompt the user calls by name: "/NAME arguments" (ExpandPromptTemplate).
type PromptTemplate struct {
	// Name is the file name without ".md"; it matches ^[a-z0-9][a-z0-9_-]*$.
	Name string
	// Body is the file's text without the white space around it, with its placeholders ($1 … $9,
	// $@, $$) not yet replaced.
	Body string
	// Path is the file's path: the directory as it was given, joined with the file name.
	Path string
}

// validTemplateName reports whether name matches ^[a-z0-9][a-z0-9_-]*$: a lowercase ASCII letter
// or digit, then any number of those, '_' and '-'.
func validTemplateName(name string) bool {
	//lab:begin 12.2
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case (r == '_' || r == '-') && i > 0:
		default:
			return false
		}
	}
	return name != ""
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// LoadPromptTemplates loads the prompt templates of dirs, in order: the user's directory first,
// the project's last.
//
// From each directory, the entries whose name ends in ".md" are templates; other files and
// subdirectories are ignored (whatever their name; the directory is not searched recursively).
// A template's Name is its file name without ".md", and must match ^[a-z0-9][a-z0-9_-]*$: a file
// whose name does not is skipped with a ResourceProblem. A file is read as a context file is
// (see LoadContextFiles): one that is not a regular file after following links, cannot be read,
// is larger than MaxResourceBytes (bounded read) or is not valid UTF-8 is skipped with a
// ResourceProblem. Body is the text without the white space around it (it may be empty).
//
// A directory that does not exist adds nothing and no problem; one that cannot be listed (no
// permission, not a directory) is a ResourceProblem. Where two directories hold a template of the
// same name, the later directory's replaces the earlier one's; a file that was skipped replaces
// nothing. The templates are returned sorted by Name; problems come in the order found.
//
// The error is always nil: every file and directory that cannot be used is a problem, not an
// error. It is there so that callers treat both loaders alike.
func LoadPromptTemplates(dirs ...string) ([]PromptTemplate, []ResourceProblem, error) {
	//lab:begin 12.2
	var templates []PromptTemplate
	var problems []ResourceProblem
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			problems = append(problems, ResourceProblem{Path: dir, Reason: fmt.Sprintf("cannot be listed: %v", pathErrorCause(err))})
			continue
		}
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".md")
			if !ok || e.IsDir() {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if !validTemplateName(name) {
				problems = append(problems, ResourceProblem{Path: path, Reason: fmt.Sprintf("template name %q is not lowercase letters, digits, '_' and '-' (starting with a letter or digit)", name)})
				continue
			}
			body, err := readResource(path)
			if err != nil {
				problems = append(problems, ResourceProblem{Path: path, Reason: err.Error()})
				continue
			}
			t := PromptTemplate{Name: name, Body: body, Path: path}
			if i := slices.IndexFunc(templates, func(o PromptTemplate) bool { return o.Name == name }); i >= 0 {
				templates[i] = t
			} else {
				templates = append(templates, t)
			}
		}
	}
	slices.SortStableFunc(templates, func(a, b PromptTemplate) int { return strings.Compare(a.Name, b.Name) })
	return templates, problems, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// ExpandPromptTemplate expands input when it calls a template: when input, without its leading
// white space, is "/" and the name of one of templates, followed by the end of input or by white
// space and the arguments, it returns the template's body expanded and true. Anything else (not a
// slash command, an unknown name, a known name glued to other characters as in "/reviewx") is
// returned unchanged, with false.
//
// The arguments are strings.Fields of what follows the name. In the body, $1 … $9 become the nth
// argument ("" when there are fewer), $@ all arguments joined by single spaces, and $$ a literal
// "$"; any other "$" stays as it is. The body is expanded in one pass from left to right: text
// that came from an argument is never expanded again (an argument "$1" stays "$1").
func ExpandPromptTemplate(input string, templates []PromptTemplate) (string, bool) {
	//lab:begin 12.2
	rest, ok := strings.CutPrefix(strings.TrimLeftFunc(input, unicode.IsSpace), "/")
	if !ok {
		return input, false
	}
	end := strings.IndexFunc(rest, unicode.IsSpace)
	if end < 0 {
		end = len(rest)
	}
	name := rest[:end]
	i := slices.IndexFunc(templates, func(t PromptTemplate) bool { return t.Name == name })
	if i < 0 {
		return input, false
	}
	args := strings.Fields(rest[end:])
	body := templates[i].Body
	var out strings.Builder
	for j := 0; j < len(body); j++ {
		if body[j] != '$' || j+1 == len(body) {
			out.WriteByte(body[j])
			continue
		}
		switch next := body[j+1]; {
		case next >= '1' && next <= '9':
			if n := int(next - '1'); n < len(args) {
				out.WriteString(args[n])
			}
			j++
		case next == '@':
			out.WriteString(strings.Join(args, " "))
			j++
		case next == '$':
			out.WriteByte('$')
			j++
		default:
			out.WriteByte('$')
		}
	}
	return out.String(), true
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}
