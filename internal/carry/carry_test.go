package carry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/labsrc"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/tree"
)

// newPractice creates chapter number's practice directory in a new temporary directory and
// returns the builder, its root and its record.
func newPractice(t *testing.T, number string) (*tree.Builder, string, *practice.Provenance) {
	t.Helper()
	b, err := tree.NewBuilder(course.Content())
	if err != nil {
		t.Fatal(err)
	}
	ch, err := b.Course().Chapter(number)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "p"+number)
	if err := practice.Create(context.Background(), root, b, nil, ch, "en"); err != nil {
		t.Fatal(err)
	}
	_, prov, err := practice.Find(root)
	if err != nil {
		t.Fatal(err)
	}
	return b, root, prov
}

// solve writes the reference bodies of every lab of chapter number into root.
func solve(t *testing.T, b *tree.Builder, number, root string) {
	t.Helper()
	ch, _ := b.Course().Chapter(number)
	for _, lab := range ch.Labs {
		files, err := b.LabFiles(ch, lab)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			ref, err := b.ReferenceBodies(ch, lab, f)
			if err != nil {
				t.Fatal(err)
			}
			edit(t, root, f, func(src []byte) []byte {
				out, err := labsrc.ReplaceBodies(src, lab.ID, ref)
				if err != nil {
					t.Fatal(err)
				}
				return out
			})
		}
	}
}

// restub puts the starter's stub of lab (of chapter number) back into root.
func restub(t *testing.T, b *tree.Builder, number, id, root string) {
	t.Helper()
	ch := chapter(t, b, number)
	for _, lab := range ch.Labs {
		if lab.ID != id {
			continue
		}
		files, err := b.LabFiles(ch, lab)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			stub, err := b.StubBodies(ch, lab, f)
			if err != nil {
				t.Fatal(err)
			}
			edit(t, root, f, func(src []byte) []byte {
				out, err := labsrc.ReplaceBodies(src, id, stub)
				if err != nil {
					t.Fatal(err)
				}
				return out
			})
		}
		return
	}
	t.Fatalf("chapter %s has no lab %s", number, id)
}

