package job

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// planEngine is an engine the plan file reader is pinned against: its
// name and version, and where it is found on this machine.
type planEngine struct {
	name, version string
	path          func() string
}

// cachedEngine is an engine in strata's cache of this machine's user.
func cachedEngine(name, version string) func() string {
	return func() string {
		dir, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(dir, "strata", "engines", name, version, name)
	}
}

// planEngines are the engines whose plan files strata reads: terraform
// on PATH (1.11 here), and the cached terraform 1.5 and tofu 1.8.
var planEngines = []planEngine{
	{"terraform", "on PATH", func() string { p, _ := exec.LookPath("terraform"); return p }},
	{"terraform", "1.5.7", cachedEngine("terraform", "1.5.7")},
	{"tofu", "1.8.8", cachedEngine("tofu", "1.8.8")},
}

// planFixture has every kind of change the reader must see: a created,
// an updated, a deleted terraform_data, one whose input is a sensitive
// variable, a sensitive output, an output unknown until apply, list, map
// and object outputs.
const planFixture = `
variable "stage" {
  type    = string
  default = "one"
}
variable "secret" {
  type      = string
  sensitive = true
  default   = "first-secret-value"
}
variable "unused_secret" {
  type      = string
  sensitive = true
  default   = "never-used-secret"
}
resource "terraform_data" "updated" {
  input = var.stage
}
resource "terraform_data" "deleted" {
  count = var.stage == "one" ? 1 : 0
  input = "going"
}
resource "terraform_data" "created" {
  count = var.stage == "two" ? 1 : 0
  input = { name = "new", tags = ["a", "b"] }
}
resource "terraform_data" "secret" {
  input = { plain = "visible", hidden = var.secret }
}
output "secret" {
  value     = "out-${var.secret}"
  sensitive = true
}
output "unknown" {
  value = terraform_data.created[*].output
}
output "list" {
  value = ["x", var.stage]
}
output "map" {
  value = tomap({ a = "1", b = var.stage })
}
output "object" {
  value = { n = 2.5, big = 12345678901234567890, t = true, none = null, nested = { l = [1, 2] } }
}
`

// runEngine runs an engine in dir, hermetically, and returns its stdout.
func runEngine(t *testing.T, engine, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(engine, args...)
	cmd.Dir = dir
	cli := filepath.Join(dir, "..", "cli.tfrc")
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+cli, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		// plan -detailed-exitcode ends 2 with changes.
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Fatalf("%s %s: %v\n%s", engine, strings.Join(args, " "), err, stderr.String())
		}
	}
	return out
}

// TestReadPlanFileAsShowJSON: for each engine here, what the reader
// takes from a real plan file is what show -json says of the same file:
// counts, changed outputs, planned outputs, the strings to mask; its
// change set is stable for one plan and differs between plans.
func TestReadPlanFileAsShowJSON(t *testing.T) {
	t.Parallel()
	for _, e := range planEngines {
		t.Run(e.name+" "+e.version, func(t *testing.T) {
			t.Parallel()
			engine := e.path()
			if engine == "" {
				t.Skipf("%s %s is not on this machine", e.name, e.version)
			}
			if _, err := os.Stat(engine); err != nil {
				t.Skipf("%s %s is not on this machine: %v", e.name, e.version, err)
			}
			root := t.TempDir()
			dir := filepath.Join(root, "m")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "cli.tfrc"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(planFixture), 0o600); err != nil {
				t.Fatal(err)
			}
			runEngine(t, engine, dir, "init", "-input=false", "-no-color")
			runEngine(t, engine, dir, "apply", "-auto-approve", "-input=false", "-no-color")

			plans := []struct {
				name    string
				args    []string
				changes bool
			}{
				{"changes", []string{"-var", "stage=two", "-var", "secret=second-secret-value"}, true},
				{"destroy", []string{"-destroy"}, true},
				{"nothing", nil, false},
			}
			sets := map[string]string{}
			for _, p := range plans {
				file := filepath.Join(root, p.name+".tfplan")
				runEngine(t, engine, dir, append([]string{"plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=" + file}, p.args...)...)
				fromJSON, err := readPlanJSON(runEngine(t, engine, dir, "show", "-json", file))
				if err != nil {
					t.Fatal(err)
				}
				got, err := readPlanFile(file)
				if err != nil {
					t.Fatalf("%s: %v", p.name, err)
				}
				comparePlanViews(t, p.name, got, fromJSON)
				again, err := readPlanFile(file)
				if err != nil || again.ChangeSet != got.ChangeSet {
					t.Errorf("%s: change set %q, read again %q (%v)", p.name, got.ChangeSet, again.ChangeSet, err)
				}
				if (got.ChangeSet != "") != p.changes || (got.ChangeSet != "" && changeSetForm(got.ChangeSet) != "file") {
					t.Errorf("%s: change set %q", p.name, got.ChangeSet)
				}
				sets[p.name] = got.ChangeSet
			}
			if sets["changes"] == sets["destroy"] {
				t.Errorf("two plans of different changes have one change set %q", sets["changes"])
			}
			// The same plan made again has the same change set.
			file := filepath.Join(root, "again.tfplan")
			runEngine(t, engine, dir, append([]string{"plan", "-input=false", "-no-color", "-out=" + file}, plans[0].args...)...)
			if v, err := readPlanFile(file); err != nil || v.ChangeSet != sets["changes"] {
				t.Errorf("the same plan made again: change set %q, want %q (%v)", v.ChangeSet, sets["changes"], err)
			}
		})
	}
}

