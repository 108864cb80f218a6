package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-iac/strata/console"
	"github.com/strata-iac/strata/internal/safepath"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// The scheduler, tested with jobs that run no engine: gates, skip chains,
// fail-fast, shared dirs, approval waves, gates outside the run, priority
// and the worker bound.

// fakeJobs records what the scheduler starts and answers as told.
type fakeJobs struct {
	mu            sync.Mutex
	log           []string // "start plan a@default", "end apply b@default", …
	running       int
	maxRunning    int
	runningIn     map[string]int
	sharedOverlap bool
	fail          map[string]bool // unit name -> its plan fails
	noChanges     map[string]bool // unit name -> its plan has no changes
	opened        map[string]bool // unit outside the run -> applied at its digest
	// processes counts the jobs between their start and their hand-off
	// (or their end, when they hand nothing on): those whose process
	// would run; maxProcesses is its peak, handOffs the hand-offs made.
	processes, maxProcesses, handOffs int
	// afterHandOff, when set, is what a job does between its hand-off
	// and its end: its bookkeeping.
	afterHandOff func(name string)
}

func newFakeJobs() *fakeJobs {
	return &fakeJobs{runningIn: map[string]int{}, fail: map[string]bool{}, noChanges: map[string]bool{}, opened: map[string]bool{}}
}

var kindNames = map[job.Kind]string{job.Plan: "plan", job.Apply: "apply", job.PlanApply: "plan+apply"}

func (f *fakeJobs) work() work {
	return work{job: f.job, outside: f.outside}
}

// job is a fake job: it starts, its "process" runs a few milliseconds,
// and one that ended well hands its slot on when it may (as a real job
// does once its last process ended), then ends.
func (f *fakeJobs) job(ctx context.Context, ur *unit, kind job.Kind, handOff func()) job.Result {
	name := ur.Spec.Name()
	f.mu.Lock()
	f.log = append(f.log, "start "+kindNames[kind]+" "+name)
	f.running++
	f.maxRunning = max(f.maxRunning, f.running)
	f.processes++
	f.maxProcesses = max(f.maxProcesses, f.processes)
	f.runningIn[ur.Spec.Dir]++
	if f.runningIn[ur.Spec.Dir] > 1 {
		f.sharedOverlap = true
	}
	f.mu.Unlock()
	// Long enough for jobs that may overlap to do so.
	time.Sleep(3 * time.Millisecond)
	f.mu.Lock()
	fail, none := f.fail[name], f.noChanges[name]
	handsOff := handOff != nil && !fail
	if handsOff {
		f.log = append(f.log, "hand-off "+kindNames[kind]+" "+name)
		f.processes--
		f.handOffs++
	}
	f.mu.Unlock()
	if handsOff {
		handOff()
		if f.afterHandOff != nil {
			f.afterHandOff(name)
		}
	}
	f.mu.Lock()
	f.log = append(f.log, "end "+kindNames[kind]+" "+name)
	f.running--
	if !handsOff {
		f.processes--
	}
	f.runningIn[ur.Spec.Dir]--
	f.mu.Unlock()
	switch {
	case fail:
		return job.Result{Err: errors.New("boom"), FailedStep: report.StepPlan}
	case kind == job.Apply:
		return job.Result{}
	case none:
		return job.Result{}
	case kind == job.PlanApply:
		return job.Result{Applied: true, HasChanges: true, Changes: report.Changes{Add: 1}}
	}
	return job.Result{HasChanges: true, Changes: report.Changes{Add: 1}}
}

func (f *fakeJobs) outside(_ context.Context, ur *unitRun) {
	ur.phase, ur.status = phaseDone, report.StatusBlocked
	f.mu.Lock()
	defer f.mu.Unlock()
	ur.opened = f.opened[ur.Spec.Name()]
}

// index is the position of an entry in the log, -1 when absent.
func (f *fakeJobs) index(entry string) int {
	for i, e := range f.log {
		if e == entry {
			return i
		}
	}
	return -1
}

// before reports whether entry a is in the log before entry b.
func (f *fakeJobs) before(t *testing.T, a, b string) {
	t.Helper()
	ia, ib := f.index(a), f.index(b)
	if ia < 0 || ib < 0 || ia > ib {
		t.Errorf("want %q before %q in\n%s", a, b, strings.Join(f.log, "\n"))
	}
}

