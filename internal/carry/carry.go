// Package carry carries a learner's own lab code from the practice directory of an earlier
// chapter into the starter of a later one (`course practice NN DIR --from PREV`), so that a
// learner who wants to can end the course with an agent that is their own code from start to
// finish.
//
// A lab's code is carried only where the kit can do it exactly: every region of the lab exists
// in the new chapter's trees, in a declaration (a function, usually) that is the same in PREV's
// chapter and in the new one, its reference code included. A later chapter that rewrote or
// extended the code around a lab (a //chapter: region inside it, a changed function) gets the
// reference's code for that lab instead, and the plan says which chapter changed what. A lab is
// carried whole or not at all. The learner's own top-level declarations that the carried code
// needs (helpers, types) come along, and so do the imports they use; nothing else of PREV does:
// its tests, cards and .course/ stay behind.
//
// New only reads PREV and builds the combined tree in memory; Plan.Prove runs the earlier
// chapters' focused tests on it in a temporary directory. Neither writes anything in PREV.
package carry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/learn-tinypi/course/internal/labsrc"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/tree"
)

// Why PREV cannot be carried from (Refusal.Kind).
const (
	RefuseTargetObserve  = "target-observe"  // NN is an observe chapter: no code to carry into
	RefuseSourceObserve  = "source-observe"  // PREV is a practice directory of an observe chapter
	RefuseUnknownChapter = "unknown-chapter" // PREV's chapter is not in this course
	RefuseNotEarlier     = "not-earlier"     // PREV's chapter is NN or a later one
	RefuseNoTestHashes   = "no-test-hashes"  // PREV's record has no hashes of its tests (an old kit)
	RefuseTestsChanged   = "tests-changed"   // PREV's focused tests were edited (Files)
	RefuseKitChanged     = "kit-changed"     // PREV was made by a kit with other tests (Files)
	RefuseMarkers        = "markers"         // a lab's markers in PREV are gone or damaged
	RefuseUnreadable     = "unreadable"      // a file of PREV cannot be read safely
	RefuseSyntax         = "syntax"          // a Go file of PREV does not parse
	RefuseStub           = "stub"            // a lab to carry is still the starter's stub (Labs, Files)
)

// Refusal says why a practice directory cannot be carried from. It is bad input: nothing was
// written anywhere, and PREV was only read.
type Refusal struct {
	Kind    string
	Chapter string   // RefuseTargetObserve, RefuseSourceObserve, RefuseUnknownChapter, RefuseNotEarlier: PREV's or NN's chapter
	Files   []string // RefuseTestsChanged, RefuseKitChanged: the test files (slash paths, sorted); RefuseStub: the file of each of Labs
	Lab     string   // RefuseMarkers: the lab; "" when the file's markers do not parse at all
	File    string   // RefuseMarkers, RefuseUnreadable, RefuseSyntax: the file (slash path)
	// Labs are, for RefuseStub, the labs whose every region is still the starter's stub, in
	// course order: nobody wrote them, so there is nothing of the learner's to carry or prove.
	Labs []string
	// Detail says, for RefuseMarkers, what is wrong with the markers ("" when they are gone); for
	// RefuseUnreadable and RefuseSyntax, what went wrong.
	Detail string
}

func (r *Refusal) Error() string {
	switch r.Kind {
	case RefuseStub:
		return fmt.Sprintf("cannot carry from this practice directory (%s): lab(s) %s still the starter's", r.Kind, strings.Join(r.Labs, ", "))
	case RefuseTestsChanged, RefuseKitChanged:
		return fmt.Sprintf("cannot carry from this practice directory (%s): %s", r.Kind, strings.Join(r.Files, ", "))
	case RefuseMarkers, RefuseUnreadable, RefuseSyntax:
		return fmt.Sprintf("cannot carry from this practice directory (%s): lab %s, %s: %s", r.Kind, r.Lab, r.File, r.Detail)
	}
	return fmt.Sprintf("cannot carry from this practice directory (%s): chapter %s", r.Kind, r.Chapter)
}

// Limits on what is read of PREV: a learner's package is a few dozen files of some KB each.
const (
	maxFileBytes = 4 << 20
	maxGoFiles   = 1000
	maxEntries   = 100_000
)

