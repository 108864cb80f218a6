package contenthash

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const fingerprintMainTF = `terraform {
  required_version = ">= 1.5"
  backend "s3" {
    bucket = "state"
    key    = "app.tfstate"
  }
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.0"
    }
  }
}

module "net" {
  source = "../modules/net"
  cidr   = var.cidr
}

module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "5.1.0"
  name    = "main"
}

resource "aws_s3_bucket" "b" {
  bucket = "example"
}
`

const fingerprintJSON = `{
  "terraform": {"required_providers": {"random": {"source": "hashicorp/random", "version": "3.6.0"}}},
  "module": {"dns": {"source": "example/dns/aws", "version": "1.0.0", "zone": "a"}},
  "resource": {"random_id": {"x": {"byte_length": 4}}}
}`

const fingerprintModuleTF = `terraform {
  required_providers {
    null = { source = "hashicorp/null" }
  }
}

module "subnets" {
  source  = "hashicorp/subnets/cidr"
  version = "1.0.0"
}

variable "cidr" {}

resource "null_resource" "x" {}
`

func fingerprintRepo(t testing.TB) (string, FingerprintInput) {
	t.Helper()
	root := t.TempDir()
	writeDigestTree(t, root, map[string]string{
		"app/main.tf":             fingerprintMainTF,
		"app/variables.tf":        `variable "cidr" { default = "10.0.0.0/16" }`,
		"app/outputs.tf":          `output "id" { value = aws_s3_bucket.b.id }`,
		"app/extra.tf.json":       fingerprintJSON,
		"app/.terraform.lock.hcl": "provider \"registry.terraform.io/hashicorp/aws\" {\n  version = \"5.31.0\"\n}\n",
		"modules/net/main.tf":     fingerprintModuleTF,
	})
	return root, FingerprintInput{
		Root:          root,
		Dir:           "app",
		ModuleDirs:    []string{"modules/net"},
		Engine:        "terraform",
		EngineVersion: "1.9.8",
		InitArgs:      []string{"-backend-config=bucket=state", "-upgrade=false"},
	}
}

func mustFingerprint(t testing.TB, in FingerprintInput) string {
	t.Helper()
	fp, err := InitFingerprint(in)
	if err != nil {
		t.Fatalf("InitFingerprint: %v", err)
	}
	return fp
}

// editFile replaces old by new in a file, failing when old is not there.
func editFile(t *testing.T, root, rel, old, new string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not contain %q", rel, old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestInitFingerprintStable(t *testing.T) {
	_, in := fingerprintRepo(t)
	a, b := mustFingerprint(t, in), mustFingerprint(t, in)
	if a != b {
		t.Fatalf("same inputs gave %s and %s", a, b)
	}
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(a) {
		t.Fatalf("fingerprint %q is not sha256:<hex>", a)
	}
}

