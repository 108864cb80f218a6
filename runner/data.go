package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/strata-iac/strata/stacks"
)

// Data between stacks (docs/behaviour.md#inputs-between-stacks) and prerequisites with freshness (docs/behaviour.md#prerequisites).

// producersOf lists the producers of the members' inputs, read as they
// stand when they are not members themselves.
func producersOf(p *stacks.Project, members []member) []*stacks.Unit {
	in := make(map[*stacks.Unit]bool, len(members))
	for _, m := range members {
		in[m.Unit] = true
	}
	var out []*stacks.Unit
	for _, m := range members {
		for _, input := range p.Inputs(m.Unit) {
			if !in[input.Producer] {
				in[input.Producer] = true
				out = append(out, input.Producer)
			}
		}
	}
	return out
}

// isProducer reports whether a unit's outputs feed a unit of the run.
func (r *runState) isProducer(ur *unitRun) bool {
	for _, c := range r.p.Consumers(ur.u) {
		if cu := r.byUnit[c]; cu != nil && !cu.role.outside() {
			return true
		}
	}
	return false
}

// readOutputs reads a producer's outputs (output -json, as a step of the
// producer) once, after its last apply in the run or as it stands.
func (j *job) readOutputs(ctx context.Context) {
	j.res.produced, _, j.res.producedErr = j.engineOutputs(ctx, j.ur.initArgs)
}

// jsonString is a JSON value as text: a string's content, anything else as
// written.
func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// inputValues are a consumer's input values, as JSON for the var file, or
// the reason one is missing.
func (r *runState) inputValues(ur *unitRun) (map[string]json.RawMessage, string) {
	vals, missing := r.someInputValues(ur)
	if len(missing) > 0 {
		return nil, missing[0].why
	}
	return vals, ""
}

// unsetInput is an input whose producer has no value for it, and why.
type unsetInput struct {
	input stacks.Input
	why   string
}

// someInputValues are the values a consumer's producers have, and the
// inputs they have none for, in variable order.
func (r *runState) someInputValues(ur *unitRun) (map[string]json.RawMessage, []unsetInput) {
	ins := r.p.Inputs(ur.u)
	if len(ins) == 0 {
		return nil, nil
	}
	vals := map[string]json.RawMessage{}
	var missing []unsetInput
	for _, in := range ins {
		prod := r.byUnit[in.Producer]
		if prod == nil || len(prod.produced) == 0 {
			// No outputs at all: no state yet.
			missing = append(missing, unsetInput{in, fmt.Sprintf("%s has no value (%s never applied)", in.From, in.Producer.Name())})
			continue
		}
		out, ok := prod.produced[in.Output]
		if !ok {
			missing = append(missing, unsetInput{in, fmt.Sprintf("%s has no value (%s has no output %s in its state)", in.From, in.Producer.Name(), in.Output)})
			continue
		}
		vals[in.Var] = out.Value
		if in.Sensitive {
			ur.masker.Add(jsonString(out.Value))
		}
	}
	return vals, missing
}

// inputReports are a unit's wired inputs for the report, sensitive values
// masked.
func (r *runState) inputReports(ur *unitRun) map[string]InputReport {
	out := map[string]InputReport{}
	for _, in := range r.p.Inputs(ur.u) {
		rep := InputReport{From: in.From}
		if prod := r.byUnit[in.Producer]; prod != nil && prod.produced != nil {
			if v, ok := prod.produced[in.Output]; ok {
				if in.Sensitive || v.Sensitive {
					rep.Value = "***"
				} else {
					var val any
					if json.Unmarshal(v.Value, &val) == nil {
						rep.Value = val
					}
				}
			}
		}
		out[in.Var] = rep
	}
	return out
}

// readExternalProducer reads the outputs of a producer outside the run, as
// it stands (before anything runs).
func (r *runState) readExternalProducer(ctx context.Context, ur *unitRun) {
	ur.phase, ur.status = phaseDone, StatusBlocked
	if ur.engine == nil {
		return
	}
	j := &job{r: r, ur: ur.unit}
	j.readOutputs(ctx)
	if j.res.producedErr == nil {
		ur.produced = j.res.produced
		ur.opened = true
	}
}

