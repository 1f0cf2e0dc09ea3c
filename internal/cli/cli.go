// Package cli implements the `course` command: the learner's and the course author's entry point
// to the kit (list chapters, show a checkpoint, create a practice directory, run focused tests,
// prove the course content with dev check).
//
// Every user-facing text lives in the message catalog, in Chinese and English: each file declares
// the i18n.Catalog of its own texts, and messages.go assembles them into one.
//
// One command per file: list.go, checkpoint.go, practice.go, test.go, status.go, next.go,
// watch.go, reset.go, solution.go, transcript.go, serve.go, diagnose.go, read.go, doctor.go, and the author
// tools devcheck.go and devsignatures.go; the groups `course` and `course dev` are in this file.
// What several commands share lives in a file named for its job, written without cobra so that
// tests call it directly:
//
//   - practicedir.go: finding the practice directory, its chapter and the lab a flag names, and
//     the paths and commands the kit prints from the current directory;
//   - labrun.go: running labs' focused tests and recording the outcome in the progress file;
//   - labreport.go: the per-lab report of a run (course test, course watch);
//   - labprogress.go: the lab table and progress bar (course status, course watch);
//   - hints.go: the hints of lab cards under a table's rows;
//   - labfiles.go: reading a lab's regions in a practice directory (course reset, course solution);
//   - place.go: writing a tree into a learner's directory, and its errors;
//   - gitfiles.go, knownmistake.go, timeout.go: what git holds of a lab's files, naming a known
//     mistake, the per-test time limit;
//   - output.go: tables, colour and output width; messages.go: the catalog and the language.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/firstbuild"
	"github.com/learn-tinypi/course/internal/history"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/tree"
)

// Exit codes of the course command.
const (
	exitOK      = 0
	exitFailed  = 1 // tests or checks failed, or the command could not do its job
	exitUsage   = 2 // bad input: unknown chapter or lab, wrong arguments, not in a practice directory
	langFlagKey = "lang"
)

// Env is what the command reads from and writes to. Main fills it from the process; tests can
// fill it themselves.
type Env struct {
	Stdout, Stderr io.Writer
	// Getenv reads an environment variable (os.Getenv in Main).
	Getenv func(string) string
	// Content is the course content (course.Content() in Main).
	Content fs.FS
	// LookPath finds an executable (exec.LookPath in Main); it tells whether `go` is installed.
	LookPath func(string) (string, error)
	// Stdin is the learner's keyboard (os.Stdin in Main): course watch reads Enter and q from
	// it, and an editor started by course next --edit gets it. nil means no keyboard.
	Stdin io.Reader
}

// Main runs the course command with the process's arguments, environment and the embedded
// course content, and returns the exit code. Ctrl-C (SIGINT), a polite kill (SIGTERM) and a closed
// terminal (SIGHUP) cancel the command alike: the
// running go commands and their test binaries are stopped, temporary directories removed, and
// the command returns. A second signal after that ends the process at once.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // the next signal has its default effect
	}()
	return Run(ctx, os.Args[1:], Env{
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Getenv:   os.Getenv,
		Content:  course.Content(),
		LookPath: exec.LookPath,
		Stdin:    os.Stdin,
	})
}

// Run runs the course command with args (without the program name) and returns the exit code.
func Run(ctx context.Context, args []string, env Env) int {
	langFlag := langFromArgs(args)
	lang, langErr := detectLang(langFlag, env.Getenv)
	langDir := ""
	if langFlag == "" {
		// A practice directory remembers the language it was made in; it outranks the locale
		// (often C.UTF-8, which says nothing about the learner), as --lang outranks it.
		if root, dirLang := practiceLang("."); dirLang != "" {
			lang, langDir = dirLang, root
		}
	}
	a := &app{
		p:       printer{lang: lang},
		langSet: langFlag != "",
		langDir: langDir,
		stdout:  env.Stdout,
		stderr:  env.Stderr,
		getenv:  env.Getenv,
		content: env.Content,
		look:    env.LookPath,
		stdin:   env.Stdin,
		color:   isTerminal(env.Stdout) && env.Getenv("NO_COLOR") == "" && env.Getenv("TERM") != "dumb",

		testTimeout: defaultTestTimeout,
	}
	if langErr != nil {
		fmt.Fprintln(a.stderr, a.p.text("err.lang", langFromArgs(args)))
		return exitUsage
	}
	root := a.rootCommand()
	root.SetArgs(args)
	return a.exitCode(root.ExecuteContext(ctx))
}

// errBadLang reports a --lang value other than zh or en.
var errBadLang = errors.New("unsupported language")

