package diagnose

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// shared is a directory for the target's driver, built once for all tests of this binary and
// removed by TestMain.
var shared string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "diagnose-test-")
	if err != nil {
		panic(err)
	}
	shared = dir
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		// Run builds both programs in goroutines; none may outlive a diagnosis.
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// targetDriver builds chapter 07's target driver once per test binary: every diagnosis compares
// against it, and compiling is the slow part.
var targetDriver = sync.OnceValues(func() (Driver, error) {
	b, ch, err := chapter07()
	if err != nil {
		return nil, err
	}
	t, err := b.Target(ch)
	if err != nil {
		return nil, err
	}
	return Build(context.Background(), t, ch.Diagnosis.Program, filepath.Join(shared, "target"))
})

func chapter07() (*tree.Builder, *manifest.Chapter, error) {
	b, err := tree.NewBuilder(course.Content())
	if err != nil {
		return nil, nil, err
	}
	ch, err := b.Course().Chapter("07")
	return b, ch, err
}

func mustChapter07(t *testing.T) (*tree.Builder, *manifest.Chapter) {
	t.Helper()
	b, ch, err := chapter07()
	if err != nil {
		t.Fatal(err)
	}
	return b, ch
}

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := lineDiff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); len(diff) > 0 {
		var b strings.Builder
		for _, d := range diff {
			sign := "-"
			if d.added {
				sign = "+"
			}
			b.WriteString(sign + " " + d.line + "\n")
		}
		t.Errorf("output differs from %s (-want +got; go test -update rewrites it):\n%s", path, b.String())
	}
}

func TestWriteList(t *testing.T) {
	tests := []struct {
		lang   Language
		header string
		golden string
		// explain is the explanation each mutant must be listed with.
		explain func(*manifest.Mutant) string
	}{
		{LangZH, "第 07 章可以诊断的错误写法", "list.golden", func(m *manifest.Mutant) string { return m.Explain }},
		{LangEN, "Mistakes chapter 07 can diagnose", "list.en.golden", func(m *manifest.Mutant) string { return m.ExplainEN }},
	}
	b, ch := mustChapter07(t)
	for _, tt := range tests {
		t.Run(string(tt.lang), func(t *testing.T) {
			var out bytes.Buffer
			if err := WriteList(&out, b, ch, tt.lang); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out.String(), tt.header) {
				t.Errorf("listing starts with %q, want %q", strings.SplitN(out.String(), "\n", 2)[0], tt.header)
			}
			for _, m := range ch.Mutants {
				if !strings.Contains(out.String(), "  "+m.Name+" ") || !strings.Contains(out.String(), tt.explain(m)) {
					t.Errorf("listing lacks %s and its explanation:\n%s", m.Name, out.String())
				}
			}
			golden(t, tt.golden, out.String())
		})
	}
}

func TestListWithoutDriver(t *testing.T) {
	b, _ := mustChapter07(t)
	ch, err := b.Course().Chapter("01")
	if err != nil {
		t.Fatal(err)
	}
	// Chapter 01 has mistakes but no diagnosis program: they are listed, to be diagnosed by
	// their lab's tests.
	got, err := List(b, ch)
	if err != nil || len(got) != len(ch.Mutants) {
		t.Errorf("List(01) = %d mistakes, %v; want its %d mutants", len(got), err, len(ch.Mutants))
	}
	var out bytes.Buffer
	if err := WriteList(&out, b, ch, LangEN); err != nil {
		t.Fatal(err)
	}
	if want := "The known mistakes of chapter 01. The chapter has no diagnosis program"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("listing starts with %q, want %q", strings.SplitN(out.String(), "\n", 2)[0], want)
	}
	none := *ch
	none.Mutants = nil
	if _, err := List(b, &none); !errors.Is(err, ErrNoDriver) {
		t.Errorf("List(a chapter without mutants) error = %v, want ErrNoDriver", err)
	}
}

