package engines

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Constraints resolve against what the mirror lists: 1.5.7, 1.9.8, the
// local terraform's version (1.11.4 here) and 1.12.0-alpha20250101.
func TestResolveAgainstTheMirrorListing(t *testing.T) {
	needTerraformNewerThanListed(t)
	local := needTerraform(t).String()
	m := newHashicorpMirror(t)
	tests := []struct{ version, want string }{
		{"latest", local},
		{"~> 1.5", local},
		{"~> 1.9.0", "1.9.8"},
		{">= 1.5, < 1.9", "1.5.7"},
		{">= 1.12.0-alpha20250101", "1.12.0-alpha20250101"},
		{"1.5.7", "1.5.7"},
	}
	for _, tt := range tests {
		in, _ := testInstaller(t)
		in.TerraformMirror = m.URL
		spec, err := ParseSpec(Terraform, tt.version)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := parseRequirement(spec.Version)
		v, found, err := in.resolveVersion(context.Background(), spec, req)
		if err != nil || found != nil || v.String() != tt.want {
			t.Errorf("%q: resolved to %v (found %v), %v; want %s", tt.version, v, found, err, tt.want)
		}
	}

	in, _ := testInstaller(t)
	in.TerraformMirror = m.URL
	_, err := in.Install(context.Background(), Spec{Terraform, "~> 2.0"})
	wantErrContains(t, err, "terraform ~> 2.0: none of the 4 versions "+m.URL+" lists matches (highest: 1.12.0-alpha20250101)")
}

func TestInstallConstraintNamesTheResolvedVersion(t *testing.T) {
	needTerraform(t)
	m := newHashicorpMirror(t)
	in, _ := testInstaller(t)
	in.TerraformMirror = m.URL
	_, err := in.Install(context.Background(), Spec{Terraform, "~> 1.9.0"})
	// 1.9.8 is listed but the mirror has no files for it.
	wantErrContains(t, err, "terraform ~> 1.9.0: terraform 1.9.8 is not available:", "/terraform/1.9.8/index.json", "404 Not Found")
}

func TestInstallLatestFromTheMirror(t *testing.T) {
	needTerraformNewerThanListed(t)
	v := needTerraform(t)
	m := newHashicorpMirror(t)
	_, pub := testKeys(t)
	in, warnings := testInstaller(t)
	in.TerraformMirror, in.TerraformMirrorKey = m.URL, pub
	e, err := in.Install(context.Background(), Spec{Terraform, "latest"})
	if err != nil {
		t.Fatal(err)
	}
	if !e.Version.Equal(v) || e.Source != SourceDownload {
		t.Errorf("got %+v", e)
	}
	if len(*warnings) != 0 {
		t.Errorf("warnings %q", *warnings)
	}
}

