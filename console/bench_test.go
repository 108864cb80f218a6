package console

import (
	"io"
	"testing"

	"github.com/strata-iac/strata/report"
)

// BenchmarkStepLines is the cost of one line of engine output streamed in
// CI, written a line at a time, with a masker holding a secret.
func BenchmarkStepLines(b *testing.B) {
	c := New(io.Discard, nil, false, false)
	c.StillEvery = 0
	u := ciUnit("a", "GITHUB_ACTIONS=true")
	u.Masker.Add("s3cr3t-value", "line one\nline two of a secret")
	sw := c.Step(u, report.StepApply)
	line := []byte("terraform_data.this: Creating... [id=0a1b2c3d-4e5f]\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sw.Write(line); err != nil {
			b.Fatal(err)
		}
	}
	sw.Close()
}
