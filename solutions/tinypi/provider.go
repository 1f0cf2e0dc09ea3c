package tinypi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// The wire APIs a ProviderConfig can name.
const (
	// APIOpenAI is the OpenAI chat completions API, also spoken by many compatible servers
	// (DeepSeek, Groq, OpenRouter, vLLM, Ollama, ...).
	APIOpenAI = "openai"
	// APIAnthropic is the Anthropic messages API.
	APIAnthropic = "anthropic"
)

// Defaults used by NewProvider when a ProviderConfig leaves a field empty.
const (
	// DefaultOpenAIBaseURL is the base URL of the OpenAI API; "/chat/completions" is appended.
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	// DefaultAnthropicBaseURL is the base URL of the Anthropic API; "/v1/messages" is appended.
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	// DefaultAnthropicMaxTokens is the output limit sent to Anthropic, which requires one.
	DefaultAnthropicMaxTokens = 4096
)

// ProviderConfig says which provider to call and how.
type ProviderConfig struct {
	// API is the wire format: APIOpenAI or APIAnthropic.
	API string
	// BaseURL is the API's base URL; empty means the provider's public endpoint.
	BaseURL string
	// APIKey is sent as a bearer token (OpenAI) or in the x-api-key header (Anthropic).
	APIKey string
	// Model is the provider's model name, for example "gpt-4o" or "claude-sonnet-4-20250514".
	Model string
	// MaxTokens limits the output tokens of one response; 0 means the provider's default
	// (Anthropic requires a limit, so DefaultAnthropicMaxTokens is sent).
	MaxTokens int
	// HTTPClient sends the requests; nil means http.DefaultClient. It should have no overall
	// timeout: a response streams for as long as the model writes, and the request's context
	// is what cancels it.
	HTTPClient *http.Client
}

// ProviderConfigFromEnv reads a ProviderConfig from the environment:
//
//	TINYPI_API         "openai" or "anthropic"; when unset, "anthropic" if only
//	                   ANTHROPIC_API_KEY is set, else "openai"
//	TINYPI_BASE_URL    base URL (else OPENAI_BASE_URL or ANTHROPIC_BASE_URL, by API)
//	TINYPI_API_KEY     API key (else OPENAI_API_KEY or ANTHROPIC_API_KEY, by API)
//	TINYPI_MODEL       model name
//	TINYPI_MAX_TOKENS  output token limit, a positive integer
//
// It fails on an unknown API or a malformed TINYPI_MAX_TOKENS. It does not check that a key or
// model is set: NewProvider does.
func ProviderConfigFromEnv() (ProviderConfig, error) {
	cfg := ProviderConfig{
		API:     strings.ToLower(strings.TrimSpace(os.Getenv("TINYPI_API"))),
		BaseURL: os.Getenv("TINYPI_BASE_URL"),
		APIKey:  os.Getenv("TINYPI_API_KEY"),
		Model:   os.Getenv("TINYPI_MODEL"),
	}
	if cfg.API == "" {
		cfg.API = APIOpenAI
		if os.Getenv("OPENAI_API_KEY") == "" && os.Getenv("ANTHROPIC_API_KEY") != "" {
			cfg.API = APIAnthropic
		}
	}
	var prefix string
	switch cfg.API {
	case APIOpenAI:
		prefix = "OPENAI"
	case APIAnthropic:
		prefix = "ANTHROPIC"
	default:
		return ProviderConfig{}, fmt.Errorf("tinypi: TINYPI_API=%q: want %q or %q", cfg.API, APIOpenAI, APIAnthropic)
	}
	if cfg.APIKey == "" {
		cfg.APIKey = os.Getenv(prefix + "_API_KEY")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = os.Getenv(prefix + "_BASE_URL")
	}
	if s := strings.TrimSpace(os.Getenv("TINYPI_MAX_TOKENS")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return ProviderConfig{}, fmt.Errorf("tinypi: TINYPI_MAX_TOKENS=%q: want a positive integer", s)
		}
		cfg.MaxTokens = n
	}
	return cfg, nil
}

