package tinypi

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ch03Transcript returns a fresh transcript with one message of every kind: the README round
// trip of the course, with every field set.
func ch03Transcript() []Message {
	return []Message{
		UserMessage{Content: []ContentBlock{Text("请读取 README.md，并告诉我项目名。")}, Timestamp: 1},
		AssistantMessage{
			Content: []ContentBlock{
				ThinkingContent{Thinking: "需要先看文件。"},
				Text("我先读取项目说明。"),
				ToolCall{ID: "call-1", Name: "read", Arguments: `{"path":"README.md"}`},
			},
			StopReason: StopReasonToolUse,
			Usage:      Usage{Input: 12, Output: 7, CacheRead: 3, Total: 22},
			ID:         "resp-1",
			Model:      "scripted",
			Timestamp:  2,
		},
		ToolResultMessage{
			ToolCallID: "call-1",
			ToolName:   "read",
			Content:    []ContentBlock{Text("# tiny-pi\nA small agent runtime.")},
			Details: map[string]any{
				"path":  "README.md",
				"lines": []any{"# tiny-pi", "A small agent runtime."},
				"stat":  map[string]any{"size": 33.0, "binary": false},
			},
			Timestamp: 3,
		},
		AssistantMessage{
			Content:      []ContentBlock{Text("项目名是 tiny-pi。")},
			StopReason:   StopReasonError,
			ErrorMessage: "provider: connection reset",
			Timestamp:    4,
		},
		ToolResultMessage{
			ToolCallID: "call-2",
			ToolName:   "bash",
			Content:    []ContentBlock{Text("command not found")},
			IsError:    true,
			Timestamp:  5,
		},
	}
}

