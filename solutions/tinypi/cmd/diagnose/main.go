// Command diagnose runs the agent loop of chapter 07 against stub models and prints every run
// round by round: what the model said, which tool calls ran and which did not, the transcript's
// role sequence, the tool calls left without a result, how many times the tools really ran, how
// the run ended and the final answer.
//
// It uses nothing but the public API of package tinypi, so it diagnoses whatever RunAgentLoop
// the module holds. In your practice directory that is YOUR loop:
//
//	go run ./cmd/diagnose weather-fx-skip weather-fx-reask
//	go run ./cmd/diagnose all
//
// Read scenarios.go first: it holds the questions, the in-memory tools and the stub models,
// which react to what they are sent (a missing tool result changes their next answer), so every
// run prints the same text every time. run.go drives one scenario through RunAgentLoop and
// records it, report.go prints a run, and labels.go holds the report's words in Chinese and
// English.
//
// `course diagnose 07 NAME` runs this same program twice, on the reference with a known mistake
// applied and on the reference itself, and compares the two. It passes -json: each run is then
// printed as one JSON object (see runJSON in report.go) instead of text.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the scenarios named in args and returns the exit code: 2 for bad arguments. The
// flags come before the scenario names: -lang chooses the language of the report, zh (the
// default) or en; -json prints one JSON object a run, for programs; -list prints the scenario
// names, one a line.
func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("diagnose", flag.ContinueOnError)
	flags.SetOutput(io.Discard) // errors and usage are printed below, in the chosen language
	lang := flags.String("lang", "zh", "zh or en")
	asJSON := flags.Bool("json", false, "one JSON object a run")
	list := flags.Bool("list", false, "list the scenario names")
	err := flags.Parse(args)
	l, ok := labelsFor(*lang)
	if errors.Is(err, flag.ErrHelp) {
		usage(stdout, l)
		return 0
	}
	if err == nil && !ok {
		err = fmt.Errorf("unsupported -lang %q: use zh or en", *lang)
	}
	if err == nil && *list {
		for _, sc := range scenarios(l) {
			fmt.Fprintln(stdout, sc.name)
		}
		return 0
	}
	var picked []scenario
	if err == nil {
		picked, err = pick(l, flags.Args())
	}
	if err != nil {
		fmt.Fprintf(stderr, "diagnose: %v\n\n", err)
		usage(stderr, l)
		return 2
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	for i, sc := range picked {
		r := report(l, sc, runScenario(sc))
		if *asJSON {
			err = enc.Encode(r)
		} else {
			err = r.writeText(stdout, i > 0)
		}
		if err != nil {
			fmt.Fprintf(stderr, "diagnose: %v\n", err)
			return 1
		}
	}
	return 0
}

// pick returns the scenarios args name, in the order given; "all" stands for every scenario.
func pick(l labels, args []string) ([]scenario, error) {
	if len(args) == 0 {
		return nil, errors.New("name at least one scenario")
	}
	var picked []scenario
	for _, name := range args {
		if name == "all" {
			picked = append(picked, scenarios(l)...)
			continue
		}
		sc, ok := lookup(l, name)
		if !ok {
			return nil, fmt.Errorf("unknown scenario %q", name)
		}
		picked = append(picked, sc)
	}
	return picked, nil
}

func lookup(l labels, name string) (scenario, bool) {
	for _, sc := range scenarios(l) {
		if sc.name == name {
			return sc, true
		}
	}
	return scenario{}, false
}

func usage(w io.Writer, l labels) {
	fmt.Fprintln(w, l.usage)
	for _, sc := range scenarios(l) {
		fmt.Fprintf(w, "  %-18s %s\n", sc.name, sc.title)
	}
	fmt.Fprintf(w, "  %-18s %s\n", "all", l.usageAll)
}
