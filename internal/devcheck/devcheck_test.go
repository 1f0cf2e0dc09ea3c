package devcheck_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/devcheck"
	"github.com/learn-tinypi/course/internal/tree"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// calcSource is a teaching file with two labs. Lab 1.2's Double is only used by its own tests.
const calcSource = `package tinypi

// Add adds.
func Add(a, b int) int {
	//lab:begin 1.1
	return a + b
	//lab:end
}

// Double doubles.
func Double(n int) int {
	//lab:begin 1.2
	return n * 2
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}
`

// calcTests are chapter 01's focused tests; call turns a stub's panic into t.Fatal.
const calcTests = `package tinypi_test

import (
	"testing"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

func call(t *testing.T, f func() int) (n int) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatal(r)
		}
	}()
	return f()
}

func TestLab1_1_Add(t *testing.T) {
	if got := call(t, func() int { return tinypi.Add(2, 3) }); got != 5 {
		t.Errorf("Add(2, 3) = %d, want 5", got)
	}
}

func TestLab1_1_AddZero(t *testing.T) {
	if got := call(t, func() int { return tinypi.Add(0, 0) }); got != 0 {
		t.Errorf("Add(0, 0) = %d, want 0", got)
	}
}

func TestLab1_2_Double(t *testing.T) {
	if got := call(t, func() int { return tinypi.Double(4) }); got != 8 {
		t.Errorf("Double(4) = %d, want 8", got)
	}
}
`

// fakeCourse is a course of one rebuild chapter (two labs, a mutant its tests catch and one they
// miss) and one observe chapter, next to the kit's real go.mod and go.sum.
func fakeCourse(t testing.TB) fstest.MapFS {
	t.Helper()
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	fsys := fstest.MapFS{
		"checkpoints/course.yaml": file(`module: tinypi
go: "1.26"
kit_import: github.com/learn-tinypi/course/solutions/tinypi
requires: []
`),
		"checkpoints/01-calc.yaml": file(`number: "01"
slug: calc
title: 计算
title_en: Calculate
mode: rebuild
files: [calc.go]
test_file: ch01_calc_test.go
doc: docs/01-calc.md
labs:
  - {id: "1.1", title: 加法, title_en: Add, keyword: 加法, pattern: ^TestLab1_1_, tests: 2}
  - {id: "1.2", title: 加倍, title_en: Double, keyword: 加倍, pattern: ^TestLab1_2_, tests: 1}
mutants:
  - {name: minus, lab: "1.1", file: calc.go, find: "a + b", replace: "a - b", explain: 减法, explain_en: Subtracts}
  - {name: square, lab: "1.2", file: calc.go, find: "n * 2", replace: "n * n", explain: 平方, explain_en: Squares}
`),
		"checkpoints/00-show.yaml": file(`number: "00"
slug: show
title: 展示
title_en: Show
mode: observe
observes: "01"
files: [show.go]
test_file: ch00_show_test.go
doc: docs/00-show.md
labs:
  - {id: "0.1", title: 观察, title_en: Observe, keyword: 观察, pattern: ^TestLab0_1_, tests: 1}
`),
		"checkpoints/signatures/01.json":     file(calcSignatures), // devcheck_signatures_test.go
		"solutions/tinypi/calc.go":           file(calcSource),
		"solutions/tinypi/ch01_calc_test.go": file(calcTests),
		"solutions/tinypi/show.go":           file("package tinypi\n\n// Show shows.\nfunc Show() string { return \"shown\" }\n"),
		"solutions/tinypi/ch00_show_test.go": file("package tinypi\n\nimport \"testing\"\n\nfunc TestLab0_1_Show(t *testing.T) {\n\tif Show() != \"shown\" {\n\t\tt.Error(\"not shown\")\n\t}\n}\n"),
		"docs/01-calc.md":                    file("# 计算\n"),
		"docs/01-calc.en.md":                 file("# Calculate\n"),
		"docs/00-show.md":                    file("# 展示\n"),
		"docs/00-show.en.md":                 file("# Show\n"),
		"labs/01/1.1.md":                     file("# Lab 1.1\n\n- **预期：** `2/2`。\n\n## 提示\n\n加法。\n"),
		"labs/01/1.1.en.md":                  file("# Lab 1.1\n\n- **Expected:** `2/2`.\n\n## Hint\n\nAdd.\n"),
		"labs/01/1.2.md":                     file("# Lab 1.2\n\n- **预期：** `1/1`。\n\n## 提示\n\n加倍。\n"),
		"labs/01/1.2.en.md":                  file("# Lab 1.2\n\n- **Expected:** `1/1`.\n\n## Hint\n\nDouble.\n"),
		"labs/00/0.1.md":                     file("# Lab 0.1\n\n- **预期：** `1/1`。\n\n## 提示\n\n看。\n"),
		"labs/00/0.1.en.md":                  file("# Lab 0.1\n\n- **Expected:** `1/1`.\n\n## Hint\n\nLook.\n"),
	}
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := fs.ReadFile(course.Content(), name)
		if err != nil {
			t.Fatal(err)
		}
		fsys[name] = &fstest.MapFile{Data: data}
	}
	return fsys
}

