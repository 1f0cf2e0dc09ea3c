package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// usageMeter counts the tokens the providers reported (the usage of every response, the
// summaries of compactions included: count wraps the model) for the run in progress and the
// whole session, and says them, with their cost when prices are set,
// after each run (report); it also says each compaction as it happens. show is an agent
// subscriber; report is called by the mode once the run's events are delivered, so that the line
// comes after the run's own output.
type usageMeter struct {
	mu  sync.Mutex
	out io.Writer
	// reportAtEnd has show report at each run's end itself (RPC mode, where runs follow each
	// other without the program's knowing).
	reportAtEnd bool
	// price is in dollars per million tokens, input and output; nil when none was given.
	price *prices
	run   tokenCount
	total tokenCount
}

// prices are dollars per million tokens.
type prices struct{ in, out float64 }

// tokenCount is a sum of usages: in counts every input token (read from a cache or not).
type tokenCount struct{ in, out int }

func (c *tokenCount) add(u tinypi.Usage) {
	c.in += u.Input + u.CacheRead + u.CacheWrite
	c.out += u.Output
}

func (p *prices) cost(c tokenCount) float64 {
	return (float64(c.in)*p.in + float64(c.out)*p.out) / 1e6
}

// newUsageMeter is a meter whose session count starts with the usage of the assistant messages
// already in session (a resumed or forked session). It reads the log in place (EachEvent): a copy
// of a long log's events would be as large as the log.
func newUsageMeter(out io.Writer, price *prices, session *tinypi.Session) *usageMeter {
	m := &usageMeter{out: out, price: price}
	session.EachEvent(func(ev tinypi.SessionEvent) bool {
		if a, ok := ev.Message.(tinypi.AssistantMessage); ok && ev.Type == tinypi.EventAssistantMessage {
			m.total.add(a.Usage)
		}
		return true
	})
	return m
}

// show takes one agent event.
func (m *usageMeter) show(ev tinypi.AgentEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch ev := ev.(type) {
	case tinypi.RunLoopEvent:
		if le, ok := ev.Event.(tinypi.CompactionEvent); ok {
			fmt.Fprintf(m.out, "tinypi: %s\n", compactionLine(le))
		}
	case tinypi.RunEndEvent:
		if m.reportAtEnd {
			m.reportLocked()
		}
	}
}

// count is model, its every response's usage counted by m.
func (m *usageMeter) count(model tinypi.Model) tinypi.Model { return meteredModel{model, m} }

// meteredModel adds the usage of each response's terminal event to its meter.
type meteredModel struct {
	tinypi.Model
	m *usageMeter
}

// Stream implements tinypi.Model.
func (mm meteredModel) Stream(ctx context.Context, req tinypi.Request) *tinypi.AssistantStream {
	in := mm.Model.Stream(ctx, req)
	if in == nil {
		return nil
	}
	out := tinypi.NewAssistantStream()
	go func() {
		defer out.Close()
		for ev := range in.All() {
			switch t := ev.(type) {
			case tinypi.DoneEvent:
				mm.m.add(t.Message.Usage)
			case tinypi.ErrorEvent:
				mm.m.add(t.Message.Usage)
			}
			out.Push(ev)
		}
	}()
	return out
}

func (m *usageMeter) add(u tinypi.Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.run.add(u)
	m.total.add(u)
}

// sessionLine is the session's tokens (and cost) so far.
func (m *usageMeter) sessionLine() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := "tokens: session " + thousands(m.total.in) + " in / " + thousands(m.total.out) + " out"
	if m.price != nil {
		s += fmt.Sprintf(" · cost $%.4f", m.price.cost(m.total))
	}
	return s
}

// report says the last run's tokens (and cost) and the session's, and starts a new run's count.
func (m *usageMeter) report() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reportLocked()
}

func (m *usageMeter) reportLocked() {
	fmt.Fprintf(m.out, "tinypi: %s\n", m.line())
	m.run = tokenCount{}
}

// line is "tokens: 1,234 in / 56 out · session 5,678", and the costs when prices are set.
func (m *usageMeter) line() string {
	if m.total == (tokenCount{}) {
		return "tokens: none reported by the provider"
	}
	s := fmt.Sprintf("tokens: %s in / %s out · session %s", thousands(m.run.in), thousands(m.run.out), thousands(m.total.in+m.total.out))
	if m.price != nil {
		s += fmt.Sprintf(" · cost $%.4f, session $%.4f", m.price.cost(m.run), m.price.cost(m.total))
	}
	return s
}

// compactionLine says what a compaction did, or why it failed.
func compactionLine(ev tinypi.CompactionEvent) string {
	if ev.Compaction == nil {
		return fmt.Sprintf("compaction (%s) failed, the context is as it was: %s", ev.Reason, oneLine(ev.Error))
	}
	c := ev.Compaction
	return fmt.Sprintf("compacted the context (%s): %s tokens before; a summary of %d characters replaces the messages before seq %d",
		c.Reason, thousands(c.TokensBefore), len([]rune(c.Summary)), c.FirstKeptSeq)
}

// thousands is n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// pricesFromEnv reads TINYPI_PRICE_IN and TINYPI_PRICE_OUT, dollars per million input and output
// tokens: both or neither.
func pricesFromEnv(e env) (*prices, error) {
	in, out := strings.TrimSpace(e.getenv("TINYPI_PRICE_IN")), strings.TrimSpace(e.getenv("TINYPI_PRICE_OUT"))
	if in == "" && out == "" {
		return nil, nil
	}
	var p prices
	for _, v := range []struct {
		name, text string
		to         *float64
	}{{"TINYPI_PRICE_IN", in, &p.in}, {"TINYPI_PRICE_OUT", out, &p.out}} {
		f, err := strconv.ParseFloat(v.text, 64)
		if err != nil || f < 0 || f != f || f > 1e6 {
			return nil, fmt.Errorf("%s=%q: want dollars per million tokens, a number such as 2.50 (set TINYPI_PRICE_IN and TINYPI_PRICE_OUT together)", v.name, v.text)
		}
		*v.to = f
	}
	return &p, nil
}
