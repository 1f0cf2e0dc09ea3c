package serve_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/serve"
)

// These tests drive the page in a real headless Chromium. They skip when no Chromium is found,
// unless CI is set: there a missing browser is a failure (.ci/run installs one).

// findChromium returns the path of a Chromium or Chrome, or skips (fails under CI).
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no Chromium found (chromium, chromium-browser, google-chrome on PATH, or $CHROMIUM) and CI is set: the browser tests must run in CI")
	}
	t.Skip("no Chromium found (chromium, chromium-browser, google-chrome on PATH, or $CHROMIUM): skipping the browser tests; install one with apt-get install chromium")
	return ""
}

// browser starts a headless Chromium for the test and returns its context.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := findChromium(t)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1200, 900),
	)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")), "starting Chromium")
	return ctx
}

// tab opens a tab on the page h serves and fails the test on any console error or uncaught
// exception the page reports while the test runs.
func tab(t *testing.T, browserCtx context.Context, h *serve.Handler, path string) context.Context {
	t.Helper()
	srv := httptest.NewServer(h)
	ctx, cancel := chromedp.NewContext(browserCtx)
	messages := chromedp.Console(ctx)
	var mu sync.Mutex
	var bad []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				bad = append(bad, m.String())
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		srv.Close()
		mu.Lock()
		defer mu.Unlock()
		assert.Empty(t, bad, "console errors or uncaught exceptions")
	})
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL+path)))
	return ctx
}

// waitFor polls a JavaScript condition until it holds.
func waitFor(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err, "waiting for %s", cond)
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, js)
	return v
}

func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))), "clicking %s", sel)
}

func key(t *testing.T, ctx context.Context, k string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent(k)))
}

// snapshot is what the page shows: read from the DOM with innerText (the visible text).
type snapshot struct {
	Counter string     `json:"counter"`
	Title   string     `json:"title"`
	Visible []string   `json:"visible"`
	Note    string     `json:"note"`
	History [][]string `json:"history"`
	States  []string   `json:"states"`
	Events  []string   `json:"events"`
	Active  string     `json:"active"`
	Duty    string     `json:"duty"`
}

const snapshotJS = `(() => {
  const q = s => document.querySelector(s);
  const all = s => Array.from(document.querySelectorAll(s));
  return {
    counter: q('#stage-counter').innerText,
    title: q('#stage-title').innerText,
    visible: ['history', 'events', 'duties'].filter(v => !q('#view-' + v).hidden),
    note: q('#history-note').innerText,
    history: all('#history .msg').map(m => [m.querySelector('.role').innerText].concat(Array.from(m.querySelectorAll('.block')).map(b => b.innerText))),
    states: all('#events .event .state').map(e => e.innerText),
    events: all('#events .event').map(e => e.querySelector('.seq').innerText + ' ' + e.querySelector('.type').innerText + ' | ' + e.querySelector('.summary').innerText),
    active: all('#actors .actor.active h3').map(e => e.firstChild.textContent).join(','),
    duty: all('#actors .actor.active .duty').map(e => e.innerText).join(','),
  };
})()`

