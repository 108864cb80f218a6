package controls

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/strata-iac/strata/report"
)

// Comment is one comment on a pull request.
type Comment struct {
	Author, Body string
	// Edited says the comment was changed after it was posted: who
	// changed it may not be its author, so it approves nothing
	// (docs/controls.md#gates).
	Edited bool
}

// GateSource is what the gates of a unit ask of the forge
// (docs/controls.md#gates): who someone is, the pull request's approvals,
// and its comments.
type GateSource interface {
	Forge
	PullRequest(ctx context.Context) (*PullRequest, error)
	// Comments are the comments of the pull request, oldest first.
	Comments(ctx context.Context) ([]Comment, error)
}

// Gates says why the gates a unit's plan raised still hold its apply, ""
// when each is approved. A gate with a token is approved by comments
// `strata gate approve TOKEN` (or `terrateam …`), one without by
// approvals of the pull request's head; either way from the people the
// gate names. Anything the forge cannot answer holds the apply, with its
// error.
func Gates(ctx context.Context, src GateSource, gates []report.Gate) string {
	return NewGateChecker(src).Check(ctx, gates)
}

// GateChecker checks the gates of a command's units, as Gates does,
// asking the forge each question once for the whole command: the pull
// request, its comments, who is in which team.
type GateChecker struct {
	src GateSource
	mu  sync.Mutex
	d   *decider
	// The forge's answers, read once each.
	prRead, commentsRead bool
	pullRequest          *PullRequest
	comments             []Comment
	prErr, commentsErr   error
}

// NewGateChecker checks gates against src.
func NewGateChecker(src GateSource) *GateChecker {
	return &GateChecker{src: src, d: &decider{f: src, teams: map[[2]string]bool{}, roles: map[string]string{}}}
}

// Check says why gates still hold a unit's apply, "" when each is
// approved (Gates).
func (g *GateChecker) Check(ctx context.Context, gates []report.Gate) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.d.ctx = ctx
	if !g.prRead {
		g.pullRequest, g.prErr = g.src.PullRequest(ctx)
		g.prRead = true
	}
	pr := g.pullRequest
	if g.prErr != nil {
		return fmt.Sprintf("the gates could not be checked: reading the pull request: %v", g.prErr)
	}
	if pr == nil {
		return report.GatedReason(gates) + "; there is no pull request to approve it on"
	}
	var held []string
	for _, gate := range gates {
		approvers := pr.Approvers
		if gate.Token != "" {
			if !g.commentsRead {
				g.comments, g.commentsErr = g.src.Comments(ctx)
				g.commentsRead = true
			}
			if g.commentsErr != nil {
				return fmt.Sprintf("the gates could not be checked: reading the comments of %s: %v", pr.Name, g.commentsErr)
			}
			approvers = gateApprovers(g.comments, gate.Token)
		}
		missing, err := g.d.gateMissing(gate, approvers)
		if err != nil {
			return fmt.Sprintf("the gates could not be checked: %v", err)
		}
		if missing != "" {
			held = append(held, fmt.Sprintf("%s (%s failed) needs %s: %s", gate.Title(), gate.Step, gate.Needs(), missing))
		}
	}
	return strings.Join(held, "; ")
}

// gateApprovers are the authors of the comments that approve token, each
// once, in order.
func gateApprovers(comments []Comment, token string) []string {
	var out []string
	for _, c := range comments {
		if c.Edited {
			continue
		}
		cc, err := ParseComment(c.Body)
		if err != nil || cc.Action != ActionGate || !slices.Contains(cc.Tokens, token) {
			continue
		}
		if !slices.ContainsFunc(out, func(a string) bool { return strings.EqualFold(a, c.Author) }) {
			out = append(out, c.Author)
		}
	}
	return out
}

// gateMissing says what the approvers lack of what the gate needs, or "".
func (d *decider) gateMissing(g report.Gate, approvers []string) (string, error) {
	var missing []string
	for _, m := range parseMatcherStrings(g.AllOf) {
		ok, err := d.anyMatches(approvers, m)
		if err != nil {
			return "", err
		}
		if !ok {
			missing = append(missing, "no approval from "+m.String())
		}
	}
	if len(g.AnyOf) > 0 || len(g.AllOf) == 0 {
		list := parseMatcherStrings(g.AnyOf)
		if len(list) == 0 {
			list = everyone
		}
		n := 0
		for _, a := range approvers {
			ok, err := d.matchesAny(a, list)
			if err != nil {
				return "", err
			}
			if ok {
				n++
			}
		}
		if want := max(g.AnyOfCount, 1); n < want {
			missing = append(missing, fmt.Sprintf("%d of %d", n, want))
		}
	}
	return strings.Join(missing, ", "), nil
}

// anyMatches says one of the users matches m.
func (d *decider) anyMatches(users []string, m Matcher) (bool, error) {
	var errs []error
	for _, u := range users {
		ok, err := d.matches(u, m)
		if ok {
			return true, nil
		}
		errs = append(errs, err)
	}
	return false, errors.Join(errs...)
}
