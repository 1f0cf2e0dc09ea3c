// Package manifest loads and validates the course manifests: checkpoints/course.yaml (course-wide
// settings) and checkpoints/NN-<slug>.yaml (one per chapter), as described in docs/authoring.md.
package manifest

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Dir is the folder of the manifests, relative to the root of the course content.
const Dir = "checkpoints"

// EarlierTestsTag is the build tag under which a checkpoint tree keeps the focused tests of the
// chapters before its own (internal/tree writes a //go:build line into those files). A learner's
// plain `go test` in a practice directory then compiles only the current chapter's tests, so a
// one-line edit costs what the chapter needs, not what the course has grown to; the kit's own
// runs (`course test --all`, `practice --from`'s proof, dev check) pass -tags with it and run
// every chapter's tests, as before.
const EarlierTestsTag = "allchapters"

// courseFile is the course-wide manifest inside Dir.
const courseFile = "course.yaml"

// Modes a chapter may have.
const (
	// ModeRebuild chapters are rebuilt by the learner lab by lab.
	ModeRebuild = "rebuild"
	// ModeObserve chapters are read and run, not rebuilt. An observe chapter observes a later
	// rebuild chapter (Chapter.Observes): its files need that chapter's code, so they join the
	// course's trees from that chapter on, and its target is that chapter's target.
	ModeObserve = "observe"
)

// Course is the whole course: course-wide settings and its chapters in the order of their numbers.
type Course struct {
	// Module is the learner's module path (for example "tinypi").
	Module string `yaml:"module"`
	// GoVersion is the go directive of the learner's go.mod (for example "1.26").
	GoVersion string `yaml:"go"`
	// KitImport is the import path of the reference package inside the kit; materialised
	// files have it rewritten to Module.
	KitImport string `yaml:"kit_import"`
	// Requires lists the module paths the learner's go.mod requires.
	Requires []string `yaml:"requires"`
	// Chapters are sorted by number. They come from the chapter files, not from course.yaml.
	Chapters []*Chapter `yaml:"-"`
}

// Chapter is one chapter manifest, checkpoints/NN-<slug>.yaml.
type Chapter struct {
	Number  string `yaml:"number"`   // two digits, "07"
	Slug    string `yaml:"slug"`     // "agent-loop"
	Title   string `yaml:"title"`    // Chinese title
	TitleEN string `yaml:"title_en"` // English title
	Mode    string `yaml:"mode"`     // "rebuild" or "observe"
	// Observes is the number of the rebuild chapter an observe chapter observes ("07"): a later
	// chapter whose target the observe chapter's files are read in. Empty for rebuild chapters.
	Observes string `yaml:"observes"`
	// Files are the chapter's teaching files (or directories), relative to solutions/tinypi.
	Files []string `yaml:"files"`
	// Extends are Go files owned by earlier chapters (relative to solutions/tinypi) in which this
	// chapter has chapter regions (//chapter:begin NN … //chapter:end, see docs/authoring.md): code
	// that its trees and later ones have, and earlier chapters' trees do not. Its labs may sit in
	// them. Only rebuild chapters extend files.
	Extends []string `yaml:"extends"`
	// Package is the directory of the chapter's Go package, relative to solutions/tinypi ("eval"),
	// when it is not the module's root package: its labs and its test file are there, and its
	// tests run there (`go test -run … ./eval`). A chapter in a package of its own compiles only
	// its own code when a learner edits a lab, whatever the course below it has grown to.
	Package string `yaml:"package"`
	// TestFile is the chapter's focused test file, relative to solutions/tinypi.
	TestFile string `yaml:"test_file"`
	// Doc is the chapter text, relative to the root of the course content.
	Doc     string    `yaml:"doc"`
	Labs    []*Lab    `yaml:"labs"`
	Mutants []*Mutant `yaml:"mutants"`
	// Diagnosis names the chapter's diagnosis program and its scenarios; nil when the chapter
	// has none. `course diagnose` runs it on a mutant and on the target.
	Diagnosis *Diagnosis `yaml:"diagnosis"`
	// RecordsRuns says that the chapter's focused tests record the runs they drive when
	// `course test` asks them to (tinypi.RunRecordDirEnv), for `course transcript`.
	RecordsRuns bool `yaml:"records_runs"`
}

