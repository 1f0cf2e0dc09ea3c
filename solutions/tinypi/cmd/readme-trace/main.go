// Command readme-trace runs chapter 07's README round trip over the scripted model and prints
// the whole run: who called whom, each model request, every loop event and the transcript.
//
//	go run ./cmd/readme-trace
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/learn-tinypi/course/solutions/tinypi"
)

func main() {
	tr, err := tinypi.TraceREADMERoundTrip(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "readme-trace:", err)
		os.Exit(1)
	}
	if _, err := tr.WriteTo(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "readme-trace:", err)
		os.Exit(1)
	}
}
