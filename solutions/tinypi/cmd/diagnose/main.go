// Command diagnose runs the agent loop of chapter 07 against stub models and prints every run
// round by round: what the model said, which tool calls ran and which did not, the transcript's
// role sequence, the tool calls left without a result, how many times the tools really ran, how
// the run ended and the final answer.
//
// It uses nothing but the public API of package tinypi, so it diagnoses whatever RunAgentLoop
// the module holds. In your practice directory that is YOUR loop:
//
//	go run ./cmd/diagnose weather-fx-skip weather-fx-reask
//	go run ./cmd/diagnose all
//
// `course diagnose 07 NAME` runs this same program twice, on the reference with a known mistake
// applied and on the reference itself, and compares the two.
//
// The models are stubs that react to what they are sent (a missing tool result changes their
// next answer) and the tools work in memory, so every run prints the same text every time. The
// last line of each run, starting with the summary label, is meant for programs: key=value
// fields that `course diagnose` reads to build its comparison table.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// maxSteps is the step limit of every scenario that does not set its own.
const maxSteps = 6

// runTimeout bounds one run: a loop that waits forever is a finding too.
const runTimeout = 10 * time.Second

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the scenarios named in args and returns the exit code: 2 for bad arguments. The
// -lang flag, before the scenario names, chooses the language of the report: zh (the default) or
// en. The summary line's key=value fields are the same in both.
func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("diagnose", flag.ContinueOnError)
	flags.SetOutput(io.Discard) // errors and usage are printed below, in the chosen language
	lang := flags.String("lang", "zh", "zh or en")
	err := flags.Parse(args)
	l, ok := labelsFor(*lang)
	if errors.Is(err, flag.ErrHelp) {
		usage(stdout, l)
		return 0
	}
	if err == nil && !ok {
		err = fmt.Errorf("unsupported -lang %q: use zh or en", *lang)
	}
	var scenarios []scenario
	if err == nil {
		scenarios, err = pick(l, flags.Args())
	}
	if err != nil {
		fmt.Fprintf(stderr, "diagnose: %v\n\n", err)
		usage(stderr, l)
		return 2
	}
	for i, sc := range scenarios {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if err := report(stdout, l, sc, runScenario(sc)); err != nil {
			fmt.Fprintf(stderr, "diagnose: %v\n", err)
			return 1
		}
	}
	return 0
}

// pick returns the scenarios args name, in the order given; "all" stands for every scenario.
func pick(l labels, args []string) ([]scenario, error) {
	if len(args) == 0 {
		return nil, errors.New("name at least one scenario")
	}
	var picked []scenario
	for _, name := range args {
		if name == "all" {
			picked = append(picked, scenarios(l)...)
			continue
		}
		sc, ok := lookup(l, name)
		if !ok {
			return nil, fmt.Errorf("unknown scenario %q", name)
		}
		picked = append(picked, sc)
	}
	return picked, nil
}

func lookup(l labels, name string) (scenario, bool) {
	for _, sc := range scenarios(l) {
		if sc.name == name {
			return sc, true
		}
	}
	return scenario{}, false
}

func usage(w io.Writer, l labels) {
	fmt.Fprintln(w, l.usage)
	for _, sc := range scenarios(l) {
		fmt.Fprintf(w, "  %-18s %s\n", sc.name, sc.title)
	}
	fmt.Fprintf(w, "  %-18s %s\n", "all", l.usageAll)
}

// ---------------------------------------------------------------------------------------------
// Scenarios

// scenario is one run: a question, the tools, a stub model and the loop's options.
type scenario struct {
	name  string
	title string
	// readme selects the read tool; otherwise the run has get_weather and get_fx_rate.
	readme bool
	// answer is the stub model: the reply to request number n (1-based).
	answer func(n int, req tinypi.Request) tinypi.AssistantMessage
	// failFX makes the executor fail for get_fx_rate without running the tool.
	failFX bool
	// cancelInTool makes the read tool cancel the run while it works (the user pressed Ctrl-C).
	cancelInTool bool
	// cancelBefore cancels the run before it starts.
	cancelBefore bool
	maxSteps     int
	// checks are facts the final answer should state: label key and the text that shows it.
	checks []check
}

// check is one fact of the final answer: key names it in the summary line.
type check struct {
	key, label, text string
}

// The stub data. The tools return these results; the model's answers quote them.
const (
	weatherQuestion = "北京今天天气怎么样？美元兑人民币的汇率是多少？请用一句话回答。"
	readmeQuestion  = "请读取 README.md，并告诉我项目名。"
	readmeText      = "# tiny-pi\nA small agent runtime."
	weatherResult   = `{"city":"北京","cond":"晴","temp_c":24}`
	fxResult        = `{"base":"USD","quote":"CNY","rate":7.12}`
	weatherID       = "toolu_w1"
	fxID            = "toolu_f1"
	readID          = "call_r1"
)

