package atomicfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	for name, write := range map[string]func(string, []byte, os.FileMode) error{"synced": Write, "unsynced": WriteUnsynced} {
		t.Run(name, func(t *testing.T) { testWrite(t, write) })
	}
}

func testWrite(t *testing.T, write func(string, []byte, os.FileMode) error) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := write(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := write(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "two" {
		t.Fatalf("content %q, %v", b, err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temp files left: %v", entries)
	}
	if err := write(filepath.Join(dir, "missing", "x"), nil, 0o600); err == nil {
		t.Error("writing into a missing dir succeeded")
	}
}

// TestReplaceSeenWhole: while a file is replaced again and again, a reader
// always finds it, with one content or the other, never a mix or nothing.
func TestReplaceSeenWhole(t *testing.T) {
	for name, write := range map[string]func(string, []byte, os.FileMode) error{"synced": Write, "unsynced": WriteUnsynced} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			contents := [][]byte{[]byte(strings.Repeat("a", 3000)), []byte(strings.Repeat("b", 5000))}
			if err := write(path, contents[0], 0o600); err != nil {
				t.Fatal(err)
			}
			rounds := 300
			if name == "synced" {
				rounds = 30
			}
			done := make(chan error, 1)
			go func() {
				for i := 1; i <= rounds; i++ {
					if err := write(path, contents[i%2], 0o600); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			for reading := true; reading; {
				select {
				case err := <-done:
					if err != nil {
						t.Fatal(err)
					}
					reading = false
				default:
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("read during a replace: %v", err)
				}
				if !bytes.Equal(b, contents[0]) && !bytes.Equal(b, contents[1]) {
					t.Fatalf("read %d bytes that are neither content", len(b))
				}
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("files left: %v", entries)
			}
		})
	}
}

// TestReplaceNotFile: a directory where the file should be is refused for
// both writes, as a rename over it is, and stays where it is.
func TestReplaceNotFile(t *testing.T) {
	for name, write := range map[string]func(string, []byte, os.FileMode) error{"synced": Write, "unsynced": WriteUnsynced} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := write(path, []byte("x"), 0o600); err == nil {
				t.Error("writing over a directory succeeded")
			}
			if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
				t.Errorf("the directory is gone: %v", err)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("files left: %v", entries)
			}
		})
	}
}