// Diagnosis is a chapter's diagnosis program: a main package of the chapter's trees that runs
// named scenarios against the chapter's code.
type Diagnosis struct {
	// Program is the program's package directory, relative to solutions/tinypi ("cmd/diagnose").
	Program string `yaml:"program"`
	// Scenarios are every scenario name the program knows, in the order it lists them.
	Scenarios []string `yaml:"scenarios"`
	// Default are the scenarios run for a mutant that names none of its own.
	Default []string `yaml:"default"`
}

// Lab is one lab of a chapter.
type Lab struct {
	ID      string `yaml:"id"` // "7.1"
	Title   string `yaml:"title"`
	TitleEN string `yaml:"title_en"`
	// StubTitle is the short title used in the pending message; Title when empty.
	StubTitle string `yaml:"stub_title"`
	// Keyword is the Chinese keyword that selects the lab, also in `go test -run`.
	Keyword string `yaml:"keyword"`
	// Pattern is the regular expression selecting the lab's focused tests.
	Pattern string `yaml:"pattern"`
	// Tests is how many focused tests Pattern matches.
	Tests int `yaml:"tests"`
	// Race is set for a lab whose mistakes include data races that only the race detector
	// sees: `course test` runs its tests with -race, and its card's run command has -race.
	Race bool `yaml:"race"`

	pkg string // the package pattern of the lab's chapter, set by Load
}

// LabPackages returns the package patterns of labs (Lab.PackagePattern), each once, in the order
// of their first lab: what a go test of those labs' tests names.
func LabPackages(labs []*Lab) []string {
	var pkgs []string
	for _, l := range labs {
		if !slices.Contains(pkgs, l.PackagePattern()) {
			pkgs = append(pkgs, l.PackagePattern())
		}
	}
	return pkgs
}

// PackagePattern is the go command's pattern for the package of the lab's code and tests: "."
// (the module's root package) unless its chapter has a package of its own ("./eval").
func (l *Lab) PackagePattern() string { return cmp.Or(l.pkg, ".") }

// Mutant is a known mistake applied to a chapter's target.
type Mutant struct {
	Name      string `yaml:"name"`
	Lab       string `yaml:"lab"`  // id of the lab whose tests must catch it
	File      string `yaml:"file"` // relative to solutions/tinypi
	Find      string `yaml:"find"` // must occur exactly once in File
	Replace   string `yaml:"replace"`
	Explain   string `yaml:"explain"`
	ExplainEN string `yaml:"explain_en"`
	// Diagnose are the scenarios of the chapter's diagnosis program that show this mistake
	// best, run on the mutated code; empty means the diagnosis' default scenarios.
	Diagnose []string `yaml:"diagnose"`
	// DiagnoseReference are the scenarios run on the target for comparison; empty means the
	// same as Diagnose.
	DiagnoseReference []string `yaml:"diagnose_reference"`
	// Race is set for a data race that no test can observe without the race detector: dev check
	// runs the lab's tests on this mutant with -race. Its lab must be a race lab.
	Race bool `yaml:"race"`
	// NamedAs is set for a mistake that fails its lab's tests exactly as another mutant of the
	// same lab does, where no test can tell the two apart from outside: that mutant's name and
	// explanation, which must cover this mistake too, are what a learner who makes it is shown.
	// The mutant is still proven (its lab catches it), and dev check proves that its run is
	// named that other mutant, never a third.
	NamedAs string `yaml:"named_as"`
}

// Scenarios returns the scenarios a diagnosis of m runs on the mutated code and on the target,
// given the chapter's diagnosis d.
func (m *Mutant) Scenarios(d *Diagnosis) (mutant, target []string) {
	mutant = m.Diagnose
	if len(mutant) == 0 {
		mutant = d.Default
	}
	target = m.DiagnoseReference
	if len(target) == 0 {
		target = mutant
	}
	return mutant, target
}

// UnknownChapterError reports a chapter number that the course does not have. Its message lists
// the chapters there are, so the learner can pick one without looking elsewhere.
type UnknownChapterError struct {
	// Number is the number as it was asked for.
	Number string
	// Chapters are the chapters of the course.
	Chapters []*Chapter
}

func (e *UnknownChapterError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "unknown chapter %q; the course has:", e.Number)
	for _, ch := range e.Chapters {
		fmt.Fprintf(&b, "\n  %s  %s", ch.Number, ch.Title)
	}
	if len(e.Chapters) == 0 {
		b.WriteString(" no chapters")
	}
	return b.String()
}

