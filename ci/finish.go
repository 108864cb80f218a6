package ci

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks/config"
)

// reasonNoResult is the reason of a unit no job recorded.
const reasonNoResult = "no job recorded a result (its job did not run or did not finish)"

// reasonRefused is the reason of a unit whose recorded result was refused.
const reasonRefused = "its recorded result is refused: "

// whyReader is the why of a reader no job recorded.
const whyReader = "reader: joins when an apply of the run changes an output it reads"

// BuildReport assembles the report of a whole run from its manifest and
// the results its jobs recorded, in wave order: the report, summary and
// exit code a run on one machine would give. A unit with no result, or
// whose result was refused, is missing; a reader recorded as not needed is left out, as a run on one
// machine leaves out a reader that does not join (docs/ci.md#readers).
func BuildReport(ctx context.Context, st *objstore.Store, run string) (*report.Report, *Manifest, error) {
	m, results, refused, err := loadRun(ctx, st, run)
	if err != nil {
		return nil, nil, err
	}
	units := make([]*report.UnitReport, 0, len(m.Units))
	stackAt := m.stackIndex()
	finished := m.Created
	order := append([]ManifestUnit(nil), m.Units...)
	sort.SliceStable(order, func(i, j int) bool { return order[i].Wave < order[j].Wave })
	for _, mu := range order {
		r := results[mu.ID]
		if r != nil && r.NotNeeded {
			continue
		}
		if r == nil {
			why, reason := mu.Why, reasonNoResult
			if r, ok := refused[mu.ID]; ok {
				reason = reasonRefused + r
			}
			if mu.Reader {
				// Whether it had to join is not known.
				why = whyReader
			}
			_, instance, _ := config.SplitInstance(mu.Stack)
			units = append(units, &report.UnitReport{
				Dir: mu.Dir, Workspace: mu.Workspace, Stack: mu.Stack, StackPath: []string{mu.Stack}, StackInstance: instance,
				Why: why, Status: report.StatusMissing, Reason: reason, After: mu.After, AfterStacks: stackAfter(stackAt, mu.Stack), Layer: mu.Wave,
				Inputs: map[string]report.InputReport{}, Steps: []report.StepReport{},
			})
			continue
		}
		r.Unit.Log, r.Unit.After, r.Unit.AfterStacks, r.Unit.Layer = r.Log, mu.After, stackAfter(stackAt, mu.Stack), mu.Wave
		units = append(units, r.Unit)
		if _, end := r.span(); end.After(finished) {
			finished = end
		}
	}
	rep := report.NewReport(m.Command, m.Created, finished, units, m.Options.DetailedExitCode)
	rep.CI = nil
	if err := addHooks(ctx, st, m.Run, rep); err != nil {
		return nil, nil, err
	}
	// Each job estimated its own units' costs (docs/behaviour.md#cost-estimation).
	rep.SetCost("")
	return rep, m, nil
}

// addHooks puts what every job's hooks did in the run's report: their
// steps, each named after its job's wave and shard, and the first
// failure, which fails the run as it fails a run on one machine.
func addHooks(ctx context.Context, st *objstore.Store, run string, rep *report.Report) error {
	keys, err := st.List(ctx, hooksPrefix(run))
	if err != nil {
		return fmt.Errorf("listing the run's hooks: %w", err)
	}
	var recs []HooksRecord
	for _, k := range keys {
		var h HooksRecord
		if _, err := getJSON(ctx, st, k, &h); err != nil {
			return fmt.Errorf("reading the run's hooks: %w", err)
		}
		if h.Hooks != nil {
			recs = append(recs, h)
		}
	}
	sort.Slice(recs, func(i, j int) bool {
		return recs[i].Wave < recs[j].Wave || recs[i].Wave == recs[j].Wave && recs[i].Shard < recs[j].Shard
	})
	var steps []report.StepReport
	var failed error
	for _, h := range recs {
		where := fmt.Sprintf("wave %d shard %d: ", h.Wave, h.Shard)
		for _, s := range h.Hooks.Steps {
			s.Name = where + s.Name
			steps = append(steps, s)
		}
		if h.Hooks.Error != "" && failed == nil {
			failed = errors.New(where + h.Hooks.Error)
		}
	}
	rep.SetHooks(steps, failed)
	return nil
}

// loadRun reads a run's manifest and every result recorded, by unit ID,
// and the results refused, by unit ID, with why.
func loadRun(ctx context.Context, st *objstore.Store, run string) (*Manifest, map[string]*Result, map[string]string, error) {
	m, err := LoadManifest(ctx, st, run)
	if err != nil {
		return nil, nil, nil, err
	}
	refs := make([]runstate.Ref, len(m.Units))
	for i, mu := range m.Units {
		refs[i] = runstate.Ref{ID: mu.ID, Key: mu.key()}
	}
	results, refused, err := loadResults(ctx, st, m.Run, refs)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading the results of run %s: %w", run, err)
	}
	return m, results, refused, nil
}

// stackAfter are the stacks the stack of that name waits for.
func stackAfter(stackAt map[string]*ManifestStack, name string) []string {
	if ms := stackAt[name]; ms != nil {
		return ms.After
	}
	return nil
}
