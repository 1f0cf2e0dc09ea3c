package tree

import (
	"bytes"
	"crypto/sha256"
	"slices"
	"sync"
)

// fileMemo remembers, for the life of a Builder, the work on a Go file that depends only on its
// bytes and the stubbing asked for: the region check of a reference file (readGoFile) and the
// stubbed, import-rewritten, gofmt-ed file (goFile). The trees of a course share most of their
// files unchanged from chapter to chapter, and gofmt is most of what building a tree costs:
// `course practice` builds every chapter's target for the course history, and dev check builds
// each chapter's trees many times, so without it the same file was formatted dozens of times.
//
// A key is a hash of everything the result depends on, so a Builder whose content changes
// under it computes afresh instead of answering from the memo. Nothing is ever dropped: every
// tree dev check builds of the whole course (targets, parents, starters, stages, mutants) left
// about 3,700 files, 50 MB, in it (2026-12-07), which a course of this size can afford. Safe for concurrent use: dev
// check builds trees from several goroutines.
type fileMemo struct {
	mu      sync.Mutex
	checked map[[sha256.Size]byte]checkedFile
	made    map[[sha256.Size]byte]madeFile
}

// checkedFile is the region check's result for one reference file: the chapters its chapter
// regions name, sorted and without repeats, or the check's error.
type checkedFile struct {
	chapters []string
	err      error
}

// madeFile is goFile's result for one key.
type madeFile struct {
	src []byte
	err error
}

func newFileMemo() *fileMemo {
	return &fileMemo{checked: map[[sha256.Size]byte]checkedFile{}, made: map[[sha256.Size]byte]madeFile{}}
}

// check returns the result of the region check of reference file name with content src,
// running check on the first call for that content.
func (m *fileMemo) check(name string, src []byte, check func() ([]string, error)) ([]string, error) {
	key := memoKey("check", name, src)
	m.mu.Lock()
	r, ok := m.checked[key]
	m.mu.Unlock()
	if !ok {
		chapters, err := check()
		r = checkedFile{chapters: chapters, err: err}
		m.mu.Lock()
		m.checked[key] = r
		m.mu.Unlock()
	}
	return r.chapters, r.err
}

// make returns build's result for a file, computed once for each key; the caller gets its own
// copy of the bytes, which trees may change.
func (m *fileMemo) make(key [sha256.Size]byte, build func() ([]byte, error)) ([]byte, error) {
	m.mu.Lock()
	r, ok := m.made[key]
	m.mu.Unlock()
	if !ok {
		src, err := build()
		r = madeFile{src: bytes.Clone(src), err: err}
		m.mu.Lock()
		m.made[key] = r
		m.mu.Unlock()
	}
	return bytes.Clone(r.src), r.err
}

// memoKey hashes parts, each preceded by its length so that no two lists of parts collide.
func memoKey(parts ...any) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	writeLen := func(l int) {
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
	}
	write := func(b []byte) {
		writeLen(len(b))
		h.Write(b)
	}
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			write([]byte(p))
		case []byte:
			write(p)
		case []string:
			writeLen(len(p))
			for _, s := range p {
				write([]byte(s))
			}
		case map[string]string:
			keys := make([]string, 0, len(p))
			for k := range p {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			writeLen(len(keys))
			for _, k := range keys {
				write([]byte(k))
				write([]byte(p[k]))
			}
		default:
			panic("tree: memoKey: unsupported part")
		}
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}
