package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/strata-iac/strata/internal/ansi"
)

// ptyAnswer is typed at the terminal once it has shown after.
type ptyAnswer struct{ after, send string }

// ptyRun is what a terminal received from one run of strata: raw, and
// as text with the control sequences stripped and lines ended by "\n".
type ptyRun struct {
	raw, text string
	code      int
}

// ptyDeadline is how long a run on the pseudo-terminal may take before
// the test gives up on it: a bound on a hung run, not a measure.
const ptyDeadline = 5 * time.Minute

// onPTY runs the built strata in dir on a pseudo-terminal of 40 rows and
// 160 columns, its stdin, stdout and stderr, typing each answer once what
// it waits for has been shown, and reads what the terminal receives
// until strata has exited and the terminal is closed.
func onPTY(t *testing.T, dir string, env []string, args []string, answers ...ptyAnswer) ptyRun {
	t.Helper()
	cmd := exec.Command(strataBin, args...)
	cmd.Dir, cmd.Env = dir, append(env, "TERM=xterm")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Skipf("no pseudo-terminal on this platform: %v", err)
	}
	var (
		mu  sync.Mutex
		raw []byte
	)
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 32<<10)
		from := 0
		for {
			n, err := tty.Read(buf)
			mu.Lock()
			raw = append(raw, buf[:n]...)
			if len(answers) > 0 && strings.Contains(ansi.Strip(string(raw[from:])), answers[0].after) {
				from = len(raw)
				_, _ = tty.Write([]byte(answers[0].send))
				answers = answers[1:]
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	shown := func() string {
		mu.Lock()
		defer mu.Unlock()
		return string(raw)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(ptyDeadline):
		_ = cmd.Process.Kill()
		<-done
		tty.Close()
		t.Fatalf("strata %s on a terminal did not end within %s; it showed:\n%s", strings.Join(args, " "), ptyDeadline, ansi.Strip(shown()))
	}
	// What strata wrote last is still to be read; the terminal reports
	// its end once every process holding it has gone.
	select {
	case <-read:
	case <-time.After(ptyDeadline):
	}
	tty.Close()
	<-read
	code := 0
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		code = ee.ExitCode()
	} else if werr != nil {
		t.Fatal(werr)
	}
	r := ptyRun{raw: shown(), code: code}
	r.text = strings.ReplaceAll(strings.ReplaceAll(ansi.Strip(r.raw), "\r\n", "\n"), "\r", "")
	return r
}

var (
	// statusHead is the first line of the live status: units done of the
	// run's units, and how many run and wait.
	statusHead = regexp.MustCompile(`── (\d+)/(\d+) done · (\d+) running`)
	// unitEnd is a unit's one line when it ends, with the units done.
	unitEnd = regexp.MustCompile(`\[([a-z]+@default)\] [^\n]*\((\d+)/(\d+) done\)\n`)
)

