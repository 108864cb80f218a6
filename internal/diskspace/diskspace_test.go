package diskspace

import "testing"

func TestReason(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		name, errText string
		dirs          []string
		want          string
	}{
		{"ENOSPC in the error", "Error: write .terraform.tfstate.lock.info: No space left on device", []string{dir}, "the disk is full (no space left on device)"},
		{"another error", "Error: Invalid value for variable", []string{dir}, ""},
		{"a dir that is not there", "Error: x", []string{dir + "/missing", ""}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := Reason(c.errText, c.dirs...); got != c.want {
				t.Errorf("Reason(%q) = %q, want %q", c.errText, got, c.want)
			}
		})
	}
}

func TestSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[uint64]string{0: "0 bytes", 4096: "4 KiB", 3 << 19: "1.5 MiB"} {
		if got := size(n); got != want {
			t.Errorf("size(%d) = %q, want %q", n, got, want)
		}
	}
}
