package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// Runs that must recover: a saved plan made stale behind strata's back,
// an interrupted apply, destroy across inputs, a corrupt or unwritable
// run state.

// terraformIn runs terraform itself in a unit's dir, as a user would.
func terraformIn(t *testing.T, e *e2e, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("terraform", args...)
	cmd.Dir, cmd.Env = filepath.Join(e.root, dir), e.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("terraform %v in %s: %v\n%s", args, dir, err, out)
	}
}

func editFileT(t *testing.T, path, old, new string) {
	t.Helper()
	content := readFile(t, path)
	if !strings.Contains(content, old) {
		t.Fatalf("%s has no %q", path, old)
	}
	writeFileT(t, path, strings.Replace(content, old, new, 1))
}

// TestStalePlanIsPlannedAgain: a saved plan whose state changed after it
// was made (here by a terraform apply by hand of the same change) is
// discarded and made again; the new plan has no changes, so the unit was
// applied earlier, and every dependent follows.
func TestStalePlanIsPlannedAgain(t *testing.T) {
	e := newE2E(t, copyTree(t, fixtureDir("nested")))
	e.applyAll("first apply")
	editFileT(t, filepath.Join(e.root, "base", "main.tf"), `parts  = ["base", "base"]`, `parts  = ["base", "v2"]`)
	if res := e.run(CmdPlan, Options{}, stacks.Selection{}); statuses(res.Report)["base@default"] != string(report.StatusPlanned) {
		t.Fatalf("plan: %v", statuses(res.Report))
	}
	terraformIn(t, e, "base", "apply", "-auto-approve", "-input=false")
	e.console.Reset()
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	if res.ExitCode != 0 {
		t.Fatalf("apply after the state changed: exit %d %v\n%s", res.ExitCode, statuses(res.Report), e.console.String())
	}
	for name, st := range statuses(res.Report) {
		want := string(report.StatusApplied)
		if name == "base@default" {
			want += " (" + job.ReasonAppliedEarlier + ")"
		}
		if st != want && st != string(report.StatusNoChanges) {
			t.Errorf("%s: %s", name, st)
		}
	}
	if !strings.Contains(e.console.String(), "the saved plan is stale") {
		t.Errorf("no note of the stale plan:\n%s", e.console.String())
	}
}

// staleSavedPlan is a stack base applied, then planned with a change
// whose saved plan the state no longer matches: the change was applied
// by hand, and the state then drifted.
func staleSavedPlan(t *testing.T) *e2e {
	t.Helper()
	e := newE2E(t, layerRepo(t, "stacks:\n  names:\n    base: {tag_query: base}\n"))
	if res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{Stacks: []string{"base"}}); res.ExitCode != 0 {
		t.Fatalf("first apply: %v", statuses(res.Report))
	}
	editFileT(t, filepath.Join(e.root, "base", "main.tf"), `"base"`, `"base-2"`)
	e.run(CmdPlan, Options{}, stacks.Selection{Stacks: []string{"base"}})
	terraformIn(t, e, "base", "apply", "-auto-approve", "-input=false")
	editFileT(t, filepath.Join(e.root, "base", "terraform.tfstate"), `"base-2"`, `"drifted"`)
	return e
}

// TestStalePlanIsAskedAboutAgain: where someone can be asked, the new plan
// that replaces a stale one is shown and asked about again.
func TestStalePlanIsAskedAboutAgain(t *testing.T) {
	e := staleSavedPlan(t)
	var asked []int
	approve := func(units []*report.UnitReport) (Answer, error) {
		asked = append(asked, len(units))
		return AnswerYes, nil
	}
	res := e.run(CmdApply, Options{Hooks: Hooks{Approve: approve}}, stacks.Selection{Stacks: []string{"base"}})
	// The new plan makes the change the saved one made (from "drifted"
	// rather than "base"): the same changes as the plan reviewed.
	base := unitByName(t, res.Report, "base@default")
	if base.Status != report.StatusApplied || res.ExitCode != 0 {
		t.Fatalf("base: %s (%s), exit %d\n%s", base.Status, base.Reason, res.ExitCode, e.console.String())
	}
	if base.Replanned == nil || !base.Replanned.Same || !strings.HasPrefix(base.Reason, "re-planned: same changes as the reviewed plan, from the plan run at ") {
		t.Errorf("base: %q, replanned %+v", base.Reason, base.Replanned)
	}
	if len(asked) != 2 {
		t.Errorf("asked %d times, want twice (the saved plan, then the new one)", len(asked))
	}
}

