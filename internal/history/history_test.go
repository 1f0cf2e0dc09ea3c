package history_test

import (
	"io"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/history"
	"github.com/learn-tinypi/course/internal/tree"
)

// testFS is a course of three chapters, with a subdirectory and names whose git order differs
// from plain byte order ("a.go" sorts after the directory "a" only when "a" counts as "a/").
func testFS(t *testing.T) fstest.MapFS {
	t.Helper()
	chapter := func(n, slug, files string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("number: \"" + n + "\"\nslug: " + slug + "\ntitle: 章" + n +
			"\ntitle_en: Chapter " + n + "\nmode: observe\nfiles: [" + files + "]\ndoc: docs/" + n + ".md\n")}
	}
	fsys := fstest.MapFS{
		"checkpoints/course.yaml":   {Data: []byte("module: tinypi\ngo: \"1.26\"\nkit_import: example.com/kit/tinypi\nrequires: [golang.org/x/text]\n")},
		"checkpoints/01-one.yaml":   chapter("01", "one", "doc.go"),
		"checkpoints/02-two.yaml":   chapter("02", "two", "a, a.go, a-b.go"),
		"checkpoints/03-three.yaml": chapter("03", "three", "z.go"),
		"solutions/tinypi/doc.go":   {Data: []byte("package tinypi\n")},
		"solutions/tinypi/a/x.go":   {Data: []byte("package a\n")},
		"solutions/tinypi/a/b/y.go": {Data: []byte("package b\n")},
		"solutions/tinypi/a.go":     {Data: []byte("package tinypi\n\n// A is a.\nconst A = 1\n")},
		"solutions/tinypi/a-b.go":   {Data: []byte("package tinypi\n\n// B is b.\nconst B = 2\n")},
		"solutions/tinypi/z.go":     {Data: []byte("package tinypi\n\n// Z is z.\nconst Z = 3\n")},
	}
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := fs.ReadFile(course.Content(), name)
		if err != nil {
			t.Fatal(err)
		}
		fsys[name] = &fstest.MapFile{Data: data}
	}
	return fsys
}

func build(t *testing.T, fsys fs.FS) (*tree.Builder, *history.History) {
	t.Helper()
	b, err := tree.NewBuilder(fsys)
	if err != nil {
		t.Fatal(err)
	}
	h, err := history.Build(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, h
}

func TestBuildIsDeterministic(t *testing.T) {
	b, h1 := build(t, testFS(t))
	_, h2 := build(t, testFS(t))
	for _, ch := range b.Course().Chapters {
		if h1.Target(ch) == "" || h1.Target(ch) != h2.Target(ch) || h1.Parent(ch) != h2.Parent(ch) {
			t.Errorf("chapter %s: hashes differ between builds: %s/%s and %s/%s",
				ch.Number, h1.Target(ch), h1.Parent(ch), h2.Target(ch), h2.Parent(ch))
		}
	}

	// Different content gives a different history from the changed chapter on, and the same
	// history before it.
	changed := testFS(t)
	changed["solutions/tinypi/a.go"] = &fstest.MapFile{Data: []byte("package tinypi\n\n// A is a.\nconst A = 9\n")}
	_, h3 := build(t, changed)
	chs := b.Course().Chapters
	if h3.Target(chs[0]) != h1.Target(chs[0]) || h3.Target(chs[1]) == h1.Target(chs[1]) || h3.Target(chs[2]) == h1.Target(chs[2]) {
		t.Errorf("changing chapter 02's file: targets %s %s %s, were %s %s %s",
			h3.Target(chs[0]), h3.Target(chs[1]), h3.Target(chs[2]), h1.Target(chs[0]), h1.Target(chs[1]), h1.Target(chs[2]))
	}
}

func TestCommits(t *testing.T) {
	b, h := build(t, testFS(t))
	repo, err := h.Repository()
	if err != nil {
		t.Fatal(err)
	}
	prev := ""
	for i, ch := range b.Course().Chapters {
		if got := h.Parent(ch); got != prev {
			t.Errorf("chapter %s: Parent = %q, want the previous chapter's target %q", ch.Number, got, prev)
		}
		commit, err := repo.CommitObject(plumbing.NewHash(h.Target(ch)))
		if err != nil {
			t.Fatalf("chapter %s: %v", ch.Number, err)
		}
		var parents []string
		for _, p := range commit.ParentHashes {
			parents = append(parents, p.String())
		}
		var wantParents []string
		if prev != "" {
			wantParents = []string{prev}
		}
		if diff := cmp.Diff(wantParents, parents); diff != "" {
			t.Errorf("chapter %s: commit parents (-want +got):\n%s", ch.Number, diff)
		}
		when := time.Date(2026, 1, 1, 0, i+1, 0, 0, time.UTC)
		if commit.Author.Name != "tinypi course" || commit.Author.Email != "course@tinypi.invalid" ||
			!commit.Author.When.Equal(when) || !commit.Committer.When.Equal(when) {
			t.Errorf("chapter %s: author %v, committer %v; want tinypi course at %v", ch.Number, commit.Author, commit.Committer, when)
		}
		if want := "checkpoint " + ch.Number + ": Chapter " + ch.Number + "\n"; commit.Message != want {
			t.Errorf("chapter %s: message %q, want %q", ch.Number, commit.Message, want)
		}

		target, err := b.Target(ch)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(stringTree(target), commitFiles(t, commit)); diff != "" {
			t.Errorf("chapter %s: commit tree differs from Target (-want +got):\n%s", ch.Number, diff)
		}
		gitTreeMatches(t, target, commit.TreeHash.String())
		prev = h.Target(ch)
	}

	head, err := repo.Head()
	if err != nil || head.Hash().String() != prev {
		t.Errorf("HEAD = %v, %v; want the last chapter's commit %s", head, err, prev)
	}
	tag, err := repo.Tag("checkpoint-02")
	if err != nil || tag.Hash().String() != h.Target(b.Course().Chapters[1]) {
		t.Errorf("tag checkpoint-02 = %v, %v; want chapter 02's commit", tag, err)
	}
}

func stringTree(t tree.Tree) map[string]string {
	out := map[string]string{}
	for p, data := range t {
		out[p] = string(data)
	}
	return out
}

func commitFiles(t *testing.T, c *object.Commit) map[string]string {
	t.Helper()
	files, err := c.Files()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	err = files.ForEach(func(f *object.File) error {
		r, err := f.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		data, err := io.ReadAll(r)
		out[f.Name] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// gitTreeMatches checks, with the real git when it is installed, that git computes the same tree
// hash for the written tree: the history is ordinary git, not merely self-consistent.
func gitTreeMatches(t *testing.T, tr tree.Tree, want string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	dir := filepath.Join(t.TempDir(), "repo")
	if err := tr.Write(dir); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir, "GIT_CONFIG_GLOBAL=/dev/null"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	run("add", "-A")
	if got := run("write-tree"); got != want {
		t.Errorf("git write-tree = %s, history's tree = %s", got, want)
	}
}
