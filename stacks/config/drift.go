package config

import (
	"slices"
	"strings"
)

// Drift is the config's drift (docs/ci.md#drift-schedules): one schedule
// (schedule, tag_query, reconcile) or several named ones (schedules), as
// Terrateam's two forms.
type Drift struct {
	Pos       Pos
	Enabled   Bool                   `yaml:"enabled" doc:"check for drift on the schedules (default false)"`
	Reconcile Bool                   `yaml:"reconcile" doc:"apply what drifted (default false)"`
	Schedule  String                 `yaml:"schedule" enum:"hourly,daily,weekly,monthly" doc:"how often"`
	TagQuery  String                 `yaml:"tag_query" doc:"the units checked (default all)"`
	Schedules *Map[DriftScheduleCfg] `yaml:"schedules" doc:"named schedules, each with schedule, tag_query and reconcile"`
}

// DriftScheduleCfg is one named schedule.
type DriftScheduleCfg struct {
	Pos       Pos
	Reconcile Bool    `yaml:"reconcile" doc:"apply what drifted (default false)"`
	Schedule  String  `yaml:"schedule" cfg:"required" enum:"hourly,daily,weekly,monthly" doc:"how often"`
	TagQuery  String  `yaml:"tag_query" cfg:"required" doc:"the units checked"`
	Window    Ignored `yaml:"window" cfg:"ignored" doc:"Terrateam's run window"`
}

// DriftSchedule is a schedule to run, defaults applied.
type DriftSchedule struct {
	Name      string // "default" for the one-schedule form
	Schedule  string // hourly, daily, weekly or monthly
	TagQuery  string
	Reconcile bool
}

// DriftSchedules are the config's drift schedules, by name; none when
// drift is not enabled.
func (c *Config) DriftSchedules() []DriftSchedule {
	d := c.Drift
	if d == nil || !d.Enabled.Value {
		return nil
	}
	if d.Schedules == nil {
		return []DriftSchedule{{Name: "default", Schedule: d.Schedule.Value, TagQuery: d.TagQuery.Value, Reconcile: d.Reconcile.Value}}
	}
	var out []DriftSchedule
	for _, e := range d.Schedules.Entries {
		out = append(out, DriftSchedule{Name: e.Key, Schedule: e.Value.Schedule.Value, TagQuery: e.Value.TagQuery.Value, Reconcile: e.Value.Reconcile.Value})
	}
	slices.SortFunc(out, func(a, b DriftSchedule) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// checkDrift checks that drift is written in one of its two forms and
// that its tag queries parse.
func checkDrift(cfg *Config, c *Collector) {
	d := cfg.Drift
	if d == nil {
		return
	}
	if d.Schedules != nil {
		for _, s := range []struct {
			key string
			set bool
			pos Pos
		}{{"schedule", d.Schedule.Set, d.Schedule.Pos}, {"tag_query", d.TagQuery.Set, d.TagQuery.Pos}, {"reconcile", d.Reconcile.Set, d.Reconcile.Pos}} {
			if s.set {
				c.Errorf(s.pos, "drift."+s.key, "found %s beside schedules; expected one form: schedule, tag_query and reconcile, or schedules, each with its own", s.key)
			}
		}
		for _, e := range d.Schedules.Entries {
			if e.Value.TagQuery.Set {
				checkQuery(e.Value.TagQuery, "drift.schedules."+e.Key+".tag_query", c)
			}
		}
		return
	}
	if !d.Schedule.Set {
		c.Errorf(d.Pos, "drift", "no schedule; expected schedule (hourly, daily, weekly or monthly) or schedules")
	}
	if d.TagQuery.Set {
		checkQuery(d.TagQuery, "drift.tag_query", c)
	}
}
