package ci

import (
	"strings"
	"testing"
)

func TestUnitKey(t *testing.T) {
	tests := []struct {
		dir, ws, stack, want string
	}{
		{"prod/network", "default", "prod", "prod/network/default#prod"},
		{".", "default", "root", "=2E/default#root"},
		{"a/../b", "default", "s", "a/=2E=2E/b/default#s"},
		{"dir with space", "ws", "s", "dir=20with=20space/ws#s"},
		{"x", "", "s", "x/=#s"},
		{"ünï", "w", "s", "=C3=BCn=C3=AF/w#s"},
		{"a=b", "w", "s", "a=3Db/w#s"},
	}
	for _, tt := range tests {
		got := unitKey(tt.dir, tt.ws, tt.stack)
		if got != tt.want {
			t.Errorf("unitKey(%q, %q, %q) = %q, want %q", tt.dir, tt.ws, tt.stack, got, tt.want)
		}
		for _, seg := range strings.Split(got, "/") {
			if seg == "." || seg == ".." || seg == "" {
				t.Errorf("unitKey(%q) has segment %q", tt.dir, seg)
			}
		}
	}
	// Different units never share a key.
	if unitKey("a/b", "w", "s") == unitKey("a=2Fb", "w", "s") {
		t.Error("escaping is ambiguous")
	}
}
