package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
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

// isProducer reports whether a unit's outputs feed a unit of the run
// (readers, which may never join, aside: see linkReaders).
func (r *runState) isProducer(ur *unitRun) bool {
	for _, c := range r.p.Consumers(ur.Spec) {
		if cu := r.byUnit[c]; cu != nil && !cu.role.outside() && cu.role != RoleReader {
			return true
		}
	}
	return false
}

// Readers: a producer whose apply changes an output a consumer reads pulls
// that consumer into the run, after it (docs/behaviour.md#inputs-between-stacks).
// Every consumer that could be pulled is known before the run starts: it
// joins the graph as a reader (RoleReader), with its edges, and waits like
// any unit. When its plan gates open, its producers in the run have
// settled, and the coordinator decides (pullReader): it runs when one of
// them applied and changed an output it reads, and is dropped unseen
// otherwise, opening its gates as a unit outside the run would.

// Readers lists the consumers a command may pull into a run: those outside
// the run of the units it may apply, and, in turn, of those consumers when
// they may apply too; a gate (opt.External) keeps its role. cmd/strata
// mirrors their run state with --state; ci start puts them in the
// manifest.
func Readers(p *stacks.Project, run *stacks.Run, opt Options) []*stacks.Unit {
	members := make([]member, 0, len(run.Units)+len(opt.External))
	for _, ru := range run.Units {
		members = append(members, member{RunUnit: ru, role: RoleMember})
	}
	for _, u := range opt.External {
		members = append(members, member{RunUnit: stacks.RunUnit{Unit: u}, role: RoleGate})
	}
	return readersOf(p, run, opt, members)
}

