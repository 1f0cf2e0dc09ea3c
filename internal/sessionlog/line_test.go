package sessionlog_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/sessionlog"
)

// One line decoded on its own, as a reader that follows a growing log needs it.
func TestDecodeOneLine(t *testing.T) {
	h, err := sessionlog.DecodeHeader([]byte(header + "\r"))
	require.NoError(t, err)
	assert.Equal(t, "t", h.Session)
	for line, kind := range map[string]sessionlog.Kind{
		"\xef\xbb\xbf" + header:                   sessionlog.KindBOM,
		`{"format":"tinypi-session","version":2}`: sessionlog.KindVersion,
		`{"format":"other","version":1}`:          sessionlog.KindHeader,
	} {
		_, err := sessionlog.DecodeHeader([]byte(line))
		var le *sessionlog.Error
		require.ErrorAs(t, err, &le, line)
		assert.Equal(t, kind, le.Kind, line)
	}

	e, err := sessionlog.DecodeLine([]byte(call), 5)
	require.NoError(t, err)
	assert.Equal(t, sessionlog.TypeToolCall, e.Type)
	assert.Equal(t, 3, e.Seq)
	assert.Equal(t, 5, e.Line)
	assert.Equal(t, &sessionlog.Call{CallID: "c1", Name: "read", Arguments: `{"path":"README.md"}`}, e.Call)
	_, err = sessionlog.DecodeLine([]byte(`{"type":"tool/call","seq":3,"data":{"callId":`), 7)
	var le *sessionlog.Error
	require.ErrorAs(t, err, &le)
	assert.Equal(t, sessionlog.KindDamaged, le.Kind)
	assert.Equal(t, 7, le.Line)
}