// prerequisites settles docs/behaviour.md#prerequisites before a command runs: for each stack of the
// run that requires another to have applied within a window, stale
// prerequisites join the run (apply, or plan when that stack auto-applies)
// to be applied even without changes, or the requiring units end blocked
// with the age in the reason. drift ignores prerequisites.
func prerequisites(p *stacks.Project, run *stacks.Run, opt Options, sd *StateDir) (add []stacks.RunUnit, force map[*stacks.Unit]bool, blocked map[*stacks.Unit]string, err error) {
	force, blocked = map[*stacks.Unit]bool{}, map[*stacks.Unit]string{}
	if opt.Command != CmdPlan && opt.Command != CmdApply {
		return nil, force, blocked, nil
	}
	now := opt.Now()
	seen := map[*stacks.Unit]bool{}
	type verdict struct {
		stale []*stacks.Unit
		age   string
	}
	// Each prerequisite is judged once, however many units require it.
	judged := map[stacks.StackPrerequisite]verdict{}
	for _, ru := range run.Units {
		for _, pr := range ru.Stack.Prerequisites {
			v, ok := judged[pr]
			if !ok {
				stale, age, err := stalePrerequisite(sd, pr, now)
				if err != nil {
					return nil, nil, nil, err
				}
				v = verdict{stale, age}
				judged[pr] = v
			}
			stale, age := v.stale, v.age
			if len(stale) == 0 {
				continue
			}
			if opt.Command == CmdPlan && !pr.Stack.AutoApply {
				blocked[ru.Unit] = fmt.Sprintf("%s %s (limit %s)", pr.Stack.Name, age, formatDuration(pr.Within))
				continue
			}
			for _, u := range stale {
				force[u] = true
				if !seen[u] && !run.Has(u) {
					seen[u] = true
					add = append(add, stacks.RunUnit{Unit: u, Why: "prerequisite_of: " + ru.Stack.Name})
				}
			}
		}
	}
	return add, force, blocked, nil
}

// stalePrerequisite returns the units of a prerequisite stack that have not
// applied within its window, and how long ago the stack last succeeded as a
// phrase ("last succeeded 3h ago", "never succeeded").
func stalePrerequisite(sd *StateDir, pr stacks.StackPrerequisite, now time.Time) ([]*stacks.Unit, string, error) {
	var stale []*stacks.Unit
	var oldest time.Time
	never := false
	for _, l := range pr.Stack.Leaves {
		for _, u := range l.Units {
			us, err := sd.ReadUnit(u)
			if err != nil {
				return nil, "", err
			}
			if us.Apply == nil || us.Apply.Result != StatusApplied {
				stale = append(stale, u)
				never = true
				continue
			}
			if now.Sub(us.Apply.At) > pr.Within {
				stale = append(stale, u)
			}
			if oldest.IsZero() || us.Apply.At.Before(oldest) {
				oldest = us.Apply.At
			}
		}
	}
	sort.Slice(stale, func(i, j int) bool { return stale[i].ID() < stale[j].ID() })
	if never || oldest.IsZero() {
		return stale, "never succeeded", nil
	}
	return stale, "last succeeded " + formatDuration(now.Sub(oldest)) + " ago", nil
}

// formatDuration prints a duration as people write windows: 3h, 1h30m, 2d.
func formatDuration(d time.Duration) string {
	d = d.Round(time.Minute)
	if d < time.Minute {
		return "under a minute"
	}
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	var b strings.Builder
	if days > 0 {
		fmt.Fprintf(&b, "%dd", days)
	}
	if h := d / time.Hour; h > 0 {
		fmt.Fprintf(&b, "%dh", h)
		d -= h * time.Hour
	}
	if m := d / time.Minute; m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	return b.String()
}

// readProducersNow reads, before drift plans everything at once, the
// outputs of every producer in the run as they stand: drift's inputs come
// from the producers' current state.
func (r *runState) readProducersNow(ctx context.Context) {
	for _, ur := range r.units {
		if !ur.role.outside() && ur.engine != nil && r.isProducer(ur) {
			j := &job{r: r, ur: ur.unit}
			j.readOutputs(ctx)
			ur.produced = j.res.produced
			ur.steps = append(ur.steps, j.res.steps...)
		}
	}
	for _, ur := range r.units {
		if !ur.role.outside() {
			vals, missing := r.inputValues(ur)
			if missing != "" {
				ur.preBlocked = missing
			}
			ur.inputVals = vals
		}
	}
}

// WithPrerequisites is run with the units its stale prerequisites bring in
// when it is applied (why: prerequisite_of: <stack>), as ls and graph show
// them. It reads the run state under stateDir (default <root>/.strata)
// and creates nothing there.
func WithPrerequisites(p *stacks.Project, run *stacks.Run, stateDir string, now time.Time) (*stacks.Run, error) {
	if stateDir == "" {
		stateDir = filepath.Join(p.Root, ".strata")
	}
	add, _, _, err := prerequisites(p, run, Options{Command: CmdApply, Now: func() time.Time { return now }}, &StateDir{Path: stateDir})
	if err != nil || len(add) == 0 {
		return run, err
	}
	out := *run
	out.Units = append(append([]stacks.RunUnit(nil), run.Units...), add...)
	return &out, nil
}
