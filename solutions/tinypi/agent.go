package tinypi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Errors of the Agent's methods; test them with errors.Is.
var (
	// ErrAgentBusy: a run is active, so the agent cannot start another one or be reset.
	ErrAgentBusy = errors.New("tinypi: agent is busy: a run is active")
	// ErrAgentIdle: no run can take a steering or follow-up message (none is active, or the
	// active one has already decided to stop: its final poll found both queues empty). Start a
	// run with Prompt instead.
	ErrAgentIdle = errors.New("tinypi: agent is idle: no run can take the message")
	// ErrNothingToContinue: Continue needs a transcript that ends with a user message or a tool
	// result, something the model has not answered yet.
	ErrNothingToContinue = errors.New("tinypi: nothing to continue: the transcript is empty or ends with an assistant message")
)

// QueueMode says how many queued messages a run takes at each poll.
type QueueMode string

// The queue modes.
const (
	// QueueOneAtATime takes the oldest queued message at each poll (the default).
	QueueOneAtATime QueueMode = "one-at-a-time"
	// QueueAll takes every queued message at once.
	QueueAll QueueMode = "all"
)

// AgentOptions configures an Agent.
type AgentOptions struct {
	SystemPrompt string
	Model        Model
	Tools        *Registry
	// Messages is the transcript the agent starts with; the agent keeps its own copy.
	Messages []Message
	// ExecuteToolCall and MaxSteps are passed to every run (see AgentLoopOptions).
	ExecuteToolCall ToolExecutor
	MaxSteps        int
	// SteeringMode and FollowUpMode: how many queued messages a run takes at each poll;
	// empty means QueueOneAtATime.
	SteeringMode QueueMode
	FollowUpMode QueueMode
	//chapter:begin 10
	// Session, when set, is the agent's event log: the transcript is what the log derives
	// (Messages must then be empty), prompts and queued messages are logged before a run takes
	// them, and every run writes into it (see AgentLoopOptions.Session). The log is flushed when
	// a run ends; a write error surfaces at the next barrier. The agent never closes it.
	Session *Session
	//chapter:end
	//chapter:begin 11
	// Compaction is passed to every run (see AgentLoopOptions.Compaction); it needs Session.
	Compaction *CompactionOptions
	//chapter:end
	//chapter:begin 12
	// Hooks, ToolExecution and MaxParallelTools are passed to every run (see AgentLoopOptions).
	Hooks            *LoopHooks
	ToolExecution    ToolExecutionMode
	MaxParallelTools int
	//chapter:end
}

// Agent keeps a conversation across runs of RunAgentLoop: its state, one run at a time,
// steering and follow-up queues for the active run, and subscribers that see every event.
//
// All methods are safe for concurrent use and may be called from a subscriber, except
// WaitForIdle, which would wait for the delivery it is part of. Prompt and Continue start a run
// and return at once; WaitForIdle waits for it and for the delivery of its events. Model
// trouble never comes back as an error: it ends the run with an assistant message whose stop
// reason is error, and State().LastError says why.
//
// No accepted message is lost silently: a message Steer or FollowUp accepted (returned nil for)
// either enters the run's transcript or, when the run ends without taking it, is listed in
// that run's run_end (RunEndEvent.Dropped) and in State().Dropped. A run that ends with stop
// has taken every message it accepted.
type Agent struct {
	opts AgentOptions

	// mu guards every field below. It is a sync.Locker, set by NewAgent to a *sync.Mutex, so
	// that the chapter's tests can act at the exact moment it is released (the moment a run
	// decides to stop is one of them); the agent uses it like any mutex.
	mu          sync.Locker
	state       AgentState         // folded from the events by ReduceAgentState
	lastRunID   int                // ids are never reused, also across Reset
	cancel      context.CancelFunc // cancels the active run; nil when none
	closing     bool               // the active run decided to stop: no queue may grow
	steering    messageQueue
	followUp    messageQueue
	subscribers []subscriber
	nextSubID   int
	outbox      []AgentEvent  // reduced, not yet delivered
	delivering  bool          // a goroutine is delivering the outbox
	quiet       chan struct{} // closed when no run is active and every event is delivered; nil when quiet
}

// subscriber is one Subscribe call: the id tells two subscriptions of the same function apart.
type subscriber struct {
	id int
	fn func(AgentEvent)
}

// messageQueue holds steering or follow-up messages until the active run takes them.
type messageQueue struct {
	mode  QueueMode
	items []Message
}

