package config

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// The JSON Schema and the README's configuration reference are generated
// from the config types and their tags, the same ones the decoder reads, so
// the parser, the schema and the documentation cannot disagree. A test
// compares the generated files with the committed ones.

// JSONSchema returns the JSON Schema (draft-07) of strata.yml and
// .terrateam/config.yml, for editor completion and validation.
func JSONSchema() ([]byte, error) {
	root := schemaOf(reflect.TypeOf(Config{}))
	root["$schema"] = "http://json-schema.org/draft-07/schema#"
	root["$id"] = "https://github.com/strata-iac/strata/schema/strata.schema.json"
	root["title"] = "strata.yml / .terrateam/config.yml"
	b, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

var (
	stringType    = reflect.TypeOf(String{})
	boolType      = reflect.TypeOf(Bool{})
	intType       = reflect.TypeOf(Int{})
	floatType     = reflect.TypeOf(Float{})
	ignoredType   = reflect.TypeOf(Ignored{})
	scalarType    = reflect.TypeOf(Scalar{})
	dependsOnType = reflect.TypeOf(DependsOn{})
	inputRefType  = reflect.TypeOf(InputRef{})
	checksType    = reflect.TypeOf(ApplyChecks{})
	checkType     = reflect.TypeOf(ApplyCheck{})
	autoApplyType = reflect.TypeOf(AutoApply{})
	destType      = reflect.TypeOf(DestinationBranch{})
	forEachType   = reflect.TypeOf(ForEach{})
)

type schema = map[string]any

func schemaOf(t reflect.Type) schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case stringType:
		// Numbers written where a string is expected keep their text.
		return schema{"type": []string{"string", "number"}}
	case boolType:
		return schema{"type": "boolean"}
	case intType:
		return schema{"type": "integer"}
	case floatType:
		return schema{"type": "number"}
	case ignoredType:
		return schema{}
	case scalarType:
		return schema{"type": []string{"string", "number", "boolean"}}
	case dependsOnType:
		return schema{"oneOf": []schema{{"type": "string"}, structSchema(t)}}
	case inputRefType:
		return schema{"oneOf": []schema{{"type": "string", "pattern": `^[^.]+\..+$`}, structSchema(t)}}
	case checksType:
		return checksSchema()
	case autoApplyType:
		return schema{"oneOf": []schema{{"type": "boolean"}, structSchema(t)}}
	case destType:
		return schema{"oneOf": []schema{{"type": "string"}, structSchema(t)}}
	case forEachType:
		key := schema{"type": "string", "pattern": instanceKey.String(), "maxLength": maxInstanceKey}
		return schema{"oneOf": []schema{
			{"type": "array", "items": key, "minItems": 1, "uniqueItems": true},
			{"type": "object", "minProperties": 1, "propertyNames": key,
				"additionalProperties": schema{"oneOf": []schema{{"type": "null"}, structSchema(reflect.TypeOf(Instance{}))}}},
		}}
	}
	if t.Kind() == reflect.Slice {
		return schema{"type": "array", "items": schemaOf(t.Elem())}
	}
	if t.Kind() == reflect.Struct && strings.HasPrefix(t.Name(), "Map[") {
		f, _ := t.FieldByName("Entries")
		v, _ := f.Type.Elem().FieldByName("Value")
		return schema{"type": "object", "additionalProperties": schemaOf(v.Type)}
	}
	if t.Kind() == reflect.Struct {
		return structSchema(t)
	}
	panic("stacks: no schema for " + t.String())
}

