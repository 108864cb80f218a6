package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-iac/strata/job"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/runstate"
	"github.com/strata-iac/strata/stacks"
)

// variableUnit is a unit whose resource takes the variable v (TF_VAR_v
// changes it).
const variableUnit = "variable \"v\" {\n  default = \"1\"\n}\nresource \"terraform_data\" \"x\" {\n  input = var.v\n}\n"

// sameUnits is a repository of units in dirs, each with main.tf.
func sameUnits(mainTF string, dirs ...string) map[string]string {
	files := map[string]string{"strata.yml": "version: \"1\"\n"}
	for _, d := range dirs {
		files[d+"/main.tf"] = mainTF
	}
	return files
}

// TestHandOffAfterLastProcess: a job hands its worker slot on once its
// last engine process has ended and before it records what that process
// did, in each of the three ways a job runs the engine (a plan, the apply
// of a saved plan, a plan and apply in one call), and at -j 2 no more than
// two engines ever run at once. The real terraform runs behind a shim on
// PATH that logs each start and end.
func TestHandOffAfterLastProcess(t *testing.T) {
	needTerraform(t)
	log := filepath.Join(t.TempDir(), "engines")
	dirs := []string{"a", "b", "c", "d", "e"}
	root := writeRepo(t, sameUnits(variableUnit, dirs...))
	e := newE2E(t, root)
	in := terraformShim(t, e, func(real string) string {
		return "echo \"start $PWD $1\" >>'" + log + "'\n'" + real + "' \"$@\"\nrc=$?\necho \"end $PWD $1\" >>'" + log + "'\nexit $rc\n"
	})
	sd := &runstate.StateDir{Path: filepath.Join(root, ".strata")}

	// run runs a command at -j 2; at each hand-off, check says what is
	// wrong with the unit's record then ("" when nothing).
	run := func(command string, auto bool, kind job.Kind, want report.Status, check func(u *stacks.Unit, us *runstate.UnitState) string) {
		t.Helper()
		var (
			mu       sync.Mutex
			handOffs int
			wrong    []string
		)
		opt := Options{Settings: Settings{AutoApprove: auto, Parallelism: 2}, Extra: Extra{Installer: in}}
		opt.handedOff = func(u *stacks.Unit, k job.Kind) {
			// The job's last process has ended: the shim's last line for
			// the unit's dir is an end.
			data, _ := os.ReadFile(log)
			last := ""
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if f := strings.Fields(l); len(f) == 3 && f[1] == filepath.Join(root, u.Dir) {
					last = f[0] + " " + f[2]
				}
			}
			us, err := sd.ReadUnit(u)
			mu.Lock()
			defer mu.Unlock()
			handOffs++
			switch {
			case k != kind:
				wrong = append(wrong, fmt.Sprintf("%s: handed on from a job of kind %d", u.Name(), k))
			case !strings.HasPrefix(last, "end "):
				wrong = append(wrong, fmt.Sprintf("%s: handed on with its engine running (%q)", u.Name(), last))
			case err != nil:
				wrong = append(wrong, fmt.Sprintf("%s: %v", u.Name(), err))
			default:
				if w := check(u, us); w != "" {
					wrong = append(wrong, u.Name()+": "+w)
				}
			}
		}
		if err := os.WriteFile(log, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		res := e.run(command, opt, stacks.Selection{})
		for name, st := range statuses(res.Report) {
			if st != string(want) {
				t.Fatalf("%s: %s %s\n%s", command, name, st, e.console.String())
			}
		}
		if handOffs != len(dirs) || len(wrong) > 0 {
			t.Errorf("%s: %d hand-offs, want %d; %s", command, handOffs, len(dirs), strings.Join(wrong, "; "))
		}
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		running, peak := 0, 0
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if strings.HasPrefix(l, "start ") {
				running++
			} else {
				running--
			}
			peak = max(peak, running)
		}
		if peak > 2 {
			t.Errorf("%s: %d engines at once at -j 2:\n%s", command, peak, data)
		}
	}

	// A plan: its record is written after the hand-off.
	run(CmdPlan, false, job.Plan, report.StatusPlanned, func(_ *stacks.Unit, us *runstate.UnitState) string {
		if us.Plan != nil {
			return "plan recorded before the hand-off"
		}
		return ""
	})
	// The saved plans applied: the apply is recorded after it.
	run(CmdApply, true, job.Apply, report.StatusApplied, func(_ *stacks.Unit, us *runstate.UnitState) string {
		if us.Apply != nil {
			return "apply recorded before the hand-off"
		}
		return ""
	})
	first := map[string]time.Time{}
	for _, d := range dirs {
		us := journal(t, root, d)
		if us.Apply == nil || us.Apply.Result != report.StatusApplied {
			t.Fatalf("%s: not recorded as applied: %+v", d, us.Apply)
		}
		first[d] = us.Apply.At
	}
	// A plan and apply in one call, of a new value: the record still holds
	// the first apply at the hand-off.
	e.env = append(e.env, "TF_VAR_v=2")
	run(CmdApply, true, job.PlanApply, report.StatusApplied, func(u *stacks.Unit, us *runstate.UnitState) string {
		if us.Apply == nil || !us.Apply.At.Equal(first[u.Dir]) {
			return "the new apply recorded before the hand-off"
		}
		return ""
	})
	for _, d := range dirs {
		if us := journal(t, root, d); us.Apply == nil || us.Apply.At.Equal(first[d]) {
			t.Errorf("%s: the second apply not recorded: %+v", d, us.Apply)
		}
	}
}
