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

// In a practice directory of chapter 10 the labs may still be stubs that panic with their
// pending message ("Lab 10.N … 尚未实现"); guarded turns that panic into the test's failure, so
// the learner reads the lab's message. The leak checks run at the end of each test, not deferred,
// for the same reason: a stub's panic may leave the writer running.

func guarded[T any](t *testing.T, f func() T) T {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("%v", p)
		}
	}()
	return f()
}

type runOutcome struct {
	n   int
	err error
}

type loadOutcome struct {
	s      *tinypi.Session
	repair tinypi.SessionRepair
	err    error
}

func TestRunWritesTheRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions", "readme.jsonl")
	o := guarded(t, func() runOutcome {
		n, err := run(context.Background(), path)
		return runOutcome{n, err}
	})
	n, err := o.n, o.err
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if n != 12 {
		t.Errorf("run wrote %d events, want 12", n)
	}
	l := guarded(t, func() loadOutcome {
		s, repair, err := tinypi.LoadSession(path, tinypi.SessionOptions{})
		return loadOutcome{s, repair, err}
	})
	s, repair, err := l.s, l.repair, l.err
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
	if o := guarded(t, func() runOutcome {
		n, err := run(context.Background(), path)
		return runOutcome{n, err}
	}); o.err == nil {
		t.Error("run over an existing file succeeded, want an error")
	}
	if data, _ := os.ReadFile(path); string(data) != "keep\n" {
		t.Errorf("the existing file now holds %q, want it untouched", data)
	}
	goleak.VerifyNone(t)
}