// app holds what every command needs. It lives for one Run.
type app struct {
	p              printer
	stdout, stderr io.Writer
	getenv         func(string) string
	content        fs.FS
	look           func(string) (string, error)
	stdin          io.Reader
	color          bool
	// goRunner runs the go command for course practice's first build; nil means firstbuild.Go.
	goRunner firstbuild.Runner
	// langSet is true when --lang chose the language: a practice directory's own language
	// (practice.Provenance.Lang) then does not replace it.
	langSet bool
	// langDir is the practice directory whose language the output is in, "" when --lang or the
	// locale decided (course doctor says which).
	langDir string
	// testTimeout bounds each focused test a command runs (--timeout); 0 means no limit.
	testTimeout time.Duration
	// running is set once cobra has parsed the arguments and a command starts running: errors
	// before that point are usage errors, errors after it are failures unless marked otherwise.
	running bool
	// fromCwd is the practice directory the command works on, relative to the current directory
	// ("" when it is the current directory): the commands and paths the kit prints start there.
	fromCwd string
}

// usageError is bad input; the command exits with code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// silentFailure means the command already printed why it failed; it exits with code 1.
var errSilentFailure = errors.New("failed (already reported)")

// exitCode prints err the way its kind deserves and returns the exit code.
func (a *app) exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var unknownCh *manifest.UnknownChapterError
	var usage *usageError
	switch {
	case errors.Is(err, errSilentFailure):
		return exitFailed
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(a.stderr, a.p.text("err.interrupted"))
		return exitFailed
	case errors.As(err, &unknownCh):
		if strings.TrimSpace(unknownCh.Number) == "" {
			fmt.Fprintln(a.stderr, a.p.text("err.empty.ch"))
		} else {
			fmt.Fprintln(a.stderr, a.p.text("err.unknown.ch", unknownCh.Number))
		}
		for _, ch := range unknownCh.Chapters {
			fmt.Fprintf(a.stderr, "  %s  %s\n", ch.Number, a.chapterTitle(ch))
		}
		return exitUsage
	case errors.Is(err, practice.ErrNotPractice):
		fmt.Fprintln(a.stderr, a.p.text("err.not.practice", a.notPracticeDir(err)))
		return exitUsage
	case errors.As(err, &usage):
		fmt.Fprintln(a.stderr, a.p.text("err.prefix", usage.msg))
		return exitUsage
	case !a.running:
		// cobra's own parse errors (unknown flag, bad flag value).
		fmt.Fprintln(a.stderr, a.p.text("err.prefix", err))
		fmt.Fprintln(a.stderr, a.p.text("err.usage.hint", "course"))
		return exitUsage
	default:
		fmt.Fprintln(a.stderr, a.p.text("err.prefix", err))
		return exitFailed
	}
}

// notPracticeDir extracts the directory a notPracticeError names, or "." when it names none.
func (a *app) notPracticeDir(err error) string {
	var np *notPracticeError
	if errors.As(err, &np) {
		return np.dir
	}
	return "."
}

// notPracticeError says which directory is not inside a practice directory.
type notPracticeError struct {
	dir string
	err error
}

func (e *notPracticeError) Error() string { return e.dir + ": " + e.err.Error() }
func (e *notPracticeError) Unwrap() error { return e.err }

// usagef returns a usage error with a catalog message.
func (a *app) usagef(id string, args ...any) error {
	return &usageError{msg: a.p.text(id, args...)}
}

// builder loads the course content.
func (a *app) builder() (*tree.Builder, error) {
	b, err := tree.NewBuilder(a.content)
	if err != nil {
		return nil, errors.New(a.p.text("err.content", err))
	}
	return b, nil
}

// chapter loads the course and finds chapter number in it.
func (a *app) chapter(number string) (*tree.Builder, *manifest.Chapter, error) {
	b, err := a.builder()
	if err != nil {
		return nil, nil, err
	}
	ch, err := b.Course().Chapter(number)
	if err != nil {
		return nil, nil, err
	}
	return b, ch, nil
}

// chapterHistory loads the course, finds chapter number in it and builds the course history,
// which names the chapters' commits.
func (a *app) chapterHistory(number string) (*tree.Builder, *history.History, *manifest.Chapter, error) {
	b, ch, err := a.chapter(number)
	if err != nil {
		return nil, nil, nil, err
	}
	h, err := history.Build(b)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("building the course history: %w", err)
	}
	return b, h, ch, nil
}

// requireGo fails with a plain message when the go command is not installed.
func (a *app) requireGo(c *manifest.Course) error {
	if a.look == nil {
		return nil
	}
	if _, err := a.look("go"); err != nil {
		version := "1.26"
		if c != nil && c.GoVersion != "" {
			version = c.GoVersion
		}
		return errors.New(a.p.text("err.no.go", version))
	}
	return nil
}

// chapterTitle is the chapter's title in the output language.
func (a *app) chapterTitle(ch *manifest.Chapter) string {
	if a.p.lang == langEN && ch.TitleEN != "" {
		return ch.TitleEN
	}
	return ch.Title
}

// labTitle is the lab's title in the output language.
func (a *app) labTitle(l *manifest.Lab) string {
	if a.p.lang == langEN && l.TitleEN != "" {
		return l.TitleEN
	}
	return l.Title
}

