//go:build !linux

package tree

// moveNoReplace renames oldpath to newpath and fails when newpath exists.
func moveNoReplace(oldpath, newpath string) error {
	return moveNoReplaceFallback(oldpath, newpath)
}
