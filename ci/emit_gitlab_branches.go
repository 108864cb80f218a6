package ci

import (
	"fmt"
	"strings"

	"github.com/strata-iac/strata/stacks/config"
)

// gitlabCheckoutScript checks out what checkout_strategy says a merge
// request's job works on (docs/ci.md#checkout-strategy-on-gitlab):
// with merge, a detached merge request pipeline's head merged with its
// target branch, the same merge commit in every job (the target's commit
// STRATA_MERGE_TARGET, its date, a fixed author); with checkout, a merged
// results pipeline's source commit. Other pipelines keep their checkout.
const gitlabCheckoutScript = `case "${STRATA_CHECKOUT_STRATEGY:-merge}:${CI_MERGE_REQUEST_EVENT_TYPE:-}" in
checkout:merged_result)
  git checkout --quiet "$CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"
  ;;
merge:detached)
  if [ -f "$(git rev-parse --git-dir)/shallow" ]; then git fetch --quiet --unshallow origin; fi
  git fetch --quiet origin "$CI_MERGE_REQUEST_TARGET_BRANCH_NAME"
  STRATA_MERGE_TARGET=${STRATA_MERGE_TARGET:-$(git rev-parse FETCH_HEAD)}
  export STRATA_MERGE_TARGET
  merged_at=$(git show -s --format=%cI "$STRATA_MERGE_TARGET")
  GIT_AUTHOR_DATE=$merged_at GIT_COMMITTER_DATE=$merged_at git -c user.name=strata -c user.email=strata@localhost \
    merge --quiet --no-ff -m "strata: the merge request merged with $STRATA_MERGE_TARGET" "$STRATA_MERGE_TARGET"
  ;;
esac
`

// gitlabBranchRules are the parent pipeline's rules for the config's
// destination_branches: a merge request pipeline only for a target (and
// source) branch it names, an apply only on a push to a branch it names.
// Without destination_branches: every merge request, and the default
// branch.
func gitlabBranchRules(dests []config.DestinationBranch) (mr, push string) {
	mr, push = `$CI_PIPELINE_SOURCE == "merge_request_event"`, "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH"
	if len(dests) == 0 {
		return mr, push
	}
	var mrs, pushes []string
	for _, d := range dests {
		target := fmt.Sprintf("$CI_MERGE_REQUEST_TARGET_BRANCH_NAME =~ %s", globRegexp(d.Branch.Value))
		if d.SourceBranches != nil {
			var srcs []string
			for _, s := range *d.SourceBranches {
				srcs = append(srcs, globRegexp(s.Value))
			}
			for _, s := range srcs {
				mrs = append(mrs, fmt.Sprintf("(%s && $CI_MERGE_REQUEST_SOURCE_BRANCH_NAME =~ %s)", target, s))
			}
		} else {
			mrs = append(mrs, target)
		}
		pushes = append(pushes, "$CI_COMMIT_BRANCH =~ "+globRegexp(d.Branch.Value))
	}
	return mr + " && (" + strings.Join(mrs, " || ") + ")", strings.Join(pushes, " || ")
}

// globRegexp writes a branch glob (doublestar's: * within a path
// segment, ** across them, ?, [class], {a,b}) as a GitLab rules
// regular expression, anchored.
func globRegexp(glob string) string {
	var b strings.Builder
	b.WriteString("/^")
	depth := 0
	for i := 0; i < len(glob); i++ {
		ch := glob[i]
		switch {
		case strings.HasPrefix(glob[i:], "/**") && (i+3 == len(glob) || glob[i+3] == '/'):
			// Any depth, none included: release/** matches release.
			b.WriteString(`(\/.*)?`)
			i += 2
		case i == 0 && strings.HasPrefix(glob, "**/"):
			b.WriteString(`(.*\/)?`)
			i += 2
		case ch == '*' && i+1 < len(glob) && glob[i+1] == '*':
			b.WriteString(".*")
			i++
		case ch == '*':
			b.WriteString("[^/]*")
		case ch == '?':
			b.WriteString("[^/]")
		case ch == '[':
			j := strings.IndexByte(glob[i:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := strings.ReplaceAll(glob[i+1:i+j], "/", `\/`)
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += j
		case ch == '{':
			b.WriteString("(")
			depth++
		case ch == '}' && depth > 0:
			b.WriteString(")")
			depth--
		case ch == ',' && depth > 0:
			b.WriteString("|")
		case ch == '\\' && i+1 < len(glob):
			b.WriteString(`\` + string(glob[i+1]))
			i++
		case ch == '/':
			b.WriteString(`\/`)
		case strings.IndexByte(`.+()|^$}`, ch) >= 0:
			b.WriteString(`\` + string(ch))
		default:
			b.WriteByte(ch)
		}
	}
	b.WriteString("$/")
	return b.String()
}
