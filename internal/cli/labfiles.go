package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/learn-tinypi/course/internal/labsrc"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// labFile is one file of a lab in a practice directory: its content and the lab's bodies in it.
type labFile struct {
	path   string // slash-separated, relative to the practice directory
	name   string // on disk
	src    []byte
	mode   fs.FileMode
	bodies []string // the learner's bodies of the lab's regions, in order
}

// readLabFiles reads the practice files holding lab's regions and the lab's bodies in each. A
// file whose markers are missing or damaged gives a *labsrc.MarkerError naming the file.
func readLabFiles(root string, b *tree.Builder, ch *manifest.Chapter, lab *manifest.Lab) ([]labFile, error) {
	paths, err := b.LabFiles(ch, lab)
	if err != nil {
		return nil, err
	}
	files := make([]labFile, 0, len(paths))
	for _, p := range paths {
		name := filepath.Join(root, filepath.FromSlash(p))
		info, err := os.Stat(name)
		if err != nil {
			return nil, err
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		bodies, err := labsrc.Bodies(src, lab.ID)
		if err != nil {
			return nil, withFile(err, p)
		}
		files = append(files, labFile{path: p, name: name, src: src, mode: info.Mode().Perm(), bodies: bodies})
	}
	return files, nil
}

// withFile sets the file name of a *labsrc.MarkerError.
func withFile(err error, file string) error {
	var me *labsrc.MarkerError
	if errors.As(err, &me) {
		named := *me
		named.File = file
		return &named
	}
	return err
}

// labFileError turns a marker problem into the failure the learner reads; other errors pass.
func (a *app) labFileError(err error) error {
	var me *labsrc.MarkerError
	if errors.As(err, &me) {
		// Built from the error's fields rather than its English text: every message the learner
		// reads exists in both languages.
		if me.Detail == "" {
			return errors.New(a.p.text("err.markers.gone", me.File, me.Lab))
		}
		return errors.New(a.p.text("err.markers.damaged", me.File, me.Lab, me.Detail))
	}
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New(a.p.text("err.lab.file", pathOf(err), err))
	}
	return err
}

// pathOf returns the path of a *fs.PathError, or "" when err is not one.
func pathOf(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path
	}
	return ""
}
