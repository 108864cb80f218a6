package engines

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIdentifyRealTerraform(t *testing.T) {
	v := needTerraform(t)
	id, err := identify(context.Background(), localTerraform)
	if err != nil || id.name != Terraform || !id.version.Equal(v) {
		t.Fatalf("identify = %+v, %v", id, err)
	}
	if nameFromBuildInfo(localTerraform) != Terraform {
		t.Error("build information does not name terraform")
	}
	if err := id.check(localTerraform, Tofu, v); err == nil {
		t.Error("terraform passed as tofu")
	}
	wantErrContains(t, id.check(localTerraform, Terraform, mustVersion(t, v.String()+"-dev")), "is terraform "+v.String()+", not terraform "+v.String()+"-dev")
}

// TF_CLI_ARGS would add flags to "version -json"; it is kept out.
func TestIdentifyIgnoresTFCLIArgs(t *testing.T) {
	needTerraform(t)
	t.Setenv("TF_CLI_ARGS", "-no-such-flag")
	t.Setenv("TF_CLI_ARGS_version", "-no-such-flag")
	if _, err := identify(context.Background(), localTerraform); err != nil {
		t.Fatal(err)
	}
}

func TestIdentifyRejectsOtherPrograms(t *testing.T) {
	p, err := lookTrue()
	if err != nil {
		t.Skip(err)
	}
	_, err = identify(context.Background(), p)
	wantErrContains(t, err, p+" is neither terraform nor tofu")
	_, err = identify(context.Background(), "/no/such/terraform")
	wantErrContains(t, err, "/no/such/terraform version")
}

func TestNameFromVersionText(t *testing.T) {
	for text, want := range map[string]string{
		"Terraform v1.5.7\non linux_amd64\n": Terraform,
		"OpenTofu v1.8.8\non linux_amd64\n":  Tofu,
		"terraform 1.5.7":                    "",
		"":                                   "",
	} {
		if got := nameFromVersionText([]byte(text)); got != want {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
}

// A wrapper script in front of the engine (a shim, a logger) has no Go
// build information: it is started once, for its plain version text,
// which names the engine and its version.
func TestIdentifyWrapperStartsOnce(t *testing.T) {
	v := needTerraform(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "starts.log")
	wrapper := filepath.Join(dir, "terraform")
	script := "#!/bin/sh\necho \"$*\" >> " + log + "\nexec " + localTerraform + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	id, err := identify(context.Background(), wrapper)
	if err != nil || id.name != Terraform || !id.version.Equal(v) {
		t.Fatalf("identify = %+v, %v", id, err)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSpace(string(b)), "\n"); len(got) != 1 || got[0] != "version" {
		t.Errorf("starts = %q, want one: version", got)
	}
}
