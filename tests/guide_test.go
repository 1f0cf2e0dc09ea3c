package tests

import (
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// citedCommandRE finds the commands a practice directory's guide cites in backticks: the course
// commands and the programs it says to run (`go run ./cmd/readme-session ...`).
var citedCommandRE = regexp.MustCompile("`((?:course|go run) [^`]*)`")

// cmdGuideCited checks that the commands FILE cites are exactly those listed in WANT, one a line:
//
//	guidecited p12/AGENTS.md cited12.txt
//
// A script lists in WANT the commands it then runs in the chapter's practice directory, so a
// guide that cites a command no script ran fails here.
func cmdGuideCited(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: guidecited FILE WANT")
	}
	guide, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	want, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	var got []string
	for _, m := range citedCommandRE.FindAllStringSubmatch(string(guide), -1) {
		if !slices.Contains(got, m[1]) {
			got = append(got, m[1])
		}
	}
	slices.Sort(got)
	var wanted []string
	for line := range strings.Lines(string(want)) {
		if line = strings.TrimSpace(line); line != "" {
			wanted = append(wanted, line)
		}
	}
	slices.Sort(wanted)
	if !slices.Equal(got, wanted) {
		ts.Fatalf("%s cites\n\t%s\nwant\n\t%s", args[0], strings.Join(got, "\n\t"), strings.Join(wanted, "\n\t"))
	}
}
