package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/strata-iac/strata/internal/release"
)

func main() {
	version := flag.String("version", "", "the version the binaries report: a tag (v1.2.3) or git describe's output")
	date := flag.String("date", "", "the archive entries' modification time, in seconds since 1970: the commit's (git log -1 --format=%ct)")
	dist := flag.String("dist", "dist", "the directory the archives and checksums.txt are written to")
	platforms := flag.String("platforms", "", "os/arch pairs, comma-separated (default: every platform of a release)")
	flag.Parse()
	if err := run(*version, *date, *dist, *platforms); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(version, date, dist, platforms string) error {
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: every input is a flag", flag.Args())
	}
	secs, err := strconv.ParseInt(strings.TrimSpace(date), 10, 64)
	if err != nil {
		return fmt.Errorf("-date %q: want the commit's time in seconds since 1970 (git log -1 --format=%%ct)", date)
	}
	ps, err := release.ParsePlatforms(platforms)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	_, err = release.Build(ctx, release.Options{
		Root:      ".",
		Dist:      dist,
		Version:   version,
		Time:      time.Unix(secs, 0),
		Platforms: ps,
		Log:       os.Stdout,
	})
	return err
}