// NewAgent returns an idle agent with opts' system prompt, model, tools and transcript.
func NewAgent(opts AgentOptions) (*Agent, error) {
	if opts.Model == nil {
		return nil, errors.New("tinypi: NewAgent: AgentOptions.Model is nil")
	}
	if opts.MaxSteps < 0 {
		return nil, fmt.Errorf("tinypi: NewAgent: MaxSteps is %d, want 0 (default) or more", opts.MaxSteps)
	}
	//chapter:begin 10
	if opts.Session != nil && len(opts.Messages) > 0 {
		return nil, errors.New("tinypi: NewAgent: set Messages or Session, not both: with a session the transcript is the log's")
	}
	//chapter:end
	//chapter:begin 11
	if opts.Compaction != nil && opts.Session == nil {
		return nil, errors.New("tinypi: NewAgent: Compaction needs a Session: a compaction is an event of the session log")
	}
	//chapter:end
	a := &Agent{opts: opts, mu: new(sync.Mutex)}
	a.steering.mode, a.followUp.mode = opts.SteeringMode, opts.FollowUpMode
	a.state = AgentState{
		SystemPrompt: opts.SystemPrompt,
		Model:        opts.Model,
		Tools:        opts.Tools.Definitions(),
		Messages:     CloneMessages(opts.Messages),
	}
	//chapter:begin 10
	if opts.Session != nil {
		a.state.Messages = opts.Session.agentMessages()
	}
	//chapter:end
	return a, nil
}

// State returns a deep copy of the agent's state.
func (a *Agent) State() AgentState {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.state.Clone()
}

// Prompt appends messages to the transcript and starts a run with it. It returns at once; the
// run goes on under ctx until it ends or Abort is called. While a run is active it fails with
// ErrAgentBusy.
func (a *Agent) Prompt(ctx context.Context, messages ...Message) error {
	if len(messages) == 0 {
		return errors.New("tinypi: Prompt: no messages")
	}
	return a.start(ctx, messages)
}

// Continue starts a run from the transcript as it is, for a transcript that ends with a user
// message or a tool result (ErrNothingToContinue otherwise). While a run is active it fails
// with ErrAgentBusy.
func (a *Agent) Continue(ctx context.Context) error {
	return a.start(ctx, nil)
}

