// Package perf holds the benchmarks of the reference runtime (package tinypi) and of the kit,
// and the tests of performance properties that no lab teaches, such as ScriptedModel recording
// a long run in linear time and memory.
//
// They live here and not in solutions/tinypi because every file there belongs to a chapter and
// ends up in learners' checkpoint trees; a benchmark is not a focused test. `make bench` runs
// them and compares the results with the previous run using benchstat; docs/performance.md
// keeps the latest figures and says how to reproduce them.
package perf
