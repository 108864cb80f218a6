package job

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/console"
)

// TestHeading: terraform's closing words, after a blank line, bold green
// in colour.
func TestHeading(t *testing.T) {
	var b bytes.Buffer
	heading(&b, "Apply complete!", false)
	if b.String() != "\nApply complete!\n" {
		t.Errorf("plain heading = %q", b.String())
	}
	b.Reset()
	heading(&b, "Apply complete!", true)
	if b.String() != "\x1b[0m\x1b[1m\x1b[32m\nApply complete!\n\x1b[0m" {
		t.Errorf("coloured heading = %q", b.String())
	}
}

// TestSavedPlanWords: a drop-in plan -out ends naming the user's file,
// relative to the unit's dir when it is below it, and how to apply it.
func TestSavedPlanWords(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	j.ur.Display = &console.Unit{Name: "net"}
	for file, want := range map[string]string{"/elsewhere/p.tfplan": "/elsewhere/p.tfplan", j.ur.Dir + "/out.tfplan": "out.tfplan"} {
		out.Reset()
		j.savedPlanWords(file)
		if !strings.Contains(out.String(), "Saved the plan to: "+want+"\n") || !strings.Contains(out.String(), `strata apply "`+want+`"`) {
			t.Errorf("%s: words %q", file, out.String())
		}
	}
}

// TestCompleteNoChangesDestroy: a drop-in destroy with nothing to destroy
// ends as terraform's does, with no engine call.
func TestCompleteNoChangesDestroy(t *testing.T) {
	var out bytes.Buffer
	j := testJob(t, workflowYML, &fakeExec{}, &out)
	j.ur.Display = &console.Unit{Name: "net"}
	j.run.Policy = &command.Policy{Job: command.JobPlan, Destroys: true}
	j.run.Exec = NewExecutor(0, false)
	j.completeNoChanges(context.Background())
	if !strings.Contains(out.String(), "Destroy complete! Resources: 0 destroyed.") || j.res.Err != nil || len(j.res.Steps) != 0 {
		t.Errorf("output %q, err %v, steps %+v", out.String(), j.res.Err, j.res.Steps)
	}
}
