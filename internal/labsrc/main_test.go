package labsrc_test

import (
	"go/build"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain tells go/build where the standard library is when the test binary does not know
// (built with -trimpath, as make test builds it): typeCheck's importer reads the standard
// library's export data from under build.Default.GOROOT.
func TestMain(m *testing.M) {
	if build.Default.GOROOT == "" {
		if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
			build.Default.GOROOT = strings.TrimSpace(string(out))
		}
	}
	os.Exit(m.Run())
}
