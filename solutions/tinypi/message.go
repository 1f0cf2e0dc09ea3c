package tinypi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Role names who produced a message.
type Role string

// The three roles a transcript can hold.
const (
	RoleUser       Role = "user"
	RoleAssistant  Role = "assistant"
	RoleToolResult Role = "toolResult"
)

// StopReason says why the model stopped producing an assistant message.
type StopReason string

// The stop reasons a model can report.
const (
	// StopReasonStop: the model finished its answer.
	StopReasonStop StopReason = "stop"
	// StopReasonToolUse: the model asks for the tool calls in its content to be run.
	StopReasonToolUse StopReason = "toolUse"
	// StopReasonLength: the output hit a token limit; tool call arguments may be cut off.
	StopReasonLength StopReason = "length"
	// StopReasonError: the provider or the stream failed; ErrorMessage says why.
	StopReasonError StopReason = "error"
	// StopReasonAborted: the request was cancelled through its context.
	StopReasonAborted StopReason = "aborted"
)

// ContentBlock is one block of a message's content. The set is closed: TextContent,
// ThinkingContent and ToolCall are its only members, so a type switch over them is complete.
type ContentBlock interface {
	// BlockType is the block's JSON discriminator: "text", "thinking" or "toolCall".
	BlockType() string
	isContentBlock()
}

// TextContent is plain text.
type TextContent struct {
	Text string
}

// ThinkingContent is the model's visible reasoning.
type ThinkingContent struct {
	Thinking string
}

// ToolCall is the model's request to run a tool.
type ToolCall struct {
	// ID pairs the call with its ToolResultMessage.
	ID string
	// Name is the tool's name.
	Name string
	// Arguments is the raw JSON text the model produced. It is never repaired: after a `length`
	// stop it may be cut off and invalid.
	Arguments string
}

// BlockType implements ContentBlock.
func (TextContent) BlockType() string { return "text" }

// BlockType implements ContentBlock.
func (ThinkingContent) BlockType() string { return "thinking" }

// BlockType implements ContentBlock.
func (ToolCall) BlockType() string { return "toolCall" }

func (TextContent) isContentBlock()     {}
func (ThinkingContent) isContentBlock() {}
func (ToolCall) isContentBlock()        {}

// Text returns a text block.
func Text(s string) TextContent { return TextContent{Text: s} }

// Message is one entry of a transcript. The set is closed: UserMessage, AssistantMessage and
// ToolResultMessage are its only members.
type Message interface {
	// MessageRole is the message's role.
	MessageRole() Role
	isMessage()
}

// UserMessage is what the user said.
type UserMessage struct {
	Content   []ContentBlock
	Timestamp int64
}

// Usage counts the tokens of one model request.
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead,omitempty"`
	CacheWrite int `json:"cacheWrite,omitempty"`
	Total      int `json:"total"`
}

// AssistantMessage is one complete model response.
type AssistantMessage struct {
	Content      []ContentBlock
	StopReason   StopReason
	ErrorMessage string
	Usage        Usage
	// ID and Model are what the provider reported, when it did.
	ID        string
	Model     string
	Timestamp int64
}

// ToolResultMessage answers the tool call with the same ToolCallID.
type ToolResultMessage struct {
	ToolCallID string
	ToolName   string
	Content    []ContentBlock
	// Details carries structured data for programs (never sent to the model as text).
	Details   map[string]any
	IsError   bool
	Timestamp int64
}

// MessageRole implements Message.
func (UserMessage) MessageRole() Role { return RoleUser }

// MessageRole implements Message.
func (AssistantMessage) MessageRole() Role { return RoleAssistant }

// MessageRole implements Message.
func (ToolResultMessage) MessageRole() Role { return RoleToolResult }

func (UserMessage) isMessage()       {}
func (AssistantMessage) isMessage()  {}
func (ToolResultMessage) isMessage() {}

// UserText returns a user message with one text block.
func UserText(s string) UserMessage { return UserMessage{Content: []ContentBlock{Text(s)}} }

