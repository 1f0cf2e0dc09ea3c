package perf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/learn-tinypi/course/internal/sessionlog/logtest"
	"github.com/learn-tinypi/course/solutions/tinypi"
)

// Resuming a long session (issue 39): `tinypi -resume FILE` of a log of 100,000 and 400,000 turns
// (1× and 4×; logtest's turns, 9 events and ~1.86 kB each, so 177 and 716 MiB), next to
// decoding the same file's JSON lines with encoding/json and nothing else, the floor the aim is
// measured against: resume within 3× of it, its peak heap under 2× the file.

// resumeCases are the sizes resume and decoding are measured at.
var resumeCases = []int{100000, 400000}

// writeResumeLog writes a log of turns turns into dir a turn at a time, so that writing it holds
// one turn in memory, not the log, and returns its path and size.
func writeResumeLog(b *testing.B, dir string, turns int) (string, int64) {
	return writeResumeLogT(b, dir, turns)
}

func writeResumeLogT(b testing.TB, dir string, turns int) (string, int64) {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("resume-%d.jsonl", turns))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var turn bytes.Buffer
	w.WriteString(logtest.Header + "\n")
	for i := range turns {
		turn.Reset()
		logtest.Turn(&turn, i)
		w.Write(turn.Bytes())
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	info, err := f.Stat()
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		b.Fatal(err)
	}
	return path, info.Size()
}

// resume is what `tinypi -resume path` does before it takes its first prompt, in the order
// cmd/tinypi does it (session.go resumeSession, agent.go runSession): load the session (check
// every event, repair a crash, attach the writer), count the usage of the messages already logged
// (newUsageMeter), then build the runtime, whose agent's transcript is the log's messages. The
// lock file and the torn-line check read nothing of a file that ends with its newline. As
// cmd/tinypi does, the Go memory limit is the memory in use plus 1.9 times the file from before
// the load until the runtime is built (boundHeapWhileLoading). It returns the runtime and the
// usage counted; close the runtime, then its session.
func resume(path, workspace string) (*tinypi.Runtime, int, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	restore := boundHeapWhileLoading(info.Size())
	defer restore()
	s, _, err := tinypi.LoadSession(path, tinypi.SessionOptions{})
	if err != nil {
		return nil, 0, err
	}
	output := 0
	s.EachEvent(func(e tinypi.SessionEvent) bool {
		if a, ok := e.Message.(tinypi.AssistantMessage); ok && e.Type == tinypi.EventAssistantMessage {
			output += a.Usage.Output
		}
		return true
	})
	rt, err := tinypi.NewRuntime(tinypi.RuntimeOptions{Model: tinypi.NewScriptedModel(), Workspace: workspace,
		ContextRoot: workspace, SystemPrompt: "bench", Session: s})
	if err != nil {
		s.Close()
		return nil, 0, err
	}
	return rt, output, nil
}

// boundHeapWhileLoading is cmd/tinypi's (heapbound.go), which a test cannot import from a main
// package: the Go memory limit is the memory in use (not counting free pages not yet released)
// plus 1.9 times size until restore is called, unless a lower limit is set.
func boundHeapWhileLoading(size int64) (restore func()) {
	previous := debug.SetMemoryLimit(-1)
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	bound := float64(s[0].Value.Uint64()-s[1].Value.Uint64()-s[2].Value.Uint64()) + 1.9*float64(size)
	if bound >= float64(previous) || bound >= math.MaxInt64 {
		return func() {}
	}
	debug.SetMemoryLimit(int64(bound))
	return func() { debug.SetMemoryLimit(previous) }
}

// reportFile reports the file's size (file-MB), the highest heap above the start (peak-MB), their
// ratio (peak/file) and the CPU time per operation (cpu-ms/op), which on a shared machine says
// more than wall time.
func reportFile(b *testing.B, size int64, peak uint64, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(size)/(1<<20), "file-MB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
	b.ReportMetric(float64(peak)/float64(size), "peak/file")
}

// BenchmarkResume: `tinypi -resume` of a log of n turns up to the agent's state being ready (see
// resume). It must stay within 3× of BenchmarkDecodeJSONL on the same file, with a peak heap
// under 2× the file.
func BenchmarkResume(b *testing.B) {
	for _, turns := range resumeCases {
		b.Run(fmt.Sprintf("turns=%dk", turns/1000), func(b *testing.B) {
			dir := b.TempDir()
			path, size := writeResumeLog(b, dir, turns)
			workspace := filepath.Join(dir, "ws")
			if err := os.Mkdir(workspace, 0o755); err != nil {
				b.Fatal(err)
			}
			var peak uint64
			var cpu time.Duration
			b.ReportAllocs()
			for b.Loop() {
				p := startHeapPeak()
				start := cpuTime()
				rt, output, err := resume(path, workspace)
				cpu += cpuTime() - start
				peak = max(peak, p.end())
				if err != nil {
					b.Fatal(err)
				}
				// State is a deep copy: it is taken once the measuring is over.
				if n := len(rt.Agent.State().Messages); n != 4*turns || output != 70*turns {
					b.Fatalf("resumed %d messages with %d output tokens, want %d and %d", n, output, 4*turns, 70*turns)
				}
				if err := rt.Close(); err != nil {
					b.Fatal(err)
				}
				if err := rt.Session.Close(); err != nil {
					b.Fatal(err)
				}
			}
			reportFile(b, size, peak, cpu)
		})
	}
}

// jsonLine is a generic event line: its envelope, and its data as whatever JSON it holds.
type jsonLine struct {
	Type            string `json:"type"`
	Seq             int    `json:"seq"`
	Time            string `json:"time"`
	Data            any    `json:"data"`
	SourceEventSeqs []int  `json:"sourceEventSeqs"`
}

// BenchmarkDecodeJSONL: the floor of BenchmarkResume, the same file's lines read with a
// bufio.Scanner and each decoded with json.Unmarshal into a generic jsonLine, which is then
// dropped: no checks, no types, nothing kept.
func BenchmarkDecodeJSONL(b *testing.B) {
	for _, turns := range resumeCases {
		decodeJSONLCase(b, turns)
	}
}

func decodeJSONLCase(b *testing.B, turns int) {
	b.Run(fmt.Sprintf("turns=%dk", turns/1000), func(b *testing.B) {
		path, size := writeResumeLog(b, b.TempDir(), turns)
		var peak uint64
		var cpu time.Duration
		b.ReportAllocs()
		for b.Loop() {
			p := startHeapPeak()
			start := cpuTime()
			lines, err := decodeJSONL(path)
			cpu += cpuTime() - start
			peak = max(peak, p.end())
			if err != nil {
				b.Fatal(err)
			}
			if want := 1 + logtest.EventsPerTurn*turns; lines != want {
				b.Fatalf("decoded %d lines, want %d", lines, want)
			}
		}
		reportFile(b, size, peak, cpu)
	})
}

// decodeJSONL decodes every line of the file at path and returns how many there are.
func decodeJSONL(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	n := 0
	for sc.Scan() {
		var l jsonLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return n, fmt.Errorf("line %d: %w", n+1, err)
		}
		n++
	}
	return n, sc.Err()
}
