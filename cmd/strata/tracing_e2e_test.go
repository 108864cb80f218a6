package main

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// Traces of a run (docs/behaviour.md#traces), sent by the built strata
// and the real terraform to an OTLP receiver on loopback.

const (
	incomingTrace  = "0af7651916cd43dd8448eb211c80319c"
	incomingParent = "b7ad6b7169203331"
	incomingTP     = "00-" + incomingTrace + "-" + incomingParent + "-01"
)

// tracesEnv is strata's environment with traces sent to addr (a base
// URL) over OTLP/HTTP.
func tracesEnv(t *testing.T, url string, extra ...string) []string {
	return append(hermeticEnv(t), append([]string{
		"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=" + url, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
	}, extra...)...)
}

// strataSpans are the spans strata sent, and the one root among them.
type strataSpans struct {
	all  []testenv.Span
	root testenv.Span
	byID map[string]testenv.Span
}

func splitSpans(t *testing.T, spans []testenv.Span) (strata strataSpans, engine []testenv.Span) {
	t.Helper()
	strata.byID = map[string]testenv.Span{}
	for _, s := range spans {
		if s.Service != "strata" {
			engine = append(engine, s)
			continue
		}
		strata.all = append(strata.all, s)
		strata.byID[s.SpanID] = s
	}
	var roots []testenv.Span
	for _, s := range strata.all {
		if _, ok := strata.byID[s.ParentSpanID]; !ok {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 {
		t.Fatalf("%d root spans from strata, want 1: %+v", len(roots), roots)
	}
	strata.root = roots[0]
	return strata, engine
}

// unitSpans are strata's unit spans by unit ID: the children of the root
// that name a unit and no step.
func (s strataSpans) unitSpans(t *testing.T) map[string]testenv.Span {
	t.Helper()
	out := map[string]testenv.Span{}
	for _, sp := range s.all {
		id := sp.Attributes["strata.unit.id"]
		if id == "" || sp.Attributes["strata.step"] != "" {
			continue
		}
		if sp.ParentSpanID != s.root.SpanID {
			t.Errorf("unit span %s: parent %s, not the command's %s", sp.Name, sp.ParentSpanID, s.root.SpanID)
		}
		if _, dup := out[id]; dup {
			t.Errorf("two spans for unit %s", id)
		}
		out[id] = sp
	}
	return out
}

// stepSpans are the step spans whose parent is span.
func (s strataSpans) stepSpans(parent testenv.Span) []testenv.Span {
	var out []testenv.Span
	for _, sp := range s.all {
		if sp.ParentSpanID == parent.SpanID && sp.Attributes["strata.step"] != "" {
			out = append(out, sp)
		}
	}
	return out
}

func spanNames(spans []testenv.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}

// TestTracesOfAnApply: apply on the nested fixture sends one span for the
// command, a child of the incoming TRACEPARENT; one for each unit of the
// report, with its attributes; and its steps' spans under it. Terraform,
// told to trace with OTEL_TRACES_EXPORTER=otlp, sends its own spans to the
// same receiver; when it reads TRACEPARENT, they are children of strata's
// step spans.
func TestTracesOfAnApply(t *testing.T) {
	needTerraform(t)
	recv := testenv.StartOTLPReceiver(t)
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(fixture(t, "nested"))); err != nil {
		t.Fatal(err)
	}
	reportFile := filepath.Join(t.TempDir(), "report.json")
	r := runBin(t, root, tracesEnv(t, recv.URL, "TRACEPARENT="+incomingTP), "apply", "-auto-approve", "--report", reportFile)
	if r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "strata: traces:") {
		t.Errorf("stderr: %s", r.stderr)
	}
	rep := readReport(t, reportFile)
	spans, engine := splitSpans(t, recv.Spans())

	if spans.root.Name != "strata apply" || spans.root.TraceID != incomingTrace || spans.root.ParentSpanID != incomingParent {
		t.Errorf("command span %q: trace %s, parent %s; want strata apply in trace %s under %s",
			spans.root.Name, spans.root.TraceID, spans.root.ParentSpanID, incomingTrace, incomingParent)
	}
	if spans.root.Attributes["process.exit.code"] != "0" || spans.root.StatusCode == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("command span: %v, status %v", spans.root.Attributes, spans.root.StatusCode)
	}
	if v := spans.root.ResourceAttrs["service.version"]; v == "" {
		t.Errorf("no service.version: %v", spans.root.ResourceAttrs)
	}
	for _, s := range spans.all {
		if s.TraceID != incomingTrace {
			t.Errorf("span %s in trace %s", s.Name, s.TraceID)
		}
	}

	units := spans.unitSpans(t)
	if len(units) != len(rep.Units) {
		t.Errorf("%d unit spans for %d units", len(units), len(rep.Units))
	}
	stepIDs := map[string]testenv.Span{}
	for _, u := range rep.Units {
		us, ok := units[u.ID()]
		if !ok {
			t.Errorf("no span for unit %s", u.ID())
			continue
		}
		want := map[string]string{
			"strata.stack": u.Stack, "strata.dir": u.Dir, "strata.workspace": u.Workspace,
			"strata.engine": "terraform", "strata.engine.version": u.Engine.Version, "strata.unit.status": string(u.Status),
		}
		for k, v := range want {
			if us.Attributes[k] != v {
				t.Errorf("unit %s: %s = %q, want %q", u.ID(), k, us.Attributes[k], v)
			}
		}
		if us.Name != u.Name() || us.StatusCode == tracepb.Status_STATUS_CODE_ERROR {
			t.Errorf("unit span %q, status %v", us.Name, us.StatusCode)
		}
		steps := spans.stepSpans(us)
		var reported []string
		for _, st := range u.Steps {
			reported = append(reported, st.Name)
		}
		sort.Strings(reported)
		if got := spanNames(steps); !slices.Equal(got, reported) || len(got) == 0 {
			t.Errorf("unit %s: step spans %v, steps reported %v", u.ID(), got, reported)
		}
		for _, st := range steps {
			if st.Attributes["strata.unit.id"] != u.ID() || st.Attributes["strata.step"] != st.Name {
				t.Errorf("step span %s of %s: %v", st.Name, u.ID(), st.Attributes)
			}
			stepIDs[st.SpanID] = st
		}
	}

	// Terraform's own spans.
	if len(engine) == 0 {
		t.Fatal("terraform sent no spans with OTEL_TRACES_EXPORTER=otlp")
	}
	engineIDs := map[string]bool{}
	for _, s := range engine {
		engineIDs[s.SpanID] = true
	}
	joined, alone := 0, 0
	for _, s := range engine {
		if s.Service != "Terraform CLI" {
			t.Errorf("a span from %q", s.Service)
		}
		if engineIDs[s.ParentSpanID] {
			continue
		}
		// One of terraform's roots: a child of a strata step, or of
		// nothing when this terraform does not read TRACEPARENT.
		if s.ParentSpanID == "" {
			alone++
			continue
		}
		step, ok := stepIDs[s.ParentSpanID]
		if !ok || s.TraceID != incomingTrace {
			t.Errorf("terraform span %q: parent %s in trace %s is no step of strata's", s.Name, s.ParentSpanID, s.TraceID)
			continue
		}
		if !strings.HasPrefix(s.Name, "terraform "+step.Name) {
			t.Errorf("terraform span %q under step %q", s.Name, step.Name)
		}
		joined++
	}
	if joined == 0 {
		t.Logf("terraform sent %d spans in %d traces of its own: it does not read TRACEPARENT", len(engine), alone)
	}
}