// comparePlanViews compares what the reader read with what show -json
// gave; the change set is compared by the callers, its forms differ.
func comparePlanViews(t *testing.T, name string, got, want planView) {
	t.Helper()
	if got.Changes != want.Changes {
		t.Errorf("%s: changes %+v, show -json %+v", name, got.Changes, want.Changes)
	}
	if !slices.Equal(got.ChangedOutputs, want.ChangedOutputs) {
		t.Errorf("%s: changed outputs %q, show -json %q", name, got.ChangedOutputs, want.ChangedOutputs)
	}
	if len(got.Outputs) != len(want.Outputs) {
		t.Errorf("%s: outputs %v, show -json %v", name, got.Outputs, want.Outputs)
	}
	for k, w := range want.Outputs {
		g, ok := got.Outputs[k]
		if !ok || g.Known != w.Known || g.Sensitive != w.Sensitive || (w.Known && !jsonEqual(g.Value, w.Value)) {
			t.Errorf("%s: output %s: %+v (%s), show -json %+v (%s)", name, k, g, g.Value, w, w.Value)
		}
	}
	// What the masker keeps: strings of two bytes or more.
	short := func(s string) bool { return len(s) < 2 }
	gs, ws := slices.DeleteFunc(slices.Clone(got.Secrets), short), slices.DeleteFunc(slices.Clone(want.Secrets), short)
	slices.Sort(gs)
	slices.Sort(ws)
	if !slices.Equal(slices.Compact(gs), slices.Compact(ws)) {
		t.Errorf("%s: secrets %q, show -json %q", name, slices.Compact(gs), slices.Compact(ws))
	}
}

