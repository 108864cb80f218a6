package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// What was reviewed is what is applied: a plan apply makes in place of
// the reviewed saved plan is compared with it, and under
// --require-reviewed-plan refused when its changes differ.

const extraB = "resource \"terraform_data\" \"b\" {\n  input = \"b7\"\n}\n"

// reviewedRepo is app (a0-b0-c0) and web, which plans after app, both
// applied.
func reviewedRepo(t *testing.T) *e2e {
	t.Helper()
	e := newE2E(t, writeRepo(t, map[string]string{
		"strata.yml":  testenv.AppWebConfig,
		"app/main.tf": testenv.AppTF("a0-b0-c0", ""),
		"web/main.tf": "resource \"terraform_data\" \"web\" {\n  input = \"w0\"\n}\n",
	}))
	if res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{}); res.ExitCode != 0 {
		t.Fatalf("first apply: exit %d %v\n%s", res.ExitCode, statuses(res.Report), e.console.String())
	}
	return e
}

// reviewPR5 changes app to a0-b0-c9 and plans it as pull request 5 does.
func reviewPR5(t *testing.T, e *e2e) {
	t.Helper()
	writeFileT(t, filepath.Join(e.root, "app", "main.tf"), testenv.AppTF("a0-b0-c9", ""))
	res := e.run(CmdPlan, Options{Settings: Settings{PullRequest: "PR #5"}}, stacks.Selection{})
	if got := statuses(res.Report)["app@default"]; got != string(report.StatusPlanned) {
		t.Fatalf("plan: app %s\n%s", got, e.console.String())
	}
	rec := journal(t, e.root, "app").Plan
	if rec == nil || rec.Command != CmdPlan || rec.Review != "PR #5" || rec.ChangeSet == "" || rec.Changes != (report.Changes{Change: 1}) {
		t.Fatalf("the reviewed plan's record: %+v", rec)
	}
}

// mergeB7 is the merge: main had meanwhile changed b0 to b7 and added
// resource b, so the merged app is a0-b7-c9 with b.
func mergeB7(t *testing.T, e *e2e) {
	t.Helper()
	writeFileT(t, filepath.Join(e.root, "app", "main.tf"), testenv.AppTF("a0-b7-c9", extraB))
}

// TestReplannedAfterMerge: PR 5 reviewed a0-b0-c0 → a0-b0-c9; after the
// merge the apply plans again and applies a0-b7-c9 and a new resource.
// The report says so, with both plans' counts, in the unit's reason, the
// table and the summary, and the unit's changes are the apply's.
func TestReplannedAfterMerge(t *testing.T) {
	e := reviewedRepo(t)
	reviewPR5(t, e)
	mergeB7(t, e)
	e.console.Reset()
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	if res.ExitCode != 0 {
		t.Fatalf("apply: exit %d %v\n%s", res.ExitCode, statuses(res.Report), e.console.String())
	}
	app := unitByName(t, res.Report, "app@default")
	want := &report.Replanned{ReviewedBy: "PR #5", Reviewed: report.Changes{Change: 1}, New: report.Changes{Add: 1, Change: 1}}
	if app.Status != report.StatusApplied || !reflect.DeepEqual(app.Replanned, want) {
		t.Fatalf("app: %s, replanned %+v; want %+v", app.Status, app.Replanned, want)
	}
	const reason = "re-planned: differs from the reviewed plan, from PR #5 (reviewed +0 ~1 -0, applied +1 ~1 -0)"
	if app.Reason != reason {
		t.Errorf("app's reason: %q, want %q", app.Reason, reason)
	}
	if app.Changes != (report.Changes{Add: 1, Change: 1}) {
		t.Errorf("app's changes: %s, want the apply's +1 ~1 -0", app.Changes)
	}
	var table bytes.Buffer
	res.Report.WriteTable(&table)
	if !strings.Contains(table.String(), "+1 ~1 -0") || !strings.Contains(table.String(), reason) {
		t.Errorf("the table does not show the apply's changes and the reason:\n%s", table.String())
	}
	md := res.Report.Markdown()
	if !strings.Contains(md, "| `app@default` | applied | +1 ~1 -0 | "+reason+" |") {
		t.Errorf("the summary's row of app:\n%s", md)
	}
	if !strings.Contains(md, "**Applied changes their reviewed plan did not hold:** `app@default`") {
		t.Errorf("the summary does not call out the re-planned unit:\n%s", md)
	}
	if got := testenv.StateInputs(t, filepath.Join(e.root, "app")); got["app"] != "a0-b7-c9" || got["b"] != "b7" {
		t.Errorf("app's state: %v", got)
	}
	if web := unitByName(t, res.Report, "web@default"); web.Replanned != nil || web.Reason != "" {
		t.Errorf("web had no reviewed plan, yet: %+v %q", web.Replanned, web.Reason)
	}
}

