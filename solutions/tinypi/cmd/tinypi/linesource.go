package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/term"
)

// lineSource gives interactive mode (and its approvals) the lines the user types: at a terminal
// with line editing and history (golang.org/x/term's Terminal, in raw mode only while a line is
// read, so that Ctrl-C during a run is still SIGINT), from any other stdin a line at a time. One
// line is read at a time: interactive reads only between runs, the approver only during one.
type lineSource interface {
	// read shows prompt and delivers the next line once on the channel.
	read(prompt string) <-chan typedLine
	// restore puts the terminal back as it was (for a program that ends while a line is read).
	restore()
}

// typedLine is one line read: ok is false at the end of input; interrupted when that end was a
// Ctrl-C typed at the terminal.
type typedLine struct {
	text        string
	ok          bool
	interrupted bool
}

// pipedLines reads lines from a stdin that is not a terminal (or whose output is not one),
// showing the prompt only when stdin is a terminal.
type pipedLines struct {
	lines      <-chan string
	out        io.Writer
	showPrompt bool
}

func (p *pipedLines) read(prompt string) <-chan typedLine {
	if p.showPrompt {
		fmt.Fprint(p.out, prompt)
	}
	ch := make(chan typedLine, 1)
	go func() {
		l, ok := <-p.lines
		if !ok && p.showPrompt {
			fmt.Fprintln(p.out)
		}
		ch <- typedLine{text: l, ok: ok}
	}()
	return ch
}

func (p *pipedLines) restore() {}

// terminalLines reads lines at a terminal with golang.org/x/term's Terminal.
type terminalLines struct {
	fd    int
	t     *term.Terminal
	in    *ctrlCWatcher
	out   io.Writer
	mu    sync.Mutex
	saved *term.State // the state to restore while a line is read in raw mode
}

// newTerminalLines reads stdin (a terminal, file descriptor fd) and echoes to out.
func newTerminalLines(fd int, stdin io.Reader, out io.Writer) *terminalLines {
	s := &terminalLines{fd: fd, in: &ctrlCWatcher{r: stdin}, out: out}
	s.t = s.newTerminal()
	return s
}

// newTerminal is a Terminal on the watched stdin. A Terminal that returned io.EOF for a Ctrl-C
// keeps that key unread and returns io.EOF again at once: after one, the next line is read by a
// new Terminal, which keeps the history.
func (s *terminalLines) newTerminal() *term.Terminal {
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{s.in, s.out}, "")
	if s.t != nil {
		t.History = s.t.History
	}
	return t
}

func (s *terminalLines) read(prompt string) <-chan typedLine {
	ch := make(chan typedLine, 1)
	go func() {
		state, err := term.MakeRaw(s.fd)
		if err != nil {
			ch <- typedLine{}
			return
		}
		s.mu.Lock()
		s.saved = state
		s.mu.Unlock()
		s.t.SetPrompt(prompt)
		s.in.sawCtrlC.Store(false)
		line, err := s.t.ReadLine()
		s.restore()
		if err != nil {
			s.t = s.newTerminal()
		}
		ch <- typedLine{text: line, ok: err == nil, interrupted: err != nil && s.in.sawCtrlC.Load()}
	}()
	return ch
}

func (s *terminalLines) restore() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.saved != nil {
		term.Restore(s.fd, s.saved)
		s.saved = nil
	}
}

// ctrlCWatcher notes a Ctrl-C byte in what it reads: the Terminal answers Ctrl-C and Ctrl-D on an
// empty line alike (io.EOF), and tinypi ends with 130 after the first, with the last run's status
// after the second.
type ctrlCWatcher struct {
	r        io.Reader
	sawCtrlC atomic.Bool
}

func (w *ctrlCWatcher) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if bytes.IndexByte(p[:n], 3) >= 0 {
		w.sawCtrlC.Store(true)
	}
	return n, err
}

// newLineSource is the line source for e: a terminal's when stdin and stdout are both terminals.
func newLineSource(e env) lineSource {
	if f, ok := e.stdin.(*os.File); ok && e.stdinTerminal && e.stdoutTerminal {
		return newTerminalLines(int(f.Fd()), f, e.stdout)
	}
	return &pipedLines{lines: readLines(e.stdin), out: e.stdout, showPrompt: e.stdinTerminal}
}
