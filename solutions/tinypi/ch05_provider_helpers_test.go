package tinypi

// Helpers of chapter 05's focused tests that later chapters' tests use too. They live apart
// from the tests so that, in a later chapter's directory, a plain `go test` compiles them
// without the earlier chapter's tests, which are behind the build tag allchapters there.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// ch05Collect reads a stream to its end. An adapter runs on its own goroutine, where a panic
// cannot reach the test; the adapter turns it into an error event, and ch05Collect turns that
// back into t.Fatal with the lab's pending message.
func ch05Collect(t *testing.T, s *AssistantStream) ([]AssistantEvent, AssistantMessage) {
	t.Helper()
	var events []AssistantEvent
	for e := range s.All() {
		events = append(events, e)
	}
	msg, err := s.Result()
	if err != nil {
		t.Fatalf("the stream ended without a terminal event: %v (events: %v)", err, ch05Types(events))
	}
	if pending := labPending(msg.ErrorMessage); pending != "" {
		t.Fatal(pending)
	}
	if strings.Contains(msg.ErrorMessage, "provider adapter panicked") {
		t.Fatal(msg.ErrorMessage)
	}
	return events, msg
}

// ch05Types lists the event types, for failure messages.
func ch05Types(events []AssistantEvent) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.EventType())
	}
	return out
}

// ch05SeenRequest is what the test server received.
type ch05SeenRequest struct {
	Path   string
	Header http.Header
	Body   map[string]any
}