var (
	chapterFileRE = regexp.MustCompile(`^([0-9]{2})-([a-z0-9]+(?:-[a-z0-9]+)*)\.yaml$`)
	labIDRE       = regexp.MustCompile(`^(0|[1-9][0-9]*)\.([1-9][0-9]*)$`) // chapter 00 has labs 0.M
	numberRE      = regexp.MustCompile(`^[0-9]{2}$`)
)

// Load reads and validates checkpoints/course.yaml and every checkpoints/NN-<slug>.yaml in fsys
// (the course content, rooted at the repository root). Unknown fields are errors, so a typo in a
// manifest does not silently drop a setting.
func Load(fsys fs.FS) (*Course, error) {
	var c Course
	if err := decodeFile(fsys, path.Join(Dir, courseFile), &c); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path.Join(Dir, courseFile), err)
	}

	entries, err := fs.ReadDir(fsys, Dir)
	if err != nil {
		return nil, fmt.Errorf("reading manifests: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == courseFile || !strings.HasSuffix(name, ".yaml") {
			continue
		}
		file := path.Join(Dir, name)
		m := chapterFileRE.FindStringSubmatch(name)
		if m == nil {
			return nil, fmt.Errorf("%s: a chapter manifest must be named NN-<slug>.yaml (two digits, lower-case slug)", file)
		}
		ch := new(Chapter)
		if err := decodeFile(fsys, file, ch); err != nil {
			return nil, err
		}
		if ch.Number != m[1] || ch.Slug != m[2] {
			return nil, fmt.Errorf("%s: number %q and slug %q must match the file name", file, ch.Number, ch.Slug)
		}
		if err := ch.validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for _, l := range ch.Labs {
			l.pkg = ch.PackagePattern()
		}
		c.Chapters = append(c.Chapters, ch)
	}
	slices.SortFunc(c.Chapters, func(a, b *Chapter) int { return strings.Compare(a.Number, b.Number) })
	if err := c.validateAcrossChapters(); err != nil {
		return nil, err
	}
	return &c, nil
}

