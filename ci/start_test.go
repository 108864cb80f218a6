package ci

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/runner"
	"github.com/strata-iac/strata/stacks"
)

// TestWavesAndShards: every unit's predecessors are in earlier waves, a
// unit's wave is its longest chain, no wave uses more than the shards
// asked for, and the shards of a wave differ by at most one unit.
func TestWavesAndShards(t *testing.T) {
	tests := []struct {
		layers, width, shards int
		wantShards            int // shards per wave
	}{
		{1, 1, 4, 1},
		{3, 3, 2, 2},
		{4, 10, 3, 3},
		{2, 5, 8, 5},
		{5, 7, 7, 7},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%dx%d/%d", tt.layers, tt.width, tt.shards), func(t *testing.T) {
			p := loadRepo(t, layeredRepo(t, tt.layers, tt.width))
			st, _ := objstore.Open(context.Background(), "mem://", objstore.Options{})
			m, err := Start(context.Background(), st, p, selectAll(t, p), StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: tt.shards})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Waves) != tt.layers {
				t.Fatalf("%d waves, want %d", len(m.Waves), tt.layers)
			}
			wave := map[string]int{}
			for _, u := range m.Units {
				wave[u.ID] = u.Wave
			}
			load := map[[2]int]int{}
			for _, u := range m.Units {
				var layer int
				fmt.Sscanf(u.Dir, "l%d/", &layer)
				if u.Wave != layer {
					t.Errorf("%s: wave %d, want %d", u.ID, u.Wave, layer)
				}
				for _, a := range u.After {
					if wave[a] >= u.Wave {
						t.Errorf("%s (wave %d) waits for %s (wave %d)", u.ID, u.Wave, a, wave[a])
					}
				}
				if u.Engine != "terraform (from PATH)" {
					t.Errorf("%s: engine %q", u.ID, u.Engine)
				}
				if u.Shard < 0 || u.Shard >= tt.shards {
					t.Errorf("%s: shard %d", u.ID, u.Shard)
				}
				load[[2]int{u.Wave, u.Shard}]++
			}
			for _, w := range m.Waves {
				if len(w.Shards) != tt.wantShards {
					t.Errorf("wave %d: shards %v, want %d", w.Wave, w.Shards, tt.wantShards)
				}
				lo, hi := 1<<30, 0
				for _, s := range w.Shards {
					lo, hi = min(lo, load[[2]int{w.Wave, s}]), max(hi, load[[2]int{w.Wave, s}])
				}
				if hi-lo > 1 {
					t.Errorf("wave %d: shards hold %d to %d units", w.Wave, lo, hi)
				}
			}
		})
	}
}

// TestStartIsIdempotent: a start retried with the same run ID finds its
// manifest; one with other units is refused.
func TestStartIsIdempotent(t *testing.T) {
	ctx := context.Background()
	p := loadRepo(t, layeredRepo(t, 2, 2))
	st, _ := objstore.Open(ctx, "mem://", objstore.Options{})
	opt := StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 2, Run: "r1", Now: func() time.Time { return time.Unix(0, 0) }}
	m1, err := Start(ctx, st, p, selectAll(t, p), opt)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Start(ctx, st, p, selectAll(t, p), opt)
	if err != nil || m2.Run != m1.Run || len(m2.Units) != len(m1.Units) {
		t.Fatalf("retried start: %v", err)
	}
	opt.Options.Command = runner.CmdApply
	if _, err := Start(ctx, st, p, selectAll(t, p), opt); err == nil {
		t.Fatal("a start with another command took run r1")
	}
	for _, n := range []int{0, MaxShards + 1} {
		opt.Shards = n
		if _, err := Start(ctx, st, p, selectAll(t, p), opt); err == nil {
			t.Errorf("--shards %d accepted", n)
		}
	}
}

// TestLockRace: 16 pull requests plan the same dirspace at once, 100
// rounds, on every kind of bucket: exactly one takes the lock each round,
// and every other is told it is held.
func TestLockRace(t *testing.T) {
	urls := map[string]string{"mem": "mem://", "file": "file://" + t.TempDir()}
	for k, v := range testenv.BucketURLs(t) {
		urls[k] = v
	}
	rounds := 100
	if testing.Short() {
		rounds = 10
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, url)
			for round := 0; round < rounds; round++ {
				var wg sync.WaitGroup
				won := make([]bool, 16)
				errs := make([]error, 16)
				for w := 0; w < 16; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						m := &Manifest{Run: fmt.Sprintf("r%d-%d", round, w), PR: 100*round + w + 1, Units: []ManifestUnit{{ID: "net@default#net"}}}
						err := lockForPR(ctx, st, m)
						var locked *LockedError
						switch {
						case err == nil:
							won[w] = true
						case errors.As(err, &locked):
						default:
							errs[w] = err
						}
					}()
				}
				wg.Wait()
				winners := 0
				winner := 0
				for w := range won {
					if errs[w] != nil {
						t.Fatalf("round %d: %v", round, errs[w])
					}
					if won[w] {
						winners++
						winner = 100*round + w + 1
					}
				}
				if winners != 1 {
					t.Fatalf("round %d: %d winners", round, winners)
				}
				if freed, err := Unlock(ctx, st, winner); err != nil || len(freed) != 1 {
					t.Fatalf("round %d: unlock freed %d: %v", round, len(freed), err)
				}
			}
		})
	}
}

