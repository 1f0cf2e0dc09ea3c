package tinypi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// A RunRecord is kept so that a failing test's run can be compared with the reference run of
// the same test: the focused tests record the run they drove when RunRecordDirEnv is set, and
// `course transcript` shows the learner's record next to the reference's, first difference
// marked. Nothing in the runtime depends on it.

// RunRecordDirEnv names the environment variable that asks the focused tests to record their
// runs: when it holds a directory, each test writes its RunRecord there.
const RunRecordDirEnv = "TINYPI_TRANSCRIPT_DIR"

// RunRecordFormat is the version of the JSON form WriteRunRecord writes; a reader refuses any
// other. The reader is the course kit's (`course transcript`): this package only writes.
const RunRecordFormat = 1

// RunRecord is one agent run as a test drove it.
type RunRecord struct {
	// Test is the full name of the test (with subtest names, "TestX/case").
	Test string
	// Failed says whether the test failed.
	Failed bool
	// Requests are the model requests, in order.
	Requests []Request
	// Events are the loop's events, in the order OnEvent saw them.
	Events []LoopEvent
	// Result is what RunAgentLoop returned; zero when it did not return.
	Result AgentRunResult
	// Err is the error RunAgentLoop returned, or the value of the panic that ended the run
	// (a stub's pending message); empty when the run returned normally.
	Err string
}

// RunRecorder collects the RunRecord of one run. It is safe for the loop's concurrent use.
type RunRecorder struct {
	mu  sync.Mutex
	rec RunRecord
}

// NewRunRecorder returns a recorder for a run of the test named test.
func NewRunRecorder(test string) *RunRecorder {
	return &RunRecorder{rec: RunRecord{Test: test}}
}

// Wrap returns opts with its Model and OnEvent wrapped: each request and event is recorded and
// then passed on unchanged. A nil Model stays nil, so RunAgentLoop still refuses it.
func (r *RunRecorder) Wrap(opts AgentLoopOptions) AgentLoopOptions {
	if opts.Model != nil {
		opts.Model = recordingModel{inner: opts.Model, rec: r}
	}
	onEvent := opts.OnEvent
	opts.OnEvent = func(e LoopEvent) {
		r.mu.Lock()
		r.rec.Events = append(r.rec.Events, cloneLoopEvent(e))
		r.mu.Unlock()
		// Outside the lock: the caller's callback sees the calls exactly as the loop made them.
		if onEvent != nil {
			onEvent(e)
		}
	}
	return opts
}

// End records how the run ended: its result, and errText when it returned an error or panicked.
// The result is copied, so later changes by the test do not reach the record.
func (r *RunRecorder) End(res AgentRunResult, errText string) {
	res.Messages = CloneMessages(res.Messages)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.Result = res
	r.rec.Err = errText
}

// Record returns the record so far, with Failed set to failed.
func (r *RunRecorder) Record(failed bool) RunRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.rec
	rec.Failed = failed
	rec.Requests = append([]Request(nil), rec.Requests...)
	rec.Events = append([]LoopEvent(nil), rec.Events...)
	return rec
}

// recordingModel records each request before passing it on.
type recordingModel struct {
	inner Model
	rec   *RunRecorder
}

func (m recordingModel) Stream(ctx context.Context, req Request) *AssistantStream {
	m.rec.mu.Lock()
	m.rec.rec.Requests = append(m.rec.rec.Requests, cloneRequest(req))
	m.rec.mu.Unlock()
	return m.inner.Stream(ctx, req)
}

// cloneLoopEvent copies the messages an event carries, so the record keeps what was reported.
func cloneLoopEvent(e LoopEvent) LoopEvent {
	switch e := e.(type) {
	case ModelEvent:
		switch me := e.Event.(type) {
		case DoneEvent:
			me.Message = CloneMessage(me.Message).(AssistantMessage)
			return ModelEvent{Event: me}
		case ErrorEvent:
			me.Message = CloneMessage(me.Message).(AssistantMessage)
			return ModelEvent{Event: me}
		}
	case AssistantMessageEvent:
		e.Message = CloneMessage(e.Message).(AssistantMessage)
		return e
	case ToolProgressEvent:
		e.Content = append([]ContentBlock(nil), e.Content...)
		return e
	case ToolEndEvent:
		e.Result = CloneMessage(e.Result).(ToolResultMessage)
		return e
	case ToolSkippedEvent:
		e.Result = CloneMessage(e.Result).(ToolResultMessage)
		return e
	//chapter:begin 11
	case CompactionEvent:
		e.Compaction = e.Compaction.clone()
		return e
		//chapter:end
	}
	return e
}

