package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/strata-iac/strata/internal/engineargs"
	"github.com/strata-iac/strata/report"
)

// TestLineScanner: the output passes through; the line holding the
// marker is kept, and seen is called once.
func TestLineScanner(t *testing.T) {
	var out bytes.Buffer
	seen := 0
	s := &lineScanner{w: &out, seen: func() { seen++ }}
	for _, line := range []string{"Refreshing...\n", "Plan: 1 to add, 0 to change, 0 to destroy.\n", "Plan: again\n"} {
		if _, err := s.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if s.summary != "Plan: again" || seen != 1 || !strings.Contains(out.String(), "Refreshing") {
		t.Errorf("summary %q seen %d out %q", s.summary, seen, out.String())
	}
	apply := &lineScanner{w: &out, marker: "Apply complete! "}
	apply.Write([]byte("x\nApply complete! Resources: 1 added, 0 changed, 0 destroyed.\n\nOutputs:\n"))
	if apply.summary != "Apply complete! Resources: 1 added, 0 changed, 0 destroyed." {
		t.Errorf("apply summary %q", apply.summary)
	}
}

// TestPlainTee: what is parsed is read without colour; what is shown
// keeps it.
func TestPlainTee(t *testing.T) {
	var plain, shown bytes.Buffer
	tee := plainTee{plain: &plain, out: &shown}
	in := "\x1b[1m\x1b[32mApply complete!\x1b[0m\n"
	if n, err := tee.Write([]byte(in)); err != nil || n != len(in) {
		t.Fatalf("write: %d %v", n, err)
	}
	if plain.String() != "Apply complete!\n" || shown.String() != in {
		t.Errorf("plain %q shown %q", plain.String(), shown.String())
	}
}

// TestApplySummary: the counts of an apply's closing line, with and
// without imports.
func TestApplySummary(t *testing.T) {
	for line, want := range map[string][]string{
		"Apply complete! Resources: 1 added, 2 changed, 3 destroyed.":             {"", "1", "2", "3"},
		"Apply complete! Resources: 4 imported, 1 added, 0 changed, 0 destroyed.": {"4", "1", "0", "0"},
	} {
		m := applySummary.FindStringSubmatch(line)
		if m == nil || !reflect.DeepEqual(m[1:], want) {
			t.Errorf("%q: %q, want %q", line, m, want)
		}
	}
	if applySummary.MatchString("Destroy complete! Resources: 1 destroyed.") {
		t.Error("a destroy's line read as an apply's")
	}
}

// TestPlanOutcome: what a failed apply printed of its plan.
func TestPlanOutcome(t *testing.T) {
	o := planOutcome(true, "Plan: 2 to add, 1 to change, 0 to destroy.")
	if !o.HasChanges || o.Changes != (report.Changes{Add: 2, Change: 1}) {
		t.Errorf("planOutcome = %+v", o)
	}
	if o := planOutcome(false, ""); o.HasChanges || o.Changes != (report.Changes{}) {
		t.Errorf("no summary: %+v", o)
	}
}

// TestOutputsJSON: outputs as `output -json` renders them, sensitive ones
// hidden unless shown.
func TestOutputsJSON(t *testing.T) {
	outs := map[string]tfexec.OutputMeta{
		"id":  {Value: json.RawMessage(`"i-1"`), Type: json.RawMessage(`"string"`)},
		"pw":  {Value: json.RawMessage(`"hunter22"`), Type: json.RawMessage(`"string"`), Sensitive: true},
		"num": {Value: json.RawMessage(`3`), Type: json.RawMessage(`"number"`)},
	}
	b, err := json.Marshal(outputsJSON(outs, false))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":{"sensitive":false,"type":"string","value":"i-1"},"num":{"sensitive":false,"type":"number","value":3},"pw":{"sensitive":true,"type":"string","value":"***"}}`
	if string(b) != want {
		t.Errorf("outputsJSON = %s\nwant %s", b, want)
	}
	shown, _ := json.Marshal(outputsJSON(outs, true))
	if !strings.Contains(string(shown), `"value":"hunter22"`) {
		t.Errorf("shown: %s", shown)
	}
}

// TestJSONString: a string's content, anything else as written.
func TestJSONString(t *testing.T) {
	for raw, want := range map[string]string{`"a\nb"`: "a\nb", `3`: "3", `{"k":"v"}`: `{"k":"v"}`, `null`: "", `true`: "true"} {
		if got := JSONString(json.RawMessage(raw)); got != want {
			t.Errorf("JSONString(%s) = %q, want %q", raw, got, want)
		}
	}
}

// TestErrorText: an error's message trimmed; none for nil.
func TestErrorText(t *testing.T) {
	if ErrorText(nil) != "" || ErrorText(errors.New("  exit status 1\n\n")) != "exit status 1" {
		t.Error("ErrorText")
	}
}

// TestErrorKinds: what asks for init, what is worth another try, and a
// state lock, which never is.
func TestErrorKinds(t *testing.T) {
	for _, tc := range []struct {
		msg             string
		init, transient bool
	}{
		{`Error: Required plugins are not installed`, true, false},
		{`Error: Inconsistent dependency lock file`, true, false},
		{`please run "tofu init"`, true, false},
		{`Error: Backend configuration changed`, true, false},
		{`Error: Failed to download module: connection reset by peer`, false, true},
		{`Error: 429 Too Many Requests`, false, true},
		{`Error: Error acquiring the state lock: 503 Service Unavailable`, false, false},
		{`Error: Invalid reference`, false, false},
	} {
		err := errors.New(tc.msg)
		if initRequired(err) != tc.init || transient(err) != tc.transient {
			t.Errorf("%q: init %t transient %t, want %t %t", tc.msg, initRequired(err), transient(err), tc.init, tc.transient)
		}
	}
}

// TestEngineOptions: every plan flag terraform-exec can express becomes
// an option, and init's likewise.
func TestEngineOptions(t *testing.T) {
	f, tr := false, true
	all := engineargs.PlanArgs{VarFiles: []string{"a", "b"}, Vars: []string{"x=1"}, Targets: []string{"t"}, Replace: []string{"r"},
		Refresh: &f, RefreshOnly: true, Destroy: true, Lock: &tr, LockTimeout: "3s", Parallelism: 4}
	if n := len(engineOptions(all)); n != 11 {
		t.Errorf("engineOptions: %d options, want 11", n)
	}
	if n := len(planOptions(all)); n != 11 {
		t.Errorf("planOptions: %d options, want 11", n)
	}
	if n := len(engineOptions(engineargs.PlanArgs{})); n != 0 {
		t.Errorf("no flags: %d options", n)
	}
	init := engineargs.InitArgs{Upgrade: true, Reconfigure: true, Backend: &f, BackendConfig: []string{"a", "b"}, ForceCopy: true, Get: &tr, PluginDir: []string{"p"}}
	if n := len(initOptions(init)); n != 8 {
		t.Errorf("initOptions: %d options, want 8", n)
	}
}

// TestCallArgv: each engine call's argv, as logs show it.
func TestCallArgv(t *testing.T) {
	for _, tc := range []struct {
		call engineCall
		want string
	}{
		{&validateCall{Args: []string{"-json"}}, "validate -json"},
		{&completeCall{}, "output"},
		{&lockCall{Args: engineargs.LockArgs{FSMirror: "/m"}}, "providers lock -fs-mirror=/m"},
		{&lockCall{Args: engineargs.LockArgs{NetMirror: "https://m"}}, "providers lock -net-mirror=https://m"},
		{&applyNowCall{}, "apply -auto-approve"},
	} {
		if got := strings.Join(tc.call.Argv(), " "); got != tc.want {
			t.Errorf("%T argv = %q, want %q", tc.call, got, tc.want)
		}
		if tc.call.checksVersion() {
			t.Errorf("%T asks for the version", tc.call)
		}
	}
	if got := fixedFlags("plan", false); !reflect.DeepEqual(got, []string{"plan", "-no-color", "-input=false"}) {
		t.Errorf("fixedFlags = %q", got)
	}
	if got := fixedFlags("plan", true); !reflect.DeepEqual(got, []string{"plan", "-input=false"}) {
		t.Errorf("fixedFlags in colour = %q", got)
	}
}

// TestInvocationString: an invocation's command line for logs; none
// without a call.
func TestInvocationString(t *testing.T) {
	if got := (invocation{Call: &outputCall{}}).String(); got != "terraform output -json" {
		t.Errorf("String = %q", got)
	}
	if (invocation{}).Args() != nil {
		t.Error("an empty invocation has arguments")
	}
	if got := EnvList(map[string]string{"B": "2", "A": "1=1"}); !reflect.DeepEqual(got, []string{"A=1=1", "B=2"}) {
		t.Errorf("EnvList = %q", got)
	}
}
