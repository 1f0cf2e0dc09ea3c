//go:build unix

package gotest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeGo puts a go command that runs script (sh) first on PATH for the test.
func fakeGo(t *testing.T, script string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go"), []byte("#!/bin/sh\n"+script+"\n"), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// A build the machine failed is reported as the machine's failure, not the code's.
func TestEnvironmentFailuresAreNamed(t *testing.T) {
	for name, script := range map[string]string{
		"no GOROOT": `echo "go: cannot find GOROOT directory: /nonexistent/go" >&2; exit 2`,
		"disk full": `echo '{"Action":"start","Package":"p"}'
echo "# p [p.test]" >&2
echo "compile: writing output: write /tmp/b001/_pkg_.a: no space left on device" >&2
echo '{"Action":"fail","Package":"p","FailedBuild":"p [p.test]"}'
exit 1`,
		"compiler killed": `echo "# p" >&2; echo "compile: signal: killed" >&2; exit 1`,
	} {
		t.Run(name, func(t *testing.T) {
			fakeGo(t, script)
			report, err := Run(context.Background(), Options{Dir: t.TempDir()})
			require.NoError(t, err)
			assert.True(t, report.BuildFailed)
			assert.NotEmpty(t, report.Environment)
		})
	}
	// A build the code failed is not.
	fakeGo(t, `echo "# p" >&2; echo "./a.go:3:2: undefined: foo" >&2; exit 1`)
	report, err := Run(context.Background(), Options{Dir: t.TempDir()})
	require.NoError(t, err)
	assert.True(t, report.BuildFailed)
	assert.Empty(t, report.Environment)
}

// The go command itself killed (it runs none of the tested code) is the environment's failure.
func TestKilledGoIsAnEnvironmentError(t *testing.T) {
	fakeGo(t, `kill -9 $$`)
	_, err := Run(context.Background(), Options{Dir: t.TempDir()})
	var env *EnvironmentError
	require.True(t, errors.As(err, &env), "%v", err)
	assert.Contains(t, env.Cause, "the go command (go test) was ended by a signal (signal: killed)")
}

func TestEnvironmentCause(t *testing.T) {
	for output, want := range map[string]string{
		"# p\ncompile: writing output: no space left on device\n":                             "compile: writing output: no space left on device",
		"go: cannot find GOROOT directory: /x\n":                                              "go: cannot find GOROOT directory: /x",
		"go: failed to initialize build cache at /c: mkdir /c: permission denied\n":           "go: failed to initialize build cache at /c: mkdir /c: permission denied",
		"open /tmp/x: disk quota exceeded":                                                    "open /tmp/x: disk quota exceeded",
		"/usr/local/go/pkg/tool/linux_amd64/link: signal: killed":                             "/usr/local/go/pkg/tool/linux_amd64/link: signal: killed",
		"fork/exec /usr/local/go/pkg/tool/linux_amd64/compile: cannot allocate memory":        "fork/exec /usr/local/go/pkg/tool/linux_amd64/compile: cannot allocate memory",
		"# p\n./agentloop.go:12:2: undefined: step\n":                                         "",
		"panic: runtime error: index out of range [3] with length 3\n":                        "",
		"--- FAIL: TestLab7_1 (0.00s)\n    x_test.go:3: the file was not found: no such file": "",
	} {
		assert.Equal(t, want, EnvironmentCause(output), "%q", output)
	}
}
