package tinypi

import (
	"encoding/json"
	"fmt"
)

// MarshalAgentEvent encodes an agent event as one JSON object on one line: "type" is the
// event's EventType, "run" its run id, and the rest its fields; messages as MarshalMessage
// encodes them, a model event's stream event as the proxy sends it (without what the deltas
// carried).
func MarshalAgentEvent(e AgentEvent) ([]byte, error) {
	obj := map[string]any{"type": e.EventType(), "run": e.Run()}
	message := func(key string, m Message) error {
		raw, err := MarshalMessage(m)
		if err != nil {
			return err
		}
		obj[key] = json.RawMessage(raw)
		return nil
	}
	messages := func(key string, ms []Message) error {
		if ms == nil {
			return nil
		}
		raw, err := MarshalMessages(ms)
		if err != nil {
			return err
		}
		obj[key] = json.RawMessage(raw)
		return nil
	}
	var err error
	switch e := e.(type) {
	case RunStartEvent:
		err = messages("messages", e.Messages)
	case RunEndEvent:
		obj["reason"] = e.Reason
		if e.Error != "" {
			obj["error"] = e.Error
		}
		if err = messages("messages", e.Messages); err == nil {
			err = messages("dropped", e.Dropped)
		}
	case RunLoopEvent:
		switch le := e.Event.(type) {
		case ModelEvent:
			obj["event"] = wireEvent(le.Event)
		case AssistantMessageEvent:
			err = message("message", le.Message)
		case ToolStartEvent:
			obj["call"] = map[string]string{"id": le.Call.ID, "name": le.Call.Name, "arguments": le.Call.Arguments}
		case ToolProgressEvent:
			obj["callId"] = le.CallID
			obj["text"] = TextOf(le.Content)
		case ToolEndEvent:
			err = message("result", le.Result)
		case ToolSkippedEvent:
			err = message("result", le.Result)
		case TurnEndEvent:
			obj["reason"], obj["steps"] = le.Reason, le.Steps
		case QueuedMessageEvent:
			err = message("message", le.Message)
		case CompactionEvent:
			obj["reason"] = le.Reason
			if le.Error != "" {
				obj["error"] = le.Error
			}
		}
	default:
		return nil, fmt.Errorf("tinypi: cannot encode agent event %T", e)
	}
	if err != nil {
		return nil, fmt.Errorf("tinypi: encode %s event: %w", e.EventType(), err)
	}
	out, err := json.Marshal(obj) // never indented: a line break inside a string is written \n
	if err != nil {
		return nil, fmt.Errorf("tinypi: encode %s event: %w", e.EventType(), err)
	}
	return out, nil
}
