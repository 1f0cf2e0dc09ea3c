package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryCommandExplainsItself walks the command tree in both languages: every command, the
// help command included, has a short line, a long explanation and an example that runs it.
func TestEveryCommandExplainsItself(t *testing.T) {
	for _, lang := range []string{langZH, langEN} {
		a := &app{p: printer{lang: lang}, stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
		root := a.rootCommand()
		root.InitDefaultHelpCmd()
		seen := 0
		var walk func(c *cobra.Command)
		walk = func(c *cobra.Command) {
			seen++
			path := c.CommandPath()
			for field, text := range map[string]string{"Short": c.Short, "Long": c.Long, "Example": c.Example} {
				if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "!") {
					t.Errorf("%s: %q has no %s (got %q)", lang, path, field, text)
				}
			}
			if !strings.Contains(c.Example, path) {
				t.Errorf("%s: the example of %q does not run it:\n%s", lang, path, c.Example)
			}
			for _, sub := range c.Commands() {
				walk(sub)
			}
		}
		walk(root)
		if seen < 10 {
			t.Errorf("%s: walked %d commands, want the whole tree (at least 10)", lang, seen)
		}
	}
}