// TestReplannedSameChanges: a merge that changes nothing the plan does
// (a comment) plans again with the changes PR 5 reviewed: noted, not
// alarming, and --require-reviewed-plan applies it.
func TestReplannedSameChanges(t *testing.T) {
	e := reviewedRepo(t)
	reviewPR5(t, e)
	writeFileT(t, filepath.Join(e.root, "app", "main.tf"), "# merged\n"+testenv.AppTF("a0-b0-c9", ""))
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true, RequireReviewedPlan: true}}, stacks.Selection{})
	if res.ExitCode != 0 {
		t.Fatalf("apply: exit %d %v\n%s", res.ExitCode, statuses(res.Report), e.console.String())
	}
	app := unitByName(t, res.Report, "app@default")
	if app.Status != report.StatusApplied || app.Replanned == nil || !app.Replanned.Same {
		t.Fatalf("app: %s, replanned %+v", app.Status, app.Replanned)
	}
	if want := "re-planned: same changes as the reviewed plan, from PR #5"; app.Reason != want {
		t.Errorf("app's reason: %q, want %q", app.Reason, want)
	}
	if strings.Contains(res.Report.Markdown(), "did not hold") {
		t.Error("the summary calls out a unit that applied what was reviewed")
	}
	if got := testenv.StateInputs(t, filepath.Join(e.root, "app"))["app"]; got != "a0-b0-c9" {
		t.Errorf("app's state: %s", got)
	}
}

// TestRequireReviewedPlanRefuses: with --require-reviewed-plan the merged
// apply is refused: app fails naming the plans, nothing is applied, web
// is skipped naming app, exit 1, and the new plan is not kept. Then app
// has no reviewed plan, and is refused again; once planned (reviewed),
// its plan is applied.
func TestRequireReviewedPlanRefuses(t *testing.T) {
	e := reviewedRepo(t)
	reviewPR5(t, e)
	mergeB7(t, e)
	appState := readFile(t, filepath.Join(e.root, "app", "terraform.tfstate"))
	opt := Options{Settings: Settings{AutoApprove: true, RequireReviewedPlan: true}}
	res := e.run(CmdApply, opt, stacks.Selection{})
	if res.ExitCode != 1 {
		t.Errorf("exit %d, want 1", res.ExitCode)
	}
	app := unitByName(t, res.Report, "app@default")
	const reason = "app@default: its new plan differs from the reviewed plan, from PR #5 (reviewed +0 ~1 -0, new +1 ~1 -0); not applied (--require-reviewed-plan)"
	if app.Status != report.StatusFailed || app.Reason != reason {
		t.Errorf("app: %s (%s), want failed (%s)", app.Status, app.Reason, reason)
	}
	if app.Replanned == nil || app.Replanned.Same || app.Changes != (report.Changes{Add: 1, Change: 1}) {
		t.Errorf("app: replanned %+v, changes %s", app.Replanned, app.Changes)
	}
	if _, applied := stepOf(app, report.StepApply); applied {
		t.Error("app ran an apply step")
	}
	web := unitByName(t, res.Report, "web@default")
	if web.Status != report.StatusSkipped || web.Reason != "app@default failed" || web.Cause != "app@default" {
		t.Errorf("web: %s (%s), cause %q", web.Status, web.Reason, web.Cause)
	}
	if got := readFile(t, filepath.Join(e.root, "app", "terraform.tfstate")); got != appState {
		t.Error("app's state changed")
	}
	if rec := journal(t, e.root, "app"); rec.Plan != nil {
		t.Errorf("the refused plan is still recorded: %+v", rec.Plan)
	}
	if _, err := os.Stat(filepath.Join(e.root, ".strata", "plans", "app", "default.tfplan")); err == nil {
		t.Error("the refused plan's file is still there")
	}

	// Nothing reviewed the merged changes: apply alone refuses them.
	res = e.run(CmdApply, opt, stacks.Selection{})
	app = unitByName(t, res.Report, "app@default")
	if want := "app@default: no reviewed plan for its changes (+1 ~1 -0); not applied (--require-reviewed-plan)"; app.Status != report.StatusFailed || app.Reason != want {
		t.Errorf("apply without a saved plan: app %s (%s), want failed (%s)", app.Status, app.Reason, want)
	}
	if res.ExitCode != 1 {
		t.Errorf("apply without a saved plan: exit %d, want 1", res.ExitCode)
	}

	// A plan of the merged code is the reviewed plan: it is applied.
	e.run(CmdPlan, Options{}, stacks.Selection{})
	res = e.run(CmdApply, opt, stacks.Selection{})
	if res.ExitCode != 0 {
		t.Fatalf("apply of the reviewed plan: exit %d %v\n%s", res.ExitCode, statuses(res.Report), e.console.String())
	}
	// The report says which reviewed plan the apply consumed; a plan run
	// outside a pull request gives the unit no reason for it.
	if app = unitByName(t, res.Report, "app@default"); app.Status != report.StatusApplied || app.Replanned == nil || !app.Replanned.Reused ||
		!strings.HasPrefix(app.Replanned.ReviewedBy, "the plan run at ") || app.Reason != "" {
		t.Errorf("app: %s (%s), replanned %+v", app.Status, app.Reason, app.Replanned)
	}
	if got := testenv.StateInputs(t, filepath.Join(e.root, "app")); got["app"] != "a0-b7-c9" || got["b"] != "b7" {
		t.Errorf("app's state: %v", got)
	}
}

