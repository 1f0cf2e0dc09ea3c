package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// config is what the flags and the environment ask for.
type config struct {
	help bool
	// The model: a script, a proxy, or a provider.
	scripted string
	proxy    string
	provider string
	model    string
	baseURL  string
	// apiKey and maxTokens come from the environment only (see providerFromEnv).
	apiKey    string
	keyVar    string
	maxTokens string
	// Modes: at most one of print, jsonPrompt and rpc; none is interactive.
	print      string
	jsonPrompt string
	rpc        bool
	// The session: a new file (session), or an existing one to continue (resume) or branch from
	// (fork, "FILE@SEQ").
	session string
	resume  string
	fork    string
	// sandbox, when set, is a directory the agent works on a copy of, in a new git repository.
	sandbox string
	// What the agent may do.
	readOnly      bool
	yes           bool
	maxSteps      int
	contextWindow int
	// retryBase is the first wait before a failed model request is asked again.
	retryBase time.Duration
	// price, when set, turns token counts into dollars.
	price *prices
}

// parseFlags reads args (and, for the provider, the environment).
func parseFlags(args []string, e env) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("tinypi", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.StringVar(&cfg.scripted, "scripted", "", "run offline: the model's answers are the assistant messages of this JSONL `file`")
	fs.StringVar(&cfg.proxy, "proxy", e.getenv("TINYPI_PROXY_URL"), "ask the model through a tinypi proxy at this `url` (token: $TINYPI_PROXY_TOKEN)")
	fs.StringVar(&cfg.provider, "provider", "", "the provider's wire format: openai or anthropic (default: see Environment)")
	fs.StringVar(&cfg.model, "model", e.getenv("TINYPI_MODEL"), "the provider's model `name` ($TINYPI_MODEL)")
	fs.StringVar(&cfg.baseURL, "base-url", "", "the provider's base `url` (default: see Environment; else its public endpoint)")
	fs.StringVar(&cfg.print, "p", "", "print mode: run this `prompt` and print the answer")
	fs.StringVar(&cfg.jsonPrompt, "json", "", "JSON mode: run this `prompt` and print every event as a JSON line")
	fs.BoolVar(&cfg.rpc, "rpc", false, "RPC mode: read JSON commands from stdin; the end of stdin aborts the run in progress")
	fs.StringVar(&cfg.session, "session", "", "write the session to this new `file` (default .tinypi/session-TIME.jsonl)")
	fs.StringVar(&cfg.resume, "resume", "", "continue the session in this `file`")
	fs.StringVar(&cfg.fork, "fork", "", "start a new session from the history of `FILE@SEQ`, through its turn/end at SEQ")
	fs.StringVar(&cfg.sandbox, "sandbox", "", "work on a copy of `dir` in a new temporary git repository (kept; its path is printed) instead of the current directory")
	fs.BoolVar(&cfg.readOnly, "read-only", false, "refuse every write, edit and bash call (a BeforeToolCall hook); read, ls, find and grep still run, and the model is told")
	fs.BoolVar(&cfg.yes, "yes", false, "interactive mode: run write, edit and bash calls without asking first")
	fs.IntVar(&cfg.maxSteps, "max-steps", 0, "the most model requests of one run (0: the default)")
	fs.IntVar(&cfg.contextWindow, "context-window", envInt(e, "TINYPI_CONTEXT_WINDOW"), "the model's context window in tokens; compaction keeps requests inside it (0: off)")
	fs.Usage = func() { printUsage(fs) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			cfg.help = true
			return cfg, nil
		}
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q (a prompt goes after -p)", fs.Arg(0))
	}
	modes := 0
	for _, on := range []bool{cfg.print != "", cfg.jsonPrompt != "", cfg.rpc} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return cfg, errors.New("-p, -json and -rpc cannot be used together")
	}
	if cfg.resume != "" && (cfg.session != "" || cfg.fork != "") {
		return cfg, errors.New("-resume continues a session in its own file: it cannot be used with -session or -fork")
	}
	if cfg.fork != "" {
		if _, _, err := parseFork(cfg.fork); err != nil {
			return cfg, err
		}
	}
	if cfg.scripted != "" && cfg.proxy != "" {
		return cfg, errors.New("-scripted and -proxy cannot be used together")
	}
	if cfg.maxSteps < 0 || cfg.contextWindow < 0 {
		return cfg, errors.New("-max-steps and -context-window cannot be negative")
	}
	var err error
	if cfg.retryBase, err = retryBase(e); err != nil {
		return cfg, err
	}
	if cfg.price, err = pricesFromEnv(e); err != nil {
		return cfg, err
	}
	return cfg, providerFromEnv(&cfg, e)
}

