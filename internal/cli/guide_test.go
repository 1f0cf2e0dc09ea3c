package cli

import (
	"io"
	"regexp"
	"strings"
	"testing"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/practice"
)

// guideCommandRE finds the course commands the assistant guide cites: `course test --lab N.M`,
// `course --lang en read 07`.
var guideCommandRE = regexp.MustCompile("`course ((?:--lang [a-z]+ )?[a-z]+(?: [^`]*)?)`")

// TestAssistantGuideNamesEveryLabAndRealCommands renders AGENTS.md for every chapter: it names
// each lab of its chapter with its card and test command, and every course command it cites is a
// command of the kit, with flags the command has.
func TestAssistantGuideNamesEveryLabAndRealCommands(t *testing.T) {
	content := course.Content()
	c, err := manifest.Load(content)
	if err != nil {
		t.Fatal(err)
	}
	a := &app{p: printer{lang: langEN}, stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	root := a.rootCommand()
	cited := map[string]bool{}
	for _, ch := range c.Chapters {
		if len(ch.Labs) == 0 {
			continue
		}
		guide, err := practice.RenderAssistantGuide(content, c, ch)
		if err != nil {
			t.Fatalf("chapter %s: %v", ch.Number, err)
		}
		text := string(guide)
		for _, lab := range ch.Labs {
			for _, want := range []string{"| " + lab.ID + " | " + lab.TitleEN, "`labs/" + lab.ID + ".en.md`", "`" + practice.TestCommand(lab) + "`"} {
				if !strings.Contains(text, want) {
					t.Errorf("chapter %s: the guide lacks %q for lab %s", ch.Number, want, lab.ID)
				}
			}
		}
		for _, rule := range []string{
			"Never write code for the learner's labs", "no helper function, type, method or variable that a lab's code would call",
			"Never edit the focused tests", "Answer with the next hint",
			"Never run or suggest `course solution --peek`",
		} {
			if !strings.Contains(text, rule) {
				t.Errorf("chapter %s: the guide lacks the rule %q", ch.Number, rule)
			}
		}
		here := map[string]bool{}
		for _, m := range guideCommandRE.FindAllStringSubmatch(text, -1) {
			cited[m[1]] = true
			here[m[1]] = true
		}
		// Only commands that work in the chapter: course transcript where the tests record
		// runs, course serve where a finished program writes a session log (the end-to-end
		// script guide.txtar runs them in practice directories of 07, 12 and 14).
		for cmd, works := range map[string]bool{
			"transcript":            ch.RecordsRuns,
			"serve":                 ch.Number > "10",
			"diagnose " + ch.Number: len(ch.Mutants) > 0,
		} {
			if here[cmd] != works {
				t.Errorf("chapter %s: the guide cites `course %s`: %v, want %v", ch.Number, cmd, here[cmd], works)
			}
		}
	}
	for _, want := range []string{"test", "transcript", "serve", "diagnose 07", "test --heldout"} {
		if !cited[want] {
			t.Errorf("no guide cites `course %s`", want)
		}
	}
	for line := range cited {
		args := strings.Fields(line)
		cmd, rest, err := root.Find(args)
		if err != nil || cmd == root {
			t.Errorf("the guide cites `course %s`, which is not a command (%v)", line, err)
			continue
		}
		for _, arg := range rest {
			if name, ok := strings.CutPrefix(arg, "--"); ok && cmd.Flags().Lookup(name) == nil && root.PersistentFlags().Lookup(name) == nil {
				t.Errorf("the guide cites `course %s`: %s has no flag --%s", line, cmd.CommandPath(), name)
			}
		}
	}
}
