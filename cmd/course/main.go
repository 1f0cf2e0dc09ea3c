// Command course is the tinypi course kit: it lists chapters, shows checkpoints, creates practice
// directories, runs a learner's focused tests and, for authors, proves the course content.
//
// Run `course --help` for the commands.
package main

import (
	"os"

	"github.com/learn-tinypi/course/internal/cli"
	// Linked for its imports only: building the kit fills the module cache with the modules a
	// learner's checkpoint module needs, so practice directories build offline.
	_ "github.com/learn-tinypi/course/internal/learnerdeps"
)

func main() {
	os.Exit(cli.Main())
}
