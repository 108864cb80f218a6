package console

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// ciUnit is a unit whose environment says which CI it runs in.
func ciUnit(dir string, env ...string) *Unit {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return &Unit{Name: dir + "@default", Service: report.ServiceOf(func(k string) string { return m[k] }), Masker: NewMasker()}
}

func testConsole(out *bytes.Buffer, terminal, dropIn bool) *Console {
	c := New(out, nil, terminal, dropIn)
	c.StillEvery = 0
	c.Now = func() time.Time { return time.Unix(1700000000, 0) }
	return c
}

// TestGitHubGroupsStreamOneAtATime: in GitHub Actions the first running
// step streams in its group; another step's block, or a note, closes that
// group first and the streaming step reopens it "(continued)"; when the
// streaming step ends, the running step that started first prints what it
// collected and streams the rest. A group only ever holds one unit's lines.
func TestGitHubGroupsStreamOneAtATime(t *testing.T) {
	var out bytes.Buffer
	c := testConsole(&out, false, false)
	gh := "GITHUB_ACTIONS=true"
	a, b, cu := ciUnit("a", gh), ciUnit("b", gh), ciUnit("c", gh)
	expect := func(step, want string) {
		t.Helper()
		if got := out.String(); got != want {
			t.Fatalf("after %s:\n got %q\nwant %q", step, got, want)
		}
		out.Reset()
	}
	swA := c.Step(a, report.StepApply)
	swB := c.Step(b, report.StepPlan)
	fmt.Fprintln(swA, "a1")
	expect("a's first line", "::group::a@default apply\n[a@default] a1\n")
	fmt.Fprintln(swB, "b1")
	fmt.Fprintln(swB.Stderr(), "b2")
	expect("b's lines", "")
	swB.Close()
	expect("b's end", "::endgroup::\n::group::b@default plan\n[b@default] b1\n[b@default] b2\n::endgroup::\n")
	fmt.Fprintln(swA, "a2")
	expect("a's next line", "::group::a@default apply (continued)\n[a@default] a2\n")
	c.Note("[x@default] still plan (1m)")
	expect("a note", "::endgroup::\n[x@default] still plan (1m)\n")
	swC := c.Step(cu, report.StepInit)
	fmt.Fprintln(swC, "c1")
	expect("c's first line", "")
	swA.Close()
	expect("a's end", "::group::c@default init\n[c@default] c1\n")
	fmt.Fprintln(swC, "c2")
	expect("c streams", "[c@default] c2\n")
	swC.Close()
	expect("c's end", "::endgroup::\n")
}

