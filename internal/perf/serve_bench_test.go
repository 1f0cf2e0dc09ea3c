package perf

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/serve"
	"github.com/learn-tinypi/course/internal/sessionlog/logtest"
)

// The kit's session log reader, as `course serve` uses it (issue 25): logs of N turns of the
// shape the issue measured, 9 events a turn (turn/start, user/message, model/request,
// assistant/message with one tool call, tool/call, tool/result, model/request, the answer,
// turn/end), and a log of 50 MB of such turns.

// writeTurnsLog writes a log of turns turns (or, when turns is 0, of as many turns as make
// minBytes) into dir and returns its path, size and number of turns.
func writeTurnsLog(b *testing.B, dir string, turns int, minBytes int) (string, int64, int) {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("turns-%d-%d.jsonl", turns, minBytes))
	size, n, err := logtest.WriteFile(path, turns, minBytes)
	if err != nil {
		b.Fatal(err)
	}
	return path, size, n
}

// heapPeak samples the bytes of live and unswept heap objects while it runs, and reports the
// highest sample above the level it started at. Sampling every 100 µs can miss a peak shorter
// than that; what it measures is the order of magnitude, which is what the aim is about.
type heapPeak struct {
	stop chan struct{}
	done sync.WaitGroup
	base uint64
	peak uint64
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapPeak() *heapPeak {
	runtime.GC()
	p := &heapPeak{stop: make(chan struct{}), base: heapObjects()}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		tick := time.NewTicker(100 * time.Microsecond)
		defer tick.Stop()
		for {
			if v := heapObjects(); v > p.peak {
				p.peak = v
			}
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// end stops sampling and returns the peak above the start.
func (p *heapPeak) end() uint64 {
	close(p.stop)
	p.done.Wait()
	if v := heapObjects(); v > p.peak {
		p.peak = v
	}
	if p.peak < p.base {
		return 0
	}
	return p.peak - p.base
}

// cpuTime is the CPU time the process has used so far, user and system: what one read costs
// whatever else the machine runs, which wall time does not say on a shared machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// logCases are the logs the reader is measured on.
var logCases = []struct {
	name     string
	turns    int
	minBytes int
}{
	{"turns=1000", 1000, 0},
	{"turns=4000", 4000, 0},
	{"turns=16000", 16000, 0},
	{"50MB", 0, 50 << 20},
}

// BenchmarkLogReader: what `course serve LOG --check` does, reading the log and building the
// view of its first call, the page's first screen. Besides time and allocations it reports the
// log's size (log-MB), the highest heap above the start during one read (peak-MB) and their
// ratio (peak/log).
func BenchmarkLogReader(b *testing.B) {
	for _, c := range logCases {
		b.Run(c.name, func(b *testing.B) {
			path, size, _ := writeTurnsLog(b, b.TempDir(), c.turns, c.minBytes)
			opts := serve.Options{Log: path, Lang: i18n.EN}
			var peak uint64
			var cpu time.Duration
			b.ReportAllocs()
			for b.Loop() {
				p := startHeapPeak()
				start := cpuTime()
				v, problem, err := serve.Load(context.Background(), opts, -1)
				cpu += cpuTime() - start
				peak = max(peak, p.end())
				if err != nil || problem != nil || v.Call == nil {
					b.Fatalf("the view of %s: %+v %v", path, problem, err)
				}
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(size)/(1<<20), "log-MB")
			b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
			b.ReportMetric(float64(peak)/float64(size), "peak/log")
		})
	}
}

// BenchmarkLogFirstScreen: a browser's first request to `course serve` on a 50 MB log, from a
// handler that has not read the log yet: the page with everything its first screen draws. It
// reports the page's size (page-KB) and the highest heap above the start (peak-MB).
func BenchmarkLogFirstScreen(b *testing.B) {
	path, size, _ := writeTurnsLog(b, b.TempDir(), 0, 50<<20)
	opts := serve.Options{Log: path, Lang: i18n.EN}
	var peak uint64
	var page int
	var cpu time.Duration
	b.ReportAllocs()
	for b.Loop() {
		p := startHeapPeak()
		start := cpuTime()
		h, err := serve.NewHandler(opts)
		if err != nil {
			b.Fatal(err)
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		h.ServeHTTP(rec, req)
		cpu += cpuTime() - start
		peak = max(peak, p.end())
		if rec.Code != http.StatusOK {
			b.Fatalf("GET / answered %d", rec.Code)
		}
		page = rec.Body.Len()
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(size)/(1<<20), "log-MB")
	b.ReportMetric(float64(page)/(1<<10), "page-KB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
}