func TestRenderLabTests(t *testing.T) {
	ch := &manifest.Chapter{Number: "08"}
	lab := &manifest.Lab{ID: "8.3", Pattern: "^TestLab8_3_", Tests: 2}
	m := &manifest.Mutant{Name: "in-place-write", Lab: "8.3", Explain: "原地改写", ExplainEN: "rewritten in place"}
	report := &gotest.Report{Tests: []gotest.TestResult{
		{Name: "TestLab8_3_Write", Failed: true, FirstFailure: "file (-want +got):", Difference: []string{"- new inode", "+ same inode"}},
		{Name: "TestLab8_3_Edit", Passed: true},
		{Name: "TestLab8_4_Other", Failed: true, FirstFailure: "not this lab"},
	}}
	want := "== diagnosis: chapter 08 · in-place-write (Lab 8.3) ==\n" +
		"the mistake: rewritten in place\n" +
		"\n" +
		"The focused tests of lab 8.3 run on this mistake (go test -run ^TestLab8_3_ .). The reference passes every one of them (course dev check proves it).\n" +
		"  ✗ TestLab8_3_Write  FAILS\n" +
		"      file (-want +got):\n" +
		"      - new inode\n" +
		"      + same inode\n" +
		"  ✓ TestLab8_3_Edit  passes\n" +
		"\n" +
		"When course test shows lab 8.3 failing exactly like this (the same tests, the same first messages), it names this mistake.\n"
	if diff := cmp.Diff(want, renderLabTests(textsFor(LangEN), ch, m, lab, report)); diff != "" {
		t.Errorf("renderLabTests (-want +got):\n%s", diff)
	}
	report.Tests = []gotest.TestResult{{Name: "TestLab8_3_Write", Passed: true}}
	if got := renderLabTests(textsFor(LangZH), ch, m, lab, report); !strings.Contains(got, "（没有测试失败：Lab 8.3 的测试抓不住这个错误写法，这是课程的问题。）") {
		t.Errorf("a mistake no test catches:\n%s", got)
	}
}

func TestRunUnknownMistake(t *testing.T) {
	b, ch := mustChapter07(t)
	var out bytes.Buffer
	err := Run(context.Background(), b, ch, "no-such-mistake", LangZH, &out)
	var unknown *UnknownMistakeError
	if !errors.As(err, &unknown) {
		t.Fatalf("Run error = %v, want *UnknownMistakeError", err)
	}
	if len(unknown.Mutants) != len(ch.Mutants) || !strings.Contains(err.Error(), "first-call-only") {
		t.Errorf("error %q lists %d mistakes, want all %d", err, len(unknown.Mutants), len(ch.Mutants))
	}
	if out.Len() != 0 {
		t.Errorf("Run printed %q before failing", out.String())
	}
}

