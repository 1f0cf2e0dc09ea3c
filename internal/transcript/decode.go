package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// The decoder of tinypi.WriteRunRecord's JSON lives here, with its only reader: the learner's
// package writes records and never reads them. Messages and content blocks are decoded by
// tinypi's own UnmarshalMessage, so the two sides share one wire form for them; the record's
// frame (requests, events, result) is read below, and a round-trip test keeps it in step with the
// writer.

// recordJSON is the frame of a record file.
type recordJSON struct {
	Format   int    `json:"format"`
	Test     string `json:"test"`
	Failed   bool   `json:"failed"`
	Err      string `json:"err"`
	Requests []struct {
		SystemPrompt string `json:"systemPrompt"`
		Tools        []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			Parameters  string `json:"parameters"`
		} `json:"tools"`
		Messages json.RawMessage `json:"messages"`
	} `json:"requests"`
	Events []eventJSON `json:"events"`
	Result struct {
		Reason   tinypi.RunReason `json:"reason"`
		Steps    int              `json:"steps"`
		Messages json.RawMessage  `json:"messages"`
	} `json:"result"`
}

// eventJSON is one loop event or, as its Event, one model event: a type tag and the fields of
// that type.
type eventJSON struct {
	Type         string           `json:"type"`
	Event        *eventJSON       `json:"event"`        // model_event
	Message      json.RawMessage  `json:"message"`      // assistant_message; done, error
	Call         json.RawMessage  `json:"call"`         // tool_start
	CallID       string           `json:"callId"`       // tool_progress
	Content      json.RawMessage  `json:"content"`      // tool_progress
	Result       json.RawMessage  `json:"result"`       // tool_end, tool_skipped
	Reason       tinypi.RunReason `json:"reason"`       // turn_end
	Steps        *int             `json:"steps"`        // turn_end
	ContentIndex int              `json:"contentIndex"` // deltas, toolcall_end
	Delta        string           `json:"delta"`        // deltas
	ToolCall     json.RawMessage  `json:"toolCall"`     // toolcall_end
}

// readRecord reads a record tinypi.WriteRunRecord wrote.
func readRecord(path string) (tinypi.RunRecord, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return tinypi.RunRecord{}, fmt.Errorf("reading a run record: %w", err)
	}
	rec, err := decodeRecord(data)
	if err != nil {
		return tinypi.RunRecord{}, fmt.Errorf("run record %s: %w", path, err)
	}
	return rec, nil
}