func scenarios(l labels) []scenario {
	weatherChecks := []check{{"weather", l.hasWeather, "晴，24 度"}, {"fx", l.hasFX, "7.12"}}
	readmeChecks := []check{{"project", l.hasProject, "tiny-pi"}}
	return []scenario{
		{name: "readme", title: l.titleReadme, readme: true, answer: readmeModel, checks: readmeChecks},
		{name: "weather-fx", title: l.titleWeatherFX, answer: weatherFXModel(onMissingSayIt), checks: weatherChecks},
		{name: "weather-fx-skip", title: l.titleSkip, answer: weatherFXModel(onMissingSkip), checks: weatherChecks},
		{name: "weather-fx-reask", title: l.titleReask, answer: weatherFXModel(onMissingReask), checks: weatherChecks},
		{name: "length", title: l.titleLength, answer: truncatedBatchModel, checks: weatherChecks},
		{name: "stop-with-calls", title: l.titleStopWithCalls, answer: stopWithCallsModel, checks: weatherChecks},
		{name: "fx-fails", title: l.titleFXFails, answer: weatherFXModel(onMissingSayIt), failFX: true, checks: weatherChecks},
		{name: "cancel", title: l.titleCancel, readme: true, answer: readmeModel, cancelInTool: true, maxSteps: 1, checks: readmeChecks},
		{name: "pre-cancelled", title: l.titlePreCancelled, readme: true, answer: readmeModel, cancelBefore: true, checks: readmeChecks},
		{name: "step-limit", title: l.titleStepLimit, answer: neverDoneModel, checks: weatherChecks},
	}
}

// How a weather-and-fx model answers when a result it asked for is missing.
const (
	onMissingSayIt = iota // answer and say what is missing
	onMissingSkip         // answer with what it has and pass over the rest
	onMissingReask        // send the same two calls again
)

func bothCalls() []tinypi.ContentBlock {
	return []tinypi.ContentBlock{
		tinypi.ToolCall{ID: weatherID, Name: "get_weather", Arguments: `{"city":"北京"}`},
		tinypi.ToolCall{ID: fxID, Name: "get_fx_rate", Arguments: `{"base":"USD","quote":"CNY"}`},
	}
}

func toolUse(text string, calls []tinypi.ContentBlock) tinypi.AssistantMessage {
	return tinypi.AssistantMessage{
		Content:    append([]tinypi.ContentBlock{tinypi.Text(text)}, calls...),
		StopReason: tinypi.StopReasonToolUse,
		Timestamp:  2,
	}
}

func answer(text string) tinypi.AssistantMessage {
	return tinypi.AssistantMessage{Content: []tinypi.ContentBlock{tinypi.Text(text)}, StopReason: tinypi.StopReasonStop, Timestamp: 4}
}

// weatherFXModel asks for the weather and the rate in one message, then answers from the
// results the latest request carries; onMissing says what it does when one is absent.
func weatherFXModel(onMissing int) func(int, tinypi.Request) tinypi.AssistantMessage {
	return func(n int, req tinypi.Request) tinypi.AssistantMessage {
		if n == 1 {
			return toolUse("天气和汇率两份数据，我同时去查。", bothCalls())
		}
		results := latestResults(req.Messages)
		weather, hasWeather := results[weatherID]
		fx, hasFX := results[fxID]
		switch {
		case hasWeather && hasFX:
			return answer(weatherSentence(weather) + "；" + fxSentence(fx) + "。")
		case onMissing == onMissingReask:
			return toolUse("还缺"+missing(hasWeather, hasFX)+"的结果，我把两个调用再发一次。", bothCalls())
		case onMissing == onMissingSkip && hasWeather:
			return answer(weatherSentence(weather) + "。汇率这次就不提了。")
		case onMissing == onMissingSkip && hasFX:
			return answer(fxSentence(fx) + "。天气这次就不提了。")
		default:
			return answer("没有拿到" + missing(hasWeather, hasFX) + "的结果，这次没法完整回答。")
		}
	}
}

// truncatedBatchModel's first reply is cut off by the output limit in the middle of its second
// call's arguments; afterwards it answers like weather-fx.
func truncatedBatchModel(n int, req tinypi.Request) tinypi.AssistantMessage {
	if n > 1 {
		return weatherFXModel(onMissingSayIt)(n, req)
	}
	msg := toolUse("天气和汇率两份数据，我同时去查。", []tinypi.ContentBlock{
		tinypi.ToolCall{ID: weatherID, Name: "get_weather", Arguments: `{"city":"北京"}`},
		tinypi.ToolCall{ID: fxID, Name: "get_fx_rate", Arguments: `{"base":"USD","quo`},
	})
	msg.StopReason = tinypi.StopReasonLength
	return msg
}

// stopWithCallsModel's first reply carries a tool call but says stop, as a confused provider
// might; afterwards it answers like weather-fx.
func stopWithCallsModel(n int, req tinypi.Request) tinypi.AssistantMessage {
	if n > 1 {
		return weatherFXModel(onMissingSayIt)(n, req)
	}
	msg := toolUse("我查一下天气。", bothCalls()[:1])
	msg.StopReason = tinypi.StopReasonStop
	return msg
}

