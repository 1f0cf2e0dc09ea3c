package labtest

import (
	"os"
	"testing"
)

// DirNames lists the names in dir (chapter 08's tests and later ones').
func DirNames(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