// TestDiagnose runs real mutated code: each case builds its mutant's driver and compares the
// printed diagnosis with a golden file. The facts each case states are checked on the parsed
// runs too, so that a golden file rewritten by mistake cannot hide a wrong diagnosis.
func TestDiagnose(t *testing.T) {
	firstCallOnly := map[string]map[string]string{
		"mutant/weather-fx-skip":  {"rounds": "2", "executions": "1", "unpaired": "1", "end": "stop", "weather": "true", "fx": "false"},
		"mutant/weather-fx-reask": {"rounds": "6", "executions": "6", "unpaired": "1", "end": "maxSteps", "weather": "false", "fx": "false"},
		"target/weather-fx":       {"rounds": "2", "executions": "2", "unpaired": "0", "end": "stop", "weather": "true", "fx": "true"},
	}
	tests := []struct {
		mutant string
		// lang is the output language; the zero value means Chinese.
		lang Language
		// want maps "side/scenario" to summary fields the run must have.
		want map[string]map[string]string
	}{
		{mutant: "first-call-only", want: firstCallOnly},
		{mutant: "first-call-only", lang: LangEN, want: firstCallOnly},
		{
			mutant: "result-not-fed-back",
			want: map[string]map[string]string{
				"mutant/readme": {"rounds": "2", "executions": "1", "unpaired": "1", "project": "false"},
				"target/readme": {"rounds": "2", "executions": "1", "unpaired": "0", "project": "true"},
			},
		},
		{
			mutant: "length-runs-tools",
			want: map[string]map[string]string{
				"mutant/length": {"rounds": "2", "executions": "1", "end": "stop"},
				"target/length": {"rounds": "1", "executions": "0", "end": "length"},
			},
		},
		{
			mutant: "results-in-completion-order",
			want: map[string]map[string]string{
				"mutant/weather-fx": {"rounds": "2", "executions": "2", "unpaired": "0"},
				"target/weather-fx": {"rounds": "2", "executions": "2", "unpaired": "0"},
			},
		},
	}
	b, ch := mustChapter07(t)
	for _, tt := range tests {
		l := textsFor(tt.lang)
		name, goldenFile := tt.mutant, tt.mutant+".golden"
		if tt.lang == LangEN {
			name, goldenFile = "en/"+tt.mutant, tt.mutant+".en.golden"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			target, err := targetDriver()
			if err != nil {
				t.Fatal(err)
			}
			m := mutantNamed(t, ch, tt.mutant)
			mt, err := b.Mutant(ch, m)
			if err != nil {
				t.Fatal(err)
			}
			mutant, err := Build(context.Background(), mt, ch.Diagnosis.Program, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			runs := map[string]run{}
			record := func(side string, d Driver) Driver {
				return func(ctx context.Context, args []string) (string, error) {
					out, err := d(ctx, args)
					if err == nil {
						decoded, derr := decodeRuns(out)
						if derr != nil {
							return "", derr
						}
						for _, r := range decoded {
							runs[side+"/"+r.Scenario] = r
						}
					}
					return out, err
				}
			}
			var out bytes.Buffer
			if err := Diagnose(context.Background(), &out, ch, m, tt.lang, record("mutant", mutant), record("target", target)); err != nil {
				t.Fatal(err)
			}
			for key, fields := range tt.want {
				r, ok := runs[key]
				if !ok {
					t.Errorf("no run %s", key)
					continue
				}
				for k, want := range fields {
					if got, _ := r.value(k); got != want {
						t.Errorf("%s: %s = %q, want %q", key, k, got, want)
					}
				}
			}
			if explain := l.explanation(m); !strings.Contains(out.String(), explain) {
				t.Errorf("diagnosis does not explain the mistake (%q)", explain)
			}
			// The program's runs speak the same language as the rest: their first lines start
			// with the program's word for scenario.
			label := "== 场景 "
			if tt.lang == LangEN {
				label = "== scenario "
			}
			for key, r := range runs {
				if first := r.Lines[0]; !strings.HasPrefix(first, label) {
					t.Errorf("%s: first line %q does not start with %q", key, first, label)
				}
			}
			golden(t, goldenFile, out.String())
		})
	}
}

// TestDiagnosePassesLanguage checks, without building anything, that both programs get the
// language as their first arguments, before the scenarios, and that the kit's own words follow it.
func TestDiagnosePassesLanguage(t *testing.T) {
	_, ch := mustChapter07(t)
	m := mutantNamed(t, ch, "two-turn-ends")
	tests := []struct {
		lang     Language
		wantFlag []string
		wantText []string
	}{
		{LangZH, []string{"-lang", "zh", "-json"}, []string{"== 对照 ==", "错误写法：" + m.Explain, "参考 | b"}},
		{LangEN, []string{"-lang", "en", "-json"}, []string{"== comparison ==", "the mistake: " + m.ExplainEN, "reference | b"}},
		{"", []string{"-lang", "zh", "-json"}, []string{"== 对照 =="}},
	}
	for _, tt := range tests {
		t.Run(string(tt.lang), func(t *testing.T) {
			var got [][]string
			fake := func(line string) Driver {
				return func(_ context.Context, args []string) (string, error) {
					got = append(got, args)
					return `{"scenario":"readme","lines":["== readme ==","` + line + `"],"rounds":1,"end":"stop"}` + "\n", nil
				}
			}
			var out bytes.Buffer
			if err := Diagnose(context.Background(), &out, ch, m, tt.lang, fake("a"), fake("b")); err != nil {
				t.Fatal(err)
			}
			want := [][]string{append(slices.Clone(tt.wantFlag), "readme"), append(slices.Clone(tt.wantFlag), "readme")}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("program arguments (-want +got):\n%s", diff)
			}
			for _, text := range tt.wantText {
				if !strings.Contains(out.String(), text) {
					t.Errorf("diagnosis lacks %q:\n%s", text, out.String())
				}
			}
		})
	}
}

