package ci

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestEmitGitHub(t *testing.T) {
	b, err := EmitGitHub(GitHubOptions{MaxWaves: 3, Shards: 16})
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On struct {
			WorkflowCall struct {
				Inputs map[string]struct {
					Default any `yaml:"default"`
				} `yaml:"inputs"`
			} `yaml:"workflow_call"`
		} `yaml:"on"`
		Jobs map[string]struct {
			Needs    []string `yaml:"needs"`
			If       string   `yaml:"if"`
			Strategy struct {
				FailFast bool              `yaml:"fail-fast"`
				Matrix   map[string]string `yaml:"matrix"`
			} `yaml:"strategy"`
			Outputs map[string]string `yaml:"outputs"`
			Steps   []struct {
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	if len(wf.Jobs) != 5 {
		t.Errorf("%d jobs, want start, wave_0..2, finish", len(wf.Jobs))
	}
	if d := wf.On.WorkflowCall.Inputs["shards"].Default; d != 16 {
		t.Errorf("shards default %v", d)
	}
	start := wf.Jobs["start"]
	if !strings.Contains(start.Steps[len(start.Steps)-1].Run, "--max-waves 3 --github-output") {
		t.Errorf("start: %s", start.Steps[len(start.Steps)-1].Run)
	}
	for w := 0; w < 3; w++ {
		job := wf.Jobs[fmt.Sprintf("wave_%d", w)]
		wantNeeds := []string{"start"}
		if w > 0 {
			wantNeeds = append(wantNeeds, fmt.Sprintf("wave_%d", w-1))
		}
		if !reflect.DeepEqual(job.Needs, wantNeeds) {
			t.Errorf("wave %d needs %v", w, job.Needs)
		}
		if want := fmt.Sprintf("${{ !cancelled() && needs.start.outputs.has_work_%d == 'true' }}", w); job.If != want {
			t.Errorf("wave %d: if %s", w, job.If)
		}
		if want := fmt.Sprintf("${{ fromJSON(needs.start.outputs.shards_%d) }}", w); job.Strategy.Matrix["shard"] != want || job.Strategy.FailFast {
			t.Errorf("wave %d: strategy %+v", w, job.Strategy)
		}
		if start.Outputs[fmt.Sprintf("has_work_%d", w)] == "" || start.Outputs[fmt.Sprintf("shards_%d", w)] == "" {
			t.Errorf("start has no outputs for wave %d", w)
		}
		if run := job.Steps[len(job.Steps)-1].Run; !strings.Contains(run, fmt.Sprintf("--wave %d --shard \"$STRATA_SHARD\"", w)) {
			t.Errorf("wave %d runs %s", w, run)
		}
	}
	finish := wf.Jobs["finish"]
	if !reflect.DeepEqual(finish.Needs, []string{"start", "wave_0", "wave_1", "wave_2"}) || finish.If != "${{ always() && needs.start.result == 'success' }}" {
		t.Errorf("finish: needs %v, if %s", finish.Needs, finish.If)
	}
	// No input reaches a script but through the environment.
	for name, job := range wf.Jobs {
		for _, s := range job.Steps {
			if strings.Contains(s.Run, "${{") {
				t.Errorf("%s: an expression in a script:\n%s", name, s.Run)
			}
		}
	}
	for _, opt := range []GitHubOptions{{MaxWaves: 0, Shards: 8}, {MaxWaves: MaxWaveJobs + 1, Shards: 8}, {MaxWaves: 8, Shards: 257}, {MaxWaves: 8, Shards: 0}} {
		if _, err := EmitGitHub(opt); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
}

// TestEmitGitHubWaveJobs: the workflow has as many wave jobs as
// --max-waves says, by default DefaultMaxWaves, and with the most it may
// have (every wave job asking for an OIDC token) it stays under the
// 500 KB of a workflow file GitHub Actions runs.
func TestEmitGitHubWaveJobs(t *testing.T) {
	count := func(opt GitHubOptions) (int, int) {
		t.Helper()
		b, err := EmitGitHub(opt)
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			Jobs map[string]any `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(b, &wf); err != nil {
			t.Fatal(err)
		}
		waves := 0
		for name := range wf.Jobs {
			if strings.HasPrefix(name, "wave_") {
				waves++
			}
		}
		return waves, len(b)
	}
	if n, _ := count(DefaultGitHubOptions()); n != DefaultMaxWaves {
		t.Errorf("by default %d wave jobs, want %d", n, DefaultMaxWaves)
	}
	n, size := count(GitHubOptions{MaxWaves: MaxWaveJobs, Shards: MaxShards, OIDC: true, Version: strings.Repeat("f", 40)})
	if n != MaxWaveJobs || size >= 500_000 {
		t.Errorf("--max-waves %d: %d wave jobs, %d bytes; want %d wave jobs under 500,000 bytes", MaxWaveJobs, n, size, MaxWaveJobs)
	}
}

// TestCheckoutStrategy: every job checks out the pull request's head
// commit when checkout-strategy is checkout, and its merge with the base
// otherwise; the input defaults to the config's checkout_strategy.
func TestCheckoutStrategy(t *testing.T) {
	for strategy, want := range map[string]string{"": "merge", "merge": "merge", "checkout": "checkout"} {
		b, err := EmitGitHub(GitHubOptions{MaxWaves: 2, Shards: 2, CheckoutStrategy: strategy})
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			On struct {
				WorkflowCall struct {
					Inputs map[string]struct{ Default any } `yaml:"inputs"`
				} `yaml:"workflow_call"`
			} `yaml:"on"`
			Jobs map[string]struct {
				Steps []struct {
					Uses string            `yaml:"uses"`
					With map[string]string `yaml:"with"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(b, &wf); err != nil {
			t.Fatal(err)
		}
		if got := wf.On.WorkflowCall.Inputs["checkout-strategy"].Default; got != want {
			t.Errorf("checkout_strategy %q: the input defaults to %v, want %s", strategy, got, want)
		}
		for name, job := range wf.Jobs {
			for _, st := range job.Steps {
				if strings.HasPrefix(st.Uses, "actions/checkout") && st.With["ref"] != checkoutRef {
					t.Errorf("%s checks out %q", name, st.With["ref"])
				}
			}
		}
	}
}
