package runstate

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteScratch: the file is made with its folder, holds data until
// Empty, keeps its inode from call to call, and is the owner's alone even
// when an earlier file was not.
func TestWriteScratch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vars", "a", "default.tfvars.json")
	s, err := WriteScratch(path, []byte(`{"a": "1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != `{"a": "1"}` {
		t.Errorf("holds %q", b)
	}
	if err := s.Empty(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	if before.Size() != 0 {
		t.Errorf("emptied file is %d bytes", before.Size())
	}
	os.Chmod(path, 0o644)
	s, err = WriteScratch(path, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) {
		t.Error("the second call made a new file")
	}
	if after.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", after.Mode().Perm())
	}
	s.Empty()
	if err := os.MkdirAll(filepath.Join(filepath.Dir(path), "d.json", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteScratch(filepath.Join(filepath.Dir(path), "d.json"), nil); err == nil {
		t.Error("a folder holding files at the path was written over")
	}
}