// TestDiagnoseShowsOrder checks the one mistake whose summary matches the reference's: only the
// order of the results in the transcript tells them apart, and the diff section must show it.
func TestDiagnoseShowsOrder(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("testdata", "results-in-completion-order.golden"))
	if err != nil {
		t.Skip("golden file not written yet")
	}
	for _, want := range []string{
		"参考 |   写回 transcript 的结果：toolu_w1, toolu_f1",
		"错误 |   写回 transcript 的结果：toolu_f1, toolu_w1",
	} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("results-in-completion-order.golden lacks %q", want)
		}
	}
}

func mutantNamed(t *testing.T, ch *manifest.Chapter, name string) *manifest.Mutant {
	t.Helper()
	for _, m := range ch.Mutants {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("chapter 07 has no mutant %q", name)
	return nil
}

func TestDecodeRuns(t *testing.T) {
	out := `{"scenario":"a","lines":["== a ==","line"],"rounds":2,"steps":2,"executions":1,"unpaired":0,"end":"stop"}
{"scenario":"b","lines":["== b =="],"rounds":1,"end":"panic","checks":[{"key":"weather","label":"has_weather","ok":true}]}
`
	runs, err := decodeRuns(out)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, r := range runs {
		got = append(got, r.Scenario+":"+strings.Join(r.Lines, "|"))
	}
	want := []string{"a:== a ==|line", "b:== b =="}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decodeRuns (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		run       int
		key, want string
		ok        bool
	}{
		{0, "unpaired", "0", true}, {0, "executions", "1", true}, {0, "weather", "", false},
		{1, "weather", "true", true}, {1, "steps", "", false}, {1, "end", "panic", true},
	} {
		if v, ok := runs[tt.run].value(tt.key); v != tt.want || ok != tt.ok {
			t.Errorf("run %d: value(%q) = %q, %t; want %q, %t", tt.run, tt.key, v, ok, tt.want, tt.ok)
		}
	}
	for _, bad := range []string{
		"",
		"== a ==\nnot json\n",
		`{"scenario":"a","lines":["x"],"rounds":1,"end":"stop"}` + "\ntrailing\n",
		`{"scenario":"a","lines":["x"],"rounds":1,"end":"stop","surprise":1}`,
		`{"scenario":"","lines":["x"]}`,
		`{"scenario":"a","lines":[]}`,
	} {
		if _, err := decodeRuns(bad); err == nil {
			t.Errorf("decodeRuns(%q) succeeded, want an error", bad)
		}
	}
}

func TestLineDiff(t *testing.T) {
	got := lineDiff([]string{"a", "b", "c", "d"}, []string{"a", "c", "x", "d", "e"})
	want := []diffLine{{line: "b"}, {line: "x", added: true}, {line: "e", added: true}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(diffLine{})); diff != "" {
		t.Errorf("lineDiff (-want +got):\n%s", diff)
	}
	if d := lineDiff([]string{"same"}, []string{"same"}); len(d) != 0 {
		t.Errorf("lineDiff of equal inputs = %v, want none", d)
	}
}

// TestRun runs the whole diagnosis the way the CLI does: both programs built in a temporary
// directory that is gone afterwards.
func TestRun(t *testing.T) {
	b, ch := mustChapter07(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var out bytes.Buffer
	if err := Run(context.Background(), b, ch, "two-turn-ends", LangZH, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"参考 | turn_end 事件：1 次\n", "错误 | turn_end 事件：2 次\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("diagnosis lacks %q", want)
		}
	}
	golden(t, "two-turn-ends.golden", out.String())
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("Run left %d entries in the temporary directory, first %s", len(left), left[0].Name())
	}
}
