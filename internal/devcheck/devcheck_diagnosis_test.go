package devcheck

import (
	"testing"

	"github.com/learn-tinypi/course/internal/manifest"
)

// TestDiagnosisTask checks the hook's plan only; diagnose.Check, which the task runs, is proven
// against chapter 07's real program (and a manifest it contradicts) in internal/diagnose.
func TestDiagnosisTask(t *testing.T) {
	if tasks := diagnosisTask(nil, &manifest.Chapter{Number: "01"}); len(tasks) != 0 {
		t.Errorf("a chapter without a diagnosis has %d diagnosis tasks, want none", len(tasks))
	}
	ch := &manifest.Chapter{Number: "07", Diagnosis: &manifest.Diagnosis{Program: "cmd/diagnose"}}
	tasks := diagnosisTask(nil, ch)
	if len(tasks) != 1 || !tasks[0].usesGo {
		t.Fatalf("diagnosis tasks = %+v, want one that uses go", tasks)
	}
	if want := "diagnosis: cmd/diagnose builds and knows exactly the manifest's scenarios"; tasks[0].name != want {
		t.Errorf("task name = %q, want %q", tasks[0].name, want)
	}
}
