package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/strata-iac/strata/internal/tracing"
)

// The command's span is the root of strata's spans (docs/behaviour.md#traces):
// named after the command that runs, it ends with the exit code.

// commandSpanName names the command's span before the command line is
// parsed: strata and its first word that is not a flag.
func commandSpanName(args []string) string {
	if i := commandIndex(args); i > 0 {
		return "strata " + args[i]
	}
	return "strata"
}

// nameCommandSpans names the command's span after the command that runs,
// subcommands included (`strata ci run`), once it is known.
func nameCommandSpans(cmds []*cli.Command) {
	for _, cmd := range cmds {
		if action := cmd.Action; action != nil {
			cmd.Action = func(c *cli.Context) error {
				name := commandPath(c)
				span := trace.SpanFromContext(c.Context)
				span.SetName("strata " + name)
				span.SetAttributes(attribute.String("strata.command", name))
				return action(c)
			}
		}
		nameCommandSpans(cmd.Subcommands)
	}
}

// commandPath is the running command's words: an engine command passed
// through by its own name.
func commandPath(c *cli.Context) string {
	if c.Command != nil && c.Command.Name == passthroughCommand {
		if name, _ := c.App.Metadata[passthroughKey].(string); name != "" {
			return name
		}
	}
	var names []string
	for _, l := range c.Lineage() {
		if l.Command != nil && l.Command.Name != "" && l.Command.Name != c.App.Name {
			names = append([]string{l.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}

// endCommandSpan ends the command's span with its exit code: status Error
// for a code other than 0 and 2 (changes, with -detailed-exitcode and in
// drift).
func endCommandSpan(span trace.Span, code int) {
	span.SetAttributes(attribute.Int("process.exit.code", code))
	failure := ""
	if code != 0 && code != 2 {
		failure = fmt.Sprintf("exit status %d", code)
	}
	tracing.End(span, failure)
}