// neverDoneModel asks for the weather again in every reply, with a new call id each time.
func neverDoneModel(n int, _ tinypi.Request) tinypi.AssistantMessage {
	return toolUse("再查一次天气。", []tinypi.ContentBlock{
		tinypi.ToolCall{ID: fmt.Sprintf("toolu_w%d", n), Name: "get_weather", Arguments: `{"city":"北京"}`},
	})
}

// readmeModel asks to read README.md, then names the project from the README's title.
func readmeModel(n int, req tinypi.Request) tinypi.AssistantMessage {
	if n == 1 {
		return toolUse("我先读一下 README。", []tinypi.ContentBlock{
			tinypi.ToolCall{ID: readID, Name: "read", Arguments: `{"path":"README.md"}`},
		})
	}
	readme, ok := latestResults(req.Messages)[readID]
	if !ok {
		return answer("我没有看到 README 的内容，说不出项目名。")
	}
	title, _, _ := strings.Cut(readme, "\n")
	return answer("项目名是 " + strings.TrimPrefix(title, "# ") + "。")
}

// latestResults maps call id to text for the successful tool results after the last assistant
// message of messages: what the loop fed back for the model's latest calls.
func latestResults(messages []tinypi.Message) map[string]string {
	results := map[string]string{}
	for _, m := range messages {
		switch m := m.(type) {
		case tinypi.AssistantMessage:
			clear(results)
		case tinypi.ToolResultMessage:
			if !m.IsError {
				results[m.ToolCallID] = tinypi.TextOf(m.Content)
			}
		}
	}
	return results
}

func weatherSentence(result string) string {
	var w struct {
		City  string `json:"city"`
		Cond  string `json:"cond"`
		TempC int    `json:"temp_c"`
	}
	if json.Unmarshal([]byte(result), &w) != nil {
		return "天气结果看不懂"
	}
	return fmt.Sprintf("%s今天%s，%d 度", w.City, w.Cond, w.TempC)
}

func fxSentence(result string) string {
	var fx struct {
		Base  string  `json:"base"`
		Quote string  `json:"quote"`
		Rate  float64 `json:"rate"`
	}
	if json.Unmarshal([]byte(result), &fx) != nil {
		return "汇率结果看不懂"
	}
	return fmt.Sprintf("1 %s 兑 %.2f %s", fx.Base, fx.Rate, fx.Quote)
}

func missing(hasWeather, hasFX bool) string {
	switch {
	case !hasWeather && !hasFX:
		return "天气和汇率"
	case !hasWeather:
		return "天气"
	default:
		return "汇率"
	}
}

// ---------------------------------------------------------------------------------------------
// Running and recording

// round is one model request and what happened until the next one.
type round struct {
	reply tinypi.AssistantMessage // what the model answered
	tools []string                // the tool names the request offered
	// events are the loop's tool events of this round, in the order they were emitted.
	events []tinypi.LoopEvent
	// ran lists the tools that really ran in this round (written by the tools themselves).
	ran []string
	// fxDone is closed when get_fx_rate has finished in this round.
	fxDone     chan struct{}
	fxDoneOnce sync.Once
}

// recorder collects what a run did. The loop may call the tools and OnEvent from several
// goroutines, so everything goes through mu.
type recorder struct {
	mu       sync.Mutex
	rounds   []*round
	turnEnds int
	early    []tinypi.LoopEvent // tool events before the first model request
}

func (r *recorder) current() *round {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.rounds) == 0 {
		return nil
	}
	return r.rounds[len(r.rounds)-1]
}

func (r *recorder) onEvent(e tinypi.LoopEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e.(type) {
	case tinypi.ModelEvent, tinypi.AssistantMessageEvent:
		// The model's side is recorded by recordingModel.
	case tinypi.TurnEndEvent:
		r.turnEnds++
	default:
		if len(r.rounds) == 0 {
			r.early = append(r.early, e)
			return
		}
		cur := r.rounds[len(r.rounds)-1]
		cur.events = append(cur.events, e)
	}
}

func (r *recorder) ran(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.rounds) > 0 {
		cur := r.rounds[len(r.rounds)-1]
		cur.ran = append(cur.ran, name)
	}
}

// recordingModel answers with its scenario's stub, streamed by a ScriptedModel, and records
// each reply as a new round.
type recordingModel struct {
	rec    *recorder
	answer func(int, tinypi.Request) tinypi.AssistantMessage
}

func (m *recordingModel) Stream(ctx context.Context, req tinypi.Request) *tinypi.AssistantStream {
	m.rec.mu.Lock()
	n := len(m.rec.rounds) + 1
	m.rec.mu.Unlock()
	stream := tinypi.NewScriptedModel(m.answer(n, req)).Stream(ctx, req)
	reply, _ := stream.Result() // a ScriptedModel's stream has ended when Stream returns
	tools := make([]string, len(req.Tools))
	for i, t := range req.Tools {
		tools[i] = t.Name
	}
	m.rec.mu.Lock()
	m.rec.rounds = append(m.rec.rounds, &round{reply: reply, tools: tools, fxDone: make(chan struct{})})
	m.rec.mu.Unlock()
	return stream
}

