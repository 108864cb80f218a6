//go:build ignore

// The provider benchmark: the inits of a repository of many root modules
// that use the same two real providers, from an empty plugin cache and
// from a warm one, with strata and side by side with the peers, all
// installing from one HTTPS network mirror on loopback that counts the
// packages it serves. See README.md here.
//
//	go run main.go [-modules 200] [-par 4] [-rounds 3] [-reps 20] [-plans 3] [-work DIR]
//
// The build tag keeps this program out of `go build ./...`, `go vet ./...`
// and `go test ./...`.
package main

import (
	"archive/zip"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/mod/sumdb/dirhash"
)

// provider is one provider the modules use: a real provider's Go module,
// built here, served under address.
type provider struct {
	module, version, address, local string
	binary                          string
}

// The two providers: hashicorp/time 0.13.1, and the time provider 0.14.2
// served as a second provider, strata-bench/clock (no other provider's
// Go module is on the module proxy at a version the engines still speak
// to); both need no network at init, plan or apply.
var providers = []*provider{
	{module: "github.com/hashicorp/terraform-provider-time", version: "0.13.1", address: "registry.terraform.io/hashicorp/time", local: "time"},
	{module: "github.com/hashicorp/terraform-provider-time", version: "0.14.2", address: "registry.terraform.io/strata-bench/clock", local: "clock"},
}

var platform = runtime.GOOS + "_" + runtime.GOARCH

func main() {
	modules := flag.Int("modules", 200, "root modules")
	par := flag.Int("par", 4, "parallelism of every tool")
	rounds := flag.Int("rounds", 3, "timed rounds, cold and warm, of every tool")
	reps := flag.Int("reps", 20, "cold inits of every tool in all (but Terragrunt's provider cache: the rounds), counting the rounds, checked for failed inits and changed lock files")
	work := flag.String("work", "", "work dir (default: a new temporary dir)")
	strata := flag.String("strata", "", "strata binary")
	terragrunt := flag.String("terragrunt", "", "terragrunt binary (skipped when empty)")
	terramate := flag.String("terramate", "", "terramate binary (skipped when empty)")
	plans := flag.Int("plans", 3, "timed rounds of a plan with changes of every module, after a warm init, by strata and xargs (0: none)")
	initRounds := flag.Bool("inits", true, "measure the inits (false: the plans only)")
	flag.Parse()
	if *work == "" {
		*work = must(os.MkdirTemp("", "strata-providers-"))
	}
	fmt.Println("work dir:", *work)
	b := &bench{work: *work, modules: *modules, par: *par}
	b.build()
	check(os.MkdirAll(filepath.Join(b.work, "logs"), 0o755))
	b.serve()
	b.generate()
	tools := []tool{
		{name: "strata", run: func(dir, cache string) []string {
			return []string{*strata, "init", "--all", "-j", fmt.Sprint(*par)}
		}, env: func(cache string) []string { return []string{"STRATA_CACHE_DIR=" + cache} }},
		{name: "xargs -P" + fmt.Sprint(*par), run: func(dir, cache string) []string {
			return []string{"sh", "-c", fmt.Sprintf("ls -d m*/ | xargs -P%d -I{} terraform -chdir={} init -input=false", *par)}
		}, env: pluginCache},
	}
	if *terramate != "" {
		tools = append(tools, tool{name: "terramate", run: func(dir, cache string) []string {
			return []string{*terramate, "run", "--parallel", fmt.Sprint(*par), "--", "terraform", "init", "-input=false"}
		}, env: pluginCache})
	}
	if *terragrunt != "" {
		tools = append(tools,
			tool{name: "terragrunt", run: func(dir, cache string) []string {
				return []string{*terragrunt, "run", "--all", "--parallelism", fmt.Sprint(*par), "--non-interactive", "--", "init", "-input=false"}
			}, env: pluginCache},
			// Safe by design, and the slowest: its timed rounds only.
			tool{name: "terragrunt --provider-cache", run: func(dir, cache string) []string {
				return []string{*terragrunt, "run", "--all", "--parallelism", fmt.Sprint(*par), "--non-interactive", "--provider-cache", "--provider-cache-dir", cache, "--", "init", "-input=false"}
			}, env: func(string) []string { return nil }, roundsOnly: true},
		)
	}
	if *initRounds {
		b.measure(tools, *rounds, *reps)
	}
	if *plans > 0 {
		b.measurePlans([]planTool{
			{tools[0], []string{*strata, "plan", "-j", fmt.Sprint(*par)}},
			{tools[1], []string{"sh", "-c", fmt.Sprintf("ls -d m*/ | xargs -P%d -I{} terraform -chdir={} plan -input=false -out=tfplan", *par)}},
		}, *plans)
	}
}