// NewProvider returns the Model that speaks cfg.API. It fills in the defaults and fails on an
// unknown API, an empty model name or a base URL that is not an http(s) URL.
func NewProvider(cfg ProviderConfig) (Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("tinypi: provider config has no model (set TINYPI_MODEL)")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	switch cfg.API {
	case APIOpenAI:
		if cfg.BaseURL == "" {
			cfg.BaseURL = DefaultOpenAIBaseURL
		}
	case APIAnthropic:
		if cfg.BaseURL == "" {
			cfg.BaseURL = DefaultAnthropicBaseURL
		}
		if cfg.MaxTokens == 0 {
			cfg.MaxTokens = DefaultAnthropicMaxTokens
		}
	default:
		return nil, fmt.Errorf("tinypi: provider API %q: want %q or %q", cfg.API, APIOpenAI, APIAnthropic)
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("tinypi: provider base URL %q is not an http(s) URL", cfg.BaseURL)
	}
	cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/")
	if cfg.API == APIAnthropic {
		return &anthropicModel{cfg: cfg}, nil
	}
	return &openAIModel{cfg: cfg}, nil
}

// --- one streamed response over HTTP ---------------------------------------------------------

// streamEnd is what a decoder learned by the time it stopped reading: how the provider said the
// response ended, or what went wrong.
type streamEnd struct {
	// Complete is set when the provider's terminal marker arrived (finish_reason for OpenAI,
	// message_stop for Anthropic).
	Complete bool
	// Terminal names that marker, for the "incomplete stream" message.
	Terminal string
	// Reason is the provider's stop reason mapped to ours ("" when unknown or absent);
	// RawReason is the provider's own word for it.
	Reason    StopReason
	RawReason string
	// ProviderError is the provider's message from an error event, an error object in a
	// chunk or the body of an HTTP error status.
	ProviderError string
	// HTTPStatus is the response status when it was an error status (>= 400), else 0.
	HTTPStatus int
	// Err is a transport, read or decoding failure.
	Err error
}

// clean reports whether the stream ended with its terminal marker and nothing went wrong.
func (e streamEnd) clean() bool {
	return e.Complete && e.Err == nil && e.ProviderError == "" && e.HTTPStatus == 0
}

// wireFormat is what differs between two providers: how a request is built and how the
// response body is decoded.
type wireFormat struct {
	newRequest func(ctx context.Context) (*http.Request, error)
	decode     func(body io.Reader, asm *streamAssembler) streamEnd
}

// streamHTTP returns a stream at once and fills it from a goroutine that sends the request and
// decodes the response. The goroutine ends when the body ends or ctx is cancelled (the HTTP
// client aborts the body read then), and it always pushes exactly one terminal event.
func streamHTTP(ctx context.Context, client *http.Client, wire wireFormat) *AssistantStream {
	stream := NewAssistantStream()
	go func() {
		defer stream.Close()
		asm := newStreamAssembler(stream)
		stream.Push(runHTTPStream(ctx, client, wire, asm))
	}()
	return stream
}

// runHTTPStream does the work of one response and returns its terminal event. A panic in an
// adapter (a bug, or a lab stub in the course's starter) becomes an error event that carries the
// panic's message, because nobody could recover it on this goroutine otherwise.
func runHTTPStream(ctx context.Context, client *http.Client, wire wireFormat, asm *streamAssembler) (terminal AssistantEvent) {
	defer func() {
		if p := recover(); p != nil {
			msg := asm.message()
			msg.StopReason = StopReasonError
			msg.ErrorMessage = fmt.Sprintf("tinypi: provider adapter panicked: %v", p)
			terminal = ErrorEvent{Message: msg}
		}
	}()
	req, err := wire.newRequest(ctx)
	if err != nil {
		return finishStream(ctx, asm.message(), streamEnd{Err: fmt.Errorf("building request: %w", err)})
	}
	resp, err := client.Do(req)
	if err != nil {
		return finishStream(ctx, asm.message(), streamEnd{Err: fmt.Errorf("sending request: %w", err)})
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return finishStream(ctx, asm.message(), streamEnd{
			HTTPStatus:    resp.StatusCode,
			ProviderError: errorMessageFromBody(body, resp.Status),
		})
	}
	asm.out.Push(StartEvent{})
	end := wire.decode(resp.Body, asm)
	return finishStream(ctx, asm.message(), end)
}

// finishStream turns the partial message and the way the stream ended into the stream's one
// terminal event. The plain endings are handled here: the provider's terminal marker arrived,
// nothing failed and the model stopped or asked for tools. Every other ending is settled by
// settleStream.
func finishStream(ctx context.Context, msg AssistantMessage, end streamEnd) AssistantEvent {
	if end.clean() && (end.Reason == StopReasonStop || end.Reason == StopReasonToolUse) {
		msg.StopReason = end.Reason
		return DoneEvent{Message: msg}
	}
	return settleStream(ctx, msg, end)
}

