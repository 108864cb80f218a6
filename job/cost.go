package job

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks"
)

// Cost estimates the monthly cost of plans with infracost, when the
// config asks for it (docs/behaviour.md#cost-estimation).
type Cost struct {
	Currency string
	// path is infracost's, "" when it is not on PATH.
	path string
}

// StepCost is the step that estimates a plan's cost.
const StepCost = "cost"

// NewCost is the estimator of a command whose config asks for costs in
// currency, nil when it asks for none; infracost is looked for on PATH.
func NewCost(currency string) *Cost {
	if currency == "" {
		return nil
	}
	c := &Cost{Currency: currency}
	c.path, _ = exec.LookPath("infracost")
	return c
}

// Skipped says why no cost is estimated, "" when infracost is there.
func (c *Cost) Skipped() string {
	if c == nil || c.path != "" {
		return ""
	}
	return "cost_estimation asks for infracost, which is not on PATH (install it, with INFRACOST_API_KEY set)"
}

// maxCostOutput is the most of infracost's JSON read.
const maxCostOutput = 16 << 20

// breakdown is what strata reads of `infracost breakdown --format json`.
type breakdown struct {
	Currency             string  `json:"currency"`
	TotalMonthlyCost     *string `json:"totalMonthlyCost"`
	PastTotalMonthlyCost *string `json:"pastTotalMonthlyCost"`
}

// costProcess is infracost's process for the plan JSON in file, its JSON
// written to out.
func costProcess(in *stepInput, c *Cost, file string, out *bytes.Buffer) process {
	env := append(in.processEnv(nil), "INFRACOST_CURRENCY="+c.Currency, "INFRACOST_NO_COLOR=true", "INFRACOST_SKIP_UPDATE_CHECK=true")
	p := in.process([]string{c.path, "breakdown", "--path", file, "--format", "json", "--log-level", "error"}, env)
	p.stdout = out
	return p
}

// estimateCost runs infracost on the plan's JSON and returns the cost
// (nil when none is asked for); a failure is the unit's warning, never
// its failure: a cost is information.
func (in *stepInput) estimateCost(ctx context.Context, planJSON []byte) (cost *report.CostReport) {
	c := in.run.Cost
	if c == nil || c.path == "" {
		return nil
	}
	fail := func(err error) {
		msg := in.ur.Masker.Mask(ErrorText(err))
		cost = &report.CostReport{Currency: c.Currency, Error: msg}
		in.run.Console.Warn(in.ur.Spec.Name(), "no cost estimated: "+msg)
	}
	file := filepath.Join(in.ur.TmpDir, "plan-cost.json")
	if err := os.WriteFile(file, planJSON, 0o600); err != nil {
		fail(err)
		return cost
	}
	defer os.Remove(file)
	var out bytes.Buffer
	p := costProcess(in.forStep(stacks.RunStep{}, "cost estimate", StepCost), c, file, &out)
	step, err := in.exec.process(ctx, p)
	*in.reports = append(*in.reports, step)
	if err != nil {
		fail(err)
		return cost
	}
	if out.Len() > maxCostOutput {
		fail(fmt.Errorf("infracost wrote over %d MB", maxCostOutput>>20))
		return cost
	}
	var b breakdown
	if err := json.Unmarshal(out.Bytes(), &b); err != nil {
		fail(fmt.Errorf("reading infracost's JSON: %w", err))
		return cost
	}
	rep := &report.CostReport{Currency: b.Currency}
	if rep.Currency == "" {
		rep.Currency = c.Currency
	}
	for _, f := range []struct {
		s   *string
		dst *float64
	}{{b.TotalMonthlyCost, &rep.Monthly}, {b.PastTotalMonthlyCost, &rep.Past}} {
		if f.s == nil {
			continue
		}
		v, err := strconv.ParseFloat(*f.s, 64)
		if err != nil {
			fail(fmt.Errorf("reading infracost's JSON: %q is not an amount", *f.s))
			return cost
		}
		*f.dst = v
	}
	return rep
}