func TestGitLabSections(t *testing.T) {
	var out bytes.Buffer
	c := testConsole(&out, false, false)
	sw := c.Step(ciUnit("net/vpc", "GITLAB_CI=true"), report.StepPlan)
	fmt.Fprintln(sw, "Plan: 1 to add")
	sw.Close()
	want := "\x1b[0Ksection_start:1700000000:strata_1_net_vpc_default_plan[collapsed=true]\r\x1b[0Knet/vpc@default plan\n" +
		"[net/vpc@default] Plan: 1 to add\n" +
		"\x1b[0Ksection_end:1700000000:strata_1_net_vpc_default_plan\r\x1b[0K\n"
	if got := out.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestOutsideCIBlocksAreWhole: without CI (and without a terminal) a step
// prints nothing until it ends, then its block, unfolded.
func TestOutsideCIBlocksAreWhole(t *testing.T) {
	var out bytes.Buffer
	c := testConsole(&out, false, false)
	sw := c.Step(ciUnit("a", "CI=true"), report.StepPlan)
	fmt.Fprintln(sw, "one")
	if out.Len() != 0 {
		t.Fatalf("printed before the step ended: %q", out.String())
	}
	sw.Close()
	if got := out.String(); got != "[a@default] one\n" {
		t.Errorf("block %q", got)
	}
}

// TestRepeatedWarningBoxOncePerRun: a warning box the engine prints in
// every call is printed once, by the first step that has it; error boxes
// and other warnings always are. The summary keeps every unit's output.
func TestRepeatedWarningBoxOncePerRun(t *testing.T) {
	for _, env := range []string{"CI=", "GITHUB_ACTIONS=true", "GITLAB_CI=true"} {
		t.Run(env, func(t *testing.T) {
			var out bytes.Buffer
			c := testConsole(&out, false, false)
			var units []*Unit
			for _, dir := range []string{"a", "b", "c"} {
				ur := ciUnit(dir, env)
				units = append(units, ur)
				sw := c.Step(ur, report.StepPlan)
				fmt.Fprint(sw.Stderr(), testenv.CLIConfigWarning)
				fmt.Fprintf(sw, "Plan: 1 to add (%s)\n", dir)
				if dir == "c" {
					fmt.Fprint(sw.Stderr(), "╷\n│ Warning: Deprecated attribute\n│\n│ Use x.\n╵\n╷\n│ Error: Boom\n╵\n")
				}
				sw.Close()
			}
			got := out.String()
			if n := strings.Count(got, "Warning: Unable to open CLI configuration file"); n != 1 {
				t.Errorf("the CLI config warning is printed %d times:\n%s", n, got)
			}
			if n := strings.Count(got, "There are some problems with the CLI configuration:"); n != 1 {
				t.Errorf("the line introducing it is printed %d times:\n%s", n, got)
			}
			for _, want := range []string{"[b@default] Plan: 1 to add (b)", "[c@default] │ Warning: Deprecated attribute", "[c@default] │ Error: Boom"} {
				if !strings.Contains(got, want) {
					t.Errorf("no %q in\n%s", want, got)
				}
			}
			// b's block is its plan line alone: no blank line is left where
			// the warning was.
			if !strings.Contains(got, "[a@default] Plan: 1 to add (a)\n") || strings.Contains(got, "[b@default] \n") {
				t.Errorf("blank lines around a dropped warning:\n%q", got)
			}
			for _, ur := range units {
				if !strings.Contains(ur.output.String(), "Unable to open CLI configuration file") {
					t.Errorf("%s: the summary lost the warning", ur.Name)
				}
			}
		})
	}
}

// TestBoxStaysWhole: the engine's stdout and stderr are copied apart, so a
// stdout line may come while a box on stderr is open; the box still prints
// whole.
func TestBoxStaysWhole(t *testing.T) {
	var out bytes.Buffer
	c := testConsole(&out, false, false)
	sw := c.Step(ciUnit("a"), report.StepPlan)
	fmt.Fprint(sw.Stderr(), "╷\n│ Warning: X\n")
	fmt.Fprintln(sw, "Plan: 1 to add")
	fmt.Fprint(sw.Stderr(), "│\n│ detail\n╵\n")
	sw.Close()
	want := "[a@default] Plan: 1 to add\n[a@default] ╷\n[a@default] │ Warning: X\n[a@default] │\n[a@default] │ detail\n[a@default] ╵\n"
	if got := out.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestDropInUnchangedInCI: one unit in its own dir streams the engine's
// output as it is, in CI too: no prefix, no group, no warning dropped.
func TestDropInUnchangedInCI(t *testing.T) {
	var out, errOut bytes.Buffer
	c := New(&out, &errOut, false, true)
	c.StillEvery = 0
	ur := ciUnit("a", "GITHUB_ACTIONS=true")
	for _, step := range []string{report.StepInit, report.StepPlan} {
		sw := c.Step(ur, step)
		fmt.Fprint(sw.Stderr(), testenv.CLIConfigWarning)
		fmt.Fprintln(sw, step+" output")
		sw.Close()
	}
	if got := out.String(); got != "init output\nplan output\n" {
		t.Errorf("stdout %q", got)
	}
	if got := errOut.String(); got != testenv.CLIConfigWarning+testenv.CLIConfigWarning {
		t.Errorf("stderr %q", got)
	}
}

// TestStreamedSecretsMasked: lines that stream are masked one by one, so
// each line of a secret of several lines is masked by itself.
func TestStreamedSecretsMasked(t *testing.T) {
	var out bytes.Buffer
	c := testConsole(&out, false, false)
	ur := ciUnit("a", "GITHUB_ACTIONS=true")
	ur.Masker = NewMasker("hunter2", "-----BEGIN KEY-----\nc2VjcmV0LWxpbmU=\n-----END KEY-----")
	sw := c.Step(ur, report.StepPlan)
	fmt.Fprintln(sw, "token hunter2")
	fmt.Fprintln(sw, "  c2VjcmV0LWxpbmU=")
	sw.Close()
	if got := out.String(); strings.Contains(got, "hunter2") || strings.Contains(got, "c2VjcmV0LWxpbmU=") {
		t.Errorf("secret printed: %q", got)
	}
}

// TestPlanLinesWaitForItsSecrets: a plan's lines are not streamed, even
// in GitHub Actions, and are masked when printed, so a secret learnt after
// the plan ran (from its JSON) is masked in them; the other steps stream.
func TestPlanLinesWaitForItsSecrets(t *testing.T) {
	var out bytes.Buffer
	c := testConsole(&out, false, false)
	ur := ciUnit("a", "GITHUB_ACTIONS=true")
	plan := c.Step(ur, report.StepPlan)
	fmt.Fprintln(plan, `  ~ input = "old-secret" -> "new"`)
	if got := out.String(); got != "" {
		t.Fatalf("a plan line was printed before the plan ended: %q", got)
	}
	ur.Masker.Add("old-secret")
	plan.Close()
	if got, want := out.String(), "::group::a@default plan\n[a@default]   ~ input = \"***\" -> \"new\"\n::endgroup::\n"; got != want {
		t.Errorf("plan block:\n got %q\nwant %q", got, want)
	}
	out.Reset()
	apply := c.Step(ur, report.StepApply)
	fmt.Fprintln(apply, "applying old-secret")
	if got, want := out.String(), "::group::a@default apply\n[a@default] applying ***\n"; got != want {
		t.Errorf("apply streams:\n got %q\nwant %q", got, want)
	}
	apply.Close()
}

// TestStatusLineShowsStepAndElapsed: on a terminal each running step has a
// status line with its unit, step and how long it has run.
func TestStatusLineShowsStepAndElapsed(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(1000, 0)
	c := New(&out, nil, true, false)
	c.Now = func() time.Time { return now }
	sw := c.Step(ciUnit("app"), report.StepApply)
	sw2 := c.Step(ciUnit("db"), report.StepInit)
	now = now.Add(65 * time.Second)
	out.Reset()
	c.Note("a note")
	got := out.String()
	for _, want := range []string{"a note\n", "  … app@default: apply (1m5s)\n", "  … db@default: init (1m5s)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in %q", want, got)
		}
	}
	sw.Close()
	sw2.Close()
}

