package stacks

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
)

func TestWarnSensitiveUnmarked(t *testing.T) {
	t.Parallel()
	const plain = "variable \"token\" {\n  type = string\n}\n"
	const marked = "variable \"token\" {\n  type      = string\n  sensitive = true\n}\n"
	const warning = `is sensitive, but variable "token" (%s) is not sensitive = true: when the value rotates, plans show its old value, which strata cannot mask; declare the variable with sensitive = true`
	tests := []struct {
		name  string
		cfg   string
		files map[string]string
		want  []string
	}{
		{
			name: "a listed variable bound to a plain module variable",
			cfg: `stacks:
  names:
    app:
      tag_query: 'dir:a'
      sensitive: [TF_VAR_token]
      variables: {TF_VAR_token: s3cr3t}
`,
			files: map[string]string{"a/main.tf": "resource \"terraform_data\" \"x\" {}\n", "a/variables.tf": "\n" + plain},
			want:  []string{"strata.yml:5:19: warning: stacks.names.app.sensitive: TF_VAR_token " + strings.Replace(warning, "%s", "a/variables.tf:2", 1)},
		},
		{
			name: "the module marks it sensitive",
			cfg: `stacks:
  names:
    app:
      tag_query: 'dir:a'
      sensitive: [TF_VAR_token]
      variables: {TF_VAR_token: s3cr3t}
`,
			files: map[string]string{"a/variables.tf": marked},
		},
		{
			name: "listed by the parent, once for a dir with two workspaces",
			cfg: `dirs:
  a:
    workspaces: {one: {tags: [one]}, two: {tags: [two]}}
stacks:
  names:
    all:
      stacks: [app]
      sensitive: [TF_VAR_token]
    app:
      tag_query: 'dir:a'
      variables: {TF_VAR_token: s3cr3t}
`,
			files: map[string]string{"a/main.tf": plain},
			want:  []string{"strata.yml:8:19: warning: stacks.names.all.sensitive: TF_VAR_token " + strings.Replace(warning, "%s", "a/main.tf:1", 1)},
		},
		{
			name: "not an input variable",
			cfg: `stacks:
  names:
    app:
      tag_query: 'dir:a'
      sensitive: [token]
      variables: {token: s3cr3t}
`,
			files: map[string]string{"a/main.tf": plain},
		},
		{
			name: "the module does not declare it",
			cfg: `stacks:
  names:
    app:
      tag_query: 'dir:a'
      sensitive: [TF_VAR_other]
      variables: {TF_VAR_other: s3cr3t}
`,
			files: map[string]string{"a/main.tf": plain},
		},
		{
			name: "listed but not a stack variable",
			cfg: `stacks:
  names:
    app:
      tag_query: 'dir:a'
      sensitive: [TF_VAR_token]
`,
			files: map[string]string{"a/main.tf": plain},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := testRepo(t, tt.cfg)
			for name, content := range tt.files {
				testenv.WriteFile(t, filepath.Join(root, name), content)
			}
			_, diags := loadDiags(t, root)
			if errs := diags.Errors(); len(errs) > 0 {
				t.Fatalf("config errors: %v", errs)
			}
			var got []string
			for _, d := range diags.Warnings() {
				if strings.Contains(d.Message, "sensitive = true") {
					got = append(got, strings.TrimPrefix(d.String(), root+string(filepath.Separator)))
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