// outcomes maps "chapter check-name" to whether it passed.
func outcomes(r *devcheck.Result) map[string]bool {
	m := map[string]bool{}
	for _, ch := range r.Chapters {
		for _, c := range ch.Checks {
			m[ch.Number+" "+c.Name] = c.OK
		}
	}
	return m
}

func run(t *testing.T, fsys fs.FS, chapters ...string) (*devcheck.Result, string) {
	t.Helper()
	b, err := tree.NewBuilder(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := devcheck.Run(context.Background(), b, devcheck.Options{Chapters: chapters, Parallel: 4, Out: &out, FlakeRuns: flakeRuns})
	if err != nil {
		t.Fatal(err)
	}
	return res, out.String()
}

// flakeRuns keeps the fake course's flake check short; TestFlakyTestFails proves it finds a flake.
const flakeRuns = 6

// flakeCheck is the name of rule 8's check with flakeRuns.
const flakeCheck = "flake: the chapter's focused tests pass 6 runs in a row with -race"

// Names of the checks of devcheck_regions.go.
const (
	regionsCheck = "regions: every //chapter: marker is well formed and matches the manifests' extends:"
	markersCheck = "regions: no //chapter: marker reaches a learner tree (target, parent, starter, stages, mutants)"
	parentCheck  = "parent: the starter is the parent's target except in the chapter's own files and its chapter regions"
)

// countsCheck is the name of the check of devcheck_counts.go.
const countsCheck = "counts: every card and lab box states its lab's test count and run command, and the text the chapter's count"

// languagesCheck is the name of the check of devcheck_lang.go.
const languagesCheck = "languages: every lab has a zh and an en card, each ending with its hint (## 提示 / ## Hint)"

func TestRunFakeCourse(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // os.TempDir, where Run's trees go
	res, out := run(t, fakeCourse(t))
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("Run left %d entries in the temp dir, first %s", len(left), left[0].Name())
	}
	want := map[string]bool{
		"01 target: go vet and go test -race ./... pass offline":                                            true,
		"01 tests: every focused test matches exactly one lab pattern":                                      true,
		"01 tests: lab 1.1 pattern ^TestLab1_1_ selects its 2 test(s) and nothing else":                     true,
		"01 tests: lab 1.2 pattern ^TestLab1_2_ selects its 1 test(s) and nothing else":                     true,
		"01 starter: builds; lab 1.1 fails first with its own message":                                      true,
		"01 progressive: lab 1.1 fails with its own message, earlier labs pass, course test shows its hint": true,
		"01 progressive: lab 1.2 fails with its own message, earlier labs pass, course test shows its hint": true,
		"01 mutant minus: compiles and lab 1.1 catches it":                                                  true,
		"01 mutant square: compiles and lab 1.2 catches it":                                                 true,
		"01 " + signaturesCheck01: true,
		"01 content: every lab has its cards (zh, en) and the chapter has docs/01-calc.md": true,
		"01 " + languagesCheck: true,
		"01 " + countsCheck:    true,
		"01 " + flakeCheck:     true,
		"00 " + flakeCheck:     true,
		"00 target: go vet and go test -race ./... pass offline":                           true,
		"00 tests: every focused test matches exactly one lab pattern":                     true,
		"00 tests: lab 0.1 pattern ^TestLab0_1_ selects its 1 test(s) and nothing else":    true,
		"00 content: every lab has its cards (zh, en) and the chapter has docs/00-show.md": true,
		"00 " + languagesCheck: true,
		"00 " + countsCheck:    true,
		"01 " + regionsCheck:   true,
		"01 " + markersCheck:   true,
		"01 " + parentCheck:    true,
		"00 " + regionsCheck:   true,
		"00 " + markersCheck:   true,
		"01 texts: docs/01-calc.md and docs/01-calc.en.md agree in structure (headings, code blocks, labs, links)": true,
		"00 texts: docs/00-show.md and docs/00-show.en.md agree in structure (headings, code blocks, labs, links)": true,
	}
	if diff := cmp.Diff(want, outcomes(res)); diff != "" {
		t.Errorf("checks (-want +got):\n%s\noutput:\n%s", diff, out)
	}
	if !res.OK() {
		t.Errorf("OK() = false, want true; output:\n%s", out)
	}
	if !strings.Contains(out, "01 ✓ mutant minus: compiles and lab 1.1 catches it\n") ||
		!strings.HasSuffix(out, "28 checks, 0 failed\n") {
		t.Errorf("output lacks a check line or the summary:\n%s", out)
	}
}

