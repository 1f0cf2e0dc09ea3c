//go:build linux

package main

import (
	"syscall"
	"unsafe"
)

// terminalFd reports whether fd, a character device, is a terminal: it has terminal attributes
// (/dev/null, also a character device, has none).
func terminalFd(fd uintptr) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