// jsonEqual reports whether two JSON texts hold the same value, numbers
// compared as written.
func jsonEqual(a, b []byte) bool {
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// FuzzReadPlanZip: whatever a plan file holds (a bad zip, a truncated
// protobuf, msgpack or protobuf lengths past the end), the reader answers
// an error or a view, never a panic, and allocates within a budget of the
// input's size.
func FuzzReadPlanZip(f *testing.F) {
	zipOf := func(tfplan []byte) []byte {
		var b bytes.Buffer
		w := zip.NewWriter(&b)
		e, _ := w.Create("tfplan")
		e.Write(tfplan)
		w.Close()
		return b.Bytes()
	}
	// A plan of version 3 with an output change whose value is a string.
	out := protowire.AppendTag(nil, 1, protowire.BytesType)
	out = protowire.AppendString(out, "o")
	chg := protowire.AppendTag(nil, 1, protowire.VarintType)
	chg = protowire.AppendVarint(chg, actCreate)
	dv := protowire.AppendTag(nil, 1, protowire.BytesType)
	dv = protowire.AppendBytes(dv, []byte{0x92, 0xc4, 0x08, '"', 's', 't', 'r', 'i', 'n', 'g', '"', 0xa1, 'x'})
	chg = protowire.AppendTag(chg, 2, protowire.BytesType)
	chg = protowire.AppendBytes(chg, dv)
	out = protowire.AppendTag(out, 2, protowire.BytesType)
	out = protowire.AppendBytes(out, chg)
	plan := protowire.AppendTag(nil, 1, protowire.VarintType)
	plan = protowire.AppendVarint(plan, tfplanVersion)
	plan = protowire.AppendTag(plan, 4, protowire.BytesType)
	plan = protowire.AppendBytes(plan, out)
	f.Add(zipOf(plan))
	f.Add(zipOf(plan[:len(plan)-3]))
	// An array and a map claiming 2^32-1 elements, a bin of 2^32-1 bytes.
	for _, mp := range [][]byte{{0xdd, 0xff, 0xff, 0xff, 0xff}, {0xdf, 0xff, 0xff, 0xff, 0xff}, {0xc6, 0xff, 0xff, 0xff, 0xff}} {
		d := protowire.AppendTag(nil, 1, protowire.BytesType)
		d = protowire.AppendBytes(d, mp)
		f.Add(zipOf(bytes.Replace(plan, dv, d, 1)))
	}
	// A protobuf length prefix far past the end.
	f.Add(zipOf(append(protowire.AppendTag(nil, 3, protowire.BytesType), 0xff, 0xff, 0xff, 0xff, 0x0f)))
	f.Add([]byte("PK\x03\x04 not a zip"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		v, err := readPlanZip(bytes.NewReader(b), int64(len(b)))
		runtime.ReadMemStats(&after)
		if err != nil && !errors.Is(err, errPlanFormat) {
			t.Fatalf("an error not of errPlanFormat: %v", err)
		}
		if err == nil && v.Outputs == nil {
			t.Fatal("a view without its outputs map")
		}
		// Deflate can grow an entry up to about 1000 times, and every
		// msgpack value read is held once or twice.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(64<<20)+uint64(len(b))*4096 {
			t.Fatalf("%d bytes allocated for %d bytes of input", alloc, len(b))
		}
	})
}

// TestSensitiveVariables: the root module's variables declared sensitive,
// from the configuration a plan file holds. A native file that never
// says "sensitive" is not parsed (so not even a broken one fails the
// read); a JSON file is always parsed, since its keys may be escaped.
func TestSensitiveVariables(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []sensitiveVariable
	}{
		{"none", map[string]string{"main.tf": "variable \"a\" {}\nresource \"terraform_data\" \"x\" {}\n"}, nil},
		{"native", map[string]string{"vars.tf": "variable \"token\" {\n  sensitive = true\n  default = \"s3\"\n}\nvariable \"open\" {\n  sensitive = false\n}\n"},
			[]sensitiveVariable{{name: "token", defaults: []string{"s3"}}}},
		{"a file without the word is not parsed", map[string]string{"a.tf": "this is { not hcl\n", "b.tf": "variable \"k\" {\n  sensitive = true\n}\n"},
			[]sensitiveVariable{{name: "k"}}},
		{"escaped JSON key", map[string]string{"v.tf.json": `{"variable": {"k": {"\u0073ensitive": true}}}`},
			[]sensitiveVariable{{name: "k"}}},
		{"broken file that says sensitive", map[string]string{"a.tf": "sensitive {\n"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			var names []string
			for name := range tc.files {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				w, err := zw.Create(name)
				if err != nil {
					t.Fatal(err)
				}
				w.Write([]byte(tc.files[name]))
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			if err != nil {
				t.Fatal(err)
			}
			got, err := sensitiveVariables(zr.File)
			if tc.name == "broken file that says sensitive" {
				if !errors.Is(err, errPlanFormat) {
					t.Fatalf("err %v, want the plan's format refused", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