func TestRunFindsBrokenContent(t *testing.T) {
	fsys := fakeCourse(t)
	// A mutant the tests cannot notice: n + n is n * 2.
	fsys["checkpoints/01-calc.yaml"].Data = bytes.Replace(fsys["checkpoints/01-calc.yaml"].Data,
		[]byte(`replace: "n * n"`), []byte(`replace: "n + n"`), 1)
	// Lab 1.2's stub on lab 1.1's path breaks progressive order: Add now calls Double.
	fsys["solutions/tinypi/calc.go"].Data = []byte(strings.Replace(calcSource,
		"return a + b", "return a + b + Double(0)", 1))
	// A test no pattern selects, so lab 1.2's count is off too.
	fsys["solutions/tinypi/ch01_calc_test.go"].Data = []byte(calcTests + `
func TestDoubleAgain(t *testing.T) {}

func TestLab1_2_Twice(t *testing.T) {}
`)
	delete(fsys, "labs/01/1.2.en.md")

	res, out := run(t, fsys, "1")
	want := map[string]bool{
		"01 target: go vet and go test -race ./... pass offline":                                            true,
		"01 tests: every focused test matches exactly one lab pattern":                                      false,
		"01 tests: lab 1.1 pattern ^TestLab1_1_ selects its 2 test(s) and nothing else":                     true,
		"01 tests: lab 1.2 pattern ^TestLab1_2_ selects its 1 test(s) and nothing else":                     false,
		"01 starter: builds; lab 1.1 fails first with its own message":                                      true,
		"01 progressive: lab 1.1 fails with its own message, earlier labs pass, course test shows its hint": true,
		"01 progressive: lab 1.2 fails with its own message, earlier labs pass, course test shows its hint": false,
		"01 mutant minus: compiles and lab 1.1 catches it":                                                  true,
		"01 mutant square: compiles and lab 1.2 catches it":                                                 false,
		"01 " + signaturesCheck01: false,
		"01 content: every lab has its cards (zh, en) and the chapter has docs/01-calc.md": false,
		"01 " + languagesCheck: false,
		"01 " + countsCheck:    true,
		"01 " + flakeCheck:     true,
		"01 " + regionsCheck:   true,
		"01 " + markersCheck:   true,
		"01 " + parentCheck:    true,
		"01 texts: docs/01-calc.md and docs/01-calc.en.md agree in structure (headings, code blocks, labs, links)": true,
	}
	if diff := cmp.Diff(want, outcomes(res)); diff != "" {
		t.Errorf("checks (-want +got):\n%s\noutput:\n%s", diff, out)
	}
	if res.OK() {
		t.Error("OK() = true with failed checks")
	}
	for _, detail := range []string{
		"TestDoubleAgain matches no lab pattern",
		"selects 2 test(s) in ch01_calc_test.go, the manifest says 1",
		"lab 1.1 (reference): TestLab1_1_Add did not pass: Lab 1.2 加倍 尚未实现",
		"pass with the mutant applied",
		"labs/01/1.2.en.md is missing",
		"lab 1.2 has no en card",
		"signatures of chapter 01 are stale",
		"18 checks, 7 failed",
	} {
		if !strings.Contains(out, detail) {
			t.Errorf("output lacks %q:\n%s", detail, out)
		}
	}
}

