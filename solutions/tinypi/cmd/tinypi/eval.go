package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/learn-tinypi/course/solutions/tinypi/eval"
)

// runEval is `tinypi eval [-json FILE] [-live] DIR`: it runs the evaluation cases in DIR (chapter
// 14) with their scripts, or with the configured provider under -live, shows a line per case as
// it is judged, then the table; -json writes the report too. The exit status is 0 when every case
// passed, 1 otherwise. A panic while the suite runs (in a practice directory, a lab of chapter 14
// not written yet) is one line too, not a stack trace.
func runEval(ctx context.Context, args []string, e env) (code int) {
	// A case's directory name, the names of the files its run leaves and the model's words all
	// reach the progress lines, the table and the errors: none of them may drive the terminal.
	e.stdout, e.stderr = controlEscaper{e.stdout}, controlEscaper{e.stderr}
	defer func() {
		if p := recover(); p != nil {
			code = e.failf(exitCannotStart, "eval: %v", p)
		}
	}()
	fs := flag.NewFlagSet("tinypi eval", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	jsonOut := fs.String("json", "", "also write the report as JSON to this new `file`")
	live := fs.Bool("live", false, "ask the configured provider instead of the cases' scripts")
	var cfg config
	fs.StringVar(&cfg.provider, "provider", "", "with -live: the provider's wire format: openai or anthropic (default: as tinypi -h says)")
	fs.StringVar(&cfg.model, "model", e.getenv("TINYPI_MODEL"), "with -live: the provider's model `name`")
	fs.StringVar(&cfg.baseURL, "base-url", "", "with -live: the provider's base `url` (default: as tinypi -h says)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return e.failf(exitUsage, "eval: %v", err)
	}
	if fs.NArg() != 1 {
		return e.failf(exitUsage, "eval: want one directory of cases, got %d arguments", fs.NArg())
	}
	if *jsonOut != "" {
		if _, err := os.Lstat(*jsonOut); err == nil {
			return e.failf(exitCannotStart, "eval: %s exists; tinypi does not overwrite it", *jsonOut)
		}
	}
	cases, err := eval.LoadEvalSuite(fs.Arg(0))
	if err != nil {
		return e.failf(exitCannotStart, "%v", err)
	}
	// A reply whose tool call ids break the log's rules is refused before it is logged, as in
	// every other mode (checkedModel): in a case's script as from the live model.
	for i := range cases {
		cases[i].Script = checkedScript(cases[i].Script)
	}
	var opts eval.EvalOptions
	if *live {
		if err := providerFromEnv(&cfg, e); err != nil {
			return e.failf(exitUsage, "eval: %v", err)
		}
		if cfg.retryBase, err = retryBase(e); err != nil {
			return e.failf(exitUsage, "eval: %v", err)
		}
		model, err := newModel(cfg, e)
		if err != nil {
			return e.failf(exitCannotStart, "%v", err)
		}
		opts.Model = checkedModel{retryingModel{Model: model, base: cfg.retryBase, notify: func(n retryNote) {
			fmt.Fprintf(e.info, "tinypi: eval: %s\n", n)
		}}}
		opts.SystemPrompt = systemPrompt
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go cancelOnInterrupt(runCtx, e, cancel)
	report := eval.RunEvalSuite(runCtx, cases, opts, e.stderr)
	if err := eval.WriteEvalTable(e.stdout, report); err != nil {
		return e.failf(exitCannotStart, "eval: %v", err)
	}
	if *jsonOut != "" {
		data, err := json.MarshalIndent(report, "", "  ")
		if err != nil {
			return e.failf(exitCannotStart, "eval: %v", err)
		}
		f, err := os.OpenFile(*jsonOut, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return e.failf(exitCannotStart, "eval: %v", err)
		}
		_, werr := f.Write(append(data, '\n'))
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(*jsonOut)
			return e.failf(exitCannotStart, "eval: %v", werr)
		}
	}
	if runCtx.Err() != nil {
		fmt.Fprintln(e.stderr, "tinypi: eval interrupted")
		return exitInterrupted
	}
	if report.Failed > 0 {
		return 1
	}
	return 0
}

// controlEscaper writes what it is given with every control character but newline and tab, every
// byte that is not UTF-8 and every bidirectional override shown as an escape ("\x1b", "\x9b",
// "\u202e"), so that text from a case or a run (a directory named "\x1b]0;owned\a", say) is seen,
// never obeyed, by the terminal. Each Write is escaped on its own; eval writes whole lines.
type controlEscaper struct{ w io.Writer }

// Write escapes p and writes the result in one call; it reports len(p) once that is written.
func (c controlEscaper) Write(p []byte) (int, error) {
	var out []byte
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = fmt.Appendf(out, "\\x%02x", p[i])
		case r == '\n' || r == '\t':
			out = append(out, p[i])
		case r < 0x20 || 0x7f <= r && r <= 0x9f:
			out = fmt.Appendf(out, "\\x%02x", r)
		case 0x202a <= r && r <= 0x202e || 0x2066 <= r && r <= 0x2069:
			out = fmt.Appendf(out, "\\u%04x", r)
		default:
			out = append(out, p[i:i+size]...)
		}
		i += size
	}
	if _, err := c.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
