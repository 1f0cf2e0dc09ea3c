package cli

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/testfiles"
)

// focusOverlay writes a go build overlay (`go help build`, -overlay) that hides the test files
// of the practice directory root that the kit wrote there (kitTests: the provenance's test
// files) and that neither the chapter's focused tests nor the learner's own test files need
// (testfiles.Needed), and returns its name and a function that removes it. A chapter's package
// holds every earlier chapter's tests too, and compiling them was most of the time of an edit →
// test cycle; the tests that run, and what they report, are the same without them. A test file
// the learner added is never hidden: a test of theirs that the lab pattern matches runs as it
// would under go test. name is "" when nothing can be hidden (a file does not parse, the chapter
// has no test file, the kit's files are not known): run the whole package then. The overlay
// file lives in the temporary directory, never in root. A chapter in a package of its own
// (ch.Package) needs none: no other chapter's tests are in its package.
func focusOverlay(root string, ch *manifest.Chapter, kitTests map[string]string) (name string, remove func()) {
	remove = func() {}
	if ch.TestFile == "" || ch.Package != "" || len(kitTests) == 0 {
		return "", remove
	}
	matches, err := filepath.Glob(filepath.Join(root, "*_test.go"))
	if err != nil {
		return "", remove
	}
	files := map[string][]byte{}
	for _, m := range matches {
		src, err := os.ReadFile(m)
		if err != nil {
			return "", remove
		}
		files[filepath.Base(m)] = src
	}
	roots := []string{ch.TestFile}
	for f := range files {
		if _, kits := kitTests[f]; !kits && f != ch.TestFile {
			roots = append(roots, f) // the learner's own
		}
	}
	keep, ok := testfiles.Needed(files, roots...)
	if !ok || len(keep) == len(files) {
		return "", remove
	}
	overlay := struct {
		Replace map[string]string
	}{Replace: map[string]string{}}
	for f := range files {
		if !keep[f] {
			abs, err := filepath.Abs(filepath.Join(root, f))
			if err != nil {
				return "", remove
			}
			overlay.Replace[abs] = "" // an empty replacement hides the file
		}
	}
	data, err := json.Marshal(overlay)
	if err != nil {
		return "", remove
	}
	f, err := os.CreateTemp("", "course-focus-*.json")
	if err != nil {
		return "", remove
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		os.Remove(f.Name())
		return "", remove
	}
	return f.Name(), func() { os.Remove(f.Name()) }
}
