package diagnose

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/i18n"
)

func TestMessages(t *testing.T) {
	for _, p := range i18n.Problems(messages) {
		t.Error(p)
	}
}

// TestProgramLabels checks the label tables of chapter 07's diagnosis program, which lives in
// the learner's module and cannot use the kit's catalog: chinese() and english() in labels.go
// are read as a catalog and must set the same fields, each with the same fmt verbs.
func TestProgramLabels(t *testing.T) {
	_, ch := mustChapter07(t)
	file := path.Join("solutions/tinypi", ch.Diagnosis.Program, "labels.go")
	src, err := fs.ReadFile(course.Content(), file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), file, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || (fn.Name.Name != "chinese" && fn.Name.Name != "english") {
			return true
		}
		fields := map[string]string{}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			key, kok := kv.Key.(*ast.Ident)
			lit, lok := kv.Value.(*ast.BasicLit)
			if !kok || !lok || lit.Kind != token.STRING {
				t.Errorf("%s: %s: a label must be a field set to a string literal", file, fn.Name.Name)
				return false
			}
			value, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			fields[key.Name] = value
			return false
		})
		tables[fn.Name.Name] = fields
		return false
	})
	zh, en := tables["chinese"], tables["english"]
	if len(zh) == 0 || len(en) == 0 {
		t.Fatalf("%s: found %d Chinese and %d English labels, want both tables", file, len(zh), len(en))
	}
	c := i18n.Catalog{}
	for k := range zh {
		c[k] = i18n.Message{ZH: zh[k], EN: en[k]}
	}
	for k := range en {
		c[k] = i18n.Message{ZH: zh[k], EN: en[k]}
	}
	for _, p := range i18n.Problems(c) {
		t.Errorf("%s: %s", file, p)
	}
}

// TestProgramLanguagesAgree runs the target's diagnosis program on every scenario in both
// languages: the runs must state the same facts in the same number of lines.
func TestProgramLanguagesAgree(t *testing.T) {
	_, ch := mustChapter07(t)
	driver, err := targetDriver()
	if err != nil {
		t.Fatal(err)
	}
	facts := map[Language][]run{}
	for _, lang := range []Language{LangZH, LangEN} {
		out, err := driver(context.Background(), []string{"-lang", string(lang), "-json", "all"})
		if err != nil {
			t.Fatal(err)
		}
		runs, err := decodeRuns(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != len(ch.Diagnosis.Scenarios) {
			t.Errorf("-lang %s: %d runs, want one per scenario (%d)", lang, len(runs), len(ch.Diagnosis.Scenarios))
		}
		for i := range runs {
			// Keep the number of lines and the facts; drop the words.
			runs[i].Lines = []string{strconv.Itoa(len(runs[i].Lines))}
			for k := range runs[i].Checks {
				runs[i].Checks[k].Label = ""
			}
		}
		facts[lang] = runs
	}
	if diff := cmp.Diff(facts[LangZH], facts[LangEN]); diff != "" {
		t.Errorf("runs in zh and en differ beyond their words (-zh +en):\n%s", diff)
	}
}

// TestCheck proves the manifest's scenarios against the program, and that a manifest listing a
// scenario the program does not know fails.
func TestCheck(t *testing.T) {
	b, ch := mustChapter07(t)
	if err := Check(context.Background(), b, ch, t.TempDir()); err != nil {
		t.Fatalf("Check(07) = %v, want nil", err)
	}
	// This builder and its chapters are this test's own.
	d := *ch.Diagnosis
	d.Scenarios = append(d.Scenarios[:len(d.Scenarios):len(d.Scenarios)], "no-such-scenario")
	ch.Diagnosis = &d
	err := Check(context.Background(), b, ch, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "no-such-scenario") {
		t.Errorf("Check with an unknown scenario = %v, want an error naming it", err)
	}
}
