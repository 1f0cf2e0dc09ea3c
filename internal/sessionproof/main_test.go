package sessionproof

import (
	"flag"
	"math/rand/v2"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// seedFlag replays a failure: every failure message names the seed it ran with.
var seedFlag = flag.Uint64("seed", 0, "base seed of the random tests (0: a new one each run)")

// childEnv, when set in the environment, turns the test binary into the crash test's writer
// process (see crashChild) instead of running tests.
const childEnv = "SESSIONPROOF_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(crashChild())
	}
	goleak.VerifyTestMain(m)
}

// baseSeed returns the -seed flag or, without it, a fresh random seed.
func baseSeed() uint64 {
	if *seedFlag != 0 {
		return *seedFlag
	}
	return rand.Uint64()
}
