package tree_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// TestCourseContentBuildsOffline materialises chapter 07's target and starter from the real
// course content and compiles them, tests included, with the network off: the learner's module
// must build from the module cache the kit filled.
func TestCourseContentBuildsOffline(t *testing.T) {
	b, err := tree.NewBuilder(course.Content())
	require.NoError(t, err)
	ch, err := b.Course().Chapter("07")
	require.NoError(t, err)
	for name, build := range map[string]func(*manifest.Chapter) (tree.Tree, error){
		"target":  b.Target,
		"starter": b.Starter,
	} {
		tr, err := build(ch)
		require.NoErrorf(t, err, "%s", name)
		goBuild(t, "07-"+name, tr)
	}
}
