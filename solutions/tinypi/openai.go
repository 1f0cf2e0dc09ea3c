package tinypi

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// openAIModel is a Model that speaks the OpenAI chat completions API with streaming, as served
// by OpenAI and by compatible servers. Make one with NewProvider.
type openAIModel struct {
	cfg ProviderConfig
}

// Stream implements Model: it posts the request to {BaseURL}/chat/completions with
// "stream": true and turns the server-sent chunks into events.
func (m *openAIModel) Stream(ctx context.Context, req Request) *AssistantStream {
	req = cloneProviderRequest(req) // the goroutine reads it after Stream returns
	return streamHTTP(ctx, m.cfg.HTTPClient, wireFormat{
		newRequest: func(ctx context.Context) (*http.Request, error) {
			body, err := openAIRequestBody(m.cfg, req)
			if err != nil {
				return nil, err
			}
			httpReq, err := postJSON(ctx, m.cfg.BaseURL+"/chat/completions", body)
			if err != nil {
				return nil, err
			}
			if m.cfg.APIKey != "" {
				httpReq.Header.Set("Authorization", "Bearer "+m.cfg.APIKey)
			}
			return httpReq, nil
		},
		decode: decodeOpenAIStream,
	})
}

// cloneProviderRequest deep-copies a request, so a caller may change its own copy while the
// adapter's goroutine is still encoding it.
func cloneProviderRequest(req Request) Request {
	req.Messages = CloneMessages(req.Messages)
	req.Tools = slices.Clone(req.Tools)
	return req
}

// --- outbound ---------------------------------------------------------------------------------

// openAIChatRequest is the body of POST /chat/completions.
type openAIChatRequest struct {
	Model         string               `json:"model"`
	Messages      []openAIMessage      `json:"messages"`
	Tools         []openAITool         `json:"tools,omitempty"`
	MaxTokens     int                  `json:"max_tokens,omitempty"`
	Stream        bool                 `json:"stream"`
	StreamOptions *openAIStreamOptions `json:"stream_options,omitempty"`
}

// openAIStreamOptions asks for a final chunk with the token usage.
type openAIStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// openAIMessage is one message of the request. Content is a pointer so that an assistant
// message that only calls tools can send null.
type openAIMessage struct {
	Role    string  `json:"role"`
	Content *string `json:"content"`
	// ReasoningContent carries an assistant's thinking back to compatible servers that stream
	// it (DeepSeek asks for it during tool-call rounds); others ignore the field.
	ReasoningContent string           `json:"reasoning_content,omitempty"`
	ToolCalls        []openAIToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string           `json:"tool_call_id,omitempty"`
}

// openAIToolCall is a tool call of an assistant message.
type openAIToolCall struct {
	ID       string             `json:"id"`
	Type     string             `json:"type"`
	Function openAIFunctionCall `json:"function"`
}

// openAIFunctionCall names the function and carries its arguments as JSON text.
type openAIFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// openAITool declares a tool.
type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

// openAIFunction is a tool's name, description and parameter schema.
type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// openAIRequestBody converts our request to the chat completions body:
//
//   - the system prompt becomes a first "system" message; an empty one sends none;
//   - a user message becomes a "user" message with its text;
//   - an assistant message becomes an "assistant" message with its text as content, its
//     thinking as reasoning_content and its tool calls as tool_calls (arguments as raw text);
//     one that failed or was cancelled is left out;
//   - a tool result becomes a "tool" message with the call's id and the result's text;
//   - tool definitions become "function" tools.
func openAIRequestBody(cfg ProviderConfig, req Request) (openAIChatRequest, error) {
	//lab:begin 5.2
	body := openAIChatRequest{
		Model:         cfg.Model,
		MaxTokens:     cfg.MaxTokens,
		Stream:        true,
		StreamOptions: &openAIStreamOptions{IncludeUsage: true},
	}
	if req.SystemPrompt != "" {
		body.Messages = append(body.Messages, openAIMessage{Role: "system", Content: &req.SystemPrompt})
	}
	for i, m := range req.Messages {
		switch m := m.(type) {
		case UserMessage:
			text := TextOf(m.Content)
			body.Messages = append(body.Messages, openAIMessage{Role: "user", Content: &text})
		case AssistantMessage:
			if skipInHistory(m) {
				continue
			}
			out := openAIMessage{Role: "assistant"}
			var text, thinking strings.Builder
			for _, block := range m.Content {
				switch b := block.(type) {
				case TextContent:
					text.WriteString(b.Text)
				case ThinkingContent:
					thinking.WriteString(b.Thinking)
				case ToolCall:
					args := b.Arguments
					if strings.TrimSpace(args) == "" {
						args = "{}"
					}
					out.ToolCalls = append(out.ToolCalls, openAIToolCall{
						ID: b.ID, Type: "function", Function: openAIFunctionCall{Name: b.Name, Arguments: args},
					})
				}
			}
			if text.Len() > 0 || len(out.ToolCalls) == 0 {
				s := text.String()
				out.Content = &s
			}
			out.ReasoningContent = thinking.String()
			body.Messages = append(body.Messages, out)
		case ToolResultMessage:
			text := TextOf(m.Content)
			body.Messages = append(body.Messages, openAIMessage{Role: "tool", ToolCallID: m.ToolCallID, Content: &text})
		default:
			return openAIChatRequest{}, fmt.Errorf("message %d: unsupported message type %T", i, m)
		}
	}
	for _, def := range req.Tools {
		schema, err := toolSchema(def)
		if err != nil {
			return openAIChatRequest{}, err
		}
		body.Tools = append(body.Tools, openAITool{
			Type:     "function",
			Function: openAIFunction{Name: def.Name, Description: def.Description, Parameters: schema},
		})
	}
	return body, nil
	//lab:end
}

