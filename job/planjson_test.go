package job

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/strata-iac/strata/report"
)

func rc(actions ...tfjson.Action) *tfjson.ResourceChange {
	return &tfjson.ResourceChange{Change: &tfjson.Change{Actions: actions}}
}

func oc(actions ...tfjson.Action) *tfjson.Change { return &tfjson.Change{Actions: actions} }

// TestCountPlan: resource actions count as the engine's summary does, a
// replacement either way round is one add and one destroy, no-op and read
// count nothing, and outputs count when their action is not no-op.
func TestCountPlan(t *testing.T) {
	const (
		create = tfjson.ActionCreate
		update = tfjson.ActionUpdate
		del    = tfjson.ActionDelete
		noop   = tfjson.ActionNoop
		read   = tfjson.ActionRead
		forget = tfjson.ActionForget
	)
	for _, tc := range []struct {
		name    string
		plan    tfjson.Plan
		want    report.Changes
		outputs []string
	}{
		{name: "empty"},
		{name: "create", plan: tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{rc(create), rc(create)}}, want: report.Changes{Add: 2}},
		{name: "update and delete", plan: tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{rc(update), rc(del)}}, want: report.Changes{Change: 1, Destroy: 1}},
		{name: "replace, delete first", plan: tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{rc(del, create)}}, want: report.Changes{Add: 1, Destroy: 1}},
		{name: "replace, create first", plan: tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{rc(create, del)}}, want: report.Changes{Add: 1, Destroy: 1}},
		{name: "no-op, read and forget", plan: tfjson.Plan{ResourceChanges: []*tfjson.ResourceChange{rc(noop), rc(read), rc(forget), {}}}},
		{
			name: "outputs only",
			plan: tfjson.Plan{
				ResourceChanges: []*tfjson.ResourceChange{rc(noop)},
				OutputChanges:   map[string]*tfjson.Change{"b": oc(update), "a": oc(create), "same": oc(noop), "gone": oc(del)},
			},
			want:    report.Changes{Outputs: 3},
			outputs: []string{"a", "b", "gone"},
		},
		{
			name: "resources and outputs",
			plan: tfjson.Plan{
				ResourceChanges: []*tfjson.ResourceChange{rc(create), rc(update)},
				OutputChanges:   map[string]*tfjson.Change{"id": oc(create)},
			},
			want:    report.Changes{Add: 1, Change: 1, Outputs: 1},
			outputs: []string{"id"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, outputs := countPlan(&tc.plan)
			if got != tc.want || !reflect.DeepEqual(outputs, tc.outputs) {
				t.Errorf("countPlan = %+v %v, want %+v %v", got, outputs, tc.want, tc.outputs)
			}
		})
	}
}

// TestReadPlanJSON: a plan's JSON (as terraform 1.11 writes it) gives the
// counts, the changed outputs and each output's value after the plan:
// known values keep their digits and types, a value with any unknown part
// is unknown, a sensitive one is marked.
func TestReadPlanJSON(t *testing.T) {
	const planJSON = `{"format_version":"1.2","terraform_version":"1.11.4",
"planned_values":{"outputs":{"same":{"sensitive":false,"type":"string","value":"s"},"big":{"sensitive":false,"value":12345678901234567890},"secret":{"sensitive":true,"value":"x"}},"root_module":{}},
"resource_changes":[{"address":"terraform_data.x","change":{"actions":["create"],"after_unknown":{"id":true}}}],
"output_changes":{
 "same":{"actions":["no-op"],"before":"s","after":"s","after_unknown":false},
 "big":{"actions":["update"],"before":1,"after":12345678901234567890,"after_unknown":false},
 "id":{"actions":["create"],"before":null,"after_unknown":true},
 "list":{"actions":["create"],"before":null,"after":["a",null],"after_unknown":[false,true]},
 "map":{"actions":["create"],"before":null,"after":{"k":[1,2]},"after_unknown":{"k":[false,false]}},
 "secret":{"actions":["update"],"before":"w","after":"x","after_unknown":false,"after_sensitive":true}}}`
	v, err := readPlanJSON([]byte(planJSON))
	if err != nil {
		t.Fatal(err)
	}
	if want := (report.Changes{Add: 1, Outputs: 5}); v.Changes != want {
		t.Errorf("changes = %+v, want %+v", v.Changes, want)
	}
	if want := []string{"big", "id", "list", "map", "secret"}; !reflect.DeepEqual(v.ChangedOutputs, want) {
		t.Errorf("changed outputs = %v, want %v", v.ChangedOutputs, want)
	}
	for name, want := range map[string]PlannedOutput{
		"same":   {Value: json.RawMessage(`"s"`), Known: true},
		"big":    {Value: json.RawMessage(`12345678901234567890`), Known: true},
		"id":     {},
		"list":   {},
		"map":    {Value: json.RawMessage(`{"k":[1,2]}`), Known: true},
		"secret": {Value: json.RawMessage(`"x"`), Known: true, Sensitive: true},
	} {
		got, ok := v.Outputs[name]
		if !ok || got.Known != want.Known || got.Sensitive != want.Sensitive || (want.Known && !bytes.Equal(got.Value, want.Value)) {
			t.Errorf("output %s = %+v (%s), want %+v (%s)", name, got, got.Value, want, want.Value)
		}
	}
	if _, err := readPlanJSON([]byte(`{"resource_changes":[]}`)); err == nil {
		t.Error("a JSON without a format version was read as a plan")
	}
}

