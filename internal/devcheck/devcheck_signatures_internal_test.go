package devcheck

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/signature"
)

// TestCheckSignaturesNameProof proves rule 7's name proof on a synthetic chapter, without a go
// test run: for every mutant, each run dev check made of it (the first and any rerun) is named
// that mutant (or the one it is named as) or nothing, never another mutant, and the check says
// which two mutants when it is.
func TestCheckSignaturesNameProof(t *testing.T) {
	a := signature.Failure{Test: "TestLab1_1_A", Message: "a"}
	b := signature.Failure{Test: "TestLab1_1_B", Message: "b"}
	c := signature.Failure{Test: "TestLab1_1_C", Message: "c"}
	ch := &manifest.Chapter{Number: "01", Mutants: []*manifest.Mutant{
		{Name: "no-wait", Lab: "1.1"},
		{Name: "late-subscription", Lab: "1.1", NamedAs: "no-wait"},
		{Name: "racy", Lab: "1.1"},
		{Name: "wrong-answer", Lab: "1.1"},
	}}
	file := &signature.File{Chapter: "01", GeneratedBy: signature.GenerateCommand("01"), Mutants: []signature.Mutant{
		{Name: "no-wait", Lab: "1.1", Failures: []signature.Failure{a, b}},
		{Name: "late-subscription", Lab: "1.1", Failures: []signature.Failure{a, b}, NamedAs: "no-wait"},
		// racy fails C every time and B in some runs only: a run that fails B is no-wait's A and
		// B plus C, which no-wait's signature does not explain, so it names racy alone.
		{Name: "racy", Lab: "1.1", Failures: []signature.Failure{c}, Unstable: []string{"TestLab1_1_B"}},
		{Name: "wrong-answer", Lab: "1.1", Failures: []signature.Failure{c, {Test: "TestLab1_1_D", Message: "d"}}},
	}}
	data, err := file.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{signature.Path("01"): {Data: data}}
	right := []mutantRun{
		{failures: []signature.Failure{a, b}},
		{failures: []signature.Failure{a, b}},
		{failures: []signature.Failure{c}, others: [][]signature.Failure{{a, b, c}}},
		{failures: []signature.Failure{c, {Test: "TestLab1_1_D", Message: "d"}}},
	}
	if got := checkSignatures(fsys, ch, right); !got.OK {
		t.Fatalf("runs that name their own mistakes (or the one they are named as): check failed:\n%s", got.Detail)
	}

	tests := []struct {
		name   string
		mutant int
		run    mutantRun
		want   string
	}{
		{"a run that agreed with the file after an earlier one named another mutant", 3,
			mutantRun{failures: []signature.Failure{c, {Test: "TestLab1_1_D", Message: "d"}}, varied: true, others: [][]signature.Failure{{c}}},
			"mutant wrong-answer: its own failures are named racy, another mistake: a learner who makes mistake wrong-answer would be told of racy"},
		{"the run the file is compared with names another mutant", 2,
			mutantRun{failures: []signature.Failure{c}, others: [][]signature.Failure{{a, b}}},
			"mutant racy: its own failures are named no-wait, another mistake"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := append([]mutantRun(nil), right...)
			runs[tt.mutant] = tt.run
			got := checkSignatures(fsys, ch, runs)
			if got.OK || !strings.Contains(got.Detail, tt.want) {
				t.Errorf("check OK = %v, detail:\n%s\nwant a failure containing %q", got.OK, got.Detail, tt.want)
			}
		})
	}

	// Without named_as, the two mutants that fail alike are twins.
	twins := &manifest.Chapter{Number: "01", Mutants: append([]*manifest.Mutant(nil), ch.Mutants...)}
	twins.Mutants[1] = &manifest.Mutant{Name: "late-subscription", Lab: "1.1"}
	twinFile := *file
	twinFile.Mutants = append([]signature.Mutant(nil), file.Mutants...)
	twinFile.Mutants[1].NamedAs = ""
	if data, err = twinFile.Marshal(); err != nil {
		t.Fatal(err)
	}
	got := checkSignatures(fstest.MapFS{signature.Path("01"): {Data: data}}, twins, right)
	if want := "mutant no-wait: has the same signature as late-subscription"; got.OK || !strings.Contains(got.Detail, want) {
		t.Errorf("twins without named_as: check OK = %v, detail:\n%s\nwant a failure containing %q", got.OK, got.Detail, want)
	}
	// The file must agree with the manifest's named_as.
	if got := checkSignatures(fsys, twins, right); got.OK || !strings.Contains(got.Detail, `mutant late-subscription: the file says it is named as "no-wait", the manifest ""`) {
		t.Errorf("named_as only in the file: check OK = %v, detail:\n%s", got.OK, got.Detail)
	}

	// A mutant no test catches steadily (an empty signature) is still proven not to be named
	// another mistake.
	empty := *file
	empty.Mutants = append([]signature.Mutant(nil), file.Mutants...)
	empty.Mutants[2] = signature.Mutant{Name: "racy", Lab: "1.1", Failures: []signature.Failure{}, Unstable: []string{"TestLab1_1_A", "TestLab1_1_B"}}
	data, err = empty.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	runs := append([]mutantRun(nil), right...)
	runs[2] = mutantRun{failures: []signature.Failure{a, b}}
	got = checkSignatures(fstest.MapFS{signature.Path("01"): {Data: data}}, ch, runs)
	if want := "mutant racy: its own failures are named no-wait"; got.OK || !strings.Contains(got.Detail, want) {
		t.Errorf("an unstable mutant's run named another mutant: check OK = %v, detail:\n%s\nwant a failure containing %q", got.OK, got.Detail, want)
	}
}

