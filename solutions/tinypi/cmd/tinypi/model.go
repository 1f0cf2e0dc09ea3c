package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// checkedModel refuses a reply that breaks the rules of the session log before the loop logs it:
// a tool call without an id, or two calls of one reply with the same id. The reply becomes an
// error (stop reason error, saying why, without its tool calls), so the run ends with that error
// and the session stays one that can be resumed. A reply comes from a provider, a proxy or a
// script: it is data, and may be hostile.
type checkedModel struct{ tinypi.Model }

// Stream implements tinypi.Model.
func (m checkedModel) Stream(ctx context.Context, req tinypi.Request) *tinypi.AssistantStream {
	in := m.Model.Stream(ctx, req)
	if in == nil {
		return nil // the agent reports a model without a stream
	}
	out := tinypi.NewAssistantStream()
	go func() {
		defer out.Close()
		for ev := range in.All() {
			if done, ok := ev.(tinypi.DoneEvent); ok {
				if err := checkCallIDs(done.Message); err != nil {
					ev = tinypi.ErrorEvent{Message: refusedReply(done.Message, err)}
				}
			}
			out.Push(ev)
		}
	}()
	return out
}

// checkedScript is script with every reply that checkedModel would refuse replaced by the
// refusal it streams (refusedReply), so that a run of a recorded script (tinypi eval's cases)
// meets the same check as a live model. A reply that is an error already (stop reason error or
// aborted) streams as an error, which checkedModel passes on as it is.
func checkedScript(script []tinypi.AssistantMessage) []tinypi.AssistantMessage {
	out := slices.Clone(script)
	for i, m := range out {
		if m.StopReason == tinypi.StopReasonError || m.StopReason == tinypi.StopReasonAborted {
			continue
		}
		if err := checkCallIDs(m); err != nil {
			out[i] = refusedReply(m, err)
		}
	}
	return out
}

// checkCallIDs says what is wrong with the ids of m's tool calls, or returns nil.
func checkCallIDs(m tinypi.AssistantMessage) error {
	seen := map[string]bool{}
	for i, call := range m.ToolCalls() {
		switch {
		case call.ID == "":
			return fmt.Errorf("the model's reply was refused: its tool call %d (%q) has no id, and every call needs one to be answered", i+1, call.Name)
		case seen[call.ID]:
			return fmt.Errorf("the model's reply was refused: two of its tool calls have the id %q, and each call needs its own", call.ID)
		}
		seen[call.ID] = true
	}
	return nil
}

// refusedReply is m as an error: its text and thinking without its tool calls.
func refusedReply(m tinypi.AssistantMessage, err error) tinypi.AssistantMessage {
	var content []tinypi.ContentBlock
	for _, b := range m.Content {
		if _, call := b.(tinypi.ToolCall); !call {
			content = append(content, b)
		}
	}
	m.Content = content
	m.StopReason = tinypi.StopReasonError
	m.ErrorMessage = err.Error()
	return m
}