// --- inbound ----------------------------------------------------------------------------------

// openAIChunk is one streamed chunk. Fields we do not use (object, created, logprobs,
// obfuscation, provider extras) are not decoded.
type openAIChunk struct {
	ID      string         `json:"id"`
	Model   string         `json:"model"`
	Choices []openAIChoice `json:"choices"`
	Usage   *openAIUsage   `json:"usage"`
	// Error is set by servers that report a failure inside a chunk (OpenRouter) or in an
	// `event: error` (Groq).
	Error *providerError `json:"error"`
}

// openAIChoice is a choice of a chunk; we ask for one, index 0.
type openAIChoice struct {
	Index        int         `json:"index"`
	Delta        openAIDelta `json:"delta"`
	FinishReason string      `json:"finish_reason"`
}

// openAIDelta is what one chunk adds to the message.
type openAIDelta struct {
	// Content is the answer's text. Most servers send a string; some (Mistral's reasoning
	// models) send a list of typed parts instead, so it is kept raw: see openAIContentParts.
	Content json.RawMessage `json:"content"`
	// ReasoningContent (DeepSeek and others) and Reasoning (OpenRouter, Groq) both carry the
	// model's visible reasoning; ReasoningDetails (OpenRouter) carries it as a list of typed
	// parts, sometimes as the only copy: see openAIReasoningText.
	ReasoningContent string                `json:"reasoning_content"`
	Reasoning        string                `json:"reasoning"`
	ReasoningDetails json.RawMessage       `json:"reasoning_details"`
	ToolCalls        []openAIToolCallDelta `json:"tool_calls"`
}

// openAIToolCallDelta is a piece of a tool call: Index says which call it belongs to; ID and
// the function name arrive on the call's first piece only.
type openAIToolCallDelta struct {
	Index    int                `json:"index"`
	ID       string             `json:"id"`
	Function openAIFunctionCall `json:"function"`
}

// openAIUsage is the token usage of the final chunk.
type openAIUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// usage maps OpenAI's counts to ours: Input counts the prompt tokens not read from the cache.
func (u openAIUsage) usage() Usage {
	cached := 0
	if u.PromptTokensDetails != nil {
		cached = u.PromptTokensDetails.CachedTokens
	}
	total := u.TotalTokens
	if total == 0 {
		total = u.PromptTokens + u.CompletionTokens
	}
	return Usage{Input: u.PromptTokens - cached, Output: u.CompletionTokens, CacheRead: cached, Total: total}
}

// openAIDecoder turns chunks into assembled content.
type openAIDecoder struct {
	asm *streamAssembler
	// calls maps a tool call's index in the chunks to its content index.
	calls map[int]int
	end   streamEnd
}

// decodeOpenAIStream reads the SSE body until [DONE], an error or the end of the body. A body
// that ends with neither finish_reason nor [DONE] is incomplete.
func decodeOpenAIStream(body io.Reader, asm *streamAssembler) streamEnd {
	d := &openAIDecoder{asm: asm, calls: map[int]int{}, end: streamEnd{Terminal: "finish_reason or [DONE]"}}
	if err := forEachSSE(body, d.handle); err != nil {
		d.end.Err = err
	}
	return d.end
}

