// Package learnerdeps imports, for their side effect on the module cache only, the packages the
// learner's module needs.
//
// The `course` binary links this package. Building the kit therefore downloads these modules into
// the module cache, and a learner's checkpoint module, whose go.mod requires them at the kit's
// versions, then builds offline (GOPROXY=off, GOFLAGS=-mod=readonly). Keep the imports in step
// with `requires:` in checkpoints/course.yaml; the test of this package checks that.
package learnerdeps

import (
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "go.uber.org/goleak"
	_ "golang.org/x/term"
)
