package tinypi

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// anthropicVersion is the API version header every Anthropic request carries.
const anthropicVersion = "2023-06-01"

// anthropicModel is a Model that speaks the Anthropic messages API with streaming. Make one with
// NewProvider.
type anthropicModel struct {
	cfg ProviderConfig
}

// Stream implements Model: it posts the request to {BaseURL}/v1/messages with "stream": true
// and turns the server-sent events into our events.
func (m *anthropicModel) Stream(ctx context.Context, req Request) *AssistantStream {
	req = cloneProviderRequest(req) // the goroutine reads it after Stream returns
	return streamHTTP(ctx, m.cfg.HTTPClient, wireFormat{
		newRequest: func(ctx context.Context) (*http.Request, error) {
			body, err := anthropicRequestBody(m.cfg, req)
			if err != nil {
				return nil, err
			}
			httpReq, err := postJSON(ctx, m.cfg.BaseURL+"/v1/messages", body)
			if err != nil {
				return nil, err
			}
			httpReq.Header.Set("anthropic-version", anthropicVersion)
			if m.cfg.APIKey != "" {
				httpReq.Header.Set("x-api-key", m.cfg.APIKey)
			}
			return httpReq, nil
		},
		decode: decodeAnthropicStream,
	})
}

// --- outbound ---------------------------------------------------------------------------------

// anthropicRequest is the body of POST /v1/messages.
type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    string             `json:"system,omitempty"`
	Messages  []anthropicMessage `json:"messages"`
	Tools     []anthropicTool    `json:"tools,omitempty"`
	Stream    bool               `json:"stream"`
}

// anthropicMessage is one message: role "user" or "assistant" and a list of blocks.
type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

// anthropicBlock is a content block of type text, tool_use or tool_result.
type anthropicBlock struct {
	Type      string           `json:"type"`
	Text      string           `json:"text,omitempty"`
	ID        string           `json:"id,omitempty"`
	Name      string           `json:"name,omitempty"`
	Input     json.RawMessage  `json:"input,omitempty"`
	ToolUseID string           `json:"tool_use_id,omitempty"`
	Content   []anthropicBlock `json:"content,omitempty"`
	IsError   bool             `json:"is_error,omitempty"`
}

// anthropicTool declares a tool.
type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// anthropicRequestBody converts our request to the messages body:
//
//   - the system prompt goes in the top-level "system" field;
//   - a user message becomes a "user" message of text blocks;
//   - an assistant message becomes an "assistant" message of text and tool_use blocks; thinking
//     is left out (the API accepts thinking only with its signature, which we do not keep), and
//     so is a message that failed or was cancelled;
//   - tool results become tool_result blocks; consecutive results share one "user" message,
//     because the API wants every answer to one assistant turn in the next message;
//   - empty text blocks are dropped (the API rejects them), and a message left without blocks
//     is dropped too;
//   - tool definitions become tools with an input_schema.
func anthropicRequestBody(cfg ProviderConfig, req Request) (anthropicRequest, error) {
	//lab:begin 5.2
	body := anthropicRequest{
		Model:     cfg.Model,
		MaxTokens: cmp.Or(cfg.MaxTokens, DefaultAnthropicMaxTokens),
		System:    req.SystemPrompt,
		Stream:    true,
	}
	for i, m := range req.Messages {
		switch m := m.(type) {
		case UserMessage:
			if blocks := anthropicTextBlocks(m.Content); len(blocks) > 0 {
				body.Messages = append(body.Messages, anthropicMessage{Role: "user", Content: blocks})
			}
		case AssistantMessage:
			if skipInHistory(m) {
				continue
			}
			var blocks []anthropicBlock
			for _, block := range m.Content {
				switch b := block.(type) {
				case TextContent:
					if b.Text != "" {
						blocks = append(blocks, anthropicBlock{Type: "text", Text: b.Text})
					}
				case ToolCall:
					blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: b.ID, Name: b.Name, Input: anthropicToolInput(b.Arguments)})
				}
			}
			if len(blocks) > 0 {
				body.Messages = append(body.Messages, anthropicMessage{Role: "assistant", Content: blocks})
			}
		case ToolResultMessage:
			result := anthropicBlock{
				Type:      "tool_result",
				ToolUseID: m.ToolCallID,
				Content:   anthropicTextBlocks(m.Content),
				IsError:   m.IsError,
			}
			if n := len(body.Messages); n > 0 && isToolResultMessage(body.Messages[n-1]) {
				body.Messages[n-1].Content = append(body.Messages[n-1].Content, result)
			} else {
				body.Messages = append(body.Messages, anthropicMessage{Role: "user", Content: []anthropicBlock{result}})
			}
		default:
			return anthropicRequest{}, fmt.Errorf("message %d: unsupported message type %T", i, m)
		}
	}
	for _, def := range req.Tools {
		schema, err := toolSchema(def)
		if err != nil {
			return anthropicRequest{}, err
		}
		body.Tools = append(body.Tools, anthropicTool{Name: def.Name, Description: def.Description, InputSchema: schema})
	}
	return body, nil
	//lab:end
}