// TestOutputScanner: the names in the "Changes to Outputs:" block of a
// printed plan (terraform 1.11's text, each line one write as
// terraform-exec passes them), and nothing from the outputs printed after
// the apply.
func TestOutputScanner(t *testing.T) {
	text := `terraform_data.x: Refreshing state... [id=e2f3]

Changes to Outputs:
  + h           = <<-EOT
        line1
        
        line3
    EOT
  + longer_name = {
      + a = 1
      + b = "x"
    }
  ~ o           = "v1" -> "v3"
  - old         = "x" -> null
  + s           = (sensitive value)

You can apply this plan to save these new output values to the Terraform
state, without changing any real infrastructure.

Apply complete! Resources: 0 added, 0 changed, 0 destroyed.

Outputs:

o = "v3"
`
	var out bytes.Buffer
	s := &outputScanner{w: &out}
	for _, line := range bytes.SplitAfter([]byte(text), []byte("\n")) {
		s.Write(line)
	}
	if want := []string{"h", "longer_name", "o", "old", "s"}; !reflect.DeepEqual(s.names, want) {
		t.Errorf("names = %v, want %v", s.names, want)
	}
	if out.String() != text {
		t.Error("the output was not passed through unchanged")
	}
}

func TestChangesString(t *testing.T) {
	for c, want := range map[report.Changes]string{
		{}:                              "+0 ~0 -0",
		{Add: 1, Change: 2, Destroy: 3}: "+1 ~2 -3",
		{Outputs: 1}:                    "+0 ~0 -0 ~1 output",
		{Add: 1, Outputs: 2}:            "+1 ~0 -0 ~2 outputs",
	} {
		if got := c.String(); got != want {
			t.Errorf("%+v: %q, want %q", c, got, want)
		}
	}
}

// TestSensitiveStrings: every string at a path the plan's JSON marks
// sensitive is a secret, before and after, in resource changes and drift
// (nested lists and objects), output changes, the prior state and planned
// values (outputs and resource attributes, child modules too) and
// sensitive root variables; strings at unmarked paths, numbers, booleans
// and map keys are not.
func TestSensitiveStrings(t *testing.T) {
	const planJSON = `{"format_version":"1.2",
"variables":{"token":{"value":"var-secret"},"region":{"value":"eu-west-1"}},
"configuration":{"root_module":{"variables":{"token":{"sensitive":true},"region":{}}}},
"resource_changes":[{"address":"x.a","change":{"actions":["update"],
  "before":{"name":"plain","conf":{"pw":"before-pw","host":"h1"},"list":["l-plain","l-secret"],"n":12345,"flag":true},
  "after":{"name":"plain","conf":{"pw":"after-pw","host":"h1"},"list":["l-plain","l-secret2"],"n":12345,"flag":true},
  "before_sensitive":{"conf":{"pw":true},"list":[false,true],"n":true,"flag":true},
  "after_sensitive":{"conf":{"pw":true},"list":[false,true]}}}],
"resource_drift":[{"address":"x.b","change":{"actions":["update"],"before":{"key":"drift-old"},"after":{"key":"drift-new"},
  "before_sensitive":{"key":true},"after_sensitive":{"key":true}}}],
"output_changes":{"token":{"actions":["update"],"before":"out-old","after":"out-new","before_sensitive":true,"after_sensitive":true},
  "open":{"actions":["update"],"before":"open-old","after":"open-new","before_sensitive":false,"after_sensitive":false}},
"prior_state":{"format_version":"1.0","values":{"outputs":{"token":{"sensitive":true,"value":{"k-is-not-secret":"prior-out"}},"open":{"sensitive":false,"value":"prior-open"}},
  "root_module":{"resources":[{"address":"x.c","values":{"secret":"prior-attr","plain":"prior-plain"},"sensitive_values":{"secret":true}}],
  "child_modules":[{"address":"module.m","resources":[{"address":"module.m.x.d","values":{"s":["child-secret"]},"sensitive_values":{"s":true}}]}]}}},
"planned_values":{"outputs":{"token":{"sensitive":true,"value":"planned-out"}},"root_module":{}}}`
	v, err := readPlanJSON([]byte(planJSON))
	if err != nil {
		t.Fatal(err)
	}
	got := append([]string(nil), v.Secrets...)
	sort.Strings(got)
	got = slices.Compact(got)
	want := []string{"after-pw", "before-pw", "child-secret", "drift-new", "drift-old", "l-secret", "l-secret2", "out-new", "out-old",
		"planned-out", "prior-attr", "prior-out", "var-secret"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("secrets = %q\nwant %q", got, want)
	}
}
