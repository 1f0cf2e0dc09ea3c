package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// lookOnly is a LookPath that finds only the programs in found.
func lookOnly(found map[string]string) func(string) (string, error) {
	return func(name string) (string, error) {
		if p, ok := found[name]; ok {
			return p, nil
		}
		return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
	}
}

// wantLines fails unless every line of want is a line of got.
func wantLines(t *testing.T, got string, want ...string) {
	t.Helper()
	lines := strings.Split(got, "\n")
	for _, w := range want {
		found := false
		for _, l := range lines {
			if l == w {
				found = true
			}
		}
		if !found {
			t.Errorf("output lacks the line %q:\n%s", w, got)
		}
	}
}

func TestDoctorWithoutGo(t *testing.T) {
	code, stdout, _ := runCourse(t, map[string]string{"LANG": "en_US.UTF-8"}, lookOnly(map[string]string{"git": "/usr/bin/git"}), "doctor")
	if code != exitFailed {
		t.Errorf("exit %d, want %d", code, exitFailed)
	}
	wantLines(t, stdout,
		"[FAIL] go: the go command was not found",
		"    -> install Go 1.26 or newer: https://go.dev/dl/",
		`    -> then let your shell find it and check the version (the default install location on Linux/macOS): export PATH="/usr/local/go/bin:$PATH" && go version`,
		"[skip] module cache: skipped (fix go first)",
		"[ok]   git: /usr/bin/git",
		"[info] terminal: the output is not a terminal (a pipe or a file); plain text, no colour or symbols",
		"[info] language: English, from LANG=en_US.UTF-8 (Chinese: course --lang zh doctor, or export LANG=zh_CN.UTF-8)",
		"doctor: 1 required check(s) failed. Fix them as shown above, then run course doctor again.",
	)
}

func TestDoctorWithAnOldGo(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake go is a shell script")
	}
	fakeGo := filepath.Join(t.TempDir(), "go")
	if err := os.WriteFile(fakeGo, []byte("#!/bin/sh\necho go1.20.1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runCourse(t, nil, lookOnly(map[string]string{"go": fakeGo}), "doctor")
	if code != exitFailed {
		t.Errorf("exit %d, want %d", code, exitFailed)
	}
	wantLines(t, stdout,
		"[FAIL] go：go1.20.1（"+fakeGo+"）太旧，课程需要 1.26 或更新版本",
		"    -> 安装 Go 1.26 或更新版本：https://go.dev/dl/",
		"[skip] 模块缓存：跳过（先修好 go）",
		"[warn] git：找不到（可选）。练习目录不需要 git，但 git diff（看你改了什么）需要它。",
		"    -> 安装 git：https://git-scm.com/downloads ，然后确认：git --version",
		"[info] 语言：中文（默认：没有 --lang，LC_ALL、LC_MESSAGES、LANG 都没有设置；英文：course --lang en doctor，或 export LANG=en_US.UTF-8）",
	)
}

func TestDoctorAllGood(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	if testing.Short() {
		t.Skip("builds a practice module")
	}
	code, stdout, _ := runCourse(t, nil, lookOnly(map[string]string{"go": goBin, "git": "/usr/bin/git"}), "doctor", "--lang", "en")
	if code != exitOK {
		t.Errorf("exit %d, want 0; output:\n%s", code, stdout)
	}
	if !strings.HasPrefix(stdout, "[ok]   go: go1.") || !strings.Contains(stdout, "\n[ok]   module cache: chapter 01's practice module builds offline (") {
		t.Errorf("go and the module cache are not reported fine:\n%s", stdout)
	}
	wantLines(t, stdout,
		"[info] language: English, from --lang en (Chinese: course --lang zh doctor, or export LANG=zh_CN.UTF-8)",
		"doctor: every required check passed.",
	)
}

func TestLangSourceAgreesWithDetectLang(t *testing.T) {
	tests := []struct {
		flag         string
		env          map[string]string
		wantSource   string
		wantVariable string
	}{
		{wantSource: "", wantVariable: "LANG"},
		{env: map[string]string{"LANG": "en_US.UTF-8"}, wantSource: "LANG=en_US.UTF-8", wantVariable: "LANG"},
		{env: map[string]string{"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, wantSource: "LC_ALL=zh_CN.UTF-8", wantVariable: "LC_ALL"},
		{env: map[string]string{"LC_MESSAGES": "en_GB", "LANG": "zh_TW"}, wantSource: "LC_MESSAGES=en_GB", wantVariable: "LC_MESSAGES"},
		{flag: "en", env: map[string]string{"LC_ALL": "zh_CN.UTF-8"}, wantSource: "--lang en", wantVariable: "LC_ALL"},
	}
	for _, tt := range tests {
		getenv := func(k string) string { return tt.env[k] }
		source, variable := langSource(tt.flag, getenv)
		if source != tt.wantSource || variable != tt.wantVariable {
			t.Errorf("langSource(%q, %v) = %q, %q; want %q, %q", tt.flag, tt.env, source, variable, tt.wantSource, tt.wantVariable)
		}
		// The variable that decided is the one detectLang reads: alone it picks the same language.
		if name, value, ok := strings.Cut(source, "="); ok {
			all, _ := detectLang("", getenv)
			alone, _ := detectLang("", func(k string) string {
				if k == name {
					return value
				}
				return ""
			})
			if all != alone {
				t.Errorf("%v: detectLang picks %s, but %s alone picks %s", tt.env, all, source, alone)
			}
		}
	}
}