// TestStaleApplyWithdrawn: a saved plan the engine refuses as stale
// changed nothing, so the record that its apply started (Applying) is
// withdrawn (ApplyRefused) before the new plan is applied with a record
// of its own: a CI retry must not credit the refused apply with changes
// someone else made.
func TestStaleApplyWithdrawn(t *testing.T) {
	e := staleSavedPlan(t)
	var calls []string
	opt := Options{
		Hooks: Hooks{
			Approve: func([]*report.UnitReport) (Answer, error) { return AnswerYes, nil },
			Applying: func(u *stacks.Unit, digest string) error {
				calls = append(calls, "applying "+u.Name())
				return nil
			},
			ApplyRefused: func(u *stacks.Unit) error {
				calls = append(calls, "refused "+u.Name())
				return nil
			},
		},
	}
	res := e.run(CmdApply, opt, stacks.Selection{Stacks: []string{"base"}})
	if base := unitByName(t, res.Report, "base@default"); base.Status != report.StatusApplied {
		t.Fatalf("base: %s (%s)\n%s", base.Status, base.Reason, e.console.String())
	}
	want := "applying base@default, refused base@default, applying base@default"
	if got := strings.Join(calls, ", "); got != want {
		t.Errorf("calls: %s, want %s", got, want)
	}
}

// TestInterruptedApplyInvalidatesSavedPlan: an apply cut short leaves no
// saved plan to reuse; the next apply plans again and succeeds.
func TestInterruptedApplyInvalidatesSavedPlan(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": "dirs:\n  slow: {tags: [slow]}\n",
		"slow/main.tf": `resource "terraform_data" "slow" {
  input = "one"
  provisioner "local-exec" {
    command = "touch started; sleep 3"
  }
}
`,
	})
	e := newE2E(t, root)
	p, err := stacks.Load(root, configIn(root))
	if err != nil {
		t.Fatal(err)
	}
	run, _ := p.Select(stacks.Selection{Cwd: "."})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(filepath.Join(root, "slow", "started")); err == nil {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	res, err := Execute(ctx, p, run, Options{Settings: Settings{Command: CmdApply, AutoApprove: true, Parallelism: 1}, Extra: Extra{Environ: e.env}, Output: Output{Console: &e.console}})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(res.Report)["slow@default"]; !strings.HasPrefix(got, "cancelled (interrupted during apply") {
		t.Fatalf("slow: %s", got)
	}
	sd, _ := runstate.OpenStateDir(filepath.Join(root, ".strata"))
	us, err := sd.ReadUnit(p.Units[0])
	if err != nil {
		t.Fatal(err)
	}
	if us.Plan != nil {
		t.Errorf("the saved plan of an interrupted apply is still recorded: %+v", us.Plan)
	}
	if us.Apply == nil || us.Apply.Result != report.StatusCancelled {
		t.Errorf("apply record: %+v", us.Apply)
	}
	os.Remove(filepath.Join(root, "slow", "started"))
	e.console.Reset()
	res = e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	if res.ExitCode != 0 {
		t.Fatalf("apply after the interrupt: %v\n%s", statuses(res.Report), e.console.String())
	}
	if strings.Contains(e.console.String(), "reusing the plan") {
		t.Errorf("the plan of the interrupted apply was reused:\n%s", e.console.String())
	}
}

// TestDestroyWithInputs: destroy reads the producers' outputs as they
// stand, destroys consumers before their producer, and leaves nothing.
func TestDestroyWithInputs(t *testing.T) {
	root := chainRepo(t, "vpc-1")
	e := newE2E(t, root)
	if res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{}); res.ExitCode != 0 {
		t.Fatalf("apply: %v", statuses(res.Report))
	}
	e.console.Reset()
	res := e.run(CmdDestroy, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	if res.ExitCode != 0 || !res.Report.OK {
		t.Fatalf("destroy: exit %d %v\n%s", res.ExitCode, statuses(res.Report), e.console.String())
	}
	for name, st := range statuses(res.Report) {
		if st != string(report.StatusDestroyed) {
			t.Errorf("%s: %s", name, st)
		}
	}
	network, _ := stepOf(unitByName(t, res.Report, "network@default"), report.StepApply)
	for _, consumer := range []string{"app@default", "db@default"} {
		c, _ := stepOf(unitByName(t, res.Report, consumer), report.StepApply)
		if !c.FinishedAt.Before(network.StartedAt) {
			t.Errorf("%s was destroyed after its producer network", consumer)
		}
	}
	for _, dir := range []string{"network", "app", "db"} {
		var state struct {
			Resources []json.RawMessage `json:"resources"`
		}
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(root, dir, "terraform.tfstate"))), &state); err != nil {
			t.Fatal(err)
		}
		if len(state.Resources) != 0 {
			t.Errorf("%s still has %d resources", dir, len(state.Resources))
		}
	}
}