func structSchema(t reflect.Type) schema {
	props := schema{}
	var required []string
	for _, f := range structFields(t) {
		ps := schemaOf(t.Field(f.index).Type)
		desc := f.doc
		switch {
		case f.ignored:
			desc = "Accepted and ignored by strata. " + desc
		case f.unenforced:
			desc = "Checked, not yet enforced by strata. " + desc
		case f.deprecated:
			desc = "Deprecated. " + desc
		case f.ext:
			desc = "strata extension. " + desc
		}
		if desc != "" {
			ps["description"] = desc
		}
		if len(f.enum) > 0 {
			ps["enum"] = f.enum
		}
		props[f.name] = ps
		if f.required {
			required = append(required, f.name)
		}
	}
	s := schema{"type": "object", "additionalProperties": false, "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// checksSchema is apply_requirements.checks: a list of checks, each with
// its tag query, or the older one map of approved, merge_conflicts and
// status_checks for every unit.
func checksSchema() schema {
	item := structSchema(checkType)
	legacy := structSchema(checkType)
	delete(legacy, "required")
	props := schema{}
	for k, v := range legacy["properties"].(schema) {
		if legacyCheckKeys[k] {
			props[k] = v
		}
	}
	legacy["properties"] = props
	return schema{"oneOf": []schema{{"type": "array", "items": item}, legacy}}
}

// Reference renders the configuration reference table of the README:
// every key, its type, its class and what it does.
func Reference() string {
	var b strings.Builder
	b.WriteString("| key | type | class | meaning |\n|---|---|---|---|\n")
	// Each struct's keys are listed once, under the first key that has it;
	// later keys of the same type point there.
	documented := map[reflect.Type]string{}
	var walk func(t reflect.Type, prefix, inherited string)
	walk = func(t reflect.Type, prefix, inherited string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		documented[t] = strings.TrimSuffix(prefix, ".")
		// A copy: the decoder's cached fields keep their order, which its
		// index by name points into.
		fields := slices.Clone(structFields(t))
		sort.SliceStable(fields, func(i, j int) bool { return classRank(fields[i]) < classRank(fields[j]) })
		for _, f := range fields {
			ft := t.Field(f.index).Type
			key := prefix + f.name
			typ, child, childPrefix := describeType(ft, key)
			class := "honoured"
			switch {
			case f.ignored:
				class = "ignored"
			case f.deprecated:
				class = "deprecated"
			case f.ext:
				class = "strata"
			case f.unenforced:
				class = "checked"
			}
			if inherited != "" {
				class = inherited
			}
			doc := f.doc
			if len(f.enum) > 0 {
				doc += " (" + strings.Join(f.enum, ", ") + ")"
			}
			if f.required {
				doc += "; required"
			}
			if first, ok := documented[child]; ok && child != nil && !f.ignored {
				doc += "; keys as in `" + first + "`"
				child = nil
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", key, typ, class, strings.ReplaceAll(doc, "|", `\|`))
			if child != nil && !f.ignored {
				sub := inherited
				if f.unenforced {
					sub = class
				}
				walk(child, childPrefix, sub)
			}
		}
	}
	walk(reflect.TypeOf(Config{}), "", "")
	return b.String()
}

func classRank(f field) int {
	switch {
	case f.ignored:
		return 2
	case f.deprecated:
		return 1
	}
	return 0
}

// describeType names a field's type for the reference and says which
// struct, if any, documents its keys, under which key prefix.
func describeType(t reflect.Type, key string) (name string, child reflect.Type, prefix string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case stringType:
		return "string", nil, ""
	case boolType:
		return "bool", nil, ""
	case intType:
		return "int", nil, ""
	case floatType:
		return "number", nil, ""
	case ignoredType:
		return "any", nil, ""
	case scalarType:
		return "scalar", nil, ""
	case dependsOnType:
		return "query or map", t, key + "."
	case inputRefType:
		return "`stack.output` or map", t, key + "."
	case checksType:
		return "list of map (or one map)", checkType, key + "[]."
	case autoApplyType:
		return "bool or map", t, key + "."
	case destType:
		return "branch or map", t, key + "."
	case forEachType:
		return "list of key, or map of key to map", reflect.TypeOf(Instance{}), key + ".KEY."
	}
	if t.Kind() == reflect.Slice {
		n, c, _ := describeType(t.Elem(), key)
		return "list of " + n, c, key + "[]."
	}
	if strings.HasPrefix(t.Name(), "Map[") {
		f, _ := t.FieldByName("Entries")
		v, _ := f.Type.Elem().FieldByName("Value")
		n, c, _ := describeType(v.Type, key)
		return "map of " + n, c, key + ".NAME."
	}
	return "map", t, key + "."
}
