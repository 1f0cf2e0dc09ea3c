package gotest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// writeModule writes a module named example.com/m with the given files into a temp dir.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/m\n\ngo 1.26\n"
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	return dir
}

const mixedTests = `package m

import "testing"

func TestPass(t *testing.T) { t.Log("fine") }

func TestFatal(t *testing.T) {
	t.Fatalf("want %d, got %d\nsecond line", 1, 2)
}

func TestSub(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("bad", func(t *testing.T) { t.Error("Lab 7.1 收集模型终态 尚未实现") })
}

func TestParent(t *testing.T) {
	t.Run("quiet", func(t *testing.T) { t.Log("sub log") })
	t.Error("parent failed")
}

func TestSkip(t *testing.T) { t.Skip("later") }

// TestPanic comes last: a panic ends the test binary.
func TestPanic(t *testing.T) { panic("kaboom") }
`

// summary is the part of a TestResult the tests compare.
type summary struct {
	Name                    string
	Passed, Failed, Skipped bool
	FirstFailure            string
}

func summarize(tests []TestResult) []summary {
	var out []summary
	for _, r := range tests {
		out = append(out, summary{r.Name, r.Passed, r.Failed, r.Skipped, r.FirstFailure})
	}
	return out
}

func TestRunMixed(t *testing.T) {
	dir := writeModule(t, map[string]string{"m_test.go": mixedTests})
	report, err := Run(context.Background(), Options{Dir: dir, Env: OfflineEnv()})
	require.NoError(t, err)
	want := []summary{
		{Name: "TestPass", Passed: true},
		{Name: "TestFatal", Failed: true, FirstFailure: "want 1, got 2"},
		{Name: "TestSub", Failed: true, FirstFailure: "Lab 7.1 收集模型终态 尚未实现"},
		{Name: "TestParent", Failed: true, FirstFailure: "parent failed"},
		{Name: "TestSkip", Skipped: true},
		{Name: "TestPanic", Failed: true, FirstFailure: "panic: kaboom"},
	}
	if diff := cmp.Diff(want, summarize(report.Tests)); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}
	assert.False(t, report.BuildFailed, "BuildFailed")
	assert.Equal(t, 1, report.ExitCode, "ExitCode")
	if report.OK() {
		t.Error("OK() = true for a run with failures")
	}
	sub, _ := report.Test("TestSub")
	if !containsLine(sub.Output, "--- FAIL: TestSub/bad") {
		t.Errorf("TestSub output lacks its subtest's failure:\n%s", strings.Join(sub.Output, "\n"))
	}
	fatal, _ := report.Test("TestFatal")
	if !containsLine(fatal.Output, "second line") {
		t.Errorf("TestFatal output lacks the message's second line:\n%s", strings.Join(fatal.Output, "\n"))
	}
	parent, _ := report.Test("TestParent")
	if n := countLines(parent.Output, "sub log"); n != 1 {
		t.Errorf("TestParent output has its subtest's log %d times, want once:\n%s", n, strings.Join(parent.Output, "\n"))
	}
	var failed []string
	for _, r := range report.Failed() {
		failed = append(failed, r.Name)
	}
	if diff := cmp.Diff([]string{"TestFatal", "TestSub", "TestParent", "TestPanic"}, failed); diff != "" {
		t.Errorf("Failed() (-want +got):\n%s", diff)
	}
	if _, ok := report.Test("TestMissing"); ok {
		t.Error("Test(TestMissing) found a test that does not exist")
	}
}

func countLines(lines []string, part string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, part) {
			n++
		}
	}
	return n
}

func containsLine(lines []string, part string) bool {
	for _, l := range lines {
		if strings.Contains(l, part) {
			return true
		}
	}
	return false
}

func TestRunPatternAndRace(t *testing.T) {
	dir := writeModule(t, map[string]string{"m_test.go": mixedTests})
	report, err := Run(context.Background(), Options{Dir: dir, Run: "^TestPass$", Race: true, Env: OfflineEnv()})
	require.NoError(t, err)
	if diff := cmp.Diff([]summary{{Name: "TestPass", Passed: true}}, summarize(report.Tests)); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}
	if !report.OK() {
		t.Errorf("OK() = false for a passing run: %+v", report)
	}
}

