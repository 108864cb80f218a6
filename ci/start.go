package ci

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/controls"
	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// StartOptions shape `ci start`.
type StartOptions struct {
	// Run is the run's ID; a new one is made when empty. A start retried
	// with the same ID and the same units finds its manifest and goes on.
	Run    string
	Shards int
	// MaxWaves, when above 0, is the most waves the run may have: the
	// wave jobs of the GitHub workflow that starts it. A run that needs
	// more fails before it locks or writes anything.
	MaxWaves int
	// Destroy orders the graph as destroy does (destroy, or plan -destroy).
	Destroy bool
	// Options are the command's settings: its Command, what every job
	// runs with (the manifest carries them), and NoPropagate
	// (--no-propagate), which lists no readers: the run stays as
	// selected.
	Options runner.Settings
	// Gates are units outside the run that its units wait for (under
	// --changed, the modified units the selection left out).
	Gates []*stacks.Unit
	// Controls, when set, decides once what the config's controls refuse
	// of the manifest's units; every job follows it (ManifestUnit.Denied).
	Controls runner.ControlsFunc
	// ApplyStatus says whether ci finish sets the pull request's apply
	// status (controls.StatusSettings).
	ApplyStatus controls.StatusSettings
	// Automerge is the config's automerge (controls.Automerge).
	Automerge controls.Automerge
	// DriftIssues: the config schedules drift (Manifest.DriftIssues).
	DriftIssues bool
	// CommentStrategy is what the run's comment does with strata's
	// earlier one (forge.CommentStrategy), as the config says for the
	// run's units.
	CommentStrategy string
	PR              int
	Link            string
	Commit          string
	// Environ resolves ${var} engine versions (os.Environ() by the CLI).
	Environ []string
	Now     func() time.Time
}

// MaxShards is the most shards a wave is spread over: a GitHub Actions
// matrix holds at most 256 jobs.
const MaxShards = 256

