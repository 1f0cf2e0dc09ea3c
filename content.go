// Package course is the root of the course kit. It embeds the course content (manifests, the
// reference runtime, lab cards, chapter texts and practice templates) so that the `course`
// binary carries everything it needs to build checkpoints and practice directories.
package course

import (
	"embed"
	"io/fs"
)

// content holds the course content. go.mod and go.sum come along because the learner's go.mod
// takes its module versions from the kit's own go.mod, and its go.sum from the kit's go.sum.
//
//go:embed checkpoints solutions labs docs practice go.mod go.sum
var content embed.FS

// Content returns the embedded course content, rooted at the repository root: paths look like
// "checkpoints/course.yaml" and "solutions/tinypi/agentloop.go".
func Content() fs.FS {
	return content
}