// edit rewrites the file f of root with change.
func edit(t *testing.T, root, f string, change func([]byte) []byte) {
	t.Helper()
	name := filepath.Join(root, filepath.FromSlash(f))
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, change(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func chapter(t *testing.T, b *tree.Builder, number string) *manifest.Chapter {
	t.Helper()
	ch, err := b.Course().Chapter(number)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestNewRefuses(t *testing.T) {
	b, template, prov := newPractice(t, "07")
	solve(t, b, "07", template)
	tests := []struct {
		name   string
		to     string
		damage func(t *testing.T, root string)
		want   Refusal // Kind, and the fields that say where
	}{
		{name: "same chapter", to: "07", want: Refusal{Kind: RefuseNotEarlier, Chapter: "07"}},
		{name: "an earlier chapter", to: "06", want: Refusal{Kind: RefuseNotEarlier, Chapter: "07"}},
		{
			name: "edited focused tests", to: "08",
			damage: func(t *testing.T, root string) {
				edit(t, root, "ch07_agentloop_test.go", func(src []byte) []byte { return append(src, "// edited\n"...) })
			},
			want: Refusal{Kind: RefuseTestsChanged, Files: []string{"ch07_agentloop_test.go"}},
		},
		{
			name: "markers of a lab gone", to: "08",
			damage: func(t *testing.T, root string) {
				edit(t, root, "agentloop.go", func(src []byte) []byte {
					return []byte(strings.ReplaceAll(string(src), "//lab:begin 7.3\n", "\n"))
				})
			},
			want: Refusal{Kind: RefuseMarkers, File: "agentloop.go"}, // the file's markers no longer parse
		},
		{
			name: "a lab's markers all gone", to: "08",
			damage: func(t *testing.T, root string) {
				edit(t, root, "agentloop.go", func(src []byte) []byte {
					lines := strings.Split(string(src), "\n")
					var kept []string
					inside := false
					for _, l := range lines {
						switch strings.TrimSpace(l) {
						case "//lab:begin 7.3":
							inside = true
							continue
						case "//lab:end":
							if inside {
								inside = false
								continue
							}
						}
						kept = append(kept, l)
					}
					return []byte(strings.Join(kept, "\n"))
				})
			},
			want: Refusal{Kind: RefuseMarkers, Lab: "7.3", File: "agentloop.go"},
		},
		{
			name: "a Go file that does not parse", to: "08",
			damage: func(t *testing.T, root string) {
				if err := os.WriteFile(filepath.Join(root, "mine.go"), []byte("package tinypi\n\nfunc broken( {\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: Refusal{Kind: RefuseSyntax, File: "mine.go"},
		},
		{
			name: "a named pipe among the Go files", to: "08",
			damage: func(t *testing.T, root string) {
				if err := syscall.Mkfifo(filepath.Join(root, "pipe.go"), 0o600); err != nil {
					t.Fatal(err)
				}
			},
			want: Refusal{Kind: RefuseUnreadable, File: "pipe.go"},
		},
		{
			name: "a Go file over the size limit", to: "08",
			damage: func(t *testing.T, root string) {
				big := "package tinypi\n\n// " + strings.Repeat("x", maxFileBytes) + "\n"
				if err := os.WriteFile(filepath.Join(root, "big.go"), []byte(big), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: Refusal{Kind: RefuseUnreadable, File: "big.go"},
		},
		{
			name: "a lab still the starter's stub", to: "08",
			damage: func(t *testing.T, root string) { restub(t, b, "07", "7.5", root) },
			want:   Refusal{Kind: RefuseStub, Labs: []string{"7.5"}, Files: []string{"agentloop.go"}},
		},
		{
			name: "two labs still the starter's stubs, one re-indented", to: "08",
			damage: func(t *testing.T, root string) {
				restub(t, b, "07", "7.2", root)
				restub(t, b, "07", "7.4", root)
				edit(t, root, "agentloop.go", func(src []byte) []byte {
					out := strings.ReplaceAll(string(src), "\t// TODO(Lab 7.4)", "\t\t// TODO(Lab 7.4)")
					if out == string(src) {
						t.Fatal("no TODO line of lab 7.4 to re-indent")
					}
					return []byte(out)
				})
			},
			want: Refusal{Kind: RefuseStub, Labs: []string{"7.2", "7.4"}, Files: []string{"agentloop.go", "agentloop.go"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "p07")
			if err := os.CopyFS(root, os.DirFS(template)); err != nil {
				t.Fatal(err)
			}
			if tt.damage != nil {
				tt.damage(t, root)
			}
			before := snapshot(t, root)
			_, err := New(b, root, prov, chapter(t, b, tt.to))
			var got *Refusal
			if !errors.As(err, &got) {
				t.Fatalf("New: %v, want a refusal of kind %s", err, tt.want.Kind)
			}
			if got.Kind != tt.want.Kind || got.Chapter != tt.want.Chapter || got.Lab != tt.want.Lab || got.File != tt.want.File || !slices.Equal(got.Files, tt.want.Files) || !slices.Equal(got.Labs, tt.want.Labs) {
				t.Errorf("New refused with %+v, want %+v", *got, tt.want)
			}
			if after := snapshot(t, root); !slices.Equal(before, after) {
				t.Errorf("New changed PREV:\nbefore %q\nafter  %q", before, after)
			}
		})
	}
}

func TestNewCarriesHelpersAndReportsOrigins(t *testing.T) {
	b, root, prov := newPractice(t, "07")
	solve(t, b, "07", root)
	// The learner's 7.5 calls a helper of their own, which uses a package the reference's file
	// does not import.
	edit(t, root, "agentloop.go", func(src []byte) []byte {
		bodies, err := labsrc.Bodies(src, "7.5")
		if err != nil || len(bodies) == 0 {
			t.Fatal("no region of lab 7.5 in agentloop.go")
		}
		bodies[0] = "\tif limitText(r.maxSteps) == \"\" {\n\t\tpanic(\"no limit\")\n\t}\n" + bodies[0]
		out, err := labsrc.ReplaceBodies(src, "7.5", bodies)
		if err != nil {
			t.Fatal(err)
		}
		out = []byte(strings.Replace(string(out), "import (\n", "import (\n\t\"strconv\"\n", 1))
		return append(out, "\n// limitText is the learner's own helper.\nfunc limitText(n int) string { return strconv.Itoa(n) }\n\n// unused is a helper no carried code calls: it stays behind.\nfunc unused() {}\n"...)
	})
	// The learner's 7.1, which chapter 09 rewrote around, is theirs: a line of their own marks it.
	edit(t, root, "agentloop.go", func(src []byte) []byte {
		bodies, err := labsrc.Bodies(src, "7.1")
		if err != nil || len(bodies) == 0 {
			t.Fatal("no region of lab 7.1 in agentloop.go")
		}
		bodies[0] = "\t// the learner's own 7.1\n" + bodies[0]
		out, err := labsrc.ReplaceBodies(src, "7.1", bodies)
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
	plan, err := New(b, root, prov, chapter(t, b, "09"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := plan.Helpers, []Helper{{File: "agentloop.go", Name: "limitText"}}; !slices.Equal(got, want) {
		t.Errorf("Helpers = %+v, want %+v", got, want)
	}
	src := string(plan.Starter["agentloop.go"])
	for _, want := range []string{"func limitText(n int) string", `"strconv"`, `if limitText(r.maxSteps) == "" {`} {
		if !strings.Contains(src, want) {
			t.Errorf("the new agentloop.go lacks %q", want)
		}
	}
	if strings.Contains(src, "func unused()") {
		t.Error("the new agentloop.go has the helper no carried code needs")
	}
	origins := map[string]practice.LabOrigin{}
	for _, o := range plan.Earlier {
		origins[o.Lab] = o
	}
	if o := origins["7.5"]; !o.Learner() || o.Written != "07" {
		t.Errorf("origin of 7.5 = %+v, want the learner's, written in 07", o)
	}
	if o := origins["7.1"]; o.Learner() || o.Reason != practice.ReasonChanged || o.Changed != "09" || o.File != "agentloop.go" {
		t.Errorf("origin of 7.1 = %+v, want the reference's: chapter 09 changed the code around it in agentloop.go", o)
	}
	if got := plan.Carried(); !slices.Contains(got, "7.5") || slices.Contains(got, "7.1") {
		t.Errorf("Carried() = %v, want 7.5 and not 7.1", got)
	}
	// The learner's 7.1 is kept beside the reference's, and its origin names the file; a carried
	// lab has none.
	const kept = ".course/carried/7.1.go.txt"
	if o := origins["7.1"]; o.Kept != kept {
		t.Errorf("origin of 7.1 keeps the learner's code in %q, want %q", o.Kept, kept)
	}
	if o := origins["7.5"]; o.Kept != "" {
		t.Errorf("origin of 7.5 (carried) keeps a file %q, want none", o.Kept)
	}
	text := string(plan.Kept[kept])
	for _, want := range []string{
		"// Lab 7.1: your code, written in chapter 07. Chapter 09 rewrote (*loopRun).afterTurn (agentloop.go) around it",
		"// Lab 7.1：你在第 07 章写的代码。第 09 章改写了它所在的 (*loopRun).afterTurn（agentloop.go）",
		"\n// agentloop.go\n",
		"\t// the learner's own 7.1\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", kept, want, text)
		}
	}
	for p := range plan.Kept {
		if !strings.HasPrefix(p, practice.KeptDir+"/") || !strings.HasSuffix(p, ".go.txt") {
			t.Errorf("kept file %q is not a text file under %s", p, practice.KeptDir)
		}
		if _, ok := plan.Starter[p]; ok {
			t.Errorf("kept file %q is also in the starter", p)
		}
	}
}

// snapshot lists every file of root with its size and mode, and the content of its Go files.
func snapshot(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := p + " " + info.Mode().String()
		if info.Mode().IsRegular() && strings.HasSuffix(p, ".go") {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += " " + string(data)
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
