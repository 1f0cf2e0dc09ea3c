// Package practice creates and finds learner practice directories: a chapter's starter with its
// lab cards, a LEARNING.md guide and a git repository whose single commit is the starter, so that
// `git diff` shows exactly the learner's work.
package practice

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"text/template"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/learn-tinypi/course/internal/heldout"
	"github.com/learn-tinypi/course/internal/history"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// Paths inside a practice directory, and of its templates inside the course content.
const (
	ProvenancePath     = ".course/practice.json"
	learningPath       = "LEARNING.md"
	gitignorePath      = ".gitignore"
	learningTemplate   = "practice/LEARNING.md.tmpl"
	learningTemplateEN = "practice/LEARNING.en.md.tmpl"
	// AssistantGuidePath is the guide for a learner's coding assistant (AGENTS.md, the name such
	// assistants look for), rendered from assistantTemplate.
	AssistantGuidePath = "AGENTS.md"
	assistantTemplate  = "practice/AGENTS.md.tmpl"
	gitignoreSource    = "practice/gitignore"
)

// Provenance records where a practice directory came from; it is stored in .course/practice.json.
type Provenance struct {
	Chapter    string   `json:"chapter"`     // chapter number, "07"
	Parent     string   `json:"parent"`      // commit hash of the chapter's parent checkpoint, "" for the first
	Target     string   `json:"target"`      // commit hash of the chapter's target checkpoint
	Module     string   `json:"module"`      // the learner's module path
	CreatedAt  string   `json:"created_at"`  // RFC 3339
	KitVersion string   `json:"kit_version"` // the course binary's module version
	Labs       []string `json:"labs"`        // lab ids in order
	// Lang is the language the directory was made in ("zh" or "en"): its LEARNING.md's, and the
	// one the kit answers in there when no --lang is given. Empty in directories of older kits.
	Lang string `json:"lang,omitempty"`
	// TestFiles maps every test file of the starter (_test.go files and testdata; slash path) to the sha256 of its content,
	// hex: the focused tests as the kit wrote them, which ChangedTestFiles compares against.
	TestFiles map[string]string `json:"test_files,omitempty"`
	// From is the chapter of the practice directory whose labs this one was made with
	// (`course practice NN DIR --from PREV`); empty for a directory that starts from the reference.
	From string `json:"from,omitempty"`
	// Earlier says, for a directory made with From, where the code of each lab of the earlier
	// rebuild chapters comes from, from the first chapter of the chain on, in course order.
	Earlier []LabOrigin `json:"earlier,omitempty"`
}

// Where the code of an earlier lab comes from (LabOrigin.Source).
const (
	SourceLearner   = "learner"   // the learner's own code, carried from an earlier practice directory
	SourceReference = "reference" // the reference's code
)

// Why an earlier lab's code is the reference's (LabOrigin.Reason).
const (
	// ReasonChanged: chapter LabOrigin.Changed rewrote or extended the code around the lab
	// (LabOrigin.Decl in LabOrigin.File), so the learner's code could not be carried exactly.
	ReasonChanged = "changed"
	// ReasonClash: the learner's own declaration LabOrigin.Decl, which the lab's code needs, has
	// the name of a declaration chapter LabOrigin.Changed adds.
	ReasonClash = "clash"
	// ReasonNotWritten: the learner did not write the lab in this chain of practice directories
	// (its chapter was skipped).
	ReasonNotWritten = "not-written"
)

// LabOrigin records where the code of one lab of an earlier chapter comes from in a practice
// directory made with --from.
type LabOrigin struct {
	Lab    string `json:"lab"`    // lab id, "7.3"
	Source string `json:"source"` // SourceLearner or SourceReference
	// Written is, for the learner's code, the chapter of the practice directory they wrote it in.
	Written string `json:"written,omitempty"`
	// Reason says, for the reference's code, why: ReasonChanged, ReasonClash or ReasonNotWritten.
	Reason  string `json:"reason,omitempty"`
	Changed string `json:"changed,omitempty"` // ReasonChanged, ReasonClash: the chapter
	File    string `json:"file,omitempty"`    // ReasonChanged, ReasonClash: the file (slash path)
	Decl    string `json:"decl,omitempty"`    // ReasonChanged: the declaration; ReasonClash: the learner's
	// Kept is, for ReasonChanged, the file of the practice directory (slash path, under
	// KeptDir) that keeps the learner's own version of the lab's code beside the reference's, for
	// comparison; empty when there is none (the lab was still the starter's stub, or the record
	// was carried on from an earlier directory, which keeps the file).
	Kept string `json:"kept,omitempty"`
}

