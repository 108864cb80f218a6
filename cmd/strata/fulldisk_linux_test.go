package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// TestFullDisk: a repository on a small file system (tmpfs, mounted as
// root) is applied, changed, then its disk filled to a few KiB. The plan
// fails for every unit, each at another step (one cannot write its state
// lock; terraform writes another's saved plan truncated without an error,
// and show cannot read it), and each unit's reason says the disk is full
// before the engine's own words.
func TestFullDisk(t *testing.T) {
	needTerraform(t)
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system needs root")
	}
	disk := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", disk).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", disk).Run() })
	root := filepath.Join(disk, "repo")
	unit := func(input string) string {
		return "resource \"terraform_data\" \"x\" {\n  input = \"" + input + "\"\n}\n"
	}
	testenv.WriteFile(t, filepath.Join(root, "strata.yml"), "stacks:\n  names:\n    all: {tag_query: ''}\n")
	for _, dir := range []string{"a", "b"} {
		testenv.WriteFile(t, filepath.Join(root, dir, "main.tf"), unit(dir))
	}
	env := testenv.Env(t)
	if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, dir := range []string{"a", "b"} {
		testenv.WriteFile(t, filepath.Join(root, dir, "main.tf"), unit(dir+"-v2"))
	}
	fill(t, disk, 4<<10)

	reportFile := filepath.Join(t.TempDir(), "report.json")
	r := runBin(t, root, env, "plan", "--report", reportFile)
	if r.code != 1 {
		t.Fatalf("plan on a full disk: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	rep := readReport(t, reportFile)
	if len(rep.Units) != 2 {
		t.Fatalf("%d units in the report, want 2", len(rep.Units))
	}
	for _, u := range rep.Units {
		t.Logf("%s: %s", u.Name(), u.Reason)
		if u.Status != report.StatusFailed || !strings.Contains(u.Reason, " failed: the disk is full (") || !strings.Contains(u.Reason, " free at "+disk) {
			t.Errorf("%s: %s (%s), want failed saying the disk is full", u.Name(), u.Status, u.Reason)
		}
	}
}

// fill writes a file on dir's file system that leaves it about room bytes
// free.
func fill(t *testing.T, dir string, room int64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	n := int64(st.Bavail)*int64(st.Bsize) - room
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
}
