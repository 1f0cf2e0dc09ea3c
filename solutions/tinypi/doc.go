// Package tinypi is the reference runtime of the course: a small tool-calling agent runtime
// rebuilt chapter by chapter.
//
// Every file in this package belongs to one chapter (see the kit's checkpoints/*.yaml). The
// learner's tree of chapter NN holds the files of chapters up to NN, so later chapters build on
// earlier ones and never reach back into them.
package tinypi