// usageHead and usageTail frame the flags in tinypi -h: the modes, the eval subcommand, what
// tinypi does on its own, and every environment variable it reads.
const usageHead = `Usage:
  tinypi [flags]                 interactive: one prompt per line of stdin (at a terminal with
                                 line editing and history: the arrow keys, Up for the last line)
  tinypi [flags] -p PROMPT       print mode: run PROMPT, print the answer
  tinypi [flags] -json PROMPT    JSON mode: run PROMPT, print every event as a JSON line
  tinypi [flags] -rpc            RPC mode: JSON commands on stdin, responses and events on stdout
  tinypi eval [flags] DIR        run the evaluation cases in DIR (tinypi eval -h)

Flags:
`

const usageTail = `
Retries: a model request that fails before any of its answer streamed (429, 5xx, a connection
that fails or drops) is sent again: 4 requests at most and 60 s of waiting in all, each wait the
server's Retry-After or else 1 s, 2 s, 4 s. Each retry is a line on stderr and a tinypi/retry
entry in the session; Ctrl-C ends the wait and the run.

Tokens: after each run a line on stderr gives the tokens the provider counted for it and for
the whole session ("tokens: 1,234 in / 56 out · session 5,678"), and the cost when
TINYPI_PRICE_IN and TINYPI_PRICE_OUT are set; each compaction is a line as it happens.

Environment (the flags win over it):
  TINYPI_PROVIDER, TINYPI_API     openai or anthropic (-provider); unset: anthropic when only
                                  ANTHROPIC_API_KEY is set, else openai
  TINYPI_MODEL                    the model's name (-model)
  TINYPI_API_KEY                  the key; else OPENAI_API_KEY or ANTHROPIC_API_KEY, by provider
  OPENAI_API_KEY                  the openai provider's key
  ANTHROPIC_API_KEY               the anthropic provider's key
  TINYPI_BASE_URL                 the base URL (-base-url); else OPENAI_BASE_URL or
  OPENAI_BASE_URL                 ANTHROPIC_BASE_URL, by provider; else the public endpoint
  ANTHROPIC_BASE_URL
  TINYPI_MAX_TOKENS               the most output tokens of one response
  TINYPI_PROXY_URL                a tinypi proxy to ask instead (-proxy)
  TINYPI_PROXY_TOKEN              the proxy's token
  TINYPI_CONTEXT_WINDOW           the model's context window in tokens (-context-window)
  TINYPI_RETRY_BASE               the first wait before a retry when the server names none
                                  (a duration; default 1s)
  TINYPI_PRICE_IN, TINYPI_PRICE_OUT  the model's price in dollars per million input and output
                                  tokens: the line after each run then gives the cost too
The keys and the proxy token are taken out of the environment the agent's commands see.

Interactive commands: /help, /session, /model, /compact, /fork, /quit; /NAME runs the prompt template
NAME.md of ~/.tinypi/prompts or the repository's .tinypi/prompts (chapter 12), with arguments
for its $1 … $9 and $@.

Approval: at a terminal, interactive mode shows each write, edit and bash call (an edit's
change as - and + lines) and asks first: y runs it once, a runs it and every later call of the
session, n refuses it (the model is told so); -yes asks nothing. The other modes (-p, -json,
-rpc, eval), and interactive mode without a terminal on stdin, never ask: the calls run, unless
-read-only refuses them. Every mode says on stderr, in one line, where its session is written.

Watching: tinypi serves no page itself. While it runs, course serve --follow FILE (FILE the
session that line names) shows the session in a browser, each tool call's round trip (asked,
registered, runs, result committed, sent) appearing as it happens; course serve FILE shows it
after the run.
`

// printUsage writes tinypi -h.
func printUsage(fs *flag.FlagSet) {
	fmt.Fprint(fs.Output(), usageHead)
	fs.PrintDefaults()
	fmt.Fprint(fs.Output(), usageTail)
}