// fingerprintChanges are changes to fingerprintRepo and its input, and
// whether each changes the init fingerprint.
var fingerprintChanges = []struct {
	name    string
	change  func(t *testing.T, root string, in *FingerprintInput)
	changes bool
}{
	{"resource", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "app/main.tf", `bucket = "example"`, `bucket = "other"`)
	}, false},
	{"output", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "app/outputs.tf", `aws_s3_bucket.b.id`, `aws_s3_bucket.b.arn`)
	}, false},
	{"variable", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "app/variables.tf", `10.0.0.0/16`, `10.1.0.0/16`)
	}, false},
	{"module input other than source and version", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "app/main.tf", `name    = "main"`, `name    = "other"`)
	}, false},
	{"new file of resources", func(t *testing.T, root string, in *FingerprintInput) {
		writeDigestTree(t, root, map[string]string{"app/more.tf": `resource "null_resource" "y" {}`})
	}, false},
	{"resource in a local module", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "modules/net/main.tf", `"null_resource" "x"`, `"null_resource" "z"`)
	}, false},
	{"JSON resource", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "app/extra.tf.json", `"byte_length": 4`, `"byte_length": 8`)
	}, false},
	{"JSON terraform reformatted", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "app/extra.tf.json",
			`{"required_providers": {"random": {"source": "hashicorp/random", "version": "3.6.0"}}}`,
			`{ "required_providers": { "random": { "version": "3.6.0",  "source": "hashicorp/random" } } }`)
	}, false},
	{"files the engine does not load", func(t *testing.T, root string, in *FingerprintInput) {
		writeDigestTree(t, root, map[string]string{
			"app/README.md":        "# app",
			"app/sub/x.tf":         `terraform { backend "local" {} }`,
			"app/.hidden.tf":       `terraform { backend "local" {} }`,
			"app/main.tf~":         `terraform { backend "local" {} }`,
			"app/terraform.tfvars": `cidr = "10.2.0.0/16"`,
		})
	}, false},

	{"backend", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "app/main.tf", `bucket = "state"`, `bucket = "state2"`)
	}, true},
	{"required_providers", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "app/main.tf", `version = "~> 5.0"`, `version = "~> 5.1"`)
	}, true},
	{"module source", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "app/main.tf", `"../modules/net"`, `"../modules/net2"`)
	}, true},
	{"module version", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "app/main.tf", `"5.1.0"`, `"5.2.0"`)
	}, true},
	{"module added", func(t *testing.T, root string, in *FingerprintInput) {
		writeDigestTree(t, root, map[string]string{"app/more.tf": `module "extra" { source = "../modules/net" }`})
	}, true},
	{"module version in a local module", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "modules/net/main.tf", `"1.0.0"`, `"1.1.0"`)
	}, true},
	{"module source in a local module", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "modules/net/main.tf", `"hashicorp/subnets/cidr"`, `"hashicorp/subnets/other"`)
	}, true},
	{"required_providers in a local module", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "modules/net/main.tf", `"hashicorp/null"`, `"hashicorp/null", version = "3.2.0"`)
	}, true},
	{"JSON terraform", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "app/extra.tf.json", `"3.6.0"`, `"3.7.0"`)
	}, true},
	{"JSON module version", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "app/extra.tf.json", `"1.0.0"`, `"1.0.1"`)
	}, true},
	{"lock file", func(t *testing.T, root string, in *FingerprintInput) {
		editFile(t, root, "app/.terraform.lock.hcl", `5.31.0`, `5.32.0`)
	}, true},
	{"lock file removed", func(t *testing.T, root string, in *FingerprintInput) {
		removeDigestFile(t, root, "app/.terraform.lock.hcl")
	}, true},
	{"engine", func(t *testing.T, root string, in *FingerprintInput) { in.Engine = "tofu" }, true},
	{"engine version", func(t *testing.T, root string, in *FingerprintInput) { in.EngineVersion = "1.10.0" }, true},
	{"init arg", func(t *testing.T, root string, in *FingerprintInput) {
		in.InitArgs = []string{"-backend-config=bucket=other", "-upgrade=false"}
	}, true},
	{"init arg added", func(t *testing.T, root string, in *FingerprintInput) {
		in.InitArgs = append(in.InitArgs, "-reconfigure")
	}, true},
	{"file that does not parse", func(t *testing.T, root string, in *FingerprintInput) {
		writeDigestTree(t, root, map[string]string{"app/broken.tf": `resource "x" "y" {`})
	}, true},
}

func TestInitFingerprintChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range fingerprintChanges {
		t.Run(tc.name, func(t *testing.T) {
			root, in := fingerprintRepo(t)
			before := mustFingerprint(t, in)
			tc.change(t, root, &in)
			after := mustFingerprint(t, in)
			if changed := before != after; changed != tc.changes {
				t.Errorf("fingerprint changed = %t, want %t", changed, tc.changes)
			}
		})
	}
}

func TestInitFingerprintUnparsedFile(t *testing.T) {
	root, in := fingerprintRepo(t)
	writeDigestTree(t, root, map[string]string{"app/broken.tf": `resource "x" "y" {`, "app/broken.tf.json": `{"terraform": `})
	before := mustFingerprint(t, in)
	// Any edit of a file that does not parse counts, since its blocks
	// cannot be told apart.
	editFile(t, root, "app/broken.tf", `"y"`, `"z"`)
	if mustFingerprint(t, in) == before {
		t.Error("editing a file that does not parse left the fingerprint alone")
	}
}

func TestInitFingerprintNoLockFile(t *testing.T) {
	root := t.TempDir()
	writeDigestTree(t, root, map[string]string{"main.tf": `terraform {}`})
	in := FingerprintInput{Root: root, Dir: ".", Engine: "tofu", EngineVersion: "1.8.0"}
	before := mustFingerprint(t, in)
	writeDigestTree(t, root, map[string]string{".terraform.lock.hcl": "# empty\n"})
	if mustFingerprint(t, in) == before {
		t.Error("adding a lock file left the fingerprint alone")
	}
}

func TestInitFingerprintErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(in *FingerprintInput)
		want   string
	}{
		{"missing module dir", func(in *FingerprintInput) { in.ModuleDirs = []string{"modules/gone"} }, "module dir modules/gone does not exist"},
		{"missing unit dir", func(in *FingerprintInput) { in.Dir = "nowhere" }, "unit dir nowhere does not exist"},
		{"module dir outside the repo", func(in *FingerprintInput) { in.ModuleDirs = []string{"../x"} }, "module dir ../x is outside the repository"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, in := fingerprintRepo(t)
			tc.change(&in)
			_, err := InitFingerprint(in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
