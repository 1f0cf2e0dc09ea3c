package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/learn-tinypi/course/internal/tree"
)

// TestPlaceErrorMessages checks that a failure of writing a tree says, in the output language,
// what failed and on which path, once, without the English error chain in Chinese.
func TestPlaceErrorMessages(t *testing.T) {
	retry := func(d string) string { return "course practice 07 " + d }
	moveErr := &tree.PlaceError{Op: tree.OpMove, Path: "/w/p/go.mod",
		Err: &os.LinkError{Op: "rename", Old: "/w/p/.course-staging-1/go.mod", New: "/w/p/go.mod", Err: syscall.EEXIST}}
	writeErr := &tree.PlaceError{Op: tree.OpWrite, Path: "/w/p/agentloop.go",
		Err: &os.PathError{Op: "open", Path: "/w/p/.course-staging-1/agentloop.go", Err: syscall.ENOSPC}}
	tests := []struct {
		lang, id string
		err      error
		want     string
		usage    bool
	}{
		{"zh", "place.practice", moveErr, "创建练习目录 /w/p 失败：无法把 /w/p/go.mod 放到位（那里已经有同名的文件或目录）。已有的文件都没有改动。", false},
		{"en", "place.practice", moveErr, "creating the practice directory /w/p failed: cannot move /w/p/go.mod into place (a file or directory of that name is already there). None of the files that were there was changed.", false},
		{"zh", "place.checkout", writeErr, "把代码树写到 /w/p 失败：无法写入文件 /w/p/agentloop.go（磁盘空间不足）。已有的文件都没有改动。", false},
		{"zh", "place.practice", fmt.Errorf("x: %w", context.Canceled), "创建练习目录 /w/p 失败：被中断。已有的文件都没有改动。", false},
		{"zh", "place.practice", &tree.PlaceError{Op: tree.OpCreate, Path: "/w/f/p", Err: &os.PathError{Op: "mkdir", Path: "/w/f/p", Err: syscall.ENOTDIR}},
			"无法使用目录 /w/p：路径中有一段是文件，不是目录。什么也没写。换一个目录，例如：\n  course practice 07 /w/p-2", true},
		{"en", "place.checkout", &tree.PlaceError{Op: tree.OpCreate, Path: "/w/p", Err: &os.PathError{Op: "mkdir", Path: "/w/p", Err: syscall.EACCES}},
			"cannot use the directory /w/p: permission denied. Nothing was written. Use another directory, for example:\n  course practice 07 /w/p-2", true},
	}
	for _, tt := range tests {
		a := &app{p: printer{lang: tt.lang}}
		err := a.placeError(tt.id, "/w/p", tt.err, retry)
		var usage *usageError
		if got := errors.As(err, &usage); got != tt.usage {
			t.Errorf("%s %v: usage error = %v, want %v", tt.lang, tt.err, got, tt.usage)
		}
		if err.Error() != tt.want {
			t.Errorf("%s %v:\n got %q\nwant %q", tt.lang, tt.err, err.Error(), tt.want)
		}
	}
}