func TestRunReportsADataRace(t *testing.T) {
	dir := writeModule(t, map[string]string{"m_test.go": `package m

import "testing"

var shared int

func write() { shared = 1 }

func TestRace(t *testing.T) {
	done := make(chan bool)
	go func() { write(); done <- true }()
	_ = shared
	<-done
}
`})
	report, err := Run(context.Background(), Options{Dir: dir, Race: true, Env: OfflineEnv()})
	require.NoError(t, err)
	require.Len(t, report.Tests, 1)
	got := report.Tests[0]
	assert.True(t, got.Failed, "Failed")
	// Whichever access the detector met first, the summary is the same.
	assert.Equal(t, "data race: read in example.com/m.TestRace (m_test.go), write in example.com/m.write (m_test.go)", got.FirstFailure)
}

// gcflagsTest fails unless the binary was built with the -gcflags it names: go records the
// flags of a build in the binary's build information.
const gcflagsTest = `package m

import (
	"runtime/debug"
	"testing"
)

func TestFlags(t *testing.T) {
	info, _ := debug.ReadBuildInfo()
	for _, s := range info.Settings {
		if s.Key == "-gcflags" {
			t.Logf("-gcflags=%s", s.Value)
			if s.Value != "-N -l" {
				t.Fatalf("-gcflags=%q", s.Value)
			}
			return
		}
	}
	t.Fatal("no -gcflags")
}
`

func TestRunUnoptimized(t *testing.T) {
	dir := writeModule(t, map[string]string{"m_test.go": gcflagsTest})
	for _, unoptimized := range []bool{true, false} {
		report, err := Run(context.Background(), Options{Dir: dir, Unoptimized: unoptimized, Fresh: true, Env: OfflineEnv()})
		require.NoError(t, err)
		if report.OK() != unoptimized {
			t.Errorf("Unoptimized %v: the test binary's -gcflags check passed %v, want %v\n%+v", unoptimized, report.OK(), unoptimized, report.Tests)
		}
	}
}

// TestRunLearnerView: by default a run passes the tag under which a checkpoint tree keeps the
// earlier chapters' focused tests, and with LearnerView it does not, as a learner's plain
// `go test` does not. Vet (Options.Vet) sees the same files as the tests.
func TestRunLearnerView(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"current_test.go": "package m\n\nimport \"testing\"\n\nfunc TestCurrent(t *testing.T) {}\n",
		"earlier_test.go": "//go:build allchapters\n\npackage m\n\nimport \"testing\"\n\nfunc TestEarlier(t *testing.T) {}\n",
	})
	for _, tc := range []struct {
		learner bool
		want    []string
	}{
		{false, []string{"TestCurrent", "TestEarlier"}},
		{true, []string{"TestCurrent"}},
	} {
		report, err := Run(context.Background(), Options{Dir: dir, Vet: true, Fresh: true, LearnerView: tc.learner, Env: OfflineEnv()})
		require.NoError(t, err)
		var got []string
		for _, r := range report.Tests {
			got = append(got, r.Name)
		}
		slices.Sort(got)
		if diff := cmp.Diff(tc.want, got); diff != "" || !report.OK() {
			t.Errorf("LearnerView %v: tests run (-want +got):\n%s\nreport %+v", tc.learner, diff, report)
		}
	}
}

func TestRunBuildFailure(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"m_test.go": "package m\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) { var n int = \"s\"; _ = n }\n",
	})
	report, err := Run(context.Background(), Options{Dir: dir, Env: OfflineEnv()})
	require.NoError(t, err)
	assert.True(t, report.BuildFailed, "BuildFailed")
	assert.NotZero(t, report.ExitCode, "ExitCode")
	assert.Empty(t, report.Tests, "Tests")
	assert.Contains(t, report.BuildOutput, `cannot use "s"`, "BuildOutput has the compiler's message")
}

func TestRunSetupFailure(t *testing.T) {
	dir := t.TempDir() // no go.mod
	report, err := Run(context.Background(), Options{Dir: dir, Env: OfflineEnv()})
	require.NoError(t, err)
	assert.True(t, report.BuildFailed, "BuildFailed")
	assert.Contains(t, report.BuildOutput, "go.mod", "BuildOutput says a word about go.mod")
}

