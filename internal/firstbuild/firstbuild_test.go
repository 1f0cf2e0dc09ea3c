package firstbuild

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeGo answers go list with out and records every command.
type fakeGo struct {
	out   string
	err   error
	calls [][]string
}

func (f *fakeGo) run(_ context.Context, _ string, args ...string) (string, error) {
	f.calls = append(f.calls, args)
	return f.out, f.err
}

func TestCold(t *testing.T) {
	tests := []struct {
		name string
		list string
		want []string
	}{
		{"warm: only the module's own packages", "tinypi\ntinypi [tinypi.test]\ntinypi.test\ntinypi/internal/x\n", nil},
		{"cold: the standard library and a dependency", "internal/abi\nfmt\ngo.uber.org/goleak\ntinypi\ntinypi.test\n", []string{"internal/abi", "fmt", "go.uber.org/goleak"}},
		{"nothing stale", "", nil},
		{"a module named like a prefix of another", "tinypi\ntinypikit\n", []string{"tinypikit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeGo{out: tt.list}
			got, err := Cold(context.Background(), f.run, "dir", "tinypi")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Cold (-want +got):\n%s", diff)
			}
			if want := []string{"list", "-deps", "-test", "-f", "{{if .Stale}}{{.ImportPath}}{{end}}", "."}; !slices.Equal(f.calls[0], want) {
				t.Errorf("ran go %q, want go %q", f.calls[0], want)
			}
		})
	}
}

func TestColdAndBuildReportGoFailures(t *testing.T) {
	f := &fakeGo{out: "\ngo: updates to go.mod needed\n", err: errors.New("go list: exit status 1")}
	if _, err := Cold(context.Background(), f.run, "dir", "tinypi"); err == nil || !strings.Contains(err.Error(), "go: updates to go.mod needed") {
		t.Errorf("Cold: %v, want the error with go's first line", err)
	}
	if err := Build(context.Background(), f.run, "dir"); err == nil || !strings.Contains(err.Error(), "go: updates to go.mod needed") {
		t.Errorf("Build: %v, want the error with go's first line", err)
	}
	if want := []string{"test", "-run", "^$", "."}; !slices.Equal(f.calls[1], want) {
		t.Errorf("Build ran go %q, want go %q", f.calls[1], want)
	}
}
