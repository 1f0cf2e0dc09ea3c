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
	maxSteps      int
	contextWindow int
	// retryBase is the first wait before a failed model request is asked again.
	retryBase time.Duration
}

// parseFlags reads args (and, for the provider, the environment).
func parseFlags(args []string, e env) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("tinypi", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.StringVar(&cfg.scripted, "scripted", "", "run offline: the model's answers are the assistant messages of this JSONL `file`")
	fs.StringVar(&cfg.proxy, "proxy", e.getenv("TINYPI_PROXY_URL"), "ask the model through a tinypi proxy at this `url` (token: $TINYPI_PROXY_TOKEN)")
	fs.StringVar(&cfg.provider, "provider", envOr(e, "TINYPI_PROVIDER", tinypi.APIOpenAI), "the provider's wire format: openai or anthropic ($TINYPI_PROVIDER)")
	fs.StringVar(&cfg.model, "model", e.getenv("TINYPI_MODEL"), "the provider's model `name` ($TINYPI_MODEL)")
	fs.StringVar(&cfg.baseURL, "base-url", e.getenv("TINYPI_BASE_URL"), "the provider's base `url` ($TINYPI_BASE_URL; empty: its public endpoint)")
	fs.StringVar(&cfg.print, "p", "", "print mode: run this `prompt` and print the answer")
	fs.StringVar(&cfg.jsonPrompt, "json", "", "JSON mode: run this `prompt` and print every event as a JSON line")
	fs.BoolVar(&cfg.rpc, "rpc", false, "RPC mode: read JSON commands from stdin")
	fs.StringVar(&cfg.session, "session", "", "write the session to this new `file` (default .tinypi/session-TIME.jsonl)")
	fs.StringVar(&cfg.resume, "resume", "", "continue the session in this `file`")
	fs.StringVar(&cfg.fork, "fork", "", "start a new session from the history of `FILE@SEQ`, through its turn/end at SEQ")
	fs.StringVar(&cfg.sandbox, "sandbox", "", "work on a copy of `dir` in a new temporary git repository (kept; its path is printed) instead of the current directory")
	fs.BoolVar(&cfg.readOnly, "read-only", false, "refuse every write, edit and bash call (a BeforeToolCall hook)")
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
	return cfg, nil
}

// usageHead and usageTail frame the flags in tinypi -h: the modes, the eval subcommand, what
// tinypi does on its own, and every environment variable it reads.
const usageHead = `Usage:
  tinypi [flags]                 interactive: one prompt per line of stdin
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

Environment:
  OPENAI_API_KEY, ANTHROPIC_API_KEY   the provider's key (taken out of the environment that the
                                      agent's commands see)
  TINYPI_PROVIDER                     openai or anthropic (-provider)
  TINYPI_MODEL                        the model's name (-model)
  TINYPI_BASE_URL                     the provider's base URL (-base-url)
  TINYPI_PROXY_URL, TINYPI_PROXY_TOKEN  a tinypi proxy and its token (-proxy)
  TINYPI_CONTEXT_WINDOW               the model's context window in tokens (-context-window)
  TINYPI_RETRY_BASE                   the first wait before a retry when the server names none
                                      (a duration; default 1s)
`

// printUsage writes tinypi -h.
func printUsage(fs *flag.FlagSet) {
	fmt.Fprint(fs.Output(), usageHead)
	fs.PrintDefaults()
	fmt.Fprint(fs.Output(), usageTail)
}

func envOr(e env, name, fallback string) string {
	if v := e.getenv(name); v != "" {
		return v
	}
	return fallback
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
	var keyVar string
	switch cfg.provider {
	case tinypi.APIOpenAI:
		keyVar = "OPENAI_API_KEY"
	case tinypi.APIAnthropic:
		keyVar = "ANTHROPIC_API_KEY"
	default:
		return nil, fmt.Errorf("unknown provider %q: use openai or anthropic (or run offline with -scripted FILE)", cfg.provider)
	}
	key := e.getenv(keyVar)
	if key == "" {
		return nil, fmt.Errorf("no API key: set %s (or run offline with -scripted FILE)", keyVar)
	}
	if cfg.model == "" {
		return nil, errors.New("no model: set TINYPI_MODEL or -model")
	}
	return tinypi.NewProvider(tinypi.ProviderConfig{API: cfg.provider, BaseURL: cfg.baseURL, APIKey: key, Model: cfg.model,
		HTTPClient: newRetryClient()})
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