func decodeRecord(data []byte) (tinypi.RunRecord, error) {
	var j recordJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return tinypi.RunRecord{}, err
	}
	if j.Format != tinypi.RunRecordFormat {
		return tinypi.RunRecord{}, fmt.Errorf("format %d, want %d (written by another version of the course?)", j.Format, tinypi.RunRecordFormat)
	}
	rec := tinypi.RunRecord{Test: j.Test, Failed: j.Failed, Err: j.Err}
	for i, rj := range j.Requests {
		messages, err := tinypi.UnmarshalMessages(rj.Messages)
		if err != nil {
			return tinypi.RunRecord{}, fmt.Errorf("request %d: %w", i+1, err)
		}
		req := tinypi.Request{SystemPrompt: rj.SystemPrompt, Messages: messages}
		for _, t := range rj.Tools {
			req.Tools = append(req.Tools, tinypi.ToolDefinition{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
		}
		rec.Requests = append(rec.Requests, req)
	}
	for i, ej := range j.Events {
		e, err := decodeLoopEvent(ej)
		if err != nil {
			return tinypi.RunRecord{}, fmt.Errorf("event %d: %w", i+1, err)
		}
		rec.Events = append(rec.Events, e)
	}
	messages, err := tinypi.UnmarshalMessages(j.Result.Messages)
	if err != nil {
		return tinypi.RunRecord{}, fmt.Errorf("result: %w", err)
	}
	rec.Result = tinypi.AgentRunResult{Reason: j.Result.Reason, Steps: j.Result.Steps, Messages: messages}
	return rec, nil
}

func decodeLoopEvent(j eventJSON) (tinypi.LoopEvent, error) {
	switch j.Type {
	case "model_event":
		e, err := decodeModelEvent(j.Event)
		return tinypi.ModelEvent{Event: e}, err
	case "assistant_message":
		m, err := decodeAs[tinypi.AssistantMessage](j.Message)
		return tinypi.AssistantMessageEvent{Message: m}, err
	case "tool_start":
		call, err := decodeCall(j.Call)
		return tinypi.ToolStartEvent{Call: call}, err
	case "tool_progress":
		content, err := decodeContent(j.Content)
		return tinypi.ToolProgressEvent{CallID: j.CallID, Content: content}, err
	case "tool_end":
		r, err := decodeAs[tinypi.ToolResultMessage](j.Result)
		return tinypi.ToolEndEvent{Result: r}, err
	case "tool_skipped":
		r, err := decodeAs[tinypi.ToolResultMessage](j.Result)
		return tinypi.ToolSkippedEvent{Result: r}, err
	case "turn_end":
		if j.Steps == nil {
			return nil, errors.New("turn_end without steps")
		}
		return tinypi.TurnEndEvent{Reason: j.Reason, Steps: *j.Steps}, nil
	default:
		return nil, fmt.Errorf("unknown loop event type %q", j.Type)
	}
}

func decodeModelEvent(j *eventJSON) (tinypi.AssistantEvent, error) {
	if j == nil {
		return nil, errors.New("model_event without its event")
	}
	switch j.Type {
	case "start":
		return tinypi.StartEvent{}, nil
	case "text_delta":
		return tinypi.TextDeltaEvent{ContentIndex: j.ContentIndex, Delta: j.Delta}, nil
	case "thinking_delta":
		return tinypi.ThinkingDeltaEvent{ContentIndex: j.ContentIndex, Delta: j.Delta}, nil
	case "toolcall_delta":
		return tinypi.ToolCallDeltaEvent{ContentIndex: j.ContentIndex, Delta: j.Delta}, nil
	case "toolcall_end":
		call, err := decodeCall(j.ToolCall)
		return tinypi.ToolCallEndEvent{ContentIndex: j.ContentIndex, ToolCall: call}, err
	case "done":
		m, err := decodeAs[tinypi.AssistantMessage](j.Message)
		return tinypi.DoneEvent{Message: m}, err
	case "error":
		m, err := decodeAs[tinypi.AssistantMessage](j.Message)
		return tinypi.ErrorEvent{Message: m}, err
	default:
		return nil, fmt.Errorf("unknown model event type %q", j.Type)
	}
}

// decodeContent decodes content blocks in the wire form of a message's content, by decoding a
// message that holds them.
func decodeContent(blocks json.RawMessage) ([]tinypi.ContentBlock, error) {
	if len(blocks) == 0 {
		return nil, nil
	}
	wrapped, err := json.Marshal(struct {
		Role    tinypi.Role     `json:"role"`
		Content json.RawMessage `json:"content"`
	}{tinypi.RoleUser, blocks})
	if err != nil {
		return nil, err
	}
	m, err := tinypi.UnmarshalMessage(wrapped)
	if err != nil {
		return nil, err
	}
	return m.(tinypi.UserMessage).Content, nil
}

func decodeCall(block json.RawMessage) (tinypi.ToolCall, error) {
	if len(block) == 0 {
		return tinypi.ToolCall{}, errors.New("tool call missing")
	}
	content, err := decodeContent(json.RawMessage("[" + string(block) + "]"))
	if err != nil {
		return tinypi.ToolCall{}, err
	}
	call, ok := content[0].(tinypi.ToolCall)
	if !ok {
		return tinypi.ToolCall{}, fmt.Errorf("block of type %q where a tool call belongs", content[0].BlockType())
	}
	return call, nil
}

// decodeAs decodes one message and checks that it has the role M.
func decodeAs[M tinypi.Message](data json.RawMessage) (M, error) {
	var zero M
	m, err := tinypi.UnmarshalMessage(data)
	if err != nil {
		return zero, err
	}
	typed, ok := m.(M)
	if !ok {
		return zero, fmt.Errorf("%s message where a %s message belongs", m.MessageRole(), zero.MessageRole())
	}
	return typed, nil
}
