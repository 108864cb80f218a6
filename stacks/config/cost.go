package config

// CostEstimation is `cost_estimation`: the monthly cost of what each plan
// changes, from infracost (docs/behaviour.md#cost-estimation).
type CostEstimation struct {
	Pos      Pos
	Enabled  Bool   `yaml:"enabled" doc:"estimate each plan's cost with infracost, when it is on PATH (default true once the section is written)"`
	Provider String `yaml:"provider" enum:"infracost" doc:"the estimator"`
	Currency String `yaml:"currency" doc:"the currency of the estimates (default USD)"`
}

// CostCurrency is the currency costs are estimated in, "" when the config
// asks for no estimate.
func (c *Config) CostCurrency() string {
	ce := c.CostEstimation
	if ce == nil || !ce.Enabled.Get(true) {
		return ""
	}
	if ce.Currency.Value != "" {
		return ce.Currency.Value
	}
	return "USD"
}
