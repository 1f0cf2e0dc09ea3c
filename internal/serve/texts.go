package serve

import (
	"maps"
	"strings"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/transcript"
)

// stageMessages explain the six stages. Their arguments: %[1]s the tool's name, %[2]s the call
// id, %[3]d the seq of the assistant/message, %[4]d of the tool/call, %[5]d of the tool/result,
// %[6]d of the next model/request, %[7]d of the tool/start (used by the ".started" texts only,
// which are chosen when the log has the call's tool/start), %[8]d the seq the request runs
// through. Every text uses explicit argument indexes, so none has to use every argument.
var stageMessages = i18n.Catalog{
	"stage1.title":   {ZH: "模型给出调用", EN: "The model asks for a call"},
	"stage1.caption": {ZH: "assistant/message（seq %[3]d）已提交：模型的回复里有一个 %[1]s 调用，标识是 %[2]s。这只是调用意图，工具还没有运行。", EN: "assistant/message (seq %[3]d) is committed: the model's reply holds a %[1]s call with the id %[2]s. It is only an intent; no tool has run."},
	"stage1.duty":    {ZH: "结束这次流式回复，给出调用的名称 %[1]s、标识 %[2]s 和参数。", EN: "ends its streamed reply with the call's name %[1]s, its id %[2]s and its arguments."},
	"stage1.history": {ZH: "已提交事件中的消息；%[2]s 的结果还没有进入会话。", EN: "the messages of the committed events; the result of %[2]s is not in the session yet."},
	"stage1.missing": {ZH: "日志中没有请求 %[2]s 的 assistant/message。", EN: "the log has no assistant/message asking for %[2]s."},

	"stage2.title":   {ZH: "登记调用", EN: "The call is registered"},
	"stage2.caption": {ZH: "Agent 在运行工具之前追加 tool/call（seq %[4]d）。之后的结果会用这个 seq 指回它。", EN: "Before running the tool, the agent appends tool/call (seq %[4]d). The result will point back at this seq."},
	"stage2.duty":    {ZH: "从回复中取出 %[2]s，先登记，再交给工具运行时。", EN: "takes %[2]s out of the reply, registers it, then hands it to the tool runtime."},
	"stage2.history": {ZH: "消息历史没有变化：tool/call 是记账事件，不产生消息。", EN: "the history has not changed: tool/call is bookkeeping and makes no message."},

	"stage3.title":           {ZH: "运行工具", EN: "The tool runs"},
	"stage3.caption":         {ZH: "工具运行时执行 %[1]s：校验参数、运行、把返回值整理成工具结果消息。结果还只在运行时手里。", EN: "The tool runtime executes %[1]s: it checks the arguments, runs, and shapes the return value into a tool result message. The result is still only in the runtime's hands."},
	"stage3.duty":            {ZH: "校验参数并执行 %[1]s，把返回值变成结果消息。", EN: "validates the arguments, runs %[1]s and turns its return value into a result message."},
	"stage3.history":         {ZH: "消息历史里仍然没有 %[2]s 的结果。", EN: "the history still lacks the result of %[2]s."},
	"stage3.missing":         {ZH: "日志在 %[2]s 的结果提交之前就结束了：这次运行没有留下结果。", EN: "the log ends before the result of %[2]s was committed: this run left no result."},
	"stage3.caption.started": {ZH: "工具运行时先追加 tool/start（seq %[7]d）并等它写盘，再执行 %[1]s：校验参数、运行、把返回值整理成工具结果消息。结果还只在运行时手里。", EN: "The tool runtime appends tool/start (seq %[7]d) and waits until it is written, then executes %[1]s: it checks the arguments, runs, and shapes the return value into a tool result message. The result is still only in the runtime's hands."},
	"stage3.missing.started": {ZH: "tool/start（seq %[7]d）说明 %[2]s 已经开始运行，但日志在它的结果提交之前就结束了：结果未知，工具可能已经产生了效果。加载日志时会补上 TOOL_OUTCOME_UNKNOWN 结果。", EN: "tool/start (seq %[7]d) says %[2]s began to run, but the log ends before its result was committed: the outcome is unknown, and the tool may have had effects. Loading the log adds a TOOL_OUTCOME_UNKNOWN result."},

	"stage4.title":   {ZH: "提交结果", EN: "The result is committed"},
	"stage4.caption": {ZH: "tool/result（seq %[5]d）追加到会话，它的 sourceEventSeqs 指回 tool/call 的 seq %[4]d。", EN: "tool/result (seq %[5]d) is appended to the session; its sourceEventSeqs point back at the tool/call, seq %[4]d."},
	"stage4.duty":    {ZH: "按调用顺序追加结果事件并分配 seq；追加只在内存中，写盘另行进行。", EN: "appends the result event in call order and gives it its seq; appending happens in memory, writing to disk comes separately."},
	"stage4.history": {ZH: "已提交事件中的消息：%[2]s 的结果已在会话中，但下一次请求还没有派生。", EN: "the messages of the committed events: the result of %[2]s is in the session, but the next request has not been derived."},
	"stage4.missing": {ZH: "日志在 %[2]s 的结果提交之前就结束了：这次运行没有留下结果。", EN: "the log ends before the result of %[2]s was committed: this run left no result."},

	"stage5.title":   {ZH: "派生消息", EN: "Messages are derived"},
	"stage5.caption": {ZH: "下一步开始时，Agent 请会话 deriveMessages：把 user、assistant 与工具结果事件按日志顺序投影成消息历史。", EN: "As the next step starts, the agent asks the session to deriveMessages: the user, assistant and tool result events, projected in log order into the message history."},
	"stage5.duty":    {ZH: "deriveMessages：从事件投影出消息历史。它是纯函数，同一份日志总得到同样的消息。", EN: "deriveMessages: projects the message history from the events. It is pure: the same log always gives the same messages."},
	"stage5.history": {ZH: "deriveMessages 的结果，其中有 %[2]s 的工具结果。", EN: "what deriveMessages gives, the result of %[2]s included."},
	"stage5.missing": {ZH: "日志中 %[2]s 的结果之后没有 model/request：运行在下一次请求之前结束了。", EN: "the log has no model/request after the result of %[2]s: the run ended before the next request."},

	"stage6.title":   {ZH: "落盘、冻结并发送", EN: "Flushed, frozen and sent"},
	"stage6.caption": {ZH: "请求之前，会话先写盘（Flush）：请求包含的事件（截至 seq %[8]d）都已写进文件，模型看到的都已落盘。然后 model/request（seq %[6]d）记下这次请求：消息历史被冻结，交给模型适配器。模型这次看到了 %[1]s 的返回内容。", EN: "Before the request the session flushes: every event the request holds (through seq %[8]d) is written to the file, so what the model sees is on disk first. Then model/request (seq %[6]d) records the request: the history is frozen and handed to the model adapter. This time the model sees what %[1]s returned."},
	"stage6.duty":    {ZH: "先写盘（等请求包含的每个事件都写进文件），再冻结请求（之后的追加改变不了它），交给模型适配器。", EN: "flushes the log (waits until every event the request holds is written to the file), then freezes the request (later appends cannot change it) and hands it to the model adapter."},
	"stage6.history": {ZH: "冻结的请求中的消息，与 deriveMessages 的结果相同。", EN: "the messages of the frozen request, the same as deriveMessages gave."},
	"stage6.missing": {ZH: "日志中 %[2]s 的结果之后没有 model/request：运行在下一次请求之前结束了。", EN: "the log has no model/request after the result of %[2]s: the run ended before the next request."},

	"whole.title":    {ZH: "整个日志", EN: "The whole log"},
	"whole.caption":  {ZH: "这个日志没有工具调用，没有往返可以分阶段展示；下面是全部事件和派生出的消息。", EN: "This log has no tool call, so there is no round trip to show in stages; here are all its events and the derived messages."},
	"whole.duty":     {ZH: "保存事件并派生消息历史。", EN: "keeps the events and derives the message history."},
	"whole.history":  {ZH: "deriveMessages 对整个日志的结果。", EN: "what deriveMessages gives for the whole log."},
	"pending.result": {ZH: "%s 的结果尚未进入会话", EN: "the result of %s is not in the session yet"},

	// After a compaction (chapter 11). Their arguments are their own, not the stages'.
	"history.summary":         {ZH: "seq 0–%[1]d 的摘要", EN: "summary of seq 0–%[1]d"},
	"history.summary.nothing": {ZH: "摘要（firstKeptSeq 是 0：它之前没有事件）", EN: "summary (firstKeptSeq is 0: no event comes before it)"},
	"history.compacted":       {ZH: "seq %[1]d 的压缩把 seq %[2]d 之前的事件的消息换成了它的摘要，摘要排在最前面。", EN: "The compaction at seq %[1]d replaced the messages of the events before seq %[2]d with its summary, which comes first."},
	"history.summarized":      {ZH: "seq %[1]d 的压缩之后 deriveMessages 的结果：%[3]s 的结果（seq %[4]d）在切点 seq %[2]d 之前，所以只有排在最前面的摘要还提到它。", EN: "what deriveMessages gives after the compaction at seq %[1]d: the result of %[3]s (seq %[4]d) comes before its cut at seq %[2]d, so only the summary, which comes first, still speaks of it."},

	"actor.model":              {ZH: "模型", EN: "Model"},
	"actor.model.about":        {ZH: "产生回复和调用意图（名称、标识、参数）；它自己不运行工具。", EN: "produces the reply and the call intents (name, id, arguments); it runs no tool itself."},
	"actor.agent":              {ZH: "Agent", EN: "Agent"},
	"actor.agent.about":        {ZH: "推进每一步：登记调用、交给工具运行时，再派生并冻结下一次请求。", EN: "drives each step: registers calls, hands them to the tool runtime, then derives and freezes the next request."},
	"actor.tool":               {ZH: "工具运行时", EN: "Tool runtime"},
	"actor.tool.about":         {ZH: "校验参数并运行工具；结果按调用顺序提交，完成的先后可以不同。", EN: "validates arguments and runs tools; results are committed in call order, whatever order they finish in."},
	"actor.session":            {ZH: "会话", EN: "Session"},
	"actor.session.about":      {ZH: "只追加的事件日志：分配 seq、保存事件、派生消息历史。", EN: "the append-only event log: gives seqs, keeps the events, derives the message history."},
	"actor.session.compaction": {ZH: "它也压缩历史：compaction 事件把切点之前的消息换成一条摘要，之后的派生从摘要开始。", EN: "It also compacts the history: a compaction event replaces the messages before its cut with a summary, and every later derivation starts from that summary."},
}

