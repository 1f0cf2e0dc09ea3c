package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/tree"
)

// placeMessages are the texts about writing a tree into a learner's directory (course practice,
// course checkpoint --checkout).
var placeMessages = i18n.Catalog{
	"err.dir.empty": {
		ZH: "目录名是空的（%s）。空名字不代表当前目录：为了不覆盖你的文件，什么也没写。给出一个新目录，例如：\n  %s",
		EN: "the directory name is empty (%s). An empty name does not mean the current directory: nothing was written so that none of your files is overwritten. Name a new directory, for example:\n  %s",
	},
	"err.dir.badpath": {
		ZH: "无法使用目录 %s：%s。什么也没写。换一个目录，例如：\n  %s",
		EN: "cannot use the directory %s: %s. Nothing was written. Use another directory, for example:\n  %s",
	},
	"place.practice": {
		ZH: "创建练习目录 %s 失败：%s。已有的文件都没有改动。",
		EN: "creating the practice directory %s failed: %s. None of the files that were there was changed.",
	},
	"place.checkout": {
		ZH: "把代码树写到 %s 失败：%s。已有的文件都没有改动。",
		EN: "writing the tree into %s failed: %s. None of the files that were there was changed.",
	},
	"place.op.check":     {ZH: "无法使用 %s（%s）", EN: "cannot use %s (%s)"},
	"place.op.create":    {ZH: "无法创建目录 %s（%s）", EN: "cannot create the directory %s (%s)"},
	"place.op.write":     {ZH: "无法写入文件 %s（%s）", EN: "cannot write the file %s (%s)"},
	"place.op.prepare":   {ZH: "无法在 %s 中完成准备（%s）", EN: "cannot finish preparing %s (%s)"},
	"place.op.move":      {ZH: "无法把 %s 放到位（%s）", EN: "cannot move %s into place (%s)"},
	"place.cancelled":    {ZH: "被中断", EN: "interrupted"},
	"err.interrupted":    {ZH: "已中断：正在运行的 go 命令已停止，临时文件已删除。", EN: "interrupted: the running go commands were stopped and their temporary files removed."},
	"errno.EACCES":       {ZH: "没有权限", EN: "permission denied"},
	"errno.EPERM":        {ZH: "不允许这个操作", EN: "operation not permitted"},
	"errno.ENOSPC":       {ZH: "磁盘空间不足", EN: "no space left on the device"},
	"errno.EROFS":        {ZH: "文件系统是只读的", EN: "read-only file system"},
	"errno.EEXIST":       {ZH: "那里已经有同名的文件或目录", EN: "a file or directory of that name is already there"},
	"errno.ENOTDIR":      {ZH: "路径中有一段是文件，不是目录", EN: "a part of the path is a file, not a directory"},
	"errno.ENOENT":       {ZH: "路径不存在", EN: "no such file or directory"},
	"errno.ENAMETOOLONG": {ZH: "名字太长", EN: "the name is too long"},
	"errno.EDQUOT":       {ZH: "超出磁盘配额", EN: "disk quota exceeded"},
	"errno.ENOTEMPTY":    {ZH: "目录不是空的", EN: "the directory is not empty"},
	"errno.notempty":     {ZH: "目录不是空的", EN: "the directory is not empty"},
	"errno.notdir":       {ZH: "它是一个文件，不是目录", EN: "it is a file, not a directory"},
}

// errnoIDs names the system errors the learner gets in their own language.
var errnoIDs = map[syscall.Errno]string{
	syscall.EACCES:       "errno.EACCES",
	syscall.EPERM:        "errno.EPERM",
	syscall.ENOSPC:       "errno.ENOSPC",
	syscall.EROFS:        "errno.EROFS",
	syscall.EEXIST:       "errno.EEXIST",
	syscall.ENOTDIR:      "errno.ENOTDIR",
	syscall.ENOENT:       "errno.ENOENT",
	syscall.ENAMETOOLONG: "errno.ENAMETOOLONG",
	syscall.EDQUOT:       "errno.EDQUOT",
	syscall.ENOTEMPTY:    "errno.ENOTEMPTY",
}

// reason says in the output language why err happened: the system error's meaning when there is
// one, else err's own text.
func (a *app) reason(err error) string {
	var errno syscall.Errno
	switch {
	case errors.Is(err, tree.ErrNotEmpty):
		return a.p.text("errno.notempty")
	case errors.Is(err, tree.ErrNotDir):
		return a.p.text("errno.notdir")
	case errors.Is(err, context.Canceled):
		return a.p.text("place.cancelled")
	case errors.As(err, &errno):
		if id, ok := errnoIDs[errno]; ok {
			return a.p.text(id)
		}
		return errno.Error()
	}
	return err.Error()
}

