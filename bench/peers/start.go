//go:build ignore

// start times each tool's `version` command, interleaved, and prints one
// line a tool: NAME, median ms and 10th percentile ms. `version` does
// nearly nothing, so its time is what starting the program costs, the
// part of every command that no work inside it can save.
//
//	go run start.go -n 150 NAME=PATH...
//
// The build tag keeps this program out of `go build ./...`, `go vet ./...`
// and `go test ./...`.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 150, "runs of each tool")
	flag.Parse()
	type tool struct {
		name, path string
		ms         []float64
	}
	var tools []*tool
	for _, a := range flag.Args() {
		name, path, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "start: %q is not NAME=PATH\n", a)
			os.Exit(2)
		}
		tools = append(tools, &tool{name: name, path: path})
	}
	for i := 0; i < *n; i++ {
		for _, t := range tools {
			cmd := exec.Command(t.path, "version")
			began := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "start: %s version: %v\n%s", t.path, err, out)
				os.Exit(1)
			}
			t.ms = append(t.ms, float64(time.Since(began).Microseconds())/1000)
		}
	}
	for _, t := range tools {
		sort.Float64s(t.ms)
		fmt.Printf("%s\t%.1f\t%.1f\n", t.name, t.ms[len(t.ms)/2], t.ms[len(t.ms)/10])
	}
}
