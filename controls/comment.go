package controls

import (
	"errors"
	"fmt"
	"strings"

	"github.com/strata-iac/strata/stacks/tagquery"
)

// A comment command is the first line of a pull request comment that
// starts with `strata` or `terrateam`, then an action and its arguments
// (docs/controls.md#comment-commands).

// The actions of a comment command.
const (
	ActionPlan             = "plan"
	ActionApply            = "apply"
	ActionApplyAutoapprove = "apply-autoapprove"
	ActionApplyForce       = "apply-force"
	ActionUnlock           = "unlock"
	ActionGate             = "gate"
	ActionHelp             = "help"
)

var actions = []string{ActionPlan, ActionApply, ActionApplyAutoapprove, ActionApplyForce, ActionUnlock, ActionGate, ActionHelp}

// MaxCommentLine is the most of a comment command's line read: a longer
// one is refused, not cut.
const MaxCommentLine = 4096

// ErrNotACommand is a comment that is no command: its first word is
// neither `strata` nor `terrateam`. Such a comment is ignored.
var ErrNotACommand = errors.New("not a comment command")

// CommentCommand is a command written in a pull request comment.
type CommentCommand struct {
	Action string
	// Query is the tag query that narrows plan and apply to the units it
	// matches, as written ("" for all the pull request's).
	Query string
	// Units are the dirspaces unlock names (none: all of the pull
	// request's).
	Units []string
	// Tokens are the gates `gate approve` approves
	// (docs/controls.md#gates).
	Tokens []string
}

// ParseComment reads the command in a comment's first line. A comment
// whose first word is not `strata` or `terrateam` is ErrNotACommand; one
// that is, with an unknown action or a tag query that does not parse, is
// an error that says what was expected.
func ParseComment(body string) (*CommentCommand, error) {
	line := CommandLine(body)
	word, rest, _ := strings.Cut(line, " ")
	if word != "strata" && word != "terrateam" {
		return nil, ErrNotACommand
	}
	if len(line) > MaxCommentLine {
		return nil, fmt.Errorf("the command is %d bytes long; expected at most %d", len(line), MaxCommentLine)
	}
	action, args, _ := strings.Cut(strings.TrimSpace(rest), " ")
	args = strings.TrimSpace(args)
	// Terrateam writes apply-autoapprove; apply_autoapprove is the key
	// of the control that governs it.
	action = strings.ReplaceAll(action, "_", "-")
	cc := &CommentCommand{Action: action}
	switch action {
	case ActionPlan, ActionApply, ActionApplyAutoapprove, ActionApplyForce:
		if _, err := tagquery.Parse(args); err != nil {
			return nil, fmt.Errorf("%s %s: the tag query %q: %w", word, action, args, err)
		}
		cc.Query = args
	case ActionUnlock:
		cc.Units = strings.Fields(args)
	case ActionGate:
		sub, tokens, _ := strings.Cut(args, " ")
		cc.Tokens = strings.Fields(tokens)
		if sub != "approve" || len(cc.Tokens) == 0 {
			return nil, fmt.Errorf("%s gate: expected gate approve TOKEN", word)
		}
	case ActionHelp:
	case "":
		return nil, fmt.Errorf("%s: no action; expected one of: %s", word, strings.Join(actions, ", "))
	default:
		return nil, fmt.Errorf("%s %s: unknown action; expected one of: %s", word, action, strings.Join(actions, ", "))
	}
	return cc, nil
}

// CommandLine is the line of a comment a command is read from: its first
// line with text, trimmed.
func CommandLine(body string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(body), "\n")
	return strings.TrimSpace(line)
}

// Op is the operation the controls decide for the command.
func (cc *CommentCommand) Op() Op {
	switch cc.Action {
	case ActionApply:
		return Apply
	case ActionApplyAutoapprove:
		return ApplyAutoapprove
	case ActionApplyForce:
		return ApplyForce
	}
	return Plan
}

// Command is the strata command the comment runs: plan or apply; "" for
// unlock and help, which run none.
func (cc *CommentCommand) Command() string {
	switch cc.Action {
	case ActionPlan:
		return "plan"
	case ActionApply, ActionApplyAutoapprove, ActionApplyForce:
		return "apply"
	}
	return ""
}

// ReviewedOnly says the command applies the pull request's reviewed plans
// and nothing else: apply and apply-force. apply-autoapprove plans and
// applies in one go.
func (cc *CommentCommand) ReviewedOnly() bool {
	return cc.Action == ActionApply || cc.Action == ActionApplyForce
}

// CommentHelp is the answer to `strata help`.
const CommentHelp = "strata's commands, as the first line of a comment on a pull request (`terrateam` works as well as `strata`):\n\n" +
	"| command | what it does |\n|---|---|\n" +
	"| `strata plan [QUERY]` | plans the units the pull request changes (those the tag query matches) |\n" +
	"| `strata apply [QUERY]` | applies the plans reviewed at the pull request's head, before it is merged; a unit whose new plan differs from its reviewed plan is not applied |\n" +
	"| `strata apply-autoapprove [QUERY]` | plans and applies in one go, with no reviewed plan (access_control `apply_autoapprove`) |\n" +
	"| `strata apply-force [QUERY]` | applies the reviewed plans without apply_requirements (access_control `apply_force`) |\n" +
	"| `strata unlock` | releases the locks the pull request's plans took (access_control `unlock`) |\n" +
	"| `strata gate approve TOKEN` | approves the gate of that token, which a failed gated step raised, for the next apply |\n" +
	"| `strata help` | this table |\n"