// anthropicTextBlocks returns the non-empty text blocks of content.
func anthropicTextBlocks(content []ContentBlock) []anthropicBlock {
	var blocks []anthropicBlock
	for _, block := range content {
		if t, ok := block.(TextContent); ok && t.Text != "" {
			blocks = append(blocks, anthropicBlock{Type: "text", Text: t.Text})
		}
	}
	return blocks
}

// isToolResultMessage reports whether m is a user message made of tool results.
func isToolResultMessage(m anthropicMessage) bool {
	return m.Role == "user" && len(m.Content) > 0 && m.Content[0].Type == "tool_result"
}

// anthropicToolInput returns a tool call's arguments as the JSON object the API requires. Our
// transcript keeps arguments as raw text, which may be empty or, after a length stop, cut off;
// such text cannot go on the wire as an object, so it is sent as {} (the transcript itself is
// not changed).
func anthropicToolInput(args string) json.RawMessage {
	trimmed := strings.TrimSpace(args)
	if strings.HasPrefix(trimmed, "{") && json.Valid([]byte(trimmed)) {
		return json.RawMessage(trimmed)
	}
	return json.RawMessage(`{}`)
}

// --- inbound ----------------------------------------------------------------------------------

// anthropicEvent is the data of one stream event; which fields are set depends on Type.
type anthropicEvent struct {
	Type    string `json:"type"`
	Message *struct {
		ID    string         `json:"id"`
		Model string         `json:"model"`
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	Index        int `json:"index"`
	ContentBlock *struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
		ID       string `json:"id"`
		Name     string `json:"name"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
	Error *providerError  `json:"error"`
}

// anthropicUsage is a usage object. message_start carries the input counts; message_delta
// carries cumulative counts, sometimes only output_tokens, so absent fields are nil and keep
// the earlier value.
type anthropicUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
}

// mergeInto updates u with the counts that are present and recomputes the total.
func (w anthropicUsage) mergeInto(u *Usage) {
	set := func(dst *int, src *int) {
		if src != nil {
			*dst = *src
		}
	}
	set(&u.Input, w.InputTokens)
	set(&u.Output, w.OutputTokens)
	set(&u.CacheRead, w.CacheReadInputTokens)
	set(&u.CacheWrite, w.CacheCreationInputTokens)
	u.Total = u.Input + u.Output + u.CacheRead + u.CacheWrite
}

// anthropicDecoder turns stream events into assembled content.
type anthropicDecoder struct {
	asm *streamAssembler
	// blocks maps the provider's block index to our content index, or to -1 for a block
	// type we do not keep (redacted thinking, server tools).
	blocks map[int]int
	end    streamEnd
}

// decodeAnthropicStream reads the SSE body until message_stop, an error or the end of the body.
func decodeAnthropicStream(body io.Reader, asm *streamAssembler) streamEnd {
	d := &anthropicDecoder{asm: asm, blocks: map[int]int{}, end: streamEnd{Terminal: "message_stop"}}
	if err := forEachSSE(body, d.handle); err != nil {
		d.end.Err = err
	}
	return d.end
}

// handle applies one SSE event and reports whether the stream is over:
//
//   - message_start gives the id, model and input usage;
//   - content_block_start opens a text, thinking or tool_use block at its index; the tool's
//     initial "input": {} is not used: the input is the concatenation of the input_json_delta
//     fragments;
//   - content_block_delta adds text, thinking or an argument fragment to the block at its index;
//     a delta for an index that never started is a broken stream (an error);
//   - content_block_stop completes a tool call (toolcall_end);
//   - message_delta gives the stop reason and cumulative usage;
//   - message_stop is the terminal marker; error is a provider error; ping and unknown events
//     are ignored.
func (d *anthropicDecoder) handle(event SSEEvent) (stop bool) {
	//lab:begin 5.4
	var e anthropicEvent
	if err := json.Unmarshal([]byte(event.Data), &e); err != nil {
		d.end.Err = fmt.Errorf("decoding %s event: %w", event.Event, err)
		return true
	}
	switch cmp.Or(e.Type, event.Event) {
	case "message_start":
		if e.Message != nil {
			d.asm.id, d.asm.model = e.Message.ID, e.Message.Model
			e.Message.Usage.mergeInto(&d.asm.usage)
		}
	case "content_block_start":
		if e.ContentBlock == nil {
			d.end.Err = fmt.Errorf("content_block_start %d without a content_block", e.Index)
			return true
		}
		switch e.ContentBlock.Type {
		case "text":
			d.blocks[e.Index] = d.asm.open("text")
			d.asm.appendText(d.blocks[e.Index], e.ContentBlock.Text)
		case "thinking":
			d.blocks[e.Index] = d.asm.open("thinking")
			d.asm.appendText(d.blocks[e.Index], e.ContentBlock.Thinking)
		case "tool_use":
			d.blocks[e.Index] = d.asm.openToolCall(e.ContentBlock.ID, e.ContentBlock.Name)
		default:
			d.blocks[e.Index] = -1
		}
	case "content_block_delta":
		i, ok := d.blocks[e.Index]
		if !ok {
			d.end.Err = fmt.Errorf("content_block_delta for block %d, which never started", e.Index)
			return true
		}
		if i < 0 || e.Delta == nil {
			break
		}
		switch e.Delta.Type {
		case "text_delta":
			d.asm.appendText(i, e.Delta.Text)
		case "thinking_delta":
			d.asm.appendText(i, e.Delta.Thinking)
		case "input_json_delta":
			d.asm.appendArguments(i, e.Delta.PartialJSON)
		}
	case "content_block_stop":
		if i, ok := d.blocks[e.Index]; ok && i >= 0 && d.asm.blocks[i].kind == "toolCall" {
			d.asm.endToolCall(i)
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			d.end.RawReason = e.Delta.StopReason
			d.end.Reason = anthropicStopReason(e.Delta.StopReason)
		}
		if e.Usage != nil {
			e.Usage.mergeInto(&d.asm.usage)
		}
	case "message_stop":
		d.end.Complete = true
		return true
	case "error":
		if e.Error != nil {
			d.end.ProviderError = e.Error.String()
		} else {
			d.end.ProviderError = "provider error: " + event.Data
		}
		return true
	}
	return false
	//lab:end
}

// anthropicStopReason maps a stop_reason to ours, or "" for one we do not handle (refusal,
// pause_turn, ...), which ends the stream with an error.
func anthropicStopReason(reason string) StopReason {
	//lab:begin 5.4
	switch reason {
	case "end_turn", "stop_sequence":
		return StopReasonStop
	case "tool_use":
		return StopReasonToolUse
	case "max_tokens", "model_context_window_exceeded":
		return StopReasonLength
	}
	return ""
	//lab:end
}
