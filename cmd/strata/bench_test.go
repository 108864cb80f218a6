package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/testenv"
)

// BenchmarkDropInPlan runs the built strata binary's `plan` in one
// initialised dir against `terraform plan` there, interleaved, one of each
// per iteration, and reports what strata adds: the whole command, process
// start, root finding, config load, engine identity and the engine call
// through terraform-exec.
func BenchmarkDropInPlan(b *testing.B) {
	if _, err := exec.LookPath("terraform"); err != nil {
		b.Skip("terraform is not on PATH")
	}
	env := testenv.Env(b)
	root := testenv.WriteRepo(b, map[string]string{
		"strata.yml":  "version: \"1\"\n",
		"app/main.tf": "resource \"terraform_data\" \"a\" {\n  input = \"x\"\n}\nresource \"terraform_data\" \"b\" {\n  input = terraform_data.a.output\n}\n",
	})
	app := filepath.Join(root, "app")
	run := func(name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = app, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s %v: %v\n%s", name, args, err, out.String())
		}
		return time.Since(start)
	}
	run(strataBin, "apply", "-auto-approve")
	run(strataBin, "plan") // init recorded as current from here on
	planFile := filepath.Join(b.TempDir(), "p.tfplan")
	var engine, strata, version time.Duration
	for b.Loop() {
		b.StopTimer()
		engine += run("terraform", "plan", "-input=false", "-no-color", "-lock-timeout=0s", "-out="+planFile)
		version += run(strataBin, "version")
		b.StartTimer()
		strata += run(strataBin, "plan")
	}
	n := float64(b.N)
	b.ReportMetric(float64(strata)/n/1e6, "strata-ms/plan")
	b.ReportMetric(float64(engine)/n/1e6, "terraform-ms/plan")
	b.ReportMetric(float64(strata-engine)/n/1e6, "overhead-ms/plan")
	b.ReportMetric(float64(version)/n/1e6, "strata-start-ms")
	b.ReportMetric(float64(strata)/float64(engine), "strata/terraform")
	os.Remove(planFile)
}
