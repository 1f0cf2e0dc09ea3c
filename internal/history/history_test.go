package history_test

import (
	"io"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/history"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// testFS is a course of three rebuild chapters and an observe chapter 00 that observes chapter
// 02, with a subdirectory and names whose git order differs from plain byte order ("a.go" sorts
// after the directory "a" only when "a" counts as "a/").
func testFS(t *testing.T) fstest.MapFS {
	t.Helper()
	// rebuild is a rebuild chapter with one lab, N.1, whose region is in the chapter's first file.
	rebuild := func(n, slug, files string) *fstest.MapFile {
		major := strings.TrimLeft(n, "0")
		return &fstest.MapFile{Data: []byte("number: \"" + n + "\"\nslug: " + slug + "\ntitle: 章" + n +
			"\ntitle_en: Chapter " + n + "\nmode: rebuild\nfiles: [" + files + "]\ntest_file: ch" + n + "_test.go\ndoc: docs/" + n + ".md\n" +
			"labs: [{id: \"" + major + ".1\", title: 实验" + n + ", title_en: Lab, keyword: 实验" + n + ", pattern: ^TestLab" + major + "_1_, tests: 1}]\n")}
	}
	// fn is a file with function name whose body is lab's region.
	fn := func(name, lab, value string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("package tinypi\n\n// " + name + " is a value.\nfunc " + name + "() int {\n\t//lab:begin " + lab +
			"\n\treturn " + value + "\n\t//lab:end\n}\n")}
	}
	fsys := fstest.MapFS{
		"checkpoints/course.yaml":   {Data: []byte("module: tinypi\ngo: \"1.26\"\nkit_import: example.com/kit/tinypi\nrequires: [golang.org/x/text]\n")},
		"checkpoints/00-zero.yaml":  {Data: []byte("number: \"00\"\nslug: zero\ntitle: 章00\ntitle_en: Chapter 00\nmode: observe\nobserves: \"02\"\nfiles: [zero.go]\ndoc: docs/00.md\n")},
		"checkpoints/01-one.yaml":   rebuild("01", "one", "doc.go"),
		"checkpoints/02-two.yaml":   rebuild("02", "two", "a.go, a, a-b.go"),
		"checkpoints/03-three.yaml": rebuild("03", "three", "z.go"),
		"solutions/tinypi/zero.go":  {Data: []byte("package tinypi\n\n// Zero reads chapter 02's code.\nfunc Zero() int { return A() - 1 }\n")},
		"solutions/tinypi/doc.go":   fn("One", "1.1", "1"),
		"solutions/tinypi/a/x.go":   {Data: []byte("package a\n")},
		"solutions/tinypi/a/b/y.go": {Data: []byte("package b\n")},
		"solutions/tinypi/a.go":     fn("A", "2.1", "1"),
		"solutions/tinypi/a-b.go":   {Data: []byte("package tinypi\n\n// B is b.\nconst B = 2\n")},
		"solutions/tinypi/z.go":     fn("Z", "3.1", "3"),
	}
	for _, n := range []string{"01", "02", "03"} {
		fsys["solutions/tinypi/ch"+n+"_test.go"] = &fstest.MapFile{Data: []byte("package tinypi\n")}
	}
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := fs.ReadFile(course.Content(), name)
		require.NoError(t, err)
		fsys[name] = &fstest.MapFile{Data: data}
	}
	return fsys
}

func build(t *testing.T, fsys fs.FS) (*tree.Builder, *history.History) {
	t.Helper()
	b, err := tree.NewBuilder(fsys)
	require.NoError(t, err)
	h, err := history.Build(b)
	require.NoError(t, err)
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
	// history before it. Chapter 00's file is in the trees from chapter 02 on.
	for _, tt := range []struct {
		file      string
		unchanged []string // chapters whose commits stay the same
	}{
		{"solutions/tinypi/a.go", []string{"01"}},
		{"solutions/tinypi/zero.go", []string{"01"}},
		{"solutions/tinypi/z.go", []string{"00", "01", "02"}},
	} {
		changed := testFS(t)
		changed[tt.file] = &fstest.MapFile{Data: append(slices.Clone(changed[tt.file].Data), "\n// Changed.\n"...)}
		_, h3 := build(t, changed)
		for _, ch := range b.Course().Chapters {
			if same, want := h3.Target(ch) == h1.Target(ch), slices.Contains(tt.unchanged, ch.Number); same != want {
				t.Errorf("changing %s: chapter %s's commit unchanged = %v, want %v", tt.file, ch.Number, same, want)
			}
		}
	}
}

