package tinypi

import (
	"errors"
	"iter"
	"sync"
)

// ErrIncompleteStream is returned by Result when a stream was closed without a terminal event.
var ErrIncompleteStream = errors.New("tinypi: stream ended without a terminal event")

// EventStream carries the events of one producer to any number of readers, and the final
// result once a terminal event arrives.
//
// The producer calls Push for each event and Close when it has nothing more to say. A pushed
// event for which the stream's terminal function reports true ends the stream and fixes its
// result; events pushed after that are dropped. Readers may start before or after the events
// arrive: every reader sees every event, in push order, including the terminal one.
//
// All methods are safe for concurrent use. Events are kept in one slice and each reader keeps
// its own position in it, so a burst of n events costs O(n), whatever the number of readers.
type EventStream[E, R any] struct {
	terminal func(E) (R, bool)

	mu      sync.Mutex
	changed *sync.Cond
	events  []E
	ended   bool
	final   bool // a terminal event arrived
	result  R
}

// NewEventStream returns an open stream. terminal reports whether an event ends the stream and,
// if it does, the stream's result.
func NewEventStream[E, R any](terminal func(E) (R, bool)) *EventStream[E, R] {
	s := &EventStream[E, R]{terminal: terminal}
	s.changed = sync.NewCond(&s.mu)
	return s
}

// Push appends an event. It never blocks on readers.
func (s *EventStream[E, R]) Push(event E) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return
	}
	s.events = append(s.events, event)
	if result, ok := s.terminal(event); ok {
		s.result, s.final, s.ended = result, true, true
	}
	s.changed.Broadcast()
}

// Close ends the stream without a terminal event, if it has not ended yet: readers stop waiting
// and Result reports ErrIncompleteStream. Producers call it on every exit path (defer) so that
// no reader can hang.
func (s *EventStream[E, R]) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	s.changed.Broadcast()
}

// All returns the events in push order, waiting for new ones until the stream ends.
func (s *EventStream[E, R]) All() iter.Seq[E] {
	return func(yield func(E) bool) {
		for i := 0; ; i++ {
			s.mu.Lock()
			for i >= len(s.events) && !s.ended {
				s.changed.Wait()
			}
			if i >= len(s.events) {
				s.mu.Unlock()
				return
			}
			event := s.events[i]
			s.mu.Unlock()
			if !yield(event) {
				return
			}
		}
	}
}

// Result waits for the stream to end and returns the result of its terminal event, or
// ErrIncompleteStream when it was closed without one.
func (s *EventStream[E, R]) Result() (R, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.ended {
		s.changed.Wait()
	}
	if !s.final {
		var zero R
		return zero, ErrIncompleteStream
	}
	return s.result, nil
}
