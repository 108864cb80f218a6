package engines

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// pathDirs makes two search directories: the first holds a program named
// terraform that is not terraform, the second a link to the real one.
func pathDirs(t *testing.T) (impostor, real string) {
	t.Helper()
	needTerraform(t)
	truePath, err := lookTrue()
	if err != nil {
		t.Skip(err)
	}
	impostor, real = t.TempDir(), t.TempDir()
	if err := copyFile(truePath, filepath.Join(impostor, "terraform"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(localTerraform, filepath.Join(real, "terraform")); err != nil {
		t.Fatal(err)
	}
	return impostor, real
}

func TestPathFindsTheEngineByRunningIt(t *testing.T) {
	v := needTerraform(t)
	impostor, real := pathDirs(t)
	in, _ := testInstaller(t)
	in.Offline = true
	in.SearchPath = []string{impostor, real}

	e, err := in.Install(context.Background(), Spec{Terraform, v.String()})
	if err != nil {
		t.Fatal(err)
	}
	if e.Source != SourcePath || e.Path != filepath.Join(real, "terraform") {
		t.Errorf("got %+v, want the terraform in %s", e, real)
	}
	// Found binaries are used where they are, not copied into the cache.
	if vs := in.cachedVersions(Terraform); len(vs) != 0 {
		t.Errorf("cache holds %v", vs)
	}
}

func TestPathNamesEveryCandidateItRejected(t *testing.T) {
	needTerraformNewerThanListed(t)
	impostor, real := pathDirs(t)
	in, _ := testInstaller(t)
	in.Offline = true
	in.SearchPath = []string{impostor, real, t.TempDir()}

	_, err := in.Install(context.Background(), Spec{Terraform, "1.5.7"})
	v := needTerraform(t)
	wantErrContains(t, err,
		"terraform 1.5.7 is not available:",
		"\n  path: no terraform 1.5.7 in the search path (",
		filepath.Join(impostor, "terraform")+" is neither terraform nor tofu",
		filepath.Join(real, "terraform")+" is terraform "+v.String()+", not terraform 1.5.7",
		"\n  download: offline (STRATA_ENGINES_OFFLINE)",
	)
}

func TestPathCandidatesSkipDuplicatesAndNonExecutables(t *testing.T) {
	needTerraform(t)
	a, b := t.TempDir(), t.TempDir()
	if err := os.Symlink(localTerraform, filepath.Join(a, "terraform")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(localTerraform, filepath.Join(b, "terraform")); err != nil {
		t.Fatal(err)
	}
	plain := t.TempDir()
	if err := os.WriteFile(filepath.Join(plain, "terraform"), []byte("not executable"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := &Installer{SearchPath: []string{plain, a, b, a}}
	got := in.candidates(Terraform)
	if len(got) != 1 || got[0] != filepath.Join(a, "terraform") {
		t.Errorf("candidates %q", got)
	}
}

func TestDefaultSearchPathAddsWellKnownDirs(t *testing.T) {
	t.Setenv("PATH", "/first"+string(os.PathListSeparator)+"/second")
	dirs := (&Installer{}).searchDirs()
	if len(dirs) < 3 || dirs[0] != "/first" || dirs[1] != "/second" || dirs[2] != "/usr/local/bin" {
		t.Errorf("search dirs %q", dirs)
	}
}

func TestFindOnPath(t *testing.T) {
	v := needTerraform(t)
	impostor, real := pathDirs(t)
	in := &Installer{SearchPath: []string{impostor, real}}
	e, err := in.FindOnPath(context.Background(), Terraform)
	if err != nil {
		t.Fatal(err)
	}
	if e.Path != filepath.Join(real, "terraform") || !e.Version.Equal(v) || e.Source != SourcePath {
		t.Errorf("got %+v", e)
	}

	in.SearchPath = []string{impostor}
	_, err = in.FindOnPath(context.Background(), Terraform)
	wantErrContains(t, err, "no terraform in the search path (", "is neither terraform nor tofu")
	_, err = in.FindOnPath(context.Background(), Tofu)
	wantErrContains(t, err, "no tofu executable in the search path (")
	_, err = in.FindOnPath(context.Background(), "pulumi")
	wantErrContains(t, err, "engine pulumi is not supported")
}
