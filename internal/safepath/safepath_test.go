package safepath

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestJoin(t *testing.T) {
	t.Parallel()
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
	b, err := NewBase(base)
	if err != nil {
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
		checkJoin(t, "Join", tc.elems, tc.want, func(elems ...string) (string, error) { return Join(base, elems...) })
		checkJoin(t, "Base.Join", tc.elems, tc.want, b.Join)
	}
}

func checkJoin(t *testing.T, what string, elems []string, want string, join func(...string) (string, error)) {
	t.Helper()
	got, err := join(elems...)
	if want == "" {
		if !errors.Is(err, ErrEscapes) {
			t.Errorf("%s(%q) = %q, %v; want ErrEscapes", what, elems, got, err)
		}
		return
	}
	if err != nil || got != want {
		t.Errorf("%s(%q) = %q, %v; want %q", what, elems, got, err, want)
	}
}

// TestBaseLater: a Base sees links made below it after it was made, and a
// Base made before its dir existed checks every path the way Join does.
func TestBaseLater(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	made, err := NewBase(root)
	if err != nil {
		t.Fatal(err)
	}
	early, err := NewBase(filepath.Join(root, "state"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "state", "app"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "state", "out")); err != nil {
		t.Fatal(err)
	}
	// A link to a dir inside root, through which a path leaves it.
	if err := os.Symlink(filepath.Join(root, "state"), filepath.Join(root, "state", "app", "up")); err != nil {
		t.Fatal(err)
	}
	// A file where a dir is expected.
	if err := os.WriteFile(filepath.Join(root, "state", "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		b     *Base
		elems []string
		want  string
	}{
		{made, []string{"state", "out", "x.json"}, ""},
		{made, []string{"state", "app", "up", "out", "x"}, ""},
		{made, []string{"state", "app", "up", "app", "x"}, filepath.Join(root, "state", "app", "up", "app", "x")},
		{made, []string{"state", "new", "x.json"}, filepath.Join(root, "state", "new", "x.json")},
		{made, []string{"."}, root},
		{early, []string{"out", "x.json"}, ""},
		{early, []string{"app", "x.json"}, filepath.Join(root, "state", "app", "x.json")},
		{early, []string{"app", "..", "..", "x"}, ""},
	} {
		checkJoin(t, "Base("+tc.b.Path()+").Join", tc.elems, tc.want, tc.b.Join)
	}
	if _, err := made.Join("state", "file", "x"); err == nil {
		t.Error("Join through a file: no error")
	}
	if _, err := Join(root, "state", "file", "x"); err == nil {
		t.Error("Join through a file: no error (Join)")
	}
}

// FuzzBaseJoin: for any names, a Base's Join answers as Join does, over a
// dir holding links that lead out, back in, and in circles.
func FuzzBaseJoin(f *testing.F) {
	root := f.TempDir()
	outside := f.TempDir()
	for _, d := range []string{"a/b", "c"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(d)), 0o700); err != nil {
			f.Fatal(err)
		}
	}
	for link, to := range map[string]string{
		"out":   outside,
		"a/in":  filepath.Join(root, "c"),
		"a/up":  "..",
		"a/b/x": "../../out",
		"loop":  "loop",
		"c/rel": "../a/b",
	} {
		if err := os.Symlink(to, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			f.Fatal(err)
		}
	}
	b, err := NewBase(root)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][2]string{{"a", "b/file"}, {"out", "x"}, {"a/up/out", "y"}, {"a/b/x", "z"}, {"loop", "q"}, {"c/rel/..", "w"}, {"..", "a"}, {"a/../..", "b"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, e1, e2 string) {
		want, werr := Join(root, e1, e2)
		got, gerr := b.Join(e1, e2)
		if got != want || (werr == nil) != (gerr == nil) || errors.Is(werr, ErrEscapes) != errors.Is(gerr, ErrEscapes) {
			t.Fatalf("Join(%q, %q) = %q, %v; Base.Join = %q, %v", e1, e2, want, werr, got, gerr)
		}
	})
}
