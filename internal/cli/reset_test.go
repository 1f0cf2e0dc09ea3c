package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestUnifiedDiff(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", "--- old\n+++ new\n@@ -10,3 +10,3 @@\n a\n-b\n+B\n c\n"},
		{"stub to code", "\t// TODO\n\tpanic(x)\n", "\treturn y\n",
			"--- old\n+++ new\n@@ -10,2 +10 @@\n-\t// TODO\n-\tpanic(x)\n+\treturn y\n"},
		{"from nothing", "", "x\n", "--- old\n+++ new\n@@ -9,0 +10 @@\n+x\n"},
		{"far apart changes make two hunks",
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
			"one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n",
			"--- old\n+++ new\n@@ -10,4 +10,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -18,4 +18,4 @@\n 9\n 10\n 11\n-12\n+twelve\n"},
		{"near changes share a hunk",
			"1\n2\n3\n4\n5\n",
			"one\n2\n3\n4\nfive\n",
			"--- old\n+++ new\n@@ -10,5 +10,5 @@\n-1\n+one\n 2\n 3\n 4\n-5\n+five\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := unifiedDiff("old", "new", 10, tt.old, tt.new)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("unifiedDiff (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBeginLines(t *testing.T) {
	src := []byte("a\n\t//lab:begin 7.1\nx\n//lab:end\n//lab:begin 7.2\n//lab:end\n  //lab:begin 7.1\n//lab:end\n")
	if diff := cmp.Diff([]int{2, 7}, beginLines(src, "7.1")); diff != "" {
		t.Errorf("beginLines (-want +got):\n%s", diff)
	}
}

func TestBackupFilesNeverOverwrites(t *testing.T) {
	root := t.TempDir()
	lab := "lab-7.1"
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	changes := []resetFile{{labFile: labFile{path: "sub/a.go", src: []byte("first"), mode: 0o644}}}
	dir1, err := backupFiles(root, lab, changes, now)
	if err != nil {
		t.Fatal(err)
	}
	changes[0].src = []byte("second")
	dir2, err := backupFiles(root, lab, changes, now)
	if err != nil {
		t.Fatal(err)
	}
	if dir1 != ".course/backup/20260301T120000Z-lab-7.1" || dir2 != ".course/backup/20260301T120000Z-lab-7.1-2" {
		t.Errorf("backup folders = %s, %s", dir1, dir2)
	}
	for dir, want := range map[string]string{dir1: "first", dir2: "second"} {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(dir), "sub", "a.go"))
		if err != nil || string(got) != want {
			t.Errorf("%s/sub/a.go = %q, %v; want %q", dir, got, err, want)
		}
	}
}