// TestDestroyLeftBlockedFails: a destroy that cannot run a unit (its
// producer never applied, so it has no inputs) fails instead of reporting
// success.
func TestDestroyLeftBlockedFails(t *testing.T) {
	e := newE2E(t, chainRepo(t, "vpc-1"))
	res := e.run(CmdDestroy, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	got := statuses(res.Report)
	if !strings.HasPrefix(got["app@default"], string(report.StatusBlocked)) || res.ExitCode != 1 || res.Report.OK {
		t.Errorf("exit %d ok %t: %v", res.ExitCode, res.Report.OK, got)
	}
}

// TestCorruptJournal: a unit's journal file that is empty, truncated or
// garbage is moved aside with a warning naming it; the unit is treated as
// having no history, and its new records are kept.
func TestCorruptJournal(t *testing.T) {
	for name, content := range map[string]string{
		"empty":        "",
		"truncated":    `{"init": {"fingerprint": "ab`,
		"garbage":      "\x00\x01not json",
		"not a record": `["a"]`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newE2E(t, layerRepo(t, "stacks:\n  names:\n    base: {tag_query: base}\n"))
			if res := e.run(CmdPlan, Options{}, stacks.Selection{Stacks: []string{"base"}}); res.ExitCode != 0 {
				t.Fatalf("plan: %v", statuses(res.Report))
			}
			journal := filepath.Join(e.root, ".strata", "state", "base", "default#base.json")
			if err := os.WriteFile(journal, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			e.console.Reset()
			res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{Stacks: []string{"base"}})
			if res.ExitCode != 0 {
				t.Fatalf("apply: %v\n%s", statuses(res.Report), e.console.String())
			}
			if !strings.Contains(e.console.String(), "run state of base@default ("+journal+") was corrupt") {
				t.Errorf("no warning naming the journal:\n%s", e.console.String())
			}
			aside, _ := filepath.Glob(journal + ".corrupt-*")
			if len(aside) != 1 || readFile(t, aside[0]) != content {
				t.Errorf("journal not moved aside whole: %v", aside)
			}
			var us runstate.UnitState
			if err := json.Unmarshal([]byte(readFile(t, journal)), &us); err != nil || us.Apply == nil || us.Apply.Result != report.StatusApplied {
				t.Errorf("the new record: %+v, %v", us, err)
			}
		})
	}
}

