package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestStacksTransitive: rules are listed as written and inherited, expanded
// to leaves; --transitive lists what each rule reaches through others.
func TestStacksTransitive(t *testing.T) {
	root := fixture(t, "nested")
	for _, tc := range []struct {
		args                              []string
		planAfter, applyAfter, modifiedBy []string
	}{
		{[]string{"stacks", "--json"}, []string{"base", "prod-database"}, []string{"dev-database", "dev-network", "dev-service"}, []string{"base"}},
		{[]string{"stacks", "--json", "--transitive"}, []string{"base", "prod-database", "prod-network"}, []string{"dev-database", "dev-network", "dev-service"}, []string{"base"}},
	} {
		code, out, errOut := strata(t, append([]string{"-C", root}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", tc.args, code, errOut)
		}
		var got []stackEntry
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		for _, s := range got {
			if s.Name != "prod-service" {
				continue
			}
			if r := s.Rules; !reflect.DeepEqual(r.PlanAfter, tc.planAfter) || !reflect.DeepEqual(r.ApplyAfter, tc.applyAfter) || !reflect.DeepEqual(r.ModifiedBy, tc.modifiedBy) {
				t.Errorf("%v: prod-service rules = %+v", tc.args, r)
			}
		}
	}
	code, out, errOut := strata(t, "-C", root, "stacks", "--transitive")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	found := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "prod/prod-service ") {
			found = strings.Contains(line, " base,prod-database,prod-network ")
		}
	}
	if !found {
		t.Errorf("stacks --transitive does not list prod-service after prod-network:\n%s", out)
	}
}
