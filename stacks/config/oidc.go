package config

import "slices"

// OIDCStep is an oidc step with its defaults applied
// (docs/behaviour.md#oidc): credentials for a cloud, made from the CI's
// OIDC token.
type OIDCStep struct {
	Provider string // aws or gcp
	// Audience is the OIDC token's: sts.amazonaws.com for AWS, the
	// workload identity provider's URL for GCP, unless written.
	Audience string
	// AWS.
	RoleArn, AssumeRoleArn string // AssumeRoleArn "" when off
	Region, SessionName    string
	Duration               int // seconds
	// GCP.
	ServiceAccount, WorkloadIdentityProvider, ProjectID string
	Lifetime                                            int // seconds
}

// checkOIDCStep checks that an oidc step names what its provider needs.
func checkOIDCStep(d *decoder, s *Step, key string) {
	switch s.Provider.Value {
	case "aws":
		if !s.RoleArn.Set || s.RoleArn.Value == "" {
			d.Errorf(s.Pos, key, "an oidc step with provider aws needs role_arn, the role to assume")
		}
	case "gcp":
		if s.ServiceAccount.Value == "" || s.WorkloadIdentity.Value == "" {
			d.Errorf(s.Pos, key, "an oidc step with provider gcp needs service_account and workload_identity_provider")
		}
	case "":
		if !s.Provider.Set {
			d.Errorf(s.Pos, key, "an oidc step needs provider: aws or gcp")
		}
	}
	for _, n := range []Int{s.Duration, s.AccessTokenLifetime} {
		if n.Set && n.Value < 1 {
			d.Errorf(n.Pos, key, "found %d; expected a number of seconds of at least 1", n.Value)
		}
	}
}

// ResolveOIDC is an oidc step's settings with Terrateam's defaults.
func ResolveOIDC(st Step) *OIDCStep {
	o := &OIDCStep{
		Provider: st.Provider.Value, Audience: st.Audience.Value,
		RoleArn: st.RoleArn.Value, Region: st.Region.Value, SessionName: st.SessionName.Value, Duration: st.Duration.Value,
		ServiceAccount: st.ServiceAccount.Value, WorkloadIdentityProvider: st.WorkloadIdentity.Value, ProjectID: st.ProjectID.Value,
		Lifetime: st.AccessTokenLifetime.Value,
	}
	if st.AssumeRoleEnabled.Get(true) {
		o.AssumeRoleArn = st.AssumeRoleArn.Value
	}
	if o.Audience == "" {
		o.Audience = "sts.amazonaws.com"
		if o.Provider == "gcp" {
			o.Audience = "https://iam.googleapis.com/" + o.WorkloadIdentityProvider
		}
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.SessionName == "" {
		o.SessionName = "terrateam"
	}
	if o.Duration == 0 {
		o.Duration = 3600
	}
	if o.Lifetime == 0 {
		o.Lifetime = 3600
	}
	return o
}

// OIDCAudiences are the audiences of the config's oidc steps, hooks' and
// workflows', sorted: the OIDC tokens a CI job must be able to get.
func (c *Config) OIDCAudiences() []string {
	var out []string
	add := func(steps *[]Step) {
		if steps == nil {
			return
		}
		for _, st := range *steps {
			if st.Type.Value == "oidc" {
				out = append(out, ResolveOIDC(st).Audience)
			}
		}
	}
	if h := c.Hooks; h != nil {
		for _, hk := range []*Hook{h.All, h.Plan, h.Apply} {
			if hk != nil {
				add(hk.Pre)
				add(hk.Post)
			}
		}
	}
	for _, w := range c.Workflows {
		add(w.Plan)
		add(w.Apply)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
