package devcheck_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/learn-tinypi/course/internal/devcheck"
	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/tree"
)

// key returns the cache key of chapter number of fsys with cache and opts.
func key(t *testing.T, fsys fstest.MapFS, cache *devcheck.Cache, number string, opts devcheck.Options) string {
	t.Helper()
	b, err := tree.NewBuilder(fsys)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := b.Course().Chapter(number)
	if err != nil {
		t.Fatal(err)
	}
	k, err := cache.Key(b, ch, opts)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestCacheKeyInputs: the key of a chapter's proof changes with every input of the proof, and
// with nothing else.
func TestCacheKeyInputs(t *testing.T) {
	cache := &devcheck.Cache{Kit: "kit 1", Go: "go 1"}
	opts := devcheck.Options{FlakeRuns: flakeRuns}
	base := map[string]string{
		"01": key(t, fakeCourse(t), cache, "01", opts),
		"00": key(t, fakeCourse(t), cache, "00", opts),
	}
	if base["01"] == base["00"] {
		t.Fatal("chapters 01 and 00 have the same key")
	}
	if again := key(t, fakeCourse(t), cache, "01", opts); again != base["01"] {
		t.Errorf("the same inputs give keys %s and %s", base["01"], again)
	}

	appendTo := func(name, s string) func(fstest.MapFS) {
		return func(fsys fstest.MapFS) {
			fsys[name] = &fstest.MapFile{Data: append(bytes.Clone(fsys[name].Data), s...)}
		}
	}
	tests := []struct {
		name    string
		change  func(fstest.MapFS)
		cache   devcheck.Cache
		opts    devcheck.Options
		changed map[string]bool // chapter → whether its key must change
	}{
		{name: "teaching file", change: appendTo("solutions/tinypi/calc.go", "\n// more\n"), changed: map[string]bool{"01": true, "00": true}},
		{name: "focused tests", change: appendTo("solutions/tinypi/ch01_calc_test.go", "\n// more\n"), changed: map[string]bool{"01": true, "00": true}},
		{name: "observe chapter's file in the trees", change: appendTo("solutions/tinypi/show.go", "\n// more\n"), changed: map[string]bool{"01": true, "00": true}},
		{name: "manifest", change: appendTo("checkpoints/01-calc.yaml", "# more\n"), changed: map[string]bool{"01": true, "00": true}},
		{name: "observe chapter's manifest", change: appendTo("checkpoints/00-show.yaml", "# more\n"), changed: map[string]bool{"01": true, "00": true}},
		{name: "course.yaml", change: appendTo("checkpoints/course.yaml", "# more\n"), changed: map[string]bool{"01": true, "00": true}},
		{name: "go.mod", change: appendTo("go.mod", "// more\n"), changed: map[string]bool{"01": true, "00": true}},
		{name: "go.sum", change: appendTo("go.sum", "\n"), changed: map[string]bool{"01": true, "00": true}},
		{name: "signature file", change: appendTo("checkpoints/signatures/01.json", "\n"), changed: map[string]bool{"01": true, "00": false}},
		{name: "card", change: appendTo("labs/01/1.2.en.md", "More.\n"), changed: map[string]bool{"01": true, "00": false}},
		{name: "card removed", change: func(fsys fstest.MapFS) { delete(fsys, "labs/01/1.1.md") }, changed: map[string]bool{"01": true, "00": false}},
		{name: "file beside the cards", change: func(fsys fstest.MapFS) { fsys["labs/01/notes.md"] = &fstest.MapFile{Data: []byte("x")} }, changed: map[string]bool{"01": true, "00": false}},
		{name: "chapter text", change: appendTo("docs/01-calc.md", "More.\n"), changed: map[string]bool{"01": true, "00": false}},
		{name: "other chapter's card", change: appendTo("labs/00/0.1.md", "More.\n"), changed: map[string]bool{"01": false, "00": true}},
		{name: "other chapter's text", change: appendTo("docs/00-show.md", "More.\n"), changed: map[string]bool{"01": false, "00": true}},
		{name: "file of no tree", change: func(fsys fstest.MapFS) { fsys["docs/notes.md"] = &fstest.MapFile{Data: []byte("x")} }, changed: map[string]bool{"01": false, "00": false}},
		{name: "kit", cache: devcheck.Cache{Kit: "kit 2", Go: "go 1"}, changed: map[string]bool{"01": true, "00": true}},
		{name: "go", cache: devcheck.Cache{Kit: "kit 1", Go: "go 2"}, changed: map[string]bool{"01": true, "00": true}},
		{name: "flake runs", opts: devcheck.Options{FlakeRuns: flakeRuns + 1}, changed: map[string]bool{"01": true, "00": true}},
		{name: "cache folder", cache: devcheck.Cache{Dir: "elsewhere", Kit: "kit 1", Go: "go 1"}, changed: map[string]bool{"01": false, "00": false}},
		{name: "parallel", opts: devcheck.Options{FlakeRuns: flakeRuns, Parallel: 7}, changed: map[string]bool{"01": false, "00": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fakeCourse(t)
			if tt.change != nil {
				tt.change(fsys)
			}
			c := *cache
			if tt.cache != (devcheck.Cache{}) {
				c = tt.cache
			}
			o := opts
			if tt.opts.FlakeRuns != 0 {
				o = tt.opts
			}
			for number, want := range tt.changed {
				if got := key(t, fsys, &c, number, o) != base[number]; got != want {
					t.Errorf("chapter %s: key changed = %v, want %v", number, got, want)
				}
			}
		})
	}
}

// runCached runs dev check over chapter 01 of fsys with cache and force.
func runCached(t testing.TB, fsys fstest.MapFS, cache *devcheck.Cache, force bool, chapters ...string) (*devcheck.Result, string, error) {
	t.Helper()
	b, err := tree.NewBuilder(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := devcheck.Run(context.Background(), b, devcheck.Options{
		Chapters: chapters, Parallel: 4, Out: &out, FlakeRuns: flakeRuns, Cache: cache, Force: force,
	})
	return res, out.String(), err
}

// entries lists the files of the cache folder.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	list, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
	}
	return names
}

