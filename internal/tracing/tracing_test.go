package tracing

import (
	"bytes"
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/strata-iac/strata/internal/testenv"
)

func TestEnabled(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"nothing set", nil, false},
		{"exporter otlp", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{"exporter console", map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
		{"exporter none", map[string]string{"OTEL_TRACES_EXPORTER": "none"}, false},
		{"exporter none beats an endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, false},
		{"an unknown exporter is on, and said to be wrong", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, true},
		{"endpoint alone", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{"traces endpoint alone", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{"blank endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "  "}, false},
		{"protocol alone", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false},
		{"metrics exporter alone", map[string]string{"OTEL_METRICS_EXPORTER": "otlp"}, false},
		{"TRACEPARENT alone", map[string]string{"TRACEPARENT": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}, false},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false},
		{"sdk disabled, any case", map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false},
		{"sdk not disabled", map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "otlp"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Enabled(func(k string) string { return tc.env[k] }); got != tc.want {
				t.Errorf("Enabled(%v) = %v, want %v", tc.env, got, tc.want)
			}
		})
	}
}

const (
	inTrace  = "0af7651916cd43dd8448eb211c80319c"
	inParent = "b7ad6b7169203331"
	inTP     = "00-" + inTrace + "-" + inParent + "-01"
)

func TestParentFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	ctx := ParentFromEnv(context.Background(), env(map[string]string{"TRACEPARENT": inTP, "TRACESTATE": "vendor=x"}))
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsRemote() || sc.TraceID().String() != inTrace || sc.SpanID().String() != inParent || !sc.IsSampled() {
		t.Errorf("parent from %s: %v", inTP, sc)
	}
	if sc.TraceState().Get("vendor") != "x" {
		t.Errorf("tracestate: %q", sc.TraceState().String())
	}
	for _, bad := range []string{"", "garbage", "00-" + inTrace + "-" + inParent, "00-00000000000000000000000000000000-" + inParent + "-01", "ff-" + inTrace + "-" + inParent + "-01"} {
		ctx := ParentFromEnv(context.Background(), env(map[string]string{"TRACEPARENT": bad}))
		if trace.SpanContextFromContext(ctx).IsValid() {
			t.Errorf("TRACEPARENT %q gave a parent", bad)
		}
	}
}

// With no span in ctx (traces off) the environment is left as it came,
// TRACEPARENT included; with one, TRACEPARENT names it.
func TestEnv(t *testing.T) {
	in := map[string]string{"PATH": "/bin", "TRACEPARENT": inTP, "TRACESTATE": "a=b"}
	if got := Env(context.Background(), in); got["TRACEPARENT"] != inTP || got["TRACESTATE"] != "a=b" || len(got) != 3 {
		t.Errorf("no span: %v", got)
	}
	list := []string{"PATH=/bin", "TRACEPARENT=" + inTP}
	if got := Environ(context.Background(), list); !slices.Equal(got, list) {
		t.Errorf("no span: %v", got)
	}

	tid, _ := trace.TraceIDFromHex(inTrace)
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	want := "00-" + inTrace + "-00f067aa0ba902b7-01"
	got := Env(ctx, in)
	if got["TRACEPARENT"] != want || got["PATH"] != "/bin" {
		t.Errorf("span: %v", got)
	}
	if _, ok := got["TRACESTATE"]; ok {
		t.Errorf("the incoming TRACESTATE stays, with a TRACEPARENT it does not belong to: %v", got)
	}
	if in["TRACEPARENT"] != inTP {
		t.Errorf("Env wrote to its argument: %v", in)
	}
	gotList := Environ(ctx, []string{"PATH=/bin", "TRACEPARENT=" + inTP, "TRACESTATE=a=b"})
	if !slices.Equal(gotList, []string{"PATH=/bin", "TRACEPARENT=" + want}) {
		t.Errorf("span: %v", gotList)
	}
}

func TestEndError(t *testing.T) {
	if got := firstLine("exit status 1\nError: boom\n"); got != "exit status 1" {
		t.Errorf("firstLine: %q", got)
	}
}

// clearOTEL leaves the test an environment with no OTEL_ variable and no
// TRACEPARENT, whatever the machine's, and a global provider that does
// nothing until Start sets one.
func clearOTEL(t *testing.T) {
	t.Helper()
	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_SDK_DISABLED", "OTEL_SERVICE_NAME",
		"OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER", "TRACEPARENT", "TRACESTATE"} {
		t.Setenv(k, "")
	}
	provider := otel.GetTracerProvider()
	otel.SetTracerProvider(noop.NewTracerProvider())
	t.Cleanup(func() { otel.SetTracerProvider(provider) })
}

func TestStartOff(t *testing.T) {
	clearOTEL(t)
	t.Setenv("TRACEPARENT", inTP)
	var errOut bytes.Buffer
	ctx, tr := Start(context.Background(), "v1.2.3", &errOut)
	if tr.provider != nil {
		t.Fatal("no exporter set, and traces are on")
	}
	if trace.SpanContextFromContext(ctx).IsValid() {
		t.Error("off, and the incoming TRACEPARENT was read")
	}
	sctx, span := Span(ctx, "step")
	if span.IsRecording() {
		t.Error("off, and a span records")
	}
	// The incoming TRACEPARENT reaches processes as it came.
	if got := Env(sctx, map[string]string{"TRACEPARENT": inTP}); got["TRACEPARENT"] != inTP {
		t.Errorf("off: %v", got)
	}
	tr.Shutdown()
	if errOut.Len() != 0 {
		t.Errorf("off, and something said: %q", errOut.String())
	}
}