// decodeFile decodes one YAML document from file into v, rejecting unknown fields.
func decodeFile(fsys fs.FS, file string, v any) error {
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return fmt.Errorf("reading manifest: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		if strings.Contains(err.Error(), "found a tab character") {
			// The yaml decoder cannot guess the indentation of a block scalar whose first line starts
			// with a tab, which Go code in a mutant's find/replace often does.
			return fmt.Errorf("%s: %w (a block scalar whose first line starts with a tab needs an explicit indentation indicator, e.g. |2- for a field of a list item)", file, err)
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

func (c *Course) validate() error {
	var errs []error
	if c.Module == "" {
		errs = append(errs, errors.New("module is empty"))
	}
	if c.GoVersion == "" {
		errs = append(errs, errors.New("go is empty"))
	}
	if c.KitImport == "" {
		errs = append(errs, errors.New("kit_import is empty"))
	}
	seen := map[string]bool{}
	for _, r := range c.Requires {
		if r == "" || seen[r] {
			errs = append(errs, fmt.Errorf("requires: %q is empty or listed twice", r))
		}
		seen[r] = true
	}
	return errors.Join(errs...)
}

func (ch *Chapter) validate() error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if ch.Title == "" || ch.TitleEN == "" {
		fail("title and title_en must both be set")
	}
	if ch.Mode != ModeRebuild && ch.Mode != ModeObserve {
		fail("mode %q: must be %q or %q", ch.Mode, ModeRebuild, ModeObserve)
	}
	if len(ch.Files) == 0 {
		fail("files: the chapter owns no files")
	}
	for _, f := range ch.Files {
		if !cleanRelative(f) {
			fail("files: %q must be a clean relative path inside solutions/tinypi", f)
		}
	}
	extended := map[string]bool{}
	for _, f := range ch.Extends {
		switch {
		case !cleanRelative(f) || !strings.HasSuffix(f, ".go"):
			fail("extends: %q must be a clean relative path of a Go file inside solutions/tinypi", f)
		case extended[f]:
			fail("extends: %q is listed twice", f)
		case ch.Mode != ModeRebuild:
			fail("extends: %q: only a rebuild chapter extends files of earlier chapters", f)
		}
		extended[f] = true
	}
	if ch.TestFile != "" && (!cleanRelative(ch.TestFile) || !strings.HasSuffix(ch.TestFile, "_test.go")) {
		fail("test_file: %q must be a clean relative path ending in _test.go", ch.TestFile)
	}
	if ch.Package != "" && (!cleanRelative(ch.Package) || strings.HasSuffix(ch.Package, ".go")) {
		fail("package: %q must be a clean relative directory inside solutions/tinypi", ch.Package)
	}
	if ch.TestFile != "" && path.Dir(ch.TestFile) != ch.PackageDir() {
		fail("test_file: %q must be in the chapter's package directory %q", ch.TestFile, ch.PackageDir())
	}
	if ch.Doc == "" || !cleanRelative(ch.Doc) {
		fail("doc: %q must be a clean relative path", ch.Doc)
	}
	switch {
	case ch.Mode == ModeObserve && !numberRE.MatchString(ch.Observes):
		fail("observes: %q: an observe chapter must name the rebuild chapter it observes, as two digits (\"07\")", ch.Observes)
	case ch.Mode == ModeRebuild && ch.Observes != "":
		fail("observes: only an observe chapter observes another chapter")
	}
	if ch.Rebuild() {
		if len(ch.Labs) == 0 {
			fail("labs: a rebuild chapter needs at least one lab")
		}
		if ch.TestFile == "" {
			fail("test_file: a rebuild chapter needs its focused tests")
		}
	}
	major := strings.TrimLeft(ch.Number, "0")
	if major == "" {
		major = "0"
	}
	ids, keywords, race := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i, l := range ch.Labs {
		race[l.ID] = l.Race
		where := fmt.Sprintf("labs[%d] (%s)", i, l.ID)
		m := labIDRE.FindStringSubmatch(l.ID)
		switch {
		case m == nil:
			fail("%s: id must look like N.M", where)
		case m[1] != major:
			fail("%s: id must start with the chapter number %s", where, major)
		case ids[l.ID]:
			fail("%s: id listed twice", where)
		}
		ids[l.ID] = true
		if l.Title == "" || l.TitleEN == "" {
			fail("%s: title and title_en must both be set", where)
		}
		if l.Keyword == "" || keywords[l.Keyword] {
			fail("%s: keyword %q is empty or used by another lab", where, l.Keyword)
		}
		keywords[l.Keyword] = true
		if l.Pattern == "" {
			fail("%s: pattern is empty", where)
		} else if _, err := regexp.Compile(l.Pattern); err != nil {
			fail("%s: pattern: %w", where, err)
		}
		if l.Tests < 1 {
			fail("%s: tests must be at least 1", where)
		}
	}
	names := map[string]bool{}
	for i, m := range ch.Mutants {
		where := fmt.Sprintf("mutants[%d] (%s)", i, m.Name)
		if m.Name == "" || names[m.Name] {
			fail("%s: name is empty or used by another mutant", where)
		}
		names[m.Name] = true
		if !ids[m.Lab] {
			fail("%s: lab %q is not a lab of this chapter", where, m.Lab)
		} else if m.Race && !race[m.Lab] {
			fail("%s: a race mutant needs its lab %s to be run with -race (race: true)", where, m.Lab)
		}
		if !cleanRelative(m.File) {
			fail("%s: file %q must be a clean relative path inside solutions/tinypi", where, m.File)
		}
		if m.Find == "" || m.Find == m.Replace {
			fail("%s: find must be set and differ from replace", where)
		}
		if m.Explain == "" || m.ExplainEN == "" {
			fail("%s: explain and explain_en must both be set", where)
		}
	}
	for i, m := range ch.Mutants {
		if m.NamedAs == "" {
			continue
		}
		where := fmt.Sprintf("mutants[%d] (%s)", i, m.Name)
		j := slices.IndexFunc(ch.Mutants, func(o *Mutant) bool { return o.Name == m.NamedAs })
		switch {
		case m.NamedAs == m.Name:
			fail("%s: named_as names the mutant itself", where)
		case j < 0:
			fail("%s: named_as %q is not a mutant of this chapter", where, m.NamedAs)
		case ch.Mutants[j].Lab != m.Lab:
			fail("%s: named_as %q is a mutant of lab %s, not of lab %s", where, m.NamedAs, ch.Mutants[j].Lab, m.Lab)
		case ch.Mutants[j].NamedAs != "":
			fail("%s: named_as %q is itself named as %q: name the mutant that is shown", where, m.NamedAs, ch.Mutants[j].NamedAs)
		}
	}
	errs = append(errs, ch.validateDiagnosis()...)
	return errors.Join(errs...)
}

// validateDiagnosis checks the diagnosis block and every mutant's scenarios: each name must be a
// scenario the diagnosis lists.
func (ch *Chapter) validateDiagnosis() []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	d := ch.Diagnosis
	if d == nil {
		for i, m := range ch.Mutants {
			if len(m.Diagnose) > 0 || len(m.DiagnoseReference) > 0 {
				fail("mutants[%d] (%s): diagnose is set, but the chapter has no diagnosis block", i, m.Name)
			}
		}
		return errs
	}
	if !cleanRelative(d.Program) {
		fail("diagnosis: program %q must be a clean relative path inside solutions/tinypi", d.Program)
	}
	known := map[string]bool{}
	for _, s := range d.Scenarios {
		if s == "" || known[s] || strings.ContainsAny(s, " \t\n") || strings.HasPrefix(s, "-") {
			fail("diagnosis: scenario %q is empty, listed twice, or not a plain name", s)
		}
		known[s] = true
	}
	if len(d.Scenarios) == 0 {
		fail("diagnosis: scenarios: the program needs at least one scenario")
	}
	check := func(where, field string, names []string) {
		for _, s := range names {
			if !known[s] {
				fail("%s: %s: unknown scenario %q; the diagnosis has: %s", where, field, s, strings.Join(d.Scenarios, ", "))
			}
		}
	}
	if len(d.Default) == 0 {
		fail("diagnosis: default: name the scenarios run for a mutant without its own")
	}
	check("diagnosis", "default", d.Default)
	for i, m := range ch.Mutants {
		where := fmt.Sprintf("mutants[%d] (%s)", i, m.Name)
		check(where, "diagnose", m.Diagnose)
		check(where, "diagnose_reference", m.DiagnoseReference)
	}
	return errs
}

