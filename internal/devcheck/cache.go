package devcheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/modfile"

	"github.com/learn-tinypi/course/internal/atomicfile"
	"github.com/learn-tinypi/course/internal/cards"
	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/heldout"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/signature"
	"github.com/learn-tinypi/course/internal/tree"
)

// CacheEnv is the environment variable that names the folder of the proof cache, instead of
// DefaultCacheDir's folder under the user's cache directory.
const CacheEnv = "COURSE_DEVCHECK_CACHE"

// cacheFormat is the version of the key and of the entries. Bump it whenever the meaning of
// either changes: no older entry will then match.
const cacheFormat = 1

// kitModule is the module path of the kit, whose source KitIdentity hashes.
const kitModule = "github.com/learn-tinypi/course"

// Cache keeps the proofs of chapters that passed every check, as the go command keeps the
// results of tests that passed. A proof is stored under a key that hashes everything it depends
// on (Cache.Key): when none of it has changed, Run takes the chapter's checks from the cache
// instead of proving them again. A failed proof is never stored, and an entry that cannot be
// read, or does not match its chapter's checks, is a miss.
type Cache struct {
	// Dir is the folder of the entries (DefaultCacheDir). It is created when the first proof is
	// stored.
	Dir string
	// Kit identifies the code of the kit that proves (KitIdentity): a proof made by other code
	// is not taken.
	Kit string
	// Go describes the go command and the environment the proofs' go commands see. Empty means
	// Run asks `go env` for it once.
	Go string
}

// DefaultCacheDir returns the folder of the proof cache: $COURSE_DEVCHECK_CACHE when it is set
// (getenv reads the environment), otherwise tinypi-course/devcheck in the user's cache directory
// (os.UserCacheDir).
func DefaultCacheDir(getenv func(string) string) (string, error) {
	if dir := getenv(CacheEnv); dir != "" {
		return dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding a folder for the dev check cache (set %s to choose one): %w", CacheEnv, err)
	}
	return filepath.Join(base, "tinypi-course", "devcheck"), nil
}

// BuiltFrom is the checkout the running binary was built from, when the build says so
// (`-ldflags -X github.com/learn-tinypi/course/internal/devcheck.BuiltFrom=DIR`, as make check
// does): a build with -trimpath cannot find its source through its own file names, and
// KitIdentity then hashes the whole executable, whose embedded content changes with every card.
// It is set by the linker only, never at run time.
var BuiltFrom string

// KitIdentity identifies the code of the running kit, the code that proves. When the kit runs
// from the checkout it was built in (`go run ./cmd/course`), it is a hash of the kit's own source
// there (go.mod, go.sum, the root package, internal/ and cmd/, test files excepted), so that a
// change to the course content alone, which the binary embeds, keeps the proofs of the chapters
// it does not touch. Otherwise (an installed binary, a build with -trimpath, or a source file
// changed after the binary was built) it is a hash of the running executable itself. A build
// with -trimpath finds its checkout through BuiltFrom instead, when the build set it.
func KitIdentity() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the running kit: %w", err)
	}
	info, err := os.Stat(exe)
	if err != nil {
		return "", fmt.Errorf("finding the running kit: %w", err)
	}
	root := ""
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		root = filepath.Dir(filepath.Dir(filepath.Dir(file))) // file is <root>/internal/devcheck/cache.go
	} else if filepath.IsAbs(BuiltFrom) {
		root = BuiltFrom
	}
	if root != "" {
		if id, ok := sourceIdentity(root, info.ModTime()); ok {
			return id, nil
		}
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("reading the running kit: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading the running kit: %w", err)
	}
	return "executable " + hex.EncodeToString(h.Sum(nil)), nil
}