func TestStartSendsSpans(t *testing.T) {
	clearOTEL(t)
	recv := testenv.StartOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("TRACEPARENT", inTP)
	var errOut bytes.Buffer
	ctx, tr := Start(context.Background(), "v1.2.3", &errOut)
	if tr.provider == nil {
		t.Fatalf("an endpoint set, and traces are off: %s", errOut.String())
	}
	rctx, root := Span(ctx, "strata plan")
	sctx, step := Span(rctx, "plan", attribute.String("strata.step", "plan"))
	env := Env(sctx, map[string]string{"TRACEPARENT": inTP})
	End(step, "exit status 1\nError: boom")
	End(root, "")
	tr.Shutdown()
	if errOut.Len() != 0 {
		t.Errorf("stderr: %q", errOut.String())
	}
	spans := recv.Spans()
	if len(spans) != 2 {
		t.Fatalf("%d spans received: %+v", len(spans), spans)
	}
	byName := map[string]testenv.Span{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	r, s := byName["strata plan"], byName["plan"]
	if r.TraceID != inTrace || r.ParentSpanID != inParent {
		t.Errorf("root span: trace %s parent %s, want %s and %s", r.TraceID, r.ParentSpanID, inTrace, inParent)
	}
	if s.TraceID != inTrace || s.ParentSpanID != r.SpanID {
		t.Errorf("step span: trace %s parent %s, want the root %s", s.TraceID, s.ParentSpanID, r.SpanID)
	}
	if s.StatusCode != tracepb.Status_STATUS_CODE_ERROR || s.StatusMessage != "exit status 1" {
		t.Errorf("failed step: %v %q", s.StatusCode, s.StatusMessage)
	}
	if r.StatusCode == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("root span: %v", r.StatusCode)
	}
	if r.Service != "strata" || r.ResourceAttrs["service.version"] != "v1.2.3" || r.Scope != scope {
		t.Errorf("resource: %v, scope %q", r.ResourceAttrs, r.Scope)
	}
	if want := "00-" + inTrace + "-" + s.SpanID + "-01"; env["TRACEPARENT"] != want {
		t.Errorf("TRACEPARENT for the step's process: %q, want %q", env["TRACEPARENT"], want)
	}
}

// OTEL_SERVICE_NAME names the service in strata's place.
func TestServiceNameFromEnv(t *testing.T) {
	clearOTEL(t)
	recv := testenv.StartOTLPReceiver(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "deploys")
	var errOut bytes.Buffer
	ctx, tr := Start(context.Background(), "v1", &errOut)
	_, span := Span(ctx, "strata apply")
	span.End()
	tr.Shutdown()
	if spans := recv.Spans(); len(spans) != 1 || spans[0].Service != "deploys" {
		t.Errorf("spans: %+v (%s)", spans, errOut.String())
	}
}

// A collector that is not there: the export fails, said once, and
// Shutdown returns.
func TestDeadCollector(t *testing.T) {
	clearOTEL(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+addr)
	var errOut bytes.Buffer
	ctx, tr := Start(context.Background(), "v1", &errOut)
	for range 3 {
		_, span := Span(ctx, "unit")
		span.End()
	}
	tr.Shutdown()
	tr.Shutdown()
	if n := strings.Count(errOut.String(), "strata: traces:"); n != 1 {
		t.Errorf("said %d times: %q", n, errOut.String())
	}
}

// An exporter or protocol strata does not know: said once, and no
// traces.
func TestBadExporter(t *testing.T) {
	for _, env := range [][2]string{
		{"OTEL_TRACES_EXPORTER", "zipkin"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
		{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "thrift"},
	} {
		clearOTEL(t)
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
		t.Setenv(env[0], env[1])
		var errOut bytes.Buffer
		ctx, tr := Start(context.Background(), "v1", &errOut)
		_, span := Span(ctx, "x")
		if span.IsRecording() {
			t.Errorf("%s=%s, and spans record", env[0], env[1])
		}
		span.End()
		tr.Shutdown()
		if msg := errOut.String(); !strings.HasPrefix(msg, "strata: traces: no traces: ") || !strings.Contains(msg, env[0]) || strings.Count(msg, "\n") != 1 {
			t.Errorf("%s=%s: stderr %q", env[0], env[1], msg)
		}
	}
}

// The console exporter writes to stderr (errOut): stdout is the
// command's.
func TestConsoleExporter(t *testing.T) {
	clearOTEL(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	var errOut bytes.Buffer
	ctx, tr := Start(context.Background(), "v1", &errOut)
	_, span := Span(ctx, "strata validate")
	span.End()
	tr.Shutdown()
	if !strings.Contains(errOut.String(), `"Name":"strata validate"`) {
		t.Errorf("stderr: %q", errOut.String())
	}
}