// validateAcrossChapters checks what no single chapter file can: unique numbers, lab ids and
// keywords across the course, every file owned by one chapter, observe chapters observing a later
// rebuild chapter, mutants touching files of the chapter's target.
func (c *Course) validateAcrossChapters() error {
	var errs []error
	observesOK := true
	for _, ch := range c.Chapters {
		if ch.Mode != ModeObserve {
			continue
		}
		y := c.byNumber(ch.Observes)
		switch {
		case y == nil:
			errs = append(errs, fmt.Errorf("chapter %s: observes %q, which is not a chapter of the course", ch.Number, ch.Observes))
		case !y.Rebuild():
			errs = append(errs, fmt.Errorf("chapter %s: observes chapter %s, which is not a rebuild chapter", ch.Number, y.Number))
		case y.Number <= ch.Number:
			errs = append(errs, fmt.Errorf("chapter %s: observes chapter %s, but the observed chapter must come later in the course", ch.Number, y.Number))
		default:
			continue
		}
		observesOK = false
	}
	numbers := map[string]bool{}
	owner := map[string]string{} // file → chapter number
	keywords := map[string]string{}
	for _, ch := range c.Chapters {
		if numbers[ch.Number] {
			errs = append(errs, fmt.Errorf("chapter %s: number used by two manifests", ch.Number))
		}
		numbers[ch.Number] = true
		owned := append(slices.Clone(ch.Files), ch.TestFile)
		for _, f := range owned {
			if f == "" {
				continue
			}
			for g, other := range owner {
				if f == g || strings.HasPrefix(f, g+"/") || strings.HasPrefix(g, f+"/") {
					errs = append(errs, fmt.Errorf("chapter %s: file %q is also owned by chapter %s (%q)", ch.Number, f, other, g))
				}
			}
			owner[f] = ch.Number
		}
		for _, l := range ch.Labs {
			if other, ok := keywords[l.Keyword]; ok && other != ch.Number {
				errs = append(errs, fmt.Errorf("chapter %s: lab %s keyword %q is also used in chapter %s", ch.Number, l.ID, l.Keyword, other))
			}
			keywords[l.Keyword] = ch.Number
		}
	}
	if !observesOK {
		return errors.Join(errs...) // which chapters' trees hold a file is unknown
	}
	for _, ch := range c.Chapters {
		for _, f := range ch.Extends {
			owner := c.Owner(f)
			switch {
			case owner == nil:
				errs = append(errs, fmt.Errorf("chapter %s: extends %q, which no chapter owns", ch.Number, f))
			case owner == ch:
				errs = append(errs, fmt.Errorf("chapter %s: extends %q, which it owns itself (list only files of earlier chapters)", ch.Number, f))
			case !c.InTree(owner, ch):
				errs = append(errs, fmt.Errorf("chapter %s: extends %q, which chapter %s owns, whose files are not in chapter %s's trees (only files of earlier chapters can be extended)", ch.Number, f, owner.Number, ch.Number))
			}
		}
		for _, m := range ch.Mutants {
			if !c.inTargetFiles(ch, m.File) {
				errs = append(errs, fmt.Errorf("chapter %s: mutant %s: file %q is not a file of the chapter's target", ch.Number, m.Name, m.File))
			}
		}
	}
	return errors.Join(errs...)
}