// TestRunStateWriteErrorFailsUnit: a run state that cannot be written
// fails the unit, naming it, instead of being dropped.
func TestRunStateWriteErrorFailsUnit(t *testing.T) {
	e := newE2E(t, layerRepo(t, "stacks:\n  names:\n    base: {tag_query: base}\n"))
	// A directory where the journal file should be: neither read nor
	// replaced.
	if err := os.MkdirAll(filepath.Join(e.root, ".strata", "state", "base", "default#base.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	res := e.run(CmdPlan, Options{}, stacks.Selection{Stacks: []string{"base"}})
	u := unitByName(t, res.Report, "base@default")
	if u.Status != report.StatusFailed || !strings.Contains(u.Reason, "run state of base@default") || res.ExitCode != 1 {
		t.Errorf("base: %s (%s), exit %d", u.Status, u.Reason, res.ExitCode)
	}
}

// TestApplyShowsReusedPlan: an apply that reuses a saved plan shows that
// plan before asking about it, as a new plan would be shown.
func TestApplyShowsReusedPlan(t *testing.T) {
	e := newE2E(t, layerRepo(t, "stacks:\n  names:\n    base: {tag_query: base}\n"))
	if res := e.run(CmdPlan, Options{}, stacks.Selection{Stacks: []string{"base"}}); statuses(res.Report)["base@default"] != string(report.StatusPlanned) {
		t.Fatalf("plan: %v", statuses(res.Report))
	}
	e.console.Reset()
	var shown string
	approve := func(units []*report.UnitReport) (Answer, error) {
		shown = e.console.String()
		return AnswerYes, nil
	}
	res := e.run(CmdApply, Options{Hooks: Hooks{Approve: approve}}, stacks.Selection{Stacks: []string{"base"}})
	if statuses(res.Report)["base@default"] != string(report.StatusApplied) {
		t.Fatalf("apply: %v\n%s", statuses(res.Report), e.console.String())
	}
	if !strings.Contains(shown, "reusing the plan saved at") || !strings.Contains(shown, "[base@default] Plan: 1 to add, 0 to change, 0 to destroy") {
		t.Errorf("the reused plan was not shown before the question:\n%s", shown)
	}
	if !strings.Contains(unitByName(t, res.Report, "base@default").Log, "terraform_data.this will be created") {
		t.Errorf("the reused plan is not in the unit's log for the summary")
	}
}

// TestPlanHeldByFailedApplyAfter: in plan, a unit whose own plan succeeded
// stays planned when a unit it applies after failed; only its apply is
// held, which the reason says when it would auto-apply.
func TestPlanHeldByFailedApplyAfter(t *testing.T) {
	for _, auto := range []bool{false, true} {
		t.Run(fmt.Sprintf("auto_apply=%t", auto), func(t *testing.T) {
			e := newE2E(t, layerRepo(t, fmt.Sprintf(`stacks:
  names:
    base: {tag_query: base}
    dev: {tag_query: dev}
    prod:
      tag_query: prod
      auto_apply: %t
      rules: {apply_after: [dev]}
workflows:
  - tag_query: 'dir:prod'
    plan:
      # prod's plan ends after dev's has failed.
      - type: run
        cmd: ['sh', '-c', 'while [ ! -e ../dev/failed ]; do sleep 0.05; done']
      - type: init
      - type: plan
  - tag_query: 'dir:dev'
    plan:
      - type: init
      - type: plan
      - type: run
        cmd: ['touch', 'failed']
        run_on: failure
`, auto)))
			writeFileT(t, filepath.Join(e.root, "dev", "broken.tf"), "variable \"needed\" {\n  type = string\n}\n")
			res := e.run(CmdPlan, Options{}, stacks.Selection{})
			got := statuses(res.Report)
			want := string(report.StatusPlanned)
			if auto {
				want += " (auto_apply waits for dev@default, which failed)"
			}
			if !strings.HasPrefix(got["dev@default"], string(report.StatusFailed)) || got["prod@default"] != want {
				t.Errorf("plan: %v; want prod %q", got, want)
			}
		})
	}
}

// TestReusedPlanRunsNoPlanSteps: an apply that reuses a saved plan does not
// run the plan workflow's steps again; an env step's value stays out of
// the digest, so it does not stop the reuse.
func TestReusedPlanRunsNoPlanSteps(t *testing.T) {
	root := writeRepo(t, map[string]string{
		"strata.yml": `workflows:
  - tag_query: ''
    plan:
      - type: run
        cmd: ['sh', '-c', 'echo ran >> plan-steps.log']
      - type: env
        name: TF_VAR_stamp
        cmd: ['sh', '-c', 'date +%s%N']
      - type: init
      - type: plan
`,
		"app/main.tf": "variable \"stamp\" {\n  type = string\n}\nresource \"terraform_data\" \"x\" {\n  input = \"fixed\"\n}\n",
	})
	e := newE2E(t, root)
	if res := e.run(CmdPlan, Options{}, stacks.Selection{}); statuses(res.Report)["app@default"] != string(report.StatusPlanned) {
		t.Fatalf("plan: %v\n%s", statuses(res.Report), e.console.String())
	}
	e.console.Reset()
	res := e.run(CmdApply, Options{Settings: Settings{AutoApprove: true}}, stacks.Selection{})
	if statuses(res.Report)["app@default"] != string(report.StatusApplied) {
		t.Fatalf("apply: %v\n%s", statuses(res.Report), e.console.String())
	}
	if !strings.Contains(e.console.String(), "reusing the plan saved at") {
		t.Errorf("the saved plan was not reused:\n%s", e.console.String())
	}
	if got := readFile(t, filepath.Join(root, "app", "plan-steps.log")); got != "ran\n" {
		t.Errorf("the plan workflow's run step ran %d times, want once", strings.Count(got, "ran"))
	}
}

// TestAnswerNoExitsOne: a plan not approved leaves its unit planned and
// the apply exits 1, as terraform's apply does when answered no.
func TestAnswerNoExitsOne(t *testing.T) {
	e := newE2E(t, layerRepo(t, "stacks:\n  names:\n    base: {tag_query: base}\n"))
	res := e.run(CmdApply, Options{Hooks: Hooks{Approve: func([]*report.UnitReport) (Answer, error) { return AnswerNo, nil }}}, stacks.Selection{Stacks: []string{"base"}})
	if got := statuses(res.Report)["base@default"]; got != string(report.StatusPlanned)+" (not approved)" || res.ExitCode != 1 || res.Report.OK {
		t.Errorf("base: %s, exit %d, ok %t", got, res.ExitCode, res.Report.OK)
	}
}
