package controls

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/strata-iac/strata/stacks/config"
)

// ChangeControls are who may run a pull request that changes which files
// (access_control's terrateam_config_update, ci_config_update and files):
// anyone, unless the config narrows them.
type ChangeControls struct {
	ConfigUpdate   []Matcher
	CIConfigUpdate []Matcher
	// Files are exact paths, each with who may change it.
	Files []FilePolicy
}

// FilePolicy is one entry of access_control.files.
type FilePolicy struct {
	Path string
	Who  []Matcher
}

// compileChanges reads access_control's file keys, with Terrateam's
// defaults (everyone).
func compileChanges(ac *config.AccessControl) ChangeControls {
	c := ChangeControls{ConfigUpdate: everyone, CIConfigUpdate: everyone}
	if ac.TerrateamConfigUpdate != nil {
		c.ConfigUpdate = parseMatchers(ac.TerrateamConfigUpdate)
	}
	if ac.CIConfigUpdate != nil {
		c.CIConfigUpdate = parseMatchers(ac.CIConfigUpdate)
	}
	if ac.Files != nil {
		for _, e := range ac.Files.Entries {
			c.Files = append(c.Files, FilePolicy{Path: e.Key, Who: parseMatchers(&e.Value)})
		}
	}
	return c
}

// asks says the file keys narrow who may run some change, so the files a
// pull request changes must be read.
func (c ChangeControls) asks() bool {
	open := func(list []Matcher) bool { return slices.Contains(list, Matcher{Kind: "*"}) }
	return !open(c.ConfigUpdate) || !open(c.CIConfigUpdate) || len(c.Files) > 0
}

// isCIConfig says a file is the CI's own configuration: a GitHub Actions
// workflow or the GitLab pipeline.
func isCIConfig(file string) bool {
	return path.Dir(file) == ".github/workflows" || file == ".gitlab-ci.yml"
}

// changes says why the actor may not run a pull request that changes
// these files, or "": its config (configFiles), the CI's configuration,
// or a path access_control.files names.
func (d *decider) changes(changed, configFiles []string) (string, error) {
	cc := d.c.Changes
	var configChanged, ciChanged []string
	for _, f := range changed {
		if slices.Contains(configFiles, f) {
			configChanged = append(configChanged, f)
		}
		if isCIConfig(f) {
			ciChanged = append(ciChanged, f)
		}
	}
	type rule struct {
		files []string
		who   []Matcher
		key   string
	}
	rules := []rule{{configChanged, cc.ConfigUpdate, "terrateam_config_update"}, {ciChanged, cc.CIConfigUpdate, "ci_config_update"}}
	for _, fp := range cc.Files {
		if slices.Contains(changed, fp.Path) {
			rules = append(rules, rule{[]string{fp.Path}, fp.Who, fmt.Sprintf("files[%q]", fp.Path)})
		}
	}
	for _, r := range rules {
		if len(r.files) == 0 {
			continue
		}
		ok, err := d.matchesAny(d.req.Actor, r.who)
		if err != nil || ok {
			if err != nil {
				return "", err
			}
			continue
		}
		return fmt.Sprintf("%s may not %s a pull request that changes %s: access_control.%s lets %s", d.req.Actor, d.req.Op, strings.Join(r.files, ", "), r.key, describe(r.who)), nil
	}
	return "", nil
}
