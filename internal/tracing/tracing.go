// Package tracing sends OpenTelemetry traces of a command when the
// standard OTEL_ variables name an exporter, and is off otherwise
// (docs/behaviour.md#traces): one span for the command, one for each unit,
// one for each step, and the step's span handed to the engine in
// TRACEPARENT.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// FlushTimeout bounds the spans' last export when the command ends: a
// collector that does not answer costs the command this much at most.
const FlushTimeout = 5 * time.Second

// scope names strata's spans' instrumentation scope.
const scope = "github.com/strata-iac/strata"

// w3c reads and writes TRACEPARENT and TRACESTATE.
var w3c = propagation.TraceContext{}

// Enabled reports whether the environment asks for traces: an exporter
// in OTEL_TRACES_EXPORTER other than none, or, with OTEL_TRACES_EXPORTER
// unset, an OTLP endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
// OTEL_EXPORTER_OTLP_ENDPOINT), which the OTLP exporter then uses. Nothing
// set means off, never an OTLP exporter to localhost; OTEL_SDK_DISABLED=true
// turns everything off.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	switch exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exporter {
	case "":
		return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) != "" ||
			strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != ""
	case "none":
		return false
	default:
		return true
	}
}

// Tracing is a command's traces: Shutdown sends what is left.
type Tracing struct {
	provider *sdktrace.TracerProvider
	report   *reporter
}

// Start sets traces up from the process environment when Enabled says
// so, and returns ctx with the span an incoming TRACEPARENT names as its
// parent. Off, it starts nothing (no goroutine, no connection) and ctx is
// returned as it is. A bad exporter setting is said once on errOut, and
// the command runs without traces.
func Start(ctx context.Context, version string, errOut io.Writer) (context.Context, *Tracing) {
	if !Enabled(os.Getenv) {
		return ctx, &Tracing{}
	}
	rep := &reporter{w: errOut}
	exporter, err := newExporter(ctx, errOut)
	if err != nil {
		rep.Handle(fmt.Errorf("no traces: %w", err))
		return ctx, &Tracing{}
	}
	res, err := resource.New(ctx,
		// Set first: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win.
		resource.WithAttributes(
			attribute.String("service.name", "strata"),
			attribute.String("service.version", version),
		),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil {
		// A malformed OTEL_RESOURCE_ATTRIBUTES: what could be read is
		// kept.
		rep.Handle(err)
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	otel.SetErrorHandler(rep)
	otel.SetTracerProvider(provider)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return ParentFromEnv(ctx, os.Getenv), &Tracing{provider: provider, report: rep}
}

// newExporter is the exporter OTEL_TRACES_EXPORTER names, as the
// standard variables describe it: otlp (the default) over
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL,
// http/protobuf or grpc, the OTLP exporters reading the rest of their
// settings themselves; or console, written to errOut so that stdout stays
// the command's. strata links these exporters alone, and not a package
// that chooses among every signal's exporters, whose initialisation every
// command would pay for (docs/architecture.md#what-a-command-costs).
func newExporter(ctx context.Context, errOut io.Writer) (sdktrace.SpanExporter, error) {
	switch exporter := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); exporter {
	case "", "otlp":
	case "console":
		return stdouttrace.New(stdouttrace.WithWriter(errOut))
	default:
		return nil, fmt.Errorf("unknown exporter %q in OTEL_TRACES_EXPORTER: otlp, console or none", exporter)
	}
	protocol, from := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	if protocol == "" {
		protocol, from = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	switch strings.TrimSpace(protocol) {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return otlptracegrpc.New(ctx)
	}
	return nil, fmt.Errorf("unknown protocol %q in %s: http/protobuf or grpc", protocol, from)
}

// Shutdown sends the spans not sent yet, for FlushTimeout at most; a
// failure is said once, and never changes how the command ends.
func (t *Tracing) Shutdown() {
	if t == nil || t.provider == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), FlushTimeout)
	defer cancel()
	if err := t.provider.Shutdown(ctx); err != nil {
		t.report.Handle(err)
	}
}

// ParentFromEnv returns ctx with the remote span TRACEPARENT (and
// TRACESTATE) names, ctx itself when there is none or it does not parse.
func ParentFromEnv(ctx context.Context, getenv func(string) string) context.Context {
	carrier := propagation.MapCarrier{}
	if v := strings.TrimSpace(getenv("TRACEPARENT")); v != "" {
		carrier["traceparent"] = v
	}
	if len(carrier) == 0 {
		return ctx
	}
	if v := strings.TrimSpace(getenv("TRACESTATE")); v != "" {
		carrier["tracestate"] = v
	}
	return w3c.Extract(ctx, carrier)
}

// Span starts a span under ctx's, from the global provider Start sets.
// With traces off it is a span that records nothing, and costs about
// nothing.
func Span(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return otel.Tracer(scope).Start(ctx, name, trace.WithAttributes(attrs...))
}

// End ends a span, with status Error and failure's first line when
// failure is not empty. The caller masks it: it is exported as written.
func End(span trace.Span, failure string) {
	if failure = firstLine(failure); failure != "" {
		span.SetStatus(codes.Error, failure)
	}
	span.End()
}

// firstLine is a message's first line: an engine's error carries its
// whole stderr after it.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// Env returns env with TRACEPARENT (and TRACESTATE) naming ctx's span,
// for a process the span starts; env itself, unchanged, when ctx holds no
// span, as with traces off: an incoming TRACEPARENT then reaches the
// process as it came. env is never written to.
func Env(ctx context.Context, env map[string]string) map[string]string {
	carrier, ok := carrierOf(ctx)
	if !ok {
		return env
	}
	out := make(map[string]string, len(env)+2)
	for k, v := range env {
		out[k] = v
	}
	out["TRACEPARENT"] = carrier["traceparent"]
	if ts := carrier["tracestate"]; ts != "" {
		out["TRACESTATE"] = ts
	} else {
		delete(out, "TRACESTATE")
	}
	return out
}

// Environ is Env for a KEY=VALUE list.
func Environ(ctx context.Context, environ []string) []string {
	carrier, ok := carrierOf(ctx)
	if !ok {
		return environ
	}
	out := make([]string, 0, len(environ)+2)
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); k != "TRACEPARENT" && k != "TRACESTATE" {
			out = append(out, kv)
		}
	}
	out = append(out, "TRACEPARENT="+carrier["traceparent"])
	if ts := carrier["tracestate"]; ts != "" {
		out = append(out, "TRACESTATE="+ts)
	}
	return out
}

func carrierOf(ctx context.Context) (propagation.MapCarrier, bool) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil, false
	}
	carrier := propagation.MapCarrier{}
	w3c.Inject(ctx, carrier)
	return carrier, carrier["traceparent"] != ""
}

// reporter says the first error of the traces on w, once, and drops the
// rest: a collector that is down fails every export, and the command's
// own output matters more.
type reporter struct {
	once sync.Once
	w    io.Writer
}

func (r *reporter) Handle(err error) {
	if r == nil || err == nil {
		return
	}
	r.once.Do(func() {
		msg := firstLine(err.Error())
		if errors.Is(err, context.DeadlineExceeded) {
			msg = fmt.Sprintf("spans not sent within %s: %s", FlushTimeout, msg)
		}
		fmt.Fprintf(r.w, "strata: traces: %s\n", msg)
	})
}