// TestRunCache: a chapter that passed is stored, and a second run with nothing changed takes
// it from the cache without running go (there is none on PATH); a changed input, a corrupt
// entry or Force make the run prove the chapter again (and fail here, for want of go).
func TestRunCache(t *testing.T) {
	fsys := fakeCourse(t)
	dir := filepath.Join(t.TempDir(), "cache")
	cache := &devcheck.Cache{Dir: dir, Kit: "kit", Go: "go"}
	first, out, err := runCached(t, fsys, cache, false, "1")
	if err != nil {
		t.Fatal(err)
	}
	if !first.OK() || first.Chapters[0].Cached || first.Chapters[0].CacheErr != nil || strings.Contains(out, "(cached)") {
		t.Fatalf("first run: OK = %v, cached = %v, cache error = %v; output:\n%s",
			first.OK(), first.Chapters[0].Cached, first.Chapters[0].CacheErr, out)
	}
	stored := entries(t, dir)
	if len(stored) != 1 || !strings.HasPrefix(stored[0], "01-") {
		t.Fatalf("cache holds %v, want one entry of chapter 01", stored)
	}

	t.Setenv("PATH", "") // from here on, a chapter can only pass from the cache
	second, out, err := runCached(t, fsys, cache, false, "1")
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	if !second.Chapters[0].Cached || !second.OK() {
		t.Errorf("second run: cached = %v, OK = %v, want both", second.Chapters[0].Cached, second.OK())
	}
	if diff := cmp.Diff(outcomes(first), outcomes(second)); diff != "" {
		t.Errorf("cached checks differ from the proven ones (-first +second):\n%s", diff)
	}
	if !second.Chapters[0].ProvenAt.Equal(first.Chapters[0].ProvenAt) {
		t.Errorf("cached proof made at %v, want %v", second.Chapters[0].ProvenAt, first.Chapters[0].ProvenAt)
	}
	if !strings.Contains(out, "01 ✓ mutant minus: compiles and lab 1.1 catches it (cached)\n") ||
		!strings.HasSuffix(out, "18 checks, 0 failed\n") {
		t.Errorf("second run's output lacks a cached check line or the summary:\n%s", out)
	}

	if _, _, err := runCached(t, fsys, cache, true, "1"); !errors.Is(err, gotest.ErrNoGo) {
		t.Errorf("Force: err = %v, want %v (a proof, not the cache)", err, gotest.ErrNoGo)
	}

	changed := fakeCourse(t)
	changed["docs/01-calc.md"] = &fstest.MapFile{Data: []byte("# 计算！\n")}
	if _, _, err := runCached(t, changed, cache, false, "1"); !errors.Is(err, gotest.ErrNoGo) {
		t.Errorf("changed chapter text: err = %v, want %v (a proof, not the cache)", err, gotest.ErrNoGo)
	}

	path := filepath.Join(dir, stored[0])
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"empty":           "",
		"truncated":       string(good[:len(good)/2]),
		"not json":        "{{{",
		"other key":       strings.Replace(string(good), `"key": "`, `"key": "0`, 1),
		"other chapter":   strings.Replace(string(good), `"chapter": "01"`, `"chapter": "00"`, 1),
		"renamed check":   strings.Replace(string(good), "catches it", "catches them", 1),
		"unknown field":   strings.Replace(string(good), `"format"`, `"ok": false, "format"`, 1),
		"two documents":   string(good) + string(good),
		"older format":    strings.Replace(string(good), `"format": 1`, `"format": 0`, 1),
		"a check missing": strings.Replace(string(good), `"name": "content:`, `"nome": "content:`, 1),
	} {
		if data == string(good) {
			t.Fatalf("%s: the corruption changed nothing", name)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := runCached(t, fsys, cache, false, "1"); !errors.Is(err, gotest.ErrNoGo) {
			t.Errorf("%s entry: err = %v, want %v (a proof, not the cache)", name, err, gotest.ErrNoGo)
		}
	}
}

