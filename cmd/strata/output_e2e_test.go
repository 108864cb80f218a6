package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestUnitFinishedLines: every unit of a run gets one line as it ends,
// with its status and the run's count, off a terminal too.
func TestUnitFinishedLines(t *testing.T) {
	needTerraform(t)
	t.Parallel()
	root := writeRepo(t, map[string]string{
		"strata.yml": "dirs:\n  a: {tags: [a]}\n  b: {tags: [b]}\n  c: {tags: [c]}\nstacks:\n  names:\n    a: {tag_query: a}\n    b: {tag_query: b}\n    c:\n      tag_query: c\n      rules: {plan_after: [a]}\n",
		"a/main.tf":  "resource \"terraform_data\" \"x\" {}\n",
		"b/main.tf":  "resource \"terraform_data\" \"x\" {}\n",
		"c/main.tf":  "resource \"terraform_data\" \"x\" {}\n",
	})
	r := runBin(t, root, hermeticEnv(t), "plan")
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	done := regexp.MustCompile(`(?m)^\[(\w)@default\] (planned|blocked)( in [0-9.]+m?s)?(: [^\n]*?)? \((\d)/3 done\)$`)
	found := done.FindAllStringSubmatch(r.stdout, -1)
	if len(found) != 3 {
		t.Fatalf("%d finished lines; want 3:\n%s", len(found), r.stdout)
	}
	for i, m := range found {
		if m[5] != fmt.Sprint(i+1) {
			t.Errorf("line %d counts %s/3 done", i+1, m[5])
		}
		if (m[1] == "c") != (m[2] == "blocked") {
			t.Errorf("%s ended %s", m[1], m[2])
		}
	}
}

// TestOutputStream: with --output stream, a unit's lines reach the
// console while its apply still runs; by default they come as one block
// once the step ends. The apply waits, by a file, for the test to have
// seen its first line, and fails when it never is.
func TestOutputStream(t *testing.T) {
	needTerraform(t)
	t.Parallel()
	root := writeRepo(t, map[string]string{
		"strata.yml": "dirs:\n  slow: {tags: [slow]}\nstacks:\n  names:\n    slow: {tag_query: slow}\n",
		"slow/main.tf": `resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "echo first-line; i=0; while [ ! -f ../go ]; do sleep 0.1; i=$((i+1)); if [ $i -gt 300 ]; then echo first-line-never-seen; exit 1; fi; done; echo second-line"
  }
}
`,
	})
	cmd := exec.Command(strataBin, "apply", "-auto-approve", "--output", "stream")
	cmd.Dir, cmd.Env = root, hermeticEnv(t)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen []string
	sc := bufio.NewScanner(stdout)
	streamed := false
	for sc.Scan() {
		line := sc.Text()
		seen = append(seen, line)
		if strings.HasPrefix(line, "[slow@default] ") && strings.HasSuffix(line, "first-line") && !streamed {
			streamed = true
			if strings.Contains(strings.Join(seen, "\n"), "second-line\n") {
				t.Error("the second line came before the first was seen")
			}
			if err := os.WriteFile(filepath.Join(root, "go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("apply: %v\n%s\n%s", err, strings.Join(seen, "\n"), stderr.String())
	}
	if !streamed {
		t.Fatalf("no streamed first line:\n%s", strings.Join(seen, "\n"))
	}
	if !strings.Contains(strings.Join(seen, "\n")+"\n", "second-line\n") {
		t.Errorf("the apply did not go on after the first line was seen:\n%s", strings.Join(seen, "\n"))
	}
}
