package devcheck

// phase says when a job that runs go starts (job.phase): on two cores the order decides how
// much of go's build cache the jobs share and how long the run's tail is.
//
//   - Targets first: a chapter's flake runs (phaseFlake) compile the same race-instrumented
//     package, which is then in the cache (sharedBuildEnv); run together, both would compile it.
//   - Starters before progressive stages.
//   - The progressive stages of all chapters by stage (job.rank), then by chapter: each
//     chapter's first stage makes the build of all its stages (stageSchema), which its other
//     stages wait for, so the first stages of two chapters run side by side, not one chapter's
//     build and a stage waiting for it.
//   - Mutants last: hundreds of short jobs fill both slots to the end, where one long job
//     would leave a core idle. They too start by their place in the chapter (job.rank), then by
//     chapter: each chapter's first mutant makes the build of all its mutants (chapterSchema),
//     which the others wait for, so the builds of several chapters run side by side instead of
//     one build while the other slots wait for it. The held-out checks, which use the same build,
//     come after their chapter's mutants.
type phase int

const (
	phaseTarget phase = iota
	phaseFlake
	phaseStarter
	phaseProgressive
	phaseOther
	phaseMutant
)
