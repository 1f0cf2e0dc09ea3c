package i18n

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
		if got := c.Text(tt.lang, tt.id, tt.args...); got != tt.want {
			t.Errorf("Text(%q, %q, %v) = %q, want %q", tt.lang, tt.id, tt.args, got, tt.want)
		}
	}
}

func TestMergeRefusesDuplicates(t *testing.T) {
	a := Catalog{"x": {"一", "one"}, "y": {"二", "two"}}
	b := Catalog{"y": {"二", "two"}, "z": {"三", "three"}}
	if _, err := Merge(a, b); err == nil || err.Error() != "i18n: messages defined twice: y" {
		t.Fatalf("Merge(a, b) error = %v, want it to name y", err)
	}
	got, err := Merge(a, Catalog{"z": {"三", "three"}})
	if err != nil {
		t.Fatal(err)
	}
	want := Catalog{"x": {"一", "one"}, "y": {"二", "two"}, "z": {"三", "three"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Merge (-want +got):\n%s", diff)
	}
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
