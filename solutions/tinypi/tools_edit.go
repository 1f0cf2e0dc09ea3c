package tinypi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strings"
)

// WriteFile writes data to a file of the workspace, creating the directories it needs. The
// write is atomic: the data goes to a new file beside the target, which is then renamed over
// it, so a reader sees the old content or the new, never half of it, other hard links to the old
// file keep the old content, and a write that fails leaves the old file as it was and no stray
// file behind. The temporary file's name has the same length whatever the target's (see
// writeTempName), so every name the file system allows can be written.
//
// A new file gets mode 0644 less the process's umask, as os.WriteFile would give it; a file that
// already existed keeps its permission bits exactly, also bits the umask would clear (a script
// stays executable, a group-writable file stays group-writable).
//
// Only a regular file is replaced. The last name of the path must not be a symbolic link: write
// (and edit, which writes with WriteFile) neither follows it nor replaces it, and the error
// names the link's target, so that the caller can change that file instead. A directory, a named
// pipe or another special file is refused too (notRegular). Links in the names before the last
// are followed, as long as they stay inside the workspace.
//
// An error names the file as the caller gave it, never the temporary file: a failure of a step
// on the temporary file (create, write, chmod, sync, close, rename) is returned through
// writeError, as "write NAME: " and the system's reason.
func (w *Workspace) WriteFile(name string, data []byte) error {
	//lab:begin 8.3
	p, err := LocalPath(name)
	if err != nil {
		return err
	}
	dir := path.Dir(p)
	if err := w.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	perm, existed := os.FileMode(0o644), false
	if info, err := w.Lstat(p); err == nil {
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := w.Readlink(p)
			if err != nil {
				return err
			}
			return fmt.Errorf("%s is a symbolic link to %s; write and edit do not follow links: change the file it points to instead", name, target)
		case !info.Mode().IsRegular():
			return notRegular(name, info.Mode())
		}
		perm, existed = info.Mode().Perm(), true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err // a link before the last name that points out, for one
	}
	tmp := path.Join(dir, writeTempName())
	f, err := w.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return writeError(name, err)
	}
	_, err = f.Write(data)
	if err == nil && existed {
		err = f.Chmod(perm) // the umask may have cleared bits of the old file's mode
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.Rename(tmp, p)
	}
	if err != nil {
		_ = w.Remove(tmp)
		return writeError(name, err)
	}
	return nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// writeTempName returns a fresh name for WriteFile's temporary file: hidden, random (two writes
// never meet) and always 28 bytes long. A name built from the target's, such as
// ".NAME.123.tmp", would be longer than the 255 bytes a name may have when NAME has more than 230.
func writeTempName() string {
	return fmt.Sprintf(".tinypi-%016x.tmp", rand.Uint64())
}

// writeError reports err, the failure of a step of WriteFile on its temporary file, as a failure
// to write name, the file the caller asked for: "write NAME: " and the system's reason. The
// temporary file's name would mean nothing to the caller. The reason stays wrapped, so
// errors.Is(err, fs.ErrNotExist) and the like still hold.
func writeError(name string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &fs.PathError{Op: "write", Path: name, Err: err}
}

// EditResult is what an edit changed.
type EditResult struct {
	// Diff is the change as a unified diff with three lines of context.
	Diff string
	// FirstChangedLine is the number of the first line that differs, counting from 1.
	FirstChangedLine int
}

