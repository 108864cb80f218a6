package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-iac/strata/internal/testenv"
	"github.com/strata-iac/strata/report"
)

// timeModule requires the real hashicorp/time provider.
const timeModule = `terraform {
  required_providers {
    time = { source = "hashicorp/time", version = "0.13.1" }
  }
}
resource "time_static" "x" {}
`

// timeRepo is a repository of n units u0, u1, … each requiring the time
// provider.
func timeRepo(t *testing.T, n int) string {
	files := map[string]string{"strata.yml": "dirs:\n"}
	for i := range n {
		files["strata.yml"] += fmt.Sprintf("  u%d: {}\n", i)
		files[fmt.Sprintf("u%d/main.tf", i)] = timeModule
	}
	return testenv.WriteRepo(t, files)
}

// maxInitsAtOnce is the most init steps of a report that ran at once.
func maxInitsAtOnce(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, u := range rep.Units {
		for _, s := range u.Steps {
			if s.Name == report.StepInit {
				edges = append(edges, edge{s.StartedAt, 1}, edge{s.FinishedAt, -1})
			}
		}
	}
	// An init that ends as another starts did not overlap it.
	sort.Slice(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].delta < edges[j].delta
	})
	most, now := 0, 0
	for _, e := range edges {
		now += e.delta
		most = max(most, now)
	}
	return most
}

// TestInitsShareAWarmCache: with a real provider from a filesystem
// mirror, on a cold cache and no lock files the first init runs alone (it
// writes the cache) and the others take the lock file it wrote, as their
// providers are the same, and then only read the cache; on the warm cache
// every init only reads it, and they overlap. No lock file changes after
// the first init, and the cache holds the provider once.
func TestInitsShareAWarmCache(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	_, rc := testenv.FilesystemMirror(t, testenv.TimeProvider(t))
	const units = 8
	root := timeRepo(t, units)
	env := testenv.Env(t, "TF_CLI_CONFIG_FILE="+rc)
	out := t.TempDir()
	init := func(name string) string {
		t.Helper()
		path := filepath.Join(out, name+".json")
		if r := runBin(t, root, env, "init", "--all", "-j", "4", "--report", path); r.code != 0 {
			t.Fatalf("%s init: exit %d\n%s%s", name, r.code, r.stdout, r.stderr)
		}
		return path
	}
	cold := readReport(t, init("cold"))
	if lead := initsAlone(cold); len(lead) != 1 {
		t.Errorf("cold cache: %v inited with no other init at the same time, want one (the one that writes the cache)", lead)
	}
	locks := map[string]string{}
	for i := range units {
		data, err := os.ReadFile(filepath.Join(root, fmt.Sprintf("u%d", i), ".terraform.lock.hcl"))
		if err != nil {
			t.Fatal(err)
		}
		locks[fmt.Sprint(i)] = string(data)
	}
	if n := maxInitsAtOnce(t, init("warm")); n < 2 {
		t.Errorf("warm cache: %d init at once, want them to overlap", n)
	}
	for i := range units {
		data, _ := os.ReadFile(filepath.Join(root, fmt.Sprintf("u%d", i), ".terraform.lock.hcl"))
		if string(data) != locks[fmt.Sprint(i)] {
			t.Errorf("u%d's lock file changed:\n%s\nwas\n%s", i, data, locks[fmt.Sprint(i)])
		}
	}
	var cacheDir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "STRATA_CACHE_DIR="); ok {
			cacheDir = v
		}
	}
	pkg := filepath.Join(cacheDir, "plugins", "registry.terraform.io", "hashicorp", "time", "0.13.1", runtime.GOOS+"_"+runtime.GOARCH)
	if st, err := os.Stat(pkg); err != nil || !st.IsDir() {
		t.Errorf("the cache has no %s: %v", pkg, err)
	}
}

// initsAlone are the units of a report whose init overlapped no other
// unit's init and that took no other unit's lock file.
func initsAlone(rep *report.Report) []string {
	var out []string
	for _, u := range rep.Units {
		var in report.StepReport
		shared := false
		for _, s := range u.Steps {
			switch s.Name {
			case report.StepInit:
				in = s
			case report.StepLockShared:
				shared = true
			}
		}
		if shared || in.Name == "" {
			continue
		}
		alone := true
		for _, o := range rep.Units {
			for _, s := range o.Steps {
				if o.Name() != u.Name() && s.Name == report.StepInit && s.StartedAt.Before(in.FinishedAt) && in.StartedAt.Before(s.FinishedAt) {
					alone = false
				}
			}
		}
		if alone {
			out = append(out, u.Name())
		}
	}
	return out
}

