package tinypi

import (
	"fmt"
	"slices"
	"time"
)

// Fork starts a new session that shares this one's history up to and including the turn/end
// event atSeq: a branch taken at a turn boundary, where no tool call is waiting for its result.
// With opts.Path set the fork gets its own file, which holds the whole branch (so it loads on its
// own) and names its parent in the header; without it the fork lives in memory.
func (s *Session) Fork(atSeq int, opts SessionOptions) (*Session, error) {
	inherited, err := s.historyThrough(atSeq)
	if err != nil {
		return nil, err
	}
	return newFork(s.id, inherited, opts)
}

// newFork returns the fork of session parent that inherits the events inherited (the parent's
// events from seq 0 through the fork point, its last one) and, with opts.Path set, creates its
// file holding them.
func newFork(parent string, inherited []SessionEvent, opts SessionOptions) (*Session, error) {
	child := newSession(opts, parent, len(inherited)-1)
	child.base = inherited
	for _, e := range inherited {
		child.noteLocked(e) // nobody else knows child yet
	}
	if opts.Path != "" {
		if err := child.createFile(opts, inherited); err != nil {
			return nil, err
		}
	}
	return child, nil
}

// historyThrough returns the events a fork at atSeq inherits: every event from seq 0 through
// atSeq, which must be a turn/end. It takes the session's lock and releases it on every path.
func (s *Session) historyThrough(atSeq int) ([]SessionEvent, error) {
	s.mu.Lock()
	//lab:begin 10.6
	at, ok := s.eventLocked(atSeq)
	if !ok || at.Type != EventTurnEnd {
		s.mu.Unlock()
		return nil, fmt.Errorf("tinypi: session: fork at seq %d: forks are taken at a turn/end event", atSeq)
	}
	inherited := make([]SessionEvent, 0, atSeq+1)
	for seq := 0; seq <= atSeq; seq++ {
		e, _ := s.eventLocked(seq)
		inherited = append(inherited, e)
	}
	s.mu.Unlock()
	return inherited, nil
	//lab:stub
	//	s.mu.Unlock()
	//	panic(LAB_PENDING)
	//lab:end
}

// SessionTree is a set of sessions linked by their forks: each fork's parent is in the tree.
type SessionTree struct {
	sessions map[string]*Session
}

// NewSessionTree links sessions into a tree and proves it is one: every session needs a unique
// ID, every fork's parent must be among them, a fork's inherited events must be its parent's,
// event for event (their times aside), and no session may be its own ancestor: the tree asks
// PathTo for every session's path, which refuses a cycle.
func NewSessionTree(sessions ...*Session) (*SessionTree, error) {
	t := &SessionTree{sessions: map[string]*Session{}}
	for _, s := range sessions {
		if _, dup := t.sessions[s.id]; dup {
			return nil, fmt.Errorf("tinypi: session tree: two sessions are named %q", s.id)
		}
		t.sessions[s.id] = s
	}
	for _, s := range sessions {
		if s.parent == "" {
			continue
		}
		parent, ok := t.sessions[s.parent]
		if !ok {
			return nil, fmt.Errorf("tinypi: session tree: %q is a fork of %q, which is not in the tree", s.id, s.parent)
		}
		mine, theirs := s.Events(), parent.Events()
		if len(mine) <= s.forkSeq || len(theirs) <= s.forkSeq {
			return nil, fmt.Errorf("tinypi: session tree: %q was forked from %q at seq %d, but it holds %d events and its parent %d", s.id, s.parent, s.forkSeq, len(mine), len(theirs))
		}
		if !sameEvents(mine[:s.forkSeq+1], theirs[:s.forkSeq+1]) {
			return nil, fmt.Errorf("tinypi: session tree: %q does not share its first %d events with its parent %q", s.id, s.forkSeq+1, s.parent)
		}
	}
	for _, s := range sessions {
		if _, err := t.PathTo(s.id); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// sameEvents compares two logs by what each event records, not by when: times are left out.
func sameEvents(a, b []SessionEvent) bool {
	return slices.EqualFunc(a, b, func(x, y SessionEvent) bool {
		x.Time, y.Time = time.Time{}, time.Time{}
		ex, err1 := EncodeSessionEvent(x)
		ey, err2 := EncodeSessionEvent(y)
		return err1 == nil && err2 == nil && string(ex) == string(ey)
	})
}

// Children returns the IDs of the sessions forked from id, sorted.
func (t *SessionTree) Children(id string) []string {
	var out []string
	for _, s := range t.sessions {
		if s.parent == id {
			out = append(out, s.id)
		}
	}
	slices.Sort(out)
	return out
}

// PathTo returns the sessions from the root to leaf, leaf last: the forks a branch went through.
func (t *SessionTree) PathTo(leaf string) ([]string, error) {
	//lab:begin 10.6
	var path []string
	for id := leaf; id != ""; {
		s, ok := t.sessions[id]
		if !ok {
			return nil, fmt.Errorf("tinypi: session tree: no session %q", id)
		}
		if slices.Contains(path, id) {
			return nil, fmt.Errorf("tinypi: session tree: %q is its own ancestor", id)
		}
		path = append(path, id)
		id = s.parent
	}
	slices.Reverse(path)
	return path, nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// BranchMessages returns the messages of the branch that ends at leaf: each session's events up
// to where the next one forked, then all of leaf's, derived. A path from PathTo that does not run
// from a root to leaf, each session forked from the one before, is an error.
func (t *SessionTree) BranchMessages(leaf string) ([]Message, error) {
	path, err := t.PathTo(leaf)
	if err != nil {
		return nil, err
	}
	if len(path) == 0 || path[len(path)-1] != leaf || t.sessions[path[0]].parent != "" {
		return nil, fmt.Errorf("tinypi: session tree: PathTo(%q) returned %q, which is not a path from a root to %q", leaf, path, leaf)
	}
	var events []SessionEvent
	for i, id := range path {
		all := t.sessions[id].Events()
		if i+1 < len(path) {
			next := t.sessions[path[i+1]]
			if next.parent != id || next.forkSeq >= len(all) {
				return nil, fmt.Errorf("tinypi: session tree: PathTo(%q) returned %q, but %q is not a fork of %q", leaf, path, next.id, id)
			}
			all = all[:next.forkSeq+1]
		}
		events = append(events, all[len(events):]...)
	}
	return DeriveMessages(events), nil
}