// TestAtATerminal runs strata with real terraform on a pseudo-terminal
// and checks what the terminal received (docs/behaviour.md#console-output):
// a successful init folded to one line and a plan to its change list,
// every line with --output full; the live status counting units, never
// past the run's; one line per unit as it ends, counted in order; the
// final table in run order; the prompt of a wave, aligned and answered
// no at the terminal, with strata's words at the root and terraform's in
// a unit's dir (drop-in), where the answer no exits 1.
func TestAtATerminal(t *testing.T) {
	needTerraform(t)
	t.Parallel()
	files := map[string]string{
		"strata.yml": `dirs:
  net: {tags: [net]}
  database: {tags: [net]}
  app: {tags: [app]}
  web: {tags: [app]}
stacks:
  names:
    net: {tag_query: net}
    app: {tag_query: app, rules: {plan_after: [net]}}
`,
		"net/main.tf":      "resource \"terraform_data\" \"x\" { input = \"net\" }\noutput \"o\" { value = terraform_data.x.input }\n",
		"database/main.tf": "resource \"terraform_data\" \"x\" { input = \"db\" }\n",
		"app/main.tf":      "resource \"terraform_data\" \"x\" { input = \"app\" }\n",
		"web/main.tf":      "resource \"terraform_data\" \"x\" { input = \"web\" }\n",
	}
	root := writeRepo(t, files)
	env := hermeticEnv(t)
	units := []string{"app@default", "database@default", "net@default", "web@default"}

	// plan: net and database plan, app and web wait for them to be
	// applied.
	r := onPTY(t, root, env, []string{"plan"})
	if r.code != 0 {
		t.Fatalf("plan on a terminal: exit %d\n%s", r.code, r.text)
	}
	for _, u := range []string{"net@default", "database@default"} {
		if n := strings.Count(r.text, "["+u+"] init: ok, no providers\n"); n != 1 {
			t.Errorf("plan: %s's init shown as %d folded lines, want 1:\n%s", u, n, r.text)
		}
		for _, want := range []string{"[" + u + "]   # terraform_data.x will be created\n", "[" + u + "] Plan: 1 to add, 0 to change, 0 to destroy.\n"} {
			if !strings.Contains(r.text, want) {
				t.Errorf("plan: no %q in the change list:\n%s", want, r.text)
			}
		}
	}
	for _, unwanted := range []string{"Initializing the backend", "Terraform will perform the following actions", "resource \"terraform_data\" \"x\" {"} {
		if strings.Contains(r.text, unwanted) {
			t.Errorf("plan: %q shown, want init folded and the plan its change list:\n%s", unwanted, r.text)
		}
	}
	checkStatus(t, "plan", r.text, len(units))
	checkUnitEnds(t, "plan", r.text, units)
	checkTable(t, "plan", r.text, [][]string{{"net", "database@default", "net@default"}, {"app", "app@default", "web@default"}})

	// --output full: every line of init and plan, in a repository not
	// yet initialised.
	r = onPTY(t, writeRepo(t, files), env, []string{"plan", "--output", "full"})
	if r.code != 0 {
		t.Fatalf("plan --output full on a terminal: exit %d\n%s", r.code, r.text)
	}
	for _, want := range []string{"[net@default] Initializing the backend...\n", "[net@default] Terraform has been successfully initialized!\n",
		"[net@default] Terraform will perform the following actions:\n", "[net@default]   + resource \"terraform_data\" \"x\" {\n",
		"[database@default] Terraform will perform the following actions:\n"} {
		if !strings.Contains(r.text, want) {
			t.Errorf("plan --output full: no %q:\n%s", want, r.text)
		}
	}
	if strings.Contains(r.text, "init: ok") {
		t.Errorf("plan --output full folded an init:\n%s", r.text)
	}

	// apply at the root: the wave's plans, aligned, and its question,
	// answered no.
	r = onPTY(t, root, env, []string{"apply"}, ptyAnswer{"[yes/all/no]", "no\r"})
	if r.code != 1 {
		t.Errorf("apply answered no at the root: exit %d, want 1\n%s", r.code, r.text)
	}
	prompt := regexp.MustCompile(`\n\n((?:  \S+ +\S+ +[^\n]+\n)+)Apply 2 units\? \[yes/all/no\] no\n`).FindStringSubmatch(r.text)
	if prompt == nil {
		t.Fatalf("apply: no question about net's two plans, answered no:\n%s", r.text)
	}
	rows := strings.Split(strings.TrimSuffix(prompt[1], "\n"), "\n")
	row := regexp.MustCompile(`^  (\S+ +)(\S+ +)(.+)$`)
	var names []string
	for _, l := range rows {
		m := row.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("apply: the question's row %q is not a unit, its stack and its changes", l)
		}
		names = append(names, strings.TrimSpace(m[1]))
		if len(m[1]) != len(row.FindStringSubmatch(rows[0])[1]) || len(m[2]) != len(row.FindStringSubmatch(rows[0])[2]) {
			t.Errorf("apply: the question's rows are not aligned:\n%s", prompt[1])
		}
		if strings.TrimSpace(m[2]) != "net" || !strings.HasPrefix(m[3], "+1 ~0 -0") {
			t.Errorf("apply: the question's row %q, want a unit of net adding one resource", l)
		}
	}
	if strings.Join(names, " ") != "database@default net@default" && strings.Join(names, " ") != "net@default database@default" {
		t.Errorf("apply: the question lists %q, want the two units of net, which can apply now", names)
	}
	for _, u := range []string{"net@default", "database@default"} {
		// A reused plan shown in under a second says no time.
		if !regexp.MustCompile(`\[` + u + `\] planned(?: in \S+)?: not approved \(\d/4 done\)\n`).MatchString(r.text) {
			t.Errorf("apply: %s is not said to be planned and not approved:\n%s", u, r.text)
		}
	}
	checkStatus(t, "apply", r.text, len(units))
	checkUnitEnds(t, "apply", r.text, units)
	checkTable(t, "apply", r.text, [][]string{{"net", "database@default", "net@default"}, {"app", "app@default", "web@default"}})

	// apply in a unit's dir (drop-in): terraform's question and words.
	r = onPTY(t, filepath.Join(root, "net"), env, []string{"apply"}, ptyAnswer{"Enter a value:", "no\r"})
	const ask = "Do you want to perform these actions?\n  Terraform will perform the actions described above.\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: no\n"
	if r.code != 1 || !strings.Contains(r.text, ask) || !strings.Contains(r.text, "\nApply cancelled.\n") || strings.Contains(r.text, "[yes/all/no]") {
		t.Errorf("drop-in apply answered no: exit %d, want 1 with terraform's question and \"Apply cancelled.\"\n%s", r.code, r.text)
	}
}