func TestBrowserStagesInEveryView(t *testing.T) {
	ctx := tab(t, browser(t), newHandler(t, serve.Options{Log: "testdata/readme.jsonl", Lang: i18n.ZH}), "/")
	waitFor(t, ctx, `document.body.dataset.ready === 'true'`)

	titles := []string{"模型给出调用", "登记调用", "运行工具", "提交结果", "派生消息", "落盘、冻结并发送"}
	notes := []string{
		"已提交事件中的消息；c1 的结果还没有进入会话。",
		"消息历史没有变化：tool/call 是记账事件，不产生消息。",
		"消息历史里仍然没有 c1 的结果。",
		"已提交事件中的消息：c1 的结果已在会话中，但下一次请求还没有派生。",
		"deriveMessages 的结果，其中有 c1 的工具结果。",
		"冻结的请求中的消息，与 deriveMessages 的结果相同。",
	}
	user := []string{"user", "读取 README.md，并概述这个项目。"}
	call := []string{"assistant", `read · c1 · {"path":"README.md"}`}
	pending := []string{"tool", "c1 的结果尚未进入会话"}
	result := []string{"tool", "toolCallId = c1", "# tiny-pi\n用 Go 写的、会调用工具的 LLM agent 运行时。"}
	histories := [][][]string{
		{user, call, pending}, {user, call, pending}, {user, call, pending},
		{user, call, result}, {user, call, result}, {user, call, result},
	}
	const c, p = "已提交", "尚未提交"
	states := [][]string{
		{c, c, c, c, p, p, p, p, p},
		{c, c, c, c, c, p, p, p, p},
		{c, c, c, c, c, p, p, p, p},
		{c, c, c, c, c, c, p, p, p},
		{c, c, c, c, c, c, p, p, p},
		{c, c, c, c, c, c, c, p, p},
	}
	events := []string{
		`0 turn/start | {"turn":1}`,
		`1 user/message | user        "读取 README.md，并概述这个项目。"`,
		`2 model/request | 1 条消息，截至 seq 1`,
		`3 assistant/message | assistant   toolUse  read(c1 {"path":"README.md"})`,
		`4 tool/call | read(c1 {"path":"README.md"})`,
		`5 tool/result | toolResult  c1 read → "# tiny-pi\n用 Go 写的、会调用工具的 LLM agent 运行时。"  ← seq 4`,
		`6 model/request | 3 条消息，截至 seq 5`,
		`7 assistant/message | assistant   stop  "这是 tiny-pi：一个用 Go 写的 agent 运行时。"`,
		`8 turn/end | {"turn":1,"reason":"stop"}`,
	}
	actors := []string{"模型", "Agent", "工具运行时", "会话", "会话", "Agent"}
	duties := []string{
		"本阶段：结束这次流式回复，给出调用的名称 read、标识 c1 和参数。",
		"本阶段：从回复中取出 c1，先登记，再交给工具运行时。",
		"本阶段：校验参数并执行 read，把返回值变成结果消息。",
		"本阶段：按调用顺序追加结果事件并分配 seq；追加只在内存中，写盘另行进行。",
		"本阶段：deriveMessages：从事件投影出消息历史。它是纯函数，同一份日志总得到同样的消息。",
		"本阶段：先写盘（等请求包含的每个事件都写进文件），再冻结请求（之后的追加改变不了它），交给模型适配器。",
	}

	for _, view := range []string{"history", "events", "duties"} {
		click(t, ctx, "#tab-"+view)
		waitFor(t, ctx, `!document.getElementById('view-`+view+`').hidden`)
		for i := range 6 {
			n := string(rune('1' + i))
			click(t, ctx, "#stage-"+n)
			waitFor(t, ctx, `document.getElementById('stage-counter').innerText === '阶段 `+n+` / 6'`)
			s := eval[snapshot](t, ctx, snapshotJS)
			assert.Equal(t, []string{view}, s.Visible, "stage %s", n)
			assert.Equal(t, titles[i], s.Title, "stage %s", n)
			switch view {
			case "history":
				assert.Equal(t, notes[i], s.Note, "stage %s", n)
				assert.Equal(t, histories[i], s.History, "stage %s", n)
			case "events":
				assert.Equal(t, states[i], s.States, "stage %s", n)
				assert.Equal(t, events, s.Events, "stage %s", n)
			case "duties":
				assert.Equal(t, actors[i], s.Active, "stage %s", n)
				assert.Equal(t, duties[i], s.Duty, "stage %s", n)
			}
		}
	}

	// The step buttons.
	click(t, ctx, "#prev")
	waitFor(t, ctx, `document.getElementById('stage-counter').innerText === '阶段 5 / 6'`)
	click(t, ctx, "#next")
	waitFor(t, ctx, `document.getElementById('stage-counter').innerText === '阶段 6 / 6' && document.getElementById('next').disabled`)
	// Play from the last stage starts again at the first and stops at the last.
	click(t, ctx, "#play")
	waitFor(t, ctx, `document.getElementById('stage-counter').innerText === '阶段 1 / 6' && document.getElementById('play').innerText === '❚❚ 暂停'`)
	waitFor(t, ctx, `document.getElementById('stage-counter').innerText === '阶段 6 / 6' && document.getElementById('play').innerText === '▶ 播放'`)
}