// sourceIdentity hashes the kit's source under root. It fails (false) when root is not the kit's
// module, when anything cannot be read, or when a file or a folder of internal/ or cmd/ changed
// after built, the time the running binary was made: the binary may then not be made of this
// source.
func sourceIdentity(root string, built time.Time) (string, bool) {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || modfile.ModulePath(data) != kitModule {
		return "", false
	}
	h := sha256.New()
	ok := true
	add := func(p string, d fs.DirEntry) {
		info, err := d.Info()
		switch {
		case err != nil || info.ModTime().After(built):
			// A folder changes when a file is added to it or removed: the binary may hold
			// code that is gone.
			ok = false
			return
		case d.IsDir() || strings.HasSuffix(p, "_test.go"):
			return
		case !info.Mode().IsRegular():
			ok = false
			return
		}
		data, err := os.ReadFile(p)
		if err != nil {
			ok = false
			return
		}
		rel, _ := filepath.Rel(root, p)
		writeField(h, filepath.ToSlash(rel))
		writeField(h, string(data))
	}
	top, err := os.ReadDir(root)
	if err != nil {
		return "", false
	}
	for _, d := range top {
		if name := d.Name(); name == "go.mod" || name == "go.sum" || strings.HasSuffix(name, ".go") {
			add(filepath.Join(root, name), d)
		}
	}
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			add(p, d)
			return nil
		})
		if err != nil {
			return "", false
		}
	}
	if !ok {
		return "", false
	}
	return "source " + hex.EncodeToString(h.Sum(nil)), true
}

// goEnvVars are the settings of the go command that can change what a proof's go commands build
// and run: the toolchain, the platform, cgo (which -race needs) and the flags go reads.
var goEnvVars = []string{
	"GOVERSION", "GOROOT", "GOOS", "GOARCH", "GOAMD64", "GOARM", "GOARM64", "GO386", "GOPPC64",
	"GORISCV64", "GOEXPERIMENT", "GOFIPS140", "GOFLAGS", "GOTOOLCHAIN",
	"CGO_ENABLED", "CC", "CXX", "CGO_CFLAGS", "CGO_CPPFLAGS", "CGO_CXXFLAGS", "CGO_LDFLAGS",
}

// runtimeEnvVars are the environment variables, not settings of the go command, that change how
// the test binaries of a proof run.
var runtimeEnvVars = []string{"GODEBUG", "GORACE", "GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GOTRACEBACK"}

// goEnvironment describes the go command the proofs run and the environment they run it in, as
// Cache.Go: `go env` of goEnvVars with the proofs' offline settings, runtimeEnvVars and the
// number of CPUs.
func goEnvironment(ctx context.Context) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", gotest.ErrNoGo
	}
	cmd := exec.CommandContext(ctx, goBin, append([]string{"env", "-json"}, goEnvVars...)...)
	cmd.Dir = os.TempDir() // outside any module
	cmd.Env = append(os.Environ(), gotest.OfflineEnv()...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var b strings.Builder
	b.Write(out)
	for _, name := range runtimeEnvVars {
		v, set := os.LookupEnv(name)
		fmt.Fprintf(&b, "%s set=%v %q\n", name, set, v)
	}
	// The number of CPUs sets the default GOMAXPROCS, and with it how the flake check's runs
	// interleave.
	fmt.Fprintf(&b, "cpus %d\n", runtime.NumCPU())
	return b.String(), nil
}

