package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/learn-tinypi/course/internal/i18n"
)

// TestCatalogLanguagesAgree checks that every message has both texts and that they take the same
// fmt verbs, so a translation can never drop or reorder an argument.
func TestCatalogLanguagesAgree(t *testing.T) {
	for _, problem := range i18n.Problems(catalog) {
		t.Error(problem)
	}
}

// usedIDRE finds message ids passed as literals to the catalog's lookups.
var usedIDRE = regexp.MustCompile(`\b(?:text|usagef)\("([a-z0-9.]+)"`)

// TestEveryUsedMessageExists checks that every message id the package's code looks up is in the
// catalog, so that no learner ever sees a "!id" placeholder.
func TestEveryUsedMessageExists(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	used := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range usedIDRE.FindAllStringSubmatch(string(src), -1) {
			used++
			if _, ok := catalog[m[1]]; !ok {
				t.Errorf("%s looks up message %q, which is not in the catalog", name, m[1])
			}
		}
	}
	if used < 50 {
		t.Errorf("found %d message lookups, want the package's (at least 50): is the pattern stale?", used)
	}
}

func TestPrinterText(t *testing.T) {
	tests := []struct {
		lang, id string
		args     []any
		want     string
	}{
		{langZH, "checkpoint.title", []any{"07", "标题"}, "检查点 07 · 标题"},
		{langEN, "checkpoint.title", []any{"07", "Title"}, "Checkpoint 07 · Title"},
		{langZH, "err.args", []any{"course list", 3}, "参数个数不对（收到 3 个）。用法：course list"},
		{langEN, "no.such.message", nil, "!no.such.message"},
	}
	for _, tt := range tests {
		if got := (printer{lang: tt.lang}).text(tt.id, tt.args...); got != tt.want {
			t.Errorf("text(%s, %q, %v) = %q, want %q", tt.lang, tt.id, tt.args, got, tt.want)
		}
	}
}

func TestDetectLang(t *testing.T) {
	tests := []struct {
		name    string
		flag    string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{name: "default is Chinese", want: langZH},
		{name: "flag en", flag: "en", env: map[string]string{"LANG": "zh_CN.UTF-8"}, want: langEN},
		{name: "flag zh beats English locale", flag: "zh", env: map[string]string{"LC_ALL": "en_US.UTF-8"}, want: langZH},
		{name: "LANG en", env: map[string]string{"LANG": "en_GB.UTF-8"}, want: langEN},
		{name: "LC_ALL wins over LANG", env: map[string]string{"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, want: langZH},
		{name: "LC_MESSAGES wins over LANG", env: map[string]string{"LC_MESSAGES": "en_US", "LANG": "zh_TW"}, want: langEN},
		{name: "C locale is Chinese", env: map[string]string{"LANG": "C.UTF-8"}, want: langZH},
		{name: "bad flag", flag: "fr", want: langZH, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := detectLang(tt.flag, func(k string) string { return tt.env[k] })
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("detectLang(%q, %v) = %q, %v; want %q, error %v", tt.flag, tt.env, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestLangFromArgs(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"list", "--lang", "en"}, "en"},
		{[]string{"--lang=zh", "list"}, "zh"},
		{[]string{"test", "--", "--lang", "en"}, ""},
		{[]string{"list", "--lang"}, ""},
	}
	for _, tt := range tests {
		if got := langFromArgs(tt.args); got != tt.want {
			t.Errorf("langFromArgs(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	tests := map[string]string{
		"../tinypi-07": "../tinypi-07",
		"^TestLab7_1_": "'^TestLab7_1_'",
		"my dir":       "'my dir'",
		"it's":         `'it'\''s'`,
		"":             "''",
		"非执行终态":        "'非执行终态'",
	}
	for in, want := range tests {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteTableAlignsWideRunes(t *testing.T) {
	var b strings.Builder
	rows := [][]string{
		{"7.1", "完成纯文本 stop", "0/1", "x"},
		{"7.10", "ascii", "\x1b[32m1/1\x1b[0m", "y"},
	}
	if err := writeTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	want := "7.1   完成纯文本 stop  0/1  x\n" +
		"7.10  ascii            \x1b[32m1/1\x1b[0m  y\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("writeTable (-want +got):\n%s", diff)
	}
}
