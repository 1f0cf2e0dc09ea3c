// Package history builds the course history: one git commit per chapter, whose tree is the
// chapter's target. The rebuild chapters form one line, each commit the parent of the next; an
// observe chapter's commit is a child of the commit of the chapter it observes (its tree, that
// chapter's target, is the same).
//
// The history lives in memory (go-git's memory storage) and is fully determined by the course
// content: author, committer and times are fixed, so the same content gives the same hashes on
// every machine, and a practice directory can name the commits its starter comes from.
package history

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// The author and committer of every checkpoint commit.
const (
	AuthorName  = "tinypi course"
	AuthorEmail = "course@tinypi.invalid"
)

// Signature returns the course's author signature at the given time.
func Signature(when time.Time) object.Signature {
	return object.Signature{Name: AuthorName, Email: AuthorEmail, When: when}
}

// CommitTime is the fixed time of chapter ch's commit: 2026-01-01T00:00:00Z plus as many
// minutes as the chapter's number.
func CommitTime(ch *manifest.Chapter) (time.Time, error) {
	n, err := strconv.Atoi(ch.Number)
	if err != nil {
		return time.Time{}, fmt.Errorf("chapter number %q: %w", ch.Number, err)
	}
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute), nil
}

// Branch is the branch that points at the last rebuild chapter's commit.
const Branch = plumbing.ReferenceName("refs/heads/main")

// History is the course history in memory.
type History struct {
	storage *memory.Storage
	targets map[string]plumbing.Hash // chapter number → commit
	parents map[string]plumbing.Hash // chapter number → parent commit, zero for the first
}

// Build commits every rebuild chapter's target, in order, each commit the parent of the next,
// then every observe chapter's target on top of the commit of the chapter it observes. Refs:
// Branch points at the last rebuild chapter's commit and tag "checkpoint-NN" at chapter NN's
// commit.
func Build(b *tree.Builder) (*History, error) {
	h := &History{
		storage: memory.NewStorage(),
		targets: map[string]plumbing.Hash{},
		parents: map[string]plumbing.Hash{},
	}
	c := b.Course()
	var parent plumbing.Hash
	for _, ch := range c.Chapters {
		if !ch.Rebuild() {
			continue
		}
		commit, err := h.addChapter(b, ch, parent)
		if err != nil {
			return nil, err
		}
		parent = commit
	}
	for _, ch := range c.Chapters {
		if ch.Rebuild() {
			continue
		}
		observed := c.Observed(ch)
		if observed == nil {
			return nil, fmt.Errorf("history: chapter %s observes no chapter of the course", ch.Number)
		}
		if _, err := h.addChapter(b, ch, h.targets[observed.Number]); err != nil {
			return nil, err
		}
	}
	if !parent.IsZero() {
		if err := h.storage.SetReference(plumbing.NewHashReference(Branch, parent)); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		if err := h.storage.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, Branch)); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
	}
	return h, nil
}

// addChapter commits ch's target on top of parent (zero for none) and tags it.
func (h *History) addChapter(b *tree.Builder, ch *manifest.Chapter, parent plumbing.Hash) (plumbing.Hash, error) {
	t, err := b.Target(ch)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("history: chapter %s: %w", ch.Number, err)
	}
	treeHash, err := h.writeTree(t, "")
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("history: chapter %s: %w", ch.Number, err)
	}
	commit, err := h.commit(ch, treeHash, parent)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("history: chapter %s: %w", ch.Number, err)
	}
	h.parents[ch.Number] = parent
	h.targets[ch.Number] = commit
	tag := plumbing.NewTagReferenceName("checkpoint-" + ch.Number)
	if err := h.storage.SetReference(plumbing.NewHashReference(tag, commit)); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("history: %w", err)
	}
	return commit, nil
}

// writeTree stores the files of t below dir (slash-separated, "" for the root) as blobs and
// trees, and returns the hash of dir's tree.
func (h *History) writeTree(t tree.Tree, dir string) (plumbing.Hash, error) {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	var entries []object.TreeEntry
	subdirs := map[string]bool{}
	for _, p := range t.Paths() {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		if name, _, isDir := strings.Cut(rest, "/"); isDir {
			if !subdirs[name] {
				subdirs[name] = true
				sub, err := h.writeTree(t, path.Join(dir, name))
				if err != nil {
					return plumbing.ZeroHash, err
				}
				entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: sub})
			}
			continue
		}
		blob, err := h.writeBlob(t[p])
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("%s: %w", p, err)
		}
		entries = append(entries, object.TreeEntry{Name: rest, Mode: filemode.Regular, Hash: blob})
	}
	// Git orders tree entries by name, a directory's name compared as if it ended in "/".
	slices.SortFunc(entries, func(a, b object.TreeEntry) int {
		return strings.Compare(sortName(a), sortName(b))
	})
	obj := h.storage.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encoding tree %q: %w", dir, err)
	}
	return h.storage.SetEncodedObject(obj)
}

func sortName(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}

func (h *History) writeBlob(data []byte) (plumbing.Hash, error) {
	obj := h.storage.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return h.storage.SetEncodedObject(obj)
}

// commit stores chapter ch's commit of treeHash on top of parent (zero for none).
func (h *History) commit(ch *manifest.Chapter, treeHash, parent plumbing.Hash) (plumbing.Hash, error) {
	when, err := CommitTime(ch)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	sig := Signature(when)
	c := &object.Commit{
		Author:    sig,
		Committer: sig,
		Message:   fmt.Sprintf("checkpoint %s: %s\n", ch.Number, ch.TitleEN),
		TreeHash:  treeHash,
	}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	obj := h.storage.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encoding the commit: %w", err)
	}
	return h.storage.SetEncodedObject(obj)
}

// Target returns the hash (hex) of ch's target commit, "" for a chapter not in the history.
func (h *History) Target(ch *manifest.Chapter) string {
	if c, ok := h.targets[ch.Number]; ok {
		return c.String()
	}
	return ""
}

// Parent returns the hash (hex) of ch's parent commit: for a rebuild chapter the previous rebuild
// chapter's target, or "" for the first one; for an observe chapter the target of the chapter it
// observes.
func (h *History) Parent(ch *manifest.Chapter) string {
	if c, ok := h.parents[ch.Number]; ok && !c.IsZero() {
		return c.String()
	}
	return ""
}

// Repository opens the history as a go-git repository (without a work tree), for reading its
// commits, trees and refs.
func (h *History) Repository() (*git.Repository, error) {
	r, err := git.Open(h.storage, nil)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return r, nil
}
