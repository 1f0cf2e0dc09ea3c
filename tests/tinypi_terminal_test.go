package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/learn-tinypi/course/internal/hang"
)

// terminalDeadline bounds each wait for the terminal to show something: tinypi answers from a
// script in milliseconds, so only a broken program takes it.
const terminalDeadline = 15 * time.Second

// tmuxTerminal is tinypi running in a terminal of a private tmux server.
type tmuxTerminal struct {
	t      *testing.T
	socket string
}

func (term *tmuxTerminal) tmux(args ...string) string {
	term.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", term.socket}, args...)...).CombinedOutput()
	if err != nil {
		term.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is what the terminal shows, its history included.
func (term *tmuxTerminal) screen() string {
	return term.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "tinypi")
}

// waitFor waits until the terminal shows text count times, and returns the screen.
func (term *tmuxTerminal) waitFor(text string, count int) string {
	term.t.Helper()
	bound := hang.Bound(terminalDeadline)
	deadline := time.Now().Add(bound)
	for {
		s := term.screen()
		if strings.Count(s, text) >= count {
			return s
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("the terminal does not show %q %d times within %v; it shows:\n%s", text, count, bound, s)
		}
		time.Sleep(20 * time.Millisecond) // the terminal has no event to wait on: look again
	}
}

// exitDeadline bounds the wait for tinypi to end after its last Ctrl-C. It is longer than
// terminalDeadline: a fresh-clone make test once took more than 15 s to show the end on a machine
// loaded by four other jobs. It is still far shorter than the sleep the test's command would
// have run, so an exit that waits for that command fails: scaled by hang.Bound, it stays under
// maxExitDeadline.
const exitDeadline = 90 * time.Second

// maxExitDeadline is half the ten minutes the test's command sleeps.
const maxExitDeadline = 5 * time.Minute

// exitStatus waits for tinypi to end and returns its exit status.
func (term *tmuxTerminal) exitStatus() string {
	term.t.Helper()
	bound := min(hang.Bound(exitDeadline), maxExitDeadline)
	deadline := time.Now().Add(bound)
	for {
		// tmux marks the pane dead when the program's terminal closes, and fills in
		// pane_dead_status (an exit) or pane_dead_signal (a signal) only once it has reaped the
		// process: on a loaded machine the pane was seen dead with neither for a while (three
		// fresh-clone runs), so a dead pane with neither is waited on like a live one. A program
		// that a Ctrl-C ends by SIGINT has, as a shell reports it, the status 130 (128+2) too.
		out := strings.Split(strings.TrimSpace(term.tmux("display-message", "-p", "-t", "tinypi", "#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}|#{pane_pid}")), "|")
		if len(out) == 4 && out[0] == "1" {
			switch {
			case out[1] != "":
				return out[1]
			case out[2] == "2" || out[2] == "INT" || out[2] == "SIGINT":
				return "130"
			case out[2] != "":
				return "signal " + out[2]
			}
			// tmux has not reaped the program (one run showed it a zombie 90 s after its exit,
			// tmux 3.3a under no load): the kernel keeps a zombie's exit status for its parent,
			// and shows it in /proc too.
			if status, ok := zombieExitStatus(out[3]); ok {
				return status
			}
		}
		if time.Now().After(deadline) {
			var procs []byte
			if len(out) == 4 {
				procs, _ = exec.Command("ps", "-o", "pid,pgid,stat,wchan:20,args", "--ppid", out[3], "-p", out[3]).CombinedOutput()
			}
			term.t.Fatalf("tinypi has not ended, or tmux has not reaped it, %v after the last Ctrl-C (pane %q: dead, status, signal, pid); its processes:\n%s\nthe terminal shows:\n%s",
				bound, out, procs, term.screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// zombieExitStatus returns the exit status of process pid when it has ended and its parent has
// not yet collected it (a zombie), as exitStatus reports one: the status, "130" for SIGINT,
// "signal N" for another signal. ok is false when pid is no zombie or /proc cannot say (not
// Linux).
func zombieExitStatus(pid string) (status string, ok bool) {
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return "", false
	}
	// The fields after the command name (which is in parentheses and may hold spaces) start with
	// field 3, the state; field 52 is the exit code as waitpid(2) reports it.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return "", false
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 50 || fields[0] != "Z" {
		return "", false
	}
	code, err := strconv.Atoi(fields[49])
	if err != nil {
		return "", false
	}
	switch sig := code & 0x7f; sig {
	case 0:
		return strconv.Itoa(code >> 8 & 0xff), true
	case 2:
		return "130", true
	default:
		return fmt.Sprintf("signal %d", sig), true
	}
}

// TestTinypiTerminal drives tinypi at its prompt in a real terminal (-yes: no approvals): the calls show while the
// run works, Ctrl-C aborts the run and not the program, the next prompt runs, and a Ctrl-C at the
// prompt ends it with 130; the session on disk ends the aborted turn. After each run a line says
// its tokens and the session's.
func TestTinypiTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is needed for the terminal test (.ci/run installs it)")
		}
		t.Skip("no tmux here")
	}
	bin := buildTinypi(t)
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	script := filepath.Join(t.TempDir(), "script.jsonl")
	err := os.WriteFile(script, []byte(
		`{"role":"assistant","content":[{"type":"text","text":"Starting the slow job."},{"type":"toolCall","id":"c1","name":"bash","arguments":"{\"command\":\"echo started; sleep 600\"}"}],"stopReason":"toolUse","usage":{"input":10,"output":5,"total":15},"timestamp":0}`+"\n"+
			`{"role":"assistant","content":[{"type":"text","text":"Still here after the abort."}],"stopReason":"stop","usage":{"input":10,"output":5,"total":15},"timestamp":0}`+"\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	session := filepath.Join(t.TempDir(), "s.jsonl")
	term := &tmuxTerminal{t: t, socket: fmt.Sprintf("tinypi-test-%d", os.Getpid())}
	term.tmux("-f", "/dev/null", "new-session", "-d", "-s", "tinypi", "-x", "150", "-y", "40", "-c", repo,
		filepath.Join(bin, "tinypi"), "-yes", "-scripted", script, "-session", session)
	t.Cleanup(func() { exec.Command("tmux", "-L", term.socket, "kill-server").Run() })
	term.tmux("set-option", "-t", "tinypi", "remain-on-exit", "on")

	term.waitFor("› ", 1)
	term.tmux("send-keys", "-t", "tinypi", "run the slow job", "Enter")
	// The text and the call show while the run is still working (the command sleeps ten minutes).
	term.waitFor("Starting the slow job.", 1)
	term.waitFor("→ bash echo started; sleep 600", 1)

	term.tmux("send-keys", "-t", "tinypi", "C-c")
	term.waitFor("^C: aborting the run; press Ctrl-C again to quit", 1)
	term.waitFor("tinypi: the run ended with aborted", 1)
	term.waitFor("tinypi: tokens: 10 in / 5 out · session 15", 1)
	term.waitFor("› ", 2)

	term.tmux("send-keys", "-t", "tinypi", "are you there?", "Enter")
	term.waitFor("Still here after the abort.", 1)
	term.waitFor("tinypi: tokens: 10 in / 5 out · session 30", 1)
	term.waitFor("› ", 3)

	term.tmux("send-keys", "-t", "tinypi", "C-c")
	if got := term.exitStatus(); got != "130" {
		t.Fatalf("exit status after a Ctrl-C at the prompt: %s, want 130; the terminal shows:\n%s", got, term.screen())
	}
	log, err := os.ReadFile(session)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"type":"tool/result"`, `"reason":"aborted"`, `Still here after the abort.`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the session file lacks %s:\n%s", want, log)
		}
	}
}

// TestTinypiTerminalApproval drives tinypi at a terminal through its approvals: an edit is shown
// with its change and refused (n: the model is told, the file unchanged), the next edit is
// allowed once (y), a bash call for the rest of the session (a), after which a write runs
// without a question.
func TestTinypiTerminalApproval(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is needed for the terminal test (.ci/run installs it)")
		}
		t.Skip("no tmux here")
	}
	bin := buildTinypi(t)
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(repo, "calc.txt"), []byte("x = 1 + 1\nresult = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edit := `{"role":"assistant","content":[{"type":"toolCall","id":"ID","name":"edit","arguments":"{\"path\": \"calc.txt\", \"old_text\": \"result = 3\", \"new_text\": \"result = 2\"}"}],"stopReason":"toolUse","usage":{"input":10,"output":5,"total":15},"timestamp":0}`
	script := filepath.Join(t.TempDir(), "script.jsonl")
	err := os.WriteFile(script, []byte(strings.ReplaceAll(edit, "ID", "c1")+"\n"+strings.ReplaceAll(edit, "ID", "c2")+"\n"+
		`{"role":"assistant","content":[{"type":"toolCall","id":"c3","name":"bash","arguments":"{\"command\": \"echo checked > check.out\"}"}],"stopReason":"toolUse","usage":{"input":10,"output":5,"total":15},"timestamp":0}`+"\n"+
		`{"role":"assistant","content":[{"type":"toolCall","id":"c4","name":"write","arguments":"{\"path\": \"notes.txt\", \"content\": \"done\\n\"}"}],"stopReason":"toolUse","usage":{"input":10,"output":5,"total":15},"timestamp":0}`+"\n"+
		`{"role":"assistant","content":[{"type":"text","text":"All done."}],"stopReason":"stop","usage":{"input":10,"output":5,"total":15},"timestamp":0}`+"\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	session := filepath.Join(t.TempDir(), "s.jsonl")
	term := &tmuxTerminal{t: t, socket: fmt.Sprintf("tinypi-approval-%d", os.Getpid())}
	term.tmux("-f", "/dev/null", "new-session", "-d", "-s", "tinypi", "-x", "150", "-y", "40", "-c", repo,
		filepath.Join(bin, "tinypi"), "-scripted", script, "-session", session)
	t.Cleanup(func() { exec.Command("tmux", "-L", term.socket, "kill-server").Run() })
	term.tmux("set-option", "-t", "tinypi", "remain-on-exit", "on")

	term.waitFor("› ", 1)
	term.tmux("send-keys", "-t", "tinypi", "fix calc.txt", "Enter")
	term.waitFor("? edit calc.txt", 1)
	term.waitFor("  -result = 3", 1)
	term.waitFor("  +result = 2", 1)
	term.waitFor("allow? y = yes, once · a = all calls this session · n = no › ", 1)
	term.tmux("send-keys", "-t", "tinypi", "n", "Enter")
	term.waitFor("← edit error: the user refused this edit call", 1)
	term.waitFor("allow? y = yes, once · a = all calls this session · n = no › ", 2)
	term.tmux("send-keys", "-t", "tinypi", "y", "Enter")
	term.waitFor("← edit ok: Edited calc.txt", 1)
	term.waitFor("? bash", 1)
	term.waitFor("  $ echo checked > check.out", 1)
	term.waitFor("allow? y = yes, once · a = all calls this session · n = no › ", 3)
	term.tmux("send-keys", "-t", "tinypi", "a", "Enter")
	term.waitFor("← write ok", 1)
	term.waitFor("All done.", 1)
	term.waitFor("› ", 5) // the prompt, and the three answers' prompts
	term.tmux("send-keys", "-t", "tinypi", "C-d")
	if got := term.exitStatus(); got != "0" {
		t.Fatalf("exit status after the end of input: %s, want 0; the terminal shows:\n%s", got, term.screen())
	}
	if screen := term.screen(); strings.Contains(screen, "? write") {
		t.Errorf("the write was asked about after a: all calls this session:\n%s", screen)
	}
	for name, want := range map[string]string{"calc.txt": "x = 1 + 1\nresult = 2\n", "check.out": "checked\n", "notes.txt": "done\n"} {
		got, err := os.ReadFile(filepath.Join(repo, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
}

// TestTinypiTerminalLineEditing types at tinypi's prompt in a real terminal: the arrow keys edit
// the line (Left, then a letter inserted), Up brings the last line back, /help is tinypi's own,
// and Ctrl-C while an approval is asked aborts the run and returns to the prompt.
func TestTinypiTerminalLineEditing(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is needed for the terminal test (.ci/run installs it)")
		}
		t.Skip("no tmux here")
	}
	bin := buildTinypi(t)
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	text := func(s string) string {
		return `{"role":"assistant","content":[{"type":"text","text":"` + s + `"}],"stopReason":"stop","usage":{"input":10,"output":5,"total":15},"timestamp":0}` + "\n"
	}
	script := filepath.Join(t.TempDir(), "script.jsonl")
	err := os.WriteFile(script, []byte(text("One.")+text("Two.")+
		`{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":"{\"command\": \"touch ran\"}"}],"stopReason":"toolUse","usage":{"input":10,"output":5,"total":15},"timestamp":0}`+"\n"+
		text("Three.")), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	session := filepath.Join(t.TempDir(), "s.jsonl")
	term := &tmuxTerminal{t: t, socket: fmt.Sprintf("tinypi-editing-%d", os.Getpid())}
	term.tmux("-f", "/dev/null", "new-session", "-d", "-s", "tinypi", "-x", "150", "-y", "40", "-c", repo,
		filepath.Join(bin, "tinypi"), "-scripted", script, "-session", session)
	t.Cleanup(func() { exec.Command("tmux", "-L", term.socket, "kill-server").Run() })
	term.tmux("set-option", "-t", "tinypi", "remain-on-exit", "on")

	term.waitFor("› ", 1)
	term.tmux("send-keys", "-t", "tinypi", "ab", "Left", "X", "Enter")
	term.waitFor("One.", 1)
	term.waitFor("› ", 2)
	term.tmux("send-keys", "-t", "tinypi", "Up", "Enter")
	term.waitFor("Two.", 1)
	term.waitFor("› aXb", 2)
	term.tmux("send-keys", "-t", "tinypi", "/help", "Enter")
	term.waitFor("/help              this list", 1)
	term.tmux("send-keys", "-t", "tinypi", "run it", "Enter")
	term.waitFor("allow? y = yes, once · a = all calls this session · n = no › ", 1)
	term.tmux("send-keys", "-t", "tinypi", "C-c")
	term.waitFor("← bash error: the user pressed Ctrl-C: the run is aborted", 1)
	term.waitFor("tinypi: the run ended with aborted", 1)
	term.waitFor("› ", 5) // four prompts and the question
	term.tmux("send-keys", "-t", "tinypi", "and now", "Enter")
	term.waitFor("Three.", 1)
	term.tmux("send-keys", "-t", "tinypi", "/quit", "Enter")
	if got := term.exitStatus(); got != "0" {
		t.Fatalf("exit status after /quit: %s, want 0; the terminal shows:\n%s", got, term.screen())
	}
	log, err := os.ReadFile(session)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), `"text":"aXb"`); n != 2 {
		t.Errorf("the session holds the edited line %d times, want 2 (typed, then from history):\n%s", n, log)
	}
	if strings.Contains(string(log), "/help") {
		t.Errorf("/help reached the model:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(repo, "ran")); err == nil {
		t.Errorf("the bash call ran though Ctrl-C refused it")
	}
}
