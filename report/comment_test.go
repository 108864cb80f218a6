package report

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// commentReport is a report of n units over the given number of stacks,
// each unit with a plan output of logBytes bytes; every failEvery-th unit
// failed (0: none), its output ending with the engine's error.
func commentReport(n, stacks, logBytes, failEvery int) *Report {
	rep := &Report{Command: "plan"}
	status := map[string]Status{}
	for i := 0; i < n; i++ {
		stack := fmt.Sprintf("environment-%04d-with-a-longish-stack-name", i%stacks)
		u := &UnitReport{
			Dir: fmt.Sprintf("services/team-%04d/module", i), Workspace: "default", Stack: stack,
			StackPath: []string{"all", stack}, Status: StatusPlanned, Changes: Changes{Add: 1},
			Log: strings.Repeat("  + resource \"terraform_data\" \"x\" {}\n", logBytes/30+1)[:logBytes],
		}
		if failEvery > 0 && i%failEvery == 0 {
			u.Status, u.Reason, u.Changes = StatusFailed, "plan failed: Unsupported argument", Changes{}
			u.Log += "\nError: Unsupported argument"
		}
		rep.Units = append(rep.Units, u)
		if status[stack] != StatusFailed {
			status[stack] = u.Status
		}
	}
	for i := 0; i < stacks && i < n; i++ {
		stack := fmt.Sprintf("environment-%04d-with-a-longish-stack-name", i)
		rep.Stacks = append(rep.Stacks, StackReport{Name: stack, Path: []string{"all", stack}, Status: status[stack]})
	}
	return rep
}

func TestCommentWithinTheLimit(t *testing.T) {
	const link = "https://github.example/o/r/actions/runs/7"
	for _, tc := range []struct {
		name                     string
		units, stacks, log, fail int
		// want are in the comment; the marker and the limit always hold.
		want []string
		// folded: the stacks that did not fail are one line each.
		folded bool
	}{
		{name: "small", units: 3, stacks: 2, log: 200, fail: 3,
			want: []string{"### strata plan: 2 to change, 1 failed", "**+2 ~0 -0** in 3 units", "[Full summary](" + link + ")",
				"<details open><summary><b>all / environment-0000-with-a-longish-stack-name</b> — failed · 2 units · +1 ~0 -0</summary>",
				"```\n  + resource"}},
		{name: "200 units, long outputs", units: 200, stacks: 10, log: 4000,
			want: []string{"### strata plan: 200 to change", "*Shortened to fit a comment: plan outputs cut to ", " bytes each.* The full summary is in the [CI run](" + link + ")"}},
		{name: "3000 units, long outputs", units: 3000, stacks: 30, log: 4000,
			want: []string{"### strata plan: 3000 to change", "**+3000 ~0 -0** in 3000 units", "the stacks that did not fail are one line each"}, folded: true},
		{name: "3000 units, one stack each", units: 3000, stacks: 3000, log: 100,
			want: []string{"every stack is one line", "stacks not listed", "- … "}, folded: true},
		{name: "3000 units, some failing", units: 3000, stacks: 300, log: 1000, fail: 500,
			want: []string{"6 failed", "the stacks that did not fail are one line each", "Error: Unsupported argument",
				"<details open><summary><b>all / environment-0200-with-a-longish-stack-name</b> — failed"}, folded: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := commentReport(tc.units, tc.stacks, tc.log, tc.fail)
			body := Comment(rep, link)
			if len(body) > CommentLimit {
				t.Fatalf("%d bytes, over %d", len(body), CommentLimit)
			}
			if !utf8.ValidString(body) {
				t.Error("not UTF-8")
			}
			if !strings.HasPrefix(body, CommentMarker+"\n") {
				t.Errorf("no marker line first:\n%.200s", body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("no %q in\n%.3000s", w, body)
				}
			}
			if got := strings.Count(body, "<details") - strings.Count(body, "</details>"); got != 0 {
				t.Errorf("%d <details> not closed", got)
			}
			if tc.folded && strings.Contains(body, "— planned · 10 units</summary>") {
				t.Error("a stack that did not fail is still a block")
			}
		})
	}
}

