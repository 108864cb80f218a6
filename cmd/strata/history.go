package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/user"
	"path"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/urfave/cli/v2"

	cmdpolicy "github.com/strata-iac/strata/command"
	"github.com/strata-iac/strata/history"
	"github.com/strata-iac/strata/internal/ciplatform"
	"github.com/strata-iac/strata/internal/objstore"
	"github.com/strata-iac/strata/report"
	"github.com/strata-iac/strata/stacks/config"
)

func historyCommand() *cli.Command {
	return &cli.Command{
		Name:      "history",
		Usage:     "list the runs kept, newest first; with UNIT, that unit's runs and its step times",
		ArgsUsage: "[UNIT]",
		Description: "UNIT is a unit's ID (dir@workspace#stack), its name or its dir, from the root or\n" +
			"the current dir; in a unit's dir, history alone is that unit's. Each step's\n" +
			"p50 and p95 are over the unit's runs kept; the latest is marked slower when\n" +
			"it is more than twice the p50 and over a second more (docs/behaviour.md#history).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, json or html (a page of the runs over time and each unit's step times)"},
			&cli.PathFlag{Name: "state-dir", Usage: "run state `DIR` (default .strata at the root)", EnvVars: []string{"STRATA_STATE_DIR"}},
			&cli.StringFlag{Name: "state", Usage: "read the history of the state bucket at `URL` (s3://…, gs://…, azblob://…, file:///dir)", EnvVars: []string{"STRATA_STATE_URL"}},
			stateTimeoutFlag(),
		},
		Action: historyAction,
	}
}

func historyAction(c *cli.Context) error {
	format := c.String("format")
	if c.Bool("json") {
		format = "json"
	}
	if format != "text" && format != "json" && format != "html" {
		return cli.Exit(fmt.Sprintf("--format %s: expected text, json or html", format), 1)
	}
	if c.NArg() > 1 {
		return cli.Exit(fmt.Sprintf("strata history takes one UNIT; got %s", strings.Join(c.Args().Slice(), " ")), 1)
	}
	s, err := openProject(c)
	if err != nil {
		return err
	}
	h, done, err := openHistory(c, stateDirOf(c, s))
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer done()
	ix, err := h.Index(c.Context)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	arg := c.Args().First()
	if arg == "" && format != "html" {
		if here := s.project.UnitsIn(s.cwd); s.cwd != "." && len(here) == 1 {
			arg = here[0].ID()
		}
	}
	if format == "html" {
		return writeHistoryHTML(c, s, h, ix, arg)
	}
	if arg == "" {
		return printRuns(c.App.Writer, ix, format == "json")
	}
	id, err := historyUnit(s, ix, arg)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	runs, err := h.UnitRuns(c.Context, id)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	// A unit's runs are read for that unit alone: the index has the rest
	// of each run's summary.
	summaries := make(map[string]history.RunSummary, len(ix.Runs))
	for _, r := range ix.Runs {
		summaries[r.ID] = r
	}
	for i := range runs {
		if sum, ok := summaries[runs[i].Run.ID]; ok {
			runs[i].Run = sum
		}
	}
	return printUnitRuns(c.App.Writer, id, ix.Units[id], runs, format == "json")
}

// openHistory is the history a command reads: the bucket's with --state,
// else the state dir's; done closes the bucket.
func openHistory(c *cli.Context, stateDir string) (h *history.History, done func(), err error) {
	warn := func(msg string) { warnf(c, "%s", msg) }
	if url := c.String("state"); url != "" {
		st, err := openBucket(c, url)
		if err != nil {
			return nil, nil, err
		}
		h := history.InBucket(st)
		h.Warn = warn
		return h, func() { st.Close() }, nil
	}
	h = history.Local(stateDir)
	h.Warn = warn
	return h, func() {}, nil
}

