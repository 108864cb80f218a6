package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"
	"github.com/urfave/cli/v2"

	"github.com/strata-iac/strata/ci"
	"github.com/strata-iac/strata/controls"
	"github.com/strata-iac/strata/forge"
	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/internal/textbudget"
	"github.com/strata-iac/strata/report"
)

// ciCommandCommand is `strata ci command`: the command a pull request
// comment asks for (docs/controls.md#comment-commands), read from the
// CI's event, answered in strata's one comment, and handed to the jobs
// that run it.
func ciCommandCommand() *cli.Command {
	return &cli.Command{
		Name:  "command",
		Usage: "read the command a pull request comment asks for (strata|terrateam plan, apply, apply-autoapprove, apply-force, unlock, help), answer it on the pull request, and say what to run",
		Description: "It reads the comment of a GitHub Actions issue_comment event. unlock and\n" +
			"help are answered here; plan and apply print the command for ci start (with\n" +
			"--github-output, the step outputs command, args, ref and pr).",
		Flags: []cli.Flag{
			stateFlag(), stateTimeoutFlag(),
			&cli.BoolFlag{Name: "github-output", Usage: "set the step outputs command, args, ref and pr"},
		},
		Action: ciCommandAction,
	}
}

// commentForge is the forge a comment command runs on: GitHub Actions
// (forge.Actions), where a comment starts a workflow.
type commentForge interface {
	ciForge
	Answer(ctx context.Context, marker, answer string) (where string, posted bool, err error)
}

// openCommentForge opens the forge of the job a comment started.
func openCommentForge(configPaths []string) (commentForge, error) {
	f, err := openCIForge(os.Environ(), configPaths)
	if err != nil {
		return nil, err
	}
	cf, ok := f.(commentForge)
	if !ok {
		return nil, errors.New("comment commands run in GitHub Actions, where a pull request comment starts a workflow")
	}
	return cf, nil
}

// commentRun is what the jobs run for a comment command: "" when they
// run nothing.
type commentRun struct {
	Command, Args, Ref string
	PR                 int
}

func ciCommandAction(c *cli.Context) error {
	ctx := c.Context
	body, found, err := forge.CommentOf(os.Environ())
	switch {
	case errors.Is(err, forge.ErrCommentNotNew):
		fmt.Fprintf(c.App.ErrWriter, "strata: %v: nothing to run\n", err)
	case err != nil:
		return cli.Exit(err.Error(), 1)
	}
	var run commentRun
	if found {
		if run, err = commentCommand(ctx, c, body); err != nil {
			return cli.Exit(err.Error(), 1)
		}
	} else if err == nil {
		fmt.Fprintln(c.App.ErrWriter, "strata: this job runs for no pull request comment: nothing to run")
	}
	if run.Command != "" {
		fmt.Fprintf(c.App.Writer, "%s %s\n", run.Command, run.Args)
	}
	if c.Bool("github-output") {
		if ciplatform.From(os.Getenv).GitHub.Output == "" {
			return cli.Exit("--github-output: GITHUB_OUTPUT is not set (not in GitHub Actions)", 1)
		}
		a := githubactions.New()
		a.SetOutput("command", run.Command)
		a.SetOutput("args", run.Args)
		a.SetOutput("ref", run.Ref)
		a.SetOutput("pr", strconv.Itoa(run.PR))
	}
	return nil
}