// KeptDir is the folder of a practice directory made with --from that keeps, one file per lab,
// the learner's code of each lab that could not be carried exactly (LabOrigin.Kept). The go
// command ignores folders whose names start with a dot, and the files are not Go files, so
// nothing there is compiled.
const KeptDir = ".course/carried"

// Learner reports whether the lab's code is the learner's own.
func (o LabOrigin) Learner() bool { return o.Source == SourceLearner }

// Start is the starting point of a practice directory made from the learner's earlier work
// (course practice NN DIR --from PREV): the starter with the learner's carried code, and where
// each earlier lab's code comes from.
type Start struct {
	Starter tree.Tree   // the chapter's starter with the carried labs' bodies
	From    string      // the chapter of the practice directory the code was carried from
	Earlier []LabOrigin // see Provenance.Earlier
	// Kept are the files under KeptDir that keep the learner's code of the labs that could not be
	// carried exactly (LabOrigin.Kept), by slash path.
	Kept tree.Tree
}

// ChangedTestFiles returns, sorted, the test files recorded in p whose content in the practice
// directory root differs from what the kit wrote (or which are gone). A test that was edited
// can pass without the lab being done, so the kit does not count a run while this is non-empty.
// Practice directories made before the hashes were recorded have none, and nothing to compare.
func (p *Provenance) ChangedTestFiles(root string) ([]string, error) {
	var changed []string
	for name, want := range p.TestFiles {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			changed = append(changed, name)
			continue
		case err != nil:
			return nil, fmt.Errorf("checking the focused tests: %w", err)
		}
		if fileHash(data) != want {
			changed = append(changed, name)
		}
	}
	sort.Strings(changed)
	return changed, nil
}

// isTestFile reports whether the starter file p is part of the tests: a _test.go file or a file
// under a testdata directory (recordings the tests compare against).
func isTestFile(p string) bool {
	return strings.HasSuffix(p, "_test.go") || strings.HasPrefix(p, "testdata/") || strings.Contains(p, "/testdata/")
}

// fileHash is the hex sha256 of data.
func fileHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ErrNotPractice is returned (wrapped) by Find when no practice directory encloses the given
// directory.
var ErrNotPractice = errors.New("not inside a practice directory (no " + ProvenancePath +
	" found); create one with `course practice 07 ./mydir`")

// Create writes a practice directory for ch into dir, which must not exist or be an empty
// directory (or a symbolic link to one); missing parents are created. An existing dir is filled
// in place (it may be the shell's current directory). Everything is built in a staging directory
// inside dir and moved into place at the end without replacing anything, so a failure leaves dir
// as it was and never touches a file that was there. Errors from writing are *tree.PlaceError.
// lang ("zh" or "en") is the language of the directory's LEARNING.md; the lab cards come in both.
func Create(ctx context.Context, dir string, b *tree.Builder, h *history.History, ch *manifest.Chapter, lang string) error {
	return CreateFrom(ctx, dir, b, h, ch, lang, nil)
}

// CreateFrom is Create starting from start instead of the chapter's starter, when start is not
// nil: its files replace the starter's, and the provenance records where they came from. The
// git repository's one commit holds them, so `git diff` still shows only the new work.
func CreateFrom(ctx context.Context, dir string, b *tree.Builder, h *history.History, ch *manifest.Chapter, lang string, start *Start) error {
	if dir == "" {
		return &tree.PlaceError{Op: tree.OpCheck, Path: dir, Err: tree.ErrNoDir}
	}
	if err := checkEmpty(dir); err != nil {
		return err
	}
	files, err := practiceTree(b, h, ch, lang, time.Now().UTC(), start)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return files.Fill(ctx, dir, func(staging string) error {
		if err := commitAll(staging, ch, start, time.Now()); err != nil {
			return fmt.Errorf("creating the git repository: %w", err)
		}
		return nil
	})
}