// settleStream decides the terminal event of every stream that did not end plainly:
//
//   - ctx was cancelled: an error event with stop reason aborted (whatever else happened),
//     whose message carries the cancellation's cause (context.Cause);
//   - the provider reported an error (HTTP status, error event, error object): stop reason
//     error and the provider's message, even if a finish reason came before it;
//   - reading or decoding failed: stop reason error, and the failure's text;
//   - the body ended before the terminal marker: stop reason error, "incomplete stream",
//     naming the missing marker (end.Terminal);
//   - the output hit the token limit: done with stop reason length. The tool calls stay in the
//     message exactly as received (perhaps cut off); length never becomes toolUse;
//   - any other stop reason: an error that names it.
func settleStream(ctx context.Context, msg AssistantMessage, end streamEnd) AssistantEvent {
	//lab:begin 5.5
	fail := func(reason StopReason, text string) AssistantEvent {
		msg.StopReason = reason
		msg.ErrorMessage = text
		return ErrorEvent{Message: msg}
	}
	switch {
	case ctx.Err() != nil:
		return fail(StopReasonAborted, fmt.Sprintf("request cancelled: %v", context.Cause(ctx)))
	case end.HTTPStatus != 0:
		return fail(StopReasonError, fmt.Sprintf("HTTP %d: %s", end.HTTPStatus, end.ProviderError))
	case end.ProviderError != "":
		return fail(StopReasonError, end.ProviderError)
	case end.Err != nil:
		return fail(StopReasonError, end.Err.Error())
	case !end.Complete:
		return fail(StopReasonError, fmt.Sprintf("incomplete stream: the response ended without %s", end.Terminal))
	case end.Reason == StopReasonLength:
		msg.StopReason = StopReasonLength
		return DoneEvent{Message: msg}
	default:
		return fail(StopReasonError, fmt.Sprintf("unsupported stop reason %q", end.RawReason))
	}
	//lab:end
}

// providerErrorBody is the error shape both APIs use: {"error": {"type", "code", "message"}}
// (Anthropic adds a top-level "type": "error").
type providerErrorBody struct {
	Error *providerError `json:"error"`
}

// providerError is a provider's error object. Code is a string for some servers and a number
// for others, so it is kept raw.
type providerError struct {
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
}

// String formats the error as "provider error [type/code]: message".
func (e *providerError) String() string {
	var tags []string
	if e.Type != "" {
		tags = append(tags, e.Type)
	}
	if code := strings.Trim(string(e.Code), `"`); code != "" && code != "null" && code != e.Type {
		tags = append(tags, code)
	}
	msg := e.Message
	if msg == "" {
		msg = "(no message)"
	}
	if len(tags) == 0 {
		return "provider error: " + msg
	}
	return fmt.Sprintf("provider error [%s]: %s", strings.Join(tags, "/"), msg)
}

// errorMessageFromBody extracts the provider's message from an error response body, falling
// back to the body's text (shortened) or, for an empty body, to fallback.
func errorMessageFromBody(body []byte, fallback string) string {
	var parsed providerErrorBody
	if json.Unmarshal(body, &parsed) == nil && parsed.Error != nil {
		return parsed.Error.String()
	}
	text := strings.TrimSpace(string(body))
	if text == "" {
		return fallback
	}
	const limit = 500
	if len(text) > limit {
		text = text[:limit] + "…"
	}
	return text
}

// --- assembling the message ------------------------------------------------------------------

// streamAssembler builds the assistant message from normalised pieces and pushes the matching
// event for each piece. Decoders address blocks by their content index, which they map from
// the provider's own block or tool call index.
type streamAssembler struct {
	out       *AssistantStream
	blocks    []*pendingBlock
	id, model string
	usage     Usage
	timestamp int64
}

// pendingBlock is a content block being streamed.
type pendingBlock struct {
	kind     string          // "text", "thinking" or "toolCall"
	text     strings.Builder // the text, the thinking or the raw argument JSON
	id, name string          // tool calls only
	ended    bool            // tool calls only: toolcall_end was pushed
}

func newStreamAssembler(out *AssistantStream) *streamAssembler {
	return &streamAssembler{out: out, timestamp: time.Now().UnixMilli()}
}

