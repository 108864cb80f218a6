package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// CostReport is a unit's estimated monthly cost, from infracost
// (docs/behaviour.md#cost-estimation): before its plan and after it.
type CostReport struct {
	Currency string  `json:"currency"`
	Monthly  float64 `json:"monthly"`
	Past     float64 `json:"past_monthly"`
	// Error says why the estimate failed; the unit is not failed for it.
	Error string `json:"error,omitempty"`
}

// CostSummary is the run's cost: its units' estimates added up, or why
// none was made.
type CostSummary struct {
	Currency string  `json:"currency,omitempty"`
	Monthly  float64 `json:"monthly"`
	Past     float64 `json:"past_monthly"`
	// Units counts the units estimated.
	Units int `json:"units"`
	// Skipped says why nothing was estimated (infracost not on PATH).
	Skipped string `json:"skipped,omitempty"`
}

// SetCost adds up the units' estimates; skipped, when not "", says why
// none could be made.
func (rep *Report) SetCost(skipped string) {
	sum := &CostSummary{Skipped: skipped}
	for _, u := range rep.Units {
		if c := u.Cost; c != nil && c.Error == "" {
			sum.Currency = c.Currency
			sum.Monthly += c.Monthly
			sum.Past += c.Past
			sum.Units++
		}
	}
	if sum.Units == 0 && skipped == "" {
		return
	}
	rep.Cost = sum
}

// costBlock is the summary's and the comment's cost: the run's monthly
// cost and its change, and a row per stack; "" when nothing was
// estimated or asked.
func (rep *Report) costBlock() string {
	c := rep.Cost
	switch {
	case c == nil:
		return ""
	case c.Units == 0:
		return fmt.Sprintf("_Cost not estimated: %s._\n\n", c.Skipped)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**Cost:** %s a month, %s (was %s; infracost, %s)\n\n", Money(c.Currency, c.Monthly), MoneyChange(c.Currency, c.Monthly-c.Past),
		Money(c.Currency, c.Past), CountOf(c.Units, "unit"))
	type stackCost struct{ monthly, past float64 }
	byStack := map[string]*stackCost{}
	for _, u := range rep.Units {
		if u.Cost == nil || u.Cost.Error != "" {
			continue
		}
		s := byStack[u.Stack]
		if s == nil {
			s = &stackCost{}
			byStack[u.Stack] = s
		}
		s.monthly += u.Cost.Monthly
		s.past += u.Cost.Past
	}
	names := make([]string, 0, len(byStack))
	for n := range byStack {
		names = append(names, n)
	}
	sort.Strings(names)
	b.WriteString("| stack | monthly | change |\n|---|---:|---:|\n")
	for _, n := range names {
		s := byStack[n]
		fmt.Fprintf(&b, "| %s | %s | %s |\n", TableCell(n), Money(c.Currency, s.monthly), MoneyChange(c.Currency, s.monthly-s.past))
	}
	b.WriteString("\n")
	return b.String()
}

// currencySigns are the signs written before an amount; other currencies
// follow it by their code.
var currencySigns = map[string]string{"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}

// Money writes an amount of a currency: $12.40, 12.40 CHF.
func Money(currency string, v float64) string {
	v = math.Round(v*100) / 100
	if sign, ok := currencySigns[currency]; ok {
		if v < 0 {
			return fmt.Sprintf("-%s%.2f", sign, -v)
		}
		return fmt.Sprintf("%s%.2f", sign, v)
	}
	return strings.TrimSpace(fmt.Sprintf("%.2f %s", v, currency))
}

// MoneyChange writes a change of cost with its sign: +$2.00, -$1.50, ±$0.00.
func MoneyChange(currency string, d float64) string {
	d = math.Round(d*100) / 100
	switch {
	case d > 0:
		return "+" + Money(currency, d)
	case d < 0:
		return Money(currency, d)
	}
	return "±" + Money(currency, 0)
}
