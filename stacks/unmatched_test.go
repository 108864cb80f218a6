package stacks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestQueryTags(t *testing.T) {
	t.Parallel()
	cases := []struct{ query, want string }{
		{"", ""},
		{"prod", "prod"},
		{"prod and not dir:aws/**", "prod dir:aws/**"},
		{"(a OR b) c", "a b c"},
		{`"and" 'x y'`, "and|x y"},
		{"network in dir and prod", "prod"},
		{"not bar/baz in dir", ""},
		{"dir~net relative_dir:../vpc team", "team"},
		{"stack_name:app x", "x"},
		{"a\nor\tb", "a b"},
	}
	for _, tc := range cases {
		got := queryTags(tc.query)
		sep := " "
		if strings.Contains(tc.want, "|") {
			sep = "|"
		}
		if strings.Join(got, sep) != tc.want {
			t.Errorf("queryTags(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
}

func TestSpellerNearest(t *testing.T) {
	t.Parallel()
	s := newSpeller(map[string]bool{"production": true, "staging": true, "dir:app": true, "dir:network": true, "dir:net": true, "db": true})
	cases := []struct{ word, want string }{
		{"prodution", "production"},
		{"stagign", "staging"},
		{"dir:netwrk", "dir:network"},
		{"dir:vpc", ""}, // the shared "dir:" does not make it close to dir:app
		{"dev", ""},
		{"production", ""}, // a word never suggests itself
		{"db2", "db"},
		{"d", ""}, // one letter is too short to respell
		{"dir:nett", "dir:net"},
	}
	for _, tc := range cases {
		if got := s.nearest(tc.word); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

// TestUnmatchedWarnings: what does and does not warn about a query or a
// dirs key that matches nothing.
func TestUnmatchedWarnings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  string
		dirs []string
		want string // a warning that must be there, "" for none about matching
	}{
		{"implicit default never warns", "stacks:\n  names:\n    a: {tag_query: dir:a}\n", []string{"a"}, ""},
		{"a catch-all default left empty", "stacks:\n  names:\n    a: {tag_query: dir:a}\n    default: {tag_query: ''}\n", []string{"a"}, ""},
		{"a default that matches nothing at all", "stacks:\n  names:\n    a: {tag_query: dir:a}\n    default: {tag_query: dir:b}\n", []string{"a"},
			`strata.yml:4:26: warning: stacks.names.default.tag_query: tag query "dir:b" matches no dirspace: no dirspace has the tag dir:b`},
		{"no tags, only the combination", "dirs:\n  a: {tags: [x]}\n  b: {tags: [y]}\nstacks:\n  names:\n    xy: {tag_query: x and y}\n    rest: {tag_query: x or y}\n", []string{"a", "b"},
			`strata.yml:6:21: warning: stacks.names.xy.tag_query: tag query "x and y" matches no dirspace`},
		{"a glob that an exact key beats", "dirs:\n  a: {tags: [x]}\n  'a*': {tags: [y]}\n", []string{"a"}, ""},
		{"a glob matching a root", "dirs:\n  'envs/**': {tags: [x]}\n", []string{"envs/prod"}, ""},
		{"a glob with no near spelling", "dirs:\n  'zzz/**': {tags: [x]}\n", []string{"envs/prod"},
			`strata.yml:2:3: warning: dirs.zzz/**: glob "zzz/**" matches no root module dir`},
		{"an exact key naming a dir with no module", "dirs:\n  tools: {tags: [x]}\n", []string{"a"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := testRepo(t, tc.cfg, tc.dirs...)
			if tc.name == "an exact key naming a dir with no module" {
				if err := mkdir(root, "tools"); err != nil {
					t.Fatal(err)
				}
			}
			_, diags := loadDiags(t, root)
			if errs := diags.Errors(); len(errs) > 0 {
				t.Fatalf("errors:\n%s", diagText(errs))
			}
			var got []string
			for _, d := range diags.Warnings() {
				if strings.Contains(d.Message, "matches no") || strings.Contains(d.Message, "does not exist") {
					got = append(got, d.String())
				}
			}
			if strings.Join(got, "\n") != tc.want {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), tc.want)
			}
		})
	}
}

func mkdir(root, dir string) error { return os.MkdirAll(filepath.Join(root, dir), 0o755) }
