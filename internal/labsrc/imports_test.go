package labsrc_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/learn-tinypi/course/internal/labsrc"
)

func TestDropUnusedImports(t *testing.T) {
	before := `package p

import (
	"fmt"
	"strings" // for the lab
	"time"
)

func f() string {
	//lab:begin 1.1
	return strings.ToUpper(time.Now().String())
	//lab:end
}

func g() { fmt.Println() }
`
	after := `package p

import (
	"fmt"
	"strings" // for the lab
	"time"
)

func f() string {
	//lab:begin 1.1
	panic("pending")
	//lab:end
}

func g() { fmt.Println() }
`
	want := `package p

import (
	"fmt"
)

func f() string {
	//lab:begin 1.1
	panic("pending")
	//lab:end
}

func g() { fmt.Println() }
`
	got, removed := labsrc.DropUnusedImports([]byte(before), []byte(after))
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"strings", "time"}, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}

	// A single import declaration goes as a whole; an import the learner never used stays.
	before = "package p\n\nimport \"time\"\n\nimport \"os\"\n\nvar t = time.Now()\n"
	after = "package p\n\nimport \"time\"\n\nimport \"os\"\n\nvar t any\n"
	got, removed = labsrc.DropUnusedImports([]byte(before), []byte(after))
	if diff := cmp.Diff("package p\n\n\nimport \"os\"\n\nvar t any\n", string(got)); diff != "" {
		t.Errorf("single import (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"time"}, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}

	// A learner file that does not parse is left alone.
	broken := []byte("package p\n\nimport \"time\"\n\nfunc f() { time.Now( }\n")
	if got, removed := labsrc.DropUnusedImports(broken, []byte(after)); string(got) != after || removed != nil {
		t.Errorf("with an unparsable learner file: got %q, removed %v; want after unchanged", got, removed)
	}
}
