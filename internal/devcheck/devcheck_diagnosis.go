package devcheck

import (
	"context"

	"github.com/learn-tinypi/course/internal/diagnose"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/tree"
)

// diagnosisTask is the check that the diagnosis data of ch's manifest matches its program: the
// program builds from the target and knows exactly the scenarios the manifest names (the
// manifest itself already refused a mutant naming an unknown scenario). Nil for a chapter
// without a diagnosis.
func diagnosisTask(b *tree.Builder, ch *manifest.Chapter) []task {
	if ch.Diagnosis == nil {
		return nil
	}
	return []task{{
		name:   "diagnosis: " + ch.Diagnosis.Program + " builds and knows exactly the manifest's scenarios",
		usesGo: true,
		phase:  phaseOther,
		run: func(ctx context.Context, dir string) (Check, error) {
			if err := diagnose.Check(ctx, b, ch, dir); err != nil {
				return fail("%v", err), nil
			}
			return pass(), nil
		},
	}}
}