func TestRunVet(t *testing.T) {
	// A self-assignment compiles and passes go test's own vet subset, but not go vet.
	dir := writeModule(t, map[string]string{
		"m.go":      "package m\n\nfunc F(n int) int { n = n; return n }\n",
		"m_test.go": "package m\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) { F(1) }\n",
	})
	report, err := Run(context.Background(), Options{Dir: dir, Vet: true, Env: OfflineEnv()})
	require.NoError(t, err)
	assert.True(t, report.VetFailed, "VetFailed")
	assert.Contains(t, report.VetOutput, "self-assignment", "VetOutput")
	if tr, ok := report.Test("TestF"); !ok || !tr.Passed {
		t.Errorf("TestF = %+v, %v; want it run and passed", tr, ok)
	}
	if report.OK() {
		t.Error("OK() = true although vet failed")
	}
}

func TestRunNoGo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Run(context.Background(), Options{Dir: t.TempDir()})
	require.ErrorIs(t, err, ErrNoGo)
	// The message says plainly what is missing and how to install it.
	assert.ErrorContains(t, err, "not found on PATH")
	assert.ErrorContains(t, err, "go.dev/dl")
}

func TestRunCanceled(t *testing.T) {
	dir := writeModule(t, map[string]string{"m_test.go": mixedTests})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Options{Dir: dir})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestFirstFailure(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"fatal", []string{"=== RUN   TestX", "    x_test.go:12: boom", "--- FAIL: TestX (0.00s)"}, "boom"},
		{"subtest", []string{"=== RUN   TestX/a", "        x_test.go:3: inner: x", "    --- FAIL: TestX/a"}, "inner: x"},
		{"first of two", []string{"    x_test.go:1: one", "    x_test.go:2: two"}, "one"},
		{"panic", []string{"--- FAIL: TestX (0.00s)", "panic: oh no [recovered, repanicked]", "goroutine 1"}, "panic: oh no"},
		{"panic brackets kept", []string{"panic: list [a b]"}, "panic: list [a b]"},
		{"nothing", []string{"=== RUN   TestX", "--- FAIL: TestX (0.00s)"}, ""},
		{"data race", []string{
			"=== RUN   TestX",
			"==================",
			"WARNING: DATA RACE",
			"Write at 0x00c000094188 by goroutine 9:",
			"  sync/atomic.AddInt32()",
			"      /usr/local/go/src/sync/atomic/race.s:1 +0x1",
			"  tinypi.(*Agent).Abort()",
			"      /home/l/tinypi/agent.go:412 +0x33",
			"  tinypi.TestLab9_4_X()",
			"      /home/l/tinypi/ch09_agent_test.go:7 +0x33",
			"",
			"Previous read at 0x00c000094188 by main goroutine:",
			"  tinypi.(*Agent).run.func1()",
			"      /home/l/tinypi/agent.go:300 +0x104",
			"",
			"Goroutine 9 (running) created at:",
			"  tinypi.TestLab9_4_X()",
			"      /home/l/tinypi/ch09_agent_test.go:6 +0xf9",
			"==================",
			"--- FAIL: TestX (0.00s)",
		}, "data race: read in tinypi.(*Agent).run.func1 (agent.go), write in tinypi.(*Agent).Abort (agent.go)"},
		{"a message before the race comes first", []string{"    x_test.go:1: one", "WARNING: DATA RACE", "Read at 0x1 by goroutine 2:"}, "one"},
		{"a race report without accesses", []string{"WARNING: DATA RACE", "=================="}, "data race"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, FirstFailure(tt.lines))
		})
	}
}

func TestRunFailureOutsideTests(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"m_test.go": "package m\n\nimport \"testing\"\n\nfunc init() { panic(\"bad init\") }\n\nfunc TestX(t *testing.T) {}\n",
	})
	report, err := Run(context.Background(), Options{Dir: dir, Env: OfflineEnv()})
	require.NoError(t, err)
	assert.False(t, report.BuildFailed, "BuildFailed")
	assert.NotZero(t, report.ExitCode, "ExitCode")
	assert.False(t, report.OK(), "OK()")
	assert.Contains(t, report.BuildOutput, "panic: bad init", "BuildOutput has the init panic")
}

func TestRunTimeout(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"m_test.go": "package m\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestQuick(t *testing.T) {}\n\nfunc TestHang(t *testing.T) { time.Sleep(time.Minute) }\n",
	})
	report, err := Run(context.Background(), Options{Dir: dir, Timeout: time.Second, Env: OfflineEnv()})
	require.NoError(t, err)
	hang, ok := report.Test("TestHang")
	if !ok || !hang.Failed || !strings.HasPrefix(hang.FirstFailure, "panic: test timed out") {
		t.Errorf("TestHang = %+v, %v; want failed with the timeout panic", hang, ok)
	}
	if quick, _ := report.Test("TestQuick"); !quick.Passed {
		t.Errorf("TestQuick = %+v, want passed", quick)
	}
}