// TestRunMutantsWovenOrAlone: the chapter's mutants are compiled together (schema.go); when one
// of them does not compile, each is proven on its own, and the one that does not compile says so.
// A mutant that changes more than a function body (here: a signature) is proven on its own beside
// the woven ones, with the same verdict.
func TestRunMutantsWovenOrAlone(t *testing.T) {
	for _, tt := range []struct {
		name, square string // square: the mutant's find and replace, as YAML
		squareOK     bool
		detail       string
	}{
		{"every mutant woven", `find: "n * 2", replace: "n * n"`, true, ""},
		{"a mutant that does not compile", `find: "n * 2", replace: "n * m"`, false, "does not compile"},
		{"a mutant that changes a signature", `find: "func Double(n int) int {", replace: "func Double(n int) (r int) {\n\tr = n * n\n\treturn r"`, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fakeCourse(t)
			yaml := fsys["checkpoints/01-calc.yaml"]
			yaml.Data = bytes.Replace(yaml.Data, []byte(`find: "n * 2", replace: "n * n"`), []byte(tt.square), 1)
			res, out := run(t, fsys, "1")
			got := outcomes(res)
			if !got["01 mutant minus: compiles and lab 1.1 catches it"] {
				t.Errorf("mutant minus: not proven caught\n%s", out)
			}
			if got["01 mutant square: compiles and lab 1.2 catches it"] != tt.squareOK {
				t.Errorf("mutant square: OK = %v, want %v\n%s", !tt.squareOK, tt.squareOK, out)
			}
			if !strings.Contains(out, tt.detail) {
				t.Errorf("output lacks %q:\n%s", tt.detail, out)
			}
		})
	}
}