// start begins a new run whose transcript is the agent's followed by added: it publishes
// run_start and starts the run's goroutine.
func (a *Agent) start(ctx context.Context, added []Message) error {
	//lab:begin 9.3
	a.mu.Lock()
	if a.state.Running {
		id := a.state.RunID
		a.mu.Unlock()
		return fmt.Errorf("%w (run %d)", ErrAgentBusy, id)
	}
	transcript := append(CloneMessages(a.state.Messages), CloneMessages(added)...)
	if len(added) == 0 && !continuable(transcript) {
		a.mu.Unlock()
		return ErrNothingToContinue
	}
	//chapter:begin 10
	if err := a.logPrompt(added); err != nil {
		a.mu.Unlock()
		return err
	}
	//chapter:end
	a.lastRunID++
	id := a.lastRunID
	runCtx, cancel := context.WithCancel(ctx)
	a.cancel, a.closing = cancel, false
	a.publishLocked(RunStartEvent{RunID: id, Messages: transcript})
	a.mu.Unlock()
	a.deliver()
	go a.run(runCtx, cancel, id, transcript)
	return nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// continuable reports whether the model has something to answer at the end of messages.
func continuable(messages []Message) bool {
	return len(messages) > 0 && messages[len(messages)-1].MessageRole() != RoleAssistant
}

// Steer queues m for the active run: it is appended before the next model request (after the
// current tool batch, or after the current answer). A message queued before the run's first
// request (by a subscriber at run_start, say) is in that request. Without a run that can take
// it, Steer fails with ErrAgentIdle; a run that ends without taking it reports it in run_end's
// Dropped.
func (a *Agent) Steer(m Message) error {
	return a.enqueue(&a.steering, m)
}

// FollowUp queues m for the active run: it is appended only when the run would otherwise stop,
// and the run goes on with it. Without a run that can take it, FollowUp fails with
// ErrAgentIdle; a run that ends without taking it reports it in run_end's Dropped.
func (a *Agent) FollowUp(m Message) error {
	return a.enqueue(&a.followUp, m)
}

// enqueue adds a copy of m to q if the active run can still take it.
func (a *Agent) enqueue(q *messageQueue, m Message) error {
	//lab:begin 9.3
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.state.Running || a.closing {
		return ErrAgentIdle
	}
	//chapter:begin 10
	if _, ok := m.(UserMessage); !ok && a.opts.Session != nil {
		return fmt.Errorf("tinypi: with a session only user messages can be queued, not %T", m)
	}
	//chapter:end
	q.items = append(q.items, CloneMessage(m))
	return nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// take removes and returns what one poll takes from q: the oldest message, or all of them in
// QueueAll mode.
func (q *messageQueue) take() []Message {
	//lab:begin 9.2
	if len(q.items) == 0 {
		return nil
	}
	n := 1
	if q.mode == QueueAll {
		n = len(q.items)
	}
	taken := slices.Clone(q.items[:n])
	q.items = slices.Delete(q.items, 0, n)
	return taken
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// takeSteering is the run's Steering hook.
func (a *Agent) takeSteering() []Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.steering.take()
}

// takeFollowUp is the run's FollowUp hook, asked when the run would stop. A steering message
// that arrived since the last poll goes first. When both queues are empty the run stops, so
// from here on Steer and FollowUp refuse: nothing would take their messages. Finding the
// queues empty and closing them happen under one hold of the lock: a Steer between the two
// would be accepted and never taken.
func (a *Agent) takeFollowUp() []Message {
	//lab:begin 9.3
	a.mu.Lock()
	defer a.mu.Unlock()
	if m := a.steering.take(); len(m) > 0 {
		return m
	}
	if m := a.followUp.take(); len(m) > 0 {
		return m
	}
	a.closing = true
	return nil
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// run drives run id on its own goroutine and publishes its run_end. A panic anywhere in the run
// (a broken model, a failing lab) ends the run with error instead of the process.
func (a *Agent) run(ctx context.Context, cancel context.CancelFunc, id int, transcript []Message) {
	defer cancel()
	var end RunEndEvent
	func() {
		defer func() {
			if p := recover(); p != nil {
				end = RunEndEvent{RunID: id, Reason: RunError, Error: fmt.Sprintf("tinypi: agent run %d panicked: %v", id, p)}
			}
		}()
		result, err := RunAgentLoop(ctx, AgentLoopOptions{
			Context:         AgentContext{SystemPrompt: a.opts.SystemPrompt, Messages: transcript},
			Model:           guardedModel{a.opts.Model},
			Tools:           a.opts.Tools,
			ExecuteToolCall: a.opts.ExecuteToolCall,
			MaxSteps:        a.opts.MaxSteps,
			OnEvent:         func(e LoopEvent) { a.publish(RunLoopEvent{RunID: id, Event: e}) },
			Steering:        a.takeSteering,
			FollowUp:        a.takeFollowUp,
			//chapter:begin 10
			Session: a.opts.Session,
			//chapter:end
			//chapter:begin 11
			Compaction: a.opts.Compaction,
			//chapter:end
			//chapter:begin 12
			Hooks:            a.opts.Hooks,
			ToolExecution:    a.opts.ToolExecution,
			MaxParallelTools: a.opts.MaxParallelTools,
			//chapter:end
		})
		if err != nil {
			end = RunEndEvent{RunID: id, Reason: RunError, Error: err.Error()}
			return
		}
		end = RunEndEvent{RunID: id, Reason: result.Reason, Messages: result.Messages, Error: runError(result)}
	}()
	//chapter:begin 10
	if a.opts.Session != nil {
		// Durable at idle. A write error is sticky and fails the next barrier, a model request's.
		_ = a.opts.Session.Flush(context.Background())
	}
	//chapter:end
	a.mu.Lock()
	end.Dropped = a.endRunLocked()
	a.publishLocked(end)
	a.mu.Unlock()
	a.deliver()
}

// endRunLocked forgets the active run and empties its queues. It returns what they still held,
// the messages the run accepted and never took (it failed, was aborted, or reached MaxSteps or a
// length stop): steering first, then follow-ups, each oldest first; nil when both are empty.
// The caller reports them in run_end's Dropped, so that none is lost without a trace, and the
// next run starts with empty queues.
func (a *Agent) endRunLocked() (dropped []Message) {
	a.cancel = nil
	//lab:begin 9.4
	dropped = slices.Concat(a.steering.items, a.followUp.items)
	a.steering.items, a.followUp.items = nil, nil
	return dropped
	//lab:stub
	//	return nil
	//lab:end
}

// Abort cancels the active run, if any, and returns without waiting, also when called from a
// subscriber: the run ends aborted, every tool call in it still gets its result, and what its
// queues still hold is reported in run_end's Dropped. With no active run it does nothing (the
// next run is not affected). Use WaitForIdle to wait for the end. The run's context is cancelled
// before Abort returns.
func (a *Agent) Abort() {
	//lab:begin 9.4
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cancel != nil {
		a.cancel()
	}
	//lab:end
}

// runError says why a run ended with error or aborted: the message of its last assistant, or
// the reason when the assistant has none (a run aborted during its tools). Empty for any other
// end.
func runError(result AgentRunResult) string {
	//lab:begin 9.4
	if result.Reason != RunError && result.Reason != RunAborted {
		return ""
	}
	for _, m := range slices.Backward(result.Messages) {
		if assistant, ok := m.(AssistantMessage); ok && assistant.ErrorMessage != "" {
			return assistant.ErrorMessage
		}
		if m.MessageRole() == RoleAssistant {
			break
		}
	}
	return "run ended: " + string(result.Reason)
	//lab:stub
	//	if result.Reason == RunStop {
	//		return ""
	//	}
	//	panic(LAB_PENDING)
	//lab:end
}

// guardedModel turns every failure of a model into a stream that ends with an error event, so
// that the loop records it as an assistant message with stop reason error.
type guardedModel struct{ Model }

// Stream implements Model.
func (m guardedModel) Stream(ctx context.Context, req Request) (stream *AssistantStream) {
	defer func() {
		if p := recover(); p != nil {
			stream = failedStream(fmt.Sprintf("model panicked: %v", p))
		}
	}()
	if stream = m.Model.Stream(ctx, req); stream == nil {
		return failedStream("model returned no stream")
	}
	return stream
}

// failedStream is a complete stream whose only event is an error with message msg.
func failedStream(msg string) *AssistantStream {
	//lab:begin 9.4
	stream := NewAssistantStream()
	stream.Push(ErrorEvent{Message: AssistantMessage{StopReason: StopReasonError, ErrorMessage: msg, Timestamp: time.Now().UnixMilli()}})
	return stream
	//lab:end
}

// WaitForIdle waits until no run is active and every event has reached every subscriber, or
// ctx ends (it then returns ctx's error). Never call it from a subscriber.
func (a *Agent) WaitForIdle(ctx context.Context) error {
	//lab:begin 9.3
	a.mu.Lock()
	quiet := a.quiet
	a.mu.Unlock()
	if quiet == nil {
		return nil
	}
	select {
	case <-quiet:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// Reset clears the transcript, the last error, the dropped messages and the recorded
// subscriber panics; system prompt, model, tools and subscribers stay, and run ids go on from
// where they were. While a run is active it fails with ErrAgentBusy.
func (a *Agent) Reset() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.state.Running {
		return fmt.Errorf("%w (run %d)", ErrAgentBusy, a.state.RunID)
	}
	//chapter:begin 10
	if a.opts.Session != nil {
		return errors.New("tinypi: Reset: the session log is append-only; fork it at a turn boundary or start a new session")
	}
	//chapter:end
	a.state.Messages, a.state.LastError, a.state.Dropped, a.state.SubscriberErrors = nil, "", nil, nil
	return nil
}

// Subscribe registers fn for every event published from now on and returns the function that
// removes exactly this subscription (calling it again does nothing). Events reach the
// subscribers one at a time (never two subscriber calls at once), in the order they happened,
// each event to every subscriber before the next; an event raised inside a subscriber (it calls
// Prompt, say) is delivered after the current one. Each event goes to the subscriptions that
// exist when its delivery begins, all of them: one added during the delivery gets the next
// event first, and one removed during it still gets this event and no later one. Every
// subscriber gets its own deep copy of every event. A subscriber that panics is recorded in
// State().SubscriberErrors; the others still get the event.
func (a *Agent) Subscribe(fn func(AgentEvent)) (unsubscribe func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.nextSubID++
	id := a.nextSubID
	a.subscribers = append(a.subscribers, subscriber{id: id, fn: fn})
	return func() { a.unsubscribe(id) }
}

// unsubscribe removes the subscription id, if it is still there.
func (a *Agent) unsubscribe(id int) {
	//lab:begin 9.5
	a.mu.Lock()
	defer a.mu.Unlock()
	a.subscribers = slices.DeleteFunc(a.subscribers, func(s subscriber) bool { return s.id == id })
	//lab:stub
	//	panic(LAB_PENDING)
	//lab:end
}

// publish reduces e into the state and delivers it.
func (a *Agent) publish(e AgentEvent) {
	a.mu.Lock()
	a.publishLocked(e)
	a.mu.Unlock()
	a.deliver()
}

// publishLocked reduces e into the state and queues it for delivery. The agent hands its state
// over to the reducer (handedOver): it keeps only the result, and nobody else holds the state's
// arrays (State returns a deep copy), so the loop events' part of the reducer may grow them in
// place and a batch of n tool calls costs O(n), not O(n²). The flag is set on a copy, so a
// reducer that panics leaves the agent's state as it was and never handed over.
func (a *Agent) publishLocked(e AgentEvent) {
	s := a.state
	s.handedOver = true
	s = ReduceAgentState(s, e)
	s.handedOver = false
	a.state = s
	a.outbox = append(a.outbox, e)
	if a.quiet == nil {
		a.quiet = make(chan struct{})
	}
}

// settleLocked closes quiet once no run is active and nothing is left to deliver.
func (a *Agent) settleLocked() {
	if a.quiet != nil && !a.state.Running && !a.delivering && len(a.outbox) == 0 {
		close(a.quiet)
		a.quiet = nil
	}
}

// deliver hands the queued events to the subscribers, in order, one subscriber call at a time,
// each subscriber with its own deep copy of each event: a subscriber that changes an event's
// messages changes nothing that the subscribers after it, the state or the run see. Each event
// goes to the subscriptions that exist when its delivery begins (a copy of the list). Only one
// goroutine delivers at a time: a call that finds another delivery under way (on another
// goroutine, or further up its own stack, inside a subscriber) leaves its events to that one and
// returns.
func (a *Agent) deliver() {
	//lab:begin 9.5
	a.mu.Lock()
	if a.delivering {
		a.mu.Unlock()
		return
	}
	a.delivering = true
	for len(a.outbox) > 0 {
		e := a.outbox[0]
		a.outbox = a.outbox[1:]
		subscribers := slices.Clone(a.subscribers)
		a.mu.Unlock()
		for _, s := range subscribers {
			a.callSubscriber(s, cloneAgentEvent(e))
		}
		a.mu.Lock()
	}
	a.delivering = false
	a.settleLocked()
	a.mu.Unlock()
	//lab:stub
	//	a.mu.Lock()
	//	if a.delivering {
	//		a.state.SubscriberErrors = append(a.state.SubscriberErrors, LAB_PENDING)
	//	}
	//	a.delivering = true
	//	events, subscribers := a.outbox, slices.Clone(a.subscribers)
	//	a.outbox = nil
	//	a.mu.Unlock()
	//	for _, e := range events {
	//		for _, s := range subscribers {
	//			a.callSubscriber(s, e)
	//		}
	//	}
	//	a.mu.Lock()
	//	a.delivering = false
	//	a.settleLocked()
	//	a.mu.Unlock()
	//lab:end
}

// callSubscriber calls one subscriber with e, which is that subscriber's own copy; a panic is
// recorded, not passed on.
func (a *Agent) callSubscriber(s subscriber, e AgentEvent) {
	//lab:begin 9.5
	defer func() {
		if p := recover(); p != nil {
			a.mu.Lock()
			a.state.SubscriberErrors = append(a.state.SubscriberErrors, fmt.Sprintf("subscriber %d panicked on %s: %v", s.id, e.EventType(), p))
			a.mu.Unlock()
		}
	}()
	s.fn(e)
	//lab:stub
	//	defer func() {
	//		if p := recover(); p != nil {
	//			a.mu.Lock()
	//			a.state.SubscriberErrors = append(a.state.SubscriberErrors, LAB_PENDING)
	//			a.mu.Unlock()
	//		}
	//	}()
	//	s.fn(e)
	//lab:end
}

//chapter:begin 10

// logPrompt logs the messages a Prompt adds, all or none: with a session they must be user
// messages, since a result enters the log only with its call.
func (a *Agent) logPrompt(added []Message) error {
	if a.opts.Session == nil {
		return nil
	}
	for _, m := range added {
		if _, ok := m.(UserMessage); !ok {
			return fmt.Errorf("tinypi: Prompt: with a session only user messages can be prompted, not %T", m)
		}
	}
	for _, m := range added {
		if _, err := a.opts.Session.AppendMessage(m); err != nil {
			return err
		}
	}
	return nil
}

//chapter:end
