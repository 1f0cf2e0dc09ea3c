//go:build unix

package proctest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// MakeFIFO makes a FIFO at path for a process to report its id through, or skips the test where
// the file system has none.
func MakeFIFO(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
}

// EndedError is what PID returns when the process ended (ended delivered) before a process id
// came through the FIFO; Err is what ended delivered.
type EndedError struct{ Err error }

func (e *EndedError) Error() string {
	return fmt.Sprintf("it ended before it reported a process id: %v", e.Err)
}

// PID waits until a process writes its process id, one line, to the FIFO fifo, and returns it.
// ended delivers the end of what the test started: when it comes first, PID returns an
// *EndedError. A line that is no process id is an error too; then ended has not been received
// from, and the caller stops what it started. PID leaves no goroutine behind either way.
func PID(fifo string, ended <-chan error) (int, error) {
	// Opened for reading and writing, a FIFO opens at once, whether a writer has come or not,
	// and closing it ends a read under way: the reader below always ends.
	f, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(f).ReadString('\n')
		lines <- strings.TrimSpace(line)
	}()
	select {
	case line := <-lines:
		pid, err := strconv.Atoi(line)
		if err != nil {
			return 0, fmt.Errorf("it reported %q, want its process id", line)
		}
		return pid, nil
	case err := <-ended:
		f.Close()
		<-lines
		return 0, &EndedError{Err: err}
	}
}

// Gone reports whether process pid has ended (a zombie waiting for its new parent counts).
func Gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] == "Z"
}