func TestLab3_1_文本投影(t *testing.T) {
	defer guardLab(t)
	tests := []struct {
		name    string
		content []ContentBlock
		want    string
	}{
		{"no content", nil, ""},
		{"one text", []ContentBlock{Text("hello")}, "hello"},
		{
			"texts joined in order; thinking and tool calls left out",
			[]ContentBlock{
				ThinkingContent{Thinking: "let me think"},
				Text("项目名是 "),
				ToolCall{ID: "call-1", Name: "read", Arguments: `{"path":"README.md"}`},
				Text("tiny-pi。"),
			},
			"项目名是 tiny-pi。",
		},
	}
	for _, tt := range tests {
		if got := TextOf(tt.content); got != tt.want {
			t.Errorf("%s: TextOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestLab3_1_文本投影_工具调用(t *testing.T) {
	defer guardLab(t)
	read := ToolCall{ID: "call-1", Name: "read", Arguments: `{"path":"README.md"}`}
	list := ToolCall{ID: "call-2", Name: "ls", Arguments: `{}`}
	m := AssistantMessage{
		Content:    []ContentBlock{Text("我先看看。"), read, ThinkingContent{Thinking: "两个都要"}, list},
		StopReason: StopReasonToolUse,
	}
	if diff := cmp.Diff([]ToolCall{read, list}, m.ToolCalls()); diff != "" {
		t.Errorf("ToolCalls (-want +got):\n%s\nevery tool call, in content order", diff)
	}
	if calls := (AssistantMessage{Content: []ContentBlock{Text("done")}}).ToolCalls(); len(calls) != 0 {
		t.Errorf("ToolCalls of a text-only message = %v, want none", calls)
	}
}

func TestLab3_2_深拷贝_内容(t *testing.T) {
	defer guardLab(t)
	original := ch03Transcript()
	clone := CloneMessages(original)
	if diff := cmp.Diff(ch03Transcript(), clone); diff != "" {
		t.Fatalf("the copy differs from the original (-want +got):\n%s", diff)
	}

	// Change every content block of the copy in place, where a shallow copy shares memory with
	// the original, then replace a whole message and append one.
	for _, m := range clone {
		content := ch03Content(m)
		for j := range content {
			content[j] = Text("changed in the copy")
		}
	}
	clone[0] = UserText("replaced")
	_ = append(clone, UserText("one more"))

	want := ch03Transcript()
	for i := range want {
		if diff := cmp.Diff(want[i], original[i]); diff != "" {
			t.Errorf("changing the content of the copy's message %d (%s) changed the original (-want +got):\n%s\ncopy the Content slice of every kind of message",
				i, want[i].MessageRole(), diff)
		}
	}
	if CloneMessages(nil) != nil {
		t.Errorf("CloneMessages(nil) must stay nil")
	}
}

// ch03Content returns the content slice of m (sharing its backing array).
func ch03Content(m Message) []ContentBlock {
	switch m := m.(type) {
	case UserMessage:
		return m.Content
	case AssistantMessage:
		return m.Content
	case ToolResultMessage:
		return m.Content
	}
	return nil
}

func TestLab3_2_深拷贝_细节(t *testing.T) {
	defer guardLab(t)
	original := ch03Transcript()[2].(ToolResultMessage)
	clone := CloneMessage(original).(ToolResultMessage)

	clone.Details["path"] = "other.md"
	clone.Details["lines"].([]any)[0] = "# changed"
	clone.Details["stat"].(map[string]any)["size"] = 0.0
	delete(clone.Details, "stat")

	// Name the details that changed: the outer map, a nested slice and a nested map are three
	// places a copy can stop too early.
	want := ch03Transcript()[2].(ToolResultMessage)
	var changed []string
	for _, key := range []string{"lines", "path", "stat"} {
		if !cmp.Equal(want.Details[key], original.Details[key]) {
			changed = append(changed, key)
		}
	}
	if diff := cmp.Diff(want, original); diff != "" {
		t.Errorf("changing the copy's details changed the original's %s (-want +got):\n%s\nnested maps and slices must be copied too",
			strings.Join(changed, ", "), diff)
	}
	if got := CloneMessage(ToolResultMessage{ToolCallID: "x"}).(ToolResultMessage); got.Details != nil {
		t.Errorf("nil details cloned to %v, want nil", got.Details)
	}
}

func TestLab3_3_JSON往返(t *testing.T) {
	defer guardLab(t)
	for i, m := range ch03Transcript() {
		data, err := MarshalMessage(m)
		if err != nil {
			t.Fatalf("message %d: MarshalMessage: %v", i, err)
		}
		got, err := UnmarshalMessage(data)
		if err != nil {
			t.Fatalf("message %d: UnmarshalMessage(%s): %v", i, data, err)
		}
		if diff := cmp.Diff(m, got); diff != "" {
			t.Errorf("message %d: round trip through %s (-want +got):\n%s", i, data, diff)
		}
	}

	// The wire names are part of the contract: other programs read these files.
	data, err := MarshalMessages(ch03Transcript())
	if err != nil {
		t.Fatalf("MarshalMessages: %v", err)
	}
	var wire []struct {
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
		} `json:"content"`
	}
	if err := json.Unmarshal(data, &wire); err != nil {
		t.Fatalf("MarshalMessages wrote invalid JSON: %v\n%s", err, data)
	}
	var roles, types []string
	for _, m := range wire {
		roles = append(roles, m.Role)
		for _, b := range m.Content {
			types = append(types, b.Type)
		}
	}
	if diff := cmp.Diff([]string{"user", "assistant", "toolResult", "assistant", "toolResult"}, roles); diff != "" {
		t.Errorf("wire roles (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"text", "thinking", "text", "toolCall", "text", "text", "text"}, types); diff != "" {
		t.Errorf("wire block types (-want +got):\n%s", diff)
	}
	back, err := UnmarshalMessages(data)
	if err != nil {
		t.Fatalf("UnmarshalMessages: %v", err)
	}
	if diff := cmp.Diff(ch03Transcript(), back); diff != "" {
		t.Errorf("transcript round trip (-want +got):\n%s", diff)
	}
}

func TestLab3_3_JSON往返_拒绝未知类型(t *testing.T) {
	defer guardLab(t)
	tests := []struct {
		name string
		data string
		want []string // parts the error message must contain
	}{
		{"unknown role", `{"role":"system","content":[{"type":"text","text":"hi"}]}`, []string{`unknown role "system"`}},
		{"missing role", `{"content":[]}`, []string{`unknown role ""`}},
		{"unknown block type", `{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"}]}`, []string{"content block 1", `unknown type "image"`}},
		{"not JSON", `{"role":`, []string{"decode message"}},
	}
	for _, tt := range tests {
		m, err := UnmarshalMessage([]byte(tt.data))
		if err == nil {
			t.Errorf("%s: UnmarshalMessage(%s) = %#v, want an error", tt.name, tt.data, m)
			continue
		}
		for _, part := range tt.want {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("%s: error %q does not contain %q", tt.name, err, part)
			}
		}
	}
	// The decoder's own error stays reachable through the chain (%w, not %v).
	if _, err := UnmarshalMessage([]byte(`{"role":`)); err != nil {
		var syntax *json.SyntaxError
		if !errors.As(err, &syntax) {
			t.Errorf("not JSON: errors.As(err, *json.SyntaxError) = false for %q; wrap the decoder's error with %%w", err)
		}
	}
	if _, err := UnmarshalMessage([]byte(`{"role":"user","timestamp":"soon"}`)); err != nil {
		var typ *json.UnmarshalTypeError
		if !errors.As(err, &typ) {
			t.Errorf("wrong field type: errors.As(err, *json.UnmarshalTypeError) = false for %q; wrap the decoder's error with %%w", err)
		}
	} else {
		t.Errorf(`UnmarshalMessage({"role":"user","timestamp":"soon"}) succeeded, want an error`)
	}
	_, err := UnmarshalMessages([]byte(`[{"role":"user","content":[]},{"role":"robot","content":[]}]`))
	if err == nil || !strings.Contains(err.Error(), "message 1") || !strings.Contains(err.Error(), `"robot"`) {
		t.Errorf("UnmarshalMessages with a bad second message: error = %v, want it to name message 1 and the role", err)
	}
	if _, err := MarshalMessage(nil); err == nil {
		t.Errorf("MarshalMessage(nil) succeeded, want an error")
	}
}

func TestLab3_4_错误终止(t *testing.T) {
	defer guardLab(t)
	failed := AssistantMessage{
		Content:      []ContentBlock{Text("我先")},
		StopReason:   StopReasonError,
		ErrorMessage: "provider: 500 internal error",
		Model:        "scripted",
	}
	stream := NewAssistantStream()
	stream.Push(StartEvent{})
	stream.Push(TextDeltaEvent{ContentIndex: 0, Delta: "我先"})
	stream.Push(ErrorEvent{Message: failed})
	stream.Push(TextDeltaEvent{ContentIndex: 0, Delta: "读取"}) // after the end: dropped
	stream.Close()                                            // producers always close; harmless here

	got, err := stream.Result()
	if err != nil {
		t.Fatalf("Result() error = %v; an error event is a terminal event, its message is the result", err)
	}
	if diff := cmp.Diff(failed, got); diff != "" {
		t.Errorf("Result() (-want +got):\n%s", diff)
	}
	var types []string
	for e := range stream.All() {
		types = append(types, e.EventType())
	}
	if diff := cmp.Diff([]string{"start", "text_delta", "error"}, types); diff != "" {
		t.Errorf("event types (-want +got):\n%s\nthe error event is the last one", diff)
	}
}

func TestLab3_4_错误终止_正常完成(t *testing.T) {
	defer guardLab(t)
	call := ToolCall{ID: "call-1", Name: "read", Arguments: `{"path":"README.md"}`}
	answer := AssistantMessage{Content: []ContentBlock{Text("我先读取项目说明。"), call}, StopReason: StopReasonToolUse}
	stream := NewAssistantStream()
	events := []AssistantEvent{
		StartEvent{},
		TextDeltaEvent{ContentIndex: 0, Delta: "我先读取项目说明。"},
		ToolCallDeltaEvent{ContentIndex: 1, Delta: call.Arguments},
		ToolCallEndEvent{ContentIndex: 1, ToolCall: call}, // not terminal: the response goes on
		DoneEvent{Message: answer},
	}
	for _, e := range events {
		stream.Push(e)
	}
	stream.Push(ErrorEvent{Message: AssistantMessage{StopReason: StopReasonAborted}}) // too late
	stream.Close()

	got, err := stream.Result()
	if err != nil {
		t.Fatalf("Result() error = %v, want the done event's message", err)
	}
	if diff := cmp.Diff(answer, got); diff != "" {
		t.Errorf("Result() (-want +got):\n%s", diff)
	}
	if n := len(slices.Collect(stream.All())); n != len(events) {
		t.Errorf("stream holds %d events, want %d (everything up to and including done)", n, len(events))
	}
}
