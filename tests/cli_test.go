// Package tests holds the kit's end-to-end tests: testscript scripts in testdata/*.txtar that run
// the real `course` command and the real go tool, offline, in throwaway directories.
package tests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/require"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/cli"
	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"course": func() { os.Exit(cli.Main()) },
	})
}

func TestScripts(t *testing.T) {
	goEnv := hostGoEnv(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			setOfflineEnv(env, goEnv)
			course, err := exec.LookPath("course")
			if err != nil {
				return fmt.Errorf("finding the course command testscript installed: %w", err)
			}
			// COURSE_BIN holds only the course command: a script sets PATH to it to see how
			// course behaves without the go tool.
			env.Setenv("COURSE_BIN", filepath.Dir(course))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":      cmdStatus,
			"nolabanswer": cmdNoLabAnswer,
			"labanswer":   cmdLabAnswer,  // labcode_test.go
			"mistake":     cmdMistake,    // labcode_test.go
			"cmpglob":     cmdCmpGlob,    // labcode_test.go
			"labwrite":    cmdLabWrite,   // labcode_test.go
			"guidecited":  cmdGuideCited, // guide_test.go
		},
	})
}

// setOfflineEnv shares the host's caches (goEnv) with a script, so that the go commands in it
// build offline and fast, and pins everything else so that no script can reach the network.
func setOfflineEnv(env *testscript.Env, goEnv [][2]string) {
	for _, kv := range goEnv {
		env.Setenv(kv[0], kv[1])
	}
	for _, kv := range gotest.OfflineEnv() { // GOFLAGS, GOPROXY, GOWORK, GOTOOLCHAIN
		name, value, _ := strings.Cut(kv, "=")
		env.Setenv(name, value)
	}
	env.Setenv("GOSUMDB", "off")
	env.Setenv("NO_COLOR", "1")
}

// hostGoEnv returns the host's module cache, build cache and GOPATH, which scripts share.
func hostGoEnv(t *testing.T) [][2]string {
	t.Helper()
	names := []string{"GOMODCACHE", "GOCACHE", "GOPATH"}
	out, err := exec.Command("go", append([]string{"env"}, names...)...).Output()
	require.NoError(t, err, "go env")
	values := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(values) != len(names) {
		t.Fatalf("go env %v printed %q, want %d lines", names, out, len(names))
	}
	env := make([][2]string, len(names))
	for i, name := range names {
		env[i] = [2]string{name, values[i]}
	}
	return env
}

// cmdStatus runs a program and checks its exit code:
//
//	status 2 course checkpoint 99
//
// testscript's `! exec` only knows "non-zero"; the course command promises 1 for failures and 2
// for bad input, and scripts check which. Stdout and stderr are kept for later stdout/stderr checks.
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: status CODE PROGRAM [ARGS...] (no !)")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: status CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: bad exit code %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		got = exitErr.ExitCode()
	case err != nil:
		ts.Fatalf("status: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// cmdNoLabAnswer checks that no line of chapter NN's reference lab code is in the practice
// directory DIR:
//
//	nolabanswer 07 $WORK/p07
//
// A reference line is a line between `//lab:begin` and `//lab:stub` (or `//lab:end`) of a teaching
// file that appears nowhere else in the reference file, so that shared boilerplate such as
// `return nil` does not count. It fails when a practice file contains such a line, and when the
// chapter has no lab code at all (the check would prove nothing).
func cmdNoLabAnswer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: nolabanswer NN DIR")
	}
	content := course.Content()
	c, err := manifest.Load(content)
	ts.Check(err)
	ch, err := c.Chapter(args[0])
	ts.Check(err)
	dir := ts.MkAbs(args[1])
	checked := 0
	for _, file := range teachingGoFiles(ts, content, ch) {
		ref, err := fs.ReadFile(content, path.Join("solutions/tinypi", file))
		ts.Check(err)
		answer := referenceOnlyLines(ref)
		checked += len(answer)
		practice, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
		ts.Check(err)
		for _, line := range trimmedLines(practice) {
			if answer[line] {
				ts.Fatalf("%s contains reference lab code: %q", file, line)
			}
		}
	}
	if checked == 0 {
		ts.Fatalf("chapter %s has no reference lab lines to look for", ch.Number)
	}
}

// teachingGoFiles lists ch's teaching Go files relative to solutions/tinypi, with the
// directories the manifest lists (such as cmd/diagnose) expanded.
func teachingGoFiles(ts *testscript.TestScript, content fs.FS, ch *manifest.Chapter) []string {
	var files []string
	for _, entry := range ch.TeachingFiles() {
		root := path.Join("solutions/tinypi", entry)
		err := fs.WalkDir(content, root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
				files = append(files, strings.TrimPrefix(p, "solutions/tinypi/"))
			}
			return err
		})
		ts.Check(err)
	}
	return files
}

// referenceOnlyLines returns the trimmed lines inside lab regions (before any //lab:stub) that
// occur nowhere outside them.
func referenceOnlyLines(src []byte) map[string]bool {
	inside := map[string]bool{}
	outside := map[string]bool{}
	state := "out" // out, ref, stub
	for _, line := range trimmedLines(src) {
		switch {
		case strings.HasPrefix(line, "//lab:begin"):
			state = "ref"
			continue
		case line == "//lab:stub":
			state = "stub"
			continue
		case line == "//lab:end":
			state = "out"
			continue
		}
		if state == "ref" && len(line) > 8 && !strings.HasPrefix(line, "//") {
			inside[line] = true
		} else {
			outside[strings.TrimSpace(strings.TrimPrefix(line, "//"))] = true
			outside[line] = true
		}
	}
	for line := range inside {
		if outside[line] || line == "}" || line == "})" {
			delete(inside, line)
		}
	}
	return inside
}

// trimmedLines returns the non-empty lines of src without surrounding spaces.
func trimmedLines(src []byte) []string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			lines = append(lines, line)
		}
	}
	return lines
}