// outcome is everything report prints about one run.
type outcome struct {
	result   tinypi.AgentRunResult
	err      error  // RunAgentLoop's error
	panicked string // the panic value when the loop panicked (a lab stub, for example)
	timedOut bool
	rec      *recorder
	input    []tinypi.Message // the caller's messages, with spare capacity
}

// runScenario runs sc once. A panicking loop is reported, not fatal: in a practice directory
// the panic is usually a lab stub saying which lab to write next.
func runScenario(sc scenario) outcome {
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	registry, err := sc.registry(rec, cancel)
	if err != nil {
		return outcome{err: err, rec: rec}
	}
	question := weatherQuestion
	if sc.readme {
		question = readmeQuestion
	}
	// Spare capacity lets the report see a loop that appends to the caller's slice.
	input := make([]tinypi.Message, 1, 4)
	input[0] = tinypi.UserMessage{Content: []tinypi.ContentBlock{tinypi.Text(question)}, Timestamp: 1}
	opts := tinypi.AgentLoopOptions{
		Context:  tinypi.AgentContext{SystemPrompt: "你是 tinypi，一个会使用工具的助手。", Messages: input},
		Model:    &recordingModel{rec: rec, answer: sc.answer},
		Tools:    registry,
		MaxSteps: maxSteps,
		OnEvent:  rec.onEvent,
	}
	if sc.maxSteps != 0 {
		opts.MaxSteps = sc.maxSteps
	}
	if sc.failFX {
		opts.ExecuteToolCall = func(ctx context.Context, call tinypi.ToolCall, exec tinypi.ToolExecContext) (tinypi.ToolResultMessage, error) {
			if call.Name == "get_fx_rate" {
				return tinypi.ToolResultMessage{}, errors.New("汇率服务暂时不可用")
			}
			return tinypi.ExecuteToolCall(ctx, call, registry, exec), nil
		}
	}
	if sc.cancelBefore {
		cancel()
	}
	done := make(chan outcome, 1)
	go func() {
		out := outcome{rec: rec, input: input}
		defer func() {
			if p := recover(); p != nil {
				out.panicked = fmt.Sprint(p)
			}
			done <- out
		}()
		out.result, out.err = tinypi.RunAgentLoop(ctx, opts)
	}()
	select {
	case out := <-done:
		return out
	case <-time.After(runTimeout):
		return outcome{timedOut: true, rec: rec, input: input}
	}
}

