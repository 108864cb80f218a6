package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/report"
)

// producerReads runs a plan of app alone and returns how its producer's
// outputs were read, and the input app got.
func producerReads(t *testing.T, root string, env []string) (report.ProducerRead, any) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.json")
	if r := runBin(t, root, env, "plan", "--dir", "app", "--report", path); r.code != 0 {
		t.Fatalf("plan app: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Producers) != 1 || len(rep.Units) != 1 {
		t.Fatalf("report %v: %s", err, data)
	}
	return rep.Producers[0], rep.Units[0].Inputs["region"].Value
}

// TestOutputsWithoutInit: a producer's apply records its outputs with the
// serial of its local state; runs that need them as they stand read them
// from the run state, no init and no engine, while the state file stays
// at that serial, and ask the engine once someone else moved it. The
// report says which.
func TestOutputsWithoutInit(t *testing.T) {
	needTerraform(t)
	t.Parallel()
	root := siblingRepo(t)
	env := hermeticEnv(t)
	if r := runBin(t, root, env, "apply", "--dir", "net", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply net: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for i := range 2 {
		read, value := producerReads(t, root, env)
		if read.From != "run state" || read.Unit != "net@default#net" || value != "eu-west-1" {
			t.Fatalf("read %d after the apply: %+v, region %v; want the run state's", i, read, value)
		}
	}
	// Someone applies net by hand: its state moves on.
	tf, _ := os.ReadFile(filepath.Join(root, "net", "main.tf"))
	if err := os.WriteFile(filepath.Join(root, "net", "main.tf"), []byte(strings.Replace(string(tf), "eu-west-1", "us-east-2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	tfEnv := append(env, "TF_DATA_DIR="+filepath.Join(t.TempDir(), "data"))
	for _, args := range [][]string{{"init", "-input=false"}, {"apply", "-auto-approve", "-input=false"}} {
		cmd := exec.Command("terraform", args...)
		cmd.Dir, cmd.Env = filepath.Join(root, "net"), tfEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("terraform %v: %v\n%s", args, err, out)
		}
	}
	read, value := producerReads(t, root, env)
	if read.From != "engine" || value != "us-east-2" {
		t.Errorf("after net's state moved: %+v, region %v; want the engine's, us-east-2", read, value)
	}
	if read, _ = producerReads(t, root, env); read.From != "run state" {
		t.Errorf("the engine's read was not recorded: %+v", read)
	}
}
