package command

import "testing"

// TestPolicies checks the table against the rules of
// docs/behaviour.md#commands, one command at a time.
func TestPolicies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want func(p *Policy) bool
		why  string
	}{
		{Init, func(p *Policy) bool {
			return p.ReadsOnly && p.IgnoresGates && p.Job == JobInit && !p.Plans && !p.Recorded
		}, "init reads only, at once"},
		{Validate, func(p *Policy) bool { return p.ReadsOnly && p.Job == JobValidate && !p.Applies }, "validate reads only"},
		{Output, func(p *Policy) bool { return p.ReadsOnly && p.PrintsOutputs && p.Job == JobOutput }, "output prints outputs"},
		{Plan, func(p *Policy) bool {
			return p.Plans && !p.Applies && p.AutoApplies && p.HoldsPlanned && p.ReviewsPlans && p.DetailedOnRequest && !p.Detailed && p.Controlled == "plan" && p.Recorded && !p.ChecksDrift
		}, "plan plans, auto-applies, makes reviewed plans"},
		{Apply, func(p *Policy) bool {
			return p.Plans && p.Applies && !p.Destroys && p.ReusesPlans && p.OneCallApply && !p.ReviewsPlans && !p.HoldsPlanned && p.Controlled == "apply" && p.Recorded
		}, "apply applies, reusing saved plans"},
		{Destroy, func(p *Policy) bool {
			return p.Applies && p.Destroys && !p.FeedsReaders && !p.TakesPrerequisites && !p.ReusesPlans && p.Controlled == "apply" && p.Recorded
		}, "destroy applies destroy plans, no readers or prerequisites"},
		{Drift, func(p *Policy) bool {
			return p.Plans && !p.Applies && !p.IgnoresGates && p.WaitsOnlyForPrerequisites && p.AsItStands && p.Detailed && !p.FeedsReaders && p.TakesPrerequisites && p.Controlled == "" && p.Recorded && p.ChecksDrift
		}, "drift plans everything at once against what stands, after a stale auto_apply prerequisite"},
	}
	for _, tt := range tests {
		p, ok := Of(tt.name)
		if !ok || p.Name != tt.name {
			t.Fatalf("Of(%q) = %+v, %v", tt.name, p, ok)
		}
		if !tt.want(p) {
			t.Errorf("%s: %s: policy is %+v", tt.name, tt.why, *p)
		}
	}
}

func TestOfUnknown(t *testing.T) {
	t.Parallel()
	p, ok := Of("state")
	if ok || p.Name != "state" || p.Plans || p.Applies || p.ReadsOnly {
		t.Errorf("Of(state) = %+v, %v; want an empty policy and false", *p, ok)
	}
	defer func() {
		if recover() == nil {
			t.Error("Must(state) did not panic")
		}
	}()
	Must("state")
}

func TestNamesHavePolicies(t *testing.T) {
	t.Parallel()
	for _, n := range Names() {
		if _, ok := Of(n); !ok {
			t.Errorf("%s has no policy", n)
		}
	}
	if len(Names()) != len(policies) {
		t.Errorf("Names lists %d commands, the table has %d", len(Names()), len(policies))
	}
}