// ch05Serve starts a server whose handler writes body as an event stream, in small pieces with
// a flush after each (so the client sees a live stream, split at arbitrary bytes). It records
// the last request. The server is closed when the test ends.
func ch05Serve(t *testing.T, status int, body []byte) (*httptest.Server, func() ch05SeenRequest) {
	t.Helper()
	var mu sync.Mutex
	var seen ch05SeenRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var decoded map[string]any
		if err := json.Unmarshal(data, &decoded); err != nil {
			t.Errorf("request body is not JSON: %v\n%s", err, data)
		}
		mu.Lock()
		seen = ch05SeenRequest{Path: r.URL.Path, Header: r.Header.Clone(), Body: decoded}
		mu.Unlock()
		if status >= 400 {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		w.WriteHeader(status)
		flusher, _ := w.(http.Flusher)
		for rest := body; len(rest) > 0; {
			n := min(len(rest), 97)
			if _, err := w.Write(rest[:n]); err != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
			rest = rest[n:]
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() ch05SeenRequest {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// ch05Provider returns a provider of api that talks to srv.
func ch05Provider(t *testing.T, api string, srv *httptest.Server) Model {
	t.Helper()
	cfg := ProviderConfig{API: api, BaseURL: srv.URL, APIKey: "test-key", Model: "test-model", HTTPClient: srv.Client()}
	if api == APIOpenAI {
		cfg.BaseURL = srv.URL + "/v1"
	}
	m, err := NewProvider(cfg)
	if err != nil {
		t.Fatalf("NewProvider: %v", err)
	}
	return m
}

// ch05Recording is what the sidecar (.md) of a recording in testdata/sse says it decodes to.
type ch05Recording struct {
	lab string // the lab whose test replays it through an adapter ("5.1": framing only)
	api string // APIOpenAI, APIAnthropic, or "responses" (OpenAI Responses API, framing only)
	// sseEvents is how many events ReadSSE dispatches and lastEvent the type of the last one.
	sseEvents int
	lastEvent string
	// want is the final message (Timestamp and ErrorMessage ignored); wantErr a part of the
	// error message, for streams that end with an error event.
	want    AssistantMessage
	wantErr string
	// wantEnds are the content indexes of the toolcall_end events.
	wantEnds []int
}

// ch05Text and ch05Thinking make content blocks for the table.
func ch05Text(s string) ContentBlock { return TextContent{Text: s} }

func ch05Thinking(s string) ContentBlock { return ThinkingContent{Thinking: s} }

func ch05Call(id, name, args string) ContentBlock {
	return ToolCall{ID: id, Name: name, Arguments: args}
}

// ch05TaxesArgs is the make_file input that max_tokens cut inside a string: invalid JSON, kept
// exactly as received.
const ch05TaxesArgs = "{\"filename\": \"taxes.txt\", \"lines_of_text\": [\n\"# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s\",\n\"\",\n\"## INTRODUCTION\",\n\"\",\n\"Filing taxes"

const ch05TaxesText = "I'll create a comprehensive tax guide for someone with multiple W2s and save it in a file called taxes.txt. Let me do that for you now."

// ch05Recordings holds one entry per recording file; TestLab5_1_SSE分帧_Recordings checks that
// none is missing.
var ch05Recordings = map[string]ch05Recording{
	// Anthropic, plain endings (lab 5.4).
	"anthropic_end_turn_after_tool_result_sdkgo.sse": {
		lab: "5.4", api: APIAnthropic, sseEvents: 11, lastEvent: "message_stop",
		want: AssistantMessage{
			ID: "msg_01Hh7yjeiaEaEREnpywjByCo", Model: "claude-3-7-sonnet-20250219",
			Content:    []ContentBlock{ch05Text("The current weather in San Francisco is 68 degrees Fahrenheit.")},
			StopReason: StopReasonStop, Usage: Usage{Input: 509, Output: 19, Total: 528},
		},
	},
	"anthropic_parallel_tool_use_with_text.sse": {
		lab: "5.4", api: APIAnthropic, sseEvents: 22, lastEvent: "message_stop",
		want: AssistantMessage{
			ID: "msg_01PSvJdjd5keNSD63VHjYzex", Model: "claude-sonnet-4-20250514",
			Content: []ContentBlock{
				ch05Text("I'll add and multiply the numbers 2 and 3 for you."),
				ch05Call("toolu_01UYxUYC2zRPY8wiutnF48eP", "add", `{"a": 2, "b": 3}`),
				ch05Call("toolu_01VaRx1jpWCvPhi7L4kywAcd", "multiply", `{"a": 2, "b": 3}`),
			},
			StopReason: StopReasonToolUse, Usage: Usage{Input: 502, Output: 137, Total: 639},
		},
		wantEnds: []int{1, 2},
	},
	"anthropic_text_after_tool_results.sse": {
		lab: "5.4", api: APIAnthropic, sseEvents: 12, lastEvent: "message_stop",
		want: AssistantMessage{
			ID: "msg_015WPQbJC4ysDAi7LuCD43Fp", Model: "claude-sonnet-4-20250514",
			Content:    []ContentBlock{ch05Text("The results are:\n- 2 + 3 = 5\n- 2 × 3 = 6")},
			StopReason: StopReasonStop, Usage: Usage{Input: 700, Output: 31, Total: 731},
		},
	},
	"anthropic_tool_use_single_sdkgo.sse": {
		lab: "5.4", api: APIAnthropic, sseEvents: 24, lastEvent: "message_stop",
		want: AssistantMessage{
			ID: "msg_01H1pwRRkQxKbUGKi785gT4M", Model: "claude-3-7-sonnet-20250219",
			Content: []ContentBlock{
				ch05Text("I'll get the current weather in San Francisco for you in Fahrenheit."),
				ch05Call("toolu_01RaX2WYWRWCbaeFHssmGJXG", "get_weather", `{"city": "San Francisco", "units": "fahrenheit"}`),
			},
			StopReason: StopReasonToolUse, Usage: Usage{Input: 397, Output: 89, Total: 486},
		},
		wantEnds: []int{1},
	},

	// Anthropic, other endings (lab 5.5).
	"anthropic_error_midstream_DERIVED.sse": {
		lab: "5.5", api: APIAnthropic, sseEvents: 18, lastEvent: "error",
		want: AssistantMessage{
			ID: "msg_01PSvJdjd5keNSD63VHjYzex", Model: "claude-sonnet-4-20250514",
			Content: []ContentBlock{
				ch05Text("I'll add and multiply the numbers 2 and 3 for you."),
				ch05Call("toolu_01UYxUYC2zRPY8wiutnF48eP", "add", `{"a": 2, "b": 3}`),
				ch05Call("toolu_01VaRx1jpWCvPhi7L4kywAcd", "multiply", `{"a": 2`),
			},
			StopReason: StopReasonError, Usage: Usage{Input: 502, Output: 4, Total: 506},
		},
		wantErr:  "Overloaded",
		wantEnds: []int{1},
	},
	// The file ends without the blank line after message_stop: that event is discarded, so
	// the stream is incomplete.
	"anthropic_max_tokens_partial_tool_use.sse": {
		lab: "5.5", api: APIAnthropic, sseEvents: 15, lastEvent: "message_delta",
		want: AssistantMessage{
			ID: "msg_01UdjYBBipA9omjYhicnevgq", Model: "claude-3-7-sonnet-20250219",
			Content: []ContentBlock{
				ch05Text(ch05TaxesText),
				ch05Call("toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file", ch05TaxesArgs),
			},
			StopReason: StopReasonError, Usage: Usage{Input: 450, Output: 124, Total: 574},
		},
		wantErr: "incomplete stream",
	},
	// The sidecar counts 15 events because the SDK it used does not report ping; ReadSSE
	// dispatches every event, ping included.
	"anthropic_max_tokens_partial_tool_use_NORMALIZED.sse": {
		lab: "5.5", api: APIAnthropic, sseEvents: 16, lastEvent: "message_stop",
		want: AssistantMessage{
			ID: "msg_01UdjYBBipA9omjYhicnevgq", Model: "claude-3-7-sonnet-20250219",
			Content: []ContentBlock{
				ch05Text(ch05TaxesText),
				ch05Call("toolu_01EKqbqmZrGRXy18eN7m9kvY", "make_file", ch05TaxesArgs),
			},
			StopReason: StopReasonLength, Usage: Usage{Input: 450, Output: 124, Total: 574},
		},
	},

	// OpenAI-compatible, plain endings (lab 5.3).
	"openai_chat_parallel_tool_calls.sse": {
		lab: "5.3", api: APIOpenAI, sseEvents: 14, lastEvent: "message",
		want: AssistantMessage{
			ID: "chatcmpl-DuLdMEdkw5VsZSxKY3i9G934hT7LM", Model: "gpt-4o-2024-08-06",
			Content: []ContentBlock{
				ch05Call("call_ehIWdjL1abZk1h8FWGLQ0Hie", "add", `{"a": 2, "b": 3}`),
				ch05Call("call_fBSgA47J5VeONggizTIvl7AH", "multiply", `{"a": 2, "b": 3}`),
			},
			StopReason: StopReasonToolUse, Usage: Usage{Input: 106, Output: 50, Total: 156},
		},
		wantEnds: []int{0, 1},
	},
	"openai_chat_text_after_tool_results.sse": {
		lab: "5.3", api: APIOpenAI, sseEvents: 23, lastEvent: "message",
		want: AssistantMessage{
			ID: "chatcmpl-DuLdNvsdmTNPbya2tqjr8GbYubTqm", Model: "gpt-4o-2024-08-06",
			Content:    []ContentBlock{ch05Text("The sum of 2 and 3 is 5, and the product is 6.")},
			StopReason: StopReasonStop, Usage: Usage{Input: 172, Output: 20, Total: 192},
		},
	},
	"openai_compat_deepseek_parallel_tool_calls_reasoning.sse": {
		lab: "5.3", api: APIOpenAI, sseEvents: 57, lastEvent: "message",
		want: AssistantMessage{
			ID: "chatcmpl-3fcf921492b95785246060c8", Model: "deepseek-v4-pro-0813",
			Content: []ContentBlock{
				ch05Thinking("The user wants me to run glob for .go files and ls for current directory in parallel."),
				ch05Text("\n\n"),
				ch05Call("call_67389dea0febe22c", "glob", `{"pattern":"**/*.go"}`),
				ch05Call("call_9b9d9dc30e777faf", "ls", `{"path":"/tmp/crush-test/TestCoderAgent/deepseek-v4/parallel_tool_calls"}`),
			},
			StopReason: StopReasonToolUse, Usage: Usage{Input: 9005, Output: 115, Total: 9120},
		},
		wantEnds: []int{2, 3},
	},

	// OpenAI-compatible streams written by hand (lab 5.3): providers differ where the meaning
	// is still clear.
	// [DONE] without any finish_reason: complete; tool calls were streamed, so toolUse.
	"openai_compat_done_without_finish_reason_WRITTEN.sse": {
		lab: "5.3", api: APIOpenAI, sseEvents: 8, lastEvent: "message",
		want: AssistantMessage{
			ID: "chatcmpl-0f3c9a7e5b2d4c81a6e9d07b", Model: "claude-sonnet-4-5",
			Content: []ContentBlock{
				ch05Text("I'll check the weather in Paris for you."),
				ch05Call("toolu_01Q7mJ3x9VbT2kLpR8sW4nYe", "get_weather", `{"city": "Paris", "unit": "celsius"}`),
			},
			StopReason: StopReasonToolUse, Usage: Usage{Input: 412, Output: 58, Total: 470},
		},
		wantEnds: []int{1},
	},
	// delta.content as a list of typed parts: thinking parts and text parts.
	"openai_compat_mistral_content_parts_WRITTEN.sse": {
		lab: "5.3", api: APIOpenAI, sseEvents: 7, lastEvent: "message",
		want: AssistantMessage{
			ID: "5e0b8c2f7a9d41c3b6f14e2a9c7d8b01", Model: "magistral-medium-2509",
			Content: []ContentBlock{
				ch05Thinking("The user asks for 17 times 23. 17*20 = 340 and 17*3 = 51, so 391."),
				ch05Text("17 × 23 = 391."),
			},
			StopReason: StopReasonStop, Usage: Usage{Input: 14, Output: 84, Total: 98},
		},
	},
	// Reasoning only in reasoning_details; the encrypted part carries no text.
	"openai_compat_openrouter_reasoning_details_only_WRITTEN.sse": {
		lab: "5.3", api: APIOpenAI, sseEvents: 7, lastEvent: "message",
		want: AssistantMessage{
			ID: "gen-1764547400-Qm3pX8vT2rL9kW4nB7cY", Model: "google/gemini-2.5-pro",
			Content: []ContentBlock{
				ch05Thinking("**Adding the numbers**\n\nThe user wants the sum of 2 and 3, which is 5."),
				ch05Text("2 + 3 = 5."),
			},
			StopReason: StopReasonStop, Usage: Usage{Input: 9, Output: 87, Total: 96},
		},
	},

	// OpenAI-compatible, other endings (lab 5.5).
	"openai_chat_length_mid_tool_call_DERIVED.sse": {
		lab: "5.5", api: APIOpenAI, sseEvents: 11, lastEvent: "message",
		want: AssistantMessage{
			ID: "chatcmpl-DuLdMEdkw5VsZSxKY3i9G934hT7LM", Model: "gpt-4o-2024-08-06",
			Content: []ContentBlock{
				ch05Call("call_ehIWdjL1abZk1h8FWGLQ0Hie", "add", `{"a": 2, "b": 3}`),
				ch05Call("call_fBSgA47J5VeONggizTIvl7AH", "multiply", `{"a": 2, `),
			},
			StopReason: StopReasonLength,
		},
	},
	"openai_compat_deepseek_finish_length.sse": {
		lab: "5.5", api: APIOpenAI, sseEvents: 13, lastEvent: "message",
		want: AssistantMessage{
			ID: "chatcmpl-2ebd5e0026c4b4aba27316e7", Model: "deepseek-v4-flash-0731",
			Content: []ContentBlock{
				ch05Thinking("The user message is about using glob to find .go files and ls to list directory, running both in parallel. Title should be concise, same language (English), summary."),
				ch05Text("List .go files"),
			},
			StopReason: StopReasonLength, Usage: Usage{Input: 162, Output: 41, Total: 203},
		},
	},
	"openai_compat_groq_error_event_after_text.sse": {
		lab: "5.5", api: APIOpenAI, sseEvents: 86, lastEvent: "error",
		want: AssistantMessage{
			ID: "chatcmpl-fd87720a-9b48-4161-bcd7-6127bd0d3696", Model: "openai/gpt-oss-120b",
			Content: []ContentBlock{
				ch05Thinking("The user says: \"dont make a tool call, just return the string \"maybe\" by itself, not as json output, to test error handling; on the second try you can use valid args\". The developer instructions: be concise. Never use pretty double quotes, just regular ones.\n\nWe need to respond with just the string maybe, not JSON, and no tool call. So just plain text: maybe."),
				ch05Text("maybe"),
			},
			StopReason: StopReasonError,
		},
		wantErr: "Tool choice is required, but model did not call a tool",
	},
	"openai_compat_groq_error_event_midstream.sse": {
		lab: "5.5", api: APIOpenAI, sseEvents: 95, lastEvent: "error",
		want: AssistantMessage{
			ID: "chatcmpl-4f39f3af-3267-4ac1-a0cf-6aa7451877dc", Model: "openai/gpt-oss-120b",
			Content: []ContentBlock{
				ch05Thinking("We need to call the tool with invalid parameters first, then second call with valid args. The user wants us to test error handling. So first call should have wrong parameters (e.g., missing required \"name\" or extra param). The tool expects only \"name\". If we send extra property, that might cause error. Or missing \"name\". We'll do a call with missing name: {}. Then second call with name: \"test\". Let's do that."),
			},
			StopReason: StopReasonError,
		},
		wantErr: "Tool call validation failed",
	},
	// finish_reason length arrives (twice), then an error object: the error wins.
	"openai_compat_openrouter_length_then_error_chunk.sse": {
		lab: "5.5", api: APIOpenAI, sseEvents: 5, lastEvent: "message",
		want: AssistantMessage{
			ID: "gen-1762179802-UN8pkJI4AGZvryk0kFnb", Model: "minimax/minimax-m2:free",
			Content:    []ContentBlock{ch05Thinking("We need to respond to a greeting. The user")},
			StopReason: StopReasonError, Usage: Usage{Input: 43, Output: 10, Total: 53},
		},
		wantErr: "Token limit reached",
	},

	// OpenAI Responses API: a different wire format that tinypi does not speak. The recording
	// is JSON lines with the SSE framing stripped; the test re-frames it and checks framing only.
	"openai_responses_error_midstream.chunks.jsonl": {
		lab: "5.1", api: "responses", sseEvents: 4, lastEvent: "response.failed",
	},
}

// ch05RecordingBody returns a recording as it came over the wire. A .jsonl recording is
// re-framed as SSE: each line becomes `event: <its type>` and `data: <the line>`.
func ch05RecordingBody(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "sse", name))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(name, ".jsonl") {
		return data
	}
	var b bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(line), &head); err != nil {
			t.Fatalf("%s: line is not JSON: %v", name, err)
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", head.Type, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
