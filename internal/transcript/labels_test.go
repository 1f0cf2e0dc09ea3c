package transcript

import (
	"reflect"
	"strings"
	"testing"

	"github.com/learn-tinypi/course/internal/i18n"
)

// TestLabelMessagesAgree checks the labels' catalog as every catalog of the kit is checked: both
// languages present, and the same fmt verbs in each.
func TestLabelMessagesAgree(t *testing.T) {
	for _, problem := range i18n.Problems(labelMessages) {
		t.Error(problem)
	}
}

// TestLabelsIn checks that every label of either language comes from the catalog: none is empty
// or the "!id" of a missing message.
func TestLabelsIn(t *testing.T) {
	for _, lang := range []string{i18n.ZH, i18n.EN} {
		l := reflect.ValueOf(LabelsIn(lang))
		for i := range l.NumField() {
			if v := l.Field(i).String(); v == "" || strings.HasPrefix(v, "!") {
				t.Errorf("LabelsIn(%s).%s = %q, want a text from the catalog", lang, l.Type().Field(i).Name, v)
			}
		}
	}
	if got, want := LabelsIn(i18n.ZH).Learner, "你的运行"; got != want {
		t.Errorf("LabelsIn(zh).Learner = %q, want %q", got, want)
	}
	if got, want := DefaultLabels().Learner, "your run"; got != want {
		t.Errorf("DefaultLabels().Learner = %q, want %q", got, want)
	}
}