// modeName is the chapter's mode in the output language.
func (a *app) modeName(ch *manifest.Chapter) string {
	switch ch.Mode {
	case "rebuild":
		return a.p.text("mode.rebuild")
	case "observe":
		return a.p.text("mode.observe")
	}
	return ch.Mode
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// shellQuote quotes s for a POSIX shell when it needs quoting, so printed commands can be
// pasted as they are.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+:=@,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// rootCommand builds the command tree with help texts in the output language.
func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "course",
		Short:         a.p.text("root.short"),
		Long:          a.p.text("root.long"),
		Example:       a.p.text("root.example"),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          a.noSubcommand,
		RunE:          showHelp,
		PersistentPreRun: func(*cobra.Command, []string) {
			a.running = true
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.PersistentFlags().String(langFlagKey, "", a.p.text("flag.lang"))
	root.PersistentFlags().BoolP("help", "h", false, a.p.text("flag.help"))
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetUsageTemplate(a.usageTemplate())
	root.SetHelpCommand(&cobra.Command{
		Use:     "help [command]",
		Short:   a.p.text("help.cmd.short"),
		Long:    a.p.text("help.cmd.long"),
		Example: a.p.text("help.cmd.example"),
		Run: func(c *cobra.Command, args []string) {
			target, _, err := c.Root().Find(args)
			if target == nil || err != nil {
				target = c.Root()
			}
			target.SetOut(a.stdout)
			_ = target.Help()
		},
	})
	root.AddCommand(
		a.listCommand(),
		a.checkpointCommand(),
		a.practiceCommand(),
		a.testCommand(),
		a.transcriptCommand(),
		a.serveCommand(),
		a.resetCommand(),
		a.solutionCommand(),
		a.diagnoseCommand(),
		a.readCommand(),
		a.doctorCommand(),
		a.statusCommand(),
		a.nextCommand(),
		a.watchCommand(),
		a.devCommand(),
	)
	return root
}

// noSubcommand is the Args of commands that only group subcommands: any argument is an unknown
// subcommand.
func (a *app) noSubcommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return a.usagef("err.unknown.cmd", args[0], c.CommandPath(), strings.Join(names, ", "))
}

// showHelp is the RunE of commands that only group subcommands: with no subcommand they show
// their help. (noSubcommand has already refused any argument.)
func showHelp(c *cobra.Command, _ []string) error {
	return c.Help()
}

// argsRange checks the number of positional arguments and explains the usage when it is wrong.
func (a *app) argsRange(min, max int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < min || len(args) > max {
			return a.usagef("err.args", c.UseLine(), len(args))
		}
		return nil
	}
}

// usageTemplate is cobra's usage template with its headings in the output language.
func (a *app) usageTemplate() string {
	p := a.p
	return p.text("help.usage") + `{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

` + p.text("help.aliases") + `
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

` + p.text("help.examples") + `
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}

` + p.text("help.commands") + `{{range .Commands}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

` + p.text("help.flags") + `
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

` + p.text("help.global") + `
{{.InheritedFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableSubCommands}}

` + p.text("help.more", "{{.CommandPath}}") + `{{end}}
`
}

// focusedTests is the number of focused tests the chapter's labs state.
func focusedTests(ch *manifest.Chapter) int {
	n := 0
	for _, l := range ch.Labs {
		n += l.Tests
	}
	return n
}

// lookPath finds an executable with the Env's lookup, or on PATH when the Env has none.
func (a *app) lookPath(name string) (string, error) {
	if a.look != nil {
		return a.look(name)
	}
	return exec.LookPath(name)
}

// devCommand is `course dev`, the group of author tools.
func (a *app) devCommand() *cobra.Command {
	dev := &cobra.Command{
		Use:     "dev",
		Short:   a.p.text("dev.short"),
		Long:    a.p.text("dev.long"),
		Example: a.p.text("dev.example"),
		Args:    a.noSubcommand,
		RunE:    showHelp,
	}
	dev.AddCommand(a.devCheckCommand(), a.devSignaturesCommand())
	return dev
}

// chapterArgs resolves the chapter arguments of an author command (NN...) to chapter numbers, in
// order. They are checked before any work starts: a typo is a usage error, not a failed check.
// accept, when not nil, may refuse a chapter with an error of its own.
func (a *app) chapterArgs(args []string, accept func(*manifest.Chapter) error) ([]string, error) {
	numbers := make([]string, 0, len(args))
	for _, arg := range args {
		_, ch, err := a.chapter(arg)
		if err != nil {
			return nil, err
		}
		if accept != nil {
			if err := accept(ch); err != nil {
				return nil, err
			}
		}
		numbers = append(numbers, ch.Number)
	}
	return numbers, nil
}

// testArg is a test name as a shell argument: as it is when it is made of letters, digits and
// "_-./" (Chinese test names need no quotes), quoted otherwise.
func testArg(name string) string {
	if name != "" && strings.IndexFunc(name, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-./", r))
	}) < 0 {
		return name
	}
	return shellQuote(name)
}
