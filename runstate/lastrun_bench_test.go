package runstate

import (
	"fmt"
	"testing"

	"github.com/strata-iac/strata/report"
)

// BenchmarkRecordLastRun records the last run of 100 units, each with a
// plan's few lines of output, as a plan of the wide repository of
// bench/peers does once its units are done (docs/architecture.md#what-a-command-costs).
func BenchmarkRecordLastRun(b *testing.B) {
	sd, err := OpenStateDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	rep := &report.Report{Command: "plan"}
	for i := range 100 {
		rep.Units = append(rep.Units, &report.UnitReport{Dir: fmt.Sprintf("u/u%03d", i), Workspace: "default", Stack: "default",
			Status: report.StatusNoChanges, Log: "No changes. Your infrastructure matches the configuration.\n"})
	}
	for b.Loop() {
		if err := sd.RecordLastRun(rep); err != nil {
			b.Fatal(err)
		}
	}
}