// schedulerRun builds a run of a repository whose dirs each hold a module,
// as a command would, but with no engine: the scheduler gets fake jobs.
func schedulerRun(t *testing.T, config string, dirs []string, opt Options, external ...string) *runState {
	t.Helper()
	return schedulerRunLinked(t, config, dirs, opt, (*runState).link, external...)
}

// schedulerRunLinked is schedulerRun with the gates linked by link.
func schedulerRunLinked(t *testing.T, config string, dirs []string, opt Options, link func(*runState), external ...string) *runState {
	t.Helper()
	return newSchedulerRun(t, schedulerRepo(t, config, dirs), opt, link, external...)
}

// schedulerRepo loads a repository whose dirs each hold a module.
func schedulerRepo(t *testing.T, config string, dirs []string) *stacks.Project {
	t.Helper()
	files := map[string]string{"strata.yml": config}
	for _, d := range dirs {
		files[d+"/main.tf"] = ""
	}
	root := testenv.WriteRepo(t, files)
	p, err := stacks.Load(root, filepath.Join(root, "strata.yml"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newSchedulerRun builds a run of every unit of p, with the gates linked
// by link, and no engine.
func newSchedulerRun(t testing.TB, p *stacks.Project, opt Options, link func(*runState), external ...string) *runState {
	t.Helper()
	run, err := p.Select(stacks.Selection{Cwd: "."})
	if err != nil {
		t.Fatal(err)
	}
	var members []member
	var units []*stacks.Unit
	for _, ru := range run.Units {
		role := RoleMember
		if contains(external, ru.Dir) {
			role = RoleGate
		}
		members = append(members, member{RunUnit: ru, role: role})
		units = append(units, ru.Unit)
	}
	g, err := p.Graph(units, stacks.GraphOptions{Destroy: opt.Command == CmdDestroy})
	if err != nil {
		t.Fatal(err)
	}
	if opt.Parallelism == 0 {
		opt.Parallelism = 4
	}
	opt.Now, opt.Console = time.Now, io.Discard
	sd, err := runstate.OpenStateDir(filepath.Join(t.TempDir(), ".strata"))
	if err != nil {
		t.Fatal(err)
	}
	base, err := safepath.NewBase(p.Root)
	if err != nil {
		t.Fatal(err)
	}
	r := &runState{p: p, root: base, g: g, opt: opt, policy: policyOf(opt), sd: sd, con: console.New(io.Discard, nil, false, false)}
	for _, ru := range members {
		ur := &unitRun{unit: &unit{Unit: &job.Unit{Spec: ru.Unit}}, why: ru.Why, status: report.StatusPending, role: ru.role}
		ur.AutoApply = ru.Stack.AutoApply
		r.units = append(r.units, ur)
		if err := r.setup(ur, ""); err != nil {
			t.Fatal(err)
		}
	}
	link(r)
	return r
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func statusesOf(r *runState) map[string]string {
	out := map[string]string{}
	for _, ur := range r.units {
		if ur.role.outside() {
			continue
		}
		s := string(ur.status)
		if ur.reason != "" {
			s += " (" + ur.reason + ")"
		}
		out[ur.Spec.Name()] = s
	}
	return out
}

const layers = `dirs:
  a: {tags: [a]}
  b: {tags: [b]}
  c: {tags: [c]}
  d: {tags: [d]}
  e: {tags: [e]}
stacks:
  names:
    a: {tag_query: a}
    b:
      tag_query: b
      rules: {plan_after: [a]}
    c:
      tag_query: c
      rules: {apply_after: [a]}
    d:
      tag_query: d
      rules: {plan_after: [b]}
    e: {tag_query: e}
`

var layerDirs = []string{"a", "b", "c", "d", "e"}

// TestSchedulerGates: a plan edge holds a plan until the other unit is
// applied; an apply edge holds only the apply. Under -auto-approve a unit
// whose apply gates are open applies in one job.
func TestSchedulerGates(t *testing.T) {
	r := schedulerRun(t, layers, layerDirs, Options{Settings: Settings{Command: CmdApply, AutoApprove: true}})
	f := newFakeJobs()
	r.schedule(context.Background(), f.work())
	for name, st := range statusesOf(r) {
		if st != string(report.StatusApplied) {
			t.Errorf("%s: %s", name, st)
		}
	}
	f.before(t, "end plan+apply a@default", "start plan+apply b@default")
	f.before(t, "end plan+apply b@default", "start plan+apply d@default")
	// c plans without waiting (its apply gate is closed, so plan and apply
	// are two jobs), and applies after a.
	if f.index("start plan c@default") < 0 {
		t.Errorf("c was not planned on its own:\n%s", strings.Join(f.log, "\n"))
	}
	f.before(t, "end plan+apply a@default", "start apply c@default")
}

// TestSchedulerSkipChain: a failure skips every unit waiting for it,
// directly or not, naming the root cause; independent units go on.
func TestSchedulerSkipChain(t *testing.T) {
	r := schedulerRun(t, layers, layerDirs, Options{Settings: Settings{Command: CmdApply, AutoApprove: true}})
	f := newFakeJobs()
	f.fail["a@default"] = true
	r.schedule(context.Background(), f.work())
	want := map[string]string{
		"a@default": "failed (plan failed: boom)",
		"b@default": "skipped (a@default failed)",
		"d@default": "skipped (a@default failed)",
		"e@default": "applied",
	}
	got := statusesOf(r)
	for name, st := range want {
		if got[name] != st {
			t.Errorf("%s: %q, want %q", name, got[name], st)
		}
	}
	// c planned before a failed, or is skipped: either way it never applies.
	if strings.HasPrefix(got["c@default"], string(report.StatusApplied)) || f.index("start apply c@default") >= 0 {
		t.Errorf("c applied after a failed: %s", got["c@default"])
	}
	if f.index("start plan+apply b@default") >= 0 || f.index("start plan b@default") >= 0 {
		t.Errorf("b ran after a failed")
	}
}

// TestSchedulerFailFast: after the first failure nothing new starts; the
// units not started are cancelled, saying why.
func TestSchedulerFailFast(t *testing.T) {
	r := schedulerRun(t, layers, layerDirs, Options{Settings: Settings{Command: CmdApply, AutoApprove: true, FailFast: true, Parallelism: 1}})
	f := newFakeJobs()
	f.fail["a@default"] = true
	r.schedule(context.Background(), f.work())
	got := statusesOf(r)
	if got["a@default"] != "failed (plan failed: boom)" {
		t.Errorf("a: %s", got["a@default"])
	}
	cancelled := 0
	for _, st := range got {
		if st == "cancelled (not started: --fail-fast after a failure)" {
			cancelled++
		}
	}
	if cancelled == 0 || len(f.log) != 2 {
		t.Errorf("after a failed: %v, log %v", got, f.log)
	}
}

// TestSchedulerSharedDir: units sharing a dir never run jobs at once.
func TestSchedulerSharedDir(t *testing.T) {
	config := `dirs:
  shared: {tags: [x, y], shared_state: true}
stacks:
  allow_workspace_in_multiple_stacks: true
  names:
    x: {tag_query: x}
    y: {tag_query: y}
    z: {tag_query: x}
`
	for i := 0; i < 5; i++ {
		r := schedulerRun(t, config, []string{"shared"}, Options{Settings: Settings{Command: CmdPlan, Parallelism: 4}})
		f := newFakeJobs()
		r.schedule(context.Background(), f.work())
		if len(r.units) != 3 || f.sharedOverlap {
			t.Fatalf("%d units, overlap %t:\n%s", len(r.units), f.sharedOverlap, strings.Join(f.log, "\n"))
		}
	}
}

// TestSchedulerApprovalWaves: plans are asked about once per wave as they
// become ready, each wave the plans that can apply in it (c applies after
// a, asked with it); "all" approves every later wave.
func TestSchedulerApprovalWaves(t *testing.T) {
	for _, tc := range []struct {
		answer Answer
		waves  [][]string
		status string
	}{
		{AnswerYes, [][]string{{"a@default", "c@default", "e@default"}, {"b@default"}, {"d@default"}}, string(report.StatusApplied)},
		{AnswerAll, [][]string{{"a@default", "c@default", "e@default"}}, string(report.StatusApplied)},
		{AnswerNo, [][]string{{"a@default", "c@default", "e@default"}}, string(report.StatusPlanned)},
	} {
		t.Run(fmt.Sprint(tc.answer), func(t *testing.T) {
			var waves [][]string
			approve := func(units []*report.UnitReport) (Answer, error) {
				var names []string
				for _, u := range units {
					names = append(names, u.Name())
				}
				sort.Strings(names)
				waves = append(waves, names)
				return tc.answer, nil
			}
			r := schedulerRun(t, layers, layerDirs, Options{Settings: Settings{Command: CmdApply}, Hooks: Hooks{Approve: approve}})
			r.schedule(context.Background(), newFakeJobs().work())
			if !reflect.DeepEqual(waves, tc.waves) {
				t.Errorf("waves %v, want %v", waves, tc.waves)
			}
			if st := statusesOf(r)["a@default"]; !strings.HasPrefix(st, tc.status) {
				t.Errorf("a: %s, want %s", st, tc.status)
			}
		})
	}
}

// TestSchedulerOutsideGate: a unit outside the run (under --changed, or
// left planned by a resumed report) opens its dependents' gate only when
// settled as applied.
func TestSchedulerOutsideGate(t *testing.T) {
	for _, opened := range []bool{false, true} {
		r := schedulerRun(t, layers, layerDirs, Options{Settings: Settings{Command: CmdPlan}}, "a")
		f := newFakeJobs()
		f.opened["a@default"] = opened
		r.schedule(context.Background(), f.work())
		got := statusesOf(r)
		want := "blocked (waits for a@default to be applied)"
		if opened {
			want = string(report.StatusPlanned)
		}
		if got["b@default"] != want || got["c@default"] != string(report.StatusPlanned) {
			t.Errorf("a opened %t: %v", opened, got)
		}
	}
}

// TestSchedulerPriority: with one worker, the unit with the longest
// remaining path goes first.
func TestSchedulerPriority(t *testing.T) {
	r := schedulerRun(t, layers, layerDirs, Options{Settings: Settings{Command: CmdPlan, Parallelism: 1}})
	f := newFakeJobs()
	f.noChanges["a@default"], f.noChanges["b@default"] = true, true
	r.schedule(context.Background(), f.work())
	if len(f.log) == 0 || f.log[0] != "start plan a@default" {
		t.Errorf("first job: %v", f.log)
	}
	f.before(t, "end plan b@default", "start plan c@default")
}

// wideRepo is the config and dirs of n independent units.
func wideRepo(n int) (string, []string) {
	var dirs []string
	config := "dirs:\n"
	for i := 0; i < n; i++ {
		d := fmt.Sprintf("u%02d", i)
		dirs = append(dirs, d)
		config += "  " + d + ": {tags: [u]}\n"
	}
	return config, dirs
}

// TestSchedulerWorkerBound: never more processes at once than
// --parallelism, and never more jobs than twice that (a job that handed
// its slot on still writing its records).
func TestSchedulerWorkerBound(t *testing.T) {
	config, dirs := wideRepo(12)
	r := schedulerRun(t, config, dirs, Options{Settings: Settings{Command: CmdPlan, Parallelism: 3}})
	f := newFakeJobs()
	f.afterHandOff = func(string) { time.Sleep(2 * time.Millisecond) }
	r.schedule(context.Background(), f.work())
	if f.maxProcesses > 3 || f.maxProcesses < 2 || f.maxRunning > 6 || f.handOffs != 12 || len(f.log) != 36 {
		t.Errorf("max %d processes and %d jobs at once, %d hand-offs, %d log entries", f.maxProcesses, f.maxRunning, f.handOffs, len(f.log))
	}
}

// TestSchedulerHandOff: a job that handed its slot on lets the next job
// start before it ends, so a slot never waits for a job's bookkeeping;
// at -j 1, under --fail-fast and for a unit whose outputs are read after
// its steps, a job keeps its slot to its end.
func TestSchedulerHandOff(t *testing.T) {
	// waitForNext makes each job's bookkeeping last until another job has
	// started since its hand-off (or none is left to start): it ends only
	// if the scheduler starts the next job before the last one ends.
	waitForNext := func(f *fakeJobs, n int) func(string) {
		return func(string) {
			f.mu.Lock()
			starts := f.startsLocked()
			f.mu.Unlock()
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				f.mu.Lock()
				now := f.startsLocked()
				f.mu.Unlock()
				if now > starts || now == n {
					return
				}
				time.Sleep(time.Millisecond)
			}
			f.mu.Lock()
			f.log = append(f.log, "no job started meanwhile")
			f.mu.Unlock()
		}
	}
	t.Run("hands on", func(t *testing.T) {
		config, dirs := wideRepo(8)
		r := schedulerRun(t, config, dirs, Options{Settings: Settings{Command: CmdApply, AutoApprove: true, Parallelism: 2}})
		f := newFakeJobs()
		f.afterHandOff = waitForNext(f, 8)
		r.schedule(context.Background(), f.work())
		for name, st := range statusesOf(r) {
			if st != string(report.StatusApplied) {
				t.Errorf("%s: %s", name, st)
			}
		}
		if f.handOffs != 8 || f.maxProcesses > 2 || f.maxRunning > 4 {
			t.Errorf("%d hand-offs, at most %d processes and %d jobs at once; want 8, 2 and 4", f.handOffs, f.maxProcesses, f.maxRunning)
		}
		// Each job's bookkeeping ended only once another job had started
		// after its hand-off (or none was left): a job started while one
		// that handed its slot on had not ended.
		overlapped := false
		for i, e := range f.log {
			name, ok := strings.CutPrefix(e, "hand-off ")
			if !ok {
				continue
			}
			end := slices.Index(f.log, "end "+name)
			if end > i && slices.ContainsFunc(f.log[i:end], func(e string) bool { return strings.HasPrefix(e, "start ") }) {
				overlapped = true
			}
		}
		if !overlapped || slices.Contains(f.log, "no job started meanwhile") {
			t.Errorf("no job started while one that handed its slot on ended its bookkeeping:\n%s", strings.Join(f.log, "\n"))
		}
	})
	for _, tc := range []struct {
		name string
		opt  Settings
		read bool
	}{
		{"-j 1", Settings{Command: CmdApply, AutoApprove: true, Parallelism: 1}, false},
		{"fail-fast", Settings{Command: CmdApply, AutoApprove: true, Parallelism: 2, FailFast: true}, false},
		{"outputs read", Settings{Command: CmdApply, AutoApprove: true, Parallelism: 2}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config, dirs := wideRepo(4)
			r := schedulerRun(t, config, dirs, Options{Settings: tc.opt})
			if tc.read {
				for _, ur := range r.units {
					ur.readers = map[string]bool{"id": true}
				}
			}
			f := newFakeJobs()
			r.schedule(context.Background(), f.work())
			if f.handOffs != 0 || f.maxProcesses > tc.opt.Parallelism || f.maxRunning > tc.opt.Parallelism {
				t.Errorf("%d hand-offs, at most %d processes and %d jobs at once; want none, and at most %d", f.handOffs, f.maxProcesses, f.maxRunning, tc.opt.Parallelism)
			}
		})
	}
}

// startsLocked counts the jobs started; f.mu is held.
func (f *fakeJobs) startsLocked() int {
	n := 0
	for _, e := range f.log {
		if strings.HasPrefix(e, "start ") {
			n++
		}
	}
	return n
}

// TestSchedulerSettled: units an earlier job of a CI run settled hold
// their gates as that job left them: applied opens them, failed or
// skipped skips the units waiting (naming the root cause), anything else
// holds them, exactly as if the unit had ended so in this run.
func TestSchedulerSettled(t *testing.T) {
	tests := []struct {
		name    string
		command string
		status  report.Status
		cause   string
		want    map[string]string
	}{
		{"applied", CmdApply, report.StatusApplied, "", map[string]string{
			"b@default": "applied", "c@default": "applied", "d@default": "applied", "e@default": "applied"}},
		{"no changes", CmdApply, report.StatusNoChanges, "", map[string]string{
			"b@default": "applied", "c@default": "applied", "d@default": "applied", "e@default": "applied"}},
		{"failed", CmdApply, report.StatusFailed, "", map[string]string{
			"b@default": "skipped (a@default failed)", "c@default": "skipped (a@default failed)", "d@default": "skipped (a@default failed)", "e@default": "applied"}},
		{"skipped", CmdApply, report.StatusSkipped, "z@default", map[string]string{
			"b@default": "skipped (z@default failed)", "c@default": "skipped (z@default failed)", "d@default": "skipped (z@default failed)", "e@default": "applied"}},
		{"planned", CmdApply, report.StatusPlanned, "", map[string]string{
			"b@default": "blocked (waits for a@default to be applied)", "c@default": "planned (waits for a@default to be applied)",
			"d@default": "blocked (waits for b@default to be applied)", "e@default": "applied"}},
		{"failed, plan", CmdPlan, report.StatusFailed, "", map[string]string{
			// In plan an apply edge holds only the apply: c still plans.
			"b@default": "skipped (a@default failed)", "c@default": "planned", "d@default": "skipped (a@default failed)", "e@default": "planned"}},
		{"cancelled, plan", CmdPlan, report.StatusCancelled, "", map[string]string{
			"b@default": "blocked (waits for a@default to be applied)", "c@default": "planned",
			"d@default": "blocked (waits for b@default to be applied)", "e@default": "planned"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := schedulerRun(t, layers, []string{"a", "b", "c", "d", "e"}, Options{Settings: Settings{Command: tt.command, AutoApprove: true}}, "a")
			for _, ur := range r.units {
				if ur.Spec.Dir == "a" {
					ur.role, ur.status, ur.rootCause = RoleSettled, tt.status, tt.cause
				}
			}
			done := map[string]string{}
			r.opt.UnitDone = func(u *stacks.Unit, rep *report.UnitReport) {
				if _, twice := done[u.Name()]; twice {
					t.Errorf("%s ended twice", u.Name())
				}
				done[u.Name()] = string(rep.Status)
			}
			f := newFakeJobs()
			w := f.work()
			w.outside = func(ctx context.Context, ur *unitRun) { r.settle(ctx, ur) }
			r.schedule(context.Background(), w)
			got := statusesOf(r)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
			// Every unit of the run is reported once, as it ends, with its
			// final status; the settled unit is not.
			for name, s := range got {
				if !strings.HasPrefix(s, done[name]) || done[name] == "" {
					t.Errorf("%s: UnitDone saw %q, the run ended %q", name, done[name], s)
				}
			}
			if _, ok := done["a@default"]; ok {
				t.Error("UnitDone called for the settled unit")
			}
			if f.index("start plan a@default") >= 0 || f.index("start plan+apply a@default") >= 0 {
				t.Error("a settled unit ran")
			}
		})
	}
}

// TestReadingCommandsRunEveryUnit: init, validate and output wait for no
// one, so a unit that failed skips nothing: every other unit still runs.
func TestReadingCommandsRunEveryUnit(t *testing.T) {
	for _, cmd := range []string{CmdInit, CmdValidate, CmdOutput} {
		t.Run(cmd, func(t *testing.T) {
			r := schedulerRun(t, layers, layerDirs, Options{Settings: Settings{Command: cmd, Parallelism: 1}})
			f := newFakeJobs()
			f.fail["a@default"] = true
			r.schedule(context.Background(), f.work())
			want := map[string]string{
				"a@default": string(report.StatusFailed) + " (plan failed: boom)",
				"b@default": string(report.StatusSucceeded), "c@default": string(report.StatusSucceeded),
				"d@default": string(report.StatusSucceeded), "e@default": string(report.StatusSucceeded),
			}
			if got := statusesOf(r); !reflect.DeepEqual(got, want) {
				t.Errorf("statuses %v, want %v", got, want)
			}
		})
	}
}

// TestSchedulerAllAtOnce: with -j 0 every ready unit runs at once. Each job
// waits until all twelve are running, so a bound below twelve never lets
// them all start and the jobs give up (after a minute, not a measure of
// speed: it only keeps a broken scheduler from hanging the test).
func TestSchedulerAllAtOnce(t *testing.T) {
	t.Parallel()
	const n = 12
	var dirs []string
	config := "dirs:\n"
	for i := 0; i < n; i++ {
		d := fmt.Sprintf("u%02d", i)
		dirs = append(dirs, d)
		config += "  " + d + ": {tags: [u]}\n"
	}
	r := schedulerRun(t, config, dirs, Options{Settings: Settings{Command: CmdPlan, Parallelism: AllAtOnce}})
	var (
		mu      sync.Mutex
		running int
		peak    int
		all     = make(chan struct{})
	)
	w := work{job: func(ctx context.Context, ur *unit, kind job.Kind, _ func()) job.Result {
		mu.Lock()
		running++
		peak = max(peak, running)
		if running == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return job.Result{HasChanges: true, Changes: report.Changes{Add: 1}}
		case <-time.After(time.Minute):
			return job.Result{Err: errors.New("not every unit started"), FailedStep: report.StepPlan}
		}
	}}
	r.schedule(context.Background(), w)
	if peak != n {
		t.Errorf("%d jobs at once; want all %d", peak, n)
	}
	for _, ur := range r.units {
		if ur.status != report.StatusPlanned {
			t.Errorf("%s: %s (%s)", ur.Spec.Name(), ur.status, ur.reason)
		}
	}
}
