package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// credentials are the variables strata reads credentials from, each with a
// value of its own.
var credentials = map[string]string{
	"GITHUB_TOKEN":                   "ghs-withheld-github-1111",
	"STRATA_GITHUB_TOKEN":            "ghp-withheld-strata-github-2222",
	"GITLAB_TOKEN":                   "glpat-withheld-gitlab-3333",
	"STRATA_GITLAB_TOKEN":            "glpat-withheld-strata-gitlab-4444",
	"CI_JOB_TOKEN":                   "glcbt-withheld-job-5555",
	"STRATA_OIDC_TOKEN":              "eyJ-withheld-oidc-6666",
	"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "withheld-id-request-7777",
}

// credentialsConfig: unit a's workflow asks for GITLAB_TOKEN in its apply
// step (the engine's local-exec prints it) and for GITHUB_TOKEN in a run
// step that prints it; a hook asks for STRATA_OIDC_TOKEN and prints it.
// Every other step, hook and engine call writes its environment to a file
// without asking.
const credentialsConfig = `hooks:
  all:
    pre:
      - type: run
        cmd: ['sh', '-c', 'env > hook-unasked.env']
      - type: run
        env: {STRATA_OIDC_TOKEN: '${STRATA_OIDC_TOKEN}'}
        cmd: ['sh', '-c', 'env > hook-asked.env; echo "hook has $STRATA_OIDC_TOKEN"']
        capture_output: true
workflows:
  - tag_query: 'dir:a'
    plan:
      - type: init
      - type: run
        cmd: ['sh', '-c', 'env > run-unasked.env']
      - type: run
        env: {GITHUB_TOKEN: '${GITHUB_TOKEN}'}
        cmd: ['sh', '-c', 'env > run-asked.env; echo "run step has $GITHUB_TOKEN"']
        capture_output: true
      - type: plan
    apply:
      - type: init
      - type: apply
        env: {GITLAB_TOKEN: '${GITLAB_TOKEN}'}
stacks:
  names:
    app: {tag_query: 'dir:a or dir:b'}
`

const credentialsModule = `resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "env > engine.env; echo \"engine has $GITLAB_TOKEN\""
  }
}
`

// TestCredentialsWithheldAndMasked: the forge and OIDC tokens strata reads
// reach no engine, hook or run step that does not name them, reach those
// that do, and their values, printed by those, are masked in the console,
// the report, the summary, the state dir and the bucket.
func TestCredentialsWithheldAndMasked(t *testing.T) {
	needTerraform(t)
	root := writeRepo(t, map[string]string{
		"strata.yml": credentialsConfig,
		"a/main.tf":  credentialsModule,
		"b/main.tf":  credentialsModule,
	})
	env := hermeticEnv(t)
	for k, v := range credentials {
		env = append(env, k+"="+v)
	}
	out, bucket := t.TempDir(), t.TempDir()
	report, summary := filepath.Join(out, "report.json"), filepath.Join(out, "summary.md")
	r := runBin(t, root, env, "apply", "-auto-approve", "--all", "--report", report, "--summary", summary, "--state", "file://"+bucket)
	if r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// What each process saw: only the credentials its step named.
	checkSeen(t, root, map[string]string{
		"hook-unasked.env":  "",
		"hook-asked.env":    "STRATA_OIDC_TOKEN",
		"a/run-unasked.env": "",
		"a/run-asked.env":   "GITHUB_TOKEN",
		"a/engine.env":      "GITLAB_TOKEN",
		"b/engine.env":      "",
	})

	// Each asked-for value was printed; none is shown or kept.
	written := map[string]string{"stdout": r.stdout, "stderr": r.stderr, "report.json": readFileT(t, report), "summary.md": readFileT(t, summary)}
	if !strings.Contains(r.stdout+r.stderr, "engine has ***") || !strings.Contains(written["report.json"], "run step has ***") || !strings.Contains(written["report.json"], "hook has ***") {
		t.Errorf("the printed credentials are not shown masked:\n%s%s\n%s", r.stdout, r.stderr, written["report.json"])
	}
	for _, dir := range []string{filepath.Join(root, ".strata"), bucket} {
		n := 0
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			written[p] = string(b)
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Errorf("nothing written under %s", dir)
		}
	}
	for what, text := range written {
		for k, v := range credentials {
			if strings.Contains(text, v) {
				t.Errorf("%s holds %s:\n%s", what, k, text)
			}
		}
	}
}

// checkSeen reads the environments written to files under root and checks
// that each holds the one credential its process asked for, with its
// value, and no other ("" for none).
func checkSeen(t *testing.T, root string, asked map[string]string) {
	t.Helper()
	for file, want := range asked {
		seen := map[string]string{}
		for _, line := range strings.Split(readFileT(t, filepath.Join(root, file)), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				if _, cred := credentials[k]; cred {
					seen[k] = v
				}
			}
		}
		for k, v := range seen {
			if k != want {
				t.Errorf("%s: %s reached a process that did not ask for it", file, k)
			} else if v != credentials[k] {
				t.Errorf("%s: %s = %q, want %q", file, k, v, credentials[k])
			}
		}
		if _, ok := seen[want]; want != "" && !ok {
			t.Errorf("%s: %s asked for but not in the environment", file, want)
		}
	}
}

// TestCredentialsPassedThrough: a command passed through to the engine in
// a unit's dir gets the credentials the unit's plan step names, and no
// other; in a unit whose plan step names none, it gets none.
func TestCredentialsPassedThrough(t *testing.T) {
	needTerraform(t)
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal(err)
	}
	// The engine on PATH writes the environment of a passed-through
	// command where it runs, then is terraform.
	bin := t.TempDir()
	wrapper := "#!/bin/sh\nif [ \"$1\" = state ]; then env > passthrough.env; fi\nexec " + tf + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "terraform"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	root := writeRepo(t, map[string]string{
		"strata.yml": `workflows:
  - tag_query: 'dir:a'
    plan:
      - type: init
      - type: plan
        env: {GITHUB_TOKEN: '${GITHUB_TOKEN}'}
`,
		"a/main.tf": "resource \"terraform_data\" \"x\" {}\n",
		"b/main.tf": "resource \"terraform_data\" \"x\" {}\n",
	})
	env := pathFirst(hermeticEnv(t), bin)
	for k, v := range credentials {
		env = append(env, k+"="+v)
	}
	for _, dir := range []string{"a", "b"} {
		// Nothing applied: terraform says there is no state, after it ran.
		if r := runBin(t, filepath.Join(root, dir), env, "state", "list"); !strings.Contains(r.stderr, "No state file was found") {
			t.Fatalf("state list in %s: exit %d\n%s%s", dir, r.code, r.stdout, r.stderr)
		}
	}
	checkSeen(t, root, map[string]string{"a/passthrough.env": "GITHUB_TOKEN", "b/passthrough.env": ""})
}