// checkEmpty returns a *tree.PlaceError unless dir does not exist or is an empty directory.
func checkEmpty(dir string) error {
	info, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &tree.PlaceError{Op: tree.OpCheck, Path: dir, Err: err}
	}
	if !info.IsDir() {
		return &tree.PlaceError{Op: tree.OpCheck, Path: dir, Err: tree.ErrNotDir}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return &tree.PlaceError{Op: tree.OpCheck, Path: dir, Err: err}
	}
	if len(entries) > 0 {
		return &tree.PlaceError{Op: tree.OpCheck, Path: dir, Err: tree.ErrNotEmpty}
	}
	return nil
}

// practiceTree returns every file of ch's practice directory except the git repository: ch's
// starter, or start's when start is not nil.
func practiceTree(b *tree.Builder, h *history.History, ch *manifest.Chapter, lang string, now time.Time, start *Start) (tree.Tree, error) {
	if len(ch.Labs) == 0 {
		return nil, fmt.Errorf("chapter %s has no labs to practise", ch.Number)
	}
	var starter tree.Tree
	if start != nil {
		starter = start.Starter
	} else {
		var err error
		if starter, err = b.Starter(ch); err != nil {
			return nil, fmt.Errorf("building the starter of chapter %s: %w", ch.Number, err)
		}
	}
	files := tree.Tree{}
	for p, data := range starter {
		files[p] = data
	}
	content := b.FS()
	add := func(p string, data []byte) error {
		if _, ok := files[p]; ok {
			return fmt.Errorf("the starter of chapter %s already has %s", ch.Number, p)
		}
		files[p] = data
		return nil
	}
	if start != nil {
		for _, p := range start.Kept.Paths() {
			if err := add(p, start.Kept[p]); err != nil {
				return nil, err
			}
		}
	}

	var labIDs []string
	for _, lab := range ch.Labs {
		labIDs = append(labIDs, lab.ID)
		for _, lang := range []string{"zh", "en"} {
			card, err := fs.ReadFile(content, lab.CardPath(lang))
			if err != nil {
				return nil, fmt.Errorf("lab %s card: %w", lab.ID, err)
			}
			if err := add(cardPath(lab, lang), card); err != nil {
				return nil, err
			}
		}
	}

	learning, err := renderLearning(content, b.Course(), ch, lang)
	if err != nil {
		return nil, err
	}
	if err := add(learningPath, learning); err != nil {
		return nil, err
	}
	guide, err := RenderAssistantGuide(content, b.Course(), ch)
	if err != nil {
		return nil, err
	}
	if err := add(AssistantGuidePath, guide); err != nil {
		return nil, err
	}
	gitignore, err := fs.ReadFile(content, gitignoreSource)
	if err != nil {
		return nil, fmt.Errorf("practice .gitignore template: %w", err)
	}
	if err := add(gitignorePath, gitignore); err != nil {
		return nil, err
	}

	prov := Provenance{
		Chapter:    ch.Number,
		Module:     b.Course().Module,
		CreatedAt:  now.Format(time.RFC3339),
		KitVersion: kitVersion(),
		Labs:       labIDs,
		TestFiles:  map[string]string{},
		Lang:       lang,
	}
	for p, data := range starter {
		if isTestFile(p) {
			prov.TestFiles[p] = fileHash(data)
		}
	}
	if h != nil {
		prov.Parent, prov.Target = h.Parent(ch), h.Target(ch)
	}
	if start != nil {
		prov.From, prov.Earlier = start.From, start.Earlier
	}
	provJSON, err := json.MarshalIndent(prov, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", ProvenancePath, err)
	}
	if err := add(ProvenancePath, append(provJSON, '\n')); err != nil {
		return nil, err
	}
	return files, nil
}

// cardPath is where lab's card in lang lives inside a practice directory: labs/7.1.md, labs/7.1.en.md.
func cardPath(lab *manifest.Lab, lang string) string {
	return "labs/" + path.Base(lab.CardPath(lang))
}

