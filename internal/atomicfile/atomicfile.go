// Package atomicfile is the kit's one way of replacing a file: the new content goes to a
// temporary file in the same directory, which is then renamed over the old one. A reader, or a
// crash, never sees half a file, and a failed write keeps the old file and leaves no temporary
// file behind.
//
// The learner's package (solutions/tinypi) keeps its own standard-library version, so that the
// code a learner reads needs nothing from the kit.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces the file name with data, with the permission bits perm. The directory is created
// (with mode 0755) when it is missing.
func Write(name string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}