// TestManifestUnknownCommand: a manifest from the bucket that names a
// command this strata does not run is refused with an error, never looked
// up as a known one.
func TestManifestUnknownCommand(t *testing.T) {
	p := loadRepo(t, testenv.WriteRepo(t, readersFiles()))
	ctx := context.Background()
	st, _ := objstore.Open(ctx, "mem://", objstore.Options{})
	m, err := Start(ctx, st, p, selectStacks(t, p, "net"), StartOptions{Options: runner.Settings{Command: runner.CmdApply}, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{manifestKey(m.Run), waveKey(m.Run, 0)} {
		data, _, err := st.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(ctx, key, bytes.Replace(data, []byte(`"command":"apply"`), []byte(`"command":"frobnicate"`), 1)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := FetchJob(ctx, st, SliceOptions{Run: m.Run, Wave: 0, Shard: 0}); err == nil || !strings.Contains(err.Error(), `the manifest's command "frobnicate" is not one this strata runs`) {
		t.Errorf("FetchJob: %v", err)
	}
	if _, err := LoadManifest(ctx, st, m.Run); err == nil || !strings.Contains(err.Error(), "frobnicate") {
		t.Errorf("LoadManifest: %v", err)
	}
}

// TestJobOutsideTheRun: a job given a wave or shard the run does not
// have fails naming the run's size, rather than succeed having run
// nothing; a shard of the run's count with no units in the wave is no
// error.
func TestJobOutsideTheRun(t *testing.T) {
	ctx := context.Background()
	p := loadRepo(t, layeredRepo(t, 2, 1))
	st, _ := objstore.Open(ctx, "mem://", objstore.Options{})
	m, err := Start(ctx, st, p, selectAll(t, p), StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 3, Run: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Waves) != 2 {
		t.Fatalf("waves %+v", m.Waves)
	}
	for _, tc := range []struct {
		wave, shard int
		want        string
	}{
		{2, 0, "run r1 has 2 waves (0 to 1); --wave 2 is none of them"},
		{-1, 0, "--wave -1 is none of them"},
		{0, 3, "run r1 spreads each wave over at most 3 shards (0 to 2); --shard 3 is none of them"},
		{1, 2, ""},
	} {
		_, err := FetchJob(ctx, st, SliceOptions{Run: "r1", Wave: tc.wave, Shard: tc.shard})
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("wave %d shard %d: %v; want %q", tc.wave, tc.shard, err, tc.want)
		}
	}
}

// TestLockPolicyNone: a unit whose workflow says lock_policy none is not
// locked by a pull request's run, so another pull request's plan of it
// goes on; a unit of any other policy is locked.
func TestLockPolicyNone(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for dir, text := range map[string]string{
		"strata.yml":   "dirs:\n  free: {tags: [free]}\n  held: {tags: [held]}\nworkflows:\n  - {tag_query: free, lock_policy: none}\n  - {tag_query: held, lock_policy: strict}\n",
		"free/main.tf": "resource \"terraform_data\" \"x\" {}\n",
		"held/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	} {
		writeTestFile(t, filepath.Join(root, dir), []byte(text))
	}
	p := loadRepo(t, root)
	st, _ := objstore.Open(ctx, "mem://", objstore.Options{})
	start := func(pr int, dirs ...string) error {
		sel := selectAll(t, p)
		var run stacks.Run
		for _, ru := range sel.Units {
			if slices.Contains(dirs, ru.Dir) {
				run.Units = append(run.Units, ru)
			}
		}
		_, err := Start(ctx, st, p, &run, StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 1, PR: pr})
		return err
	}
	if err := start(1, "free", "held"); err != nil {
		t.Fatal(err)
	}
	if err := start(2, "free"); err != nil {
		t.Errorf("PR 2 planning the unlocked unit: %v", err)
	}
	var locked *LockedError
	if err := start(3, "held"); !errors.As(err, &locked) {
		t.Errorf("PR 3 planning the held unit: %v, want it locked by PR 1", err)
	}
}

// TestStartMaxWaves: a run of more waves than --max-waves (the wave jobs
// of the GitHub workflow) fails at start naming both numbers and the
// --max-waves that runs it, before it locks or writes anything; a run of
// exactly that many waves starts.
func TestStartMaxWaves(t *testing.T) {
	ctx := context.Background()
	p := loadRepo(t, layeredRepo(t, 4, 2))
	st, _ := objstore.Open(ctx, "mem://", objstore.Options{})
	opt := StartOptions{Options: runner.Settings{Command: runner.CmdPlan}, Shards: 2, Run: "deep", PR: 7, MaxWaves: 3}
	_, err := Start(ctx, st, p, selectAll(t, p), opt)
	want := "run deep needs 4 waves, more than --max-waves 3: the workflow strata ci emit github wrote has 3 wave jobs; write it again with strata ci emit github --max-waves 4 or more (up to 100) and commit it"
	if err == nil || err.Error() != want {
		t.Fatalf("start: %v\nwant %s", err, want)
	}
	if _, err := LoadManifest(ctx, st, "deep"); err == nil {
		t.Error("the refused run wrote its manifest")
	}
	if locks, err := Locks(ctx, st); err != nil || len(locks) != 0 {
		t.Errorf("the refused run left locks: %v %v", locks, err)
	}
	opt.MaxWaves = 4
	m, err := Start(ctx, st, p, selectAll(t, p), opt)
	if err != nil || len(m.Waves) != 4 {
		t.Fatalf("start with --max-waves 4: %v", err)
	}
}