// planTool is a tool's init and its plan of every module.
type planTool struct {
	tool
	plan []string
}

// measurePlans plans every module, with changes (each creates its
// time_static resources), after a warm init, and counts the providers'
// launches: each engine start that reads a plan's values launches every
// provider the plan uses.
func (b *bench) measurePlans(tools []planTool, rounds int) {
	var rows []string
	for _, t := range tools {
		var walls []float64
		var launches int64
		for i := range rounds {
			b.once(t.tool, i, true)
			dir := filepath.Join(b.work, "run")
			cmd := exec.Command(t.plan[0], t.plan[1:]...)
			log := must(os.Create(filepath.Join(b.work, "logs", fmt.Sprintf("%s-plan-%d.log", strings.ReplaceAll(t.name, " ", "_"), i))))
			cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, b.env(t.env(filepath.Join(b.work, "cache", strings.ReplaceAll(t.name, " ", "_")))), log, log
			before := b.launches()
			began := time.Now()
			err := cmd.Run()
			wall := time.Since(began)
			log.Close()
			if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == 2 && t.name == "strata") {
				fail("%s plan: %v (see its log)", t.name, err)
			}
			launches = b.launches() - before
			walls = append(walls, wall.Seconds())
			fmt.Printf("%-28s plan  %3d  %6.2fs  provider launches %d\n", t.name, i, wall.Seconds(), launches)
		}
		rows = append(rows, fmt.Sprintf("| %s | %.2f s | %.1f |", t.name, median(walls), float64(launches)/float64(b.modules*len(providers))))
	}
	fmt.Printf("\n%d modules × %d providers, a plan with changes of every module at parallelism %d, %d timed rounds\n\n", b.modules, len(providers), b.par, rounds)
	fmt.Println("| tool | plan (median) | launches of each provider per module |")
	fmt.Println("|---|---|---|")
	for _, r := range rows {
		fmt.Println(r)
	}
}

// launches is how many times the providers have been started so far.
func (b *bench) launches() int64 {
	data, err := os.ReadFile(filepath.Join(b.work, "launches.log"))
	if err != nil {
		return 0
	}
	return int64(strings.Count(string(data), "\n"))
}

// tool is one way to init every module of the tree.
type tool struct {
	name string
	run  func(dir, cache string) []string
	env  func(cache string) []string
	// roundsOnly: no cold runs beyond the timed rounds.
	roundsOnly bool
}

func pluginCache(cache string) []string { return []string{"TF_PLUGIN_CACHE_DIR=" + cache} }

type bench struct {
	work     string
	modules  int
	par      int
	mirror   string // the mirror's URL
	certFile string
	served   atomic.Int64
	lock     []byte // the lock file every module commits
}

// build builds each provider from its Go module, as the tests do.
func (b *bench) build() {
	for _, p := range providers {
		p.binary = filepath.Join(b.work, "providers", p.local+"_"+p.version, "terraform-provider-"+p.local)
		if _, err := os.Stat(p.binary); err == nil {
			continue
		}
		out := must(exec.Command("go", "mod", "download", "-json", p.module+"@v"+p.version).Output())
		var mod struct{ Dir string }
		check(json.Unmarshal(out, &mod))
		cmd := exec.Command("go", "build", "-trimpath", "-o", p.binary, ".")
		cmd.Dir, cmd.Env = mod.Dir, append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			fail("building %s: %v\n%s", p.module, err, out)
		}
	}
}

