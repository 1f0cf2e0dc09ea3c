package main

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
)

// loadHeadroom bounds what resuming a session may add to the memory the process uses, as a
// multiple of the session file's size.
const loadHeadroom = 1.9

// boundHeapWhileLoading sets the Go memory limit to the memory the process uses now plus
// loadHeadroom times size, the length of the session file about to be resumed, until the function
// it returns is called (once the log is loaded and the agent holds its transcript).
//
// Why: loading decodes every line of the log, and the garbage that decoding leaves is several
// times the file. At the collector's default pace (GOGC=100) the heap grows to twice what it last
// found live before it collects again, so a resume of 100,000 turns (a 177 MiB file, 1.8 times
// as much live at the end) reached 2.7 times the file. Under the limit the collector runs more
// often near the end of the load instead, up to a third more CPU for that resume (internal/perf's
// BenchmarkResume, docs/performance.md), and the heap stays under 2 times the file. A log that
// needs more than the limit (one of very short lines) still loads: the runtime caps the CPU the
// collector spends on a limit it cannot meet and lets the heap grow past it. A lower limit the
// user set (GOMEMLIMIT) stays in force.
func boundHeapWhileLoading(size int64) (restore func()) {
	previous := debug.SetMemoryLimit(-1)
	bound := float64(memoryInUse()) + loadHeadroom*float64(size)
	if bound >= float64(previous) || bound >= math.MaxInt64 {
		return func() {}
	}
	debug.SetMemoryLimit(int64(bound))
	return func() { debug.SetMemoryLimit(previous) }
}

// memoryInUse is the memory the Go memory limit counts (everything the runtime holds from the
// operating system but what it has released) less the free pages it has not released yet: the
// load may fill those, so they count as part of its headroom, not of what the process uses.
func memoryInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64() - s[2].Value.Uint64()
}
