package devcheck

import (
	"github.com/learn-tinypi/course/internal/testfiles"
	"github.com/learn-tinypi/course/internal/tree"
)

// withTestsOf returns t without the test files of its root package that the tests in testFile
// do not need (testfiles.Needed): a mutant is proven by its lab's tests alone, and compiling
// every earlier chapter's tests for each mutant was most of `course dev check`'s time. If the
// smaller tree does not compile, checkMutant builds the whole tree and its verdict stands. ok is
// false when the set cannot be worked out: use t itself then.
func withTestsOf(t tree.Tree, testFile string) (pruned tree.Tree, ok bool) {
	tests := map[string][]byte{}
	for p, src := range t {
		if testfiles.IsRootTest(p) {
			tests[p] = src
		}
	}
	keep, ok := testfiles.Needed(tests, testFile)
	if !ok {
		return nil, false
	}
	pruned = tree.Tree{}
	for p, src := range t {
		if !testfiles.IsRootTest(p) || keep[p] {
			pruned[p] = src
		}
	}
	return pruned, true
}
