package engines

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func clearEnv(t *testing.T) {
	for _, k := range []string{envCacheDir, envTerraformMirror, envTerraformMirrorKey, envTofuMirror, envTofuMirrorKey, envEngineBuild, envOffline} {
		t.Setenv(k, "")
	}
}

func TestNewInstallerFromEnv(t *testing.T) {
	clearEnv(t)
	_, pub := testKeys(t)
	cache := t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "tofu.asc")
	if err := os.WriteFile(keyFile, []byte(pub), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envCacheDir, cache)
	t.Setenv(envTerraformMirror, "https://mirror.example/hashicorp/")
	t.Setenv(envTerraformMirrorKey, pub)
	t.Setenv(envTofuMirror, "http://10.0.0.1:8080/tofu")
	t.Setenv(envTofuMirrorKey, keyFile)
	t.Setenv(envEngineBuild, "go")
	t.Setenv(envOffline, "1")

	in, err := NewInstallerFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if in.CacheDir != cache || in.TerraformMirror != "https://mirror.example/hashicorp" || in.TofuMirror != "http://10.0.0.1:8080/tofu" ||
		in.TerraformMirrorKey != pub || in.TofuMirrorKey != pub || !in.Build || !in.Offline || in.ListTTL != DefaultListTTL || in.SearchPath != nil {
		t.Errorf("installer %+v", in)
	}
}

func TestNewInstallerFromEnvDefaults(t *testing.T) {
	clearEnv(t)
	t.Setenv("XDG_CACHE_HOME", "/xdg-cache")
	in, err := NewInstallerFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	base, _ := os.UserCacheDir()
	if in.CacheDir != filepath.Join(base, "strata") || in.Build || in.Offline || in.TerraformMirror != "" || in.TofuMirror != "" {
		t.Errorf("installer %+v", in)
	}
}

func TestNewInstallerFromEnvErrors(t *testing.T) {
	tests := []struct{ key, value, want string }{
		{envEngineBuild, "docker", `STRATA_ENGINE_BUILD="docker": the only build method is "go"`},
		{envOffline, "maybe", `STRATA_ENGINES_OFFLINE="maybe": want 1 or 0`},
		{envTerraformMirror, "mirror.example", `STRATA_TERRAFORM_MIRROR="mirror.example": want an http or https base URL`},
		{envTofuMirror, "ftp://mirror.example", `STRATA_TOFU_MIRROR="ftp://mirror.example": want an http or https base URL`},
		{envTerraformMirrorKey, "/no/such/key.asc", "STRATA_TERRAFORM_MIRROR_KEY: neither an armored public key nor a readable file"},
		{envTofuMirrorKey, "-----BEGIN PGP PUBLIC KEY BLOCK-----\ngarbage\n-----END PGP PUBLIC KEY BLOCK-----\n", "STRATA_TOFU_MIRROR_KEY: not an armored OpenPGP public key"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			clearEnv(t)
			t.Setenv(envCacheDir, t.TempDir())
			t.Setenv(tt.key, tt.value)
			_, err := NewInstallerFromEnv()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestInstallRejectsABadSpec(t *testing.T) {
	in, _ := testInstaller(t)
	_, err := in.Install(t.Context(), Spec{"terragrunt", "0.50.0"})
	wantErrContains(t, err, "engine terragrunt is not supported")
	_, err = in.Install(t.Context(), Spec{Terraform, "1.5"})
	wantErrContains(t, err, `engine version "1.5"`)
}
