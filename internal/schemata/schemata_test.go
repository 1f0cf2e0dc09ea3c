package schemata_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/schemata"
)

const calc = `package calc

import "fmt"

// Add adds.
func Add(a, b int) int {
	return a + b
}

type Counter struct{ n int }

// Bump adds to the count.
func (c *Counter) Bump(by ...int) {
	for _, b := range by {
		c.n += b
	}
}

func (c *Counter) Count() int { return c.n }

func Max[T int | float64](a, b T) T {
	if a > b {
		return a
	}
	return b
}

func Describe(_ int) string { return "x" }

func Name(n int) string { return fmt.Sprint(n) }

var Limit = 3
`

const half = `package calc

func Half(n int) int { return n / 2 }
`

// calcTest prints what the functions give; it runs once per mutant.
const calcTest = `package calc

import (
	"fmt"
	"testing"
)

func TestShow(t *testing.T) {
	c := &Counter{}
	c.Bump(1, 2, 3)
	fmt.Printf("Add=%d Count=%d Max=%d Name=%s Half=%d\n", Add(2, 3), c.Count(), Max(4, 7), Name(7), Half(9))
}
`

func TestBuild(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	tree := map[string][]byte{"go.mod": []byte("module calc\n\ngo 1.26\n"), "calc.go": []byte(calc), "half.go": []byte(half), "calc_test.go": []byte(calcTest)}
	mutate := func(find, replace string) []byte {
		t.Helper()
		if strings.Count(calc, find) != 1 {
			t.Fatalf("%q is not in calc.go exactly once", find)
		}
		return []byte(strings.Replace(calc, find, replace, 1))
	}
	mutations := []schemata.Mutation{
		{Name: "minus", File: "calc.go", Src: mutate("return a + b", "return a - b")},
		{Name: "times", File: "calc.go", Src: mutate("return a + b", "return a * b")},
		{Name: "bump-first-only", File: "calc.go", Src: mutate("for _, b := range by {", "for _, b := range by[:1] {")},
		{Name: "min", File: "calc.go", Src: mutate("if a > b {", "if a < b {")},
		{Name: "limit", File: "calc.go", Src: mutate("var Limit = 3", "var Limit = 4")},
		{Name: "signature", File: "calc.go", Src: mutate("func Add(a, b int) int {", "func Add(a, b int) (sum int) {")},
		{Name: "blank-param", File: "calc.go", Src: mutate(`return "x"`, `return "y"`)},
		{Name: "broken", File: "calc.go", Src: mutate("return a + b", "return a +")},
		{Name: "test-file", File: "calc_test.go", Src: []byte(calcTest)},
		{Name: "unused-import", File: "calc.go", Src: mutate(`return fmt.Sprint(n)`, `return "n"`)},
		// A stub, as a progressive stage has it: the body no longer uses fmt, and the import is gone.
		{Name: "stub", File: "calc.go", Src: []byte(strings.Replace(string(mutate(`return fmt.Sprint(n)`, `return "stub"`)), "import \"fmt\"\n", "", 1))},
		{Name: "dropped-import-still-used", File: "calc.go", Src: []byte(strings.Replace(calc, "import \"fmt\"\n", "", 1))},
		{Name: "added-import", File: "calc.go", Src: []byte(strings.Replace(string(mutate("return a + b", "return a + b + len(os.Args)*0")), "import \"fmt\"\n", "import (\n\t\"fmt\"\n\t\"os\"\n)\n", 1))},
		// One mutant in two files: both are woven in, under one name.
		{Name: "two-files", File: "calc.go", Src: mutate("return a + b", "return a - b")},
		{Name: "two-files", File: "half.go", Src: []byte(strings.Replace(half, "n / 2", "n / 3", 1))},
	}
	res := schemata.Build(tree, mutations)
	wantWoven := []bool{true, true, true, true, false, false, false, false, false, false, true, false, false, true, true}
	if diff := cmp.Diff(wantWoven, res.Woven); diff != "" {
		t.Errorf("woven (-want +got):\n%s\nwhy: %q", diff, res.Why)
	}
	for i, w := range res.Woven {
		if !w && res.Why[i] == "" {
			t.Errorf("mutation %s is left out without a reason", mutations[i].Name)
		}
	}

	dir := t.TempDir()
	for name, src := range tree {
		if changed, ok := res.Files[name]; ok {
			src = changed
		}
		write(t, filepath.Join(dir, name), src)
	}
	for name, src := range res.Files {
		if _, ok := tree[name]; !ok {
			write(t, filepath.Join(dir, name), src)
		}
	}
	for mutant, want := range map[string]string{
		"":                "Add=5 Count=6 Max=7 Name=7 Half=4",
		"minus":           "Add=-1 Count=6 Max=7 Name=7 Half=4",
		"times":           "Add=6 Count=6 Max=7 Name=7 Half=4",
		"bump-first-only": "Add=5 Count=1 Max=7 Name=7 Half=4",
		"min":             "Add=5 Count=6 Max=4 Name=7 Half=4",
		"limit":           "Add=5 Count=6 Max=7 Name=7 Half=4", // not woven: selecting it changes nothing
		"stub":            "Add=5 Count=6 Max=7 Name=stub Half=4",
		"two-files":       "Add=-1 Count=6 Max=7 Name=7 Half=3",
	} {
		cmd := exec.Command("go", "test", "-count=1", "-v", "-run", "TestShow", ".")
		cmd.Dir = dir
		// OfflineEnv keeps make test's -trimpath: without it this one test built its own copy of
		// the standard library on a fresh machine, most of a minute of CPU.
		cmd.Env = append(append(os.Environ(), gotest.OfflineEnv()...), schemata.EnvVar+"="+mutant)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("mutant %q: %v\n%s", mutant, err, out)
		}
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("mutant %q: output lacks %q:\n%s", mutant, want, out)
		}
	}
}

func write(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
