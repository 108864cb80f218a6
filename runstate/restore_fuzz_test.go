package runstate

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// FuzzRestoredRecord: whatever restored.json holds, reading it never
// panics; every name a warning quotes from it shows no control
// character; and every path the record names that strata would act on
// joins to a path under the repository's root.
func FuzzRestoredRecord(f *testing.F) {
	f.Add([]byte(`{"version":2,"dirs":[{"dir":"app","commit":"` + strings.Repeat("a", 40) + `","made":["app"],"files":[{"path":"app/main.tf","sha256":"00"}]}]}`))
	f.Add([]byte(`[{"dir":"app"}]`))
	f.Add([]byte(`{"version":2,"dirs":[{"dir":"../x","files":[{"path":"/etc/passwd"}]}]}`))
	f.Add([]byte(`{"version":2,"dirs":[{"dir":"a\u0000b\n","made":["a/../../b"]}]}`))
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		dirs, why := readRestored(b)
		if why != "" && dirs != nil {
			t.Fatalf("a record refused (%s) names dirs", why)
		}
		var names []string
		for _, d := range dirs {
			names = append(names, d.Dir, d.Commit)
			names = append(names, d.Made...)
			for _, fl := range d.Files {
				names = append(names, fl.Path)
			}
		}
		names = append(names, oldRecordDirs(b)...)
		for _, n := range names {
			if s := shown(n); strings.ContainsFunc(s, unicode.IsControl) {
				t.Fatalf("shown(%q) = %q holds a control character", n, s)
			}
			if !localPath(n) {
				continue
			}
			p, err := plainPath(root, n)
			if err != nil {
				continue
			}
			if rel, err := filepath.Rel(root, p); err != nil || !filepath.IsLocal(rel) {
				t.Fatalf("%q joins to %s, outside the root", n, p)
			}
		}
	})
}
