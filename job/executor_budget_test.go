package job

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/textbudget"
)

// TestBoundedError: an engine error with a line over budget is read as
// its cut text, and still unwraps to the engine's error; one within
// budget is the engine's error itself.
func TestBoundedError(t *testing.T) {
	t.Parallel()
	exit := &exec.ExitError{}
	long := errors.Join(exit, errors.New("Error: Resource precondition failed\n\nhuge"+strings.Repeat("0", 1<<20)))
	got := boundedError(long)
	if len(got.Error()) > 2*textbudget.Line || !strings.Contains(got.Error(), "Error: Resource precondition failed") || !strings.Contains(got.Error(), textbudget.Marker) {
		t.Errorf("a 1 MiB line: %d bytes, %.120q", len(got.Error()), got.Error())
	}
	var ee *exec.ExitError
	if !errors.As(got, &ee) || ee != exit {
		t.Error("the cut error does not unwrap to the engine's exit error")
	}
	short := errors.New("Error: Invalid value")
	if boundedError(short) != short || boundedError(nil) != nil {
		t.Error("an error within budget is not the engine's own")
	}
}
