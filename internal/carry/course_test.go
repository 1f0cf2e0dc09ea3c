package carry

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/tree"
)

// TestWhichLabsTheCourseCarries pins, for a learner who solves every lab from chapter 07 on and
// carries their directory into each next chapter (`course practice NN DIR --from PREV`), which
// labs stay theirs up to chapter 14 and which a later chapter rewrites around, so that they get the
// reference's code there (their own kept under .course/carried/). A change to a chapter that makes
// one more lab fall back fails here: a later chapter should add a named call site or a function
// of its own rather than rewrite the function a lab is in (docs/authoring.md), and where it
// must, the later chapter's text says so and this list grows on purpose.
func TestWhichLabsTheCourseCarries(t *testing.T) {
	b, err := tree.NewBuilder(course.Content())
	if err != nil {
		t.Fatal(err)
	}
	c := b.Course()
	// Lab → the chapter whose rewrite it does not survive.
	want := map[string]string{
		"7.1":  "09",
		"7.2":  "09",
		"7.3":  "10",
		"9.3":  "10",
		"10.1": "11",
		"10.3": "11",
		"11.6": "12",
	}
	got := map[string]string{}
	carried := 0
	var labs []string
	for _, from := range c.Chapters {
		if !from.Rebuild() || from.Number < "07" {
			continue
		}
		for _, lab := range from.Labs {
			labs = append(labs, lab.ID)
		}
	}
	tc := &treeCache{b: b, marked: labs, targets: map[string]tree.Tree{}}
	for _, from := range c.Chapters {
		if !from.Rebuild() || from.Number < "07" {
			continue
		}
		for _, lab := range from.Labs {
			files, err := b.LabFiles(from, lab)
			if err != nil {
				t.Fatal(err)
			}
			o := &owned{lab: lab, chapter: from, written: from.Number, bodies: map[string][]string{}}
			for _, f := range files {
				o.bodies[f] = nil
			}
			prev, lost, later := from, "", false
			for _, to := range c.Chapters {
				if !to.Rebuild() || to.Number <= from.Number {
					continue
				}
				later = true
				origin, err := changedAround(tc, prev, to, o)
				if err != nil {
					t.Fatal(err)
				}
				if origin != nil {
					lost = origin.Changed
					break
				}
				prev = to
			}
			switch {
			case !later: // the last chapter's labs go nowhere
			case lost == "":
				carried++
			default:
				got[lab.ID] = lost
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("labs of chapters 07–13 that a later chapter rewrites around (-want +got):\n%s", diff)
	}
	t.Logf("%d of %d labs of chapters 07–13 stay the learner's up to chapter 14", carried, carried+len(got))
}
