package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// The leak checks run at the end of each test, not deferred: a lab that is still a stub panics,
// and its message, not the writer it left running, is what the learner should see.

func TestRunWritesTheRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions", "readme.jsonl")
	n, err := run(context.Background(), path)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if n != 12 {
		t.Errorf("run wrote %d events, want 12", n)
	}
	s, repair, err := tinypi.LoadSession(path, tinypi.SessionOptions{})
	if err != nil {
		t.Fatalf("LoadSession: %v", err)
	}
	if diff := cmp.Diff(tinypi.SessionRepair{}, repair); diff != "" {
		t.Errorf("a finished run needs no repair (-want +got):\n%s", diff)
	}
	var types []tinypi.SessionEventType
	for _, e := range s.Events() {
		types = append(types, e.Type)
	}
	want := []tinypi.SessionEventType{
		"user/message", "turn/start", "model/request", "assistant/message", "tool/call", "tool/start", "tool/result", "turn/end",
		"turn/start", "model/request", "assistant/message", "turn/end",
	}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	goleak.VerifyNone(t)
}

func TestRunRefusesAnExistingLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "readme.jsonl")
	if err := os.WriteFile(path, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(context.Background(), path); err == nil {
		t.Error("run over an existing file succeeded, want an error")
	}
	if data, _ := os.ReadFile(path); string(data) != "keep\n" {
		t.Errorf("the existing file now holds %q, want it untouched", data)
	}
	goleak.VerifyNone(t)
}