// uiMessages are the page's labels. The script gets them as View.Texts; "{n}"-style
// placeholders are filled in by the script.
var uiMessages = i18n.Catalog{
	"page.title":         {ZH: "一次工具调用的往返", EN: "One tool call's round trip"},
	"page.lede":          {ZH: "选一个工具调用，逐阶段观察：调用意图如何被登记、执行、提交，最后作为消息进入下一次请求。", EN: "Pick a tool call and follow it stage by stage: how the intent is registered, run and committed, and how it finally reaches the next request as a message."},
	"log":                {ZH: "日志", EN: "log"},
	"call.choose":        {ZH: "跟踪的工具调用", EN: "tool call to follow"},
	"play":               {ZH: "播放", EN: "Play"},
	"pause":              {ZH: "暂停", EN: "Pause"},
	"prev":               {ZH: "上一步", EN: "Back"},
	"next":               {ZH: "下一步", EN: "Forward"},
	"keys":               {ZH: "键盘：← → 切换阶段，空格 播放/暂停，1 2 3 切换视角", EN: "Keys: ← → change the stage, Space plays or pauses, 1 2 3 switch the view"},
	"stage.of":           {ZH: "阶段 {n} / {total}", EN: "stage {n} of {total}"},
	"views":              {ZH: "视角", EN: "View"},
	"view.history":       {ZH: "消息历史", EN: "Message history"},
	"view.events":        {ZH: "事件载荷", EN: "Event payloads"},
	"view.duties":        {ZH: "执行职责", EN: "Responsibilities"},
	"history.scope":      {ZH: "只列出 user、assistant 与工具结果消息；系统提示和 provider 的包装不在其中。", EN: "Only user, assistant and tool result messages; the system prompt and the provider's wrapping are left out."},
	"events.scope":       {ZH: "日志中的每个事件；本阶段尚未提交的显示为计划中的载荷。", EN: "Every event of the log; those not committed at this stage show as planned payloads."},
	"duties.scope":       {ZH: "四方各自负责的部分；高亮的是本阶段在做事的一方。", EN: "What each of the four parties is responsible for; the highlighted one acts at this stage."},
	"state.committed":    {ZH: "已提交", EN: "committed"},
	"state.planned":      {ZH: "尚未提交", EN: "not yet committed"},
	"focus.assistant":    {ZH: "调用意图", EN: "call intent"},
	"focus.call":         {ZH: "调用登记", EN: "call registered"},
	"focus.start":        {ZH: "开始运行", EN: "tool started"},
	"focus.result":       {ZH: "调用结果", EN: "call result"},
	"focus.request":      {ZH: "下一次请求", EN: "next request"},
	"focus.compaction":   {ZH: "生效的压缩", EN: "compaction in effect"},
	"compaction.reason":  {ZH: "原因", EN: "reason"},
	"compaction.tokens":  {ZH: "压缩前的 token 数", EN: "tokens before"},
	"compaction.kept":    {ZH: "从这个 seq 起保留", EN: "kept from seq"},
	"compaction.summary": {ZH: "摘要", EN: "summary"},
	"compaction.read":    {ZH: "读过的文件", EN: "files read"},
	"compaction.changed": {ZH: "改过的文件", EN: "files changed"},
	"compaction.more":    {ZH: "……还有 {n} 个", EN: "… and {n} more"},
	"goto.event":         {ZH: "事件 seq {seq}", EN: "event seq {seq}"},
	"goto.actor":         {ZH: "产生者：{actor}", EN: "made by: {actor}"},
	"source":             {ZH: "引用", EN: "refers to"},
	"line":               {ZH: "第 {line} 行", EN: "line {line}"},
	"ignorable":          {ZH: "可忽略（未知类型）", EN: "ignorable (unknown type)"},
	"active":             {ZH: "本阶段", EN: "now"},
	"duty":               {ZH: "本阶段：", EN: "at this stage: "},
	"actor.events":       {ZH: "这次往返中它产生的事件：", EN: "its events in this round trip:"},
	"none":               {ZH: "（无）", EN: "(none)"},
	"pending":            {ZH: "待定", EN: "pending"},
	"missing":            {ZH: "日志中没有这一步", EN: "this step is not in the log"},
	"compare.title":      {ZH: "与参考运行对比", EN: "Compared with the reference run"},
	"firstdiff":          {ZH: "第一处不同", EN: "first difference"},
	"payload":            {ZH: "载荷", EN: "payload"},
	"focus.sibling":      {ZH: "同批调用", EN: "same batch"},
	"hidden.events":      {ZH: "…… 省略了 {n} 个事件 ……", EN: "… {n} events not shown …"},
	"hidden.history":     {ZH: "前面还有 {n} 条消息没有显示。", EN: "{n} earlier messages are not shown."},
	"hidden.blocks":      {ZH: "……还有 {n} 个内容块没有显示", EN: "… {n} more blocks not shown"},
	"hidden.rows":        {ZH: "…… 省略了 {n} 行 ……", EN: "… {n} rows not shown …"},
	"cut":                {ZH: "……（还有 {n} 字节没有显示）", EN: "… ({n} more bytes not shown)"},
	"events.count.whole": {ZH: "显示了 {shown} / {total} 个事件：开头和结尾的事件。", EN: "{shown} of {total} events shown: the first and the last ones."},
	"events.count":       {ZH: "显示了 {shown} / {total} 个事件：选中的调用前后的事件。", EN: "{shown} of {total} events shown: those around the chosen call."},
	"calls.count":        {ZH: "工具调用：{n} 个；列表中是这个调用前后的调用，?call=SEQ 可以选任意一个。", EN: "tool calls: {n}; the list holds those around this one, and ?call=SEQ chooses any."},
	"call.prev":          {ZH: "← 上一个调用", EN: "← previous call"},
	"call.next":          {ZH: "下一个调用 →", EN: "next call →"},
	"batch.title":        {ZH: "同一批的调用", EN: "Calls of the same batch"},
	"batch.about":        {ZH: "模型在一次回复中要求了 {n} 个调用（seq {seq} 的 assistant/message）。它们并发运行，完成的先后可以不同；结果按调用顺序提交：提交游标停在最后一个已提交的结果之后。", EN: "The model asked for {n} calls in one reply (the assistant/message at seq {seq}). They run concurrently and may finish in any order; their results are committed in call order: the commit cursor stands after the last result committed."},
	"batch.more":         {ZH: "（列出了这个调用前后的 {shown} 个）", EN: "(the {shown} around this one are listed)"},
	"batch.cursor":       {ZH: "提交游标：{n} / {total} 个结果已提交", EN: "commit cursor: {n} of {total} results committed"},
	"batch.chosen":       {ZH: "本调用", EN: "this call"},
	"batch.planned":      {ZH: "尚未登记", EN: "not registered yet"},
	"batch.registered":   {ZH: "已登记，等待运行", EN: "registered, waiting to run"},
	"batch.started":      {ZH: "已开始运行", EN: "started"},
	"batch.committed":    {ZH: "结果已提交", EN: "result committed"},
	"notice.title":       {ZH: "最后一行不完整", EN: "The last line is torn"},
	"notice.shown.one":   {ZH: "下面显示它之前的 1 个完好事件，与 tinypi 的 LoadSession 加载时保留的相同。", EN: "Shown below: the one intact event before it, as tinypi's LoadSession keeps it."},
	"notice.shown":       {ZH: "下面显示它之前的 {n} 个完好事件，与 tinypi 的 LoadSession 加载时保留的相同。", EN: "Shown below: the {n} intact events before it, as tinypi's LoadSession keeps them."},

	"error.what":    {ZH: "出了什么问题", EN: "What is wrong"},
	"error.fix":     {ZH: "如何修复", EN: "How to repair it"},
	"error.reload":  {ZH: "修复后刷新本页即可，不必重启 course serve。", EN: "Reload this page after the repair; course serve need not be restarted."},
	"error.file":    {ZH: "文件", EN: "file"},
	"error.read":    {ZH: "检查路径是否正确、文件是否可读。", EN: "check that the path is right and the file readable."},
	"nocall.title":  {ZH: "没有这个工具调用", EN: "no such tool call"},
	"nocall.notseq": {ZH: "?call=%[1]s 不是 seq：?call= 要的是一个 tool/call 事件的 seq（一个数字）。", EN: "?call=%[1]s is not a seq: ?call= takes the seq of a tool/call event (a number)."},
	"nocall.more":   {ZH: "还有 %[1]d 个没有列出", EN: "and %[1]d more"},
	"nocall.none":   {ZH: "这个日志里没有工具调用：去掉地址里的 ?call=。", EN: "this log has no tool call: drop ?call= from the address."},
	"nocall.what":   {ZH: "日志中 seq %d 的事件不是 tool/call。", EN: "the event at seq %d of the log is not a tool/call."},
	"nocall.fix":    {ZH: "去掉地址里的 ?call=，或选择日志中的一个调用：%s", EN: "drop ?call= from the address, or choose a call of the log: %s"},
}

