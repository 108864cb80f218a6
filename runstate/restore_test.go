package runstate

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/git"
	"github.com/strata-iac/strata/internal/testenv"
)

// restoreRepo is a git repository whose first commit has gone/ (a root
// module with a subdir) and app/, and whose HEAD deleted gone/. It
// returns the root and the first commit.
func restoreRepo(t *testing.T) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := testenv.WriteRepo(t, map[string]string{
		"app/main.tf": "app", "gone/main.tf": "gone", "gone/sub/x.tf": "x",
	})
	testenv.Git(t, root, "init", "-q")
	testenv.Git(t, root, "add", "-A")
	testenv.Git(t, root, "commit", "-q", "-m", "first")
	first := strings.TrimSpace(testenv.Git(t, root, "rev-parse", "HEAD"))
	testenv.Git(t, root, "rm", "-q", "-r", "gone")
	testenv.Git(t, root, "commit", "-q", "-m", "rm gone")
	return root, first
}

// exists reports which of paths (relative to root) are there, as
// "path" or "!path".
func exists(root string, paths ...string) []string {
	var out []string
	for _, p := range paths {
		p = strings.TrimPrefix(p, "!")
		if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
			out = append(out, p)
		} else {
			out = append(out, "!"+p)
		}
	}
	return out
}

