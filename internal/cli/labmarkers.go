package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/labsrc"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// labMarkerMessages are the texts of the marker check that every run of the focused tests makes.
var labMarkerMessages = i18n.Catalog{
	"markers.warn.gone": {
		ZH: "注意：%[1]s 里 Lab %[2]s 的标记 //lab:begin %[2]s … //lab:end 不见了。",
		EN: "WARNING: the markers //lab:begin %[2]s … //lab:end of lab %[2]s are gone from %[1]s.",
	},
	"markers.warn.damaged": {
		ZH: "注意：%[1]s 里 Lab %[2]s 的标记 //lab:begin … //lab:end 损坏了（%[3]s）。",
		EN: "WARNING: the markers //lab:begin … //lab:end of lab %[2]s in %[1]s are damaged (%[3]s).",
	},
	"markers.warn.why": {
		ZH: "测试照常运行，但 course reset 和 course solution 要靠这些标记找到你的代码：把它们放回原处（git diff 能看到原来的样子）。",
		EN: "The tests run as usual, but course reset and course solution find your code by these markers: put them back (git diff shows how they were).",
	},
}

// warnLabMarkers says, before a run of the focused tests, which labs of ch have lost or damaged
// their //lab:begin … //lab:end markers in the practice directory root of chapter. The tests do not need
// them, so nothing fails; but course reset and course solution do, and a learner who deleted a
// marker while editing should hear it now, next to the change, not when those commands refuse
// much later. A file that cannot be read is left to the run, which reports it.
func (a *app) warnLabMarkers(root, chapter string) {
	if a.content == nil {
		return // an app without course content (some tests) has no regions to check
	}
	b, ch, err := a.chapter(chapter) // the builder that ch belongs to: tree.Builder checks it
	if err != nil || !ch.Rebuild() {
		return // the run reports a course that does not load; an observe chapter has no regions
	}
	starter, err := b.Starter(ch) // built once: a tree build per lab would slow every run
	if err != nil {
		return
	}
	warned := false
	for _, lab := range ch.Labs {
		me := labMarkerProblem(root, b, ch, lab, starter)
		if me == nil {
			continue
		}
		var msg string
		if me.Detail == "" {
			msg = a.p.text("markers.warn.gone", me.File, me.Lab)
		} else {
			msg = a.p.text("markers.warn.damaged", me.File, me.Lab, me.Detail)
		}
		fmt.Fprintln(a.stdout, style{a.color}.bad(msg))
		warned = true
	}
	if warned {
		fmt.Fprintln(a.stdout, a.p.text("markers.warn.why"))
	}
}

// labMarkerProblem returns what is wrong with lab's markers in the practice directory root: a
// file whose markers do not parse, or that holds fewer or more of the lab's regions than ch's
// starter does (none: Detail is empty, the markers are gone). nil when the markers are as the
// starter's, or a file cannot be read (the run reports that).
func labMarkerProblem(root string, b *tree.Builder, ch *manifest.Chapter, lab *manifest.Lab, starter tree.Tree) *labsrc.MarkerError {
	paths, err := b.LabFiles(ch, lab)
	if err != nil {
		return nil
	}
	for _, p := range paths {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			return nil
		}
		bodies, err := labsrc.Bodies(src, lab.ID)
		var me *labsrc.MarkerError
		if errors.As(err, &me) {
			return withFile(me, p).(*labsrc.MarkerError)
		}
		want, err := labsrc.Bodies(starter[p], lab.ID)
		if err != nil || len(want) == len(bodies) {
			continue
		}
		if len(bodies) == 0 {
			return &labsrc.MarkerError{File: p, Lab: lab.ID}
		}
		return &labsrc.MarkerError{File: p, Lab: lab.ID,
			Detail: fmt.Sprintf("%d region(s), the starter has %d", len(bodies), len(want))}
	}
	return nil
}