// handle applies one SSE event and reports whether the stream is over. It records in d.end
// the finish reason, an error object or event, and a chunk that is not JSON.
//
// Reading goes on after finish_reason, because the usage chunk (with "choices": []) and, on
// some servers, an error chunk come after it; [DONE] or the end of the body stops it. [DONE]
// also completes a stream that never sent a finish_reason (some servers omit it): the stream
// then stopped, or asked for tools when it streamed tool calls.
func (d *openAIDecoder) handle(event SSEEvent) (stop bool) {
	//lab:begin 5.3
	if strings.TrimSpace(event.Data) == "[DONE]" {
		if !d.end.Complete {
			d.finish(cmp.Or(d.impliedReason(), "stop"))
		}
		return true
	}
	var chunk openAIChunk
	decodeErr := json.Unmarshal([]byte(event.Data), &chunk)
	if decodeErr == nil {
		if chunk.ID != "" {
			d.asm.id = chunk.ID
		}
		if chunk.Model != "" {
			d.asm.model = chunk.Model
		}
		if chunk.Usage != nil {
			d.asm.usage = chunk.Usage.usage()
		}
	}
	if event.Event == "error" || chunk.Error != nil {
		if chunk.Error != nil {
			d.end.ProviderError = chunk.Error.String()
		} else {
			d.end.ProviderError = "provider error: " + event.Data
		}
		return true
	}
	if decodeErr != nil {
		d.end.Err = fmt.Errorf("decoding chunk: %w", decodeErr)
		return true
	}
	for _, choice := range chunk.Choices {
		if choice.Index != 0 {
			continue
		}
		delta := choice.Delta
		d.asm.appendToLast("thinking", cmp.Or(delta.ReasoningContent, delta.Reasoning, openAIReasoningText(delta.ReasoningDetails)))
		for _, part := range openAIContentParts(delta.Content) {
			d.asm.appendToLast(part.kind, part.text)
		}
		for _, call := range delta.ToolCalls {
			i, seen := d.calls[call.Index]
			if !seen || (call.ID != "" && d.asm.blocks[i].id != "" && call.ID != d.asm.blocks[i].id) {
				i = d.asm.openToolCall(call.ID, call.Function.Name)
				d.calls[call.Index] = i
			}
			d.asm.appendArguments(i, call.Function.Arguments)
		}
		if choice.FinishReason != "" && !d.end.Complete {
			d.finish(choice.FinishReason)
		}
	}
	return false
	//lab:end
}

// impliedReason is the finish reason of a stream that ended with [DONE] but sent none:
// "tool_calls" when it streamed tool calls, else "".
func (d *openAIDecoder) impliedReason() string {
	//lab:begin 5.3
	if len(d.calls) > 0 {
		return "tool_calls"
	}
	return ""
	//lab:end
}

// finish records the stream's finish reason and marks it complete. Unless the reason is
// length, every tool call is complete now and gets its toolcall_end, in content order.
func (d *openAIDecoder) finish(reason string) {
	//lab:begin 5.3
	d.end.Complete = true
	d.end.RawReason = reason
	d.end.Reason = openAIStopReason(reason)
	if d.end.Reason == StopReasonLength {
		return // a length stop may have cut the last call's arguments: no call is complete
	}
	for i, b := range d.asm.blocks {
		if b.kind == "toolCall" {
			d.asm.endToolCall(i)
		}
	}
	//lab:end
}

// openAIPart is a piece of text or thinking from delta.content.
type openAIPart struct {
	kind string // "text" or "thinking"
	text string
}

// openAIContentParts reads delta.content. A string is text. A list holds typed parts, in
// order: {"type":"text","text":…} is text, and {"type":"thinking","thinking":…} is thinking,
// where "thinking" is a string or a list of text parts. null, parts of other types and values of
// any other shape carry nothing we use and give no parts: a server's extension must not fail a
// response whose meaning is clear.
func openAIContentParts(raw json.RawMessage) []openAIPart {
	//lab:begin 5.3
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []openAIPart{{kind: "text", text: text}}
	}
	var list []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var parts []openAIPart
	for _, p := range list {
		switch p.Type {
		case "text":
			parts = append(parts, openAIPart{kind: "text", text: p.Text})
		case "thinking":
			var thinking string
			if json.Unmarshal(p.Thinking, &thinking) != nil {
				for _, inner := range openAIContentParts(p.Thinking) {
					thinking += inner.text
				}
			}
			parts = append(parts, openAIPart{kind: "thinking", text: thinking})
		}
	}
	return parts
	//lab:end
}

// openAIReasoningText returns the reasoning text of a reasoning_details list: the text of its
// "reasoning.text" parts and the summary of its "reasoning.summary" parts, joined. Encrypted
// parts and anything it cannot read give "".
func openAIReasoningText(raw json.RawMessage) string {
	//lab:begin 5.3
	var details []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Summary string `json:"summary"`
	}
	if json.Unmarshal(raw, &details) != nil {
		return ""
	}
	var b strings.Builder
	for _, detail := range details {
		switch detail.Type {
		case "reasoning.text":
			b.WriteString(detail.Text)
		case "reasoning.summary":
			b.WriteString(detail.Summary)
		}
	}
	return b.String()
	//lab:end
}

// openAIStopReason maps a finish_reason to our stop reason, or "" for one we do not know
// (content_filter, for example), which ends the stream with an error.
func openAIStopReason(reason string) StopReason {
	//lab:begin 5.3
	switch reason {
	case "stop":
		return StopReasonStop
	case "tool_calls", "function_call":
		return StopReasonToolUse
	case "length":
		return StopReasonLength
	}
	return ""
	//lab:end
}
