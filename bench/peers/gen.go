//go:build ignore

// gen writes one 40-unit DAG three times, once in the configuration format
// of each tool: strata (strata.yml), Terramate (stack.tm.hcl files) and
// Terragrunt (terragrunt.hcl files). The units, their sleeps and their edges
// are those of makespanUnits in runner/bench_test.go (same seed, same draw
// order), so the three trees differ only in how the order is written.
//
//	go run gen.go -out DIR [-wide 200]
//
// writes DIR/strata, DIR/terramate and DIR/terragrunt, and prints the
// critical path and the total work of the DAG (sleeps only). It also
// writes the wide repository, -wide independent units (0: none), four
// times: DIR/wide/strata, DIR/wide/terramate, DIR/wide/terragrunt and
// DIR/wide/xargs (the modules alone, and dirs.txt listing them one a
// line, for xargs).
//
// The build tag keeps this program out of `go build ./...`, `go vet ./...`
// and `go test ./...`.
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

type unit struct {
	dir   string
	stack string
	sleep time.Duration
	after []string // every unit this one runs after, strata's rules expanded
}

// units draws the DAG of makespanUnits: 40 units in four stacks.
//
//   - base: 8 independent units;
//   - chain: 10 units, each after the one before;
//   - mid: 12 units, all after every base unit (strata: plan_after base),
//     odd ones also after the even one before;
//   - top: 10 units, all after every mid unit (strata: plan_after mid), the
//     first three a chain.
//
// sameStack holds the one edge inside a stack (strata's depends_on); after
// holds every edge, the stack rules expanded to unit edges.
func units() ([]unit, map[string]string) {
	rng := rand.New(rand.NewPCG(4, 40))
	sleep := func() time.Duration { return time.Duration(10+rng.IntN(91)) * 10 * time.Millisecond }
	sameStack := map[string]string{}
	var us []unit
	var base, mid []string
	for i := range 8 {
		d := fmt.Sprintf("base/b%02d", i)
		us = append(us, unit{dir: d, stack: "base", sleep: sleep()})
		base = append(base, d)
	}
	for i := range 10 {
		d := fmt.Sprintf("chain/c%02d", i)
		if i > 0 {
			sameStack[d] = fmt.Sprintf("chain/c%02d", i-1)
		}
		us = append(us, unit{dir: d, stack: "chain", sleep: sleep()})
	}
	for i := range 12 {
		d := fmt.Sprintf("mid/m%02d", i)
		if i%2 == 1 {
			sameStack[d] = fmt.Sprintf("mid/m%02d", i-1)
		}
		us = append(us, unit{dir: d, stack: "mid", sleep: sleep()})
		mid = append(mid, d)
	}
	for i := range 10 {
		d := fmt.Sprintf("top/t%02d", i)
		if i > 0 && i < 3 {
			sameStack[d] = fmt.Sprintf("top/t%02d", i-1)
		}
		us = append(us, unit{dir: d, stack: "top", sleep: sleep()})
	}
	for i := range us {
		u := &us[i]
		switch u.stack {
		case "mid":
			u.after = append(u.after, base...)
		case "top":
			u.after = append(u.after, mid...)
		}
		if d, ok := sameStack[u.dir]; ok {
			u.after = append(u.after, d)
		}
		sort.Strings(u.after)
	}
	return us, sameStack
}

const mainTF = `resource "terraform_data" "work" {
  input = %q

  provisioner "local-exec" {
    command = "sleep %s"
  }
}
`

func write(root, name, content string) {
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		log.Fatal(err)
	}
}

func modules(root string, us []unit) {
	for _, u := range us {
		write(root, u.dir+"/main.tf", fmt.Sprintf(mainTF, u.dir, fmt.Sprintf("%.2f", u.sleep.Seconds())))
	}
}

// strata: the configuration of makespanFiles, stack rules and depends_on.
func strata(root string, us []unit, sameStack map[string]string) {
	modules(root, us)
	var b strings.Builder
	b.WriteString("version: \"1\"\ndirs:\n")
	for _, u := range us {
		fmt.Fprintf(&b, "  %s:\n    tags: [%s]\n", u.dir, u.stack)
		if d, ok := sameStack[u.dir]; ok {
			fmt.Fprintf(&b, "    when_modified:\n      depends_on: 'dir:%s'\n", d)
		}
	}
	b.WriteString(`stacks:
  names:
    base: {tag_query: base}
    chain: {tag_query: chain}
    mid:
      tag_query: mid
      rules: {plan_after: [base]}
    top:
      tag_query: top
      rules: {plan_after: [mid]}
`)
	write(root, "strata.yml", b.String())
}