// historyUnit is the ID of the unit arg names: a unit of the config by
// ID, name or dir (from the root, or from the dir strata runs in), else
// a unit the history holds by ID or dir.
func historyUnit(s *session, ix *history.Index, arg string) (string, error) {
	dirs := []string{path.Clean(strings.TrimSuffix(arg, "/"))}
	if s.cwd != "." {
		dirs = append(dirs, path.Join(s.cwd, arg))
	}
	for _, u := range s.project.Units {
		if u.ID() == arg || u.Name() == arg {
			return u.ID(), nil
		}
	}
	for _, d := range dirs {
		var ids []string
		for _, u := range s.project.Units {
			if u.Dir == d {
				ids = append(ids, u.ID())
			}
		}
		for id, us := range ix.Units {
			if us.Dir == d && !slices.Contains(ids, id) && !s.hasUnit(id) {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		switch len(ids) {
		case 0:
			continue
		case 1:
			return ids[0], nil
		default:
			return "", fmt.Errorf("%s holds %d units: %s; name one by its ID", d, len(ids), strings.Join(ids, ", "))
		}
	}
	if ix.Units[arg] != nil {
		return arg, nil
	}
	return "", fmt.Errorf("no unit %s in the config or the history (strata ls lists the units)", arg)
}

// hasUnit says the config has a unit of that ID.
func (s *session) hasUnit(id string) bool {
	for _, u := range s.project.Units {
		if u.ID() == id {
			return true
		}
	}
	return false
}

// countOrder is how a run's counts are listed: what drifted or changes
// first, then what did not get there.
var countOrder = []report.Status{history.StatusDrifted, history.StatusInSync, report.StatusPlanned, report.StatusNoChanges,
	report.StatusApplied, report.StatusDestroyed, report.StatusFailed, report.StatusBlocked, report.StatusDeferred,
	report.StatusSkipped, report.StatusCancelled, report.StatusDenied, report.StatusMissing}

// countsText is a run's counts in words: "2 drifted, 1 in sync".
func countsText(counts map[report.Status]int) string {
	var parts []string
	for _, s := range countOrder {
		if n := counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, statusWords(s)))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func statusWords(s report.Status) string { return strings.ReplaceAll(string(s), "_", " ") }

// shown is text read from the history as a terminal may show it: its
// control characters escaped.
func shown(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	q := fmt.Sprintf("%q", s)
	return q[1 : len(q)-1]
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

func shortCommit(c string) string {
	if len(c) > 12 {
		c = c[:12]
	}
	return cmp.Or(shown(c), "-")
}

// runsJSON is what history --json prints.
type runsJSON struct {
	Runs []history.RunSummary `json:"runs"`
}

func printRuns(w io.Writer, ix *history.Index, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(runsJSON{Runs: append([]history.RunSummary{}, ix.Runs...)})
	}
	if len(ix.Runs) == 0 {
		fmt.Fprintln(w, "no runs recorded")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STARTED\tCOMMAND\tUNITS\tRESULT\tEXIT\tTOOK\tCOMMIT\tACTOR")
	for _, r := range ix.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\t%s\t%s\n", stamp(r.StartedAt), shown(r.Command), r.Units, countsText(r.Counts), r.ExitCode,
			r.FinishedAt.Sub(r.StartedAt).Round(100*time.Millisecond), shortCommit(r.Commit), cmp.Or(shown(r.Actor), "-"))
	}
	return tw.Flush()
}

// unitJSON is what history UNIT --json prints.
type unitJSON struct {
	Unit   string              `json:"unit"`
	Status *history.UnitStatus `json:"status"`
	Runs   []unitRunJSON       `json:"runs"`
	Steps  []history.StepStats `json:"steps"`
}

type unitRunJSON struct {
	Run  history.RunSummary `json:"run"`
	Unit history.Unit       `json:"unit"`
}

func printUnitRuns(w io.Writer, id string, us *history.UnitStatus, runs []history.UnitRun, asJSON bool) error {
	stats := history.Stats(runs)
	if asJSON {
		out := unitJSON{Unit: id, Status: us, Runs: []unitRunJSON{}, Steps: append([]history.StepStats{}, stats...)}
		for _, r := range runs {
			out.Runs = append(out.Runs, unitRunJSON{Run: r.Run, Unit: r.Unit})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(w, "%s: %s\n", shown(id), report.CountOf(len(runs), "run"))
	if line := statusLine(us); line != "" {
		fmt.Fprintln(w, line)
	}
	if len(runs) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STARTED\tCOMMAND\tSTATUS\tCHANGES\tTOOK\tSTEPS")
	for _, r := range runs {
		changes := "-"
		if r.Unit.Change != nil {
			changes = r.Unit.Change.String()
		}
		var steps []string
		for _, st := range r.Unit.Steps {
			steps = append(steps, fmt.Sprintf("%s %s", shown(st.Name), (time.Duration(st.MS)*time.Millisecond).Round(10*time.Millisecond)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", stamp(r.Run.StartedAt), shown(r.Run.Command), statusWords(r.Unit.HistoryStatus()), changes,
			r.Unit.Took().Round(10*time.Millisecond), cmp.Or(strings.Join(steps, ", "), "-"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(stats) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tRUNS\tP50\tP95\tLATEST\t")
	for _, st := range stats {
		latest, note := "-", ""
		if st.HasLatest {
			latest = st.Latest.Round(10 * time.Millisecond).String()
		}
		if st.Slow {
			note = "slower: over twice the p50"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", shown(st.Name), st.Runs, st.P50.Round(10*time.Millisecond), st.P95.Round(10*time.Millisecond), latest, note)
	}
	return tw.Flush()
}

// statusLine says a unit's last recorded status and drift.
func statusLine(us *history.UnitStatus) string {
	if us == nil {
		return "no status recorded"
	}
	line := fmt.Sprintf("last status: %s (%s, %s)", statusWords(us.Status), shown(us.Command), stamp(us.At))
	switch {
	case us.Drift == history.StatusDrifted && us.DriftedSince != nil:
		line += "; drifted since " + stamp(*us.DriftedSince)
		if us.DriftChanges != nil {
			line += " (" + us.DriftChanges.String() + ")"
		}
	case us.Drift == history.StatusInSync && us.Status != history.StatusInSync:
		line += "; in sync"
	}
	if us.AppliedAt != nil {
		line += "; last applied " + stamp(*us.AppliedAt)
	}
	return line
}

// historyKeep is how many runs the config keeps.
func historyKeep(cfg *config.Config) int {
	if cfg != nil && cfg.History != nil && cfg.History.Keep.Set {
		return cfg.History.Keep.Value
	}
	return history.DefaultKeep
}

// historyMeta is what a run's record says beyond its report: the commit
// (the CI's, else HEAD of the checkout) and who ran it (the CI's actor,
// else the machine's user).
func historyMeta(c *cli.Context, s *session, rep *report.Report) history.Meta {
	var m history.Meta
	if rep.CI != nil {
		m.Commit = rep.CI.Commit
	}
	if m.Commit == "" && s != nil {
		if repo, err := s.gitRepo(c); err == nil {
			m.Commit = repo.Head()
		}
	}
	m.Actor = runActor()
	m.Destroy = s != nil && s.destroying
	return m
}

// runActor is who runs strata: the CI's actor, else the machine's user.
func runActor() string {
	if a := ciplatform.From(os.Getenv).Job().Actor; a != "" {
		return a
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

// recordHistory appends the run to the history of the state dir and, with
// --state, of the bucket (docs/behaviour.md#history). A failure is
// printed; the run's exit code stands, as the history only feeds what
// reads it.
func recordHistory(c *cli.Context, s *session, rep *report.Report) {
	if pol, _ := cmdpolicy.Of(rep.Command); !pol.Recorded || len(rep.Units) == 0 {
		return
	}
	rec := history.FromReport(rep, historyMeta(c, s, rep))
	keep := historyKeep(s.project.Config)
	h := history.Local(stateDirOf(c, s))
	h.Warn = func(msg string) { warnf(c, "%s", msg) }
	if err := h.Append(c.Context, rec, keep); err != nil {
		fmt.Fprintf(c.App.ErrWriter, "strata: %v\n", err)
	}
	if url := c.String("state"); url != "" {
		st, err := openBucket(c, url)
		if err == nil {
			defer st.Close()
			hb := history.InBucket(st)
			hb.Warn = h.Warn
			err = hb.Append(c.Context, rec, keep)
		}
		if err != nil {
			fmt.Fprintf(c.App.ErrWriter, "strata: %v\n", err)
		}
	}
}

// recordCIHistory appends a run of CI jobs to the bucket's history, named
// by its run ID: finishing it again records nothing more. How many runs
// are kept is the config's where ci finish runs, when it can be read.
func recordCIHistory(c *cli.Context, st *objstore.Store, rep *report.Report, run, commit string, destroy bool) {
	if pol, _ := cmdpolicy.Of(rep.Command); !pol.Recorded || len(rep.Units) == 0 {
		return
	}
	keep := history.DefaultKeep
	if loc, err := locateProject(c); err == nil {
		if cfg, _, err := config.Load(loc.cfgPath, config.StrataConfigFile); err == nil {
			keep = historyKeep(cfg)
		}
	}
	m := history.Meta{Run: run, Commit: commit, Actor: runActor(), Destroy: destroy}
	if rep.CI != nil && rep.CI.Commit != "" {
		m.Commit = rep.CI.Commit
	}
	h := history.InBucket(st)
	h.Warn = func(msg string) { warnf(c, "%s", msg) }
	if err := h.Append(c.Context, history.FromReport(rep, m), keep); err != nil {
		fmt.Fprintf(c.App.ErrWriter, "strata: %v\n", err)
	}
}

// writeHistoryHTML writes the history page of the newest pageRuns runs:
// every unit they hold, or the one unit arg names.
func writeHistoryHTML(c *cli.Context, s *session, h *history.History, ix *history.Index, arg string) error {
	recs, err := h.Runs(c.Context, pageRuns)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	runsByUnit := history.RunsByUnit(recs)
	page := &report.HistoryPage{}
	for _, r := range ix.Runs {
		page.Runs = append(page.Runs, report.HistoryRun{Command: r.Command, Commit: r.Commit, Actor: r.Actor, StartedAt: r.StartedAt,
			FinishedAt: r.FinishedAt, ExitCode: r.ExitCode, Counts: r.Counts})
	}
	var ids []string
	if arg != "" {
		id, err := historyUnit(s, ix, arg)
		if err != nil {
			return cli.Exit(err.Error(), 1)
		}
		ids = []string{id}
	} else {
		ids = slices.Sorted(maps.Keys(runsByUnit))
	}
	for _, id := range ids {
		hu := report.HistoryUnit{ID: id}
		if us := ix.Units[id]; us != nil {
			hu.Status, hu.Drift = us.Status, us.Drift
			if us.DriftedSince != nil {
				hu.DriftedSince = *us.DriftedSince
			}
		}
		for _, r := range runsByUnit[id] {
			ur := report.HistoryUnitRun{StartedAt: r.Run.StartedAt, Command: r.Run.Command, Status: r.Unit.HistoryStatus()}
			for _, st := range r.Unit.Steps {
				ur.Steps = append(ur.Steps, report.HistoryStep{Name: st.Name, Took: time.Duration(st.MS) * time.Millisecond})
			}
			hu.Runs = append(hu.Runs, ur)
		}
		page.Units = append(page.Units, hu)
	}
	return report.WriteHistoryHTML(c.App.Writer, page)
}