// Helper is one of the learner's own declarations that came along with the carried code.
type Helper struct {
	File string // where it is in the new tree (slash path)
	Name string // how a message names it: "F", "(*T).M"
}

// Plan is what carrying from PREV makes: the new chapter's starter with the learner's code in
// the labs that could be carried, and where each earlier lab's code comes from.
type Plan struct {
	From, To *manifest.Chapter
	// Starter is To's starter with the carried labs' bodies (their regions keep their
	// //lab:begin and //lab:end markers, so that a later --from finds them), the learner's
	// helpers and the imports they need.
	Starter tree.Tree
	// Earlier is where the code of each lab of the earlier rebuild chapters comes from, from
	// the chain's first chapter on (practice.Provenance.Earlier).
	Earlier []practice.LabOrigin
	// Helpers are the learner's own declarations that came along, in PREV's order.
	Helpers []Helper
	// Kept are the files (under practice.KeptDir, by slash path) that keep the learner's code of
	// each lab that could not be carried exactly, beside the reference's version in Starter: the
	// declarations around the lab's regions as PREV has them (LabOrigin.Kept names the file).
	Kept tree.Tree

	b *tree.Builder
}

// Carried returns the ids of the labs whose code is the learner's, in course order.
func (p *Plan) Carried() []string {
	var ids []string
	for _, o := range p.Earlier {
		if o.Learner() {
			ids = append(ids, o.Lab)
		}
	}
	return ids
}

// owned is a lab whose code PREV holds as the learner's: a lab of PREV's chapter, or one PREV
// itself carried.
type owned struct {
	lab     *manifest.Lab
	chapter *manifest.Chapter
	written string
	bodies  map[string][]string // file → the bodies of its regions there, as PREV has them
}

// New plans carrying the learner's labs from the practice directory root (its record is prov)
// into chapter to. It reads PREV and refuses (a *Refusal) what cannot be carried from: a
// directory of an observe chapter, of to's chapter or a later one, with edited focused tests,
// or with the markers of a lab of the learner's gone or damaged.
func New(b *tree.Builder, root string, prov *practice.Provenance, to *manifest.Chapter) (*Plan, error) {
	c := b.Course()
	if !to.Rebuild() {
		return nil, &Refusal{Kind: RefuseTargetObserve, Chapter: to.Number}
	}
	from, err := c.Chapter(prov.Chapter)
	switch {
	case err != nil:
		return nil, &Refusal{Kind: RefuseUnknownChapter, Chapter: prov.Chapter}
	case !from.Rebuild():
		return nil, &Refusal{Kind: RefuseSourceObserve, Chapter: from.Number}
	case from.Number >= to.Number:
		return nil, &Refusal{Kind: RefuseNotEarlier, Chapter: from.Number}
	}
	prev := &prevDir{root: root}
	if err := checkTests(b, prev, prov, from); err != nil {
		return nil, err
	}
	labs, err := ownedLabs(c, prov, from)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(labs))
	for i, o := range labs {
		ids[i] = o.lab.ID
	}
	trees := &treeCache{b: b, marked: ids, targets: map[string]tree.Tree{}}
	prevStarter, err := b.ProgressiveMarked(from, 0, ids)
	if err != nil {
		return nil, err
	}
	for _, o := range labs {
		if err := readBodies(prev, prevStarter, o); err != nil {
			return nil, err
		}
	}
	p := &Plan{From: from, To: to, b: b}
	fallback := map[string]practice.LabOrigin{}
	for _, o := range labs {
		changed, err := changedAround(trees, from, to, o)
		if err != nil {
			return nil, err
		}
		if changed != nil {
			fallback[o.lab.ID] = *changed
		}
	}
	helpers, err := learnerDecls(prev, prevStarter)
	if err != nil {
		return nil, err
	}
	toStarter, err := b.ProgressiveMarked(to, 0, nil)
	if err != nil {
		return nil, err
	}
	if err := clashes(trees, from, to, toStarter, labs, helpers, fallback); err != nil {
		return nil, err
	}
	var carried []*owned
	for _, o := range labs {
		if _, ok := fallback[o.lab.ID]; !ok {
			carried = append(carried, o)
		}
	}
	if err := refuseStubs(b, carried); err != nil {
		return nil, err
	}
	if p.Starter, p.Helpers, err = assemble(b, to, prev, carried, needed(carried, helpers)); err != nil {
		return nil, err
	}
	if p.Kept, err = keep(b, prev, labs, fallback); err != nil {
		return nil, err
	}
	p.Earlier = origins(c, prov, from, to, labs, fallback)
	return p, nil
}

