package tinypi

import (
	"errors"
	"iter"
	"slices"
	"sync"
)

// How readers wait (lab 2.2). A reader that asks for an event that has not arrived sleeps on
// the stream's condition variable; Push and Close wake every sleeper. Nobody polls: a reader
// costs nothing while it waits and has its event as soon as it is pushed.

// waitLocked blocks until event i has arrived or the stream has ended. s.mu is held; waiting
// releases it so that the producer can push.
func (s *EventStream[E, R]) waitLocked(i int) {
	//lab:begin 2.2
	// A wake-up only says "something changed": check again before leaving.
	for i >= len(s.events) && !s.ended {
		s.changed.Wait()
	}
	//lab:end
}

// wakeLocked tells every waiting reader that an event arrived or the stream ended. s.mu is
// held.
func (s *EventStream[E, R]) wakeLocked() {
	//lab:begin 2.2
	s.changed.Broadcast()
	//lab:stub
	//	// Lab 2.2: nobody waits yet, so there is nobody to wake.
	//lab:end
}

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
	changed sync.Cond // signalled when an event arrives or the stream ends; L is &mu
	events  []E       // every event pushed before the end, in push order
	ended   bool      // no more events will arrive
	final   bool      // a terminal event arrived (and ended the stream)
	result  R         // the terminal event's result, when final
}

// initialEvents is the room a new stream has for events before its slice first grows.
//
// Performance, not part of lab 2: a model turn that asks for one tool is four events (start,
// toolcall_delta, toolcall_end, done), and without room for them every turn grew the slice
// three times, each growth an allocation made by the producer while it pushes (see
// docs/performance.md). Longer streams grow by doubling as before.
const initialEvents = 8

// NewEventStream returns an open stream. terminal reports whether an event ends the stream and,
// if it does, the stream's result.
func NewEventStream[E, R any](terminal func(E) (R, bool)) *EventStream[E, R] {
	// The condition variable is a field, not a separate allocation (sync.NewCond): one
	// allocation less per stream, i.e. per model request.
	s := &EventStream[E, R]{terminal: terminal, events: make([]E, 0, initialEvents)}
	s.changed.L = &s.mu
	return s
}

// Push appends an event. It never blocks on readers.
func (s *EventStream[E, R]) Push(event E) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roomLocked()
	if !s.appendLocked(event) {
		return
	}
	s.settleLocked(event)
	s.wakeLocked()
}

// roomLocked doubles the room for events when the slice is full. s.mu is held.
//
// Performance, not part of lab 2.1: beyond 256 elements append grows a slice by about a quarter
// at a time, so a stream of n events allocated and copied about 5n slots (80 MB of slices for a
// million deltas, most of that run's garbage). Doubling keeps it at 2n and the cost per event
// flat as streams grow; appendLocked's append then always has room.
func (s *EventStream[E, R]) roomLocked() {
	if len(s.events) == cap(s.events) && !s.ended {
		s.events = slices.Grow(s.events, len(s.events))
	}
}

// Close ends the stream without a terminal event, if it has not ended yet: readers stop waiting
// and Result reports ErrIncompleteStream. Producers call it on every exit path (defer) so that
// no reader can hang; after a terminal event it changes nothing.
func (s *EventStream[E, R]) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	s.wakeLocked()
}

// All returns the events in push order, waiting for new ones until the stream ends. Each call
// of the returned sequence reads from the first event, so any number of readers, early or
// late, each see every event. A reader that stops early (break) leaves the stream unchanged.
func (s *EventStream[E, R]) All() iter.Seq[E] {
	return func(yield func(E) bool) {
		//lab:begin 2.1
		for i := 0; ; i++ {
			event, ok := s.next(i)
			if !ok || !yield(event) {
				return
			}
		}
		//lab:end
	}
}

// Result waits for the stream to end and returns the result of its terminal event, or
// ErrIncompleteStream when it was closed without one.
func (s *EventStream[E, R]) Result() (R, error) {
	//lab:begin 2.3
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
	//lab:end
}

// appendLocked stores event unless the stream has ended, and reports whether it did. s.mu is
// held.
func (s *EventStream[E, R]) appendLocked(event E) bool {
	//lab:begin 2.1
	if s.ended {
		return false
	}
	s.events = append(s.events, event)
	return true
	//lab:end
}

// next returns event i, waiting while it has not arrived and the stream is still open. ok is
// false when the stream ended before event i.
func (s *EventStream[E, R]) next(i int) (event E, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.events) && !s.ended {
		s.waitLocked(i)
	}
	//lab:begin 2.1
	if i < len(s.events) {
		return s.events[i], true
	}
	return event, false
	//lab:end
}

// settleLocked ends the stream if event is terminal, keeping the event's result. s.mu is held.
func (s *EventStream[E, R]) settleLocked(event E) {
	//lab:begin 2.3
	if result, ok := s.terminal(event); ok {
		s.result, s.final, s.ended = result, true, true
	}
	//lab:stub
	//	// Lab 2.3: terminal events do not end the stream yet.
	//lab:end
}