// learningData is what practice/LEARNING.md.tmpl and practice/AGENTS.md.tmpl are rendered with.
type learningData struct {
	Module  string
	Chapter *manifest.Chapter
	Labs    []learningLab
	// Heldout is true when the chapter has held-out cases (course test --heldout).
	Heldout bool
	// Transcript is true when the chapter's focused tests record the runs they drive (course
	// transcript has something to show); Diagnose when the chapter has known mistakes (course
	// diagnose NN); Serve when the practice directory holds a finished program that writes a
	// session log (SessionProgram) for course serve to show.
	Transcript, Diagnose, Serve bool
}

// SessionProgram is the program of a practice directory that writes a session log: chapter 07's
// README round trip through an Agent whose session is a file (docs/serve.md).
const SessionProgram = "cmd/readme-session"

// learningLab is one lab as LEARNING.md shows it.
type learningLab struct {
	*manifest.Lab
	Card, CardEN   string // paths inside the practice directory
	Command        string // the go test command that runs the lab's tests
	PendingMessage string
	PendingMeaning string // what PendingMessage says, in English
}

// renderLearning renders LEARNING.md for ch in lang: practice/LEARNING.md.tmpl in Chinese,
// practice/LEARNING.en.md.tmpl in English.
func renderLearning(content fs.FS, c *manifest.Course, ch *manifest.Chapter, lang string) ([]byte, error) {
	name := learningTemplate
	if lang == "en" {
		name = learningTemplateEN
	}
	return renderTemplate(content, name, c, ch)
}

// RenderAssistantGuide renders AGENTS.md, the guide for a learner's coding assistant, for ch:
// what the chapter and each lab ask, the kit's commands that give honest feedback, and the
// rules (never write a lab, never edit the focused tests, answer with the next hint).
func RenderAssistantGuide(content fs.FS, c *manifest.Course, ch *manifest.Chapter) ([]byte, error) {
	return renderTemplate(content, assistantTemplate, c, ch)
}

