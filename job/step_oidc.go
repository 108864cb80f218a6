package job

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"go.opentelemetry.io/otel/attribute"

	"github.com/strata-iac/strata/internal/environ"
	"github.com/strata-iac/strata/internal/tracing"
	"github.com/strata-iac/strata/oidc"
	"github.com/strata-iac/strata/report"
)

// oidcStep makes the step's cloud credentials for the later steps
// (docs/behaviour.md#oidc), its secrets masked: a unit's for its own
// steps, a hook's for every unit.
type oidcStep struct{}

// env is the environment the exchange reads: the step's starting one
// with what earlier steps set, and the credentials in strata's own
// environment (the job's token, which no other step sees). A unit's
// credentials win over what its steps set; a hook's steps win over
// strata's credentials.
func (*oidcStep) env(in *stepInput) map[string]string {
	if in.Hook {
		env := withCredentials(maps.Clone(in.Env), in.Environ)
		maps.Copy(env, in.Set)
		return env
	}
	return withCredentials(in.engineEnv(nil), in.Environ)
}

func (k *oidcStep) run(ctx context.Context, in *stepInput) stepOutput {
	started := in.Now()
	attrs := []attribute.KeyValue{attribute.String("strata.step", in.Name)}
	if in.UnitID != "" {
		attrs = append(attrs, attribute.String("strata.unit.id", in.UnitID))
	}
	sctx, span := tracing.Span(ctx, in.Name, attrs...)
	creds, err := in.exec.credentials(sctx, in.Step.OIDC, k.env(in))
	skipped := noTokenOutsideCI(err, in.Environ)
	if skipped {
		err = nil
	}
	tracing.End(span, spanFailure(in.Masker, err))
	out := stepOutput{Reports: []report.StepReport{{Name: in.Name, StartedAt: started, FinishedAt: in.Now(), OK: err == nil}},
		Err: err, NoToken: skipped}
	if skipped || err != nil {
		return out
	}
	out.Set, out.Secrets = creds.Env, creds.Secrets
	out.Note = fmt.Sprintf("%s: %s credentials set", in.Where, in.Step.OIDC.Provider)
	return out
}

// noTokenOutsideCI says an oidc step is skipped: it has no OIDC token to
// exchange, and the run is not in CI, where a person's own credentials
// (a profile, gcloud's login) serve instead (docs/behaviour.md#oidc). In
// CI a missing token fails the step: a pipeline that lost its id-token
// permission must not run on whatever else the machine holds.
func noTokenOutsideCI(err error, env []string) bool {
	return errors.Is(err, oidc.ErrNoToken) && !environ.InCI(environ.Getenv(env))
}

// noteNoToken says once in the run that oidc steps are skipped.
func (r *Run) noteNoToken() {
	r.oidcSkip.Do(func() {
		r.Console.Note("strata: no OIDC token outside CI: oidc steps are skipped, and the ambient credentials are used")
	})
}