// TestCheckSignaturesAgainstTheFile: the committed file disagrees with the runs in each way
// rule 7 reports, on a synthetic chapter without a go test run (TestSignatureCheck runs the
// check end to end on a fake course, for a stale message and an up-to-date file).
func TestCheckSignaturesAgainstTheFile(t *testing.T) {
	add := signature.Failure{Test: "TestLab1_1_Add", Message: "Add(2, 3) = -1, want 5"}
	double := signature.Failure{Test: "TestLab1_2_Double", Message: "Double(4) = 16, want 8"}
	ch := &manifest.Chapter{Number: "01", Mutants: []*manifest.Mutant{
		{Name: "minus", Lab: "1.1"},
		{Name: "square", Lab: "1.2"},
	}}
	runs := []mutantRun{{failures: []signature.Failure{add}}, {failures: []signature.Failure{double}}}
	upToDate := func() signature.File {
		return signature.File{Chapter: "01", GeneratedBy: signature.GenerateCommand("01"), Mutants: []signature.Mutant{
			{Name: "minus", Lab: "1.1", Failures: []signature.Failure{add}},
			{Name: "square", Lab: "1.2", Failures: []signature.Failure{double}},
		}}
	}
	tests := []struct {
		name    string
		file    func() *signature.File // nil: no file
		details []string
	}{
		{"missing", nil, []string{
			"checkpoints/signatures/01.json is missing: run `go run ./cmd/course dev signatures 01`"}},
		{"a test missing from the file", func() *signature.File {
			f := upToDate()
			f.Mutants[1].Failures = []signature.Failure{}
			return &f
		}, []string{
			"signatures of chapter 01 are stale",
			`mutant square: TestLab1_2_Double: fails with "Double(4) = 16, want 8", which the file does not have`}},
		{"no failure is stable", func() *signature.File {
			f := upToDate()
			f.Mutants[1].Failures = []signature.Failure{}
			f.Mutants[1].Unstable = []string{"TestLab1_2_Double"}
			return &f
		}, []string{
			"mutant square: none of its failures is the same from run to run (TestLab1_2_Double)"}},
		{"mutant missing from the file", func() *signature.File {
			f := upToDate()
			f.Mutants[1].Name = "cube"
			return &f
		}, []string{
			"mutant square: not in the file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			if tt.file != nil {
				data, err := tt.file().Marshal()
				if err != nil {
					t.Fatal(err)
				}
				fsys[signature.Path("01")] = &fstest.MapFile{Data: data}
			}
			got := checkSignatures(fsys, ch, runs)
			if got.OK {
				t.Fatalf("check passed, want a failure")
			}
			for _, d := range tt.details {
				if !strings.Contains(got.Detail, d) {
					t.Errorf("detail lacks %q:\n%s", d, got.Detail)
				}
			}
		})
	}
	f := upToDate()
	data, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if got := checkSignatures(fstest.MapFS{signature.Path("01"): {Data: data}}, ch, runs); !got.OK {
		t.Errorf("the file the runs give: check failed:\n%s", got.Detail)
	}
}