func TestAnnotations(t *testing.T) {
	failed := []report.StepReport{{Name: report.StepInit, OK: true}, {Name: report.StepPlan, OK: false}}
	tests := []struct {
		name   string
		output string
		rep    report.UnitReport
		want   string
	}{
		{"positioned errors, each once, the warning left out", testenv.CLIConfigWarning + `
Error: Unsupported argument

  on main.tf line 3, in resource "terraform_data" "x":
   3:   bogus = 1

An argument named "bogus" is not expected here.

Error: Missing required argument

  on ../modules/m/main.tf line 7:
   7: module "x" {
`, report.UnitReport{Dir: "net", Workspace: "default", Status: report.StatusFailed, Reason: "plan failed: Unsupported argument", Steps: failed},
			"::error file=net/main.tf,line=3,title=net@default plan failed::Unsupported argument%0A%0AAn argument named \"bogus\" is not expected here.\n" +
				"::error file=modules/m/main.tf,line=7,title=net@default plan failed::Missing required argument\n"},
		{"an error without a position", "Error: No configuration files\n", report.UnitReport{Dir: "net", Workspace: "default", Status: report.StatusFailed, Steps: failed},
			"::error title=net@default plan failed::No configuration files\n"},
		{"no diagnostics: plain, with the reason", "exit status 3\n", report.UnitReport{Dir: "net", Workspace: "default", Status: report.StatusFailed, Reason: "plan failed: exit status 3", Steps: failed},
			"::error::net@default: plan failed: exit status 3\n"},
		{"failed before any step", "", report.UnitReport{Dir: "net", Workspace: "default", Status: report.StatusFailed, Reason: "var file: cannot write"},
			"::error::net@default: var file: cannot write\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			c := testConsole(&out, false, false)
			ur := ciUnit("net", "GITHUB_ACTIONS=true")
			if tc.output != "" {
				sw := c.Step(ur, report.StepPlan)
				fmt.Fprint(sw.Stderr(), tc.output)
				sw.Close()
			}
			out.Reset()
			rep := tc.rep
			c.Annotate(ur, &rep, "/repo", "")
			if got := out.String(); got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestAnnotationFile(t *testing.T) {
	root := filepath.FromSlash("/w/infra")
	tests := []struct {
		dir, file, workspace, want string
	}{
		{"net", "main.tf", "", "net/main.tf"},
		{"net", "../modules/vpc/main.tf", "", "modules/vpc/main.tf"},
		// Relative to the checkout when strata's root is a folder of it.
		{"net", "main.tf", filepath.FromSlash("/w"), "infra/net/main.tf"},
		{"net", filepath.FromSlash("/w/infra/shared/x.tf"), "", "shared/x.tf"},
		// A checkout elsewhere does not hold the root: relative to the root.
		{"net", "main.tf", filepath.FromSlash("/elsewhere"), "net/main.tf"},
	}
	for _, tc := range tests {
		if got := annotationFile(root, tc.dir, tc.file, tc.workspace); got != tc.want {
			t.Errorf("annotationFile(%q, %q, %q) = %q, want %q", tc.dir, tc.file, tc.workspace, got, tc.want)
		}
	}
}