// providerFromEnv fills in what the flags left of the provider's configuration from the
// environment, read as the runtime's ProviderConfigFromEnv reads it (that function reads the
// process's environment, which holds no keys once hideKeys has run):
//
//	TINYPI_PROVIDER or TINYPI_API   openai or anthropic; when unset, anthropic if only
//	                                ANTHROPIC_API_KEY is set, else openai
//	TINYPI_BASE_URL                 else OPENAI_BASE_URL or ANTHROPIC_BASE_URL, by provider
//	TINYPI_API_KEY                  else OPENAI_API_KEY or ANTHROPIC_API_KEY, by provider
//	TINYPI_MAX_TOKENS               the output token limit (checked by newModel)
func providerFromEnv(cfg *config, e env) error {
	if cfg.provider == "" {
		byName := strings.ToLower(strings.TrimSpace(e.getenv("TINYPI_PROVIDER")))
		api := strings.ToLower(strings.TrimSpace(e.getenv("TINYPI_API")))
		switch {
		case byName != "" && api != "" && byName != api:
			return fmt.Errorf("TINYPI_PROVIDER=%q and TINYPI_API=%q name different providers: set one", byName, api)
		case byName != "":
			cfg.provider = byName
		case api != "":
			cfg.provider = api
		case e.getenv("OPENAI_API_KEY") == "" && e.getenv("ANTHROPIC_API_KEY") != "":
			cfg.provider = tinypi.APIAnthropic
		default:
			cfg.provider = tinypi.APIOpenAI
		}
	}
	prefix := map[string]string{tinypi.APIOpenAI: "OPENAI", tinypi.APIAnthropic: "ANTHROPIC"}[cfg.provider]
	if prefix == "" {
		return nil // newModel says the provider is unknown, when a provider is asked for
	}
	if cfg.baseURL == "" {
		cfg.baseURL = firstSet(e, "TINYPI_BASE_URL", prefix+"_BASE_URL")
	}
	cfg.keyVar = prefix + "_API_KEY"
	cfg.apiKey = firstSet(e, "TINYPI_API_KEY", cfg.keyVar)
	cfg.maxTokens = strings.TrimSpace(e.getenv("TINYPI_MAX_TOKENS"))
	return nil
}

// firstSet is the value of the first of names that is set and not empty.
func firstSet(e env, names ...string) string {
	for _, name := range names {
		if v := e.getenv(name); v != "" {
			return v
		}
	}
	return ""
}

func envInt(e env, name string) int {
	n, _ := strconv.Atoi(e.getenv(name))
	return n
}

// newModel is the model cfg asks for: the script, the proxy, or the provider. A missing key, an
// unknown provider or a model without a name is an error saying what to set.
func newModel(cfg config, e env) (tinypi.Model, error) {
	switch {
	case cfg.scripted != "":
		script, err := tinypi.LoadScript(cfg.scripted)
		if err != nil {
			return nil, err
		}
		return tinypi.NewScriptedModel(script...), nil
	case cfg.proxy != "":
		token := e.getenv("TINYPI_PROXY_TOKEN")
		if token == "" {
			return nil, errors.New("no proxy token: set TINYPI_PROXY_TOKEN")
		}
		return &tinypi.ProxyModel{URL: cfg.proxy, Token: token, Client: newRetryClient()}, nil
	}
	if cfg.keyVar == "" {
		return nil, fmt.Errorf("unknown provider %q: use openai or anthropic (or run offline with -scripted FILE)", cfg.provider)
	}
	if cfg.apiKey == "" {
		return nil, fmt.Errorf("no API key: set %s (or run offline with -scripted FILE)", cfg.keyVar)
	}
	if cfg.model == "" {
		return nil, errors.New("no model: set TINYPI_MODEL or -model")
	}
	maxTokens := 0
	if cfg.maxTokens != "" {
		n, err := strconv.Atoi(cfg.maxTokens)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("TINYPI_MAX_TOKENS=%q: want a positive integer", cfg.maxTokens)
		}
		maxTokens = n
	}
	return tinypi.NewProvider(tinypi.ProviderConfig{API: cfg.provider, BaseURL: cfg.baseURL, APIKey: cfg.apiKey, Model: cfg.model,
		MaxTokens: maxTokens, HTTPClient: newRetryClient()})
}

// gitRoot is the root of the git repository holding dir (the nearest directory with a .git), or
// an error when there is none.
func gitRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%s is not inside a git repository: run git init first, so that every change the agent makes can be reviewed and undone", dir)
		}
	}
}

// parseFork splits "FILE@SEQ".
func parseFork(s string) (string, int, error) {
	i := strings.LastIndex(s, "@")
	if i <= 0 {
		return "", 0, fmt.Errorf("-fork %q: want FILE@SEQ", s)
	}
	seq, err := strconv.Atoi(s[i+1:])
	switch {
	case errors.Is(err, strconv.ErrRange):
		return "", 0, fmt.Errorf("-fork %q: SEQ is out of range: no session holds that many events", s)
	case err != nil || seq < 0 || strings.HasPrefix(s[i+1:], "+"):
		return "", 0, fmt.Errorf("-fork %q: SEQ must be a number, 0 or more", s)
	}
	return s[:i], seq, nil
}

// defaultSessionPath is a new session file under dir/.tinypi, named by the time.
func defaultSessionPath(dir string, now time.Time) string {
	return filepath.Join(dir, ".tinypi", "session-"+now.UTC().Format("20060102-150405.000")+".jsonl")
}