// traceRepo has a unit that applies, writing the TRACEPARENT its apply
// got to $TP_OUT, one whose plan fails, one that plans after it, and a
// hook writing its TRACEPARENT to $HOOK_OUT.
func traceRepo(t *testing.T) string {
	return writeRepo(t, map[string]string{
		"strata.yml": `dirs:
  ok: {tags: [ok]}
  bad: {tags: [bad]}
  after: {tags: [after]}
stacks:
  names:
    ok: {tag_query: ok}
    bad: {tag_query: bad}
    after:
      tag_query: after
      rules: {plan_after: [bad]}
hooks:
  all:
    pre:
      - type: run
        cmd: ['sh', '-c', 'printf "%s" "$TRACEPARENT" > "$HOOK_OUT"']
`,
		"ok/main.tf": `resource "terraform_data" "tp" {
  triggers_replace = timestamp()
  provisioner "local-exec" {
    command = "printf '%s' \"$TRACEPARENT\" > \"$TP_OUT\""
  }
}
`,
		"bad/main.tf":   "resource \"terraform_data\" \"x\" {\n  input = var.missing\n}\n",
		"after/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
}

// TestTracesOfAFailure: a failed unit's span and its failed step's span
// have status Error; the unit skipped after it has a span without steps,
// not an Error; the engine and the hooks get their step's span in
// TRACEPARENT.
func TestTracesOfAFailure(t *testing.T) {
	needTerraform(t)
	recv := testenv.StartOTLPReceiver(t)
	root := traceRepo(t)
	out := t.TempDir()
	tpOut, hookOut := filepath.Join(out, "tp"), filepath.Join(out, "hook")
	reportFile := filepath.Join(out, "report.json")
	r := runBin(t, root, tracesEnv(t, recv.URL, "TP_OUT="+tpOut, "HOOK_OUT="+hookOut), "apply", "-auto-approve", "--report", reportFile)
	if r.code != 1 {
		t.Fatalf("apply with a failing unit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	spans, _ := splitSpans(t, recv.Spans())
	if spans.root.ParentSpanID != "" {
		t.Errorf("no TRACEPARENT came in, and the command span has parent %s", spans.root.ParentSpanID)
	}
	if spans.root.StatusCode != tracepb.Status_STATUS_CODE_ERROR || spans.root.Attributes["process.exit.code"] != "1" {
		t.Errorf("command span of exit 1: %v %v", spans.root.StatusCode, spans.root.Attributes)
	}
	units := spans.unitSpans(t)
	rep := readReport(t, reportFile)
	if len(units) != 3 || len(rep.Units) != 3 {
		t.Errorf("%d unit spans, %d units", len(units), len(rep.Units))
	}
	for _, u := range rep.Units {
		us := units[u.ID()]
		steps := spans.stepSpans(us)
		switch u.Dir {
		case "bad":
			if u.Status != report.StatusFailed {
				t.Fatalf("bad: %s", u.Status)
			}
			if us.StatusCode != tracepb.Status_STATUS_CODE_ERROR || us.StatusMessage != u.Reason || us.Attributes["strata.unit.status"] != "failed" {
				t.Errorf("failed unit's span: %v %q %v; reason %q", us.StatusCode, us.StatusMessage, us.Attributes, u.Reason)
			}
			failed := 0
			for _, st := range steps {
				if st.StatusCode == tracepb.Status_STATUS_CODE_ERROR {
					failed++
					if !strings.Contains(st.StatusMessage, "Reference to undeclared input variable") {
						t.Errorf("failed step %s: %q", st.Name, st.StatusMessage)
					}
				}
			}
			if failed != 1 {
				t.Errorf("%d failed step spans: %+v", failed, steps)
			}
		case "after":
			if u.Status != report.StatusSkipped || us.SpanID == "" || us.StatusCode == tracepb.Status_STATUS_CODE_ERROR ||
				us.Attributes["strata.unit.status"] != "skipped" || us.Attributes["strata.unit.reason"] != u.Reason || len(steps) != 0 {
				t.Errorf("skipped unit %s: span %+v, %d steps", u.Status, us, len(steps))
			}
		case "ok":
			if u.Status != report.StatusApplied || us.StatusCode == tracepb.Status_STATUS_CODE_ERROR {
				t.Fatalf("ok: %s, span %v", u.Status, us.StatusCode)
			}
			var apply testenv.Span
			for _, st := range steps {
				if st.Name == report.StepApply {
					apply = st
				}
			}
			if got, want := readFileT(t, tpOut), "00-"+spans.root.TraceID+"-"+apply.SpanID+"-01"; apply.SpanID == "" || got != want {
				t.Errorf("the apply's TRACEPARENT: %q, want its step's span %q", got, want)
			}
		}
	}
	var hook testenv.Span
	for _, s := range spans.stepSpans(spans.root) {
		if s.Name == "hooks.all.pre[0]" {
			hook = s
		}
	}
	if got, want := readFileT(t, hookOut), "00-"+spans.root.TraceID+"-"+hook.SpanID+"-01"; hook.SpanID == "" || got != want {
		t.Errorf("the hook's TRACEPARENT: %q, want its span %q", got, want)
	}
}

// TestTracesOff: with no exporter set, nothing is sent, and the engine and
// the hooks get the TRACEPARENT strata got, if any, unchanged.
func TestTracesOff(t *testing.T) {
	needTerraform(t)
	recv := testenv.StartOTLPReceiver(t)
	root := traceRepo(t)
	out := t.TempDir()
	tpOut, hookOut := filepath.Join(out, "tp"), filepath.Join(out, "hook")
	for _, tc := range []struct {
		name     string
		env      []string
		incoming string
	}{
		{"nothing set", nil, ""},
		{"a TRACEPARENT", nil, incomingTP},
		// The exporter none wins over an endpoint.
		{"exporter none", []string{"OTEL_TRACES_EXPORTER=none", "OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL}, incomingTP},
	} {
		env := append(append(hermeticEnv(t), "TP_OUT="+tpOut, "HOOK_OUT="+hookOut), tc.env...)
		if tc.incoming != "" {
			env = append(env, "TRACEPARENT="+tc.incoming)
		}
		r := runBin(t, root, env, "apply", "-auto-approve", "--dir", "ok")
		if r.code != 0 {
			t.Fatalf("%s: apply: exit %d\n%s%s", tc.name, r.code, r.stdout, r.stderr)
		}
		if got := readFileT(t, tpOut); got != tc.incoming {
			t.Errorf("%s: the engine got TRACEPARENT %q", tc.name, got)
		}
		if got := readFileT(t, hookOut); got != tc.incoming {
			t.Errorf("%s: the hook got TRACEPARENT %q", tc.name, got)
		}
		if strings.Contains(r.stderr, "traces") {
			t.Errorf("%s: stderr: %s", tc.name, r.stderr)
		}
	}
	if n := recv.Requests(); n != 0 {
		t.Errorf("traces off, and the receiver got %d exports", n)
	}
}

// TestTracesToADeadCollector: a collector that is not there changes
// neither the exit code nor the output, but for one line on stderr.
func TestTracesToADeadCollector(t *testing.T) {
	needTerraform(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	root := traceRepo(t)
	out := t.TempDir()
	env := tracesEnv(t, dead, "TP_OUT="+filepath.Join(out, "tp"), "HOOK_OUT="+filepath.Join(out, "hook"))
	r := runBin(t, root, env, "apply", "-auto-approve", "--dir", "ok")
	if r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := strings.Count(r.stderr, "strata: traces:"); n != 1 {
		t.Errorf("the dead collector said %d times:\n%s", n, r.stderr)
	}
	// A failing run keeps its exit code too.
	if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 1 {
		t.Errorf("apply with a failing unit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