// TestRunFreshSkipsTheCache runs a fake go that records its arguments: Fresh must add
// -count=1 (a cached result is no proof), and a plain run must not.
func TestRunFreshSkipsTheCache(t *testing.T) {
	bin := t.TempDir()
	argsFile := filepath.Join(t.TempDir(), "args")
	script := "#!/bin/sh\necho \"$@\" >> " + argsFile + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "go"), []byte(script), 0o755))
	t.Setenv("PATH", bin)
	for _, fresh := range []bool{false, true} {
		_, err := Run(context.Background(), Options{Dir: t.TempDir(), Run: "^TestX$", Fresh: fresh})
		require.NoError(t, err, "Run(Fresh=%v)", fresh)
	}
	data, err := os.ReadFile(argsFile)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 2, "fake go runs")
	assert.NotContains(t, lines[0], "-count=1", "plain run")
	assert.Contains(t, lines[1], "-count=1", "fresh run")
}

// TestRunCountsRepeatedRuns: with -count=N, Runs counts every run of each top-level test and keeps
// the first failing run's message, while Tests folds the runs into one result.
func TestRunCountsRepeatedRuns(t *testing.T) {
	dir := writeModule(t, map[string]string{"m_test.go": `package m

import "testing"

var runs int

func TestSteady(t *testing.T) { t.Run("sub", func(t *testing.T) {}) }

// TestEveryThird fails on its third run, as a flaky test fails now and then.
func TestEveryThird(t *testing.T) {
	runs++
	t.Run("sub", func(t *testing.T) {
		if runs%3 == 0 {
			t.Errorf("run %d went wrong", runs)
		}
	})
}
`})
	report, err := Run(context.Background(), Options{Dir: dir, Env: OfflineEnv(), Count: 4})
	require.NoError(t, err)
	want := map[string]RunCount{
		"TestSteady":     {Passed: 4},
		"TestEveryThird": {Passed: 3, Failed: 1, FirstFailure: "run 3 went wrong"},
	}
	if diff := cmp.Diff(want, report.Runs); diff != "" {
		t.Errorf("Runs (-want +got):\n%s", diff)
	}
}

// TestRunExitedBinary: a test counts as passed only when it reported its own pass. A binary that
// exits in a test (even with status 0, whose "ok" go test credits to the running test) leaves that
// test unfinished and failed, and the report names it with the binary's last output.
func TestRunExitedBinary(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		imports  string
		wantLast string
	}{
		{"syscall.Exit(0)", `fmt.Println("leaving early"); syscall.Exit(0)`, `"fmt"; "syscall"`, "leaving early"},
		{"os.Exit(1)", `fmt.Println("bye"); os.Exit(1)`, `"fmt"; "os"`, "bye"},
		{"log.Fatal", `log.Fatal("cannot open config")`, `"log"`, "cannot open config"},
		{"panic in a goroutine", `done := make(chan int); go func() { panic("boom in goroutine") }(); <-done`, ``, "panic: boom in goroutine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "package m\n\nimport (\"testing\"; " + tt.imports + ")\n\n" +
				"func TestFirst(t *testing.T) {}\n\n" +
				"func TestDies(t *testing.T) { " + tt.body + " }\n\n" +
				"func TestNeverRuns(t *testing.T) {}\n"
			dir := writeModule(t, map[string]string{"m_test.go": src})
			report, err := Run(context.Background(), Options{Dir: dir, Env: OfflineEnv(), Fresh: true})
			require.NoError(t, err)
			assert.False(t, report.OK(), "OK() for a binary that exited in a test")
			first, _ := report.Test("TestFirst")
			if !first.Passed || first.Unfinished {
				t.Errorf("TestFirst = %+v, want passed", first)
			}
			dies, ok := report.Test("TestDies")
			if !ok || dies.Passed || !dies.Failed || !dies.Unfinished {
				t.Errorf("TestDies = %+v, %v; want failed and unfinished", dies, ok)
			}
			_, ok = report.Test("TestNeverRuns")
			assert.False(t, ok, "TestNeverRuns is in the report; it never started")
			exit, ok := report.Exited()
			require.True(t, ok, "Exited() found the package")
			assert.Equal(t, "TestDies", exit.Test, "Exit.Test")
			if !containsLine(exit.LastOutput, tt.wantLast) {
				t.Errorf("Exit.LastOutput = %q, want a line with %q", exit.LastOutput, tt.wantLast)
			}
			if containsLine(exit.LastOutput, "ok  \t") || containsLine(exit.LastOutput, "FAIL\t") {
				t.Errorf("Exit.LastOutput = %q keeps go test's summary line", exit.LastOutput)
			}
		})
	}
}

