package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// newSandbox copies src into a new temporary directory, makes it a git repository with the copy
// as its first commit, and returns the directory.
//
// What a repository holds is data, never configuration for a program on the host: the copy
// leaves out every .git (a repository's own configuration can name programs git runs, such as
// core.fsmonitor or core.hooksPath, and a .git file can point at another repository), and git
// runs in the copy with hooks and the file-system monitor turned off and none of the caller's GIT_
// variables.
func newSandbox(ctx context.Context, src string) (string, error) {
	info, err := os.Stat(src)
	if err != nil {
		return "", err
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%s is not a directory", src)
	}
	tmp, err := os.MkdirTemp("", "tinypi-sandbox-")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(tmp, "workspace")
	if err := copyTree(src, dir); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			environ = append(environ, kv)
		}
	}
	safe := []string{"-c", "core.hooksPath=" + os.DevNull, "-c", "core.fsmonitor=false"}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=tinypi", "-c", "user.email=tinypi@localhost", "commit", "-q", "--allow-empty", "--no-verify", "-m", "sandbox: the files before the agent"},
	} {
		cmd := exec.CommandContext(ctx, "git", append(safe, args...)...)
		cmd.Dir = dir
		cmd.Env = environ
		if out, err := cmd.CombinedOutput(); err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return dir, nil
}

// copyTree copies the directory src to dst, which must not exist: directories, regular files
// with their permission bits, and symbolic links as links. Every entry named .git is left out;
// anything else (a named pipe, a device) is an error.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.Name() == ".git" && rel != "." {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(target, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			return copyFile(path, target, info.Mode().Perm())
		}
		return fmt.Errorf("%s: not a regular file, directory or link", path)
	})
}

// copyFile copies the regular file src to the new file dst.
func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a pipe swapped in never blocks
	if err != nil {
		return err
	}
	defer in.Close()
	if info, err := in.Stat(); err != nil || !info.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", src)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
