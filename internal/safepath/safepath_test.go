package safepath

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestJoin(t *testing.T) {
	base := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "state", "app"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A link inside base that points outside it.
	if err := os.Symlink(outside, filepath.Join(base, "state", "out")); err != nil {
		t.Fatal(err)
	}
	// A link inside base that points inside it.
	if err := os.Symlink(filepath.Join(base, "state", "app"), filepath.Join(base, "state", "in")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		elems []string
		want  string // "" when Join must refuse
	}{
		{[]string{"state", "app", "default#s.json"}, filepath.Join(base, "state", "app", "default#s.json")},
		{[]string{"state", ".", "default#s.json"}, filepath.Join(base, "state", "default#s.json")},
		{[]string{"state", "a/b/c", "ws#s.json"}, filepath.Join(base, "state", "a", "b", "c", "ws#s.json")},
		{[]string{"state", "app", "x/../../../../etc/config.json"}, ""},
		{[]string{"state", "..", "..", "x"}, ""},
		{[]string{"/etc/passwd"}, ""},
		{[]string{"state", "out", "x.json"}, ""},
		{[]string{"state", "out", "new", "deeper", "x.json"}, ""},
		{[]string{"state", "in", "x.json"}, filepath.Join(base, "state", "in", "x.json")},
		{[]string{"state", "x/..", "y.json"}, filepath.Join(base, "state", "y.json")},
	}
	for _, tc := range tests {
		got, err := Join(base, tc.elems...)
		if tc.want == "" {
			if !errors.Is(err, ErrEscapes) {
				t.Errorf("Join(%q) = %q, %v; want ErrEscapes", tc.elems, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Join(%q) = %q, %v; want %q", tc.elems, got, err, tc.want)
		}
	}
}