// checkStatus: the live status was shown, each time counting units done
// of the run's units, never more than there are, and units running.
func checkStatus(t *testing.T, what, text string, units int) {
	t.Helper()
	heads := statusHead.FindAllStringSubmatch(text, -1)
	if len(heads) == 0 {
		t.Errorf("%s: no live status:\n%s", what, text)
	}
	for _, h := range heads {
		done, _ := strconv.Atoi(h[1])
		total, _ := strconv.Atoi(h[2])
		running, _ := strconv.Atoi(h[3])
		if total != units || done > total || running > units-done {
			t.Errorf("%s: the status says %q, want units counted: %d in the run", what, h[0], units)
		}
	}
}

// checkUnitEnds: one line per unit as it ends, the count of units done
// going up one at a time to the run's units.
func checkUnitEnds(t *testing.T, what, text string, units []string) {
	t.Helper()
	ends := unitEnd.FindAllStringSubmatch(text, -1)
	seen := map[string]int{}
	for i, e := range ends {
		seen[e[1]]++
		if e[2] != strconv.Itoa(i+1) || e[3] != strconv.Itoa(len(units)) {
			t.Errorf("%s: end line %d of %s counts %s/%s done, want %d/%d", what, i+1, e[1], e[2], e[3], i+1, len(units))
		}
	}
	for _, u := range units {
		if seen[u] != 1 {
			t.Errorf("%s: %s ended in %d lines, want 1:\n%s", what, u, seen[u], text)
		}
	}
	if len(ends) != len(units) {
		t.Errorf("%s: %d end lines for %d units", what, len(ends), len(units))
	}
}

// checkTable: the final table lists the units in run order, the groups
// of stacks given in order (a stack, then its units in any order).
func checkTable(t *testing.T, what, text string, order [][]string) {
	t.Helper()
	_, table, ok := strings.Cut(text, "\nSTACK ")
	if !ok {
		t.Errorf("%s: no final table:\n%s", what, text)
		return
	}
	lines := strings.Split(table, "\n")[1:]
	i := 0
	for _, group := range order {
		want := map[string]bool{}
		for _, u := range group[1:] {
			want[u] = true
		}
		for range group[1:] {
			if i >= len(lines) {
				t.Errorf("%s: the table ends before %v:\n%s", what, group, table)
				return
			}
			f := strings.Fields(lines[i])
			if len(f) < 3 || f[0] != group[0] || !want[f[1]] {
				t.Errorf("%s: table row %d is %q, want a unit of %v (run order):\n%s", what, i+1, lines[i], group, table)
			}
			delete(want, f[min(1, len(f)-1)])
			i++
		}
	}
}
