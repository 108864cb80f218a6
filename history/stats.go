package history

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"time"
)

// UnitRun is one run of one unit: the run's summary and the unit in it.
type UnitRun struct {
	Run  RunSummary
	Unit Unit
}

// RunsByUnit are the runs of each unit among recs, by unit ID, newest
// first as recs are: one pass over the records, each record's summary
// made once, for pages that show every unit's runs.
func RunsByUnit(recs []*Record) map[string][]UnitRun {
	out := map[string][]UnitRun{}
	for _, r := range recs {
		sum := r.Summary()
		for _, u := range r.Units {
			out[u.ID] = append(out[u.ID], UnitRun{Run: sum, Unit: u})
		}
	}
	return out
}

// UnitRuns reads the runs of the unit with that ID, newest first. Each
// record is read for that unit alone: its header and the unit's entry
// are decoded, not the other units' (a record of 10,000 units is a few
// MiB); a record that cannot be read so is read whole, and one that
// cannot be read at all is skipped with a warning.
func (h *History) UnitRuns(ctx context.Context, id string) ([]UnitRun, error) {
	names, err := h.s.names(ctx)
	if err != nil {
		return nil, err
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	key, _ := json.Marshal(id)
	read, err := readEach(h, names, func(name string) (*UnitRun, error) { return h.unitRun(ctx, name, key) })
	if err != nil {
		return nil, err
	}
	runs := make([]UnitRun, len(read))
	for i, r := range read {
		runs[i] = *r
	}
	return runs, nil
}

// unitRun reads one record for the unit whose ID is key, as JSON; nil
// when the run did not have it.
func (h *History) unitRun(ctx context.Context, name string, key []byte) (*UnitRun, error) {
	b, err := h.s.read(ctx, name)
	if err != nil || len(b) > MaxRecord {
		r, err := h.decodeRecord(name, b, err)
		if err != nil {
			return nil, err
		}
		return findUnit(r, string(key))
	}
	// A record is written with its units last, each starting with its id:
	// inside a JSON string a quote is escaped, so these bytes are where
	// they seem to be.
	head, _, ok := bytes.Cut(b, []byte(`,"units":[`))
	var r Record
	// head is part of b, which the store may hold: closing it goes into
	// a copy (head[:len(head):len(head)]), never over b's next byte.
	if !ok || json.Unmarshal(append(head[:len(head):len(head)], '}'), &r) != nil || r.check(name) != nil {
		// Read whole from the bytes at hand, which says what is wrong.
		full, err := h.decodeRecord(name, b, nil)
		if err != nil {
			return nil, err
		}
		return findUnit(full, string(key))
	}
	at := bytes.Index(b, append(append([]byte(`{"id":`), key...), ','))
	if at < 0 {
		return nil, nil
	}
	var u Unit
	if err := json.NewDecoder(bytes.NewReader(b[at:])).Decode(&u); err != nil {
		return nil, &badRecord{h.s.where(name), err}
	}
	return &UnitRun{Run: r.Summary(), Unit: u}, nil
}

// findUnit is the run of the unit whose ID is the JSON string key.
func findUnit(r *Record, key string) (*UnitRun, error) {
	var id string
	if err := json.Unmarshal([]byte(key), &id); err != nil {
		return nil, err
	}
	for _, u := range r.Units {
		if u.ID == id {
			return &UnitRun{Run: r.Summary(), Unit: u}, nil
		}
	}
	return nil, nil
}

// StepStats are one step's times over a unit's runs
// (docs/behaviour.md#history): the median and the 95th percentile
// (nearest rank) of the runs that had it, and the latest run's. Slow
// flags a latest run more than twice the median and over a second slower
// than it.
type StepStats struct {
	Name      string        `json:"name"`
	Runs      int           `json:"runs"`
	P50       time.Duration `json:"-"`
	P95       time.Duration `json:"-"`
	Latest    time.Duration `json:"-"`
	HasLatest bool          `json:"-"`
	Slow      bool          `json:"slow"`
	P50MS     int64         `json:"p50_ms"`
	P95MS     int64         `json:"p95_ms"`
	// LatestMS is the latest run's time; absent when that run did not
	// have the step.
	LatestMS *int64 `json:"latest_ms,omitempty"`
}

// Total is the name of the stats of a unit's steps added up.
const Total = "total"

// Stats are the times of each step of a unit's runs, newest first, in the
// order the steps first ran, then the total of every step.
func Stats(runs []UnitRun) []StepStats {
	var order []string
	times := map[string][]time.Duration{}
	latest := map[string]time.Duration{}
	// Oldest first: a step's place is where it first ran.
	for i := len(runs) - 1; i >= 0; i-- {
		u := runs[i].Unit
		if len(u.Steps) == 0 {
			continue
		}
		per := map[string]time.Duration{}
		var names []string
		for _, s := range u.Steps {
			if _, ok := per[s.Name]; !ok {
				names = append(names, s.Name)
			}
			per[s.Name] += time.Duration(s.MS) * time.Millisecond
		}
		per[Total] = u.Took()
		names = append(names, Total)
		for _, n := range names {
			if _, ok := times[n]; !ok && n != Total {
				order = append(order, n)
			}
			times[n] = append(times[n], per[n])
			if i == 0 {
				latest[n] = per[n]
			}
		}
	}
	if len(times) == 0 {
		return nil
	}
	order = append(order, Total)
	out := make([]StepStats, 0, len(order))
	for _, n := range order {
		ts := append([]time.Duration(nil), times[n]...)
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		s := StepStats{Name: n, Runs: len(ts), P50: percentile(ts, 50), P95: percentile(ts, 95)}
		s.P50MS, s.P95MS = s.P50.Milliseconds(), s.P95.Milliseconds()
		if l, ok := latest[n]; ok {
			s.Latest, s.HasLatest = l, true
			ms := l.Milliseconds()
			s.LatestMS = &ms
			s.Slow = Slower(l, s.P50)
		}
		out = append(out, s)
	}
	return out
}

// Slower says a time is more than twice the median and over a second
// slower than it.
func Slower(t, p50 time.Duration) bool { return t > 2*p50 && t-p50 > time.Second }

// percentile is the nearest-rank p-th percentile of sorted times.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}