// inTargetFiles reports whether file is, or lies under, a path owned by a chapter whose files are
// in ch's target.
func (c *Course) inTargetFiles(ch *Chapter, file string) bool {
	for _, owner := range c.TreeChapters(ch) {
		for _, g := range append(owner.TeachingFiles(), owner.TestFile) {
			if g != "" && (file == g || strings.HasPrefix(file, g+"/")) {
				return true
			}
		}
	}
	return false
}

// Owner returns the chapter that owns file (relative to solutions/tinypi): the chapter that lists
// it, or a directory holding it, among its teaching files or as its test file; nil when none does.
func (c *Course) Owner(file string) *Chapter {
	for _, ch := range c.Chapters {
		for _, g := range append(ch.TeachingFiles(), ch.TestFile) {
			if g != "" && (file == g || strings.HasPrefix(file, g+"/")) {
				return ch
			}
		}
	}
	return nil
}

// Extenders returns, in course order, the chapters that list file (relative to
// solutions/tinypi) under extends.
func (c *Course) Extenders(file string) []*Chapter {
	var out []*Chapter
	for _, ch := range c.Chapters {
		if slices.Contains(ch.Extends, file) {
			out = append(out, ch)
		}
	}
	return out
}

// byNumber returns the chapter with exactly this number, or nil.
func (c *Course) byNumber(number string) *Chapter {
	for _, ch := range c.Chapters {
		if ch.Number == number {
			return ch
		}
	}
	return nil
}

// cleanRelative reports whether p is a clean, slash-separated path that stays inside its root.
func cleanRelative(p string) bool {
	return p != "" && fs.ValidPath(p) && p != "."
}

// Chapter returns the chapter with the given number; "7" and "07" name the same chapter. An
// unknown number gives an *UnknownChapterError.
func (c *Course) Chapter(number string) (*Chapter, error) {
	n, err := strconv.Atoi(strings.TrimSpace(number))
	if err == nil && n >= 0 {
		want := fmt.Sprintf("%02d", n)
		for _, ch := range c.Chapters {
			if ch.Number == want {
				return ch, nil
			}
		}
	}
	return nil, &UnknownChapterError{Number: number, Chapters: c.Chapters}
}

// Parent returns the chapter whose target is ch's parent: for a rebuild chapter the rebuild
// chapter before it (observe chapters are skipped), nil for the first one; for an observe chapter
// the chapter it observes. It is nil for a chapter not in the course.
func (c *Course) Parent(ch *Chapter) *Chapter {
	i := slices.Index(c.Chapters, ch)
	if i < 0 {
		return nil
	}
	if !ch.Rebuild() {
		return c.Observed(ch)
	}
	for j := i - 1; j >= 0; j-- {
		if c.Chapters[j].Rebuild() {
			return c.Chapters[j]
		}
	}
	return nil
}

// Observed returns the chapter that the observe chapter ch observes, nil for a rebuild chapter.
func (c *Course) Observed(ch *Chapter) *Chapter {
	if ch.Rebuild() || ch.Observes == "" {
		return nil
	}
	return c.byNumber(ch.Observes)
}

