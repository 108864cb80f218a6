package main

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Record writes: each write of a unit's run-state record makes a new file
// beside it (a temp file that takes the record's place), so a watch on
// the unit's folder of .strata/state sees every write as a file created
// there (docs/architecture.md#what-a-command-costs).

// recordWatch watches the state folders of dirs under root's state dir
// for files created; it returns a function that reads and clears, by
// unit dir, how many record writes there were.
func recordWatch(t *testing.T, root string, dirs ...string) func() map[string]int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	byWatch := map[int32]string{}
	for _, d := range dirs {
		w, err := unix.InotifyAddWatch(fd, filepath.Join(root, ".strata", "state", d), unix.IN_CREATE)
		if err != nil {
			t.Fatalf("watching the state of %s: %v", d, err)
		}
		byWatch[int32(w)] = d
	}
	return func() map[string]int {
		writes := map[string]int{}
		buf := make([]byte, 64<<10)
		for {
			n, err := unix.Read(fd, buf)
			if errors.Is(err, unix.EAGAIN) {
				return writes
			}
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
				if strings.HasPrefix(name, ".") && strings.Contains(name, ".json.tmp-") {
					writes[byWatch[ev.Wd]]++
				}
				off += unix.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}
}

// TestRecordWritesPerUnit: an apply without a saved plan (plan and apply
// in one call) writes a unit's run-state record once, the apply's record
// carrying how long the job took; a plan, with changes or not, writes it
// once, the plan's record carrying how long it took, the first time too
// (when the record holds no plan's time yet, as after an apply); an
// apply of saved plans twice.
func TestRecordWritesPerUnit(t *testing.T) {
	t.Parallel()
	needTerraform(t)
	unit := func(input string) string {
		return "resource \"terraform_data\" \"x\" {\n  input = \"" + input + "\"\n}\n"
	}
	root := writeRepo(t, map[string]string{"strata.yml": "", "a/main.tf": unit("a1"), "b/main.tf": unit("b1")})
	env := hermeticEnv(t)
	// The first apply inits the units and makes their state folders.
	if r := runBin(t, root, env, "apply", "-auto-approve"); r.code != 0 {
		t.Fatalf("first apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	writes := recordWatch(t, root, "a", "b")
	for _, step := range []struct {
		name string
		args []string
		edit func()
		want int // record writes a unit
	}{
		{name: "plan and apply in one call", args: []string{"apply", "-auto-approve"}, want: 1,
			edit: func() {
				for _, d := range []string{"a", "b"} {
					if err := os.WriteFile(filepath.Join(root, d, "main.tf"), []byte(unit(d+"2")), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}},
		{name: "plan with nothing to change", args: []string{"plan"}, want: 1},
		{name: "plan with nothing to change, again", args: []string{"plan"}, want: 1},
		{name: "plan with changes", args: []string{"plan"}, want: 1,
			edit: func() {
				for _, d := range []string{"a", "b"} {
					if err := os.WriteFile(filepath.Join(root, d, "main.tf"), []byte(unit(d+"3")), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}},
		// The saved plan's record is cleared before the engine starts (a
		// plan is applied at most once), then the apply is recorded; the
		// job that reused the saved plan records nothing of its own.
		{name: "apply of the saved plans", args: []string{"apply", "-auto-approve"}, want: 2},
	} {
		if step.edit != nil {
			step.edit()
		}
		writes()
		r := runBin(t, root, env, step.args...)
		if r.code != 0 && r.code != 2 {
			t.Fatalf("%s: exit %d\n%s%s", step.name, r.code, r.stdout, r.stderr)
		}
		if got, want := writes(), map[string]int{"a": step.want, "b": step.want}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: record writes by unit %v, want %v\n%s%s", step.name, got, want, r.stdout, r.stderr)
		}
	}
}
