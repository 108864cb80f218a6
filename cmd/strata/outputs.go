package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/strata-iac/strata/report"
)

// outputRequest is what output's engine arguments ask, as terraform
// output reads them: -json, -raw, and an output's name.
type outputRequest struct {
	asJSON, raw bool
	name        string
}

func outputRequestOf(args []string) outputRequest {
	var r outputRequest
	for _, a := range args {
		switch {
		case a == "-json" || a == "--json":
			r.asJSON = true
		case a == "-raw" || a == "--raw":
			r.raw = true
		case !strings.HasPrefix(a, "-"):
			r.name = a
		}
	}
	return r
}

// printOutputs prints the outputs of every unit of a run on w, and
// nothing else there (docs/behaviour.md#commands): with -json one JSON
// document keyed by unit ID; with a name only that output, and an error
// when no unit has it; with -raw the one unit's value as it is.
func printOutputs(w io.Writer, rep *report.Report, args []string, dropIn bool) error {
	req := outputRequestOf(args)
	units := rep.Units
	if req.name != "" {
		units = nil
		for _, u := range rep.Units {
			if _, ok := u.Outputs[req.name]; ok {
				units = append(units, u)
			}
		}
		if len(units) == 0 {
			return fmt.Errorf("no unit has an output named %q", req.name)
		}
	}
	switch {
	case req.raw:
		return printRaw(w, units, req.name)
	case req.asJSON:
		all := map[string]any{}
		for _, u := range units {
			switch {
			case req.name != "":
				all[u.ID()] = outputValue(u, req.name)
			case u.Outputs != nil:
				all[u.ID()] = u.Outputs
			}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(all)
	}
	for _, u := range units {
		names := make([]string, 0, len(u.Outputs))
		for n := range u.Outputs {
			if req.name == "" || n == req.name {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			v, _ := json.Marshal(outputValue(u, n))
			if dropIn {
				// As terraform output prints it.
				fmt.Fprintf(w, "%s = %s\n", n, v)
				continue
			}
			fmt.Fprintf(w, "%s: %s = %s\n", u.Name(), n, v)
		}
	}
	return nil
}

// outputValue is an output's value in a unit's report.
func outputValue(u *report.UnitReport, name string) any {
	if o, ok := u.Outputs[name].(map[string]any); ok {
		return o["value"]
	}
	return nil
}

// printRaw prints one output's value as it is, as terraform output -raw
// does: a string, a number or a bool, of exactly one unit.
func printRaw(w io.Writer, units []*report.UnitReport, name string) error {
	if name == "" {
		return fmt.Errorf("output -raw needs the name of an output")
	}
	if len(units) > 1 {
		ids := make([]string, len(units))
		for i, u := range units {
			ids[i] = u.Name()
		}
		return fmt.Errorf("output -raw %s: %d units have it (%s); pick one with --dir or --stack", name, len(units), strings.Join(ids, ", "))
	}
	if o, _ := units[0].Outputs[name].(map[string]any); o["sensitive"] == true && o["value"] == "***" {
		return fmt.Errorf("output -raw %s: the output is sensitive; add --show-sensitive to print it", name)
	}
	var v any
	if b, err := json.Marshal(outputValue(units[0], name)); err == nil {
		err = json.Unmarshal(b, &v)
		if err != nil {
			return fmt.Errorf("output -raw %s: %w", name, err)
		}
	}
	switch v := v.(type) {
	case string:
		fmt.Fprint(w, v)
	case float64, bool:
		fmt.Fprint(w, v)
	default:
		return fmt.Errorf("output -raw %s: the value is not a string, a number or a bool; use -json", name)
	}
	return nil
}