// Start plans a run once (docs/ci.md#waves-and-shards): each unit's wave
// is the length of its longest chain of predecessors over the command's
// edges, so every predecessor is in an earlier wave; the units of a wave
// are spread over at most Shards shards, the longest remaining chains
// first, each to the shard with the fewest units so far. A plan or apply
// for a pull request first takes the PR's locks on every dirspace of the
// run. The manifest is written once.
func Start(ctx context.Context, st *objstore.Store, p *stacks.Project, run *stacks.Run, opt StartOptions) (*Manifest, error) {
	if opt.Shards < 1 || opt.Shards > MaxShards {
		return nil, fmt.Errorf("--shards %d: expected 1 to %d", opt.Shards, MaxShards)
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Run == "" {
		opt.Run = NewRunID(opt.Now())
	}
	units, why, readers := startUnits(p, run, opt)
	g, err := p.Graph(units, stacks.GraphOptions{Destroy: opt.Destroy})
	if err != nil {
		return nil, err
	}
	if err := fitsWaveJobs(opt, g); err != nil {
		return nil, err
	}
	m := newManifest(opt)
	refused := askControls(opt, units)
	if err := m.addUnits(p, g, opt, why, readers, refused); err != nil {
		return nil, err
	}
	m.Waves = wavesOf(m.Units)
	if opt.PR != 0 {
		if err := lockForPR(ctx, st, m); err != nil {
			return nil, err
		}
	}
	if m.Tree, err = putTree(ctx, st, m.Run, p.Tree()); err != nil {
		return nil, err
	}
	if m, err = writeManifest(ctx, st, m); err != nil {
		return nil, err
	}
	if err := putWaves(ctx, st, m); err != nil {
		return nil, err
	}
	return m, nil
}

// fitsWaveJobs refuses a run with more waves (layers of its graph, its
// readers' included) than opt.MaxWaves, naming both numbers and how to
// write a workflow that runs it (docs/ci.md#waves-on-github-actions).
func fitsWaveJobs(opt StartOptions, g *stacks.Graph) error {
	if opt.MaxWaves <= 0 {
		return nil
	}
	waves := 0
	for _, l := range g.Layer {
		waves = max(waves, l+1)
	}
	if waves <= opt.MaxWaves {
		return nil
	}
	return fmt.Errorf("run %s needs %d waves, more than --max-waves %d: the workflow strata ci emit github wrote has %s; write it again with strata ci emit github --max-waves %d or more (up to %d) and commit it",
		opt.Run, waves, opt.MaxWaves, report.CountOf(opt.MaxWaves, "wave job"), waves, MaxWaveJobs)
}

// startUnits decides the units of the manifest: the run's, each with why
// it runs, then the readers a job may pull in, which join the manifest in
// the waves after their producers (docs/ci.md#readers); a destroy has
// none.
func startUnits(p *stacks.Project, run *stacks.Run, opt StartOptions) ([]*stacks.Unit, map[*stacks.Unit]string, map[*stacks.Unit]bool) {
	units := make([]*stacks.Unit, len(run.Units))
	why := make(map[*stacks.Unit]string, len(run.Units))
	for i, ru := range run.Units {
		units[i] = ru.Unit
		why[ru.Unit] = ru.Why
	}
	readers := map[*stacks.Unit]bool{}
	if !opt.Destroy {
		ropt := runner.Options{Settings: opt.Options, Extra: runner.Extra{External: opt.Gates}}
		for _, u := range runner.Readers(p, run, ropt) {
			readers[u] = true
			units = append(units, u)
		}
	}
	return units, why, readers
}

// verdict is what the controls refuse of a run's units.
type verdict struct {
	denied, autoApply map[*stacks.Unit]string
	warnings          map[*stacks.Unit][]string
}

// askControls asks the controls, once, about every unit of the manifest,
// and about the apply of those a plan would auto-apply.
func askControls(opt StartOptions, units []*stacks.Unit) verdict {
	if opt.Controls == nil {
		return verdict{}
	}
	var auto []*stacks.Unit
	if pol, _ := command.Of(opt.Options.Command); pol.AutoApplies && !opt.Options.NoAutoApply {
		for _, u := range units {
			if u.AutoApplies() {
				auto = append(auto, u)
			}
		}
	}
	var v verdict
	v.denied, v.autoApply, v.warnings = opt.Controls(units, auto)
	return v
}

// newManifest decides a run's manifest before its units: the run, its
// command and options, and its gates, sorted, with their keys.
func newManifest(opt StartOptions) *Manifest {
	m := &Manifest{
		Version: ManifestVersion, Run: opt.Run, Command: opt.Options.Command, Created: opt.Now().UTC(),
		Commit: opt.Commit, PR: opt.PR, Link: opt.Link, Options: opt.Options, Shards: opt.Shards,
		ApplyStatus: opt.ApplyStatus, Automerge: opt.Automerge, DriftIssues: opt.DriftIssues, CommentStrategy: opt.CommentStrategy,
	}
	for _, u := range opt.Gates {
		m.Gates = append(m.Gates, u.ID())
		if m.Keys == nil {
			m.Keys = map[string]string{}
		}
		m.Keys[u.ID()] = runstate.UnitKey(u)
	}
	sort.Strings(m.Gates)
	return m
}

// addUnits decides each unit's entry in the manifest, in graph order: its
// wave (its layer), its shard, its engine, whether it is a reader, and
// the units it waits for.
func (m *Manifest) addUnits(p *stacks.Project, g *stacks.Graph, opt StartOptions, why map[*stacks.Unit]string, readers map[*stacks.Unit]bool, refused verdict) error {
	place := assignShards(g, opt.Shards)
	for _, u := range g.Units {
		c, err := runner.EngineChoice(p, u, opt.Environ)
		if err != nil {
			return err
		}
		engine := c.Name + " " + c.Version
		if c.OnPath() || c.Version == "" {
			engine = c.Name + " (from PATH)"
		}
		mu := ManifestUnit{ID: u.ID(), Dir: u.Dir, Workspace: u.Workspace, Stack: u.Stack.Name, Why: why[u],
			Engine: engine, Wave: g.Layer[u], Shard: place[u], Reader: readers[u],
			Denied: refused.denied[u], AutoApplyDenied: refused.autoApply[u], Warnings: refused.warnings[u], NoLock: !p.Locks(u)}
		for _, ei := range g.In(u) {
			mu.After = append(mu.After, g.Edges[ei].From.ID())
		}
		sort.Strings(mu.After)
		mu.After = slices.Compact(mu.After)
		m.Units = append(m.Units, mu)
		if mu.Denied != "" {
			m.Denied = append(m.Denied, u.Name())
		}
	}
	m.Stacks = manifestStacks(g)
	return nil
}

// manifestStacks are the graph's stacks that a stack edge joins, each
// with the stacks it waits for and, when one waits for it, its units.
func manifestStacks(g *stacks.Graph) []ManifestStack {
	var out []ManifestStack
	for _, s := range g.Stacks {
		in, outs := g.StackIn(s), g.StackOut(s)
		if len(in)+len(outs) == 0 {
			continue
		}
		ms := ManifestStack{Name: s.Name}
		for _, ei := range in {
			ms.After = append(ms.After, g.StackEdges[ei].From.Name)
		}
		slices.Sort(ms.After)
		ms.After = slices.Compact(ms.After)
		if len(outs) > 0 {
			for _, u := range g.UnitsOf(s) {
				ms.Units = append(ms.Units, u.ID())
			}
		}
		out = append(out, ms)
	}
	return out
}

// writeManifest writes a run's manifest once: a start retried with the
// same run ID and the same units goes on with the manifest written first;
// one with other units or another command is refused.
func writeManifest(ctx context.Context, st *objstore.Store, m *Manifest) (*Manifest, error) {
	err := putJSON(ctx, st, manifestKey(m.Run), m, true)
	if err == nil {
		return m, nil
	}
	if !errors.Is(err, objstore.ErrExists) {
		return nil, fmt.Errorf("writing the manifest of run %s: %w", m.Run, err)
	}
	prev, lerr := LoadManifest(ctx, st, m.Run)
	if lerr != nil {
		return nil, lerr
	}
	if !sameRun(prev, m) {
		return nil, fmt.Errorf("run %s already exists with other units or another command; expected a new run ID", m.Run)
	}
	return prev, nil
}

// NewRunID is a run ID that sorts by time: 20261123T101500Z-9f2c4e1a.
func NewRunID(now time.Time) string {
	b := make([]byte, 4)
	rand.Read(b)
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b)
}