func TestBrowserKeyboard(t *testing.T) {
	ctx := tab(t, browser(t), newHandler(t, serve.Options{Log: "testdata/readme.jsonl", Lang: i18n.EN}), "/")
	waitFor(t, ctx, `document.body.dataset.ready === 'true'`)
	counter := func(n string) string {
		return `document.getElementById('stage-counter').innerText === 'stage ` + n + ` of 6'`
	}
	waitFor(t, ctx, counter("1"))
	key(t, ctx, kb.ArrowRight)
	waitFor(t, ctx, counter("2"))
	key(t, ctx, kb.ArrowRight)
	waitFor(t, ctx, counter("3")+` && document.getElementById('stage-title').innerText === 'The tool runs'`)
	key(t, ctx, kb.ArrowLeft)
	waitFor(t, ctx, counter("2"))
	key(t, ctx, kb.End)
	waitFor(t, ctx, counter("6"))
	key(t, ctx, kb.ArrowRight) // past the end: stays
	key(t, ctx, kb.Home)
	waitFor(t, ctx, counter("1"))
	key(t, ctx, "2")
	waitFor(t, ctx, `!document.getElementById('view-events').hidden && document.getElementById('view-history').hidden`)
	key(t, ctx, "3")
	waitFor(t, ctx, `!document.getElementById('view-duties').hidden && document.getElementById('view-events').hidden`)
	key(t, ctx, "1")
	waitFor(t, ctx, `!document.getElementById('view-history').hidden && document.getElementById('view-duties').hidden`)
	key(t, ctx, " ")
	waitFor(t, ctx, `document.getElementById('play').innerText === '❚❚ Pause'`)
	key(t, ctx, " ")
	waitFor(t, ctx, `document.getElementById('play').innerText === '▶ Play'`)
}

func TestBrowserLinksBetweenViews(t *testing.T) {
	ctx := tab(t, browser(t), newHandler(t, serve.Options{Log: "testdata/readme.jsonl", Lang: i18n.ZH}), "/")
	waitFor(t, ctx, `document.body.dataset.ready === 'true'`)
	click(t, ctx, "#stage-4")
	waitFor(t, ctx, `document.getElementById('msg-5') !== null`)
	// A message links to its event.
	click(t, ctx, "#msg-5 a.goto")
	waitFor(t, ctx, `!document.getElementById('view-events').hidden && document.getElementById('event-5').classList.contains('target')`)
	// An event links to its producer...
	click(t, ctx, `#event-5 a[data-target="actor-tool"]`)
	waitFor(t, ctx, `!document.getElementById('view-duties').hidden && document.getElementById('actor-tool').classList.contains('target')`)
	assert.Equal(t, "这次往返中它产生的事件： 事件 seq 5", eval[string](t, ctx, `document.querySelector('#actor-tool .owns').innerText.trim()`))
	// ...an actor to its events...
	click(t, ctx, `#actor-agent a[data-target="event-4"]`)
	waitFor(t, ctx, `!document.getElementById('view-events').hidden && document.getElementById('event-4').classList.contains('target') && !document.getElementById('event-5').classList.contains('target')`)
	// ...and a result to the call it answers.
	click(t, ctx, "#tab-history")
	click(t, ctx, "#tab-events")
	click(t, ctx, `#event-5 a[data-target="event-4"]`)
	waitFor(t, ctx, `document.getElementById('event-4').classList.contains('target')`)
	assert.Equal(t, "调用结果", eval[string](t, ctx, `document.querySelector('#event-5 .badge.focus').innerText`))
}

