package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// This file is the diagnosis' content: the scenarios, the stub models that answer in them and
// the in-memory tools they call. The rest of the program runs a scenario (run.go) and prints
// what happened (report.go).

// maxSteps is the step limit of every scenario that does not set its own.
const maxSteps = 6

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

// check is one fact of the final answer: key names it for programs, label for people.
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

// registry returns the scenario's tools. They run in memory; each notes that it ran.
func (sc scenario) registry(w *world, cancel context.CancelFunc) (*tinypi.Registry, error) {
	if sc.readme {
		return tinypi.NewRegistry(tinypi.Tool{
			ToolDefinition: tinypi.ToolDefinition{
				Name:        "read",
				Description: "读取工作区中的一个文件。",
				Parameters:  `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
			},
			Execute: func(ctx context.Context, args json.RawMessage, exec tinypi.ToolExecContext) (tinypi.ToolOutput, error) {
				w.ran("read")
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
				if cur := w.current(); cur != nil {
					select {
					case <-cur.fxDone:
					case <-time.After(100 * time.Millisecond):
					case <-ctx.Done():
					}
				}
				w.ran("get_weather")
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
				w.ran("get_fx_rate")
				if cur := w.current(); cur != nil {
					cur.fxDoneOnce.Do(func() { close(cur.fxDone) })
				}
				return tinypi.ToolOutput{Content: []tinypi.ContentBlock{tinypi.Text(fxResult)}}, nil
			},
		},
	)
}

// executor returns the scenario's tool executor: nil (the loop's default) unless the scenario
// makes get_fx_rate fail before it runs.
func (sc scenario) executor(registry *tinypi.Registry) tinypi.ToolExecutor {
	if !sc.failFX {
		return nil
	}
	return func(ctx context.Context, call tinypi.ToolCall, exec tinypi.ToolExecContext) (tinypi.ToolResultMessage, error) {
		if call.Name == "get_fx_rate" {
			return tinypi.ToolResultMessage{}, errors.New("汇率服务暂时不可用")
		}
		return tinypi.ExecuteToolCall(ctx, call, registry, exec), nil
	}
}

// question is the scenario's user message.
func (sc scenario) question() string {
	if sc.readme {
		return readmeQuestion
	}
	return weatherQuestion
}