// TestCommentFolds: every stack is a folded block but a failed one, open
// and first; each output is a folded block in it; what a unit's name or
// reason holds cannot open a tag, end the comment's marker or break a
// table row.
func TestCommentFolds(t *testing.T) {
	rep := &Report{Command: "apply",
		Stacks: []StackReport{
			{Name: "a-ok", Path: []string{"a-ok"}, Status: StatusApplied},
			{Name: "b-bad", Path: []string{"prod", "b-bad"}, Status: StatusFailed},
			{Name: "c-same", Path: []string{"c-same"}, Status: StatusNoChanges},
		},
		Units: []*UnitReport{
			{Dir: "ok", Workspace: "default", Stack: "a-ok", Status: StatusApplied, Changes: Changes{Add: 2}, Log: "Apply complete!"},
			{Dir: "bad", Workspace: "default", Stack: "b-bad", Status: StatusFailed, Reason: "a|b <!-- strata:comment --> </details>\nsecond line", Log: "Error: boom\n```\nnot a fence"},
			{Dir: "same", Workspace: "default", Stack: "c-same", Status: StatusNoChanges, Log: "No changes."},
		},
		CI: &CIReport{Commit: "0123456789abcdef", CommitURL: "https://github.example/o/r/commit/0123456789abcdef", RunURL: "https://github.example/o/r/actions/runs/7"},
	}
	body := Comment(rep, "")
	for _, want := range []string{
		CommentMarker + "\n### strata apply: 1 applied, 1 failed\n",
		"**+2 ~0 -0** in 3 units · commit [<code>0123456789ab</code>](https://github.example/o/r/commit/0123456789abcdef) · [CI run](https://github.example/o/r/actions/runs/7)",
		"<details open><summary><b>prod / b-bad</b> — failed · 1 unit</summary>",
		"| <code>bad@default</code> | failed | - | a&#124;b &lt;!-- strata:comment --&gt; &lt;/details&gt; second line |",
		"<details open><summary><code>bad@default</code> failed</summary>\n\n```\nError: boom\n``\u200b`\nnot a fence\n```",
		"<details><summary><b>a-ok</b> — applied · 1 unit · +2 ~0 -0</summary>",
		"<details><summary><code>ok@default</code> applied, +2 ~0 -0</summary>",
		"[Full summary](https://github.example/o/r/actions/runs/7)\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
	if strings.Index(body, "b-bad") > strings.Index(body, "a-ok") {
		t.Errorf("the failed stack is not first:\n%s", body)
	}
	if strings.Contains(body, "No changes.") {
		t.Errorf("a unit without changes shows its output:\n%s", body)
	}
	if n := strings.Count(body, CommentMarker); n != 1 {
		t.Errorf("the marker is in the comment %d times", n)
	}
}

func TestCommentStopped(t *testing.T) {
	rep := FailedReport("plan", time.Time{}, time.Time{}, "strata.yml:3:5: unknown key "+strings.Repeat("x", 10000))
	body := Comment(rep, "javascript:alert(1)")
	for _, want := range []string{"### strata plan: stopped", "**Stopped before any unit ran.**", "bytes cut", "Full summary (<code>javascript:alert(1)</code>)"} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%.500s", want, body)
		}
	}
	if len(body) > commentErrorLimit+1000 {
		t.Errorf("the error is not cut: %d bytes", len(body))
	}
}

func TestCutText(t *testing.T) {
	s := strings.Repeat("é", 10) // 20 bytes
	for _, tc := range []struct {
		limit int
		tail  bool
		want  string
	}{
		{-1, false, s},
		{20, false, s},
		{5, false, "éé\n… 16 bytes cut"},
		{5, true, "… 16 bytes cut\néé"},
	} {
		got, _ := cutText(s, tc.limit, tc.tail)
		if got != tc.want {
			t.Errorf("cutText(%d, %v) = %q, want %q", tc.limit, tc.tail, got, tc.want)
		}
	}
}

// TestCommentEscapesBaseBranch: a base branch holding a backtick and
// "](http://x)", and a unit name holding brackets, are text in the
// comment: no character of theirs can end a code span or make a link.
func TestCommentEscapesBaseBranch(t *testing.T) {
	rep := &Report{Command: "plan",
		Stacks: []StackReport{{Name: "s", Path: []string{"s"}, Status: StatusPlanned}},
		Units: []*UnitReport{{Dir: "[x](http://y)", Workspace: "default", Stack: "s", Status: StatusPlanned,
			Changes: Changes{Add: 1}, Log: "Plan: 1 to add"}},
		CI: &CIReport{Base: "ma`in](http://x)"}}
	body := Comment(rep, "")
	for _, want := range []string{
		"base <code>ma&#96;in&#93;(http://x)</code>",
		"| <code>&#91;x&#93;(http://y)@default</code> | planned |",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
	// Outside the fenced block of the unit's output, no backtick and no
	// link target is left.
	text := regexp.MustCompile("(?s)\n```(diff)?\n.*?\n```\n").ReplaceAllString(body, "\n")
	for _, bad := range []string{"`", "](http"} {
		if strings.Contains(text, bad) {
			t.Errorf("%q left as Markdown in\n%s", bad, text)
		}
	}
}

// TestCommentShowsDeferred: a deferred unit is shown as such in the pull
// request comment, with the values it waits for
// (docs/behaviour.md#deferred-units).
func TestCommentShowsDeferred(t *testing.T) {
	t.Parallel()
	rep := &Report{Command: "plan",
		Stacks: []StackReport{
			{Name: "net", Path: []string{"net"}, Status: StatusPlanned},
			{Name: "app", Path: []string{"app"}, Status: StatusDeferred},
		},
		Units: []*UnitReport{
			{Dir: "net", Workspace: "default", Stack: "net", Status: StatusPlanned, Changes: Changes{Add: 1}},
			{Dir: "app", Workspace: "default", Stack: "app", Status: StatusDeferred, DeferredOn: []string{"net.vpc_id"},
				Reason: "net.vpc_id is unknown until net@default is applied"},
		},
	}
	body := Comment(rep, "")
	for _, want := range []string{
		"### strata plan: 1 to change, 1 deferred\n",
		"<b>app</b> — deferred · 1 unit",
		"| <code>app@default</code> | deferred | - | net.vpc&#95;id is unknown until net@default is applied |",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
}
