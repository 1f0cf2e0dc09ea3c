package learnerdeps_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/hang"
)

// TestModulesMatchCourseRequires checks that building this package needs exactly the modules the
// learner's go.mod requires (checkpoints/course.yaml), golang.org/x/text coming in through
// jsonschema. A module missing here would not be in the module cache for an offline learner; a
// module too many would be downloaded for nothing.
func TestModulesMatchCourseRequires(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	data, err := fs.ReadFile(course.Content(), "checkpoints/course.yaml")
	require.NoError(t, err)
	var settings struct {
		Requires []string `yaml:"requires"`
	}
	require.NoError(t, yaml.Unmarshal(data, &settings))
	want := slices.Sorted(slices.Values(settings.Requires))

	ctx, cancel := context.WithTimeout(context.Background(), hang.Bound(2*time.Minute))
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", ".")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly", "GOPROXY=off")
	out, err := cmd.Output()
	require.NoError(t, err, "go list")
	var got []string
	for _, m := range strings.Fields(string(out)) {
		if m != "github.com/learn-tinypi/course" && !slices.Contains(got, m) {
			got = append(got, m)
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modules of learnerdeps (+) differ from course.yaml requires (-):\n%s", diff)
	}
}