func TestCommits(t *testing.T) {
	b, h := build(t, testFS(t))
	repo, err := h.Repository()
	require.NoError(t, err)
	c := b.Course()
	prev := ""
	for _, ch := range c.Chapters {
		// Rebuild chapters form a line; the observe chapter 00 sits on chapter 02's commit.
		wantParent := prev
		if !ch.Rebuild() {
			wantParent = h.Target(c.Chapters[2])
		}
		assert.Equal(t, wantParent, h.Parent(ch), "chapter %s: Parent", ch.Number)
		commit, err := repo.CommitObject(plumbing.NewHash(h.Target(ch)))
		require.NoErrorf(t, err, "chapter %s", ch.Number)
		var parents []string
		for _, p := range commit.ParentHashes {
			parents = append(parents, p.String())
		}
		var wantParents []string
		if wantParent != "" {
			wantParents = []string{wantParent}
		}
		assert.Equal(t, wantParents, parents, "chapter %s: commit parents", ch.Number)
		minutes, _ := strconv.Atoi(ch.Number)
		when := time.Date(2026, 1, 1, 0, minutes, 0, 0, time.UTC)
		assert.Equal(t, "tinypi course", commit.Author.Name, "chapter %s: author", ch.Number)
		assert.Equal(t, "course@tinypi.invalid", commit.Author.Email, "chapter %s: author", ch.Number)
		assert.WithinDuration(t, when, commit.Author.When, 0, "chapter %s: author time", ch.Number)
		assert.WithinDuration(t, when, commit.Committer.When, 0, "chapter %s: committer time", ch.Number)
		assert.Equal(t, "checkpoint "+ch.Number+": Chapter "+ch.Number+"\n", commit.Message, "chapter %s: message", ch.Number)

		target, err := b.Target(ch)
		require.NoError(t, err)
		if diff := cmp.Diff(stringTree(target), commitFiles(t, commit)); diff != "" {
			t.Errorf("chapter %s: commit tree differs from Target (-want +got):\n%s", ch.Number, diff)
		}
		gitTreeMatches(t, target, commit.TreeHash.String())
		if ch.Rebuild() {
			prev = h.Target(ch)
		}
	}
	if _, ok := mustTarget(t, b, c.Chapters[2])["zero.go"]; !ok {
		t.Errorf("chapter 02's target lacks chapter 00's zero.go")
	}
	if _, ok := mustTarget(t, b, c.Chapters[1])["zero.go"]; ok {
		t.Errorf("chapter 01's target has chapter 00's zero.go, which needs chapter 02")
	}

	head, err := repo.Head()
	require.NoError(t, err, "HEAD")
	assert.Equal(t, prev, head.Hash().String(), "HEAD is the last chapter's commit")
	for _, ch := range c.Chapters {
		tag, err := repo.Tag("checkpoint-" + ch.Number)
		if assert.NoError(t, err, "tag checkpoint-%s", ch.Number) {
			assert.Equal(t, h.Target(ch), tag.Hash().String(), "tag checkpoint-%s is chapter %s's commit", ch.Number, ch.Number)
		}
	}
}

func mustTarget(t *testing.T, b *tree.Builder, ch *manifest.Chapter) tree.Tree {
	t.Helper()
	tr, err := b.Target(ch)
	require.NoError(t, err)
	return tr
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
	require.NoError(t, err)
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
	require.NoError(t, err)
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
	require.NoError(t, tr.Write(dir))
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
