package cli

import (
	"fmt"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/signature"
	"github.com/learn-tinypi/course/internal/tree"
)

// knownMistakeMessages are the texts `course test` uses to name a known mistake.
var knownMistakeMessages = i18n.Catalog{
	"mistake.diagnose": {ZH: "这看起来像一个已知错误：%s（错误写法 %s；course diagnose %s %s 可以演示它）", EN: "This looks like a known mistake: %s (mistake %s; `course diagnose %s %s` shows it)"},
}

// printKnownMistakes names, for every lab of labs whose tests failed, the known mistakes (the
// chapter's mutants) whose failure signature the failures contain, best match first
// (signature.File.Match). A chapter without a signature file, or a failed build, names none:
// this is a courtesy on top of the failure report, never a failure of its own.
func (a *app) printKnownMistakes(b *tree.Builder, ch *manifest.Chapter, labs []*manifest.Lab, report *gotest.Report) {
	if report.BuildFailed {
		return
	}
	sigs, err := signature.Load(b.FS(), ch.Number)
	if err != nil {
		return
	}
	byName := map[string]*manifest.Mutant{}
	for _, m := range ch.Mutants {
		byName[m.Name] = m
	}
	for _, lab := range labs {
		failures, err := signature.Failures(report, lab)
		if err != nil || len(failures) == 0 {
			continue
		}
		for _, match := range sigs.Match(lab.ID, failures) {
			m, ok := byName[match.Name]
			if !ok {
				continue // a stale file names a mutant the manifest no longer has
			}
			explain := m.Explain
			if a.p.lang == langEN && m.ExplainEN != "" {
				explain = m.ExplainEN
			}
			// Every known mistake can be diagnosed: by the chapter's program, or by its lab's
			// tests (internal/diagnose).
			fmt.Fprintln(a.stdout, a.p.text("mistake.diagnose", explain, m.Name, ch.Number, m.Name))
		}
	}
}
