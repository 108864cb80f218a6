package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// The scheduler on the graph as it is, a stack rule through barriers,
// against the same scheduler with every stack rule expanded to an edge
// between every pair of units (the graph strata used to build): the same
// jobs start in the same order, and every unit ends the same way, for
// every rule kind, command and outcome.

// linkPairs links the gates as the expanded graph would: an edge between
// every pair of units a stack rule joins, and no barrier.
func linkPairs(r *runState) {
	r.indexUnits()
	in := map[*stacks.Unit][]stacks.Edge{}
	for _, e := range r.g.Expand() {
		in[e.To] = append(in[e.To], e)
	}
	for _, ur := range r.units {
		r.linkUnitEdges(ur, in[ur.Spec])
	}
	r.computePriorities()
}

// stepJobs runs no engine and answers at once, as told: with one worker
// the order of the jobs is the scheduler's alone.
type stepJobs struct {
	mu        sync.Mutex
	log       []string
	fail      map[string]bool // plan fails
	noChanges map[string]bool
	opened    map[string]bool // a unit outside the run: applied at its digest
}

func (f *stepJobs) work() work {
	return work{job: func(_ context.Context, ur *unit, kind job.Kind, _ func()) job.Result {
		name := ur.Spec.Name()
		f.mu.Lock()
		defer f.mu.Unlock()
		f.log = append(f.log, kindNames[kind]+" "+name)
		switch {
		case f.fail[name] && kind != job.Apply:
			return job.Result{Err: errors.New("boom"), FailedStep: report.StepPlan}
		case kind == job.Apply:
			return job.Result{}
		case f.noChanges[name]:
			return job.Result{}
		case kind == job.PlanApply:
			return job.Result{Applied: true, HasChanges: true, Changes: report.Changes{Add: 1}}
		}
		return job.Result{HasChanges: true, Changes: report.Changes{Add: 1}}
	}, outside: func(_ context.Context, ur *unitRun) {
		ur.phase, ur.status = phaseDone, report.StatusBlocked
		f.mu.Lock()
		defer f.mu.Unlock()
		ur.opened = f.opened[ur.Spec.Name()]
	}}
}