// Key returns the key of ch's proof with opts: a hash of everything the proof depends on. That is
// the kit's code (c.Kit), the go command and its environment (c.Go), the options that change
// the proof (the flake runs), and every file of the content the proof reads, found or not:
// the reference files ch's trees are built from (tree.Builder.Sources: those of earlier chapters
// too, since every tree holds them, and with them the chapter regions later chapters have in
// them), the kit's go.mod and go.sum, course.yaml, the manifest of every chapter in ch's trees and
// of every chapter that extends one of their files, ch's signature file, its lab cards (their
// whole folders) and its text.
func (c *Cache) Key(b *tree.Builder, ch *manifest.Chapter, opts Options) (string, error) {
	sources, err := b.Sources(ch)
	if err != nil {
		return "", err
	}
	paths := slices.Clone(sources)
	paths = append(paths, path.Join(manifest.Dir, "course.yaml"), signature.Path(ch.Number))
	manifests := append(b.Course().TreeChapters(ch), ch)
	for _, p := range sources {
		// A later chapter that extends a file of ch's trees says, in its extends:, which
		// chapter regions the file may hold: the proof of ch's region checks depends on it.
		if f, ok := strings.CutPrefix(p, tree.SourceDir+"/"); ok {
			manifests = append(manifests, b.Course().Extenders(f)...)
		}
	}
	for _, owner := range manifests {
		paths = append(paths, path.Join(manifest.Dir, owner.Number+"-"+owner.Slug+".yaml"))
	}
	if ch.Doc != "" {
		paths = append(paths, ch.Doc)
	}
	var cardDirs []string
	for _, lab := range ch.Labs {
		for _, lang := range []string{"zh", "en"} {
			for _, p := range []string{lab.CardPath(lang), cards.ContentPath(lab.ID, lang)} {
				paths = append(paths, p)
				cardDirs = append(cardDirs, path.Dir(p))
			}
		}
	}
	slices.Sort(cardDirs)
	// The held-out cases and their harness (internal/heldout) are inputs of the held-out checks.
	cardDirs = append(cardDirs, heldout.Dir(ch.Number))
	paths = append(paths, heldout.HarnessPath)
	for _, dir := range slices.Compact(cardDirs) {
		err := fs.WalkDir(b.FS(), dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				paths = append(paths, p)
			}
			return err
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("chapter %s: listing %s: %w", ch.Number, dir, err)
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)

	h := sha256.New()
	writeField(h, "tinypi-course devcheck proof")
	writeField(h, strconv.Itoa(cacheFormat))
	writeField(h, c.Kit)
	writeField(h, c.Go)
	writeField(h, ch.Number)
	writeField(h, strconv.Itoa(opts.flakeRuns()))
	for _, p := range paths {
		data, err := fs.ReadFile(b.FS(), p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			writeField(h, "absent")
			writeField(h, p)
		case err != nil:
			return "", fmt.Errorf("chapter %s: %w", ch.Number, err)
		default:
			writeField(h, "file")
			writeField(h, p)
			writeField(h, string(data))
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeField writes s to h after its length, so that no two lists of fields hash alike.
func writeField(h hash.Hash, s string) {
	h.Write(binary.AppendUvarint(nil, uint64(len(s))))
	io.WriteString(h, s)
}

// entry is a stored proof: every check of a chapter passed.
type entry struct {
	Format   int          `json:"format"`
	Key      string       `json:"key"`
	Chapter  string       `json:"chapter"`
	ProvenAt time.Time    `json:"proven_at"`
	Checks   []entryCheck `json:"checks"`
}

// entryCheck is a check that passed, and the note it left.
type entryCheck struct {
	Name   string `json:"name"`
	Detail string `json:"detail,omitempty"`
}

// entryPath is the file of the entry of chapter's proof under key.
func (c *Cache) entryPath(chapter, key string) string {
	return filepath.Join(c.Dir, chapter+"-"+key+".json")
}

// load returns the stored checks of chapter's proof under key, and when they were proven. names
// are the checks the proof is made of today, in order: an entry that holds other checks, or that
// cannot be read or decoded, is a miss (false), as is no entry.
func (c *Cache) load(chapter, key string, names []string) ([]Check, time.Time, bool) {
	data, err := os.ReadFile(c.entryPath(chapter, key))
	if err != nil {
		return nil, time.Time{}, false
	}
	var e entry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || dec.More() {
		return nil, time.Time{}, false
	}
	if e.Format != cacheFormat || e.Key != key || e.Chapter != chapter || len(e.Checks) != len(names) {
		return nil, time.Time{}, false
	}
	checks := make([]Check, len(names))
	for i, ec := range e.Checks {
		if ec.Name != names[i] {
			return nil, time.Time{}, false
		}
		checks[i] = Check{Name: ec.Name, OK: true, Detail: ec.Detail}
	}
	return checks, e.ProvenAt, true
}

// store keeps r, a chapter whose every check passed, under key. The entry appears whole or not
// at all (atomicfile), in c.Dir, which is made when missing.
func (c *Cache) store(key string, r ChapterResult) error {
	e := entry{Format: cacheFormat, Key: key, Chapter: r.Number, ProvenAt: r.ProvenAt.UTC()}
	for _, check := range r.Checks {
		if !check.OK {
			return fmt.Errorf("chapter %s: check %q failed; only proofs are stored", r.Number, check.Name)
		}
		e.Checks = append(e.Checks, entryCheck{Name: check.Name, Detail: check.Detail})
	}
	data, err := json.MarshalIndent(e, "", "\t")
	if err != nil {
		return fmt.Errorf("encoding the proof of chapter %s: %w", r.Number, err)
	}
	if err := atomicfile.Write(c.entryPath(r.Number, key), append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("storing the proof of chapter %s: %w", r.Number, err)
	}
	return nil
}
