package main

// labels are the words of the report, kept in one place so that a translation touches nothing
// else. Formats take their arguments in the order report and writeRound pass them.
//
// The course kit checks this file (this program cannot import the kit): internal/diagnose's
// tests read chinese() and english() below and require every field to be set in both, with the
// same fmt verbs, and they run the program with -lang zh and -lang en to check that both print
// the same facts in the same number of lines. Keep each function a single composite literal of
// string fields.
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
	timedOut, panicked, runError, none                        string
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
		none:            "none",
		separator:       "; ",
	}
}
