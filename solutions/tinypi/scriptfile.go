package tinypi

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxScriptBytes bounds a script file (LoadScript): a recorded conversation is small, and a
// file that is not one must not be read whole.
const MaxScriptBytes = 16 << 20

// LoadScript reads a scripted conversation: one assistant message per line, as MarshalMessage
// encodes it (blank lines are skipped). It is how a program runs offline with a ScriptedModel
// (NewScriptedModel(script...)). A file that is not regular (a FIFO, a device, a directory), is
// over MaxScriptBytes or holds a line that is not an assistant message is refused with an error
// naming the file and the line.
func LoadScript(path string) ([]AssistantMessage, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|resourceOpenFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("tinypi: script: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tinypi: script: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("tinypi: script %s: not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxScriptBytes+1))
	if err != nil {
		return nil, fmt.Errorf("tinypi: script: %w", err)
	}
	if len(data) > MaxScriptBytes {
		return nil, fmt.Errorf("tinypi: script %s: over %d bytes", path, MaxScriptBytes)
	}
	var script []AssistantMessage
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, MaxScriptBytes)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		m, err := UnmarshalMessage(line)
		if err != nil {
			return nil, fmt.Errorf("tinypi: script %s:%d: %w", path, n, err)
		}
		a, ok := m.(AssistantMessage)
		if !ok {
			return nil, fmt.Errorf("tinypi: script %s:%d: a %s message, want assistant", path, n, m.MessageRole())
		}
		script = append(script, a)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tinypi: script %s: %w", path, err)
	}
	if len(script) == 0 {
		return nil, errors.New("tinypi: script " + path + ": no messages")
	}
	return script, nil
}
