package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/learn-tinypi/course/internal/gotest"
	"github.com/learn-tinypi/course/internal/manifest"
)

func TestPrintTestReport(t *testing.T) {
	labs := []*manifest.Lab{
		{ID: "7.1", Title: "完成纯文本 stop", Pattern: "^TestLab7_1_", Tests: 1},
		{ID: "7.2", Title: "闭合单工具往返", Pattern: "^TestLab7_2_", Tests: 2},
	}
	tests := []struct {
		name   string
		report gotest.Report
		wantOK bool
		want   string
	}{
		{
			name: "one lab green, one red and one test missing",
			report: gotest.Report{ExitCode: 1, Tests: []gotest.TestResult{
				{Name: "TestLab7_1_A", Passed: true},
				{Name: "TestLab7_1_A/sub", Failed: true, FirstFailure: "subtests do not count"},
				{Name: "TestLab7_2_B", Failed: true, FirstFailure: "Lab 7.2 尚未实现"},
				{Name: "TestOther", Failed: true},
			}},
			want: "" +
				"Lab  标题             通过  第一条失败\n" +
				"7.1  完成纯文本 stop  1/1\n" +
				"7.2  闭合单工具往返   0/2   TestLab7_2_B: Lab 7.2 尚未实现\n" +
				"通过 1，失败 2\n" +
				"下一步：读 labs/7.2.md，然后运行 go test -run '^TestLab7_2_' .\n",
		},
		{
			name: "build failure",
			report: gotest.Report{ExitCode: 1, BuildFailed: true,
				BuildOutput: "./agentloop.go:1:1: syntax error\n"},
			want: "" +
				"构建失败，没有运行任何测试：\n" +
				"./agentloop.go:1:1: syntax error\n" +
				"Lab  标题             通过  第一条失败\n" +
				"7.1  完成纯文本 stop  0/1   构建失败\n" +
				"7.2  闭合单工具往返   0/2   构建失败\n" +
				"没有运行任何测试：代码没有通过编译（见上面的错误）。修好它，再运行 course test。\n",
		},
		{
			name: "environmental build failure points to course doctor",
			report: gotest.Report{ExitCode: 1, BuildFailed: true,
				BuildOutput: "go: github.com/google/go-cmp@v0.7.0: module lookup disabled by GOPROXY=off\n"},
			want: "" +
				"构建失败，没有运行任何测试：\n" +
				"go: github.com/google/go-cmp@v0.7.0: module lookup disabled by GOPROXY=off\n" +
				"Lab  标题             通过  第一条失败\n" +
				"7.1  完成纯文本 stop  0/1   构建失败\n" +
				"7.2  闭合单工具往返   0/2   构建失败\n" +
				"没有运行任何测试：代码没有通过编译（见上面的错误）。修好它，再运行 course test。\n" +
				"这看起来是 Go 环境的问题（模块下载、vendor、GOFLAGS、工具链），不是你的代码：运行 course doctor，它会逐项检查并给出修复命令。\n",
		},
		{
			name: "long build output is cut",
			report: gotest.Report{ExitCode: 1, BuildFailed: true,
				BuildOutput: strings.Repeat("./agentloop.go:1:1: syntax error\n", 20)},
			want: "" +
				"构建失败，没有运行任何测试：\n" +
				strings.Repeat("./agentloop.go:1:1: syntax error\n", 15) +
				"……（还有 5 行：运行 go build ./... 查看全部）\n" +
				"Lab  标题             通过  第一条失败\n" +
				"7.1  完成纯文本 stop  0/1   构建失败\n" +
				"7.2  闭合单工具往返   0/2   构建失败\n" +
				"没有运行任何测试：代码没有通过编译（见上面的错误）。修好它，再运行 course test。\n",
		},
		{
			name: "the test binary exited in a test",
			report: gotest.Report{ExitCode: 1,
				Tests: []gotest.TestResult{{Name: "TestLab7_1_A", Failed: true, Unfinished: true}},
				Exits: []gotest.Exit{{Test: "TestLab7_1_A", LastOutput: []string{"2026/03/01 12:00:00 cannot open config"}}}},
			want: "" +
				"Lab  标题             通过  第一条失败\n" +
				"7.1  完成纯文本 stop  0/1   TestLab7_1_A: 测试进程在本测试报告结果之前退出（见下）\n" +
				"7.2  闭合单工具往返   0/2   没有运行：测试进程在 TestLab7_1_A 中退出了\n" +
				"测试进程在 TestLab7_1_A 运行时退出了，测试没来得及报告结果（os.Exit、log.Fatal、另一个 goroutine 里的 panic？）。它最后的输出：\n" +
				"    2026/03/01 12:00:00 cannot open config\n" +
				"通过 0，失败 3\n" +
				"下一步：读 labs/7.1.md，然后运行 go test -run '^TestLab7_1_' .\n",
		},
		{
			name: "a diff's header with the lines that differ",
			report: gotest.Report{ExitCode: 1, Tests: []gotest.TestResult{
				{Name: "TestLab7_1_A", Passed: true},
				{Name: "TestLab7_2_B", Failed: true, FirstFailure: "events (-want +got):", Difference: []string{`- "tool_end",`, `+ "turn_end",`}},
			}},
			want: "" +
				"Lab  标题             通过  第一条失败\n" +
				"7.1  完成纯文本 stop  1/1\n" +
				"7.2  闭合单工具往返   0/2   TestLab7_2_B: events (-want +got): - \"tool_end\", + \"turn_end\",\n" +
				"通过 1，失败 2\n" +
				"下一步：读 labs/7.2.md，然后运行 go test -run '^TestLab7_2_' .\n",
		},
		{
			name: "all green",
			report: gotest.Report{Tests: []gotest.TestResult{
				{Name: "TestLab7_1_A", Passed: true},
				{Name: "TestLab7_2_B", Passed: true},
				{Name: "TestLab7_2_C", Passed: true},
			}},
			wantOK: true,
			want: "" +
				"Lab  标题             通过  第一条失败\n" +
				"7.1  完成纯文本 stop  1/1\n" +
				"7.2  闭合单工具往返   2/2\n" +
				"通过 3，失败 0\n" +
				"全部通过。用 git diff 回顾你的改动。\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			a := &app{p: printer{lang: langZH}, stdout: &out}
			ok := a.printTestReport(labs, &tt.report, nil)
			if ok != tt.wantOK {
				t.Errorf("printTestReport() = %v, want %v", ok, tt.wantOK)
			}
			got := out.String()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}
