package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/learn-tinypi/course/internal/atomicfile"
	"github.com/learn-tinypi/course/internal/devcheck"
	"github.com/learn-tinypi/course/internal/i18n"
	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/signature"
)

// kitModule is the module path of the kit's own repository, where `course dev signatures` writes.
const kitModule = "github.com/learn-tinypi/course"

// devSignaturesMessages are the texts of `course dev signatures`.
var devSignaturesMessages = i18n.Catalog{
	"devsig.short": {ZH: "重新生成已知错误（mutant）的失败签名", EN: "regenerate the failure signatures of the known mistakes (mutants)"},
	"devsig.long": {
		ZH: "对第 NN 章（不写则为所有有 mutant 的重建章节）的每个 mutant：把它写进本章 target，运行它所属 Lab\n" +
			"的聚焦测试 5 次，记下每次都以同样方式失败的测试名和第一条失败信息（规范化：文件行号、十六进制地址、\n" +
			"时长、goroutine 编号、十位以上的数字被替换掉），写入 checkpoints/signatures/NN.json。\n" +
			"各次失败方式不同的测试（mutant 引入的竞争）记为 unstable，不参与匹配。\n\n" +
			"学习者运行 course test 时，如果某个 Lab 的失败包含了某个 mutant 签名里的每一条，就会被告知\n" +
			"这看起来像哪个已知错误。course dev check 会重新计算签名：文件过期时检查失败，并证明每个 mutant\n" +
			"自己的失败会指出它自己的说明。\n\n" +
			"必须在课程仓库里运行（向上找 module 为 " + kitModule + " 的 go.mod），文件逐个原子写入。需要 go 命令。",
		EN: "For every mutant of chapter NN (without NN: every rebuild chapter that has mutants), writes the mistake into\n" +
			"the chapter's target, runs its lab's focused tests five times and records the tests that fail the same way\n" +
			"every time, with their first failure message (normalised: file line numbers, hex addresses, durations,\n" +
			"goroutine ids and numbers of ten or more digits are blanked), in checkpoints/signatures/NN.json. Tests that\n" +
			"fail differently from run to run (a race the mutant opens) are listed as unstable and never matched.\n\n" +
			"When a learner's failures of a lab contain every pair of a mutant's signature, course test names that\n" +
			"known mistake. course dev check recomputes the signatures: it fails when a file is stale, and proves that\n" +
			"every mutant's own failures point to its own explanation.\n\n" +
			"Run it inside the kit's repository (it looks upwards for the go.mod of " + kitModule + "); each file is\n" +
			"written atomically. Needs the go command.",
	},
	"devsig.example": {
		ZH: "  go run ./cmd/course dev signatures 07\n  go run ./cmd/course dev signatures",
		EN: "  go run ./cmd/course dev signatures 07\n  go run ./cmd/course dev signatures",
	},
	"devsig.flag.parallel": {ZH: "同时运行的 go 命令数（0 表示默认值）", EN: "go commands run at once (0 means the default)"},
	"devsig.norepo":        {ZH: "找不到课程仓库：从 %[1]s 向上没有 module 为 %[2]s 的 go.mod。请在课程仓库里运行：\n  cd path/to/course && go run ./cmd/course dev signatures", EN: "the kit's repository was not found: no go.mod of module %[2]s above %[1]s. Run it inside the repository:\n  cd path/to/course && go run ./cmd/course dev signatures"},
	"devsig.nosigs":        {ZH: "第 %s 章没有签名：它是观察章节，或者没有 mutant。", EN: "chapter %s has no signatures: it is an observe chapter or has no mutants."},
	"devsig.wrote":         {ZH: "已写入 %s", EN: "wrote %s"},
	"devsig.same":          {ZH: "%s 没有变化", EN: "%s is unchanged"},
	"devsig.uncaught":      {ZH: "第 %[1]s 章的 mutant %[2]s 没有被任何测试发现，它的签名是空的；运行 course dev check %[3]s 查看原因。", EN: "mutant %[2]s of chapter %[1]s is caught by no test, so its signature is empty; run course dev check %[3]s to see why."},
}

// devSignaturesCommand is `course dev signatures [NN...]`.
func (a *app) devSignaturesCommand() *cobra.Command {
	var parallel int
	c := &cobra.Command{
		Use:     "signatures [NN...]",
		Short:   a.p.text("devsig.short"),
		Long:    a.p.text("devsig.long"),
		Example: a.p.text("devsig.example"),
		RunE: func(c *cobra.Command, args []string) error {
			b, err := a.builder()
			if err != nil {
				return err
			}
			numbers, err := a.chapterArgs(args, func(ch *manifest.Chapter) error {
				if !devcheck.HasSignatures(ch) {
					return a.usagef("devsig.nosigs", ch.Number)
				}
				return nil
			})
			if err != nil {
				return err
			}
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			root, err := kitRoot(wd)
			if err != nil {
				return a.usagef("devsig.norepo", wd, kitModule)
			}
			if err := a.requireGo(b.Course()); err != nil {
				return err
			}
			files, err := devcheck.Signatures(c.Context(), b, devcheck.Options{Chapters: numbers, Parallel: parallel, Out: a.stdout, ASCII: !a.color})
			if err != nil {
				return err
			}
			for _, f := range files {
				for _, m := range f.Mutants {
					if len(m.Failures) == 0 {
						fmt.Fprintln(a.stderr, a.p.text("devsig.uncaught", f.Chapter, m.Name, f.Chapter))
					}
				}
				data, err := f.Marshal()
				if err != nil {
					return err
				}
				rel := signature.Path(f.Chapter)
				name := filepath.Join(root, filepath.FromSlash(rel))
				if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, data) {
					fmt.Fprintln(a.stdout, a.p.text("devsig.same", rel))
					continue
				}
				if err := atomicfile.Write(name, data, 0o644); err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, a.p.text("devsig.wrote", rel))
			}
			return nil
		},
	}
	c.Flags().IntVar(&parallel, "parallel", 0, a.p.text("devsig.flag.parallel"))
	return c
}

// kitRoot walks up from dir to the directory whose go.mod declares the kit's module.
func kitRoot(dir string) (string, error) {
	for {
		if mod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePath(mod) == kitModule {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the kit's repository")
		}
		dir = parent
	}
}

// modulePath returns the path of the module line of a go.mod file, "" when it has none.
func modulePath(mod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(mod))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module"); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