// InTree reports whether the files owned by chapter owner are in ch's trees (its target, parent's
// successors, starter, progressive stages and mutants). A rebuild chapter's files are in the trees
// of every chapter from it on; an observe chapter's files need the chapter it observes, so they
// are in the trees of that chapter and every later one. An observe chapter's own trees are the
// trees of the chapter it observes, which hold its files too.
func (c *Course) InTree(owner, ch *Chapter) bool {
	if y := c.Observed(ch); y != nil {
		ch = y
	}
	from := owner
	if !owner.Rebuild() {
		if from = c.Observed(owner); from == nil {
			return owner == ch
		}
	}
	return from.Number <= ch.Number
}

// TreeChapters returns, in course order, the chapters whose files are in ch's trees (see InTree).
func (c *Course) TreeChapters(ch *Chapter) []*Chapter {
	var out []*Chapter
	for _, owner := range c.Chapters {
		if c.InTree(owner, ch) {
			out = append(out, owner)
		}
	}
	return out
}

// Lab returns the lab with the given id ("7.3") or keyword ("非执行终态"). An unknown lab gives
// an error that lists the chapter's labs.
func (ch *Chapter) Lab(idOrKeyword string) (*Lab, error) {
	want := strings.TrimSpace(idOrKeyword)
	for _, l := range ch.Labs {
		if l.ID == want || l.Keyword == want {
			return l, nil
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "chapter %s has no lab %q; its labs are:", ch.Number, idOrKeyword)
	for _, l := range ch.Labs {
		fmt.Fprintf(&b, "\n  %s  %s (%s)", l.ID, l.Title, l.Keyword)
	}
	if len(ch.Labs) == 0 {
		b.WriteString(" none")
	}
	return nil, errors.New(b.String())
}

// TeachingFiles returns the chapter's teaching files (entries may be directories), relative to
// solutions/tinypi.
func (ch *Chapter) TeachingFiles() []string { return slices.Clone(ch.Files) }

// PackageDir is the slash-separated directory of the chapter's package in a tree: "." for the
// module's root package, "eval" for a chapter in a package of its own.
func (ch *Chapter) PackageDir() string { return cmp.Or(ch.Package, ".") }

// PackageDirIn is the chapter's package directory in the tree written at root.
func (ch *Chapter) PackageDirIn(root string) string {
	return filepath.Join(root, filepath.FromSlash(ch.PackageDir()))
}

// PackagePattern is the go command's pattern for the chapter's package in a tree: "." for the
// module's root package, "./eval" for a chapter in a package of its own.
func (ch *Chapter) PackagePattern() string {
	if ch.Package == "" {
		return "."
	}
	return "./" + ch.Package
}

// Rebuild reports whether the learner rebuilds the chapter (mode rebuild).
func (ch *Chapter) Rebuild() bool { return ch.Mode == ModeRebuild }

// Observe reports whether the learner reads and runs the chapter without rebuilding it (mode
// observe).
func (ch *Chapter) Observe() bool { return ch.Mode == ModeObserve }

// PendingMessage is the message a stub of the lab panics with, for example
// "Lab 7.1 收集模型终态 尚未实现".
func (l *Lab) PendingMessage() string {
	title := l.StubTitle
	if title == "" {
		title = l.Title
	}
	return fmt.Sprintf("Lab %s %s 尚未实现", l.ID, title)
}

// DocPath returns the path of the chapter's text in lang, relative to the content root: Doc for
// Chinese ("" or "zh"), and Doc with .md replaced by .<lang>.md otherwise
// (docs/07-agent-loop.en.md).
func (c *Chapter) DocPath(lang string) string {
	if lang == "" || lang == "zh" || c.Doc == "" {
		return c.Doc
	}
	return strings.TrimSuffix(c.Doc, ".md") + "." + lang + ".md"
}

// CardPath returns the path of the lab card, relative to the root of the course content:
// "labs/07/7.1.md" for lang "zh" and "labs/07/7.1.en.md" for any other language ("en").
func (l *Lab) CardPath(lang string) string {
	major, _, _ := strings.Cut(l.ID, ".")
	n, _ := strconv.Atoi(major)
	dir := fmt.Sprintf("labs/%02d/", n)
	if lang == "" || lang == "zh" {
		return dir + l.ID + ".md"
	}
	return dir + l.ID + "." + lang + ".md"
}