// summaryMessages are the one-line summaries of events that are not messages.
var summaryMessages = i18n.Catalog{
	"summary.start":       {ZH: "%[1]s(%[2]s) 开始运行  ← seq %[3]d", EN: "%[1]s(%[2]s) starts  ← seq %[3]d"},
	"summary.request":     {ZH: "%[1]d 条消息，截至 seq %[2]d", EN: "%[1]d messages through seq %[2]d"},
	"summary.request.one": {ZH: "1 条消息，截至 seq %[1]d", EN: "1 message through seq %[1]d"},
	// %[1]s the reason, %[2]d tokensBefore, %[3]d firstKeptSeq, %[4]d and %[5]d the numbers of
	// files read and changed, %[6]q the summary.
	"summary.compaction": {ZH: "压缩（%[1]s）：压缩前 %[2]d 个 token，从 seq %[3]d 起保留；读过的文件 %[4]d 个，改过的 %[5]d 个；摘要 %[6]q", EN: "compaction (%[1]s): %[2]d tokens before, kept from seq %[3]d; files read: %[4]d, changed: %[5]d; summary %[6]q"},
}

// messages is the package's whole catalog.
var messages = i18n.MustMerge(stageMessages, uiMessages, summaryMessages, limitMessages, followMessages)

// textFunc formats a catalog message in one language.
type textFunc func(id string, args ...any) string

// texts returns the catalog's text function for lang.
func texts(lang string) textFunc {
	return func(id string, args ...any) string {
		if m, ok := messages[id]; ok && !strings.Contains(m.In(lang), "%") {
			return m.In(lang) // a text that takes none of the arguments every stage passes
		}
		return messages.Text(lang, id, args...)
	}
}

// pageTexts are the labels the script needs, with the comparison's words from course
// transcript's own catalog.
func pageTexts(lang string) map[string]string {
	out := map[string]string{}
	for id := range maps.Keys(uiMessages) {
		if !strings.Contains(uiMessages[id].EN, "%") {
			out[id] = uiMessages.Text(lang, id)
		}
	}
	labels := transcript.LabelsIn(lang)
	out["learner"] = labels.Learner
	out["reference"] = labels.Reference
	return out
}