// registry returns the scenario's tools. They run in memory; each notes that it ran.
func (sc scenario) registry(rec *recorder, cancel context.CancelFunc) (*tinypi.Registry, error) {
	if sc.readme {
		return tinypi.NewRegistry(tinypi.Tool{
			ToolDefinition: tinypi.ToolDefinition{
				Name:        "read",
				Description: "读取工作区中的一个文件。",
				Parameters:  `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
			},
			Execute: func(ctx context.Context, args json.RawMessage, exec tinypi.ToolExecContext) (tinypi.ToolOutput, error) {
				rec.ran("read")
				exec.Progress(tinypi.Text("正在读取 README.md"))
				if sc.cancelInTool {
					cancel() // the user gives up while read works; read still completes
				}
				return tinypi.ToolOutput{Content: []tinypi.ContentBlock{tinypi.Text(readmeText)}}, nil
			},
		})
	}
	return tinypi.NewRegistry(
		tinypi.Tool{
			ToolDefinition: tinypi.ToolDefinition{
				Name:        "get_weather",
				Description: "查询一个城市今天的天气。",
				Parameters:  `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`,
			},
			Execute: func(ctx context.Context, _ json.RawMessage, _ tinypi.ToolExecContext) (tinypi.ToolOutput, error) {
				// The weather service is the slower one: when both calls run at once, the rate
				// arrives first, so completion order differs from call order. A loop that runs
				// the calls one by one waits a little here.
				if cur := rec.current(); cur != nil {
					select {
					case <-cur.fxDone:
					case <-time.After(100 * time.Millisecond):
					case <-ctx.Done():
					}
				}
				rec.ran("get_weather")
				return tinypi.ToolOutput{Content: []tinypi.ContentBlock{tinypi.Text(weatherResult)}}, nil
			},
		},
		tinypi.Tool{
			ToolDefinition: tinypi.ToolDefinition{
				Name:        "get_fx_rate",
				Description: "查询两种货币之间的汇率。",
				Parameters:  `{"type":"object","properties":{"base":{"type":"string"},"quote":{"type":"string"}},"required":["base","quote"]}`,
			},
			Execute: func(context.Context, json.RawMessage, tinypi.ToolExecContext) (tinypi.ToolOutput, error) {
				rec.ran("get_fx_rate")
				if cur := rec.current(); cur != nil {
					cur.fxDoneOnce.Do(func() { close(cur.fxDone) })
				}
				return tinypi.ToolOutput{Content: []tinypi.ContentBlock{tinypi.Text(fxResult)}}, nil
			},
		},
	)
}

// ---------------------------------------------------------------------------------------------
// Reporting

// report prints one run.
func report(w io.Writer, l labels, sc scenario, out outcome) error {
	var b strings.Builder
	fmt.Fprintf(&b, l.header+"\n", sc.name, sc.title)
	fmt.Fprintf(&b, l.question+"\n", tinypi.TextOf(out.input0Content()))
	rec := out.rec
	rec.mu.Lock()
	defer rec.mu.Unlock()
	segments := resultSegments(out.result.Messages)
	for i, r := range rec.rounds {
		writeRound(&b, l, i+1, r, segments)
	}
	for _, e := range rec.early {
		fmt.Fprintf(&b, "  "+l.early+"\n", e.EventType())
	}

	summary := []string{"scenario=" + sc.name}
	var ran []string
	for _, r := range rec.rounds {
		ran = append(ran, inCallOrder(r.ran, r.reply.ToolCalls())...)
	}
	switch {
	case out.timedOut:
		fmt.Fprintf(&b, l.timedOut+"\n", runTimeout)
		summary = append(summary, fmt.Sprintf("rounds=%d", len(rec.rounds)), "end=timeout")
	case out.panicked != "":
		fmt.Fprintf(&b, l.panicked+"\n", out.panicked)
		summary = append(summary, fmt.Sprintf("rounds=%d", len(rec.rounds)), "end=panic")
	case out.err != nil:
		fmt.Fprintf(&b, l.runError+"\n", out.err)
		summary = append(summary, fmt.Sprintf("rounds=%d", len(rec.rounds)), "end=invalid")
	default:
		res := out.result
		unpaired := unpairedCalls(res.Messages)
		fmt.Fprintf(&b, l.roles+"\n", roleSequence(res.Messages))
		if len(unpaired) == 0 {
			b.WriteString(l.unpairedNone + "\n")
		} else {
			fmt.Fprintf(&b, l.unpaired+"\n", strings.Join(unpaired, ", "))
		}
		if len(ran) == 0 {
			b.WriteString(l.executionsNone + "\n")
		} else {
			fmt.Fprintf(&b, l.executions+"\n", len(ran), strings.Join(ran, ", "))
		}
		fmt.Fprintf(&b, l.turnEnds+"\n", rec.turnEnds)
		writeRequestTools(&b, l, rec.rounds)
		fmt.Fprintf(&b, l.ending+"\n", ending(l, res, len(rec.rounds)), res.Reason, res.Steps)
		final := finalAnswer(res.Messages)
		shown := final
		if shown == "" {
			shown = l.none
		}
		fmt.Fprintf(&b, l.final+"\n", shown)
		var facts []string
		for _, c := range sc.checks {
			facts = append(facts, fmt.Sprintf("%s=%t", c.label, strings.Contains(final, c.text)))
		}
		b.WriteString(strings.Join(facts, " ") + "\n")
		// Last, because it changes the result: does the run share anything with its caller?
		fmt.Fprintf(&b, l.caller+"\n", callerIsolation(l, out.input, res.Messages))
		summary = append(summary,
			fmt.Sprintf("rounds=%d", len(rec.rounds)),
			fmt.Sprintf("steps=%d", res.Steps),
			fmt.Sprintf("executions=%d", len(ran)),
			fmt.Sprintf("unpaired=%d", len(unpaired)),
			"end="+string(res.Reason))
		for _, c := range sc.checks {
			summary = append(summary, fmt.Sprintf("%s=%t", c.key, strings.Contains(final, c.text)))
		}
	}
	b.WriteString(l.summary + " " + strings.Join(summary, " ") + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (out outcome) input0Content() []tinypi.ContentBlock {
	if len(out.input) == 0 {
		return nil
	}
	if u, ok := out.input[0].(tinypi.UserMessage); ok {
		return u.Content
	}
	return nil
}

// writeRound prints round n: the reply, then each call's fate in call order, the progress the
// tools reported, and the result ids the transcript holds for this round.
func writeRound(b *strings.Builder, l labels, n int, r *round, segments [][]string) {
	text := tinypi.TextOf(r.reply.Content)
	if r.reply.ErrorMessage != "" {
		text = strings.TrimSpace(text + " " + fmt.Sprintf(l.modelError, r.reply.ErrorMessage))
	}
	fmt.Fprintf(b, l.round+"\n", n, r.reply.StopReason, text)
	calls := r.reply.ToolCalls()
	if len(calls) == 0 {
		b.WriteString("  " + l.callsNone + "\n")
	} else {
		names := make([]string, len(calls))
		for i, c := range calls {
			names[i] = fmt.Sprintf("%s(%s)", c.Name, c.ID)
		}
		fmt.Fprintf(b, "  "+l.calls+"\n", strings.Join(names, ", "))
	}
	ids := map[string]bool{}
	for _, c := range calls {
		ids[c.ID] = true
		fmt.Fprintf(b, "  %s\n", callFate(l, c, r.events))
	}
	for _, e := range r.events {
		switch e := e.(type) {
		case tinypi.ToolEndEvent:
			if !ids[e.Result.ToolCallID] {
				fmt.Fprintf(b, "  "+l.orphanResult+"\n", e.Result.ToolName, e.Result.ToolCallID, resultText(l, e.Result))
			}
		case tinypi.ToolSkippedEvent:
			if !ids[e.Result.ToolCallID] {
				fmt.Fprintf(b, "  "+l.orphanResult+"\n", e.Result.ToolName, e.Result.ToolCallID, resultText(l, e.Result))
			}
		case tinypi.ToolProgressEvent:
			id := e.CallID
			if id == "" {
				id = l.noCallID
			}
			fmt.Fprintf(b, "  "+l.progress+"\n", id, tinypi.TextOf(e.Content))
		}
	}
	if len(calls) > 0 {
		written := l.none
		if n <= len(segments) && len(segments[n-1]) > 0 {
			written = strings.Join(segments[n-1], ", ")
		}
		fmt.Fprintf(b, "  "+l.written+"\n", written)
	}
}

// callFate says what the loop did with one call, judged by its events.
func callFate(l labels, c tinypi.ToolCall, events []tinypi.LoopEvent) string {
	started := false
	for _, e := range events {
		switch e := e.(type) {
		case tinypi.ToolEndEvent:
			if e.Result.ToolCallID == c.ID {
				if e.Result.IsError {
					return fmt.Sprintf(l.ranError, c.Name, c.ID, oneLine(e.Result.Content))
				}
				return fmt.Sprintf(l.ran, c.Name, c.ID, oneLine(e.Result.Content))
			}
		case tinypi.ToolSkippedEvent:
			if e.Result.ToolCallID == c.ID {
				return fmt.Sprintf(l.skipped, c.Name, c.ID, e.Result.IsError, oneLine(e.Result.Content))
			}
		case tinypi.ToolStartEvent:
			started = started || e.Call.ID == c.ID
		}
	}
	if started {
		return fmt.Sprintf(l.startedNoResult, c.Name, c.ID)
	}
	return fmt.Sprintf(l.dropped, c.Name, c.ID)
}

func resultText(l labels, r tinypi.ToolResultMessage) string {
	if r.IsError {
		return fmt.Sprintf(l.errorText, oneLine(r.Content))
	}
	return oneLine(r.Content)
}

// oneLine is the text of content with its line breaks written as \n, so each result stays on
// its line of the report.
func oneLine(content []tinypi.ContentBlock) string {
	return strings.ReplaceAll(tinypi.TextOf(content), "\n", `\n`)
}

// resultSegments returns, for each assistant message of the transcript, the call ids of the
// tool results that follow it, in transcript order.
func resultSegments(messages []tinypi.Message) [][]string {
	var segments [][]string
	for _, m := range messages {
		switch m := m.(type) {
		case tinypi.AssistantMessage:
			segments = append(segments, nil)
		case tinypi.ToolResultMessage:
			if len(segments) > 0 {
				id := m.ToolCallID
				if id == "" {
					id = `""`
				}
				segments[len(segments)-1] = append(segments[len(segments)-1], id)
			}
		}
	}
	return segments
}

// inCallOrder sorts the names of the tools that ran in a round by their call's position, so that
// tools finishing in a different order print the same way every time.
func inCallOrder(ran []string, calls []tinypi.ToolCall) []string {
	position := func(name string) int {
		return slices.IndexFunc(calls, func(c tinypi.ToolCall) bool { return c.Name == name })
	}
	sorted := slices.Clone(ran)
	slices.SortStableFunc(sorted, func(a, b string) int { return position(a) - position(b) })
	return sorted
}

// unpairedCalls is the set difference of the transcript's call ids and its result ids, in the
// order the calls first appear.
func unpairedCalls(messages []tinypi.Message) []string {
	answered := map[string]bool{}
	for _, m := range messages {
		if r, ok := m.(tinypi.ToolResultMessage); ok {
			answered[r.ToolCallID] = true
		}
	}
	var unpaired []string
	seen := map[string]bool{}
	for _, m := range messages {
		if a, ok := m.(tinypi.AssistantMessage); ok {
			for _, c := range a.ToolCalls() {
				if !answered[c.ID] && !seen[c.ID] {
					seen[c.ID] = true
					unpaired = append(unpaired, c.ID)
				}
			}
		}
	}
	return unpaired
}

func roleSequence(messages []tinypi.Message) string {
	roles := make([]string, len(messages))
	for i, m := range messages {
		roles[i] = string(m.MessageRole())
	}
	return strings.Join(roles, " ")
}

// writeRequestTools prints the tool names the requests offered: once when every request offered
// the same, per request otherwise.
func writeRequestTools(b *strings.Builder, l labels, rounds []*round) {
	if len(rounds) == 0 {
		return
	}
	same := true
	for _, r := range rounds[1:] {
		same = same && slices.Equal(r.tools, rounds[0].tools)
	}
	if same {
		fmt.Fprintf(b, l.requestTools+"\n", namesOrNone(l, rounds[0].tools))
		return
	}
	for i, r := range rounds {
		fmt.Fprintf(b, l.requestToolsN+"\n", i+1, namesOrNone(l, r.tools))
	}
}

func namesOrNone(l labels, names []string) string {
	if len(names) == 0 {
		return l.none
	}
	return strings.Join(names, ", ")
}

// ending says in words why the run ended.
func ending(l labels, res tinypi.AgentRunResult, rounds int) string {
	switch res.Reason {
	case tinypi.RunStop:
		return fmt.Sprintf(l.endStop, rounds)
	case tinypi.RunMaxSteps:
		return fmt.Sprintf(l.endMaxSteps, res.Steps)
	case tinypi.RunLength:
		return fmt.Sprintf(l.endLength, rounds)
	case tinypi.RunError:
		return fmt.Sprintf(l.endError, rounds)
	case tinypi.RunAborted:
		return fmt.Sprintf(l.endAborted, res.Steps)
	default:
		return l.endOther
	}
}

// finalAnswer is the text of the transcript's last assistant message.
func finalAnswer(messages []tinypi.Message) string {
	for i := len(messages) - 1; i >= 0; i-- {
		if a, ok := messages[i].(tinypi.AssistantMessage); ok {
			return tinypi.TextOf(a.Content)
		}
	}
	return ""
}

// callerIsolation checks that the run shares nothing with the caller's messages: nothing was
// written past the end of the caller's slice, and changing the result's first user message does
// not change the caller's.
func callerIsolation(l labels, input, transcript []tinypi.Message) string {
	var problems []string
	for _, m := range input[len(input):cap(input)] {
		if m != nil {
			problems = append(problems, l.callerAppended)
			break
		}
	}
	before := tinypi.TextOf(input[0].(tinypi.UserMessage).Content)
	for _, m := range transcript {
		if u, ok := m.(tinypi.UserMessage); ok && len(u.Content) > 0 {
			u.Content[0] = tinypi.Text("（诊断程序改写了结果里的这条消息）")
			break
		}
	}
	if tinypi.TextOf(input[0].(tinypi.UserMessage).Content) != before {
		problems = append(problems, l.callerShared)
	}
	if len(problems) == 0 {
		return l.callerIntact
	}
	return strings.Join(problems, l.separator)
}

// ---------------------------------------------------------------------------------------------
// Labels

// labels are the words of the report, kept in one place so that a translation touches nothing
// else. Formats take their arguments in the order the comments of report and writeRound give.
type labels struct {
	usage, usageAll string

	titleReadme, titleWeatherFX, titleSkip, titleReask, titleLength  string
	titleStopWithCalls, titleFXFails, titleCancel, titlePreCancelled string
	titleStepLimit                                                   string
	hasWeather, hasFX, hasProject                                    string

	header, question, early                                   string
	round, modelError, calls, callsNone                       string
	ran, ranError, skipped, startedNoResult, dropped          string
	orphanResult, errorText, progress, noCallID, written      string
	roles, unpaired, unpairedNone, executions, executionsNone string
	turnEnds, requestTools, requestToolsN                     string
	ending, endStop, endMaxSteps, endLength, endError         string
	endAborted, endOther                                      string
	final, caller, callerIntact, callerAppended, callerShared string
	timedOut, panicked, runError, summary, none               string
	// separator joins the clauses of one line.
	separator string
}

// labelsFor returns the labels of lang, zh or en; for anything else it returns the Chinese ones
// and false.
func labelsFor(lang string) (labels, bool) {
	switch lang {
	case "zh":
		return chinese(), true
	case "en":
		return english(), true
	default:
		return chinese(), false
	}
}

func chinese() labels {
	return labels{
		usage:    "用法：go run ./cmd/diagnose [-lang zh|en] 场景...\n可用的场景：",
		usageAll: "依次运行上面所有场景",

		titleReadme:        "读 README 并回答项目名（一次工具往返）",
		titleWeatherFX:     "一轮里同时调用天气和汇率 / 桩模型：结果齐了就完整回答",
		titleSkip:          "一轮里同时调用天气和汇率 / 桩模型：缺了结果就跳过那一半",
		titleReask:         "一轮里同时调用天气和汇率 / 桩模型：缺了结果就重发同样的调用",
		titleLength:        "输出在第二个调用的参数中间被截断（length）",
		titleStopWithCalls: "回复带着工具调用却以 stop 结束",
		titleFXFails:       "executor 执行 get_fx_rate 时报错",
		titleCancel:        "工具运行时用户取消，且这是上限内的最后一次请求（MaxSteps 1）",
		titlePreCancelled:  "运行开始前就已取消",
		titleStepLimit:     "模型每一轮都要再查一次天气（MaxSteps 6）",
		hasWeather:         "含天气",
		hasFX:              "含汇率",
		hasProject:         "含项目名",

		header:          "== 场景 %s：%s ==",
		question:        "提问：%s",
		early:           "第一次模型请求之前就出现了工具事件：%s",
		round:           "第 %d 轮 assistant（%s）：%s",
		modelError:      "[错误：%s]",
		calls:           "tool_use：%s",
		callsNone:       "tool_use：无",
		ran:             "执行：%s(%s) → %s",
		ranError:        "执行出错：%s(%s) → %s",
		skipped:         "跳过（未执行，isError=%[3]t）：%[1]s(%[2]s) → %[4]s",
		startedNoResult: "开始执行，但没有带这个 id 的结果：%s(%s)",
		dropped:         "丢弃（未执行）：%s(%s)",
		orphanResult:    "结果对不上任何调用：%s(id=%q) → %s",
		errorText:       "错误：%s",
		progress:        "进度 [%s]：%s",
		noCallID:        "没有 callId",
		written:         "写回 transcript 的结果：%s",
		roles:           "历史 role 序列：%s",
		unpaired:        "未配对的 tool_use：%s（历史里有这个调用，却没有带它 id 的结果）",
		unpairedNone:    "未配对的 tool_use：无",
		executions:      "工具实际执行次数：%d（%s）",
		executionsNone:  "工具实际执行次数：0",
		turnEnds:        "turn_end 事件：%d 次",
		requestTools:    "请求携带的工具：%s",
		requestToolsN:   "第 %d 次请求携带的工具：%s",
		ending:          "结束方式：%s（reason=%s，steps=%d）",
		endStop:         "第 %d 轮模型不再要工具，循环正常结束",
		endMaxSteps:     "发满 %d 次请求的上限，模型仍在要工具",
		endLength:       "第 %d 轮输出被截断，调用没有执行，循环结束",
		endError:        "第 %d 轮的回复不能执行，循环以 error 结束",
		endAborted:      "运行被取消，此前完成了 %d 次请求",
		endOther:        "未知的结束原因",
		final:           "最终回答：%s",
		caller:          "调用者的输入：%s",
		callerIntact:    "没有被改动",
		callerAppended:  "loop 写进了调用者切片的备用容量",
		callerShared:    "结果与调用者共享消息内容，改结果就改了输入",
		timedOut:        "运行 %v 后仍未返回：loop 可能卡住了",
		panicked:        "运行中断（panic）：%s",
		runError:        "RunAgentLoop 返回错误：%v",
		summary:         "小结",
		none:            "无",
		separator:       "；",
	}
}

func english() labels {
	return labels{
		usage:    "usage: go run ./cmd/diagnose [-lang zh|en] SCENARIO...\nscenarios:",
		usageAll: "run every scenario above, one after another",

		titleReadme:        "read README and name the project (one tool round trip)",
		titleWeatherFX:     "weather and rate called in one round / stub model: answers in full once both results are in",
		titleSkip:          "weather and rate called in one round / stub model: leaves out the half whose result is missing",
		titleReask:         "weather and rate called in one round / stub model: sends the same calls again when a result is missing",
		titleLength:        "output cut off in the middle of the second call's arguments (length)",
		titleStopWithCalls: "a reply that carries a tool call but ends with stop",
		titleFXFails:       "the executor fails on get_fx_rate",
		titleCancel:        "the user cancels while a tool runs, in the last request the limit allows (MaxSteps 1)",
		titlePreCancelled:  "cancelled before the run starts",
		titleStepLimit:     "the model asks for the weather again in every round (MaxSteps 6)",
		hasWeather:         "has_weather",
		hasFX:              "has_rate",
		hasProject:         "has_project",

		header:          "== scenario %s: %s ==",
		question:        "question: %s",
		early:           "tool event before the first model request: %s",
		round:           "round %d assistant (%s): %s",
		modelError:      "[error: %s]",
		calls:           "tool_use: %s",
		callsNone:       "tool_use: none",
		ran:             "ran: %s(%s) → %s",
		ranError:        "ran with an error: %s(%s) → %s",
		skipped:         "skipped (not run, isError=%[3]t): %[1]s(%[2]s) → %[4]s",
		startedNoResult: "started, but no result carries this id: %s(%s)",
		dropped:         "dropped (not run): %s(%s)",
		orphanResult:    "result that matches no call: %s(id=%q) → %s",
		errorText:       "error: %s",
		progress:        "progress [%s]: %s",
		noCallID:        "no callId",
		written:         "results written to the transcript: %s",
		roles:           "role sequence: %s",
		unpaired:        "unpaired tool_use: %s (the transcript has the call but no result with its id)",
		unpairedNone:    "unpaired tool_use: none",
		executions:      "tool executions: %d (%s)",
		executionsNone:  "tool executions: 0",
		turnEnds:        "turn_end events: %d",
		requestTools:    "tools sent with the requests: %s",
		requestToolsN:   "tools sent with request %d: %s",
		ending:          "ended: %s (reason=%s, steps=%d)",
		endStop:         "in round %d the model asked for no more tools and the loop ended normally",
		endMaxSteps:     "reached the limit of %d requests with the model still asking for tools",
		endLength:       "the output of round %d was cut off; no call ran and the loop ended",
		endError:        "the reply of round %d could not be run; the loop ended with error",
		endAborted:      "the run was cancelled after %d completed requests",
		endOther:        "unknown end reason",
		final:           "final answer: %s",
		caller:          "the caller's input: %s",
		callerIntact:    "unchanged",
		callerAppended:  "the loop wrote into the spare capacity of the caller's slice",
		callerShared:    "the result shares message content with the caller: changing the result changed the input",
		timedOut:        "still running after %v: the loop may be stuck",
		panicked:        "the run stopped with a panic: %s",
		runError:        "RunAgentLoop returned an error: %v",
		summary:         "summary",
		none:            "none",
		separator:       "; ",
	}
}
