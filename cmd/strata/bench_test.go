package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/testenv"
)

// BenchmarkDropInPlan runs the built strata binary's `plan` in one
// initialised dir against `terraform plan` there, interleaved, one of each
// per iteration, and reports what strata adds: overhead-ms/plan is the
// whole difference; strata-start-ms is what `strata version` takes (the
// process start every command pays); work-ms/plan is the rest, strata's
// own work in a plan (root finding, config load, engine identity, the
// journal, the digest and the engine call through terraform-exec).
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
	var works []float64
	for b.Loop() {
		b.StopTimer()
		e := run("terraform", "plan", "-input=false", "-no-color", "-lock-timeout=0s", "-out="+planFile)
		// strata alone, start to exit: in a module dir `strata version`
		// also asks the engine, --version does not.
		v := run(strataBin, "--version")
		b.StartTimer()
		s := run(strataBin, "plan")
		engine, version, strata = engine+e, version+v, strata+s
		works = append(works, float64(s-e-v)/1e6)
	}
	n := float64(b.N)
	b.ReportMetric(float64(strata)/n/1e6, "strata-ms/plan")
	b.ReportMetric(float64(engine)/n/1e6, "terraform-ms/plan")
	b.ReportMetric(float64(strata-engine)/n/1e6, "overhead-ms/plan")
	b.ReportMetric(float64(version)/n/1e6, "strata-start-ms")
	b.ReportMetric(float64(strata-engine-version)/n/1e6, "work-ms/plan")
	// Each iteration's three commands run back to back, so the median of
	// their differences is the least disturbed by the machine's drift.
	b.ReportMetric(median(works), "median-work-ms")
	b.ReportMetric(float64(strata)/float64(engine), "strata/terraform")
	os.Remove(planFile)
}

// BenchmarkPlanVsXargs plans 20 independent initialised units with the
// built strata at the repository root (--parallelism 4) against
// `xargs -P4` running terraform plan in each dir, interleaved, and
// reports the ratio: what orchestration costs over terraform alone.
func BenchmarkPlanVsXargs(b *testing.B) {
	if _, err := exec.LookPath("terraform"); err != nil {
		b.Skip("terraform is not on PATH")
	}
	if _, err := exec.LookPath("xargs"); err != nil {
		b.Skip("xargs is not on PATH")
	}
	env := testenv.Env(b)
	files := map[string]string{"strata.yml": "version: \"1\"\nparallel_runs: 4\n"}
	var dirs []string
	for i := 0; i < 20; i++ {
		d := fmt.Sprintf("u%02d", i)
		dirs = append(dirs, d)
		files[d+"/main.tf"] = "resource \"terraform_data\" \"a\" {\n  input = \"" + d + "\"\n}\n"
	}
	root := testenv.WriteRepo(b, files)
	run := func(dir, name string, stdin string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.Stdin = strings.NewReader(stdin)
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s %v: %v\n%s", name, args, err, out.String())
		}
		return time.Since(start)
	}
	run(root, strataBin, "", "apply", "-auto-approve")
	run(root, strataBin, "", "plan")
	list := strings.Join(dirs, "\n") + "\n"
	xargs := func() time.Duration {
		return run(root, "xargs", list, "-P4", "-I{}", "sh", "-c", "cd {} && terraform plan -input=false -no-color -lock-timeout=0s -out=../{}.tfplan >/dev/null")
	}
	var engine, strata time.Duration
	var ratios []float64
	for b.Loop() {
		b.StopTimer()
		e := xargs()
		b.StartTimer()
		s := run(root, strataBin, "", "plan")
		engine, strata = engine+e, strata+s
		ratios = append(ratios, float64(s)/float64(e))
	}
	b.ReportMetric(float64(strata)/float64(b.N)/1e6, "strata-ms")
	b.ReportMetric(float64(engine)/float64(b.N)/1e6, "xargs-ms")
	b.ReportMetric(float64(strata)/float64(engine), "strata/xargs")
	// Each pair runs back to back, so its ratio is the least disturbed by
	// the machine's speed drifting over the benchmark.
	b.ReportMetric(median(ratios), "median-pair-ratio")
}

// median is the middle value of xs (the mean of the middle two).
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
