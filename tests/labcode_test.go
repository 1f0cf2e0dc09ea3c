package tests

import (
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/tools/imports"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/labsrc"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// cmdLabAnswer writes the reference code of lab LAB of chapter NN into its regions in the practice
// directory DIR, as a learner who solved the lab would, keeping the markers and every other line
// (imports aside, which it completes):
//
//	labanswer 07 7.1 $WORK/p07
func cmdLabAnswer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: labanswer NN LAB DIR")
	}
	b, ch := scriptChapter(ts, args[0])
	lab, err := ch.Lab(args[1])
	ts.Check(err)
	dir := ts.MkAbs(args[2])
	files, err := b.LabFiles(ch, lab)
	ts.Check(err)
	for _, file := range files {
		ref, err := b.ReferenceBodies(ch, lab, file)
		ts.Check(err)
		name := filepath.Join(dir, filepath.FromSlash(file))
		src, err := os.ReadFile(name)
		ts.Check(err)
		out, err := labsrc.ReplaceBodies(src, lab.ID, ref)
		ts.Check(err)
		// Like a learner's editor, add the imports the code needs (the starter dropped the ones
		// only the stubbed code used).
		out, err = imports.Process(name, out, nil)
		ts.Check(err)
		ts.Check(os.WriteFile(name, out, 0o644))
	}
}

// cmdMistake writes chapter NN's target with the mutant NAME applied into the practice directory
// DIR: every file of the chapter's teaching files, so the labs are solved except for that one
// known mistake (the lab markers are gone, which `course test` does not need):
//
//	mistake 07 first-call-only $WORK/p07
func cmdMistake(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: mistake NN NAME DIR")
	}
	b, ch := scriptChapter(ts, args[0])
	var mutant *manifest.Mutant
	for _, m := range ch.Mutants {
		if m.Name == args[1] {
			mutant = m
		}
	}
	if mutant == nil {
		ts.Fatalf("chapter %s has no mutant %q", ch.Number, args[1])
	}
	t, err := b.Mutant(ch, mutant)
	ts.Check(err)
	dir := ts.MkAbs(args[2])
	for _, file := range ch.TeachingFiles() {
		data, ok := t[file]
		if !ok {
			continue // a directory entry; the mutant's own file is always a plain file
		}
		ts.Check(os.WriteFile(filepath.Join(dir, filepath.FromSlash(file)), data, 0o644))
	}
}

// scriptChapter loads the embedded course and finds chapter number in it.
func scriptChapter(ts *testscript.TestScript, number string) (*tree.Builder, *manifest.Chapter) {
	b, err := tree.NewBuilder(course.Content())
	ts.Check(err)
	ch, err := b.Course().Chapter(number)
	ts.Check(err)
	return b, ch
}

// cmdCmpGlob checks that PATTERN (a filepath.Glob pattern, relative to the script's directory)
// names at least one file and that every file it names has FILE's content, for files whose name
// holds a time:
//
//	cmpglob .course/backup/*-lab-7.1/agentloop.go $WORK/edited.go
func cmdCmpGlob(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmpglob PATTERN FILE")
	}
	matches, err := filepath.Glob(ts.MkAbs(args[0]))
	ts.Check(err)
	if len(matches) == 0 {
		ts.Fatalf("%s matches no file", args[0])
	}
	want, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	for _, m := range matches {
		got, err := os.ReadFile(m)
		ts.Check(err)
		if string(got) != string(want) {
			ts.Fatalf("%s and %s differ", m, args[1])
		}
	}
	ts.Logf("%d file(s) match %s", len(matches), args[0])
}

// cmdLabWrite writes a learner's own code for lab LAB into FILE of the practice directory DIR:
// the regions of LAB in FILE get the bodies in the files BODY..., one per region in order, and
// with --helper HELPER the file HELPER is appended to FILE first, as a learner adds a helper of
// their own below the code:
//
//	labwrite $WORK/p07 agentloop.go 7.5 --helper helper.go before.txt after.txt
func cmdLabWrite(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 {
		ts.Fatalf("usage: labwrite DIR FILE LAB [--helper HELPER] BODY...")
	}
	name := filepath.Join(ts.MkAbs(args[0]), filepath.FromSlash(args[1]))
	lab, rest := args[2], args[3:]
	src, err := os.ReadFile(name)
	ts.Check(err)
	if rest[0] == "--helper" && len(rest) > 2 {
		src = append(src, "\n"+ts.ReadFile(rest[1])...)
		rest = rest[2:]
	}
	bodies := make([]string, len(rest))
	for i, f := range rest {
		bodies[i] = ts.ReadFile(f)
	}
	out, err := labsrc.ReplaceBodies(src, lab, bodies)
	ts.Check(err)
	out, err = imports.Process(name, out, nil)
	ts.Check(err)
	ts.Check(os.WriteFile(name, out, 0o644))
}