// RunRecordFile returns the file name of test's record: the name with every rune other than a
// letter, digit, '_' or '-' written as %XX bytes (so "/" of a subtest cannot make a directory
// and no two tests share a file), shortened with a hash when it would be too long for a file
// system.
func RunRecordFile(test string) string {
	var b strings.Builder
	for _, r := range test {
		if r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-') {
			b.WriteRune(r)
			continue
		}
		var buf [utf8.UTFMax]byte
		for _, c := range buf[:utf8.EncodeRune(buf[:], r)] {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	name := b.String()
	const maxBytes = 180 // well below the 255-byte limit of common file systems
	if len(name) > maxBytes {
		sum := sha256.Sum256([]byte(test))
		cut := maxBytes - 17
		for !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut] + "-" + hex.EncodeToString(sum[:8])
	}
	return name + ".json"
}

// WriteRunRecord writes rec into dir (created when missing) as RunRecordFile(rec.Test). The
// file is written under a temporary name and renamed, so a reader never sees half a record.
//
// Inside a test, the Stat of dir (by MkdirAll) is logged for go test's cache: a cached result
// stays valid only while dir is unchanged, so a record removed since is written again.
func WriteRunRecord(dir string, rec RunRecord) error {
	data, err := marshalRunRecord(rec)
	if err != nil {
		return fmt.Errorf("tinypi: record of %s: %w", rec.Test, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("tinypi: record of %s: %w", rec.Test, err)
	}
	tmp, err := os.CreateTemp(dir, ".record-*.tmp")
	if err != nil {
		return fmt.Errorf("tinypi: record of %s: %w", rec.Test, err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("tinypi: writing the record of %s: %w", rec.Test, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, RunRecordFile(rec.Test))); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("tinypi: writing the record of %s: %w", rec.Test, err)
	}
	return nil
}

// --- JSON -------------------------------------------------------------------------------------

type runRecordJSON struct {
	Format   int             `json:"format"`
	Test     string          `json:"test"`
	Failed   bool            `json:"failed"`
	Err      string          `json:"err,omitempty"`
	Requests []requestJSON   `json:"requests"`
	Events   []loopEventJSON `json:"events"`
	Result   resultJSON      `json:"result"`
}

type requestJSON struct {
	SystemPrompt string               `json:"systemPrompt"`
	Tools        []toolDefinitionJSON `json:"tools"`
	Messages     json.RawMessage      `json:"messages"`
}

type toolDefinitionJSON struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Parameters  string `json:"parameters,omitempty"`
}

type resultJSON struct {
	Reason   RunReason       `json:"reason"`
	Steps    int             `json:"steps"`
	Messages json.RawMessage `json:"messages"`
}

// loopEventJSON is a LoopEvent tagged by its EventType; only the fields of that type are set.
type loopEventJSON struct {
	Type    string          `json:"type"`
	Event   *modelEventJSON `json:"event,omitempty"`   // model_event
	Message json.RawMessage `json:"message,omitempty"` // assistant_message
	Call    *blockJSON      `json:"call,omitempty"`    // tool_start
	CallID  string          `json:"callId,omitempty"`  // tool_progress
	Content []blockJSON     `json:"content,omitempty"` // tool_progress
	Result  json.RawMessage `json:"result,omitempty"`  // tool_end, tool_skipped
	Reason  RunReason       `json:"reason,omitempty"`  // turn_end
	Steps   *int            `json:"steps,omitempty"`   // turn_end
	//chapter:begin 11
	Compaction *compactionEventJSON `json:"compaction,omitempty"` // compaction
	//chapter:end
}

//chapter:begin 11

