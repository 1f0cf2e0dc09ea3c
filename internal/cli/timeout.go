package cli

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
)

// defaultTestTimeout is how long one focused test may run in course test, status and watch
// before the run is stopped. A lab's tests take milliseconds; a minute leaves room for a slow
// machine and still ends an endless loop long before go's own ten minutes.
const defaultTestTimeout = time.Minute

// timeoutMessages are the texts about tests that run too long.
var timeoutMessages = i18n.Catalog{
	"flag.timeout": {
		ZH: "每个聚焦测试最多运行多久（例如 30s、2m；0 表示不限）；超时的测试被停止，并说明可能的原因",
		EN: "how long each focused test may run (for example 30s, 2m; 0 for no limit); a test that runs longer is stopped, with its likely cause",
	},
	"timeout.bad":      {ZH: "%q 不是时长：写成 30s、2m、1h30m 这样（0 表示不限）", EN: "%q is not a duration: write it as 30s, 2m, 1h30m (0 for no limit)"},
	"timeout.negative": {ZH: "%q 是负数：时限不能是负的；0 表示不限", EN: "%q is negative: a time limit cannot be; 0 means no limit"},
	"test.timedout": {
		ZH: "Lab %s 的测试 %s 运行了 %s 仍未结束，已被停止（之后的测试没有运行）。\n" +
			"多半是死循环，或在等待一件永远不会发生的事：channel 没有人发送或接收、锁没有释放、WaitGroup 没有 Done、没有检查 ctx.Done()。\n" +
			"修好后再运行；确实需要更久时放宽时限，例如 --timeout 5m。",
		EN: "lab %s's test %s was still running after %s and was stopped (the tests after it did not run).\n" +
			"Most likely an endless loop, or a wait for something that never happens: a channel nobody sends on or receives from, a lock never released, a WaitGroup never Done, ctx.Done() never checked.\n" +
			"Fix it and run again; if it truly needs longer, raise the limit, for example --timeout 5m.",
	},
}

// addTimeoutFlag adds --timeout, the limit of each focused test, to a command that runs them.
func (a *app) addTimeoutFlag(c *cobra.Command) {
	a.testTimeout = defaultTestTimeout
	c.Flags().Var(&timeoutFlag{d: &a.testTimeout, p: a.p}, "timeout", a.p.text("flag.timeout"))
}

// timeoutFlag is --timeout: a duration of 0 or more. A negative one is refused when the flag is
// parsed (exit code 2): it is no limit time can reach, and 0 already means no limit.
type timeoutFlag struct {
	d *time.Duration
	p printer
}

func (f *timeoutFlag) String() string {
	if f.d == nil {
		return defaultTestTimeout.String()
	}
	return f.d.String()
}

func (f *timeoutFlag) Type() string { return "duration" }

func (f *timeoutFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New(f.p.text("timeout.bad", s))
	}
	if d < 0 {
		return errors.New(f.p.text("timeout.negative", s))
	}
	*f.d = d
	return nil
}

// printTimedOut says which lab's test ran too long, and why that usually happens, when report
// was stopped by the per-test limit.
func (a *app) printTimedOut(ch *manifest.Chapter, report *gotest.Report) {
	if report.TimedOut == "" {
		return
	}
	lab := "?"
	for _, l := range ch.Labs {
		if re, err := regexp.Compile(l.Pattern); err == nil && re.MatchString(report.TimedOut) {
			lab = l.ID
			break
		}
	}
	fmt.Fprintln(a.stdout, style{a.color}.bad(a.p.text("test.timedout", lab, report.TimedOut, a.testTimeout)))
}