func TestResolveOfflineUsesTheCacheWithAWarning(t *testing.T) {
	needTerraformNewerThanListed(t)
	in, warnings := testInstaller(t)
	seeded := seedCache(t, in)
	in.TerraformMirror = closedURL(t)

	e, err := in.Install(context.Background(), Spec{Terraform, "~> 1.6"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Source != SourceCache || e.Path != seeded.Path {
		t.Errorf("got %+v", e)
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "terraform ~> 1.6: cannot list versions (listing terraform versions at") ||
		!strings.Contains((*warnings)[0], "using "+seeded.Version.String()+" from the cache, the highest matching version available offline") {
		t.Errorf("warnings %q", *warnings)
	}
}

func TestResolveOfflineUsesThePath(t *testing.T) {
	v := needTerraform(t)
	dir := t.TempDir()
	if err := os.Symlink(localTerraform, filepath.Join(dir, "terraform")); err != nil {
		t.Fatal(err)
	}
	in, warnings := testInstaller(t)
	in.Offline = true
	in.SearchPath = []string{dir}
	e, err := in.Install(context.Background(), Spec{Terraform, "latest"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Source != SourcePath || !e.Version.Equal(v) || e.Path != filepath.Join(dir, "terraform") {
		t.Errorf("got %+v", e)
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "cannot list versions (offline (STRATA_ENGINES_OFFLINE)); using "+v.String()+" from the search path") {
		t.Errorf("warnings %q", *warnings)
	}
}

func TestResolveOfflineWithNothingToUse(t *testing.T) {
	in, _ := testInstaller(t)
	in.Offline = true
	_, err := in.Install(context.Background(), Spec{Tofu, "~> 1.8"})
	wantErrContains(t, err, "tofu ~> 1.8: cannot list versions: offline (STRATA_ENGINES_OFFLINE); and no matching version is in the cache (")
}

func TestListingIsSavedAndReused(t *testing.T) {
	needTerraformNewerThanListed(t)
	local := needTerraform(t).String()
	m := newHashicorpMirror(t)
	in, _ := testInstaller(t)
	in.TerraformMirror, in.ListTTL = m.URL, time.Hour
	spec := Spec{Terraform, "~> 1.5"}
	req, _ := parseRequirement(spec.Version)
	if v, _, err := in.resolveVersion(context.Background(), spec, req); err != nil || v.String() != local {
		t.Fatalf("resolved %v, %v", v, err)
	}
	if n := m.indexRequests.Load(); n != 1 {
		t.Fatalf("listed %d times", n)
	}

	// Another process, with the mirror gone: the saved listing answers.
	m.Close()
	next := &Installer{CacheDir: in.CacheDir, SearchPath: []string{}, TerraformMirror: m.URL, ListTTL: time.Hour}
	if v, _, err := next.resolveVersion(context.Background(), spec, req); err != nil || v.String() != local {
		t.Fatalf("from the saved listing: %v, %v", v, err)
	}

	// A listing saved for another mirror, or too old, is not used.
	other := &Installer{CacheDir: in.CacheDir, SearchPath: []string{}, TerraformMirror: closedURL(t), ListTTL: time.Hour}
	if _, _, err := other.resolveVersion(context.Background(), spec, req); err == nil {
		t.Error("used a listing saved for another mirror")
	}
	stale := &Installer{CacheDir: in.CacheDir, SearchPath: []string{}, TerraformMirror: m.URL, ListTTL: time.Nanosecond}
	if _, _, err := stale.resolveVersion(context.Background(), spec, req); err == nil {
		t.Error("used a stale listing")
	}
}

func TestListingIsSharedWithinAnInstaller(t *testing.T) {
	needTerraform(t)
	m := newHashicorpMirror(t)
	in, _ := testInstaller(t)
	in.TerraformMirror = m.URL
	specs := []Spec{{Terraform, "~> 1.5"}, {Terraform, ">= 1.5, < 1.9"}, {Terraform, "latest"}}
	for _, s := range specs {
		req, _ := parseRequirement(s.Version)
		if _, _, err := in.resolveVersion(context.Background(), s, req); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.indexRequests.Load(); n != 1 {
		t.Errorf("listed %d times for 3 constraints", n)
	}
}

// Resolve installs each distinct engine once, in parallel, and reports
// every failure.
func TestResolve(t *testing.T) {
	needTerraformNewerThanListed(t)
	v := needTerraform(t).String()
	m := newHashicorpMirror(t)
	_, pub := testKeys(t)
	in, _ := testInstaller(t)
	in.TerraformMirror, in.TerraformMirrorKey = m.URL, pub
	in.TofuMirror = closedURL(t)
	var installs atomic.Int32
	in.Progress = func(s string) {
		if strings.HasPrefix(s, "downloading") {
			installs.Add(1)
		}
	}
	specs := []Spec{
		{Terraform, v},
		{Terraform, "latest"},
		{Terraform, v},
		{Terraform, "~> " + v},
		{Terraform, "1.5.7"},
		{Tofu, "~> 1.8"},
	}
	got, err := in.Resolve(context.Background(), specs)
	for _, s := range specs[:4] {
		if e := got[s]; e == nil || e.Version.String() != v {
			t.Errorf("%s: %+v", s, e)
		}
	}
	if got[specs[0]] != got[specs[1]] {
		t.Errorf("one version installed twice: %p %p", got[specs[0]], got[specs[1]])
	}
	if n := installs.Load(); n != 2 {
		t.Errorf("%d downloads started, want 2 (%s and 1.5.7)", n, v)
	}
	if len(got) != 3 {
		t.Errorf("got %d engines, want the 3 distinct specs that resolve", len(got))
	}
	var ue *UnavailableError
	if !errors.As(err, &ue) {
		t.Fatalf("want an *UnavailableError among %v", err)
	}
	wantErrContains(t, err, "terraform 1.5.7 is not available", "tofu ~> 1.8: cannot list versions: listing tofu versions at "+in.TofuMirror)
}
