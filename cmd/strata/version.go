package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/stacks"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = ""

func strataVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// buildCommit is the commit this strata was built from, when Go recorded
// it and the tree had no changes on top of it; "" otherwise.
func buildCommit() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	commit, modified := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified {
		return ""
	}
	return commit
}

// versionLine is what `strata version` and `strata --version` print.
func versionLine() string {
	return fmt.Sprintf("strata %s (%s, %s/%s)", strataVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func init() {
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintln(c.App.Writer, versionLine()) }
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print strata's version, and in a unit's dir the engine's (-json: one JSON document)",
		Action: func(c *cli.Context) error {
			s := unitSession(c)
			asJSON := slices.Contains(engineArgsOf(c), "-json")
			if s == nil && asJSON {
				// No unit here, so no engine: strata's own version, as
				// one JSON document all the same.
				return printJSON(c, map[string]any{
					"strata_version": strataVersion(), "go_version": runtime.Version(), "platform": runtime.GOOS + "_" + runtime.GOARCH,
				})
			}
			if s == nil {
				fmt.Fprintln(c.App.Writer, versionLine())
				return nil
			}
			if !asJSON {
				fmt.Fprintln(c.App.Writer, versionLine())
				return passthroughIn(c, s, "version", c.App.Writer)
			}
			// The engine's JSON with strata's version in it: one document.
			var out bytes.Buffer
			if err := passthroughIn(c, s, "version", &out); err != nil {
				return err
			}
			doc := map[string]any{}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				return cli.Exit(fmt.Sprintf("the engine's version -json: %v", err), 1)
			}
			doc["strata_version"] = strataVersion()
			return printJSON(c, doc)
		},
	}
}

// printJSON prints one JSON document, indented as the engine's is.
func printJSON(c *cli.Context, doc map[string]any) error {
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// unitSession is the project when strata runs in a unit's dir, for
// version to ask the unit's engine; nil anywhere else, or when the
// project does not load (version still prints strata's).
func unitSession(c *cli.Context) *session {
	loc, err := locateProject(c)
	if err != nil || !stacks.HoldsTerraform(loc.start) {
		// A dir with no module file is no unit's: nothing of the
		// repository is read to say so.
		return nil
	}
	s, err := loc.load(c, nil)
	if err != nil || len(s.project.UnitsIn(s.cwd)) == 0 {
		return nil
	}
	return s
}