// keep returns the files that keep the learner's code of each lab of labs that falls back to the
// reference's (fallback, whose origins it gives their Kept), unless the learner never changed
// its stub: one file per lab, KeptDir/ID.go.txt, with the declarations around the lab's regions
// in PREV (the region itself when it is in none), file by file. A later chapter rewrote those
// declarations, so the learner compares rather than copies; the file is text, never compiled.
func keep(b *tree.Builder, prev *prevDir, labs []*owned, fallback map[string]practice.LabOrigin) (tree.Tree, error) {
	kept := tree.Tree{}
	for _, o := range labs {
		origin, ok := fallback[o.lab.ID]
		if !ok || origin.Reason != practice.ReasonChanged {
			continue
		}
		if _, stub := stillStub(b, o); stub {
			continue // nothing of the learner's to keep
		}
		var text strings.Builder
		fmt.Fprintf(&text, "// Lab %s：你在第 %s 章写的代码。第 %s 章改写了它所在的 %s（%s），新目录里那里是参考代码；你的版本留在这里供对照，不参与编译。\n", o.lab.ID, o.written, origin.Changed, origin.Decl, origin.File)
		fmt.Fprintf(&text, "// Lab %s: your code, written in chapter %s. Chapter %s rewrote %s (%s) around it, so the new directory has the reference's code there; yours is kept here to compare with. It is not compiled.\n", o.lab.ID, o.written, origin.Changed, origin.Decl, origin.File)
		for _, f := range sortedKeys(o.bodies) {
			src, err := prev.read(f)
			if err != nil {
				return nil, withLab(err, o.lab.ID)
			}
			regions, err := labRegions(src, o.lab.ID)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(&text, "\n// %s\n", f)
			var seen []string
			for _, r := range regions {
				decl, _ := regionContext(src, r)
				if slices.Contains(seen, decl) {
					continue // two regions of one declaration
				}
				seen = append(seen, decl)
				text.WriteString("\n" + strings.TrimRight(decl, "\n") + "\n")
			}
		}
		name := path.Join(practice.KeptDir, o.lab.ID+".go.txt")
		kept[name] = []byte(text.String())
		origin.Kept = name
		fallback[o.lab.ID] = origin
	}
	return kept, nil
}

// ownedLabs returns the labs whose code PREV holds as the learner's, in course order: those PREV
// carried itself (its record says so), then its chapter's own.
func ownedLabs(c *manifest.Course, prov *practice.Provenance, from *manifest.Chapter) ([]*owned, error) {
	var out []*owned
	for _, o := range prov.Earlier {
		if !o.Learner() {
			continue
		}
		ch, lab := labOf(c, o.Lab)
		if lab == nil || !ch.Rebuild() || ch.Number >= from.Number {
			// The record names a lab this course does not have before PREV's chapter.
			return nil, &Refusal{Kind: RefuseKitChanged, Files: []string{practice.ProvenancePath}}
		}
		out = append(out, &owned{lab: lab, chapter: ch, written: o.Written})
	}
	for _, lab := range from.Labs {
		out = append(out, &owned{lab: lab, chapter: from, written: from.Number})
	}
	return out, nil
}

// labOf finds the lab with id in the course, and its chapter.
func labOf(c *manifest.Course, id string) (*manifest.Chapter, *manifest.Lab) {
	for _, ch := range c.Chapters {
		for _, l := range ch.Labs {
			if l.ID == id {
				return ch, l
			}
		}
	}
	return nil, nil
}

