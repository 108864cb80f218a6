package engines

import (
	"context"
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
	wantErrContains(t, err, p+" version -json printed no engine version")
	_, err = identify(context.Background(), "/no/such/terraform")
	wantErrContains(t, err, "/no/such/terraform version -json")
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
