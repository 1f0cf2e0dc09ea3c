// Package sessionproof holds the proofs of the chapter 10 session log that go beyond the focused
// tests of solutions/tinypi: a property test of the commit cursor (directly and through the
// agent loop) and a crash test that kills a writer process with SIGKILL and loads what it left.
//
// The package has no code of its own; everything is in its tests. They live here, not in
// solutions/tinypi, because every file there belongs to a chapter and ends up in learners'
// checkpoint trees.
package sessionproof