// checkTests refuses a PREV whose focused tests differ from what the kit wrote, or whose record
// of them is not this kit's: code proven by edited tests proves nothing.
func checkTests(b *tree.Builder, prev *prevDir, prov *practice.Provenance, from *manifest.Chapter) error {
	if len(prov.TestFiles) == 0 {
		return &Refusal{Kind: RefuseNoTestHashes, Chapter: from.Number}
	}
	starter, err := b.Starter(from)
	if err != nil {
		return err
	}
	var kit []string
	for p, data := range starter {
		if isTestFile(p) && prov.TestFiles[p] != hash(data) {
			kit = append(kit, p)
		}
	}
	for p := range prov.TestFiles {
		if _, ok := starter[p]; !ok {
			kit = append(kit, p)
		}
	}
	if len(kit) > 0 {
		slices.Sort(kit)
		return &Refusal{Kind: RefuseKitChanged, Files: kit}
	}
	var edited []string
	for p, want := range prov.TestFiles {
		data, err := prev.read(p)
		var r *Refusal
		switch {
		case errors.Is(err, os.ErrNotExist):
			edited = append(edited, p)
			continue
		case errors.As(err, &r):
			r.Kind, r.Files = RefuseTestsChanged, []string{p} // a test file that is no file: changed
			return r
		case err != nil:
			return err
		}
		if hash(data) != want {
			edited = append(edited, p)
		}
	}
	if len(edited) > 0 {
		slices.Sort(edited)
		return &Refusal{Kind: RefuseTestsChanged, Files: edited}
	}
	return nil
}

// isTestFile reports whether the tree file p is part of the tests, as practice records them.
func isTestFile(p string) bool {
	return strings.HasSuffix(p, "_test.go") || strings.HasPrefix(p, "testdata/") || strings.Contains(p, "/testdata/")
}

func hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// readBodies reads o's bodies from PREV: every file of prevStarter (the kit's start of PREV, with
// o's markers) that holds regions of o must hold as many in PREV, with sound markers.
func readBodies(prev *prevDir, prevStarter tree.Tree, o *owned) error {
	o.bodies = map[string][]string{}
	for _, f := range prevStarter.Paths() {
		if !strings.HasSuffix(f, ".go") || isTestFile(f) {
			continue
		}
		want, err := labsrc.Bodies(prevStarter[f], o.lab.ID)
		if err != nil {
			continue // no region of o in f
		}
		src, err := prev.read(f)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return &Refusal{Kind: RefuseMarkers, Lab: o.lab.ID, File: f}
		case err != nil:
			return withLab(err, o.lab.ID)
		}
		if _, err := labsrc.Regions(src); err != nil {
			// The file's markers do not parse: which lab lost a marker cannot be told.
			return &Refusal{Kind: RefuseMarkers, File: f, Detail: err.Error()}
		}
		bodies, err := labsrc.Bodies(src, o.lab.ID)
		var me *labsrc.MarkerError
		switch {
		case errors.As(err, &me):
			return &Refusal{Kind: RefuseMarkers, Lab: o.lab.ID, File: f, Detail: me.Detail}
		case err != nil:
			return err
		case len(bodies) != len(want):
			return &Refusal{Kind: RefuseMarkers, Lab: o.lab.ID, File: f,
				Detail: fmt.Sprintf("%d region(s), the starter has %d", len(bodies), len(want))}
		}
		o.bodies[f] = bodies
	}
	if len(o.bodies) == 0 {
		return fmt.Errorf("lab %s has no region in chapter %s's files", o.lab.ID, o.chapter.Number)
	}
	return nil
}

// refuseStubs refuses (RefuseStub) when a lab about to be carried is still the starter's stub in
// every region: its tests would fail on the pending message, and the proof (tens of seconds with
// -race) would only find out what the text already says. A lab of which the learner changed any
// region is theirs, and goes to the proof.
func refuseStubs(b *tree.Builder, labs []*owned) error {
	var r *Refusal
	for _, o := range labs {
		file, stub := stillStub(b, o)
		if !stub {
			continue
		}
		if r == nil {
			r = &Refusal{Kind: RefuseStub}
		}
		r.Labs = append(r.Labs, o.lab.ID)
		r.Files = append(r.Files, file)
	}
	if r != nil {
		return r
	}
	return nil
}