// Edit replaces oldText with newText in a text file of the workspace. oldText must occur in
// the file exactly once, counting overlapping occurrences ("aba" occurs twice in "ababa"): a
// missing or ambiguous match is an error that says how many matches there were, and the file
// is not touched. The match is exact, byte for byte: line breaks ("\r\n" stays "\r\n") and
// white space at the ends of lines and of the two texts are neither trimmed nor normalised,
// and every byte outside the match is kept. The file is written with WriteFile, so atomically:
// after an edit the path names a new file, and other hard links keep the old content.
func (w *Workspace) Edit(name, oldText, newText string) (EditResult, error) {
	//lab:begin 8.3
	if oldText == "" {
		return EditResult{}, errors.New("old_text is empty; give the exact text to replace")
	}
	if oldText == newText {
		return EditResult{}, errors.New("old_text and new_text are the same; there is nothing to change")
	}
	content, err := w.readText(name)
	if err != nil {
		return EditResult{}, err
	}
	at := strings.Index(content, oldText)
	if at < 0 {
		return EditResult{}, fmt.Errorf("old_text was not found in %s; it must match the file exactly, spaces and line breaks included", name)
	}
	if n := countOverlapping(content, oldText); n > 1 {
		return EditResult{}, fmt.Errorf("old_text matches %d places in %s; include more of the surrounding text so that it matches exactly one", n, name)
	}
	updated := content[:at] + newText + content[at+len(oldText):]
	if err := w.WriteFile(name, []byte(updated)); err != nil {
		return EditResult{}, err
	}
	diff, first := unifiedDiff(name, content, updated)
	return EditResult{Diff: diff, FirstChangedLine: first}, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// readText reads a whole text file of the workspace, opened with openRegular (so a named pipe
// or a directory is refused at once); a binary file is refused.
func (w *Workspace) readText(name string) (string, error) {
	f, err := w.openRegular(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return "", err
	}
	if bytes.IndexByte(data[:min(len(data), binarySniffLen)], 0) >= 0 {
		return "", fmt.Errorf("%s looks like a binary file (it has NUL bytes); edit changes text files only", name)
	}
	return string(data), nil
}

// countOverlapping counts the places where sub occurs in s, overlapping ones included.
func countOverlapping(s, sub string) int {
	n := 0
	for i := strings.Index(s, sub); i >= 0; {
		n++
		j := strings.Index(s[i+1:], sub)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return n
}

// diffContext is how many unchanged lines a hunk shows around a change.
const diffContext = 3

// unifiedDiff describes the change from before to after, which differ in one place, as a
// unified diff of one hunk, and returns the number of the first changed line (from 1).
func unifiedDiff(name, before, after string) (string, int) {
	a, b := splitLines(before), splitLines(after)
	prefix := 0
	for prefix < len(a) && prefix < len(b) && a[prefix] == b[prefix] {
		prefix++
	}
	suffix := 0
	for suffix < len(a)-prefix && suffix < len(b)-prefix && a[len(a)-1-suffix] == b[len(b)-1-suffix] {
		suffix++
	}
	from := max(prefix-diffContext, 0)
	aEnd := min(len(a)-suffix+diffContext, len(a))
	bEnd := min(len(b)-suffix+diffContext, len(b))

	var d strings.Builder
	fmt.Fprintf(&d, "--- a/%s\n+++ b/%s\n", name, name)
	fmt.Fprintf(&d, "@@ -%s +%s @@\n", hunkRange(from, aEnd-from), hunkRange(from, bEnd-from))
	for _, l := range a[from:prefix] {
		writeDiffLine(&d, ' ', l)
	}
	for _, l := range a[prefix : len(a)-suffix] {
		writeDiffLine(&d, '-', l)
	}
	for _, l := range b[prefix : len(b)-suffix] {
		writeDiffLine(&d, '+', l)
	}
	for _, l := range a[len(a)-suffix : aEnd] {
		writeDiffLine(&d, ' ', l)
	}
	return d.String(), prefix + 1
}

// hunkRange writes a hunk's range of lines: the first line (from 1) and the count; an empty
// range names the line before it, as diff does.
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// writeDiffLine writes one line of a hunk; a last line without a line break gets diff's marker.
func writeDiffLine(d *strings.Builder, mark byte, line string) {
	d.WriteByte(mark)
	d.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		d.WriteString("\n\\ No newline at end of file\n")
	}
}

// splitLines splits s after each line break; a last line without one is kept.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