// placeStep says in the output language which step of writing a tree failed, on which path, and
// why.
func (a *app) placeStep(err error) string {
	var pe *tree.PlaceError
	if !errors.As(err, &pe) {
		return a.reason(err)
	}
	id := "place.op.check"
	switch pe.Op {
	case tree.OpCreate:
		id = "place.op.create"
	case tree.OpWrite:
		id = "place.op.write"
	case tree.OpPrepare:
		// The caller's own step (practice's git repository): the learner gets the step and
		// the underlying reason.
		id = "place.op.prepare"
	case tree.OpMove:
		id = "place.op.move"
	}
	return a.p.text(id, pe.Path, a.reason(pe.Err))
}

// placeError turns an error of writing a tree into dir into the learner's message: bad input
// (the directory cannot be used at all) is a usage error with a retry command; anything else is
// a failure whose message (id: place.practice or place.checkout) names what failed and where.
func (a *app) placeError(id, dir string, err error, retry func(string) string) error {
	var pe *tree.PlaceError
	if errors.As(err, &pe) && pe.Op == tree.OpCheck {
		return a.dirUsage(dir, pe.Err, retry)
	}
	if errors.As(err, &pe) && pe.Op == tree.OpCreate && isBadPath(pe.Err) {
		return a.dirUsage(dir, pe.Err, retry)
	}
	return errors.New(a.p.text(id, dir, a.placeStep(err)))
}

// isBadPath reports whether err, from creating the directory (or its parents, or the staging
// directory inside it), means the learner must name another directory: the path cannot name a
// directory, or the learner may not create anything there. A full disk is not bad input.
func isBadPath(err error) bool {
	for _, errno := range []syscall.Errno{syscall.ENOTDIR, syscall.ENAMETOOLONG, syscall.ELOOP,
		syscall.EINVAL, syscall.EACCES, syscall.EPERM, syscall.EROFS} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// dirUsage is the usage error for a directory that cannot take a tree.
func (a *app) dirUsage(dir string, err error, retry func(string) string) error {
	switch {
	case errors.Is(err, tree.ErrNoDir):
		suggestion := "./mydir"
		if _, err := os.Lstat(suggestion); err == nil {
			suggestion = a.freshDir(suggestion)
		}
		return a.usagef("err.dir.empty", `""`, retry(suggestion))
	case errors.Is(err, tree.ErrNotEmpty):
		return a.usagef("err.nonempty", dir, retry(a.freshDir(dir)))
	case errors.Is(err, tree.ErrNotDir):
		return a.usagef("err.notdir", dir, retry(a.freshDir(dir)))
	}
	return a.usagef("err.dir.badpath", dir, a.reason(err), retry(a.freshDir(dir)))
}

// requireEmptyDir refuses, before anything is computed or written, a directory name that is
// empty, and a directory that exists and is not empty, is a file or cannot be read. The packages
// that write trees check again; this check is for a clear message, which ends with retry (the
// command to run again) applied to a directory that does not exist yet.
func (a *app) requireEmptyDir(dir string, retry func(dir string) string) error {
	if dir == "" {
		return a.dirUsage(dir, tree.ErrNoDir, retry)
	}
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return a.dirUsage(dir, err, retry)
	case !info.IsDir():
		return a.dirUsage(dir, tree.ErrNotDir, retry)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case err != nil:
		return a.dirUsage(dir, err, retry)
	case len(entries) > 0:
		return a.dirUsage(dir, tree.ErrNotEmpty, retry)
	}
	return nil
}

// freshDir returns a sibling of dir that names nothing yet: dir with the first suffix -2, -3, ...
// that is free. A directory named by "." or ".." (or an empty name, which is the current
// directory's place) gets a sibling named after the real directory: "." in /home/me/work
// suggests ../work-2. The root, with no name, suggests ./mydir.
func (a *app) freshDir(dir string) string {
	clean := filepath.Clean(dir)
	base := clean
	if b := filepath.Base(clean); b == "." || b == ".." {
		abs, err := filepath.Abs(clean)
		name := filepath.Base(abs)
		if err != nil || name == string(filepath.Separator) || name == "." {
			return "./mydir"
		}
		base = filepath.Join(clean, "..", name)
	}
	for n := 2; ; n++ {
		candidate := fmt.Sprintf("%s-%d", base, n)
		if _, err := os.Lstat(candidate); errors.Is(err, fs.ErrNotExist) || n >= 100 {
			return candidate
		}
	}
}