// barrierConfigs are repositories with every kind of stack rule, each
// stack of two or three units (so a reason names the same units either
// way), and an independent unit.
var barrierConfigs = []struct {
	name, config string
	dirs         []string
}{
	{"plan_after chain", `
stacks:
  names:
    a: {tag_query: 'dir:a*'}
    b: {tag_query: 'dir:b*', rules: {plan_after: [a]}}
    c: {tag_query: 'dir:c*', rules: {plan_after: [b]}}
    x: {tag_query: 'dir:x'}
`, []string{"a1", "a2", "a3", "b1", "b2", "c1", "c2", "c3", "x"}},
	{"apply_after", `
stacks:
  names:
    base: {tag_query: 'dir:a*'}
    staging: {tag_query: 'dir:b*', rules: {plan_after: [base]}}
    prod: {tag_query: 'dir:c*', rules: {apply_after: [staging]}}
    after: {tag_query: 'dir:x', rules: {plan_after: [prod]}}
`, []string{"a1", "a2", "b1", "b2", "b3", "c1", "c2", "x"}},
	{"nested stacks inherit rules", `
stacks:
  names:
    base: {tag_query: 'dir:a*'}
    envs:
      stacks: [dev, prod]
      rules: {apply_after: [base]}
    dev: {tag_query: 'dir:b*'}
    prod: {tag_query: 'dir:c*', rules: {plan_after: [dev]}}
    app: {tag_query: 'dir:x', rules: {plan_after: [envs]}}
`, []string{"a1", "a2", "b1", "b2", "c1", "c2", "c3", "x"}},
	{"modified_by and on_change", `
stacks:
  names:
    base: {tag_query: 'dir:a*'}
    dev: {tag_query: 'dir:b*', rules: {modified_by: [base]}}
    prod:
      tag_query: 'dir:c*'
      on_change: {can_apply_after: [dev]}
    x: {tag_query: 'dir:x'}
`, []string{"a1", "a2", "b1", "b2", "c1", "c2", "x"}},
	{"prerequisites", `
stacks:
  names:
    creds: {tag_query: 'dir:a*'}
    app:
      tag_query: 'dir:b*'
      rules:
        prerequisites:
          - {stack: creds, succeeded_within: 1h}
    x: {tag_query: 'dir:c*', rules: {apply_after: [app]}}
`, []string{"a1", "a2", "b1", "b2", "b3", "c1", "c2"}},
	{"diamond with implied edges", `
stacks:
  names:
    a: {tag_query: 'dir:a*'}
    b: {tag_query: 'dir:b*', rules: {plan_after: [a]}}
    c: {tag_query: 'dir:c*', rules: {plan_after: [a, b], apply_after: [x]}}
    d: {tag_query: 'dir:d*', rules: {apply_after: [c, x]}}
    x: {tag_query: 'dir:x'}
`, []string{"a1", "a2", "b1", "b2", "c1", "c2", "c3", "d1", "d2", "x"}},
	{"auto_apply and depends_on", `
dirs:
  b2:
    when_modified: {depends_on: 'dir:b1'}
stacks:
  names:
    a: {tag_query: 'dir:a*'}
    b: {tag_query: 'dir:b*', auto_apply: true, rules: {plan_after: [a]}}
    c: {tag_query: 'dir:c*', auto_apply: true, rules: {apply_after: [b]}}
    x: {tag_query: 'dir:x', rules: {plan_after: [c]}}
`, []string{"a1", "a2", "b1", "b2", "c1", "c2", "x"}},
}

// barrierOutcome is one scheduler run: the jobs in order, and how each
// unit ended.
type barrierOutcome struct {
	log      []string
	statuses map[string]string
}

func runBarrierCase(t *testing.T, p *stacks.Project, opt Options, link func(*runState), f *stepJobs, external []string) barrierOutcome {
	t.Helper()
	r := newSchedulerRun(t, p, opt, link, external...)
	r.schedule(context.Background(), f.work())
	return barrierOutcome{log: f.log, statuses: statusesOf(r)}
}

