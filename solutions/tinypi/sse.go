package tinypi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
)

// SSEEvent is one event dispatched by a server-sent events stream (text/event-stream).
type SSEEvent struct {
	// Event is the event type: the value of the last `event:` field of the event, or "message"
	// when the event named none.
	Event string
	// Data is the values of the event's `data:` fields joined with "\n".
	Data string
	// ID is the last event ID at the time of dispatch. An `id:` field sets it for this and
	// every later event, until another `id:` field changes it.
	ID string
	// Retry is the reconnection time in milliseconds set by the last valid `retry:` field so
	// far, or 0 when there was none.
	Retry int
}

// maxSSELineBytes bounds one line of the stream, so a body without line breaks cannot make the
// reader hold an unbounded amount of memory. A provider's event is one delta: the longest line of
// the recordings in testdata/sse is under 1 KiB, and 1 MiB still holds a provider that sends a
// whole tool call's arguments in one event.
const maxSSELineBytes = 1 << 20

// errSSELineTooLong is reported when a line exceeds maxSSELineBytes.
var errSSELineTooLong = fmt.Errorf("sse: line longer than %d bytes", maxSSELineBytes)

// ReadSSE decodes a server-sent events stream following the WHATWG framing rules:
//
//   - a line ends at "\n", "\r\n" or "\r";
//   - a byte order mark at the very start of the stream is skipped;
//   - a line that starts with ":" is a comment and is ignored;
//   - "field: value" sets a field; one space after the colon is removed; a line without a
//     colon is a field with an empty value; unknown fields are ignored;
//   - a blank line dispatches the event, unless no data line was seen since the last one;
//   - the stream may end in the middle of an event: that last event has no blank line after it
//     and is discarded, never dispatched.
//
// The returned sequence reads r as it is iterated and can be iterated once. It yields each event
// with a nil error; when reading fails it yields the error (with a zero event) and stops. The end
// of r (io.EOF) is not an error.
func ReadSSE(r io.Reader) iter.Seq2[SSEEvent, error] {
	return func(yield func(SSEEvent, error) bool) {
		lines := sseLineReader{br: bufio.NewReader(r), first: true}
		var parser sseParser
		for {
			line, err := lines.next()
			if errors.Is(err, io.EOF) {
				return // a last line or event without its terminator is incomplete: discard it
			}
			if err != nil {
				yield(SSEEvent{}, err)
				return
			}
			if event, ok := parser.processLine(line); ok {
				if !yield(event, nil) {
					return
				}
			}
		}
	}
}

// sseLineReader splits a stream into lines at "\n", "\r\n" or "\r".
type sseLineReader struct {
	br *bufio.Reader
	// first is true until the first line has been returned; only that line may start with
	// the byte order mark.
	first bool
	// skipLF is set after a line that ended at "\r": if the next byte is "\n", the two form a
	// single line ending. The reader does not wait for that byte before returning the line, so
	// a live stream's event is dispatched as soon as its "\r" arrives.
	skipLF bool
	buf    []byte
}

// next returns the next line without its line ending. At the end of the stream it returns
// io.EOF together with whatever unterminated text followed the last line ending (usually "").
func (r *sseLineReader) next() (string, error) {
	//lab:begin 5.1
	r.buf = r.buf[:0]
	for {
		c, err := r.br.ReadByte()
		if err != nil {
			return string(r.buf), err
		}
		if r.skipLF {
			r.skipLF = false
			if c == '\n' {
				continue
			}
		}
		if c == '\n' || c == '\r' {
			r.skipLF = c == '\r'
			line := string(r.buf)
			if r.first {
				r.first = false
				line = strings.TrimPrefix(line, "\uFEFF")
			}
			return line, nil
		}
		if len(r.buf) >= maxSSELineBytes {
			return "", errSSELineTooLong
		}
		r.buf = append(r.buf, c)
	}
	//lab:end
}

// sseParser holds the state of the event being assembled.
type sseParser struct {
	eventType string
	data      strings.Builder
	lastID    string
	retry     int
}

// processLine interprets one line. It returns the event that a blank line dispatches, with
// ok set; every other line only updates the parser.
func (p *sseParser) processLine(line string) (event SSEEvent, ok bool) {
	//lab:begin 5.1
	if line == "" {
		data, eventType := p.data.String(), p.eventType
		p.data.Reset()
		p.eventType = ""
		if data == "" {
			return SSEEvent{}, false // a block without data lines dispatches nothing
		}
		if eventType == "" {
			eventType = "message"
		}
		return SSEEvent{
			Event: eventType,
			Data:  strings.TrimSuffix(data, "\n"),
			ID:    p.lastID,
			Retry: p.retry,
		}, true
	}
	if line[0] == ':' {
		return SSEEvent{}, false // comment, often a keep-alive
	}
	field, value, found := strings.Cut(line, ":")
	if found {
		value = strings.TrimPrefix(value, " ")
	}
	switch field {
	case "event":
		p.eventType = value
	case "data":
		p.data.WriteString(value)
		p.data.WriteByte('\n')
	case "id":
		if !strings.ContainsRune(value, 0) {
			p.lastID = value
		}
	case "retry":
		if ms, err := strconv.Atoi(value); err == nil && isASCIIDigits(value) {
			p.retry = ms
		}
	}
	return SSEEvent{}, false
	//lab:end
}

// isASCIIDigits reports whether s is non-empty and made only of the digits 0-9 (strconv.Atoi
// also accepts a sign, which the standard does not).
func isASCIIDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
