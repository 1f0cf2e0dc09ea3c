package manifest_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/manifest"
)

const courseYAML = `module: tinypi
go: "1.26"
kit_import: example.com/kit/solutions/tinypi
requires:
  - golang.org/x/text
`

const ch02YAML = `number: "02"
slug: tools
title: 工具
title_en: Tools
mode: rebuild
files: [tool.go]
test_file: ch02_tools_test.go
doc: docs/02-tools.md
labs:
  - id: "2.1"
    title: 校验参数
    title_en: Validate arguments
    stub_title: 参数校验
    keyword: 参数校验
    pattern: ^TestLab2_1_
    tests: 2
  - id: "2.2"
    title: 执行工具
    title_en: Run a tool
    keyword: 执行工具
    pattern: ^TestLab2_2_
    tests: 1
mutants:
  - name: skip-validation
    lab: "2.1"
    file: tool.go
    find: "validate(args)"
    replace: "nil"
    explain: 跳过校验。
    explain_en: Skips validation.
  - name: silent-tour
    lab: "2.2"
    file: tour.go
    find: "Println"
    replace: "Sprintln"
    explain: 导览不再打印。
    explain_en: The tour prints nothing.
`

const ch01YAML = `number: "01"
slug: messages
title: 消息
title_en: Messages
mode: rebuild
files: [message.go, wire]
test_file: ch01_messages_test.go
doc: docs/01-messages.md
labs:
  - {id: "1.1", title: 消息, title_en: Messages, keyword: 消息, pattern: ^TestLab1_1_, tests: 1}
`

// ch00YAML is an observe chapter that observes the second of the two rebuild chapters.
const ch00YAML = `number: "00"
slug: tour
title: 导览
title_en: A tour
mode: observe
observes: "02"
files: [tour.go]
test_file: ch00_tour_test.go
doc: docs/00-tour.md
labs:
  - {id: "0.1", title: 读循环, title_en: Read the loop, keyword: 读循环, pattern: ^TestLab0_1_, tests: 1}
`

func validFS() fstest.MapFS {
	return fstest.MapFS{
		"checkpoints/course.yaml":      {Data: []byte(courseYAML)},
		"checkpoints/02-tools.yaml":    {Data: []byte(ch02YAML)},
		"checkpoints/01-messages.yaml": {Data: []byte(ch01YAML)},
		"checkpoints/00-tour.yaml":     {Data: []byte(ch00YAML)},
	}
}

func TestLoadValid(t *testing.T) {
	c, err := manifest.Load(validFS())
	require.NoError(t, err, "Load")
	var numbers []string
	for _, ch := range c.Chapters {
		numbers = append(numbers, ch.Number)
	}
	if diff := cmp.Diff([]string{"00", "01", "02"}, numbers); diff != "" {
		t.Errorf("chapter order (-want +got):\n%s", diff)
	}
	assert.Equal(t, "tinypi", c.Module, "Module")
	assert.Equal(t, "1.26", c.GoVersion, "GoVersion")
	assert.Equal(t, "example.com/kit/solutions/tinypi", c.KitImport, "KitImport")
	ch := c.Chapters[2]
	want := &manifest.Mutant{Name: "skip-validation", Lab: "2.1", File: "tool.go", Find: "validate(args)",
		Replace: "nil", Explain: "跳过校验。", ExplainEN: "Skips validation."}
	if diff := cmp.Diff(want, ch.Mutants[0]); diff != "" {
		t.Errorf("mutant (-want +got):\n%s", diff)
	}
	ch00 := c.Chapters[0]
	if !ch.Rebuild() || ch.Observe() || ch00.Rebuild() || !ch00.Observe() {
		t.Errorf("Rebuild/Observe: 02=%v/%v 00=%v/%v, want true/false false/true", ch.Rebuild(), ch.Observe(), ch00.Rebuild(), ch00.Observe())
	}
	assert.Equal(t, "labs/00/0.1.en.md", ch00.Labs[0].CardPath("en"), "CardPath of lab 0.1")
}