// TestBarriersEquivalent runs every configuration through every command
// with each unit failing, then each unit changing nothing, then a gate
// outside the run: once on barriers, once on the expanded pairs.
func TestBarriersEquivalent(t *testing.T) {
	t.Parallel()
	answer := func(a Answer) Hooks {
		return Hooks{Approve: func([]*report.UnitReport) (Answer, error) { return a, nil }}
	}
	// Asked, a wave plans before any of it applies: a unit with nothing
	// to change then waits for its own apply gates, and what waits for it
	// plans through it (openUnchanged).
	commands := []struct {
		name  string
		opt   Settings
		hooks Hooks
	}{
		{"apply", Settings{Command: CmdApply, AutoApprove: true}, Hooks{}},
		{"apply, asked: yes", Settings{Command: CmdApply}, answer(AnswerYes)},
		{"apply, asked: no", Settings{Command: CmdApply}, answer(AnswerNo)},
		{"plan", Settings{Command: CmdPlan}, Hooks{}},
		{"destroy", Settings{Command: CmdDestroy, AutoApprove: true}, Hooks{}},
	}
	type outcome struct {
		fail, noChanges, external string
	}
	cases := 0
	for _, cfg := range barrierConfigs {
		p := schedulerRepo(t, cfg.config, cfg.dirs)
		var outcomes []outcome
		outcomes = append(outcomes, outcome{})
		stackOf := map[string]bool{}
		for _, d := range cfg.dirs {
			outcomes = append(outcomes, outcome{fail: d}, outcome{noChanges: d})
			// Every unit of a stack with nothing to change: its exit
			// barrier settles while they wait for their own apply gates.
			if len(d) > 1 && !stackOf[d[:1]] {
				stackOf[d[:1]] = true
				outcomes = append(outcomes, outcome{noChanges: d[:1] + "*"})
			}
		}
		outcomes = append(outcomes, outcome{external: cfg.dirs[0]}, outcome{external: cfg.dirs[len(cfg.dirs)-1]})
		for _, cmd := range commands {
			for _, oc := range outcomes {
				name := fmt.Sprintf("%s/%s/fail=%s,nochanges=%s,outside=%s", cfg.name, cmd.name, oc.fail, oc.noChanges, oc.external)
				var external []string
				if oc.external != "" {
					external = []string{oc.external}
				}
				got := [2]barrierOutcome{}
				for i, link := range []func(*runState){(*runState).link, linkPairs} {
					f := &stepJobs{fail: map[string]bool{}, noChanges: map[string]bool{}, opened: map[string]bool{}}
					if oc.fail != "" {
						f.fail[oc.fail+"@default"] = true
					}
					for _, d := range cfg.dirs {
						if d == oc.noChanges || (strings.HasSuffix(oc.noChanges, "*") && strings.HasPrefix(d, strings.TrimSuffix(oc.noChanges, "*"))) {
							f.noChanges[d+"@default"] = true
						}
					}
					opt := Options{Settings: cmd.opt, Hooks: cmd.hooks}
					opt.Parallelism = 1
					got[i] = runBarrierCase(t, p, opt, link, f, external)
				}
				cases++
				if !reflect.DeepEqual(got[0].log, got[1].log) {
					t.Errorf("%s: jobs on barriers:\n  %s\non unit pairs:\n  %s", name, strings.Join(got[0].log, "\n  "), strings.Join(got[1].log, "\n  "))
				}
				if !reflect.DeepEqual(got[0].statuses, got[1].statuses) {
					t.Errorf("%s: units on barriers:\n  %s\non unit pairs:\n  %s", name, lines(got[0].statuses), lines(got[1].statuses))
				}
				if len(got[0].log) == 0 {
					t.Errorf("%s: nothing ran", name)
				}
			}
		}
	}
	if cases < 300 {
		t.Errorf("only %d cases", cases)
	}
}

func lines(m map[string]string) string {
	var out []string
	for k, v := range m {
		out = append(out, k+": "+v)
	}
	sort.Strings(out)
	return strings.Join(out, "\n  ")
}

// TestBarrierGates: a rule between a stack of 40 units and one of 50 is
// a few gates, not 2,000, and a reason names the stack once it has more
// units than a line can list.
func TestBarrierGates(t *testing.T) {
	t.Parallel()
	var dirs []string
	for i := range 40 {
		dirs = append(dirs, fmt.Sprintf("a%02d", i))
	}
	for i := range 50 {
		dirs = append(dirs, fmt.Sprintf("b%02d", i))
	}
	config := `
stacks:
  names:
    staging: {tag_query: 'dir:a*'}
    prod: {tag_query: 'dir:b*', rules: {plan_after: [staging]}}
`
	r := schedulerRun(t, config, dirs, Options{Settings: Settings{Command: CmdApply, AutoApprove: true, Parallelism: 2}}, "a00")
	gates := 0
	for _, ur := range append(append([]*unitRun(nil), r.units...), r.barriers...) {
		gates += len(ur.out)
	}
	if want := 40 + 1 + 50; gates != want || len(r.barriers) != 2 {
		t.Errorf("%d gates over %d barriers, want %d over 2", gates, len(r.barriers), want)
	}
	f := &stepJobs{fail: map[string]bool{}, noChanges: map[string]bool{}, opened: map[string]bool{}}
	r.schedule(context.Background(), f.work())
	got := statusesOf(r)
	if want := "blocked (waits for a00@default to be applied)"; got["b07@default"] != want {
		t.Errorf("b07: %q, want %q", got["b07@default"], want)
	}
	r = schedulerRun(t, config, dirs, Options{Settings: Settings{Command: CmdPlan, Parallelism: 2}})
	f = &stepJobs{fail: map[string]bool{}, noChanges: map[string]bool{}, opened: map[string]bool{}}
	r.schedule(context.Background(), f.work())
	if want := "blocked (waits for stack staging (40 units) to be applied)"; statusesOf(r)["b07@default"] != want {
		t.Errorf("b07: %q, want %q", statusesOf(r)["b07@default"], want)
	}
}

