package runner

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/strata-iac/strata/internal/tracing"
	"github.com/strata-iac/strata/report"
)

// A unit's span (docs/behaviour.md#traces) runs from its first job to the
// end of the unit, across its plan and apply jobs and what it waits for
// between them; a unit that never starts a job gets one when it ends. Its
// jobs' steps are its children. Only the coordinator touches it.

// unitContext is ctx with the unit's span, started with its first job.
func (r *runState) unitContext(ctx context.Context, ur *unitRun) context.Context {
	if ur.span == nil {
		_, ur.span = tracing.Span(ctx, ur.Spec.Name(), unitAttributes(ur)...)
	}
	return trace.ContextWithSpan(ctx, ur.span)
}

// endUnitSpan ends the unit's span with how it ended: status Error when
// it failed.
func (r *runState) endUnitSpan(ur *unitRun) {
	if ur.spanEnded {
		return
	}
	if ur.span == nil {
		r.unitContext(trace.ContextWithSpan(context.Background(), r.span), ur)
	}
	status := ur.status
	if status == report.StatusPending {
		// As the console shows it.
		status = report.StatusCancelled
	}
	attrs := []attribute.KeyValue{attribute.String("strata.unit.status", string(status))}
	if ur.reason != "" {
		attrs = append(attrs, attribute.String("strata.unit.reason", ur.reason))
	}
	if ur.Engine != nil && ur.Engine.Version != nil {
		// Known once the unit's engine was had.
		attrs = append(attrs, attribute.String("strata.engine.version", ur.Engine.Version.String()))
	}
	ur.span.SetAttributes(attrs...)
	failure := ""
	if ur.status == report.StatusFailed {
		failure = ur.reason
		if failure == "" {
			failure = "failed"
		}
	}
	tracing.End(ur.span, failure)
	ur.spanEnded = true
}

func unitAttributes(ur *unitRun) []attribute.KeyValue {
	engine := ur.Choice.Name
	if ur.Engine != nil {
		engine = ur.Engine.Name
	}
	return []attribute.KeyValue{
		attribute.String("strata.unit.id", ur.Spec.ID()),
		attribute.String("strata.stack", ur.Spec.Stack.Name),
		attribute.String("strata.dir", ur.Spec.Dir),
		attribute.String("strata.workspace", ur.Spec.Workspace),
		attribute.String("strata.engine", engine),
	}
}