// TestObserveChapter checks how an observe chapter (00, observing 02) fits in the course: its files
// join the trees from the chapter it observes on, its parent and target are that chapter's, and
// rebuild chapters skip it.
func TestObserveChapter(t *testing.T) {
	c, err := manifest.Load(validFS())
	require.NoError(t, err)
	ch00, ch01, ch02 := c.Chapters[0], c.Chapters[1], c.Chapters[2]
	numbers := func(chs []*manifest.Chapter) []string {
		var out []string
		for _, ch := range chs {
			out = append(out, ch.Number)
		}
		return out
	}
	if c.Observed(ch00) != ch02 || c.Observed(ch01) != nil {
		t.Errorf("Observed(00) = %v, Observed(01) = %v; want chapter 02 and nil", c.Observed(ch00), c.Observed(ch01))
	}
	parents := map[string]*manifest.Chapter{"00": c.Parent(ch00), "01": c.Parent(ch01), "02": c.Parent(ch02)}
	want := map[string]*manifest.Chapter{"00": ch02, "01": nil, "02": ch01}
	for n := range want {
		if parents[n] != want[n] {
			t.Errorf("Parent(%s) = %v, want %v", n, parents[n], want[n])
		}
	}
	trees := map[string][]string{}
	for _, ch := range c.Chapters {
		trees[ch.Number] = numbers(c.TreeChapters(ch))
	}
	wantTrees := map[string][]string{"00": {"00", "01", "02"}, "01": {"01"}, "02": {"00", "01", "02"}}
	if diff := cmp.Diff(wantTrees, trees); diff != "" {
		t.Errorf("TreeChapters (-want +got):\n%s", diff)
	}
	if c.InTree(ch00, ch01) || !c.InTree(ch00, ch02) || !c.InTree(ch00, ch00) || c.InTree(ch02, ch01) {
		t.Errorf("InTree: 00 in 01 = %v, 00 in 02 = %v, 00 in 00 = %v, 02 in 01 = %v; want false true true false",
			c.InTree(ch00, ch01), c.InTree(ch00, ch02), c.InTree(ch00, ch00), c.InTree(ch02, ch01))
	}
}

func TestLoadObserveErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // manifests to add or replace
		want  string
	}{
		{"observes a later rebuild chapter only", map[string]string{"checkpoints/03-late.yaml": `number: "03"
slug: late
title: 晚
title_en: Late
mode: observe
observes: "01"
files: [late.go]
doc: docs/03.md
`}, "chapter 03: observes chapter 01, but the observed chapter must come later in the course"},
		{"observes an observe chapter", map[string]string{"checkpoints/03-late.yaml": `number: "03"
slug: late
title: 晚
title_en: Late
mode: rebuild
files: [late.go]
test_file: ch03_test.go
doc: docs/03.md
labs: [{id: "3.1", title: 晚, title_en: Late, keyword: 晚, pattern: ^TestLab3_1_, tests: 1}]
`, "checkpoints/00-tour.yaml": strings.Replace(ch00YAML, `observes: "02"`, `observes: "03"`, 1),
			"checkpoints/01-messages.yaml": strings.Replace(ch01YAML, "mode: rebuild", "mode: observe\nobserves: \"00\"", 1)},
			"chapter 01: observes chapter 00, which is not a rebuild chapter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := validFS()
			for name, data := range tt.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			_, err := manifest.Load(fsys)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		file string // file to replace in validFS
		old  string // text in that file to replace
		new  string
		want string // substring of the error
	}{
		{"typo in a field", "checkpoints/02-tools.yaml", "title_en: Tools", "titel_en: Tools", "titel_en"},
		{"typo in course.yaml", "checkpoints/course.yaml", "kit_import:", "kit_imports:", "kit_imports"},
		{"bad mode", "checkpoints/02-tools.yaml", "mode: rebuild", "mode: watch", `mode "watch"`},
		{"duplicate lab id", "checkpoints/02-tools.yaml", `id: "2.2"`, `id: "2.1"`, "id listed twice"},
		{"lab id of another chapter", "checkpoints/02-tools.yaml", `id: "2.2"`, `id: "3.2"`, "chapter number 2"},
		{"bad pattern", "checkpoints/02-tools.yaml", "^TestLab2_2_", "^TestLab2_2_(", "pattern"},
		{"zero tests", "checkpoints/02-tools.yaml", "tests: 1", "tests: 0", "tests must be at least 1"},
		{"mutant of unknown lab", "checkpoints/02-tools.yaml", `lab: "2.1"`, `lab: "2.9"`, `lab "2.9" is not a lab`},
		{"mutant of unowned file", "checkpoints/02-tools.yaml", "file: tool.go", "file: other.go", `mutant skip-validation: file "other.go" is not a file of the chapter's target`},
		{"mutant of a file that joins later", "checkpoints/01-messages.yaml", "doc: docs/01-messages.md",
			"doc: docs/01-messages.md\nmutants: [{name: m, lab: \"1.1\", file: tour.go, find: a, replace: b, explain: x, explain_en: y}]",
			`chapter 01: mutant m: file "tour.go" is not a file of the chapter's target`},
		{"file owned twice", "checkpoints/02-tools.yaml", "files: [tool.go]", "files: [tool.go, message.go]", `"message.go" is also owned by chapter 01`},
		{"file under an owned directory", "checkpoints/02-tools.yaml", "files: [tool.go]", "files: [tool.go, wire/x.go]", "also owned"},
		{"number differs from file name", "checkpoints/02-tools.yaml", `number: "02"`, `number: "03"`, "must match the file name"},
		{"path leaves the package", "checkpoints/02-tools.yaml", "files: [tool.go]", "files: [../tool.go]", "clean relative path"},
		{"rebuild without labs", "checkpoints/01-messages.yaml", "labs:\n  - {id: \"1.1\"", "labs: []\n#", "at least one lab"},
		{"rebuild without tests", "checkpoints/01-messages.yaml", "test_file: ch01_messages_test.go\n", "", "needs its focused tests"},
		{"observe without observes", "checkpoints/00-tour.yaml", "observes: \"02\"\n", "", `observes: "": an observe chapter must name the rebuild chapter it observes`},
		{"package that leaves the tree", "checkpoints/02-tools.yaml", "test_file: ch02_tools_test.go", "package: ../eval\ntest_file: ch02_tools_test.go", `package: "../eval" must be a clean relative directory`},
		{"test file outside the package", "checkpoints/02-tools.yaml", "test_file: ch02_tools_test.go", "package: eval\ntest_file: ch02_tools_test.go", `test_file: "ch02_tools_test.go" must be in the chapter's package directory "eval"`},
		{"test file in a package not declared", "checkpoints/02-tools.yaml", "test_file: ch02_tools_test.go", "test_file: eval/ch02_tools_test.go", `must be in the chapter's package directory "."`},
		{"observes not two digits", "checkpoints/00-tour.yaml", `observes: "02"`, `observes: "2"`, "as two digits"},
		{"rebuild that observes", "checkpoints/00-tour.yaml", "mode: observe", "mode: rebuild", "observes: only an observe chapter observes another chapter"},
		{"observes an unknown chapter", "checkpoints/00-tour.yaml", `observes: "02"`, `observes: "05"`, `chapter 00: observes "05", which is not a chapter of the course`},
		{"lab of chapter 00", "checkpoints/00-tour.yaml", `id: "0.1"`, `id: "1.1"`, "id must start with the chapter number 0"},
		{"extends its own file", "checkpoints/02-tools.yaml", "files: [tool.go]", "files: [tool.go]\nextends: [tool.go]", `chapter 02: extends "tool.go", which it owns itself`},
		{"extends an unowned file", "checkpoints/02-tools.yaml", "files: [tool.go]", "files: [tool.go]\nextends: [nobody.go]", `chapter 02: extends "nobody.go", which no chapter owns`},
		{"extends a later chapter's file", "checkpoints/01-messages.yaml", "files: [message.go, wire]", "files: [message.go, wire]\nextends: [tool.go]", `chapter 01: extends "tool.go", which chapter 02 owns, whose files are not in chapter 01's trees`},
		{"extends a file twice", "checkpoints/02-tools.yaml", "files: [tool.go]", "files: [tool.go]\nextends: [message.go, message.go]", `extends: "message.go" is listed twice`},
		{"extends a directory", "checkpoints/02-tools.yaml", "files: [tool.go]", "files: [tool.go]\nextends: [wire]", `extends: "wire" must be a clean relative path of a Go file`},
		{"observe chapter extends", "checkpoints/00-tour.yaml", "files: [tour.go]", "files: [tour.go]\nextends: [message.go]", "only a rebuild chapter extends"},
		{"race mutant of a lab run without -race", "checkpoints/02-tools.yaml", "explain_en: Skips validation.",
			"explain_en: Skips validation.\n    race: true", "mutants[0] (skip-validation): a race mutant needs its lab 2.1 to be run with -race (race: true)"},
		{"named as an unknown mutant", "checkpoints/02-tools.yaml", "explain_en: Skips validation.",
			"explain_en: Skips validation.\n    named_as: skip-checks", `mutants[0] (skip-validation): named_as "skip-checks" is not a mutant of this chapter`},
		{"named as itself", "checkpoints/02-tools.yaml", "explain_en: Skips validation.",
			"explain_en: Skips validation.\n    named_as: skip-validation", "mutants[0] (skip-validation): named_as names the mutant itself"},
		{"named as a mutant of another lab", "checkpoints/02-tools.yaml", "explain_en: Skips validation.",
			"explain_en: Skips validation.\n    named_as: silent-tour", `mutants[0] (skip-validation): named_as "silent-tour" is a mutant of lab 2.2, not of lab 2.1`},
		{"diagnose without a diagnosis", "checkpoints/02-tools.yaml", "explain_en: Skips validation.",
			"explain_en: Skips validation.\n    diagnose: [fast]", "mutants[0] (skip-validation): diagnose is set, but the chapter has no diagnosis block"},
		{"unknown scenario of a mutant", "checkpoints/02-tools.yaml", "explain_en: The tour prints nothing.",
			"explain_en: The tour prints nothing.\n    diagnose: [fsat]\ndiagnosis: {program: cmd/diagnose, scenarios: [fast, slow], default: [fast]}",
			`mutants[1] (silent-tour): diagnose: unknown scenario "fsat"; the diagnosis has: fast, slow`},
		{"unknown reference scenario", "checkpoints/02-tools.yaml", "explain_en: The tour prints nothing.",
			"explain_en: The tour prints nothing.\n    diagnose_reference: [none]\ndiagnosis: {program: cmd/diagnose, scenarios: [fast], default: [fast]}",
			`diagnose_reference: unknown scenario "none"`},
		{"unknown default scenario", "checkpoints/02-tools.yaml", "doc: docs/02-tools.md",
			"doc: docs/02-tools.md\ndiagnosis: {program: cmd/diagnose, scenarios: [fast], default: [slow]}", `diagnosis: default: unknown scenario "slow"`},
		{"diagnosis without default", "checkpoints/02-tools.yaml", "doc: docs/02-tools.md",
			"doc: docs/02-tools.md\ndiagnosis: {program: cmd/diagnose, scenarios: [fast]}", "diagnosis: default: name the scenarios"},
		{"diagnosis without scenarios", "checkpoints/02-tools.yaml", "doc: docs/02-tools.md",
			"doc: docs/02-tools.md\ndiagnosis: {program: cmd/diagnose, default: [fast]}", "at least one scenario"},
		{"scenario listed twice", "checkpoints/02-tools.yaml", "doc: docs/02-tools.md",
			"doc: docs/02-tools.md\ndiagnosis: {program: cmd/diagnose, scenarios: [fast, fast], default: [fast]}", `scenario "fast" is empty, listed twice`},
		{"program outside the package", "checkpoints/02-tools.yaml", "doc: docs/02-tools.md",
			"doc: docs/02-tools.md\ndiagnosis: {program: ../diagnose, scenarios: [fast], default: [fast]}", `program "../diagnose" must be a clean relative path`},
		{"typo in diagnosis", "checkpoints/02-tools.yaml", "doc: docs/02-tools.md",
			"doc: docs/02-tools.md\ndiagnosis: {program: cmd/diagnose, scenario: [fast], default: [fast]}", "scenario"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := validFS()
			data := string(fsys[tt.file].Data)
			require.Contains(t, data, tt.old, "test setup: the text to replace is not in %s", tt.file)
			fsys[tt.file] = &fstest.MapFile{Data: []byte(strings.Replace(data, tt.old, tt.new, 1))}
			_, err := manifest.Load(fsys)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestExtends(t *testing.T) {
	fsys := validFS()
	ch02 := strings.Replace(ch02YAML, "files: [tool.go]", "files: [tool.go]\nextends: [message.go, wire/codec.go]", 1)
	fsys["checkpoints/02-tools.yaml"] = &fstest.MapFile{Data: []byte(ch02)}
	c, err := manifest.Load(fsys)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	ch01, ch02c := c.Chapters[1], c.Chapters[2]
	if diff := cmp.Diff([]string{"message.go", "wire/codec.go"}, ch02c.Extends); diff != "" {
		t.Errorf("Extends (-want +got):\n%s", diff)
	}
	if got := c.Owner("wire/codec.go"); got != ch01 {
		t.Errorf("Owner(wire/codec.go) = %v, want chapter 01", got)
	}
	if got := c.Owner("nobody.go"); got != nil {
		t.Errorf("Owner(nobody.go) = %v, want nil", got)
	}
	if got := c.Extenders("message.go"); len(got) != 1 || got[0] != ch02c {
		t.Errorf("Extenders(message.go) = %v, want [chapter 02]", got)
	}
	if got := c.Extenders("tool.go"); len(got) != 0 {
		t.Errorf("Extenders(tool.go) = %v, want none", got)
	}
}

// TestMutantScenarios checks which scenarios a diagnosis runs on each side: the mutant's own,
// the reference's when it names them, and the chapter's default otherwise.
func TestMutantScenarios(t *testing.T) {
	fsys := validFS()
	data := string(fsys["checkpoints/02-tools.yaml"].Data)
	data = strings.Replace(data, "explain_en: Skips validation.", "explain_en: Skips validation.\n    diagnose: [slow]\n    diagnose_reference: [fast, slow]", 1)
	data += "diagnosis:\n  program: cmd/diagnose\n  scenarios: [fast, slow]\n  default: [fast]\n"
	fsys["checkpoints/02-tools.yaml"] = &fstest.MapFile{Data: []byte(data)}
	c, err := manifest.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.Chapter("02")
	if err != nil {
		t.Fatal(err)
	}
	want := &manifest.Diagnosis{Program: "cmd/diagnose", Scenarios: []string{"fast", "slow"}, Default: []string{"fast"}}
	if diff := cmp.Diff(want, ch.Diagnosis); diff != "" {
		t.Errorf("diagnosis (-want +got):\n%s", diff)
	}
	tests := []struct {
		mutant         int
		mutated, refer []string
	}{
		{0, []string{"slow"}, []string{"fast", "slow"}},
		{1, []string{"fast"}, []string{"fast"}},
	}
	for _, tt := range tests {
		m := ch.Mutants[tt.mutant]
		mutated, refer := m.Scenarios(ch.Diagnosis)
		if !slices.Equal(mutated, tt.mutated) || !slices.Equal(refer, tt.refer) {
			t.Errorf("%s: Scenarios = %v, %v; want %v, %v", m.Name, mutated, refer, tt.mutated, tt.refer)
		}
	}
}

func TestLoadBadFileName(t *testing.T) {
	fsys := validFS()
	fsys["checkpoints/2-Tools.yaml"] = fsys["checkpoints/02-tools.yaml"]
	_, err := manifest.Load(fsys)
	assert.ErrorContains(t, err, "2-Tools.yaml")
}

func TestLoadMissingCourse(t *testing.T) {
	_, err := manifest.Load(fstest.MapFS{})
	assert.ErrorContains(t, err, "course.yaml")
}

func TestChapterLookup(t *testing.T) {
	c, err := manifest.Load(validFS())
	require.NoError(t, err)
	for _, number := range []string{"2", "02", " 2 "} {
		ch, err := c.Chapter(number)
		if assert.NoError(t, err, "Chapter(%q)", number) {
			assert.Equal(t, "02", ch.Number, "Chapter(%q)", number)
		}
	}
	_, err = c.Chapter("9")
	var unknown *manifest.UnknownChapterError
	require.ErrorAs(t, err, &unknown, "Chapter(9)")
	for _, want := range []string{`"9"`, "00  导览", "01  消息", "02  工具"} {
		assert.ErrorContains(t, err, want, "Chapter(9)")
	}
}

func TestLabLookup(t *testing.T) {
	c, err := manifest.Load(validFS())
	require.NoError(t, err)
	ch := c.Chapters[2]
	for _, key := range []string{"2.2", "执行工具"} {
		l, err := ch.Lab(key)
		if assert.NoError(t, err, "Lab(%q)", key) {
			assert.Equal(t, "2.2", l.ID, "Lab(%q)", key)
		}
	}
	_, err = ch.Lab("2.7")
	assert.ErrorContains(t, err, "2.1  校验参数 (参数校验)", "Lab(2.7) lists the labs")
	assert.ErrorContains(t, err, "2.2", "Lab(2.7) lists the labs")
}

func TestLabTexts(t *testing.T) {
	c, err := manifest.Load(validFS())
	require.NoError(t, err)
	l1, l2 := c.Chapters[2].Labs[0], c.Chapters[2].Labs[1]
	got := []string{l1.PendingMessage(), l2.PendingMessage(), l1.CardPath("zh"), l1.CardPath("en")}
	want := []string{"Lab 2.1 参数校验 尚未实现", "Lab 2.2 执行工具 尚未实现", "labs/02/2.1.md", "labs/02/2.1.en.md"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestLoadCourseContent loads the real manifests, so a broken manifest fails the kit's tests.
func TestLoadCourseContent(t *testing.T) {
	c, err := manifest.Load(course.Content())
	require.NoError(t, err, "Load(course.Content())")
	require.NotEmpty(t, c.Chapters, "the course's chapters")
	ch, err := c.Chapter("7")
	require.NoError(t, err)
	l, err := ch.Lab("7.1")
	require.NoError(t, err)
	assert.Equal(t, "Lab 7.1 收集模型终态 尚未实现", l.PendingMessage())
}

// TestChapterPackage checks where a chapter's tests run: the module's root package unless the
// chapter has a package of its own, and then every lab of it runs there.
func TestChapterPackage(t *testing.T) {
	fsys := validFS()
	ch02 := strings.Replace(ch02YAML, "files: [tool.go]", "files: [eval/tool.go]", 1)
	ch02 = strings.Replace(ch02, "test_file: ch02_tools_test.go", "package: eval\ntest_file: eval/ch02_tools_test.go", 1)
	ch02 = strings.Replace(ch02, "file: tool.go", "file: eval/tool.go", 1)
	fsys["checkpoints/02-tools.yaml"] = &fstest.MapFile{Data: []byte(ch02)}
	c, err := manifest.Load(fsys)
	require.NoError(t, err, "Load")
	ch01, ch02c := c.Chapters[1], c.Chapters[2]
	assert.Equal(t, ".", ch01.PackagePattern(), "chapter 01's package")
	assert.Equal(t, "./eval", ch02c.PackagePattern(), "chapter 02's package")
	assert.Equal(t, ".", ch01.PackageDir(), "chapter 01's package directory")
	assert.Equal(t, "eval", ch02c.PackageDir(), "chapter 02's package directory")
	assert.Equal(t, filepath.Join("root", "eval"), ch02c.PackageDirIn("root"), "chapter 02's package directory in a tree")
	assert.Equal(t, "root", ch01.PackageDirIn("root"), "chapter 01's package directory in a tree")
	assert.Equal(t, ".", ch01.Labs[0].PackagePattern(), "lab 1.1's package")
	assert.Equal(t, "./eval", ch02c.Labs[1].PackagePattern(), "lab 2.2's package")
	labs := []*manifest.Lab{ch02c.Labs[0], ch01.Labs[0], ch02c.Labs[1]}
	if diff := cmp.Diff([]string{"./eval", "."}, manifest.LabPackages(labs)); diff != "" {
		t.Errorf("LabPackages (-want +got):\n%s", diff)
	}
	assert.Equal(t, ".", (&manifest.Lab{ID: "9.1"}).PackagePattern(), "a lab not loaded from a manifest")
}