// ToolCalls returns the tool calls of an assistant message, in content order.
func (m AssistantMessage) ToolCalls() []ToolCall {
	//lab:begin 3.1
	var calls []ToolCall
	for _, block := range m.Content {
		if call, ok := block.(ToolCall); ok {
			calls = append(calls, call)
		}
	}
	return calls
	//lab:end
}

// TextOf projects content blocks to their text: text blocks joined in order; thinking blocks and
// tool calls are left out.
func TextOf(content []ContentBlock) string {
	//lab:begin 3.1
	var text strings.Builder
	for _, block := range content {
		switch b := block.(type) {
		case TextContent:
			text.WriteString(b.Text)
		case ThinkingContent:
			// Reasoning is shown to people; it is not part of the answer.
		case ToolCall:
			// A request to run a tool, not words for the reader.
		}
	}
	return text.String()
	//lab:end
}

// CloneMessages returns a deep copy: changing the copy (its slices, content or details) never
// changes the original.
func CloneMessages(messages []Message) []Message {
	if messages == nil {
		return nil
	}
	out := make([]Message, len(messages))
	for i, m := range messages {
		out[i] = CloneMessage(m)
	}
	return out
}

// CloneMessage returns a deep copy of one message.
func CloneMessage(m Message) Message {
	//lab:begin 3.2
	switch m := m.(type) {
	case UserMessage:
		m.Content = slices.Clone(m.Content)
		return m
	case AssistantMessage:
		m.Content = slices.Clone(m.Content)
		return m
	case ToolResultMessage:
		m.Content = slices.Clone(m.Content)
		m.Details = cloneDetails(m.Details)
		return m
	case nil:
		return nil
	default:
		panic(fmt.Sprintf("tinypi: unknown message type %T", m))
	}
	//lab:end
}

// cloneDetails copies a JSON-like value: maps and slices are copied recursively, everything
// else is immutable. Content blocks need only a shallow slice copy because every block type is
// made of strings.
func cloneDetails(d map[string]any) map[string]any {
	//lab:begin 3.2
	if d == nil {
		return nil
	}
	out := make(map[string]any, len(d))
	for k, v := range d {
		out[k] = cloneJSONValue(v)
	}
	return out
	//lab:end
}

// cloneJSONValue copies one value of a decoded JSON document: objects and arrays are copied
// all the way down; strings, numbers, booleans and nil cannot be changed in place.
func cloneJSONValue(v any) any {
	//lab:begin 3.2
	switch v := v.(type) {
	case map[string]any:
		return cloneDetails(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneJSONValue(e)
		}
		return out
	default:
		return v
	}
	//lab:end
}

// --- JSON -------------------------------------------------------------------------------------

