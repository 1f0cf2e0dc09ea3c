package devcheck_test

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/learn-tinypi/course/internal/devcheck"
	"github.com/learn-tinypi/course/internal/signature"
	"github.com/learn-tinypi/course/internal/tree"
)

// signaturesCheck01 is the name of rule 7's check for the fake course's chapter 01.
const signaturesCheck01 = "signatures: checkpoints/signatures/01.json is up to date; each mutant's failures name exactly that mutant"

// calcSignatures is the signature file of the fake course's chapter 01, as
// `course dev signatures 01` writes it: minus fails TestLab1_1_Add only (0 - 0 is 0 + 0).
const calcSignatures = `{
  "chapter": "01",
  "generated_by": "go run ./cmd/course dev signatures 01",
  "mutants": [
    {
      "name": "minus",
      "lab": "1.1",
      "failures": [
        {
          "test": "TestLab1_1_Add",
          "message": "Add(2, 3) = -1, want 5"
        }
      ]
    },
    {
      "name": "square",
      "lab": "1.2",
      "failures": [
        {
          "test": "TestLab1_2_Double",
          "message": "Double(4) = 16, want 8"
        }
      ]
    }
  ]
}
`

func TestSignaturesWritesTheCommittedFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	b, err := tree.NewBuilder(fakeCourse(t))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	files, err := devcheck.Signatures(context.Background(), b, devcheck.Options{Parallel: 2, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Chapter != "01" {
		t.Fatalf("Signatures returned %d file(s), want one for chapter 01 (00 is an observe chapter)", len(files))
	}
	data, err := files[0].Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(calcSignatures, string(data)); diff != "" {
		t.Errorf("signature file (-want +got):\n%s", diff)
	}
	if !strings.Contains(out.String(), "01 ✓ minus: 1 failing test(s)\n") {
		t.Errorf("output lacks the mutant's line:\n%s", out.String())
	}
	if _, err := devcheck.Signatures(context.Background(), b, devcheck.Options{Chapters: []string{"00"}}); err == nil {
		t.Error("Signatures of an observe chapter succeeded")
	}
}

// signatureDetail runs dev check on chapter 01 of fsys and returns rule 7's outcome and output.
func signatureDetail(t *testing.T, fsys fstest.MapFS) (bool, string) {
	t.Helper()
	res, out := run(t, fsys, "1")
	ok, found := outcomes(res)["01 "+signaturesCheck01]
	if !found {
		t.Fatalf("no signature check ran; output:\n%s", out)
	}
	return ok, out
}

// TestSignatureCheck runs rule 7 end to end on the fake course: a message the runs no longer
// give, and an up-to-date file. TestCheckSignaturesAgainstTheFile (internal) covers the other
// ways a file can disagree, without a go test run each.
func TestSignatureCheck(t *testing.T) {
	tests := []struct {
		name    string
		file    string // the committed file
		ok      bool
		details []string
	}{
		{"stale message", strings.Replace(calcSignatures, "Add(2, 3) = -1, want 5", "Add(2, 3) = 0, want 5", 1), false, []string{
			"signatures of chapter 01 are stale: run `go run ./cmd/course dev signatures 01`",
			`mutant minus: TestLab1_1_Add: the file says "Add(2, 3) = 0, want 5", the run gives "Add(2, 3) = -1, want 5"`}},
		{"up to date", calcSignatures, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fakeCourse(t)
			fsys[signature.Path("01")] = &fstest.MapFile{Data: []byte(tt.file)}
			ok, out := signatureDetail(t, fsys)
			if ok != tt.ok {
				t.Errorf("signature check OK = %v, want %v; output:\n%s", ok, tt.ok, out)
			}
			for _, d := range tt.details {
				if !strings.Contains(out, d) {
					t.Errorf("output lacks %q:\n%s", d, out)
				}
			}
		})
	}
}

// TestSignatureCheckSharedSignature: two mutants of a lab with the same failures cannot be told
// apart, so a learner would be named both mistakes: the check fails and names the twins.
func TestSignatureCheckSharedSignature(t *testing.T) {
	twin := `  - {name: minus-again, lab: "1.1", file: calc.go, find: "a + b", replace: "a - b", explain: 又是减法, explain_en: Subtracts again}
`
	withTwins := func(n int) fstest.MapFS {
		fsys := fakeCourse(t)
		var mutants, sigs strings.Builder
		for i := range n {
			name := "minus-again" + strings.Repeat("x", i)
			mutants.WriteString(strings.Replace(twin, "minus-again", name, 1))
			sigs.WriteString(`,
    {
      "name": "` + name + `",
      "lab": "1.1",
      "failures": [
        {
          "test": "TestLab1_1_Add",
          "message": "Add(2, 3) = -1, want 5"
        }
      ]
    }`)
		}
		fsys["checkpoints/01-calc.yaml"].Data = []byte(string(fsys["checkpoints/01-calc.yaml"].Data) + mutants.String())
		file := strings.Replace(calcSignatures, "\n    }\n  ]\n}\n", "\n    }"+sigs.String()+"\n  ]\n}\n", 1)
		fsys[signature.Path("01")] = &fstest.MapFile{Data: []byte(file)}
		return fsys
	}

	ok, out := signatureDetail(t, withTwins(1))
	if ok || !strings.Contains(out, "mutant minus: has the same signature as minus-again") {
		t.Errorf("two mutants sharing a signature: OK = %v, want false naming the twins; output:\n%s", ok, out)
	}
	ok, out = signatureDetail(t, withTwins(0))
	if !ok {
		t.Errorf("one mutant: OK = %v, want true; output:\n%s", ok, out)
	}
}