// TestOneEndPerUnit: a unit that ends before anything runs (a pre hook
// failed, the controls deny it) skips what waits for it, and each unit
// ends once: one line each, and the count never passes the total.
func TestOneEndPerUnit(t *testing.T) {
	t.Parallel()
	config := `
stacks:
  names:
    a: {tag_query: 'dir:a*'}
    b: {tag_query: 'dir:b*', rules: {plan_after: [a]}}
`
	dirs := []string{"a1", "b1", "b2"}
	for name, set := range map[string]func(r *runState){
		"pre hook failed": func(r *runState) { r.hookFailure = "a pre hook failed" },
		"denied": func(r *runState) {
			for _, ur := range r.units {
				ur.refused = "not allowed"
			}
		},
	} {
		r := schedulerRun(t, config, dirs, Options{Settings: Settings{Command: CmdApply, AutoApprove: true}})
		var out bytes.Buffer
		r.con = console.New(&out, nil, false, false)
		set(r)
		f := &stepJobs{fail: map[string]bool{}, noChanges: map[string]bool{}, opened: map[string]bool{}}
		r.schedule(context.Background(), f.work())
		ends := 0
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.Contains(line, " done)") {
				ends++
				if strings.Contains(line, "(4/") || strings.Contains(line, "(5/") {
					t.Errorf("%s: the count passes the total: %q", name, line)
				}
			}
		}
		if ends != len(dirs) {
			t.Errorf("%s: %d final lines for %d units:\n%s", name, ends, len(dirs), out.String())
		}
		// Each ends for its own reason, not as skipped after another.
		for u, st := range statusesOf(r) {
			if !strings.HasPrefix(st, "failed") && !strings.HasPrefix(st, "denied") {
				t.Errorf("%s: %s %s", name, u, st)
			}
		}
	}
}

// TestWaveOnlyWhatCanApply: a plan whose apply waits for a unit not
// planned yet is not asked about with the wave that plans before it; it is
// asked about with that unit, once that unit planned.
func TestWaveOnlyWhatCanApply(t *testing.T) {
	t.Parallel()
	config := `
stacks:
  names:
    z: {tag_query: 'dir:z'}
    y: {tag_query: 'dir:y*', rules: {plan_after: [z]}}
    x: {tag_query: 'dir:x', rules: {apply_after: [y]}}
`
	var waves []string
	approve := func(units []*report.UnitReport) (Answer, error) {
		var names []string
		for _, u := range units {
			names = append(names, u.Name())
		}
		sort.Strings(names)
		waves = append(waves, strings.Join(names, " "))
		return AnswerYes, nil
	}
	r := schedulerRun(t, config, []string{"z", "y1", "y2", "x"}, Options{Settings: Settings{Command: CmdApply}, Hooks: Hooks{Approve: approve}})
	f := &stepJobs{fail: map[string]bool{}, noChanges: map[string]bool{}, opened: map[string]bool{}}
	r.schedule(context.Background(), f.work())
	want := []string{"z@default", "x@default y1@default y2@default"}
	if strings.Join(waves, "|") != strings.Join(want, "|") {
		t.Errorf("waves %q, want %q", waves, want)
	}
	for u, st := range statusesOf(r) {
		if st != string(report.StatusApplied) {
			t.Errorf("%s: %s", u, st)
		}
	}
}