// serve starts the network mirror: index.json, VERSION.json and the
// packages, counting the packages served.
func (b *bench) serve() {
	dir := filepath.Join(b.work, "mirror")
	check(os.MkdirAll(dir, 0o755))
	files := map[string][]byte{}
	for _, p := range providers {
		typ := p.address[strings.LastIndex(p.address, "/")+1:]
		zipName := fmt.Sprintf("terraform-provider-%s_%s_%s.zip", typ, p.version, platform)
		zipPath := filepath.Join(dir, zipName)
		// The package holds a script that notes each launch of the
		// provider and runs the binary built above.
		wrapper := p.binary + ".counted"
		check(os.WriteFile(wrapper, []byte(fmt.Sprintf("#!/bin/sh\necho %s >> %s\nexec %s \"$@\"\n", typ, filepath.Join(b.work, "launches.log"), p.binary)), 0o755))
		writeZip(zipPath, wrapper, "terraform-provider-"+typ+"_v"+p.version)
		hash := must(dirhash.HashZip(zipPath, dirhash.Hash1))
		files[p.address+"/index.json"] = must(json.Marshal(map[string]any{"versions": map[string]any{p.version: map[string]any{}}}))
		files[p.address+"/"+p.version+".json"] = must(json.Marshal(map[string]any{"archives": map[string]any{platform: map[string]any{"url": zipName, "hashes": []string{hash}}}}))
		files[p.address+"/"+zipName] = must(os.ReadFile(zipPath))
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.HasSuffix(r.URL.Path, ".json") {
			w.Header().Set("Content-Type", "application/json")
		}
		if strings.HasSuffix(r.URL.Path, ".zip") && r.Method == http.MethodGet {
			b.served.Add(1)
		}
		w.Write(data)
	}))
	srv.TLS = &tls.Config{}
	srv.StartTLS()
	b.mirror = srv.URL + "/"
	b.certFile = filepath.Join(b.work, "ca.pem")
	check(os.WriteFile(b.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644))
	check(os.WriteFile(filepath.Join(b.work, "terraformrc"), []byte(fmt.Sprintf("provider_installation {\n  network_mirror {\n    url = %q\n  }\n}\n", b.mirror)), 0o644))
}

// generate writes the tree: the modules, each tool's config, and the lock
// file every module commits (made by terraform init in one module).
func (b *bench) generate() {
	tree := filepath.Join(b.work, "tree")
	check(os.RemoveAll(tree))
	var req, res strings.Builder
	for _, p := range providers {
		fmt.Fprintf(&req, "    %s = { source = %q, version = %q }\n", p.local, strings.TrimPrefix(p.address, "registry.terraform.io/"), p.version)
		fmt.Fprintf(&res, "resource \"time_static\" %q {\n  provider = %s\n}\n", p.local, p.local)
	}
	main := "terraform {\n  required_providers {\n" + req.String() + "  }\n}\n" + res.String()
	write(filepath.Join(tree, "strata.yml"), "dirs:\n  \"m*\": {}\n")
	write(filepath.Join(tree, "terramate.tm.hcl"), "terramate {\n  required_version = \">= 0.1\"\n  config {\n    disable_safeguards = [\"all\"]\n  }\n}\n")
	write(filepath.Join(tree, "root.hcl"), "")
	for i := range b.modules {
		m := filepath.Join(tree, fmt.Sprintf("m%03d", i))
		write(filepath.Join(m, "main.tf"), main)
		write(filepath.Join(m, "stack.tm.hcl"), fmt.Sprintf("stack {\n  name = \"m%03d\"\n  id = \"m%03d\"\n}\n", i, i))
		write(filepath.Join(m, "terragrunt.hcl"), "")
	}
	scratch := filepath.Join(b.work, "scratch")
	check(os.RemoveAll(scratch))
	write(filepath.Join(scratch, "main.tf"), main)
	b.runQuiet(scratch, []string{"terraform", "init", "-input=false"}, nil)
	b.lock = must(os.ReadFile(filepath.Join(scratch, ".terraform.lock.hcl")))
	for i := range b.modules {
		write(filepath.Join(tree, fmt.Sprintf("m%03d", i), ".terraform.lock.hcl"), string(b.lock))
	}
	fmt.Printf("%d root modules, each using %d providers; lock files committed\n", b.modules, len(providers))
}

// env is every tool's environment: nothing from the caller's but PATH,
// an empty home, the mirror's CLI config and certificate, no update
// checks.
func (b *bench) env(extra []string) []string {
	home := filepath.Join(b.work, "home")
	check(os.MkdirAll(home, 0o755))
	tm := filepath.Join(home, "terramaterc")
	write(tm, "disable_checkpoint = true\n")
	return append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"TF_CLI_CONFIG_FILE=" + filepath.Join(b.work, "terraformrc"), "SSL_CERT_FILE=" + b.certFile,
		"CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TM_CLI_CONFIG_FILE=" + tm, "TG_TF_PATH=terraform",
	}, extra...)
}

func (b *bench) runQuiet(dir string, argv, extra []string) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, b.env(extra)
	if out, err := cmd.CombinedOutput(); err != nil {
		fail("%s in %s: %v\n%s", strings.Join(argv, " "), dir, err, out)
	}
}

// result is one init of the whole tree.
type result struct {
	tool, kind string
	wall       time.Duration
	served     int64
	failed     bool // the tool failed, or a module has no providers
	changed    int  // modules whose lock file is not the committed one
}