// TestFlakyTestFails: a focused test that fails on one run in three is found by rule 8, which
// names it and its failure rate.
func TestFlakyTestFails(t *testing.T) {
	fsys := fakeCourse(t)
	fsys["solutions/tinypi/ch01_calc_test.go"].Data = []byte(strings.Replace(calcTests, `func TestLab1_1_AddZero(t *testing.T) {`, `var addZeroRuns int

func TestLab1_1_AddZero(t *testing.T) {
	addZeroRuns++
	if addZeroRuns%3 == 0 {
		t.Errorf("run %d lost a race", addZeroRuns)
	}`, 1))
	res, out := run(t, fsys, "1")
	if ok, found := outcomes(res)["01 "+flakeCheck]; !found || ok {
		t.Errorf("flake check found = %v, OK = %v; want a failed check; output:\n%s", found, ok, out)
	}
	want := `TestLab1_1_AddZero is flaky: failed 2 of 6 runs (33.3%), first with "run 3 lost a race"`
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

// TestRawPanicInPlainGoTest: a test of another chapter that calls lab 1.2's code without the lab
// guard dies with a raw panic in a plain go test ./... of lab 1.2's progressive tree (and of lab
// 1.1's, where 1.2 is stubbed too); rule 4 says so.
func TestRawPanicInPlainGoTest(t *testing.T) {
	fsys := fakeCourse(t)
	fsys["solutions/tinypi/ch00_show_test.go"].Data = []byte(string(fsys["solutions/tinypi/ch00_show_test.go"].Data) + `
func TestLab0_1_ShowDouble(t *testing.T) {
	if Double(1) != 2 {
		t.Error("not doubled")
	}
}
`)
	fsys["checkpoints/00-show.yaml"].Data = bytes.Replace(fsys["checkpoints/00-show.yaml"].Data, []byte("tests: 1}"), []byte("tests: 2}"), 1)
	res, out := run(t, fsys, "1")
	for _, lab := range []string{"1.1", "1.2"} {
		name := "01 progressive: lab " + lab + " fails with its own message, earlier labs pass, course test shows its hint"
		if ok, found := outcomes(res)[name]; !found || ok {
			t.Errorf("%s: found = %v, OK = %v; want a failed check; output:\n%s", name, found, ok, out)
		}
	}
	want := "go test ./...: TestLab0_1_ShowDouble (tinypi) dies with a raw panic instead of a lab's message"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

func TestRunUnknownChapter(t *testing.T) {
	b, err := tree.NewBuilder(fakeCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := devcheck.Run(context.Background(), b, devcheck.Options{Chapters: []string{"9"}}); err == nil {
		t.Error("Run with an unknown chapter succeeded")
	}
}

// TestRunProgressiveWovenOrAlone: the chapter's progressive stages run in one build (stages.go);
// a stage that cannot be woven into it (here lab 1.2's stub is in a function literal of a
// variable, not in a function's body) is proven in a tree of its own, with the same verdict:
// passing as it is (with a note that says why it was not woven in), failing when lab 1.1's
// reference calls lab 1.2's stub.
func TestRunProgressiveWovenOrAlone(t *testing.T) {
	doubler := strings.Replace(calcSource, `func Double(n int) int {
	//lab:begin 1.2`, `func Double(n int) int { return doubler(n) }

var doubler = func(n int) int {
	//lab:begin 1.2`, 1)
	for _, tt := range []struct {
		name, source string
		ok           map[string]bool // by lab
		detail       string
	}{
		{"every stage woven, a stage breaks order", strings.Replace(calcSource, "return a + b", "return a + b + Double(0)", 1),
			map[string]bool{"1.1": true, "1.2": false}, "lab 1.1 (reference): TestLab1_1_Add did not pass: Lab 1.2 加倍 尚未实现"},
		{"a stage alone", doubler, map[string]bool{"1.1": true, "1.2": true},
			"01 ✓ progressive: lab 1.2 fails with its own message, earlier labs pass, course test shows its hint\n      note: proven in a tree of its own, not in the chapter's build of stages (stages.go): calc.go: it changes a declaration that is not a function body\n"},
		{"a stage alone breaks order", strings.Replace(doubler, "return a + b", "return a + b + Double(0)", 1),
			map[string]bool{"1.1": true, "1.2": false}, "lab 1.1 (reference): TestLab1_1_Add did not pass: Lab 1.2 加倍 尚未实现"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fakeCourse(t)
			fsys["solutions/tinypi/calc.go"].Data = []byte(tt.source)
			res, out := run(t, fsys, "1")
			got := outcomes(res)
			for lab, ok := range tt.ok {
				name := "01 progressive: lab " + lab + " fails with its own message, earlier labs pass, course test shows its hint"
				if found, in := got[name]; !in || found != ok {
					t.Errorf("%s: OK = %v (found %v), want %v\n%s", name, found, in, ok, out)
				}
			}
			if !strings.Contains(out, tt.detail) {
				t.Errorf("output lacks %q:\n%s", tt.detail, out)
			}
		})
	}
}
