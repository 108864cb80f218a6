package job

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// TestCostProcess: infracost reads the plan's JSON file, in the step's
// environment with its own settings, its JSON kept.
func TestCostProcess(t *testing.T) {
	in := testInput(stacks.RunStep{}, "cost estimate", nil).forStep(stacks.RunStep{}, "cost estimate", StepCost)
	var out bytes.Buffer
	p := costProcess(in, &Cost{Currency: "EUR", path: "/t/infracost"}, "/tmp/plan-cost.json", &out)
	want := []string{"/t/infracost", "breakdown", "--path", "/tmp/plan-cost.json", "--format", "json", "--log-level", "error"}
	if !reflect.DeepEqual(p.argv, want) || p.stdout != &out || p.name != StepCost || p.where != "cost estimate" || p.capture {
		t.Errorf("process = %+v", p)
	}
	env := envOf(p.env)
	for k, v := range map[string]string{"INFRACOST_CURRENCY": "EUR", "INFRACOST_NO_COLOR": "true", "INFRACOST_SKIP_UPDATE_CHECK": "true", "TF_VAR_size": "3", "PATH": "/bin"} {
		if env[k] != v {
			t.Errorf("env[%s] = %q, want %q", k, env[k], v)
		}
	}
}

// TestNewCost: no estimator when the config asks for none; one that says
// why it is skipped when infracost is not on PATH.
func TestNewCost(t *testing.T) {
	if NewCost("") != nil {
		t.Error("an estimator with no currency")
	}
	t.Setenv("PATH", t.TempDir())
	c := NewCost("USD")
	if c == nil || c.Currency != "USD" || !strings.Contains(c.Skipped(), "infracost, which is not on PATH") {
		t.Errorf("no infracost: %+v %q", c, c.Skipped())
	}
	var none *Cost
	if none.Skipped() != "" || (&Cost{path: "/x"}).Skipped() != "" {
		t.Error("a nil or found estimator says it is skipped")
	}
}

// TestEstimateCost: the amounts of infracost's JSON; a failure, an
// unreadable JSON or an amount that is none is the unit's warning, never
// its failure; the plan file is removed after.
func TestEstimateCost(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stdout string
		err    error
		want   report.CostReport
		note   string
	}{
		{name: "amounts", stdout: `{"currency":"EUR","totalMonthlyCost":"12.5","pastTotalMonthlyCost":"10"}`,
			want: report.CostReport{Currency: "EUR", Monthly: 12.5, Past: 10}},
		{name: "no currency, no past", stdout: `{"totalMonthlyCost":"1"}`, want: report.CostReport{Currency: "USD", Monthly: 1}},
		{name: "failed", err: errors.New("API key hunter22 invalid"), want: report.CostReport{Currency: "USD", Error: "/t/infracost breakdown"},
			note: "warning: no cost estimated"},
		{name: "not JSON", stdout: "oops", want: report.CostReport{Currency: "USD", Error: "reading infracost's JSON"}, note: "warning: no cost estimated"},
		{name: "not an amount", stdout: `{"totalMonthlyCost":"lots"}`, want: report.CostReport{Currency: "USD", Error: `"lots" is not an amount`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			x := &fakeExec{stdout: tc.stdout, err: tc.err}
			j := testJob(t, workflowYML, x, &out)
			j.ur.TmpDir = t.TempDir()
			j.ur.Masker.Add("hunter22")
			j.run.Cost = &Cost{Currency: "USD", path: "/t/infracost"}
			got := j.in.estimateCost(context.Background(), []byte(`{"format_version":"1.2"}`))
			if got == nil {
				t.Fatal("no cost")
			}
			if tc.want.Error != "" {
				if !strings.Contains(got.Error, tc.want.Error) || strings.Contains(got.Error, "hunter22") || got.Currency != tc.want.Currency {
					t.Errorf("cost = %+v, want an error with %q, masked", got, tc.want.Error)
				}
			} else if *got != tc.want {
				t.Errorf("cost = %+v, want %+v", *got, tc.want)
			}
			if tc.note != "" && !strings.Contains(out.String(), tc.note) {
				t.Errorf("notes: %q", out.String())
			}
			if j.res.Err != nil || len(j.res.Steps) != 1 || j.res.Steps[0].Name != StepCost {
				t.Errorf("err %v steps %+v", j.res.Err, j.res.Steps)
			}
			if len(x.procs) != 1 || x.procs[0].argv[3] != filepath.Join(j.ur.TmpDir, "plan-cost.json") {
				t.Fatalf("processes: %+v", x.procs)
			}
			if _, err := os.Stat(x.procs[0].argv[3]); !os.IsNotExist(err) {
				t.Errorf("the plan's JSON was left: %v", err)
			}
		})
	}
	var out bytes.Buffer
	x := &fakeExec{}
	j := testJob(t, workflowYML, x, &out)
	none := j.in.estimateCost(context.Background(), nil)
	j.run.Cost = &Cost{Currency: "USD"}
	if c := j.in.estimateCost(context.Background(), nil); none != nil || c != nil || len(x.procs) != 0 {
		t.Errorf("no estimator, or no infracost: %+v %+v, %d processes", none, c, len(x.procs))
	}
}