func TestDifference(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"diff header", []string{
			"=== RUN   TestX",
			"    x_test.go:12: events (-want +got):",
			"          []string{",
			"          \t\"a\",",
			"        - \t\"tool_end\",",
			"        + \t\"turn_end\",",
			"        + \t\"more\",",
			"          }",
			"--- FAIL: TestX (0.00s)",
		}, []string{`- "tool_end",`, `+ "turn_end",`}},
		{"not a header", []string{"    x_test.go:1: want 1, got 2", "        - x"}, nil},
		{"stops at the next message", []string{"    x_test.go:1: a (-want +got):", "    x_test.go:2: b", "        - x"}, nil},
		{"panic first", []string{"panic: x:", "- y"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Difference(tt.lines)); diff != "" {
				t.Errorf("Difference (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBinaryReportsAsRun: a test binary built by Compile and run with Options.Binary reports the
// same tests, first failures and exit code as go test does on the package; a package that does
// not compile is a build failure.
func TestBinaryReportsAsRun(t *testing.T) {
	dir := writeModule(t, map[string]string{"m_test.go": mixedTests})
	bin := filepath.Join(t.TempDir(), "m.test")
	built, err := Compile(context.Background(), Options{Dir: dir, Env: OfflineEnv(), SkipTestVet: true, Unoptimized: true}, bin)
	require.NoError(t, err)
	require.False(t, built.BuildFailed, "BuildFailed: %s", built.BuildOutput)
	test2json, err := Test2JSON(context.Background(), OfflineEnv())
	require.NoError(t, err)
	require.Equal(t, "test2json", filepath.Base(test2json))
	for _, pattern := range []string{"", "^TestPass$"} {
		viaGo, err := Run(context.Background(), Options{Dir: dir, Env: OfflineEnv(), Run: pattern, Fresh: true})
		require.NoError(t, err)
		viaBinary, err := Run(context.Background(), Options{Dir: dir, Env: OfflineEnv(), Run: pattern, Fresh: true, Binary: bin, Timeout: time.Minute})
		require.NoError(t, err)
		if diff := cmp.Diff(summarize(viaGo.Tests), summarize(viaBinary.Tests)); diff != "" {
			t.Errorf("-run %q: tests (-go test +binary):\n%s", pattern, diff)
		}
		if viaBinary.ExitCode != viaGo.ExitCode || viaBinary.BuildFailed {
			t.Errorf("-run %q: binary's exit code %d, build failed %v; go test's exit code %d", pattern, viaBinary.ExitCode, viaBinary.BuildFailed, viaGo.ExitCode)
		}
		// The same through test2json started directly (Options.Test2JSON).
		direct, err := Run(context.Background(), Options{Dir: dir, Env: OfflineEnv(), Run: pattern, Fresh: true, Binary: bin, Test2JSON: test2json, Timeout: time.Minute})
		require.NoError(t, err)
		if diff := cmp.Diff(summarize(viaGo.Tests), summarize(direct.Tests)); diff != "" {
			t.Errorf("-run %q, test2json %s: tests (-go test +binary):\n%s", pattern, test2json, diff)
		}
		if direct.ExitCode != viaGo.ExitCode || direct.BuildFailed {
			t.Errorf("-run %q, test2json %s: exit code %d, build failed %v; go test's exit code %d", pattern, test2json, direct.ExitCode, direct.BuildFailed, viaGo.ExitCode)
		}
	}

	broken := writeModule(t, map[string]string{"m_test.go": "package m\n\nfunc broken() int { return \"x\" }\n"})
	report, err := Compile(context.Background(), Options{Dir: broken, Env: OfflineEnv()}, filepath.Join(t.TempDir(), "b.test"))
	require.NoError(t, err)
	if !report.BuildFailed || !strings.Contains(report.BuildOutput, "cannot use") {
		t.Errorf("a package that does not compile: BuildFailed %v, output %q", report.BuildFailed, report.BuildOutput)
	}
}

// TestCompileEachRunsAsGoTestOfEveryPackage: the binaries of a module's packages, run one after
// the other, report what `go test ./...` reports: every package's tests under its import path,
// each run in its package's directory, and the failure's exit code. Two packages of one name
// (m and cmd/m) get binaries of their own; a package without tests gets none.
func TestCompileEachRunsAsGoTestOfEveryPackage(t *testing.T) {
	dir := writeModule(t, map[string]string{"m_test.go": mixedTests})
	for name, text := range map[string]string{
		"cmd/m/main.go":           "package main\n\nfunc main() {}\n",
		"cmd/m/main_test.go":      "package main\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestHere(t *testing.T) {\n\tif _, err := os.Stat(\"testdata/here.txt\"); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n",
		"cmd/m/testdata/here.txt": "x\n",
		"notests/n.go":            "package notests\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	opts := Options{Dir: dir, Env: OfflineEnv(), Packages: []string{"./..."}, Unoptimized: true}
	bins, built, err := CompileEach(context.Background(), opts, filepath.Join(t.TempDir(), "bin"))
	require.NoError(t, err)
	require.False(t, built.BuildFailed, "BuildFailed: %s", built.BuildOutput)
	var paths []string
	for _, b := range bins {
		paths = append(paths, b.ImportPath)
	}
	if diff := cmp.Diff([]string{"example.com/m", "example.com/m/cmd/m"}, paths); diff != "" {
		t.Errorf("binaries (-want +got):\n%s", diff)
	}
	report, err := RunEach(context.Background(), Options{Fresh: true, Env: OfflineEnv(), Timeout: time.Minute}, bins)
	require.NoError(t, err)
	got := map[string]string{}
	for _, r := range report.Tests {
		got[r.Package+" "+r.Name] = fmt.Sprintf("passed=%v failed=%v", r.Passed, r.Failed)
	}
	want := map[string]string{
		"example.com/m TestPass":       "passed=true failed=false",
		"example.com/m TestFatal":      "passed=false failed=true",
		"example.com/m TestSub":        "passed=false failed=true",
		"example.com/m TestParent":     "passed=false failed=true",
		"example.com/m TestSkip":       "passed=false failed=false",
		"example.com/m TestPanic":      "passed=false failed=true",
		"example.com/m/cmd/m TestHere": "passed=true failed=false",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}
	if report.ExitCode == 0 || report.BuildFailed {
		t.Errorf("exit code %d, build failed %v; want a failing run that built", report.ExitCode, report.BuildFailed)
	}

	broken := writeModule(t, map[string]string{"m_test.go": "package m\n\nfunc broken() int { return \"x\" }\n"})
	bins, built, err = CompileEach(context.Background(), Options{Dir: broken, Env: OfflineEnv(), Packages: []string{"./..."}}, filepath.Join(t.TempDir(), "bin"))
	require.NoError(t, err)
	if !built.BuildFailed || !strings.Contains(built.BuildOutput, "cannot use") || len(bins) != 0 {
		t.Errorf("a package that does not compile: BuildFailed %v, %d binaries, output %q", built.BuildFailed, len(bins), built.BuildOutput)
	}
}

// TestOfflineEnvKeepsTrimpath: OfflineEnv's GOFLAGS pins -mod=readonly whatever the environment
// says, and keeps -trimpath when the environment has it (make test sets it), nothing else.
func TestOfflineEnvKeepsTrimpath(t *testing.T) {
	for _, tt := range []struct{ env, want string }{
		{"", "GOFLAGS=-mod=readonly"},
		{"-mod=vendor", "GOFLAGS=-mod=readonly"},
		{"-trimpath", "GOFLAGS=-mod=readonly -trimpath"},
		{"-mod=mod -trimpath -race", "GOFLAGS=-mod=readonly -trimpath"},
	} {
		t.Setenv("GOFLAGS", tt.env)
		if got := OfflineEnv()[0]; got != tt.want {
			t.Errorf("GOFLAGS=%q: OfflineEnv()[0] = %q, want %q", tt.env, got, tt.want)
		}
	}
}