func quoted(ss []string, f func(string) string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", f(s))
	}
	return strings.Join(q, ", ")
}

// terramate: one stack per unit, ordered by after = [absolute stack paths].
// The root config (required_version makes its dir the project root outside
// git) disables the safeguards (the trees are not git repositories, and
// terraform writes state files into them); run.sh turns
// off the update checkpoint in Terramate's CLI configuration.
func terramate(root string, us []unit) {
	modules(root, us)
	write(root, "terramate.tm.hcl", `terramate {
  required_version = ">= 0.17.0"

  config {
    disable_safeguards = ["all"]
  }
}
`)
	for _, u := range us {
		var b strings.Builder
		fmt.Fprintf(&b, "stack {\n  name = %q\n  tags = [%q]\n", u.dir, u.stack)
		if len(u.after) > 0 {
			fmt.Fprintf(&b, "  after = [%s]\n", quoted(u.after, func(d string) string { return "/" + d }))
		}
		b.WriteString("}\n")
		write(root, u.dir+"/stack.tm.hcl", b.String())
	}
}

// terragrunt: one unit per dir, ordered by dependencies { paths = [...] }
// relative to the unit. No terraform { source }, so terragrunt runs
// terraform in the unit's own dir, as the other two do.
func terragrunt(root string, us []unit) {
	modules(root, us)
	for _, u := range us {
		content := "# a unit with no dependencies\n"
		if len(u.after) > 0 {
			rel := func(d string) string {
				r, err := filepath.Rel(u.dir, d)
				if err != nil {
					log.Fatal(err)
				}
				return path.Clean(filepath.ToSlash(r))
			}
			content = fmt.Sprintf("dependencies {\n  paths = [%s]\n}\n", quoted(u.after, rel))
		}
		write(root, u.dir+"/terragrunt.hcl", content)
	}
}

// wideTF is a unit of the wide repository: one terraform_data whose input
// is the variable trigger, so TF_VAR_trigger set to anything but "0"
// gives a plan with one change after an apply without it.
const wideTF = `variable "trigger" {
  type    = string
  default = "0"
}

resource "terraform_data" "work" {
  input = var.trigger
}
`

// wide writes n independent units u/u000… once per tool: no order between
// them, so each tool runs them as fast as its parallelism lets it.
func wide(root string, n int) {
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = fmt.Sprintf("u/u%03d", i)
	}
	for _, tool := range []string{"strata", "terramate", "terragrunt", "xargs"} {
		r := filepath.Join(root, tool)
		for _, d := range dirs {
			write(r, d+"/main.tf", wideTF)
			switch tool {
			case "terramate":
				write(r, d+"/stack.tm.hcl", fmt.Sprintf("stack {\n  name = %q\n}\n", d))
			case "terragrunt":
				write(r, d+"/terragrunt.hcl", "# a unit with no dependencies\n")
			}
		}
		switch tool {
		case "strata":
			write(r, "strata.yml", "version: \"1\"\n")
		case "terramate":
			write(r, "terramate.tm.hcl", `terramate {
  required_version = ">= 0.17.0"

  config {
    disable_safeguards = ["all"]
  }
}
`)
		case "xargs":
			write(r, "dirs.txt", strings.Join(dirs, "\n")+"\n")
		}
	}
}

func main() {
	out := flag.String("out", "", "directory to write strata/, terramate/ and terragrunt/ into")
	n := flag.Int("wide", 200, "units of the wide repository (0: none)")
	flag.Parse()
	if *out == "" {
		log.Fatal("usage: go run gen.go -out DIR")
	}
	us, sameStack := units()
	strata(filepath.Join(*out, "strata"), us, sameStack)
	terramate(filepath.Join(*out, "terramate"), us)
	terragrunt(filepath.Join(*out, "terragrunt"), us)
	if *n > 0 {
		wide(filepath.Join(*out, "wide"), *n)
	}

	finish := map[string]time.Duration{}
	var critical, total time.Duration
	for _, u := range us { // units come in an order that respects every edge
		var start time.Duration
		for _, d := range u.after {
			start = max(start, finish[d])
		}
		finish[u.dir] = start + u.sleep
		critical = max(critical, finish[u.dir])
		total += u.sleep
	}
	fmt.Printf("units=%d critical_path_s=%.2f total_sleep_s=%.2f sleep_per_worker_s=%.2f\n",
		len(us), critical.Seconds(), total.Seconds(), total.Seconds()/4)
}
