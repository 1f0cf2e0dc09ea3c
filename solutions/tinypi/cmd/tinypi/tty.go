package main

import "os"

// isTerminal reports whether f is a terminal (see terminalFd).
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	return terminalFd(f.Fd())
}