// commentCommand answers one comment: a comment that is no command is
// left alone; help, unlock, a command that does not parse and a pull
// request that is closed are answered on the pull request; plan and apply
// are handed on, at the pull request's head commit.
func commentCommand(ctx context.Context, c *cli.Context, body string) (commentRun, error) {
	cc, perr := controls.ParseComment(body)
	if errors.Is(perr, controls.ErrNotACommand) {
		fmt.Fprintln(c.App.ErrWriter, "strata: the comment is no strata command")
		return commentRun{}, nil
	}
	f, err := openCommentForge(nil)
	if err != nil {
		return commentRun{}, err
	}
	asked := commentLine(body)
	if perr != nil {
		return commentRun{}, answer(ctx, c, f, asked, "**Not run:** "+verbatim(perr.Error())+"\n\n"+controls.CommentHelp)
	}
	switch cc.Action {
	case controls.ActionHelp:
		return commentRun{}, answer(ctx, c, f, asked, controls.CommentHelp)
	case controls.ActionUnlock:
		return commentRun{}, answer(ctx, c, f, asked, unlockByComment(ctx, c, f, cc))
	case controls.ActionGate:
		tokens := make([]string, len(cc.Tokens))
		for i, tok := range cc.Tokens {
			tokens[i] = verbatim(tok)
		}
		return commentRun{}, answer(ctx, c, f, asked, fmt.Sprintf("approves %s for the next apply, when the gate lets @%s approve it.",
			strings.Join(tokens, ", "), f.Actor()))
	}
	pr, err := f.PullRequest(ctx)
	if err != nil || pr == nil {
		return commentRun{}, errors.Join(fmt.Errorf("reading the pull request: %w", err), answer(ctx, c, f, asked, "**Not run:** the pull request could not be read: "+report.TableCell(fmt.Sprint(err))))
	}
	if pr.Merged || pr.Closed {
		return commentRun{}, answer(ctx, c, f, asked, fmt.Sprintf("**Not run:** %s is %s.", pr.Name, map[bool]string{true: "merged", false: "closed"}[pr.Merged]))
	}
	run := commentRun{Command: cc.Command(), Args: "--changed", Ref: pr.Head, PR: pr.Number}
	if plainBranch(pr.Base) {
		run.Args += " --base origin/" + pr.Base
	}
	return run, answer(ctx, c, f, asked, fmt.Sprintf("Running at %s (%s)…", shortSHA(pr.Head), linkOfRun()))
}

// unlockByComment releases the pull request's locks when
// access_control.unlock lets the comment's author, and says what it did.
func unlockByComment(ctx context.Context, c *cli.Context, f commentForge, cc *controls.CommentCommand) string {
	s, err := openProject(c)
	if err != nil {
		return "**Not run:** the config does not load: " + report.TableCell(err.Error())
	}
	// The controls are read with the paths the project's config may sit at.
	src, err := openCIForge(os.Environ(), configPaths(c, s))
	if err != nil {
		return "**Not run:** " + report.TableCell(err.Error())
	}
	if why := controls.Unlock(ctx, src, s.project.Config); why != "" {
		return "**Refused:** " + why
	}
	pr, err := f.PullRequest(ctx)
	if err != nil || pr == nil {
		return "**Not run:** the pull request could not be read: " + report.TableCell(fmt.Sprint(err))
	}
	st, err := openState(c)
	if err != nil {
		return "**Not run:** " + report.TableCell(err.Error())
	}
	defer st.Close()
	freed, err := ci.Unlock(ctx, st, pr.Number, cc.Units...)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s unlocked", pr.Name, report.CountOf(len(freed), "dirspace"))
	for _, l := range freed {
		fmt.Fprintf(&b, "\n- %s", verbatim(l.Unit))
	}
	if err != nil {
		fmt.Fprintf(&b, "\n\n**Not all unlocked:** %s", verbatim(err.Error()))
	}
	return b.String()
}

// answer puts the answer to the comment asked in strata's one comment,
// naming the command and its author.
func answer(ctx context.Context, c *cli.Context, f commentForge, asked, text string) error {
	msg := fmt.Sprintf("%s (@%s): %s", verbatim(asked), f.Actor(), text)
	where, posted, err := f.Answer(ctx, report.CommentMarker, msg)
	switch {
	case err != nil:
		return fmt.Errorf("answering the comment: %w", err)
	case posted:
		fmt.Fprintf(c.App.ErrWriter, "strata: answered: %s\n", where)
	}
	return nil
}

