package i18n

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestText(t *testing.T) {
	c := Catalog{"greet": {"你好，%s", "hello, %s"}, "plain": {"纯文本 %d%%", "plain %d%%"}}
	tests := []struct {
		lang, id string
		args     []any
		want     string
	}{
		{ZH, "greet", []any{"世界"}, "你好，世界"},
		{EN, "greet", []any{"world"}, "hello, world"},
		{"fr", "greet", []any{"monde"}, "你好，monde"},
		{EN, "plain", nil, "plain %d%%"},
		{EN, "missing", nil, "!missing"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, c.Text(tt.lang, tt.id, tt.args...), "Text(%q, %q, %v)", tt.lang, tt.id, tt.args)
	}
}

func TestMergeRefusesDuplicates(t *testing.T) {
	a := Catalog{"x": {"一", "one"}, "y": {"二", "two"}}
	b := Catalog{"y": {"二", "two"}, "z": {"三", "three"}}
	_, err := Merge(a, b)
	require.EqualError(t, err, "i18n: messages defined twice: y")
	got, err := Merge(a, Catalog{"z": {"三", "three"}})
	require.NoError(t, err)
	assert.Equal(t, Catalog{"x": {"一", "one"}, "y": {"二", "two"}, "z": {"三", "three"}}, got)
}

func TestProblems(t *testing.T) {
	c := Catalog{
		"ok":        {"%s 有 %d 个", "%s has %d"},
		"reordered": {"%[2]d 个 %[1]s", "%[1]s has %[2]d"},
		"dropped":   {"%s 有", "%s has %d"},
		"empty":     {"", "x"},
	}
	want := []string{
		`message "dropped": fmt verbs differ: zh [%s], en [%d %s]`,
		`message "empty": zh="" en="x", want both non-empty`,
	}
	if diff := cmp.Diff(want, Problems(c)); diff != "" {
		t.Errorf("Problems (-want +got):\n%s", diff)
	}
}
