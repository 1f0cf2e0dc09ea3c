package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

// slashCommands are interactive mode's own commands: a line "/NAME ..." whose NAME is one of them
// is handled by tinypi, one naming a prompt template (chapter 12) is the template expanded and
// sent, and any other "/NAME" is refused with a hint, not sent to the model. A line whose first
// word holds a second "/" ("/etc/hosts is wrong") is a prompt.
type slashCommands struct {
	out         io.Writer
	sessionPath string
	model       string
	templates   []tinypi.PromptTemplate
	meter       *usageMeter
	session     *tinypi.Session
	// compact compacts the session now (Session.Compact, reason manual).
	compact func(ctx context.Context) (tinypi.Compaction, error)
}

// handle takes a line typed at the prompt. It returns the prompt to send ("" for none) and
// whether the program should end.
func (c *slashCommands) handle(ctx context.Context, line string) (prompt string, quit bool) {
	name, _, _ := strings.Cut(line, " ")
	if !strings.HasPrefix(name, "/") || strings.Contains(name[1:], "/") || name == "/" {
		return line, false
	}
	switch name {
	case "/quit", "/exit":
		return "", true
	case "/help":
		fmt.Fprint(c.out, `/help              this list
/session           where the session is written, and its tokens so far
/model             the model tinypi asks
/compact           compact the session's context now
/fork              how to branch a new session from the last turn that ended
/quit              end tinypi (also Ctrl-D, or Ctrl-C at the prompt)
`)
		for _, t := range c.templates {
			first, _, _ := strings.Cut(t.Body, "\n")
			fmt.Fprintf(c.out, "/%-17s %s\n", t.Name, clipLine(first))
		}
		if len(c.templates) == 0 {
			fmt.Fprintln(c.out, "(no prompt templates: put NAME.md in ~/.tinypi/prompts or the repository's .tinypi/prompts)")
		}
		return "", false
	case "/session":
		fmt.Fprintf(c.out, "session %s (open it with: course serve %s)\n", c.sessionPath, c.sessionPath)
		fmt.Fprintln(c.out, c.meter.sessionLine())
		return "", false
	case "/model":
		fmt.Fprintf(c.out, "model: %s (choose another with -model or TINYPI_MODEL when starting tinypi)\n", c.model)
		return "", false
	case "/fork":
		events := c.session.Events()
		for i := len(events) - 1; i >= 0; i-- {
			if events[i].Type == tinypi.EventTurnEnd {
				fmt.Fprintf(c.out, "to branch from here, run: tinypi -fork %s@%d (this session goes on as it is)\n", c.sessionPath, events[i].Seq)
				return "", false
			}
		}
		fmt.Fprintln(c.out, "nothing to fork yet: no turn has ended in this session")
		return "", false
	case "/compact":
		comp, err := c.compact(ctx)
		switch {
		case errors.Is(err, tinypi.ErrNothingToCompact):
			fmt.Fprintln(c.out, "nothing to compact yet: the session is short")
		case err != nil:
			fmt.Fprintf(c.out, "compaction failed, the context is as it was: %s\n", oneLine(err.Error()))
		default:
			fmt.Fprintln(c.out, compactionLine(tinypi.CompactionEvent{Reason: tinypi.CompactionManual, Compaction: &comp}))
		}
		return "", false
	}
	if expanded, ok := tinypi.ExpandPromptTemplate(line, c.templates); ok {
		return expanded, false
	}
	fmt.Fprintf(c.out, "unknown command %s: /help lists the commands and prompt templates\n", quoteControl(name))
	return "", false
}

// loadTemplates loads chapter 12's prompt templates: the user's (~/.tinypi/prompts), then the
// repository's (ROOT/.tinypi/prompts), which win. A repository's template that is a link out of
// the repository is skipped, as a context file would be: what a repository holds must not send
// the user's other files to the model. Each skipped file is a line of problems.
func loadTemplates(root string) ([]tinypi.PromptTemplate, []string) {
	var dirs []string
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".tinypi", "prompts"))
	}
	project := filepath.Join(root, ".tinypi", "prompts")
	dirs = append(dirs, project)
	templates, problems, _ := tinypi.LoadPromptTemplates(dirs...)
	var notes []string
	for _, p := range problems {
		notes = append(notes, fmt.Sprintf("prompt template %s skipped: %s", p.Path, p.Reason))
	}
	top, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, append(notes, fmt.Sprintf("prompt templates skipped: %v", err))
	}
	kept := templates[:0]
	for _, t := range templates {
		if within(project, t.Path) {
			if target, err := filepath.EvalSymlinks(t.Path); err != nil || !within(top, target) {
				notes = append(notes, fmt.Sprintf("prompt template %s skipped: it is a link out of the repository", t.Path))
				continue
			}
		}
		kept = append(kept, t)
	}
	return kept, notes
}
