package tinypi

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"unicode/utf8"
)

// binarySniffLen is how many bytes from a file's start read looks at to tell text from binary.
const binarySniffLen = 8000

// ReadResult is a window of a text file's lines.
type ReadResult struct {
	// Text is the lines of the window, each with its line break as the file has it.
	Text string
	// FirstLine and LastLine number the window's lines, counting from 1. LastLine is
	// FirstLine-1 when the window is empty (an empty file).
	FirstLine, LastLine int
	// Truncated is true when the file goes on after the window; NextOffset is then the offset
	// that reads on, and Note says so in words.
	Truncated  bool
	NextOffset int
	Note       string
}

// Read returns up to limit lines of a text file of the workspace, starting at line offset
// (counting from 1; 0 means 1). limit 0 means the workspace's ReadMaxLines. The file is opened
// with openRegular, so a directory, a named pipe or a device is refused at once, never waited
// on, and its lines come from readLines, which reads the file only as far as the window needs.
func (w *Workspace) Read(name string, offset, limit int) (ReadResult, error) {
	//lab:begin 8.2
	if offset < 0 || limit < 0 {
		return ReadResult{}, fmt.Errorf("offset and limit must not be negative (got offset %d, limit %d)", offset, limit)
	}
	if offset == 0 {
		offset = 1
	}
	if limit == 0 {
		limit = w.opts.ReadMaxLines
	}
	f, err := w.openRegular(name)
	if err != nil {
		return ReadResult{}, err
	}
	defer f.Close()
	return readLines(f, name, offset, limit, w.opts.ReadMaxBytes)
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// openRegular opens a file of the workspace for reading and refuses, at once, whatever is not a
// regular file. It opens with O_NONBLOCK: a plain open of a named pipe waits until another
// process opens the pipe for writing, which may be never (on a regular file the flag changes
// nothing). Then it asks the open file, not the path, what it is: a directory is refused with
// "NAME is a directory, not a file", anything else that is not a regular file with
// "NAME is a named pipe, not a regular file" (a socket, a device: see notRegular).
func (w *Workspace) openRegular(name string) (*os.File, error) {
	//lab:begin 8.2
	f, err := w.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = notRegular(name, info.Mode())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// notRegular is the error for name, whose mode is not that of a regular file.
func notRegular(name string, mode fs.FileMode) error {
	if mode.IsDir() {
		return fmt.Errorf("%s is a directory, not a file", name)
	}
	kind := "a special file"
	switch t := mode.Type(); {
	case t&fs.ModeSymlink != 0:
		kind = "a symbolic link"
	case t&fs.ModeNamedPipe != 0:
		kind = "a named pipe"
	case t&fs.ModeSocket != 0:
		kind = "a socket"
	case t&fs.ModeDevice != 0:
		kind = "a device"
	}
	return fmt.Errorf("%s is %s, not a regular file", name, kind)
}

// readLines reads the window of Read from r, the content of the file called name: up to limit
// lines from line offset (both at least 1), capped at maxBytes. It reads r only as far as the
// window needs: lines before the window are skipped, not kept, and reading stops when the window
// is full and one more byte was peeked, so past the window's end it reads at most one buffer of
// its bufio.Reader (64 KiB), whatever the size of the file. Lines keep their bytes exactly, line
// breaks ("\n" or "\r\n") and trailing white space included. A NUL byte in the first
// binarySniffLen bytes means a binary file, which is refused.
func readLines(r io.Reader, name string, offset, limit, maxBytes int) (ReadResult, error) {
	//lab:begin 8.2
	br := bufio.NewReaderSize(r, 64*1024)
	if head, err := br.Peek(binarySniffLen); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return ReadResult{}, err
	} else if bytes.IndexByte(head, 0) >= 0 {
		return ReadResult{}, fmt.Errorf("%s looks like a binary file (it has NUL bytes); read shows text files only", name)
	}

	res := ReadResult{FirstLine: offset, LastLine: offset - 1}
	var out []byte
	for line := 1; ; line++ {
		wanted := line >= offset
		start := len(out)
		seen, cut := false, false
		for {
			chunk, err := br.ReadSlice('\n')
			seen = seen || len(chunk) > 0
			if wanted {
				take := min(len(chunk), maxBytes-len(out))
				cut = cut || take < len(chunk)
				out = append(out, chunk[:take]...)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return ReadResult{}, err
			}
			break
		}
		if !seen { // the file ended before this line
			if line <= offset && offset > 1 {
				return ReadResult{}, fmt.Errorf("offset %d is past the end of %s, which has %d lines", offset, name, line-1)
			}
			break
		}
		if !wanted {
			continue
		}
		if cut {
			res.Truncated = true
			if start == 0 { // the first line alone is over the cap: show its beginning
				out = trimIncompleteRune(out)
				res.LastLine, res.NextOffset = line, line+1
				res.Note = fmt.Sprintf("[line %d is longer than %d bytes and was cut; read on with offset=%d]", line, maxBytes, line+1)
			} else {
				out = out[:start]
				res.LastLine, res.NextOffset = line-1, line
				res.Note = fmt.Sprintf("[output capped at %d bytes after line %d; read on with offset=%d]", maxBytes, line-1, line)
			}
			break
		}
		res.LastLine = line
		if line-offset+1 == limit {
			if more, _ := br.Peek(1); len(more) > 0 {
				res.Truncated, res.NextOffset = true, line+1
				res.Note = fmt.Sprintf("[lines %d-%d of %s shown; the file goes on: read on with offset=%d]", offset, line, name, line+1)
			}
			break
		}
	}
	res.Text = string(out)
	return res, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// trimIncompleteRune drops a UTF-8 sequence cut off at the end of b.
func trimIncompleteRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}
