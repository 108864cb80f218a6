package ci

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestOIDCTokens: with oidc steps in the config, the GitHub workflow's
// wave jobs may ask for an OIDC token (and only read the repository),
// and the GitLab child pipeline's jobs get one for the steps' audiences
// as STRATA_OIDC_TOKEN; without, neither is written.
func TestOIDCTokens(t *testing.T) {
	for _, on := range []bool{false, true} {
		b, err := EmitGitHub(GitHubOptions{MaxWaves: 2, Shards: 2, OIDC: on})
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			Jobs map[string]struct {
				Permissions map[string]string `yaml:"permissions"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(b, &wf); err != nil {
			t.Fatal(err)
		}
		for name, job := range wf.Jobs {
			wave := strings.HasPrefix(name, "wave_")
			want := map[string]string(nil)
			if on && wave {
				want = map[string]string{"contents": "read", "pull-requests": "read", "id-token": "write"}
			}
			if !maps.Equal(job.Permissions, want) {
				t.Errorf("oidc %v: %s permissions %v, want %v", on, name, job.Permissions, want)
			}
		}
	}
	units := []ManifestUnit{{ID: "a@default", Dir: "a", Workspace: "default", Stack: "s", Wave: 0, Shard: 0}}
	for _, aud := range [][]string{nil, {"sts.amazonaws.com"}, {"https://iam.googleapis.com/p", "sts.amazonaws.com"}} {
		opt := DefaultGitLabOptions()
		opt.OIDCAudiences = aud
		b, err := EmitGitLabChild(&Manifest{Run: "r", Units: units}, opt)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Default struct {
				IDTokens map[string]struct {
					Aud any `yaml:"aud"`
				} `yaml:"id_tokens"`
			} `yaml:"default"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		tok, ok := doc.Default.IDTokens["STRATA_OIDC_TOKEN"]
		switch {
		case len(aud) == 0 && doc.Default.IDTokens != nil:
			t.Errorf("id_tokens without oidc steps:\n%s", b)
		case len(aud) == 1 && (!ok || tok.Aud != aud[0]):
			t.Errorf("one audience: %v\n%s", tok.Aud, b)
		case len(aud) == 2 && (!ok || fmt.Sprint(tok.Aud) != fmt.Sprint([]any{aud[0], aud[1]})):
			t.Errorf("two audiences: %v\n%s", tok.Aud, b)
		}
	}
}