// assignShards spreads each layer's units over at most n shards: the unit
// with the longest chain still ahead of it goes first, to the shard with
// the fewest units so far (ties to the lower shard), so the shards of a
// wave finish together and the critical path is never queued behind
// shorter work.
func assignShards(g *stacks.Graph, n int) map[*stacks.Unit]int {
	ahead := make(map[*stacks.Unit]int, len(g.Units))
	// aheadOf[s]: the longest chain ahead of any unit of s, found when a
	// stack waiting for s first asks; every unit of s is in a later layer
	// than every unit of a stack it waits for, so it is known by then.
	aheadOf := map[*stacks.Stack]int{}
	stackAhead := func(s *stacks.Stack) int {
		if a, ok := aheadOf[s]; ok {
			return a
		}
		best := 0
		for _, u := range g.UnitsOf(s) {
			best = max(best, ahead[u])
		}
		aheadOf[s] = best
		return best
	}
	order := g.Order()
	for i := len(order) - 1; i >= 0; i-- {
		u := order[i]
		best := 0
		for _, ei := range g.Out(u) {
			best = max(best, ahead[g.Edges[ei].To])
		}
		for _, ei := range g.StackOut(u.Stack) {
			best = max(best, stackAhead(g.StackEdges[ei].To))
		}
		ahead[u] = best + 1
	}
	byLayer := map[int][]*stacks.Unit{}
	for _, u := range g.Units {
		byLayer[g.Layer[u]] = append(byLayer[g.Layer[u]], u)
	}
	place := make(map[*stacks.Unit]int, len(g.Units))
	for _, us := range byLayer {
		sort.SliceStable(us, func(i, j int) bool {
			if ahead[us[i]] != ahead[us[j]] {
				return ahead[us[i]] > ahead[us[j]]
			}
			return us[i].ID() < us[j].ID()
		})
		load := make([]int, min(n, len(us)))
		for _, u := range us {
			best := 0
			for s := range load {
				if load[s] < load[best] {
					best = s
				}
			}
			load[best]++
			place[u] = best
		}
	}
	return place
}

// wavesOf lists each wave with the shards that have units in it.
func wavesOf(units []ManifestUnit) []Wave {
	shards := map[int]map[int]bool{}
	top := -1
	for _, u := range units {
		if shards[u.Wave] == nil {
			shards[u.Wave] = map[int]bool{}
		}
		shards[u.Wave][u.Shard] = true
		top = max(top, u.Wave)
	}
	waves := make([]Wave, top+1)
	for w := range waves {
		waves[w].Wave = w
		waves[w].Shards = []int{}
		for s := range shards[w] {
			waves[w].Shards = append(waves[w].Shards, s)
		}
		sort.Ints(waves[w].Shards)
	}
	return waves
}

func sameRun(a, b *Manifest) bool {
	if a.Command != b.Command || len(a.Units) != len(b.Units) {
		return false
	}
	for i := range a.Units {
		if a.Units[i].ID != b.Units[i].ID {
			return false
		}
	}
	return true
}