func readersOf(p *stacks.Project, run *stacks.Run, opt Options, members []member) []*stacks.Unit {
	switch {
	case !policyOf(opt).FeedsReaders:
		return nil
	case opt.NoPropagate || run.DropIn || opt.ApplyFile != "" || opt.EngineArgs.Plan.Destroy || len(opt.Settled) > 0:
		// Drop-in works on its dir's units only, and a CI job on the
		// units its manifest gives it.
		return nil
	}
	mayApply := func(u *stacks.Unit) bool {
		if _, refused := opt.AutoApplyDenied[u]; refused {
			return false
		}
		return policyOf(opt).Applies || (!opt.NoAutoApply && u.AutoApplies())
	}
	in := make(map[*stacks.Unit]bool, len(members))
	var todo []*stacks.Unit
	for _, m := range members {
		in[m.Unit] = true
		if (m.role == RoleMember || m.role == RolePrerequisite) && mayApply(m.Unit) {
			todo = append(todo, m.Unit)
		}
	}
	var out []*stacks.Unit
	for len(todo) > 0 {
		u := todo[0]
		todo = todo[1:]
		for _, c := range p.Consumers(u) {
			if in[c] {
				continue
			}
			in[c] = true
			out = append(out, c)
			if mayApply(c) {
				todo = append(todo, c)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

// linkReaders records, on a unit whose consumers include readers, which
// of its outputs they read, and whether one of them also reads another
// unit of the run (then this unit's outputs are read even when it does not
// change: that other unit may pull the reader in).
func (r *runState) linkReaders(ur *unitRun) {
	for _, c := range r.p.Consumers(ur.Spec) {
		cu := r.byUnit[c]
		if cu == nil || cu.role != RoleReader {
			continue
		}
		for _, in := range r.p.Inputs(c) {
			if in.Producer == ur.Spec {
				if ur.readers == nil {
					ur.readers = map[string]bool{}
				}
				ur.readers[in.Output] = true
			} else if pu := r.byUnit[in.Producer]; pu != nil && !pu.role.outside() {
				ur.readerNeedsAll = true
			}
		}
	}
}

// readsFor reports whether a job's unit reads its outputs (output -json)
// once its job ends: for its consumers in the run always; for readers only
// when they may need them: it applied a change they read (or one whose
// outputs are not known), or a reader of it reads another unit of the run.
func (ur *unit) readsFor(applied bool, res *job.Result) bool {
	if ur.producer {
		return true
	}
	if len(ur.readers) == 0 {
		return false
	}
	if ur.readerNeedsAll {
		return true
	}
	if !applied {
		return false
	}
	known, changed := res.OutputsKnown, res.ChangedOutputs
	if !res.OutputsKnown && res.ChangedOutputs == nil {
		known, changed = ur.OutputsKnown, ur.ChangedOutputs
	}
	if !known {
		return true
	}
	for _, name := range changed {
		if ur.readers[name] {
			return true
		}
	}
	return false
}

// pullReader decides, when a reader's plan gates open, whether it joins
// the run: a producer of it applied in this command (or, in a CI job, in
// an earlier job of the run: RoleSettled, with what its apply changed as
// that job recorded it) and changed an output it reads. A producer whose
// changed outputs are not known (a saved plan recorded before strata read
// plans as JSON) pulls it unless the reader's journal shows it applied at
// the digest it would plan now.
func (r *runState) pullReader(ctx context.Context, w work, ur *unitRun) bool {
	type source struct {
		prod  *unitRun
		reads []string
	}
	var pulled, unknown []source
	add := func(list []source, prod *unitRun, from string) []source {
		for i := range list {
			if list[i].prod == prod {
				list[i].reads = append(list[i].reads, from)
				return list
			}
		}
		return append(list, source{prod, []string{from}})
	}
	for _, in := range r.p.Inputs(ur.Spec) {
		prod := r.byUnit[in.Producer]
		if prod == nil || prod.hidden() || prod.role == RoleGate || prod.role == RoleProducer || prod.status != report.StatusApplied {
			continue
		}
		switch {
		case !prod.OutputsKnown:
			unknown = add(unknown, prod, in.From)
		case slices.Contains(prod.ChangedOutputs, in.Output):
			pulled = add(pulled, prod, in.From)
		}
	}
	if len(pulled) == 0 && len(unknown) > 0 {
		r.readLazyProducers(ctx, w, ur)
		if !r.appliedAsNow(ur) {
			pulled = unknown
		}
	}
	if len(pulled) == 0 {
		return false
	}
	parts := make([]string, len(pulled))
	for i, s := range pulled {
		parts[i] = fmt.Sprintf("%s (%s)", s.prod.Spec.Name(), strings.Join(s.reads, ", "))
	}
	ur.pulled = true
	r.con.AddUnits(1)
	ur.why = "reads: " + strings.Join(parts, ", ")
	r.con.UnitNote(ur.Spec.Name(), fmt.Sprintf("joins the run: it %s, changed by its apply", strings.Replace(ur.why, "reads: ", "reads ", 1)))
	r.readLazyProducers(ctx, w, ur)
	return true
}

// readLazyProducers reads, as they stand, the producers of a reader that
// nothing read yet: producers outside the run that only readers need (see
// newRunState), readers that stayed out of it, and units settled by an
// earlier CI job whose outputs only readers read.
func (r *runState) readLazyProducers(ctx context.Context, w work, ur *unitRun) {
	for _, in := range r.p.Inputs(ur.Spec) {
		switch prod := r.byUnit[in.Producer]; {
		case prod == nil:
		case prod.lazy:
			prod.lazy = false
			w.outside(ctx, prod)
		case prod.hidden() && prod.phase == phaseDone && prod.produced == nil:
			r.readExternalProducer(ctx, prod)
		case prod.unreadSettled():
			r.readSettled(ctx, prod)
		}
	}
}

// unreadSettled reports a unit settled by an earlier CI job that opened
// its gates and whose outputs were not read: only readers read them, and
// only once one may need them.
func (ur *unitRun) unreadSettled() bool {
	return ur.role == RoleSettled && ur.opened && ur.produced == nil && ur.Engine != nil
}

// readSettled reads the outputs of a unit an earlier CI job settled, as
// they stand, for the units of this job that consume them; false when
// they cannot be read.
func (r *runState) readSettled(ctx context.Context, ur *unitRun) bool {
	res := r.jobs.ReadOutputs(ctx, ur.Unit)
	if res.ProducedErr != nil {
		return false
	}
	ur.produced = res.Produced
	return true
}

// appliedAsNow reports whether a reader's journal shows it applied at the
// digest it would plan with now, its inputs as its producers left them.
func (r *runState) appliedAsNow(ur *unitRun) bool {
	vals, missing := r.inputValues(ur)
	if missing != "" || ur.Engine == nil {
		return false
	}
	ur.InputVals = vals
	return r.jobs.AppliedAsNow(ur.Unit)
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
	ins := r.p.Inputs(ur.Spec)
	if len(ins) == 0 {
		return nil, nil
	}
	vals := map[string]json.RawMessage{}
	var missing []unsetInput
	for _, in := range ins {
		prod := r.byUnit[in.Producer]
		if prod != nil && ur.plannedAgainst(prod) {
			// Known by the producer's plan (planThrough).
			po := prod.planned[in.Output]
			vals[in.Var] = po.Value
			if in.Sensitive || po.Sensitive {
				ur.Masker.Add(job.JSONString(po.Value))
			}
			continue
		}
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
			ur.Masker.Add(job.JSONString(out.Value))
		}
	}
	return vals, missing
}

// inputReports are a unit's wired inputs for the report, sensitive values
// masked.
func (r *runState) inputReports(ur *unitRun) map[string]report.InputReport {
	out := map[string]report.InputReport{}
	for _, in := range r.p.Inputs(ur.Spec) {
		rep := report.InputReport{From: in.From}
		if prod := r.byUnit[in.Producer]; prod != nil && ur.plannedAgainst(prod) {
			if po := prod.planned[in.Output]; in.Sensitive || po.Sensitive {
				rep.Value = "***"
			} else {
				var val any
				if json.Unmarshal(po.Value, &val) == nil {
					rep.Value = val
				}
			}
		} else if prod := r.byUnit[in.Producer]; prod != nil && prod.produced != nil {
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
	ur.phase, ur.status = phaseDone, report.StatusBlocked
	if ur.Engine == nil || ur.readAsItStands {
		return
	}
	ur.readAsItStands = true
	res := r.jobs.ReadOutputs(ctx, ur.Unit)
	read := report.ProducerRead{Unit: ur.Spec.ID(), From: "engine"}
	if slices.ContainsFunc(res.Steps, func(s report.StepReport) bool { return s.Name == report.StepOutputRecord }) {
		read.From = "run state"
	}
	if res.ProducedErr != nil {
		read.Error = ur.Masker.Mask(job.ErrorText(res.ProducedErr))
	} else {
		ur.produced = res.Produced
		ur.opened = true
	}
	r.producerReads = append(r.producerReads, read)
}

// prerequisites settles docs/behaviour.md#prerequisites before a command runs: for each stack of the
// run that requires another to have applied within a window, stale
// prerequisites join the run (apply, or plan when that stack auto-applies)
// to be applied even without changes, or the requiring units end blocked
// with the age in the reason. drift takes them as plan does.
func prerequisites(p *stacks.Project, run *stacks.Run, opt Options, sd *runstate.StateDir) (add []stacks.RunUnit, force map[*stacks.Unit]bool, blocked map[*stacks.Unit]string, err error) {
	force, blocked = map[*stacks.Unit]bool{}, map[*stacks.Unit]string{}
	pol := policyOf(opt)
	if !pol.TakesPrerequisites {
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
			if !pol.Applies && !pr.Stack.AutoApply {
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
func stalePrerequisite(sd *runstate.StateDir, pr stacks.StackPrerequisite, now time.Time) ([]*stacks.Unit, string, error) {
	var stale []*stacks.Unit
	var oldest time.Time
	never := false
	for _, l := range pr.Stack.Leaves {
		for _, u := range l.Units {
			us, err := sd.ReadUnit(u)
			if err != nil {
				return nil, "", err
			}
			if us.Apply == nil || us.Apply.Result != report.StatusApplied {
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

// formatDuration prints a duration as people write windows: 3h, 1h30m,
// 2d; under a minute in seconds (45s), since a window can be that short.
func formatDuration(d time.Duration) string {
	if d < time.Minute-time.Second/2 {
		return fmt.Sprintf("%ds", max(0, d.Round(time.Second)/time.Second))
	}
	d = d.Round(time.Minute)
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
		switch {
		case ur.role == RoleProducer && !ur.lazy:
			// Outside the run, and read now too: its readers' inputs
			// are decided below, before anything runs.
			r.readExternalProducer(ctx, ur)
		case !ur.role.outside() && ur.Engine != nil && r.isProducer(ur):
			res := r.jobs.ReadOutputs(ctx, ur.Unit)
			ur.produced = res.Produced
			ur.steps = append(ur.steps, res.Steps...)
		}
	}
	for _, ur := range r.units {
		if !ur.role.outside() {
			vals, missing := r.inputValues(ur)
			if missing != "" {
				ur.preBlocked = missing
			}
			ur.InputVals = vals
		}
	}
}

// WithPrerequisites is run with the units its stale prerequisites bring in
// when it is applied (why: prerequisite_of: <stack>), as ls and graph show
// them. It reads the run state under stateDir (default <root>/.strata)
// and creates nothing there.
func WithPrerequisites(p *stacks.Project, run *stacks.Run, stateDir string, now time.Time) (*stacks.Run, error) {
	if stateDir == "" {
		stateDir = runstate.DefaultPath(p.Root)
	}
	add, _, _, err := prerequisites(p, run, Options{Settings: Settings{Command: command.Apply}, Extra: Extra{Now: func() time.Time { return now }}}, &runstate.StateDir{Path: stateDir})
	if err != nil || len(add) == 0 {
		return run, err
	}
	out := *run
	out.Units = append(append([]stacks.RunUnit(nil), run.Units...), add...)
	return &out, nil
}