type blockJSON struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	Thinking  string `json:"thinking,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

type messageJSON struct {
	Role         Role           `json:"role"`
	Content      []blockJSON    `json:"content"`
	StopReason   StopReason     `json:"stopReason,omitempty"`
	ErrorMessage string         `json:"errorMessage,omitempty"`
	Usage        *Usage         `json:"usage,omitempty"`
	ID           string         `json:"id,omitempty"`
	Model        string         `json:"model,omitempty"`
	ToolCallID   string         `json:"toolCallId,omitempty"`
	ToolName     string         `json:"toolName,omitempty"`
	Details      map[string]any `json:"details,omitempty"`
	IsError      bool           `json:"isError,omitempty"`
	Timestamp    int64          `json:"timestamp"`
}

// encodeBlocks turns content blocks into their wire form, tagged by "type".
func encodeBlocks(content []ContentBlock) []blockJSON {
	//lab:begin 3.3
	out := make([]blockJSON, 0, len(content))
	for _, block := range content {
		switch b := block.(type) {
		case TextContent:
			out = append(out, blockJSON{Type: "text", Text: b.Text})
		case ThinkingContent:
			out = append(out, blockJSON{Type: "thinking", Thinking: b.Thinking})
		case ToolCall:
			out = append(out, blockJSON{Type: "toolCall", ID: b.ID, Name: b.Name, Arguments: b.Arguments})
		}
	}
	return out
	//lab:end
}

// decodeBlocks turns wire blocks back into content blocks. An unknown "type" is an error: a
// block that cannot be represented must not silently vanish from the transcript.
func decodeBlocks(in []blockJSON) ([]ContentBlock, error) {
	//lab:begin 3.3
	if in == nil {
		return nil, nil
	}
	out := make([]ContentBlock, 0, len(in))
	for i, b := range in {
		switch b.Type {
		case "text":
			out = append(out, TextContent{Text: b.Text})
		case "thinking":
			out = append(out, ThinkingContent{Thinking: b.Thinking})
		case "toolCall":
			out = append(out, ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Arguments})
		default:
			return nil, fmt.Errorf("content block %d: unknown type %q", i, b.Type)
		}
	}
	return out, nil
	//lab:end
}

// MarshalMessage encodes a message as JSON with a "role" discriminator.
func MarshalMessage(m Message) ([]byte, error) {
	var j messageJSON
	switch m := m.(type) {
	case UserMessage:
		j = messageJSON{Role: RoleUser, Content: encodeBlocks(m.Content), Timestamp: m.Timestamp}
	case AssistantMessage:
		usage := m.Usage
		j = messageJSON{Role: RoleAssistant, Content: encodeBlocks(m.Content), StopReason: m.StopReason,
			ErrorMessage: m.ErrorMessage, Usage: &usage, ID: m.ID, Model: m.Model, Timestamp: m.Timestamp}
	case ToolResultMessage:
		j = messageJSON{Role: RoleToolResult, Content: encodeBlocks(m.Content), ToolCallID: m.ToolCallID,
			ToolName: m.ToolName, Details: m.Details, IsError: m.IsError, Timestamp: m.Timestamp}
	default:
		return nil, fmt.Errorf("tinypi: cannot encode message of type %T", m)
	}
	return json.Marshal(j)
}

// UnmarshalMessage decodes what MarshalMessage encoded.
// An unknown role or content block type is an error that names it.
func UnmarshalMessage(data []byte) (Message, error) {
	//lab:begin 3.3
	var j messageJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("tinypi: decode message: %w", err)
	}
	content, err := decodeBlocks(j.Content)
	if err != nil {
		return nil, fmt.Errorf("tinypi: decode %s message: %w", j.Role, err)
	}
	switch j.Role {
	case RoleUser:
		return UserMessage{Content: content, Timestamp: j.Timestamp}, nil
	case RoleAssistant:
		m := AssistantMessage{Content: content, StopReason: j.StopReason, ErrorMessage: j.ErrorMessage,
			ID: j.ID, Model: j.Model, Timestamp: j.Timestamp}
		if j.Usage != nil {
			m.Usage = *j.Usage
		}
		return m, nil
	case RoleToolResult:
		return ToolResultMessage{ToolCallID: j.ToolCallID, ToolName: j.ToolName, Content: content,
			Details: j.Details, IsError: j.IsError, Timestamp: j.Timestamp}, nil
	default:
		return nil, fmt.Errorf("tinypi: decode message: unknown role %q", j.Role)
	}
	//lab:end
}

// MarshalMessages encodes a transcript as a JSON array.
func MarshalMessages(messages []Message) ([]byte, error) {
	raws := make([]json.RawMessage, len(messages))
	for i, m := range messages {
		b, err := MarshalMessage(m)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		raws[i] = b
	}
	return json.Marshal(raws)
}

// UnmarshalMessages decodes what MarshalMessages encoded.
func UnmarshalMessages(data []byte) ([]Message, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fmt.Errorf("tinypi: decode messages: %w", err)
	}
	out := make([]Message, len(raws))
	for i, raw := range raws {
		m, err := UnmarshalMessage(raw)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		out[i] = m
	}
	return out, nil
}