func equal(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

// TestRestoreRemovesOnlyWhatItPutBack: a command's own dirs go when it
// ends, except a file changed since and a dir holding something else;
// what was there before stays.
func TestRestoreRemovesOnlyWhatItPutBack(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		before map[string]string // files in the work tree before the restore
		during map[string]string // files written while the dir is back
		want   []string
		warns  []string
	}{
		{
			name: "a dir that was gone goes whole",
			want: []string{"!gone", "app/main.tf"},
		},
		{
			name:   "a local state left in the dir stays",
			before: map[string]string{"gone/terraform.tfstate": "state"},
			want:   []string{"gone/terraform.tfstate", "!gone/main.tf", "!gone/sub"},
		},
		{
			name:   "a file there before is not taken",
			before: map[string]string{"gone/sub/x.tf": "mine"},
			want:   []string{"gone/sub/x.tf", "!gone/main.tf"},
		},
		{
			name:   "the engine's data dir stays, and so does the dir",
			during: map[string]string{"gone/.terraform/terraform.tfstate": "{}"},
			want:   []string{"gone/.terraform", "!gone/main.tf", "!gone/sub"},
			warns:  []string{"left in place: gone (it holds .terraform, which strata did not put back)"},
		},
		{
			name:   "a file changed since it was put back stays",
			during: map[string]string{"gone/sub/x.tf": "edited"},
			want:   []string{"gone/sub/x.tf", "!gone/main.tf"},
			warns:  []string{"left in place: gone/sub/x.tf (changed since it was put back)"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root, first := restoreRepo(t)
			for p, c := range tc.before {
				testenv.WriteFile(t, filepath.Join(root, p), c)
			}
			repo, err := git.Open(context.Background(), root)
			if err != nil {
				t.Fatal(err)
			}
			var warns []string
			state := filepath.Join(root, ".strata")
			r, err := Restore(context.Background(), root, state, repo, []RestoreDir{{Dir: "gone", Commit: first}}, func(m string) { warns = append(warns, m) })
			if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(filepath.Join(root, "gone", "main.tf")); err != nil || string(b) != "gone" {
				t.Fatalf("gone/main.tf put back: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(state, restoredRecord)); err != nil {
				t.Fatalf("no record while the dir is back: %v", err)
			}
			for p, c := range tc.during {
				testenv.WriteFile(t, filepath.Join(root, p), c)
			}
			if err := r.Remove(); err != nil {
				t.Fatal(err)
			}
			if got := exists(root, tc.want...); !equal(got, tc.want) {
				t.Errorf("after Remove: %q, want %q", got, tc.want)
			}
			for p, c := range tc.before {
				if b, err := os.ReadFile(filepath.Join(root, p)); err != nil || string(b) != c {
					t.Errorf("%s: %q, %v; want %q as it was", p, b, err, c)
				}
			}
			if !equal(warns, tc.warns) {
				t.Errorf("warnings %q, want %q", warns, tc.warns)
			}
			if _, err := os.Stat(filepath.Join(state, restoredRecord)); !os.IsNotExist(err) {
				t.Errorf("the record stays: %v", err)
			}
		})
	}
}

// TestCleanRestoredCraftedRecords: a record on disk is untrusted. Each
// crafted record deletes nothing strata did not put back, and says what
// it leaves.
func TestCleanRestoredCraftedRecords(t *testing.T) {
	t.Parallel()
	sum := sha256Hex
	cases := []struct {
		name string
		// setup writes the work tree and returns the record; outside is
		// a dir out of the repository.
		setup func(t *testing.T, root, outside, first string) any
		want  []string // relative to root; "../out/x" is outside
		warns []string
	}{
		{
			name: "a killed command's own record removes what it put back",
			setup: func(t *testing.T, root, _, first string) any {
				testenv.WriteFile(t, filepath.Join(root, "gone/main.tf"), "gone")
				testenv.WriteFile(t, filepath.Join(root, "gone/sub/x.tf"), "x")
				return record(restoredDir{Dir: "gone", Commit: first, Made: []string{"gone", "gone/sub"},
					Files: []restoredFile{{"gone/main.tf", sum([]byte("gone"))}, {"gone/sub/x.tf", sum([]byte("x"))}}})
			},
			want:  []string{"!gone"},
			warns: []string{"removing the deleted dirs a killed command put back: gone"},
		},
		{
			name: "a file tracked at HEAD",
			setup: func(t *testing.T, _, _, first string) any {
				return record(restoredDir{Dir: "app", Commit: first, Made: []string{"app"},
					Files: []restoredFile{{"app/main.tf", sum([]byte("app"))}}})
			},
			want:  []string{"app/main.tf"},
			warns: []string{"removing the deleted dirs a killed command put back: app", "left in place: app/main.tf (tracked at HEAD)", "left in place: app (HEAD tracks files in it)"},
		},
		{
			name: "a file changed since it was put back",
			setup: func(t *testing.T, root, _, first string) any {
				testenv.WriteFile(t, filepath.Join(root, "gone/main.tf"), "edited")
				testenv.WriteFile(t, filepath.Join(root, "gone/sub/x.tf"), "x")
				return record(restoredDir{Dir: "gone", Commit: first, Made: []string{"gone", "gone/sub"},
					Files: []restoredFile{{"gone/main.tf", sum([]byte("gone"))}, {"gone/sub/x.tf", sum([]byte("x"))}}})
			},
			want:  []string{"gone/main.tf", "!gone/sub"},
			warns: []string{"removing the deleted dirs a killed command put back: gone", "left in place: gone/main.tf (changed since it was put back)"},
		},
		{
			name: "a hash the commit does not have",
			setup: func(t *testing.T, root, _, first string) any {
				testenv.WriteFile(t, filepath.Join(root, "gone/main.tf"), "mine")
				return record(restoredDir{Dir: "gone", Commit: first, Files: []restoredFile{{"gone/main.tf", sum([]byte("mine"))}}})
			},
			want:  []string{"gone/main.tf"},
			warns: []string{"removing the deleted dirs a killed command put back: gone", "left in place: gone/main.tf (not as it was at %FIRST%)"},
		},
		{
			name: "a file with no hash",
			setup: func(t *testing.T, root, _, first string) any {
				testenv.WriteFile(t, filepath.Join(root, "gone/main.tf"), "gone")
				return record(restoredDir{Dir: "gone", Commit: first, Files: []restoredFile{{Path: "gone/main.tf"}}})
			},
			want:  []string{"gone/main.tf"},
			warns: []string{"removing the deleted dirs a killed command put back: gone", "left in place: gone/main.tf (changed since it was put back)"},
		},
		{
			name: "absolute paths",
			setup: func(t *testing.T, _, outside, first string) any {
				testenv.WriteFile(t, filepath.Join(outside, "main.tf"), "gone")
				return record(restoredDir{Dir: outside, Commit: first, Made: []string{outside},
					Files: []restoredFile{{filepath.Join(outside, "main.tf"), sum([]byte("gone"))}}})
			},
			want:  []string{"../out/main.tf"},
			warns: []string{`removing the deleted dirs a killed command put back: "%OUT%"`, `left in place: "%OUT%" (not a path inside the repository)`},
		},
		{
			name: "paths with ..",
			setup: func(t *testing.T, root, outside, first string) any {
				testenv.WriteFile(t, filepath.Join(outside, "main.tf"), "gone")
				testenv.WriteFile(t, filepath.Join(root, "gone/main.tf"), "gone")
				return record(
					restoredDir{Dir: "..", Commit: first, Made: []string{".."}, Files: []restoredFile{{"../out/main.tf", sum([]byte("gone"))}}},
					restoredDir{Dir: "gone", Commit: first, Made: []string{"gone/../../out"}, Files: []restoredFile{{"gone/../../out/main.tf", sum([]byte("gone"))}}},
				)
			},
			want: []string{"../out/main.tf", "gone/main.tf"},
			warns: []string{`removing the deleted dirs a killed command put back: "..", gone`,
				`left in place: "gone/../../out/main.tf" (not a path inside gone)`, `left in place: "gone/../../out" (not a path inside gone)`,
				`left in place: ".." (not a path inside the repository)`},
		},
		{
			name: "a symbolic link in the path",
			setup: func(t *testing.T, root, outside, first string) any {
				// Through the link, the content is what the commit has.
				testenv.WriteFile(t, filepath.Join(outside, "main.tf"), "gone")
				if err := os.Symlink(outside, filepath.Join(root, "gone")); err != nil {
					t.Fatal(err)
				}
				return record(restoredDir{Dir: "gone", Commit: first, Files: []restoredFile{{"gone/main.tf", sum([]byte("gone"))}}})
			},
			want:  []string{"gone", "../out/main.tf"},
			warns: []string{"removing the deleted dirs a killed command put back: gone", "left in place: gone/main.tf (gone is a symbolic link)"},
		},
		{
			name: "a file that is a symbolic link",
			setup: func(t *testing.T, root, outside, first string) any {
				testenv.WriteFile(t, filepath.Join(outside, "main.tf"), "gone")
				if err := os.Mkdir(filepath.Join(root, "gone"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(outside, "main.tf"), filepath.Join(root, "gone", "main.tf")); err != nil {
					t.Fatal(err)
				}
				return record(restoredDir{Dir: "gone", Commit: first, Files: []restoredFile{{"gone/main.tf", sum([]byte("gone"))}}})
			},
			want:  []string{"gone/main.tf", "../out/main.tf"},
			warns: []string{"removing the deleted dirs a killed command put back: gone", "left in place: gone/main.tf (not a regular file)"},
		},
		{
			name: "a file of the git dir",
			setup: func(t *testing.T, root, _, first string) any {
				b, err := os.ReadFile(filepath.Join(root, ".git", "HEAD"))
				if err != nil {
					t.Fatal(err)
				}
				return record(restoredDir{Dir: ".git", Commit: first, Files: []restoredFile{{".git/HEAD", sum(b)}}})
			},
			want:  []string{".git/HEAD"},
			warns: []string{"removing the deleted dirs a killed command put back: .git", "left in place: .git/HEAD (not as it was at %FIRST%)"},
		},
		{
			name: "a commit that is no commit",
			setup: func(t *testing.T, root, _, _ string) any {
				testenv.WriteFile(t, filepath.Join(root, "gone/main.tf"), "gone")
				return record(restoredDir{Dir: "gone", Commit: "--output=x", Made: []string{"gone"}, Files: []restoredFile{{"gone/main.tf", sum([]byte("gone"))}}})
			},
			want: []string{"gone/main.tf"},
			warns: []string{"removing the deleted dirs a killed command put back: gone", `left in place: gone/main.tf (the record's commit "--output=x" is not in this clone)`,
				`left in place: gone (the record's commit "--output=x" is not in this clone)`},
		},
		{
			name: "a record of an earlier strata",
			setup: func(t *testing.T, root, _, _ string) any {
				testenv.WriteFile(t, filepath.Join(root, "gone/main.tf"), "gone")
				return []map[string]any{{"dir": "gone", "existed": false}, {"dir": "app", "existed": true, "files": []string{"app/main.tf"}}}
			},
			want:  []string{"gone/main.tf", "app/main.tf"},
			warns: []string{"%RECORD% was written by an earlier strata and names no content: nothing it names is removed; left in place: gone, app"},
		},
		{
			name: "not JSON",
			setup: func(t *testing.T, root, _, _ string) any {
				testenv.WriteFile(t, filepath.Join(root, "gone/main.tf"), "gone")
				return json.RawMessage(`{"version":2,"dirs":[{"dir":"gone","rm":"-rf"}]}`)
			},
			want:  []string{"gone/main.tf"},
			warns: []string{`%RECORD% cannot be read (json: unknown field "rm"): nothing it names is removed`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root, first := restoreRepo(t)
			outside := filepath.Join(filepath.Dir(root), "out")
			if err := os.Mkdir(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(tc.setup(t, root, outside, first))
			if err != nil {
				t.Fatal(err)
			}
			state := filepath.Join(root, ".strata")
			rec := filepath.Join(state, restoredRecord)
			testenv.WriteFile(t, rec, string(b))
			var warns []string
			if err := CleanRestored(context.Background(), state, root, func(m string) { warns = append(warns, m) }); err != nil {
				t.Fatal(err)
			}
			if got := exists(root, tc.want...); !equal(got, tc.want) {
				t.Errorf("after CleanRestored: %q, want %q", got, tc.want)
			}
			r := strings.NewReplacer("%FIRST%", git.ShortID(first), "%OUT%", outside, "%RECORD%", rec)
			var want []string
			for _, w := range tc.warns {
				want = append(want, r.Replace(w))
			}
			if !equal(warns, want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warns, "\n"), strings.Join(want, "\n"))
			}
			if _, err := os.Stat(rec); !os.IsNotExist(err) {
				t.Errorf("the record stays: %v", err)
			}
		})
	}
}

func record(dirs ...restoredDir) restoredFileRecord {
	return restoredFileRecord{Version: restoredVersion, Dirs: dirs}
}
