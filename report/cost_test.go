package report

import (
	"strings"
	"testing"
)

func TestMoney(t *testing.T) {
	t.Parallel()
	tests := []struct {
		currency string
		v        float64
		money    string
		change   string
	}{
		{"USD", 12.4, "$12.40", "+$12.40"},
		{"USD", -1.5, "-$1.50", "-$1.50"},
		{"EUR", 0, "€0.00", "±€0.00"},
		{"CHF", 3.456, "3.46 CHF", "+3.46 CHF"},
		{"USD", 0.004, "$0.00", "±$0.00"},
	}
	for _, tt := range tests {
		if got := Money(tt.currency, tt.v); got != tt.money {
			t.Errorf("Money(%s, %v) = %q, want %q", tt.currency, tt.v, got, tt.money)
		}
		if got := MoneyChange(tt.currency, tt.v); got != tt.change {
			t.Errorf("MoneyChange(%s, %v) = %q, want %q", tt.currency, tt.v, got, tt.change)
		}
	}
}

// TestCostBlock: the run's cost adds up its units' estimates, with a row
// per stack; a unit whose estimate failed is left out; a run that could
// estimate nothing says why.
func TestCostBlock(t *testing.T) {
	t.Parallel()
	rep := &Report{Units: []*UnitReport{
		{Dir: "a", Stack: "prod", Cost: &CostReport{Currency: "USD", Monthly: 110, Past: 100}},
		{Dir: "b", Stack: "prod", Cost: &CostReport{Currency: "USD", Monthly: 5, Past: 7.5}},
		{Dir: "c", Stack: "dev", Cost: &CostReport{Currency: "USD", Monthly: 2.25}},
		{Dir: "d", Stack: "dev", Cost: &CostReport{Currency: "USD", Error: "infracost: 401"}},
		{Dir: "e", Stack: "dev"},
	}}
	rep.SetCost("")
	want := "**Cost:** $117.25 a month, +$9.75 (was $107.50; infracost, 3 units)\n\n" +
		"| stack | monthly | change |\n|---|---:|---:|\n| dev | $2.25 | +$2.25 |\n| prod | $115.00 | +$7.50 |\n\n"
	if got := rep.costBlock(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	skipped := &Report{Units: []*UnitReport{{Dir: "a"}}}
	skipped.SetCost("infracost is not on PATH")
	if got := skipped.costBlock(); got != "_Cost not estimated: infracost is not on PATH._\n\n" {
		t.Errorf("skipped: %q", got)
	}
	none := &Report{Units: []*UnitReport{{Dir: "a"}}}
	if none.SetCost(""); none.Cost != nil || none.costBlock() != "" {
		t.Errorf("no estimate and none asked: %+v", none.Cost)
	}
	if s := rep.Markdown(); !strings.Contains(s, "**Cost:** $117.25 a month") {
		t.Errorf("the summary has no cost:\n%s", s)
	}
	if c := Comment(rep, ""); !strings.Contains(c, "| prod | $115.00 | +$7.50 |") {
		t.Errorf("the comment has no cost:\n%s", c)
	}
}