// commentLine is the comment's command line as written, within a length
// a reader takes in, cut on a character boundary.
func commentLine(body string) string {
	line := controls.CommandLine(body)
	if len(line) > 200 {
		line = line[:textbudget.CutPoint(line, 200)] + "…"
	}
	return line
}

// verbatim is what a commenter wrote (a command line, a gate's token, a
// unit's name, an error that quotes them) as strata repeats it: in code,
// escaped as the comment's unit names are (report.TableCell), so that it
// renders as no link, tag, mention or table cell
// (docs/controls.md#what-strata-trusts-of-the-forge).
func verbatim(s string) string { return "<code>" + report.TableCell(s) + "</code>" }

// plainBranch reports whether a base branch is one --base takes as it is:
// anything else (a name git allows with other characters, over 255 of
// them, or with "..") leaves --changed its default.
func plainBranch(s string) bool {
	return len(s) <= 255 && branchName.MatchString(s) && !strings.Contains(s, "..")
}

// branchName is plainBranch's characters; its length is checked apart (a
// counted repeat compiles into as many copies at every start).
var branchName = regexp.MustCompile(`^[A-Za-z0-9._/-]+$`)

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// linkOfRun is the CI run's URL, or "this CI run".
func linkOfRun() string {
	if r := report.CIFromEnv(os.Environ()); r != nil && r.RunURL != "" {
		return r.RunURL
	}
	return "this CI run"
}

// startComment is the comment command a `ci start` runs for.
type startComment struct {
	*controls.CommentCommand
	f commentForge
}

// query is the comment's tag query, which joins --query; "" for a start
// that runs for no comment.
func (sc *startComment) query() string {
	if sc == nil {
		return ""
	}
	return sc.Query
}

// startedByComment is the comment command ci start runs for, nil when it
// runs for none, or for a comment that is no command
// (docs/controls.md#comment-commands). A comment that asks for another
// command than ci start was given, or for none, is an error: the workflow
// that started it is wrong.
func startedByComment(c *cli.Context, command string) (*startComment, error) {
	body, found, err := forge.CommentOf(os.Environ())
	if err != nil || !found {
		return nil, err
	}
	cc, err := controls.ParseComment(body)
	switch {
	case errors.Is(err, controls.ErrNotACommand):
		// A workflow of the repository's own, started by a comment of
		// its own words: the command is the one ci start was given, for
		// the comment's author.
		return nil, nil
	case err != nil:
		return nil, err
	case cc.Command() != command:
		return nil, fmt.Errorf("ci start %s runs for the comment %q, which asks for %s", command, commentLine(body), cmp.Or(cc.Command(), "no command"))
	}
	f, err := openCommentForge(nil)
	if err != nil {
		return nil, err
	}
	return &startComment{CommentCommand: cc, f: f}, nil
}

// atHead is the commit the run works on, the checkout's: the event's
// commit is the default branch's on a comment. An apply runs only at the
// pull request's head, as the plans it applies were reviewed there; a
// head that moved since the command is refused, and the refusal answered
// on the pull request.
func (sc *startComment) atHead(c *cli.Context, s *session) (string, error) {
	ctx := c.Context
	head, err := git.Head(ctx, s.project.Root)
	if err != nil {
		return "", fmt.Errorf("the commit checked out: %w", err)
	}
	if sc.Command() != "apply" {
		return head, nil
	}
	pr, err := sc.f.PullRequest(ctx)
	if err != nil || pr == nil {
		return "", fmt.Errorf("reading the pull request: %w", err)
	}
	if pr.Head == head {
		return head, nil
	}
	why := fmt.Sprintf("the head of %s moved to %s since the command; this run checked out %s, and applies only plans reviewed at the head: plan again", pr.Name, shortSHA(pr.Head), shortSHA(head))
	return "", errors.Join(errors.New(why), answer(ctx, c, sc.f, sc.Action+" "+sc.Query, "**Not run:** "+report.TableCell(why)+"."))
}