// renderTemplate renders the practice template name for ch.
func renderTemplate(content fs.FS, name string, c *manifest.Course, ch *manifest.Chapter) ([]byte, error) {
	text, err := fs.ReadFile(content, name)
	if err != nil {
		return nil, fmt.Errorf("practice template %s: %w", name, err)
	}
	tmpl, err := template.New(name).Option("missingkey=error").Parse(string(text))
	if err != nil {
		return nil, fmt.Errorf("practice template %s: %w", name, err)
	}
	heldoutCases, err := fs.ReadDir(content, heldout.Dir(ch.Number))
	data := learningData{
		Module:     c.Module,
		Chapter:    ch,
		Heldout:    err == nil && len(heldoutCases) > 0,
		Transcript: ch.RecordsRuns,
		Diagnose:   len(ch.Mutants) > 0,
		Serve:      hasFinishedProgram(c, ch, SessionProgram),
	}
	for _, lab := range ch.Labs {
		data.Labs = append(data.Labs, learningLab{
			Lab:            lab,
			Card:           cardPath(lab, "zh"),
			CardEN:         cardPath(lab, "en"),
			Command:        TestCommand(lab),
			PendingMessage: lab.PendingMessage(),
			PendingMeaning: PendingMeaning(lab),
		})
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("practice template %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// hasFinishedProgram reports whether program (a directory, "cmd/readme-session") is in ch's trees
// and belongs to an earlier chapter, so that its code is finished in ch's starter; in its own
// chapter it would run into the stubs.
func hasFinishedProgram(c *manifest.Course, ch *manifest.Chapter, program string) bool {
	for _, owner := range c.TreeChapters(ch) {
		if owner == ch {
			continue
		}
		for _, f := range owner.Files {
			if f == program || strings.HasPrefix(f, program+"/") {
				return true
			}
		}
	}
	return false
}

// PendingMeaning says in English what lab's pending message (which stays as the seed wrote it,
// in Chinese) means: `lab 7.1, "Finish a plain-text stop", is not implemented yet`.
func PendingMeaning(lab *manifest.Lab) string {
	if lab.TitleEN == "" {
		return fmt.Sprintf("lab %s is not implemented yet", lab.ID)
	}
	return fmt.Sprintf("lab %s, %q, is not implemented yet", lab.ID, lab.TitleEN)
}

// TestCommand returns the shell command that runs lab's focused tests in a practice directory,
// with the race detector for a lab whose mistakes include data races.
func TestCommand(lab *manifest.Lab) string { return TestCommandFrom(lab, ".") }

// TestCommandFrom is TestCommand run from a directory inside the practice directory, root being
// the slash-separated way from there to the practice directory ("..").
func TestCommandFrom(lab *manifest.Lab, root string) string {
	race := ""
	if lab.Race {
		race = "-race "
	}
	pkg := path.Join(root, lab.PackagePattern())
	if !strings.HasPrefix(pkg, ".") { // "eval" is "./eval" to go, not an import path
		pkg = "./" + pkg
	}
	return "go test " + race + "-run '" + strings.ReplaceAll(lab.Pattern, "'", `'\''`) + "' " + pkg
}

// kitVersion returns the version of the kit's module the running binary was built from.
func kitVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// commitAll makes dir a git repository on branch main whose one commit holds every file.
func commitAll(dir string, ch *manifest.Chapter, start *Start, now time.Time) error {
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		return err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return err
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		return err
	}
	sig := history.Signature(now) // the course history's author, at the time of creation
	msg := fmt.Sprintf("practice %s: starter of %s\n\nEdit the lab regions; `git diff` shows your work.\n", ch.Number, ch.TitleEN)
	if start != nil {
		msg = fmt.Sprintf("practice %s: starter of %s, with your labs from chapter %s\n\nEdit the lab regions; `git diff` shows your work.\n", ch.Number, ch.TitleEN, start.From)
	}
	_, err = wt.Commit(msg, &git.CommitOptions{Author: &sig, Committer: &sig})
	return err
}

// ProvenanceError is a .course/practice.json that is there but cannot be read as one: damaged
// JSON, no chapter, not a regular file, far too large.
type ProvenanceError struct {
	File string
	Err  error
}

func (e *ProvenanceError) Error() string { return "reading " + e.File + ": " + e.Err.Error() }

func (e *ProvenanceError) Unwrap() error { return e.Err }

// maxProvenanceBytes bounds what is read of a practice.json: the kit writes a few KB.
const maxProvenanceBytes = 1 << 20

// readProvenance reads the practice.json at file, refusing what is not a regular file (opening
// a FIFO would wait forever) or is larger than maxProvenanceBytes.
func readProvenance(file string) ([]byte, error) {
	info, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &ProvenanceError{File: file, Err: errors.New("not a regular file")}
	}
	if info.Size() > maxProvenanceBytes {
		return nil, &ProvenanceError{File: file, Err: fmt.Errorf("%d bytes, far more than the kit writes", info.Size())}
	}
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, &ProvenanceError{File: file, Err: errors.New("not a regular file")}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxProvenanceBytes+1))
	if err == nil && len(data) > maxProvenanceBytes {
		err = &ProvenanceError{File: file, Err: errors.New("far more than the kit writes")}
	}
	return data, err
}

// Find walks up from dir to the root of the practice directory that encloses it (the directory
// holding .course/practice.json) and returns that root and its provenance. When there is none the
// error wraps ErrNotPractice; a practice.json that cannot be read as one is a *ProvenanceError.
func Find(dir string) (root string, p *Provenance, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, fmt.Errorf("finding the practice directory of %s: %w", dir, err)
	}
	for d := abs; ; d = filepath.Dir(d) {
		file := filepath.Join(d, filepath.FromSlash(ProvenancePath))
		data, err := readProvenance(file)
		switch {
		case err == nil:
			var prov Provenance
			if err := json.Unmarshal(data, &prov); err != nil {
				return "", nil, &ProvenanceError{File: file, Err: err}
			}
			if prov.Chapter == "" {
				return "", nil, &ProvenanceError{File: file, Err: errors.New("no chapter recorded")}
			}
			return d, &prov, nil
		case errors.As(err, new(*ProvenanceError)):
			return "", nil, err
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return "", nil, fmt.Errorf("reading %s: %w", file, err)
		}
		if filepath.Dir(d) == d {
			return "", nil, fmt.Errorf("%s: %w", abs, ErrNotPractice)
		}
	}
}