// once inits a fresh copy of the tree with the tool: cold, on an empty
// cache (removed first), or warm, on the cache the last run left.
func (b *bench) once(t tool, i int, cold bool) result {
	kind := "warm"
	cache := filepath.Join(b.work, "cache", strings.ReplaceAll(t.name, " ", "_"))
	if cold {
		kind = "cold"
		check(os.RemoveAll(cache))
	}
	check(os.MkdirAll(cache, 0o755))
	dir := filepath.Join(b.work, "run")
	check(os.RemoveAll(dir))
	check(exec.Command("cp", "-a", filepath.Join(b.work, "tree"), dir).Run())
	argv := t.run(dir, cache)
	cmd := exec.Command(argv[0], argv[1:]...)
	log := must(os.Create(filepath.Join(b.work, "logs", fmt.Sprintf("%s-%s-%d.log", strings.ReplaceAll(t.name, " ", "_"), kind, i))))
	defer log.Close()
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, b.env(t.env(cache)), log, log
	before := b.served.Load()
	began := time.Now()
	err := cmd.Run()
	r := result{tool: t.name, kind: kind, wall: time.Since(began), served: b.served.Load() - before, failed: err != nil}
	for m := range b.modules {
		mod := filepath.Join(dir, fmt.Sprintf("m%03d", m))
		if data, err := os.ReadFile(filepath.Join(mod, ".terraform.lock.hcl")); err != nil || string(data) != string(b.lock) {
			r.changed++
		}
		if !initialised(mod) {
			r.failed = true
		}
	}
	return r
}

// initialised says whether a module's init installed both providers: in
// a data dir anywhere under it (strata's, terraform's, or that of
// Terragrunt's copy of the module); a provider dir may be a link into the
// plugin cache.
func initialised(mod string) bool {
	ok := false
	filepath.WalkDir(mod, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() != "providers" || ok {
			return nil
		}
		all := true
		for _, p := range providers {
			if _, err := os.Stat(filepath.Join(path, filepath.FromSlash(p.address), p.version, platform)); err != nil {
				all = false
			}
		}
		ok = all
		return nil
	})
	return ok
}

// measure runs the rounds, interleaved (cold then warm for each tool),
// then cold runs up to reps for the safety check, and prints the table.
func (b *bench) measure(tools []tool, rounds, reps int) {
	var all []result
	for i := range max(rounds, reps) {
		for _, t := range tools {
			if t.roundsOnly && i >= rounds {
				continue
			}
			r := b.once(t, i, true)
			all = append(all, r)
			fmt.Printf("%-28s cold  %3d  %6.2fs  served %3d  failed %-5v  lock files changed %d\n", r.tool, i, r.wall.Seconds(), r.served, r.failed, r.changed)
			if i < rounds {
				r := b.once(t, i, false)
				all = append(all, r)
				fmt.Printf("%-28s warm  %3d  %6.2fs  served %3d  failed %-5v  lock files changed %d\n", r.tool, i, r.wall.Seconds(), r.served, r.failed, r.changed)
			}
		}
	}
	fmt.Printf("\n%d modules × %d providers, parallelism %d, %d timed rounds, up to %d cold runs each\n\n", b.modules, len(providers), b.par, rounds, max(rounds, reps))
	fmt.Println("| tool | cold init (median) | warm init (median) | packages served per cold run | cold runs failed | cold runs that changed lock files |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, t := range tools {
		var cold, warm []float64
		var served []int64
		failed, changed, n := 0, 0, 0
		for _, r := range all {
			if r.tool != t.name {
				continue
			}
			if r.kind == "warm" {
				warm = append(warm, r.wall.Seconds())
				continue
			}
			n++
			if len(cold) < rounds {
				cold = append(cold, r.wall.Seconds())
			}
			served = append(served, r.served)
			if r.failed {
				failed++
			}
			if r.changed > 0 {
				changed++
			}
		}
		slices.Sort(served)
		fmt.Printf("| %s | %.2f s | %.2f s | %d–%d | %d of %d | %d of %d |\n", t.name, median(cold), median(warm), served[0], served[len(served)-1], failed, n, changed, n)
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func writeZip(path, binary, name string) {
	f := must(os.Create(path))
	zw := zip.NewWriter(f)
	h := &zip.FileHeader{Name: name, Method: zip.Deflate}
	h.SetMode(0o755)
	w := must(zw.CreateHeader(h))
	src := must(os.Open(binary))
	_, err := io.Copy(w, src)
	check(err)
	src.Close()
	check(zw.Close())
	check(f.Close())
}

func write(path, text string) {
	check(os.MkdirAll(filepath.Dir(path), 0o755))
	check(os.WriteFile(path, []byte(text), 0o644))
}

func must[T any](v T, err error) T {
	check(err)
	return v
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "providers bench: "+format+"\n", args...)
	os.Exit(1)
}