// stillStub reports whether every region of o in PREV is the stub its chapter's starter has there
// (the TODO line and the stub, lines compared without their indentation and blank lines, as an
// editor or gofmt may change those), and the first file that holds o.
func stillStub(b *tree.Builder, o *owned) (string, bool) {
	files := sortedKeys(o.bodies)
	for _, f := range files {
		stub, err := b.StubBodies(o.chapter, o.lab, f)
		if err != nil {
			// The file is not one of the lab's chapter's files (a later chapter moved the
			// region): there is no stub to compare with, so the code is taken as the learner's.
			return "", false
		}
		got := o.bodies[f]
		if len(stub) != len(got) {
			return "", false
		}
		for i := range got {
			if significant(got[i]) != significant(stub[i]) {
				return "", false
			}
		}
	}
	return files[0], true
}

// significant returns body's non-blank lines without their leading and trailing white space.
func significant(body string) string {
	var lines []string
	for l := range strings.Lines(body) {
		if t := strings.TrimSpace(l); t != "" {
			lines = append(lines, t)
		}
	}
	return strings.Join(lines, "\n")
}

// withLab adds the lab to a *Refusal about one of its files.
func withLab(err error, lab string) error {
	var r *Refusal
	if errors.As(err, &r) && r.Lab == "" {
		r.Lab = lab
	}
	return err
}

// treeCache builds, once each, the targets of chapters with the owned labs' markers kept.
type treeCache struct {
	b       *tree.Builder
	marked  []string
	targets map[string]tree.Tree
}

func (tc *treeCache) target(ch *manifest.Chapter) (tree.Tree, error) {
	if t, ok := tc.targets[ch.Number]; ok {
		return t, nil
	}
	t, err := tc.b.ProgressiveMarked(ch, len(ch.Labs), tc.marked)
	if err != nil {
		return nil, err
	}
	tc.targets[ch.Number] = t
	return t, nil
}

// changedAround returns, when o's code cannot be carried exactly from chapter from into chapter
// to, the reference origin that says which chapter changed what around it; nil when it can.
// Every region of o must sit in a declaration that is the same in both chapters' targets,
// reference code included (so the region's own reference code is the same too).
func changedAround(tc *treeCache, from, to *manifest.Chapter, o *owned) (*practice.LabOrigin, error) {
	a, err := tc.target(from)
	if err != nil {
		return nil, err
	}
	z, err := tc.target(to)
	if err != nil {
		return nil, err
	}
	file, decl, same := compareLab(a, z, o)
	if same {
		return nil, nil
	}
	// Name the first rebuild chapter after from whose version differs.
	changed := to.Number
	for _, ch := range tc.b.Course().Chapters {
		if !ch.Rebuild() || ch.Number <= from.Number || ch.Number >= to.Number {
			continue
		}
		t, err := tc.target(ch)
		if err != nil {
			return nil, err
		}
		if f, d, same := compareLab(a, t, o); !same {
			changed, file, decl = ch.Number, f, d
			break
		}
	}
	return &practice.LabOrigin{Lab: o.lab.ID, Source: practice.SourceReference, Reason: practice.ReasonChanged,
		Changed: changed, File: file, Decl: decl}, nil
}

// compareLab compares the surroundings of o's regions in two trees with o's markers kept. It
// returns the first file and declaration that differ, and whether none does.
func compareLab(a, z tree.Tree, o *owned) (file, decl string, same bool) {
	for _, f := range sortedKeys(o.bodies) {
		ra, errA := labRegions(a[f], o.lab.ID)
		rz, errZ := labRegions(z[f], o.lab.ID)
		if errA != nil || errZ != nil || len(ra) != len(rz) {
			return f, "", false
		}
		for i := range ra {
			ta, name := regionContext(a[f], ra[i])
			tz, _ := regionContext(z[f], rz[i])
			if ta != tz {
				return f, name, false
			}
		}
	}
	return "", "", true
}

// labRegions returns the regions of lab in src.
func labRegions(src []byte, lab string) ([]labsrc.Region, error) {
	if src == nil {
		return nil, errors.New("no such file")
	}
	all, err := labsrc.Regions(src)
	if err != nil {
		return nil, err
	}
	var out []labsrc.Region
	for _, r := range all {
		if r.Lab == lab {
			out = append(out, r)
		}
	}
	return out, nil
}

