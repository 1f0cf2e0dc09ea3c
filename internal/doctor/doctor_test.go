package doctor

import (
	"context"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/tree"
)

func TestNewEnough(t *testing.T) {
	tests := []struct {
		have, want string
		ok         bool
	}{
		{"go1.26.0", "1.26", true},
		{"go1.27.3", "1.26", true},
		{"go1.25.9", "1.26", false},
		{"go1.9", "1.26", false},
		{"go1.26rc1", "1.26", false},
		{"devel go1.27-abcdef", "1.26", true},
		{"go1.26.1", "go1.26", true},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.ok, NewEnough(tt.have, tt.want), "NewEnough(%q, %q)", tt.have, tt.want)
	}
}

func goBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	return bin
}

func TestGoEnv(t *testing.T) {
	env, err := GoEnv(context.Background(), goBin(t), "GOVERSION", "GOOS")
	require.NoError(t, err)
	assert.Regexp(t, "^go", env["GOVERSION"], "GOVERSION")
	assert.NotEmpty(t, env["GOOS"], "GOOS")
}

func TestBuildOffline(t *testing.T) {
	gomod := []byte("module example.com/m\n\ngo 1.22\n")
	tests := []struct {
		name        string
		module      tree.Tree
		requires    []string
		ok          bool
		wantCommand string
		wantOutput  string
	}{
		{
			name:   "builds",
			module: tree.Tree{"go.mod": gomod, "m.go": []byte("package m\n\nfunc F() int { return 1 }\n")},
			ok:     true,
		},
		{
			name:        "compile error",
			module:      tree.Tree{"go.mod": gomod, "m.go": []byte("package m\n\nfunc F() int { return \"x\" }\n")},
			wantCommand: "go build ./...",
			wantOutput:  "m.go:3",
		},
		{
			name:        "module not in the cache",
			module:      tree.Tree{"go.mod": gomod, "m.go": []byte("package m\n")},
			requires:    []string{"example.com/not/there"},
			wantCommand: "go mod download example.com/not/there",
			wantOutput:  "example.com/not/there",
		},
	}
	bin := goBin(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BuildOffline(context.Background(), bin, tt.module, tt.requires)
			require.NoError(t, err)
			assert.Equal(t, tt.ok, got.OK, "OK")
			assert.Equal(t, tt.wantCommand, got.Command, "Command")
			assert.Contains(t, got.Output, tt.wantOutput, "Output")
		})
	}
}
