package tree

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// moveNoReplace renames oldpath to newpath and fails when newpath exists, atomically
// (renameat2 with RENAME_NOREPLACE). File systems without that flag get the fallback.
func moveNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return moveNoReplaceFallback(oldpath, newpath)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}