// regionContext returns what must be the same in two chapters for a region's body to be carried: the
// declaration around it (and its name), or the region itself when it is in none.
func regionContext(src []byte, r labsrc.Region) (string, string) {
	if text, name, ok := enclosing(src, r.StartLine); ok {
		return text, name
	}
	lines := strings.SplitAfter(string(src), "\n")
	return strings.Join(lines[r.StartLine-1:min(r.EndLine, len(lines))], ""), ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// origins returns where each lab of the rebuild chapters before to comes from, from the chain's
// first chapter on (PREV's first recorded lab, or PREV's chapter).
func origins(c *manifest.Course, prov *practice.Provenance, from, to *manifest.Chapter, labs []*owned, fallback map[string]practice.LabOrigin) []practice.LabOrigin {
	first := from.Number
	if len(prov.Earlier) > 0 {
		if ch, _ := labOf(c, prov.Earlier[0].Lab); ch != nil && ch.Number < first {
			first = ch.Number
		}
	}
	recorded := map[string]practice.LabOrigin{}
	for _, o := range prov.Earlier {
		recorded[o.Lab] = o
	}
	written := map[string]string{}
	for _, o := range labs {
		written[o.lab.ID] = o.written
	}
	var out []practice.LabOrigin
	for _, ch := range c.Chapters {
		if !ch.Rebuild() || ch.Number < first || ch.Number >= to.Number {
			continue
		}
		for _, lab := range ch.Labs {
			o, isFallback := fallback[lab.ID]
			w, isOwned := written[lab.ID]
			rec, isRecorded := recorded[lab.ID]
			switch {
			case isFallback:
			case isOwned:
				o = practice.LabOrigin{Lab: lab.ID, Source: practice.SourceLearner, Written: w}
			case isRecorded:
				o = rec
				o.Kept = "" // the file is in the directory that made the record, not in the new one
			default:
				o = practice.LabOrigin{Lab: lab.ID, Source: practice.SourceReference, Reason: practice.ReasonNotWritten}
			}
			out = append(out, o)
		}
	}
	return out
}

// prevDir reads the practice directory carried from, safely: regular files only (a named pipe
// would block), of bounded size, never writing.
type prevDir struct {
	root  string
	files map[string][]byte // what was read, by slash path
}

// read returns the content of the file at slash path p of PREV. A missing file gives an error
// that wraps os.ErrNotExist; one that is not a regular file, or is too large, a *Refusal.
func (d *prevDir) read(p string) ([]byte, error) {
	if data, ok := d.files[p]; ok {
		return data, nil
	}
	data, err := d.readFile(p)
	if err != nil {
		return nil, err
	}
	if d.files == nil {
		d.files = map[string][]byte{}
	}
	d.files[p] = data
	return data, nil
}

// readFile reads the file at slash path p of PREV; see read.
func (d *prevDir) readFile(p string) ([]byte, error) {
	name := filepath.Join(d.root, filepath.FromSlash(p))
	info, err := os.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &Refusal{Kind: RefuseUnreadable, File: p, Detail: "not a regular file"}
	}
	if info.Size() > maxFileBytes {
		return nil, &Refusal{Kind: RefuseUnreadable, File: p, Detail: fmt.Sprintf("%d bytes, more than %d", info.Size(), maxFileBytes)}
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, &Refusal{Kind: RefuseUnreadable, File: p, Detail: "not a regular file"}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileBytes {
		return nil, &Refusal{Kind: RefuseUnreadable, File: p, Detail: fmt.Sprintf("more than %d bytes", maxFileBytes)}
	}
	return data, nil
}

// goFiles returns the names of the Go files, tests excepted, at the root of PREV, sorted.
func (d *prevDir) goFiles() ([]string, error) {
	f, err := os.Open(d.root)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(maxEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(entries) > maxEntries {
		return nil, &Refusal{Kind: RefuseUnreadable, File: ".", Detail: fmt.Sprintf("more than %d entries", maxEntries)}
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") && !strings.HasPrefix(n, ".") && !strings.HasPrefix(n, "_") {
			names = append(names, n)
		}
	}
	if len(names) > maxGoFiles {
		return nil, &Refusal{Kind: RefuseUnreadable, File: ".", Detail: fmt.Sprintf("more than %d Go files", maxGoFiles)}
	}
	slices.Sort(names)
	return names, nil
}

// rootGo reports whether the tree path p is a Go file of the package at the tree's root.
func rootGo(p string) bool {
	return path.Dir(p) == "." && strings.HasSuffix(p, ".go")
}
