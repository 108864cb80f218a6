// Package ci runs one strata command as many CI jobs that share a bucket
// (docs/ci.md): `ci start` plans the run once into a manifest of waves and
// shards, each `ci run` job runs its slice with the one-machine runner and
// records every unit's result, and `ci finish` writes the report of the
// whole run. Run state, saved plans, results and locks live in the bucket
// (internal/objstore), so no job needs another's disk.
package ci

import (
	"fmt"
	"time"

	"github.com/strata-iac/strata/controls"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/runstate"
)

// ManifestVersion is the layout of a manifest this strata writes. Version
// 2 added Keys: a job no longer splits unit IDs to find their records.
// Version 3 added readers (ManifestUnit.Reader): a job of an older strata
// would run them as members. Version 4 added the controls' decisions
// (ManifestUnit.Denied, AutoApplyDenied): a job of an older strata would
// run what they refuse. Version 5 keeps a rule between stacks once
// (Manifest.Stacks) instead of in every unit's After: a job of an older
// strata would run a unit before the stacks it waits for. Version 6 has
// each job mark its first attempt (runs/<id>/jobs/<wave>-<shard>.json), so
// that attempt reads no results of its own units and lists no applies
// begun: a job of an older strata, which marks nothing, would leave a
// retry of its shard thinking it the first. A version 5 manifest is still
// read, and its jobs read as before.
const ManifestVersion = 6

// oldestManifest is the oldest layout of a manifest this strata reads.
const oldestManifest = 5

// marksJobs says the run's jobs mark their first attempts (version 6).
func (m *Manifest) marksJobs() bool { return m.Version >= 6 }

// Manifest is a run planned by `ci start`: what runs, in which wave and
// shard, and with which options. It is written once, under
// runs/<id>/manifest.json, and never changed.
type Manifest struct {
	Version int       `json:"version"`
	Run     string    `json:"run"`
	Command string    `json:"command"`
	Created time.Time `json:"created"`
	// Commit is the commit the run was planned on, when known.
	Commit string `json:"commit,omitempty"`
	// Tree is the digest of the repository's tree the run was planned on
	// (stacks.Tree, stored beside the manifest): jobs on the same commit
	// build their project from it instead of reading every dir again.
	Tree string `json:"tree,omitempty"`
	// PR is the pull request a plan run locks its dirspaces for (0: none).
	PR int `json:"pr,omitempty"`
	// Link is where the run can be seen (the CI run's URL), for lock
	// holders and comments.
	Link    string          `json:"link,omitempty"`
	Options runner.Settings `json:"options"`
	// Shards is the most shards any wave is spread over.
	Shards int            `json:"shards"`
	Units  []ManifestUnit `json:"units"`
	// Gates are the IDs of units outside the run that its units wait for
	// (under --changed, the modified units the selection left out): they
	// open only when their run state shows them applied.
	Gates []string `json:"gates,omitempty"`
	// Keys are the bucket keys (unitKey) of the units the manifest names
	// by ID but does not list: its gates and, in a wave's part, the units
	// of earlier waves its units wait for. A unit ID cannot be split back
	// into its dir, workspace and stack, since both a dir and a workspace
	// may hold '@'.
	Keys map[string]string `json:"keys,omitempty"`
	// Denied names the units the controls refused at start
	// (stacks.Unit.Name), in every wave's part: a job that skips a unit
	// for one of them says it was denied, not that it failed.
	Denied []string `json:"denied,omitempty"`
	// ApplyStatus says whether ci finish sets the pull request's apply
	// status, as the config said at start.
	ApplyStatus controls.StatusSettings `json:"apply_status,omitzero"`
	// Automerge says whether ci finish merges the pull request after an
	// apply that left nothing to apply, as the config said at start.
	Automerge controls.Automerge `json:"automerge,omitzero"`
	// DriftIssues says whether ci finish of a drift run keeps an issue per
	// drifted unit: the config schedules drift.
	DriftIssues bool `json:"drift_issues,omitempty"`
	// CommentStrategy is what the run's comment does with strata's
	// earlier one: "" edits it in place; append, delete or minimize.
	CommentStrategy string `json:"comment_strategy,omitempty"`
	Waves           []Wave `json:"waves"`
	// Stacks are the run's stacks that a rule between stacks joins: each
	// unit of a stack waits for every unit of the stacks in its After.
	// A rule is kept once, not as an entry per pair of units
	// (docs/ci.md#waves-and-shards); a wave's part has only the stacks its
	// units are in and wait for.
	Stacks []ManifestStack `json:"stacks,omitempty"`
}

