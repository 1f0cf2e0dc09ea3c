package devcheck

import (
	"os"
	"testing"

	"github.com/learn-tinypi/course/internal/tree"
)

// TestEveryStageOfTheCourseIsWoven: every progressive stage of every rebuild chapter is in its
// chapter's build of stages (stages.go). A stage left out is still proven, in a tree of its own,
// so a lab written in a way the weave refuses (a stub that changes a signature or a declaration
// outside a function body) would not fail any check, only make dev check slower: this test says
// which stage and why.
func TestEveryStageOfTheCourseIsWoven(t *testing.T) {
	b, err := tree.NewBuilder(os.DirFS("../.."))
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range b.Course().Chapters {
		if !ch.Rebuild() || len(ch.Labs) == 0 {
			continue
		}
		_, res, woven := weaveStages(b, ch)
		for k, lab := range ch.Labs {
			if woven[k] {
				continue
			}
			var why []string
			if res != nil {
				for i, ok := range res.Woven {
					if !ok {
						why = append(why, res.Why[i])
					}
				}
			}
			t.Errorf("chapter %s: the stage of lab %s is not woven into the chapter's build of stages: %q", ch.Number, lab.ID, why)
		}
	}
}