// TestStalePlanReplannedCounts: the state changed after PR 5's plan (a
// resource applied by hand, not in the code), so the engine calls the
// saved plan stale. The new plan also destroys that resource: the report
// shows the apply's changes, not the stale plan's, and how they differ
// from the reviewed ones; --require-reviewed-plan refuses it instead.
func TestStalePlanReplannedCounts(t *testing.T) {
	for _, require := range []bool{false, true} {
		name := "applied"
		if require {
			name = "refused"
		}
		t.Run(name, func(t *testing.T) {
			e := reviewedRepo(t)
			reviewPR5(t, e)
			main := filepath.Join(e.root, "app", "main.tf")
			writeFileT(t, main, testenv.AppTF("a0-b0-c0", extraB))
			terraformIn(t, e, "app", "apply", "-auto-approve", "-input=false")
			writeFileT(t, main, testenv.AppTF("a0-b0-c9", ""))
			e.console.Reset()
			res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true, RequireReviewedPlan: require}}, stacks.Selection{})
			if !strings.Contains(e.console.String(), "the saved plan is stale") {
				t.Fatalf("the saved plan was not stale:\n%s", e.console.String())
			}
			app := unitByName(t, res.Report, "app@default")
			want := &report.Replanned{ReviewedBy: "PR #5", Reviewed: report.Changes{Change: 1}, New: report.Changes{Change: 1, Destroy: 1}}
			if !reflect.DeepEqual(app.Replanned, want) || app.Changes != want.New {
				t.Errorf("app: changes %s, replanned %+v; want %s, %+v", app.Changes, app.Replanned, want.New, want)
			}
			inputs := testenv.StateInputs(t, filepath.Join(e.root, "app"))
			if !require {
				if app.Status != report.StatusApplied || res.ExitCode != 0 {
					t.Fatalf("app: %s (%s), exit %d\n%s", app.Status, app.Reason, res.ExitCode, e.console.String())
				}
				if inputs["app"] != "a0-b0-c9" || inputs["b"] != "" {
					t.Errorf("app's state: %v", inputs)
				}
				return
			}
			if app.Status != report.StatusFailed || !strings.Contains(app.Reason, "its new plan differs from the reviewed plan") || res.ExitCode != 1 {
				t.Errorf("app: %s (%s), exit %d", app.Status, app.Reason, res.ExitCode)
			}
			if web := unitByName(t, res.Report, "web@default"); web.Status != report.StatusSkipped || web.Cause != "app@default" {
				t.Errorf("web: %s (%s)", web.Status, web.Reason)
			}
			if inputs["app"] != "a0-b0-c0" || inputs["b"] != "b7" {
				t.Errorf("app's state changed: %v", inputs)
			}
		})
	}
}

// TestStalePlanAppliedEarlier: a saved plan applied outside strata's
// record (as by a CI job that could not write its record back) is stale
// to the next apply, and its new plan has no changes: the unit is
// applied, by that earlier apply, with the saved plan's changes, and the
// run state records the apply at the plan's digest. Its dependents go on,
// and --require-reviewed-plan has nothing to refuse.
func TestStalePlanAppliedEarlier(t *testing.T) {
	e := reviewedRepo(t)
	reviewPR5(t, e)
	saved := journal(t, e.root, "app").Plan
	terraformIn(t, e, "app", "apply", "-input=false", filepath.Join(e.root, ".strata", filepath.FromSlash(saved.File)))
	e.console.Reset()
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true, RequireReviewedPlan: true}}, stacks.Selection{})
	if res.ExitCode != 0 {
		t.Fatalf("apply: exit %d %v\n%s", res.ExitCode, statuses(res.Report), e.console.String())
	}
	app := unitByName(t, res.Report, "app@default")
	if app.Status != report.StatusApplied || app.Reason != job.ReasonAppliedEarlier || app.Changes != saved.Changes {
		t.Errorf("app: %s (%s) %s, want applied (%s) %s", app.Status, app.Reason, app.Changes, job.ReasonAppliedEarlier, saved.Changes)
	}
	if app.Digest != saved.Digest {
		t.Errorf("app's digest %s, want the saved plan's %s", app.Digest, saved.Digest)
	}
	if n := strings.Count(e.console.String(), "Apply complete!"); n != 0 {
		t.Errorf("%d applies ran; the state already held the changes", n)
	}
	us := journal(t, e.root, "app")
	if us.Plan != nil || us.Apply == nil || us.Apply.Result != report.StatusApplied || us.Apply.Digest != saved.Digest {
		t.Errorf("app's run state: plan %+v, apply %+v", us.Plan, us.Apply)
	}
	if web := unitByName(t, res.Report, "web@default"); web.Status != report.StatusNoChanges {
		t.Errorf("web: %s (%s), want no_changes: app's gate opened", web.Status, web.Reason)
	}
	res = e.run(CmdPlan, Options{}, stacks.Selection{})
	if got := statuses(res.Report)["app@default"]; got != string(report.StatusNoChanges) {
		t.Errorf("plan after: app %s", got)
	}
}