// ManifestStack is a stack of the run that a rule between stacks joins.
type ManifestStack struct {
	Name string `json:"name"`
	// After are the stacks of the run whose every unit each unit of this
	// stack waits for.
	After []string `json:"after,omitempty"`
	// Units are the IDs of the stack's units in the run, when a stack
	// waits for it.
	Units []string `json:"units,omitempty"`
}

// stackIndex finds the manifest's stacks by name.
func (m *Manifest) stackIndex() map[string]*ManifestStack {
	out := make(map[string]*ManifestStack, len(m.Stacks))
	for i := range m.Stacks {
		out[m.Stacks[i].Name] = &m.Stacks[i]
	}
	return out
}

// unitKeys maps the ID of every unit the manifest names to its bucket key.
func (m *Manifest) unitKeys() map[string]string {
	out := make(map[string]string, len(m.Units)+len(m.Keys))
	for _, u := range m.Units {
		out[u.ID] = u.key()
	}
	for id, k := range m.Keys {
		out[id] = k
	}
	return out
}

// refs are the units of ids with their bucket keys; an ID the manifest
// has no key for is an error (a manifest edited in the bucket).
func (m *Manifest) refs(ids []string) ([]runstate.Ref, error) {
	keys := m.unitKeys()
	out := make([]runstate.Ref, len(ids))
	for i, id := range ids {
		k, ok := keys[id]
		if !ok {
			return nil, fmt.Errorf("run %s: the manifest names unit %s without its key", m.Run, id)
		}
		out[i] = runstate.Ref{ID: id, Key: k}
	}
	return out, nil
}

// ManifestUnit is one unit of the run.
type ManifestUnit struct {
	// ID is dir@workspace#stack.
	ID        string `json:"id"`
	Dir       string `json:"dir"`
	Workspace string `json:"workspace"`
	Stack     string `json:"stack"`
	// Why the unit is in the run (selection, propagation, prerequisite).
	Why string `json:"why"`
	// Engine is the engine the unit chose at start, with its version
	// constraint, or "(from PATH)" when nothing names one.
	Engine string `json:"engine"`
	Wave   int    `json:"wave"`
	Shard  int    `json:"shard"`
	// After are the IDs of the units of the run this one waits for over
	// this command's edges between units (depends_on, inputs): each is in
	// an earlier wave. The stacks it waits for are its stack's After in
	// Manifest.Stacks.
	After []string `json:"after,omitempty"`
	// Reader marks a consumer outside the run of a unit the run may apply
	// (docs/ci.md#readers): its job runs it only when a producer's apply
	// changed an output it reads, and records it as not needed otherwise.
	Reader bool `json:"reader,omitempty"`
	// Denied says why the config's controls refuse the unit to the person
	// and pull request the run is for, decided once at start
	// (docs/controls.md#in-a-run): its job records it denied and runs
	// nothing. AutoApplyDenied says why they refuse its auto_apply: a
	// plan leaves it planned.
	Denied          string `json:"denied,omitempty"`
	AutoApplyDenied string `json:"auto_apply_denied,omitempty"`
	// Warnings are what the unit's report must say of how the controls
	// were read at start (docs/controls.md#the-default-branchs-controls).
	Warnings []string `json:"warnings,omitempty"`
	// NoLock: the unit's workflow says lock_policy none, and a pull
	// request's run takes no lock on it.
	NoLock bool `json:"no_lock,omitempty"`
}

// key is the unit's bucket key.
func (u ManifestUnit) key() string { return runstate.KeyOf(u.Dir, u.Workspace, u.Stack) }

// Wave is one wave: the shards that have units in it, in order.
type Wave struct {
	Wave   int   `json:"wave"`
	Shards []int `json:"shards"`
}

// hasSlice refuses a wave or shard the run does not have, naming the
// run's size: a job given a wrong number must not succeed having run
// nothing. A shard of the run's count with no units in the wave is no
// error: it has nothing to run.
func (m *Manifest) hasSlice(wave, shard int) error {
	if wave < 0 || wave >= len(m.Waves) {
		return fmt.Errorf("run %s has %s (0 to %d); --wave %d is none of them", m.Run, report.CountOf(len(m.Waves), "wave"), len(m.Waves)-1, wave)
	}
	if shard < 0 || shard >= max(m.Shards, 1) {
		return fmt.Errorf("run %s spreads each wave over at most %s (0 to %d); --shard %d is none of them", m.Run, report.CountOf(max(m.Shards, 1), "shard"), max(m.Shards, 1)-1, shard)
	}
	return nil
}

// Slice returns the units of one wave and shard, in manifest order.
func (m *Manifest) Slice(wave, shard int) []ManifestUnit {
	var out []ManifestUnit
	for _, u := range m.Units {
		if u.Wave == wave && u.Shard == shard {
			out = append(out, u)
		}
	}
	return out
}
