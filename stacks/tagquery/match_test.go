package tagquery

import "testing"

func TestMatch(t *testing.T) {
	t.Parallel()
	zoom := Subject{Tags: []string{"a", "b", "c"}, Dir: "foo/bar/baz/zoom"}
	tests := []struct {
		name    string
		query   string
		subject Subject
		want    bool
	}{
		{"exact tag", "a", zoom, true},
		{"missing tag", "d", zoom, false},
		{"tag is not a prefix", "dir:foo", Subject{Tags: []string{"dir:foo/bar"}}, false},
		{"juxtaposition", "a b", zoom, true},
		{"juxtaposition missing one", "a d", zoom, false},
		{"and then or", "a and d or c", zoom, true},
		{"and then or, neither", "a and e or d", zoom, false},
		{"juxtaposition takes the or", "d b or c", zoom, false},
		{"and before or", "d and b or c", zoom, true},
		{"not present", "not a", zoom, false},
		{"not absent", "not d", zoom, true},
		{"not group", "not (a and b)", zoom, false},
		{"not then juxtaposition", "not a d", Subject{Tags: []string{"b", "c"}}, false},
		{"empty matches all", "", Subject{}, true},
		{"whitespace matches all", "  \n", zoom, true},

		{"in dir first segment", "foo in dir", zoom, true},
		{"in dir inner segment", "bar in dir", zoom, true},
		{"in dir last segment", "zoom in dir", zoom, true},
		{"in dir run", "bar/baz in dir", zoom, true},
		{"in dir whole dir", "foo/bar/baz/zoom in dir", zoom, true},
		{"in dir partial segment", "ba in dir", zoom, false},
		{"in dir segment suffix", "az in dir", zoom, false},
		{"in dir not consecutive", "foo/baz in dir", zoom, false},
		{"in dir wrong order", "baz/bar in dir", zoom, false},
		{"in dir slashes around", "/bar/ in dir", zoom, false},
		{"in dir star is literal", "ba*r in dir", zoom, false},
		{"in dir exact", "foo in dir", Subject{Dir: "foo"}, true},
		{"in dir longer than dir", "foo/bar in dir", Subject{Dir: "foo"}, false},
		{"in dir not the root", ". in dir", Subject{Dir: "."}, false},
		{"in dir dir is cleaned", "bar in dir", Subject{Dir: "./foo/bar/"}, true},
		{"deprecated dir~", "dir~bar", zoom, true},
		{"in dirs combined", "bar in dir and zoom in dir and not (foo in dir)", zoom, false},

		{"glob one segment", "dir:aws/*", Subject{Tags: []string{"dir:aws/prod"}}, true},
		{"glob one segment, deeper", "dir:aws/*", Subject{Tags: []string{"dir:aws/prod/vpc"}}, false},
		{"glob one segment, the dir itself", "dir:aws/*", Subject{Tags: []string{"dir:aws"}}, false},
		{"glob any depth", "dir:aws/**", Subject{Tags: []string{"dir:aws/prod/vpc"}}, true},
		{"glob any depth, one level", "dir:aws/**", Subject{Tags: []string{"dir:aws/prod"}}, true},
		{"glob any depth, the dir itself", "dir:aws/**", Subject{Tags: []string{"dir:aws"}}, true},
		{"glob any depth, sibling prefix", "dir:aws/**", Subject{Tags: []string{"dir:awsx/prod"}}, false},
		{"glob leading star", "*-prod", Subject{Tags: []string{"eu-prod"}}, true},
		{"glob alternation", "team-{a,b}*", Subject{Tags: []string{"team-b7"}}, true},
		{"glob any of the tags", "workspace:*", Subject{Tags: []string{"x", "workspace:prod"}}, true},
		{"glob no tags", "*", Subject{}, false},
		{"question mark without star is exact", "a?", Subject{Tags: []string{"ab"}}, false},
		{"question mark without star, exact", "a?", Subject{Tags: []string{"a?"}}, true},

		{"stack name", "stack_name:prod", Subject{Tags: []string{"stack_name:prod", "stack_name:all"}}, true},
		{"stack name other", "stack_name:dev", Subject{Tags: []string{"stack_name:prod", "stack_name:all"}}, false},
		{"stack name glob", "stack_name:* and not stack_name:dev", Subject{Tags: []string{"stack_name:prod"}}, true},

		{"relative dir outside depends_on", "relative_dir:.", Subject{Dir: "a"}, false},
		{"not relative dir outside depends_on", "not relative_dir:.", Subject{Dir: "a"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := MustParse(tc.query).Match(tc.subject); got != tc.want {
				t.Errorf("Parse(%q).Match(%+v) = %v, want %v", tc.query, tc.subject, got, tc.want)
			}
		})
	}
}

func TestMatchFrom(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query string
		from  string
		dir   string
		want  bool
	}{
		{"relative_dir:../db", "services/api", "services/db", true},
		{"relative_dir:../db", "services/api", "services/api", false},
		{"relative_dir:../db", "services/api", "db", false},
		{"relative_dir:.", "a/b", "a/b", true},
		{"relative_dir:", "a/b", "a/b", true},
		{"relative_dir:c", "a/b", "a/b/c", true},
		{"relative_dir:../../c", "a/b", "c", true},
		{"relative_dir:x/../y", "a", "a/y", true},
		{"relative_dir:./x/", "a", "a/x", true},
		{"relative_dir:..", "a", ".", true},
		{"relative_dir:..", ".", ".", false},
		{"relative_dir:../..", "a", ".", false},
		{"relative_dir:../../a", "a", "a", false},
		{"relative_dir:x", ".", "x", true},
		{"relative_dir:x", "./", "x", true},
		{"relative_dir:x", ".", "./x/", true},
		{"not relative_dir:x", ".", "x", false},
		{"relative_dir:../db or relative_dir:../cache", "svc/api", "svc/cache", true},
		{"a and relative_dir:../db", "svc/api", "svc/db", true},
		{"a", "svc/api", "svc/db", true},
		{"", "svc/api", "anything", true},
	}
	for _, tc := range tests {
		s := Subject{Tags: []string{"a"}, Dir: tc.dir}
		if got := MustParse(tc.query).MatchFrom(s, tc.from); got != tc.want {
			t.Errorf("Parse(%q).MatchFrom(dir %q, from %q) = %v, want %v", tc.query, tc.dir, tc.from, got, tc.want)
		}
	}
}