// open starts a block of the given kind and returns its content index.
func (a *streamAssembler) open(kind string) int {
	a.blocks = append(a.blocks, &pendingBlock{kind: kind})
	return len(a.blocks) - 1
}

// openToolCall starts a tool call block and returns its content index.
func (a *streamAssembler) openToolCall(id, name string) int {
	i := a.open("toolCall")
	a.blocks[i].id, a.blocks[i].name = id, name
	return i
}

// appendText adds a text or thinking delta to block i and pushes its event. Empty deltas are
// dropped: they say nothing.
func (a *streamAssembler) appendText(i int, delta string) {
	if delta == "" {
		return
	}
	b := a.blocks[i]
	b.text.WriteString(delta)
	if b.kind == "thinking" {
		a.out.Push(ThinkingDeltaEvent{ContentIndex: i, Delta: delta})
	} else {
		a.out.Push(TextDeltaEvent{ContentIndex: i, Delta: delta})
	}
}

// appendToLast adds a delta to the last block if it has the given kind, else opens a new
// block of that kind first. Streams without block indexes (OpenAI) use it for text and thinking.
func (a *streamAssembler) appendToLast(kind, delta string) {
	if delta == "" {
		return
	}
	i := len(a.blocks) - 1
	if i < 0 || a.blocks[i].kind != kind {
		i = a.open(kind)
	}
	a.appendText(i, delta)
}

// appendArguments adds a fragment of raw argument JSON to tool call i and pushes its event.
func (a *streamAssembler) appendArguments(i int, fragment string) {
	if fragment == "" {
		return
	}
	a.blocks[i].text.WriteString(fragment)
	a.out.Push(ToolCallDeltaEvent{ContentIndex: i, Delta: fragment})
}

// endToolCall reports tool call i as complete, once.
func (a *streamAssembler) endToolCall(i int) {
	b := a.blocks[i]
	if b.ended {
		return
	}
	b.ended = true
	a.out.Push(ToolCallEndEvent{ContentIndex: i, ToolCall: a.toolCall(b)})
}

// toolCall returns the call of a tool call block. The arguments are the fragments exactly as
// received, never repaired: after a length stop they may be cut off.
func (a *streamAssembler) toolCall(b *pendingBlock) ToolCall {
	return ToolCall{ID: b.id, Name: b.name, Arguments: b.text.String()}
}

// message returns the message assembled so far (without a stop reason).
func (a *streamAssembler) message() AssistantMessage {
	msg := AssistantMessage{ID: a.id, Model: a.model, Usage: a.usage, Timestamp: a.timestamp}
	for _, b := range a.blocks {
		switch b.kind {
		case "text":
			msg.Content = append(msg.Content, TextContent{Text: b.text.String()})
		case "thinking":
			msg.Content = append(msg.Content, ThinkingContent{Thinking: b.text.String()})
		case "toolCall":
			msg.Content = append(msg.Content, a.toolCall(b))
		}
	}
	return msg
}

// --- shared outbound helpers -----------------------------------------------------------------

// toolSchema returns a tool's parameter schema as raw JSON: an empty schema becomes an object
// schema without properties, and a schema that is not JSON is an error.
func toolSchema(def ToolDefinition) (json.RawMessage, error) {
	text := strings.TrimSpace(def.Parameters)
	if text == "" {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	if !json.Valid([]byte(text)) {
		return nil, fmt.Errorf("tool %q: parameters are not valid JSON", def.Name)
	}
	return json.RawMessage(text), nil
}

// postJSON returns a POST request of body as JSON to url, asking for an event stream.
func postJSON(ctx context.Context, url string, body any) (*http.Request, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding request body: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return req, nil
}

// skipInHistory reports whether an assistant message is left out of requests: a response that
// failed or was cancelled is a partial answer the provider never finished, and replaying it
// would show the model words it did not mean to end with.
func skipInHistory(m AssistantMessage) bool {
	return m.StopReason == StopReasonError || m.StopReason == StopReasonAborted
}

// forEachSSE hands each event of body to handle until handle reports the end of the stream or
// the body ends. It returns the error that stopped reading, if any.
func forEachSSE(body io.Reader, handle func(SSEEvent) (stop bool)) error {
	for event, err := range ReadSSE(body) {
		if err != nil {
			return fmt.Errorf("reading stream: %w", err)
		}
		if handle(event) {
			return nil
		}
	}
	return nil
}