func TestBrowserComparesWithAReference(t *testing.T) {
	ctx := tab(t, browser(t), newHandler(t, serve.Options{Log: "testdata/readme.jsonl", Reference: "testdata/reference.jsonl", Lang: i18n.ZH}), "/")
	waitFor(t, ctx, `document.body.dataset.ready === 'true'`)
	assert.Equal(t, "第一处不同：第 8 行（events）", eval[string](t, ctx, `document.getElementById('compare-summary').innerText`))
	assert.Equal(t, []string{"▶", "8", `assistant/message assistant   stop  "这是 tiny-pi：一个用 Go 写的 agent 运行时。"`, `assistant/message assistant   stop  "这是 tiny-pi：一个用 Go 写的、会调用工具的 LLM agent 运行时。"`},
		eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#compare-rows tr.first td')).map(td => td.innerText)`))
	assert.Equal(t, 2, eval[int](t, ctx, `document.querySelectorAll('#compare-rows tr.differs').length`), "the final answer differs in the events and in the transcript")
	key(t, ctx, "2")
	waitFor(t, ctx, `!document.getElementById('view-events').hidden`)
	assert.Equal(t, "▶ 第一处不同", eval[string](t, ctx, `document.querySelector('#event-7 .badge.firstdiff').innerText`))
	assert.Equal(t, 1, eval[int](t, ctx, `document.querySelectorAll('.badge.firstdiff').length`))
}

func TestBrowserErrorPages(t *testing.T) {
	b := browser(t)
	tests := []struct {
		file, kind, where, what, repair string
	}{
		{"damaged.jsonl", "damaged", "testdata/damaged.jsonl:5",
			"第 5 行不是有效的事件：not a JSON object: unexpected end of JSON input。损坏出现在最后一行之前，所以这不是写入中断，而是日志被改动过或写入方有错。",
			"对照第 10 章正文里的格式（course read 10，“信封和事件类型”一节）修正第 5 行，或修好写入方后重新运行。"},
		{"unknown-type.jsonl", "unknown-type", "testdata/unknown-type.jsonl:6",
			`第 6 行的事件类型 "tool/started" 未知，且没有标记 "ignorable": true，读取方不能跳过它。`,
			`检查类型的拼写，已知的类型有：user/message, assistant/message, tool/call, tool/start, tool/result, turn/start, turn/end, model/request, compaction；若这是新增的、不影响消息历史的事件，写入时加上 "ignorable": true。`},
		{"seq.jsonl", "seq", "testdata/seq.jsonl:7",
			"第 7 行的 seq 是 6，应为 5：seq 是它之前的事件数，必须连续。有事件丢失、重复或顺序被打乱。",
			"写入方应在追加时取 seq = 当前事件数；修好后重新运行，或按行号把 seq 改回连续。"},
		{"version.jsonl", "version", "testdata/version.jsonl:1",
			"日志的格式版本是 2，本课程工具只读取版本 1。",
			"让写入方与课程工具使用同一个版本：更新课程工具，或用本章的 tinypi 重新运行。"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			ctx := tab(t, b, newHandler(t, serve.Options{Log: filepath.Join("testdata", tt.file), Lang: i18n.ZH}), "/")
			require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#problem"))))
			got := eval[[]string](t, ctx, `['#problem-title', '#problem-file', '#problem-what', '#problem-repair'].map(s => document.querySelector(s).innerText)`)
			assert.Equal(t, []string{"会话日志无法读取", tt.where, tt.what, tt.repair}, got)
			assert.Equal(t, tt.kind, eval[string](t, ctx, `document.getElementById('problem').dataset.kind`))
			assert.True(t, eval[bool](t, ctx, `document.getElementById('problem-excerpt').innerText.length > 0`))
		})
	}
}

// TestScreenshots writes screenshots of the page to $SERVE_SHOTS (skipped without it): for
// looking at, not for checking.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("SERVE_SHOTS")
	if dir == "" {
		t.Skip("SERVE_SHOTS is not set")
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	b := browser(t)
	shot := func(ctx context.Context, name string) {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), png, 0o644))
	}
	ctx := tab(t, b, newHandler(t, serve.Options{Log: "testdata/readme.jsonl", Lang: i18n.ZH}), "/")
	waitFor(t, ctx, `document.body.dataset.ready === 'true'`)
	shot(ctx, "1-stage1-history.png")
	click(t, ctx, "#stage-4")
	click(t, ctx, "#tab-events")
	waitFor(t, ctx, `!document.getElementById('view-events').hidden`)
	shot(ctx, "2-stage4-events.png")
	ctx = tab(t, b, newHandler(t, serve.Options{Log: "testdata/readme.jsonl", Reference: "testdata/reference.jsonl", Lang: i18n.EN}), "/")
	waitFor(t, ctx, `document.body.dataset.ready === 'true'`)
	click(t, ctx, "#stage-6")
	click(t, ctx, "#tab-duties")
	waitFor(t, ctx, `!document.getElementById('view-duties').hidden`)
	shot(ctx, "3-stage6-duties-compare-en.png")
	ctx = tab(t, b, newHandler(t, serve.Options{Log: "testdata/seq.jsonl", Lang: i18n.ZH}), "/")
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#problem"))))
	shot(ctx, "4-error-seq.png")
}

func newHandler(t *testing.T, opts serve.Options) *serve.Handler {
	t.Helper()
	h, err := serve.NewHandler(opts)
	require.NoError(t, err)
	return h
}
