// Command readme-session runs chapter 07's README round trip (the scripted model of
// cmd/readme-trace asks for README.md, reads it with call-1 and answers) through an Agent whose
// session log is a file, and leaves that file behind: the run of chapter 10, to be looked at
// event by event with `course serve`.
//
//	go run ./cmd/readme-session -session sessions/readme.jsonl
//	course serve sessions/readme.jsonl
//
// The file must not exist yet: a session log is created once and only appended to. Everything is
// offline and the messages are the same on every run; only the events' times differ.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

func main() {
	path := flag.String("session", "", "the session log (JSONL) to create; it must not exist")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: readme-session -session PATH")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *path == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	n, err := run(context.Background(), *path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "readme-session:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %d events to %s\nlook at them with: course serve %s\n", n, *path, *path)
}

// run writes the README round trip to a new session log at path and returns how many events it
// holds.
func run(ctx context.Context, path string) (n int, err error) {
	registry, err := tinypi.NewRegistry(readTool())
	if err != nil {
		return 0, err
	}
	// The script of cmd/readme-trace (tinypi.TraceREADMERoundTrip).
	model := tinypi.NewScriptedModel(
		tinypi.AssistantMessage{
			Content: []tinypi.ContentBlock{
				tinypi.Text("我先读取项目说明。"),
				tinypi.ToolCall{ID: "call-1", Name: "read", Arguments: `{"path":"README.md"}`},
			},
			StopReason: tinypi.StopReasonToolUse,
		},
		tinypi.AssistantMessage{Content: []tinypi.ContentBlock{tinypi.Text("项目名是 tiny-pi。")}, StopReason: tinypi.StopReasonStop},
	)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, err
	}
	s, err := tinypi.CreateSession(tinypi.SessionOptions{ID: "readme", Path: path})
	if err != nil {
		return 0, err
	}
	// Close writes what is still pending (the log is worth keeping even after a failed run) and
	// stops the writer, also when a lab not yet done panics.
	defer func() {
		if cerr := s.Close(); err == nil {
			err = cerr
		}
		n = s.Len()
	}()
	agent, err := tinypi.NewAgent(tinypi.AgentOptions{SystemPrompt: tinypi.TraceSystemPrompt, Model: model, Tools: registry, Session: s})
	if err == nil {
		err = agent.Prompt(ctx, tinypi.UserMessage{Content: []tinypi.ContentBlock{tinypi.Text(tinypi.TraceQuestion)}})
	}
	if err == nil {
		err = agent.WaitForIdle(ctx)
	}
	if err == nil && agent.State().LastError != "" {
		err = errors.New(agent.State().LastError)
	}
	return 0, err
}

// readTool reads README.md, and nothing else, from memory.
func readTool() tinypi.Tool {
	return tinypi.Tool{
		ToolDefinition: tinypi.ToolDefinition{
			Name:        "read",
			Description: "读取工作区中的一个文件。",
			Parameters:  `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		},
		Execute: func(ctx context.Context, args json.RawMessage, _ tinypi.ToolExecContext) (tinypi.ToolOutput, error) {
			var in struct{ Path string }
			if err := json.Unmarshal(args, &in); err != nil {
				return tinypi.ToolOutput{}, fmt.Errorf("read: %w", err)
			}
			if in.Path != "README.md" {
				return tinypi.ToolOutput{}, fmt.Errorf("read: %s: no such file", in.Path)
			}
			return tinypi.ToolOutput{Content: []tinypi.ContentBlock{tinypi.Text(tinypi.TraceREADME)}}, nil
		},
	}
}