// TestRunCacheKeepsNoFailure: a chapter with a failed check is not stored, so the next run
// proves it again.
func TestRunCacheKeepsNoFailure(t *testing.T) {
	fsys := fakeCourse(t)
	delete(fsys, "labs/00/0.1.en.md")
	dir := filepath.Join(t.TempDir(), "cache")
	cache := &devcheck.Cache{Dir: dir, Kit: "kit", Go: "go"}
	res, out, err := runCached(t, fsys, cache, false, "0")
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() || res.Chapters[0].CacheErr != nil {
		t.Fatalf("OK = %v, cache error = %v; want a failed check and no cache error; output:\n%s", res.OK(), res.Chapters[0].CacheErr, out)
	}
	if stored := entries(t, dir); len(stored) > 0 {
		t.Errorf("cache holds %v after a failed proof, want nothing", stored)
	}
}

func TestDefaultCacheDir(t *testing.T) {
	env := map[string]string{devcheck.CacheEnv: "/somewhere/cache"}
	if dir, err := devcheck.DefaultCacheDir(func(k string) string { return env[k] }); err != nil || dir != "/somewhere/cache" {
		t.Errorf("with %s set: %q, %v; want /somewhere/cache", devcheck.CacheEnv, dir, err)
	}
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	t.Setenv("HOME", "/home/author")
	dir, err := devcheck.DefaultCacheDir(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(base, "tinypi-course", "devcheck"); dir != want {
		t.Errorf("DefaultCacheDir = %q, want %q", dir, want)
	}
}

func TestKitIdentityIsStable(t *testing.T) {
	a, err := devcheck.KitIdentity()
	if err != nil {
		t.Fatal(err)
	}
	b, err := devcheck.KitIdentity()
	if err != nil {
		t.Fatal(err)
	}
	if a == "" || a != b {
		t.Errorf("KitIdentity = %q, then %q; want one non-empty identity", a, b)
	}
}

// benchmarkDevCheck runs dev check over chapter 01 of the fake course, b.N times, in a cache;
// force proves it every time, otherwise the first proof is stored and taken from the cache after.
func benchmarkDevCheck(b *testing.B, force bool) {
	fsys := fakeCourse(b)
	cache := &devcheck.Cache{Dir: b.TempDir(), Kit: "bench", Go: "go"}
	if !force {
		if res, out, err := runCached(b, fsys, cache, false, "1"); err != nil || !res.OK() {
			b.Fatalf("priming the cache: %v\n%s", err, out)
		}
	}
	for b.Loop() {
		res, out, err := runCached(b, fsys, cache, force, "1")
		if err != nil || !res.OK() || res.Chapters[0].Cached == force {
			b.Fatalf("err = %v, cached = %v; output:\n%s", err, res != nil && res.Chapters[0].Cached, out)
		}
	}
}

// BenchmarkDevCheckCold proves the fake course's chapter 01 from scratch every time (Force), as
// the first `course dev check` after a change does.
func BenchmarkDevCheckCold(b *testing.B) { benchmarkDevCheck(b, true) }

// BenchmarkDevCheckCached takes the fake course's chapter 01 from the cache, as a second
// `course dev check` with nothing changed does.
func BenchmarkDevCheckCached(b *testing.B) { benchmarkDevCheck(b, false) }
