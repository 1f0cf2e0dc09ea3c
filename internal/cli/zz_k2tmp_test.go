package cli

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestK2Tmp(t *testing.T) {
	args := os.Getenv("K2ARGS")
	if args == "" {
		t.Skip()
	}
	if d := os.Getenv("K2DIR"); d != "" {
		os.Chdir(d)
	}
	code := Run(context.Background(), strings.Fields(args), Env{Stdout: os.Stdout, Stderr: os.Stdout, Getenv: os.Getenv, Content: os.DirFS("/tmp/k2content"), LookPath: exec.LookPath})
	t.Logf("exit %d", code)
}
