package sessionlog

import "bytes"

// DecodeHeader decodes the first line of a log (without its newline) as ReadFile does: a byte
// order mark, another format or another version is an *Error.
func DecodeHeader(line []byte) (Header, error) {
	var h Header
	if bytes.HasPrefix(line, []byte("\xef\xbb\xbf")) {
		return h, &Error{Kind: KindBOM, Line: 1, Detail: "the file starts with a UTF-8 byte order mark"}
	}
	return h, readHeader(trimLine(line), &h)
}

// DecodeLine decodes one event line (without its newline), line lineNo of its file, on its own
// as ReadFile decodes every line: the shape a line must have whatever the lines before it. The
// checks against the earlier events (its seq, what it refers to, a request's count) are the
// caller's. A line that is not a valid event is an *Error of KindDamaged.
func DecodeLine(line []byte, lineNo int) (Event, error) {
	return decodeLine(trimLine(line), lineNo, true)
}
