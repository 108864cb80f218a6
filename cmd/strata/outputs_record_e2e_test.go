package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
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

// TestBackendOutputsWithoutInit: a producer whose state sits where its
// workflow's init puts it (-backend-config in extra_args), in a local
// file, an S3 bucket or a GCS bucket, has its outputs read from the run state on a
// checkout that never ran init, while the state stays at the recorded
// serial; once someone applies it by hand, the engine reads them with the
// workflow's init, and that read is recorded in turn.
func TestBackendOutputsWithoutInit(t *testing.T) {
	needTerraform(t)
	for _, backend := range []string{"local", "s3", "gcs"} {
		t.Run(backend, func(t *testing.T) {
			env := hermeticEnv(t)
			block, key := `backend "local" {}`, "path=${STRATA_STACK}.tfstate"
			if backend == "s3" {
				srv := testenv.StartS3(t)
				if srv == nil {
					t.Skip("versitygw is not installed (make tools)")
				}
				u, err := url.Parse(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				env = s3Env(t)
				block = fmt.Sprintf(`backend "s3" {
    bucket = %q
    region = "us-east-1"
    endpoints = { s3 = %q }
    use_path_style = true
    skip_credentials_validation = true
    skip_requesting_account_id = true
    skip_metadata_api_check = true
  }`, u.Host, u.Query().Get("endpoint"))
				key = "key=${STRATA_STACK}/terraform.tfstate"
			}
			if backend == "gcs" {
				u := testenv.GCSServer(t)
				if u == "" {
					t.Skip("fake-gcs-server is not installed (make tools)")
				}
				// terraform's backend asks the emulator with a token of
				// its own; strata's bucket driver needs none.
				env = append(testenv.Env(t), "STORAGE_EMULATOR_HOST="+os.Getenv("STORAGE_EMULATOR_HOST"), "GOOGLE_OAUTH_ACCESS_TOKEN=strata-test")
				block = fmt.Sprintf(`backend "gcs" {
    bucket = %q
  }`, strings.TrimPrefix(u, "gs://"))
				key = "prefix=${STRATA_STACK}"
			}
			root := siblingRepo(t)
			testenv.WriteFile(t, filepath.Join(root, "net", "backend.tf"), "terraform {\n  "+block+"\n}\n")
			cfg, err := os.ReadFile(filepath.Join(root, "strata.yml"))
			if err != nil {
				t.Fatal(err)
			}
			testenv.WriteFile(t, filepath.Join(root, "strata.yml"), string(cfg)+`workflows:
  - tag_query: net
    plan:
      - {type: init, extra_args: ['-backend-config=`+key+`']}
      - {type: plan}
`)
			if r := runBin(t, root, env, "apply", "--dir", "net", "-auto-approve"); r.code != 0 {
				t.Fatalf("apply net: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			// A new checkout: nothing inited.
			if err := os.RemoveAll(filepath.Join(root, "net", ".terraform")); err != nil {
				t.Fatal(err)
			}
			if read, value := producerReads(t, root, env); read.From != "run state" || value != "eu-west-1" {
				t.Fatalf("read with no init: %+v, region %v; want the run state's", read, value)
			}
			if _, err := os.Stat(filepath.Join(root, "net", ".terraform")); err == nil {
				t.Error("net was inited to read what the run state holds")
			}
			// Someone applies net by hand, with the stack's backend.
			tf, _ := os.ReadFile(filepath.Join(root, "net", "main.tf"))
			testenv.WriteFile(t, filepath.Join(root, "net", "main.tf"), strings.Replace(string(tf), "eu-west-1", "us-east-2", 1))
			tfEnv := append(env, "TF_DATA_DIR="+filepath.Join(t.TempDir(), "data"))
			for _, args := range [][]string{{"init", "-input=false", "-backend-config=" + strings.ReplaceAll(key, "${STRATA_STACK}", "net")}, {"apply", "-auto-approve", "-input=false"}} {
				cmd := exec.Command("terraform", args...)
				cmd.Dir, cmd.Env = filepath.Join(root, "net"), tfEnv
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("terraform %v: %v\n%s", args, err, out)
				}
			}
			if read, value := producerReads(t, root, env); read.From != "engine" || value != "us-east-2" {
				t.Errorf("after net's state moved: %+v, region %v; want the engine's, us-east-2", read, value)
			}
			if read, _ := producerReads(t, root, env); read.From != "run state" {
				t.Errorf("the engine's read was not recorded: %+v", read)
			}
		})
	}
}