// compactionEventJSON is a CompactionEvent: its reason, and what was logged or why not.
type compactionEventJSON struct {
	Reason     string          `json:"reason"`
	Compaction *compactionData `json:"compaction,omitempty"`
	Error      string          `json:"error,omitempty"`
}

//chapter:end

// modelEventJSON is an AssistantEvent tagged by its EventType.
type modelEventJSON struct {
	Type         string          `json:"type"`
	ContentIndex *int            `json:"contentIndex,omitempty"`
	Delta        string          `json:"delta,omitempty"`
	ToolCall     *blockJSON      `json:"toolCall,omitempty"`
	Message      json.RawMessage `json:"message,omitempty"` // done, error
}

func marshalRunRecord(rec RunRecord) ([]byte, error) {
	j := runRecordJSON{Format: RunRecordFormat, Test: rec.Test, Failed: rec.Failed, Err: rec.Err,
		Requests: []requestJSON{}, Events: []loopEventJSON{}}
	for i, req := range rec.Requests {
		messages, err := MarshalMessages(req.Messages)
		if err != nil {
			return nil, fmt.Errorf("request %d: %w", i+1, err)
		}
		tools := make([]toolDefinitionJSON, len(req.Tools))
		for k, t := range req.Tools {
			tools[k] = toolDefinitionJSON(t)
		}
		j.Requests = append(j.Requests, requestJSON{SystemPrompt: req.SystemPrompt, Tools: tools, Messages: messages})
	}
	for i, e := range rec.Events {
		ej, err := encodeLoopEvent(e)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", i+1, err)
		}
		j.Events = append(j.Events, ej)
	}
	messages, err := MarshalMessages(rec.Result.Messages)
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	j.Result = resultJSON{Reason: rec.Result.Reason, Steps: rec.Result.Steps, Messages: messages}
	data, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func encodeLoopEvent(e LoopEvent) (loopEventJSON, error) {
	j := loopEventJSON{Type: e.EventType()}
	var err error
	switch e := e.(type) {
	case ModelEvent:
		j.Event, err = encodeModelEvent(e.Event)
	case AssistantMessageEvent:
		j.Message, err = MarshalMessage(e.Message)
	case ToolStartEvent:
		j.Call = &encodeBlocks([]ContentBlock{e.Call})[0]
	case ToolProgressEvent:
		j.CallID, j.Content = e.CallID, encodeBlocks(e.Content)
	case ToolEndEvent:
		j.Result, err = MarshalMessage(e.Result)
	case ToolSkippedEvent:
		j.Result, err = MarshalMessage(e.Result)
	case TurnEndEvent:
		steps := e.Steps
		j.Reason, j.Steps = e.Reason, &steps
	//chapter:begin 11
	case CompactionEvent:
		j.Compaction = &compactionEventJSON{Reason: e.Reason, Error: e.Error}
		if e.Compaction != nil {
			data := encodeCompaction(e.Compaction)
			j.Compaction.Compaction = &data
		}
	//chapter:end
	default:
		return j, fmt.Errorf("cannot encode loop event of type %T", e)
	}
	return j, err
}

func encodeModelEvent(e AssistantEvent) (*modelEventJSON, error) {
	if e == nil {
		return nil, errors.New("model event is nil")
	}
	j := &modelEventJSON{Type: e.EventType()}
	var err error
	switch e := e.(type) {
	case StartEvent:
	case TextDeltaEvent:
		j.ContentIndex, j.Delta = &e.ContentIndex, e.Delta
	case ThinkingDeltaEvent:
		j.ContentIndex, j.Delta = &e.ContentIndex, e.Delta
	case ToolCallDeltaEvent:
		j.ContentIndex, j.Delta = &e.ContentIndex, e.Delta
	case ToolCallEndEvent:
		j.ContentIndex, j.ToolCall = &e.ContentIndex, &encodeBlocks([]ContentBlock{e.ToolCall})[0]
	case DoneEvent:
		j.Message, err = MarshalMessage(e.Message)
	case ErrorEvent:
		j.Message, err = MarshalMessage(e.Message)
	default:
		return nil, fmt.Errorf("cannot encode model event of type %T", e)
	}
	return j, err
}
