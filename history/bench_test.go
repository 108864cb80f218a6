package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-iac/strata/report"
)

// benchUnits is the size of the repository the benchmarks record runs of.
const benchUnits = 10000

// bigRun is the record of a drift run of every one of benchUnits units at
// minute n, each with init and plan steps, every tenth drifted.
func bigRun(n int) *Record {
	start := at(n)
	units := make([]*report.UnitReport, benchUnits)
	for i := range units {
		s := report.StatusNoChanges
		if i%10 == 0 {
			s = report.StatusPlanned
		}
		units[i] = unitReport(fmt.Sprintf("stacks/s%03d/unit%05d", i/100, i), s, start.Add(time.Duration(i)*time.Millisecond), 800+i%400)
	}
	return FromReport(report.Assemble("drift", start, start.Add(10*time.Minute), units, false), Meta{Commit: "c0ffee", Actor: "ci", Run: fmt.Sprintf("b%d", n)})
}

// BenchmarkHistory10k is the history of a repository of 10,000 units
// whose every run takes them all, the most a record holds
// (docs/behaviour.md#history): recording one more run (the record, the
// index rewritten, the oldest pruned), reading every unit's last status
// as ls --status does (the index alone), and one unit's runs with their
// step times as history UNIT does (every record read for
// that unit).
func BenchmarkHistory10k(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	h := Local(dir)
	const kept = 10
	for n := range kept {
		if err := h.Append(ctx, bigRun(n), kept); err != nil {
			b.Fatal(err)
		}
	}
	rec, _ := os.Stat(filepath.Join(dir, "history", "runs", bigRun(0).ID+".json"))
	ix, _ := os.Stat(filepath.Join(dir, "history", "index.json"))
	if rec == nil || ix == nil {
		b.Fatal("no record or index written")
	}
	b.Logf("a record of %d units: %d KiB; the index: %d KiB", benchUnits, rec.Size()>>10, ix.Size()>>10)
	b.Run("append", func(b *testing.B) {
		runs := make([]*Record, b.N)
		for i := range runs {
			runs[i] = bigRun(kept + i)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := h.Append(ctx, runs[i], kept); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("status", func(b *testing.B) {
		f, err := ParseStatuses([]string{"drifted"})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			ix, err := h.Index(ctx)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for _, us := range ix.Units {
				if f.Match(us) {
					n++
				}
			}
			if n != benchUnits/10 {
				b.Fatalf("%d drifted, want %d", n, benchUnits/10)
			}
		}
	})
	b.Run("unit", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			runs, err := h.UnitRuns(ctx, "stacks/s050/unit05000@default#default")
			if err != nil {
				b.Fatal(err)
			}
			if len(runs) != kept || len(Stats(runs)) != 3 {
				b.Fatalf("%d runs of the unit", len(runs))
			}
		}
	})
}