// TestEachProviderDownloadedOnce: from an HTTPS network mirror on
// loopback (trusted through SSL_CERT_FILE), a repository of eight units
// that use the same provider is initialised on an empty plugin cache with
// one download, whether the lock files are there or not: the first init
// fills the cache alone; without lock files, the others take the one it
// wrote (their providers are the same, so the engine would select the
// same); the others then find the provider in the cache, as their lock
// files select it, and only read it. Committed lock files do not change.
func TestEachProviderDownloadedOnce(t *testing.T) {
	testenv.NeedTerraform(t)
	t.Parallel()
	mirror := testenv.StartNetworkMirror(t, testenv.TimeProvider(t))
	const units = 8
	root := timeRepo(t, units)
	// No lock files yet; the lock files, as a repository commits them.
	if r := runBin(t, root, testenv.Env(t, mirror.Env...), "init", "--all", "-j", "4"); r.code != 0 {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := mirror.Downloads(); n != 1 {
		t.Errorf("without lock files, the provider was downloaded %d times, want once", n)
	}
	locks := map[string]string{}
	for i := range units {
		dir := filepath.Join(root, fmt.Sprintf("u%d", i))
		data, err := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl"))
		if err != nil || !strings.Contains(string(data), "h1:") {
			t.Fatalf("u%d's lock file: %v\n%s", i, err, data)
		}
		locks[dir] = string(data)
		if first := locks[filepath.Join(root, "u0")]; string(data) != first {
			t.Errorf("u%d's lock file differs from u0's:\n%s\n%s", i, data, first)
		}
		if err := os.RemoveAll(filepath.Join(dir, ".terraform")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(filepath.Join(root, ".strata")); err != nil {
		t.Fatal(err)
	}
	// A new machine: an empty cache.
	before := mirror.Downloads()
	if r := runBin(t, root, testenv.Env(t, mirror.Env...), "init", "--all", "-j", "4"); r.code != 0 {
		t.Fatalf("init on an empty cache: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := mirror.Downloads() - before; n != 1 {
		t.Errorf("the provider was downloaded %d times, want once", n)
	}
	for dir, want := range locks {
		if data, _ := os.ReadFile(filepath.Join(dir, ".terraform.lock.hcl")); string(data) != want {
			t.Errorf("%s's lock file changed:\n%s\nwas\n%s", dir, data, want)
		}
	}
}

// syncBuffer is a buffer a process writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// processesIn are the processes whose working dir is under dir (Linux:
// /proc), as a provider's is in the unit its engine runs in, and whose
// program's path contains exe.
func processesIn(t *testing.T, dir, exe string) []string {
	t.Helper()
	dir, _ = filepath.EvalSymlinks(dir)
	cwds, _ := filepath.Glob("/proc/[0-9]*/cwd")
	var out []string
	for _, f := range cwds {
		cwd, err := os.Readlink(f)
		if err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+string(filepath.Separator))) {
			if prog, _ := os.Readlink(filepath.Join(filepath.Dir(f), "exe")); strings.Contains(prog, exe) {
				out = append(out, prog+" in "+cwd)
			}
		}
	}
	return out
}

// TestInterruptSlowProviderApply: an apply that waits in a real
// provider (time_sleep) is interrupted by SIGINT: the engine stops the
// provider and ends, strata exits 130 with the unit cancelled and what
// waits for it not applied, no provider process is left behind, no state
// lock either, and the next apply finishes the work.
func TestInterruptSlowProviderApply(t *testing.T) {
	testenv.NeedTerraform(t)
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	t.Parallel()
	_, rc := testenv.FilesystemMirror(t, testenv.TimeProvider(t))
	slow := func(d string) string {
		// The engine's output of a step is shown when the step ends: the
		// marker says when the sleep starts.
		return strings.Replace(timeModule, `resource "time_static" "x" {}`, `resource "terraform_data" "mark" {
  provisioner "local-exec" {
    command = "touch started"
  }
}
resource "time_sleep" "wait" {
  create_duration = "`+d+`"
  depends_on      = [terraform_data.mark]
}`, 1)
	}
	root := testenv.WriteRepo(t, map[string]string{
		"strata.yml":   "dirs:\n  slow: {tags: [slow]}\n  next: {tags: [next]}\nstacks:\n  names:\n    slow: {tag_query: slow}\n    next:\n      tag_query: next\n      rules: {apply_after: [slow]}\n",
		"slow/main.tf": slow("120s"),
		"next/main.tf": timeModule,
	})
	env := testenv.Env(t, "TF_CLI_CONFIG_FILE="+rc)
	rep := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(strataBin, "apply", "-auto-approve", "--report", rep)
	cmd.Dir, cmd.Env = root, env
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, err := os.Stat(filepath.Join(root, "slow", "started")); err != nil; _, err = os.Stat(filepath.Join(root, "slow", "started")) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the slow apply never started:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // into the sleep
	if ps := processesIn(t, root, "terraform-provider-time"); len(ps) == 0 {
		t.Errorf("no provider process of the repository while the apply waits")
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, out.String())
	}
	st := map[string]string{}
	for _, u := range readReport(t, rep).Units {
		st[u.Dir] = string(u.Status) + " (" + u.Reason + ")"
	}
	if !strings.HasPrefix(st["slow"], "cancelled (interrupted during apply") || strings.HasPrefix(st["next"], "applied") {
		t.Errorf("units after the interrupt: %v", st)
	}
	if ps := processesIn(t, root, ""); len(ps) != 0 {
		t.Errorf("processes left behind: %q", ps)
	}
	if _, err := os.Stat(filepath.Join(root, "slow", ".terraform.tfstate.lock.info")); err == nil {
		t.Error("a state lock was left behind")
	}
	testenv.WriteFile(t, filepath.Join(root, "slow", "main.tf"), slow("1s"))
	if r := runBin(t, root, env, "apply", "-auto-approve", "--report", rep); r.code != 0 {
		t.Fatalf("apply after the interrupt: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	state, err := os.ReadFile(filepath.Join(root, "slow", "terraform.tfstate"))
	if err != nil || !strings.Contains(string(state), `"type": "time_sleep"`) {
		t.Errorf("slow's state after the apply: %v\n%s", err, state)
	}
}
