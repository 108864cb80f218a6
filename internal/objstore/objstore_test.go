package objstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// stores opens one store of each kind this package supports.
func stores(t *testing.T) map[string]*Store {
	t.Helper()
	ctx := context.Background()
	out := map[string]*Store{}
	for name, u := range map[string]string{"file": "file://" + t.TempDir(), "mem": "mem://"} {
		s, err := Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[name] = s
	}
	return out
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if _, _, err := s.Get(ctx, "runs/1/unit"); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get of nothing: %v", err)
			}
			if err := s.Create(ctx, "runs/1/unit", []byte("a")); err != nil {
				t.Fatal(err)
			}
			if err := s.Create(ctx, "runs/1/unit", []byte("b")); !errors.Is(err, ErrExists) {
				t.Errorf("second Create: %v", err)
			}
			data, v, err := s.Get(ctx, "runs/1/unit")
			if err != nil || string(data) != "a" {
				t.Fatalf("Get = %q, %v", data, err)
			}
			if err := s.Update(ctx, "runs/1/unit", []byte("c"), v); err != nil {
				t.Fatal(err)
			}
			if err := s.Update(ctx, "runs/1/unit", []byte("d"), v); !errors.Is(err, ErrChanged) {
				t.Errorf("Update from an old version: %v", err)
			}
			if err := s.Update(ctx, "runs/1/other", []byte("e"), ""); err != nil {
				t.Errorf("Update of nothing from nothing: %v", err)
			}
			if err := s.Update(ctx, "runs/1/other", []byte("f"), ""); !errors.Is(err, ErrChanged) {
				t.Errorf("Update from nothing of something: %v", err)
			}
			if err := s.Put(ctx, "plans/p", []byte("plan")); err != nil {
				t.Fatal(err)
			}
			keys, err := s.List(ctx, "runs/")
			if err != nil || fmt.Sprint(keys) != "[runs/1/other runs/1/unit]" {
				t.Errorf("List = %v, %v", keys, err)
			}
			if err := s.Delete(ctx, "plans/p"); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, "plans/p"); err != nil {
				t.Errorf("Delete of nothing: %v", err)
			}
			for _, bad := range []string{"", "../x", "a//b", "a/./b", "/a", "a b", ".strata-locks/x"} {
				if err := s.Put(ctx, bad, nil); err == nil {
					t.Errorf("key %q accepted", bad)
				}
			}
		})
	}
}

// TestCreateRace: 16 writers create one object, 100 rounds: exactly one
// wins each round.
func TestCreateRace(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			for round := 0; round < 100; round++ {
				key := fmt.Sprintf("locks/round-%d", round)
				var wg sync.WaitGroup
				var mu sync.Mutex
				winners, lost := 0, 0
				for w := 0; w < 16; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						err := s.Create(ctx, key, []byte(strconv.Itoa(w)))
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err == nil:
							winners++
						case errors.Is(err, ErrExists):
							lost++
						default:
							t.Error(err)
						}
					}()
				}
				wg.Wait()
				if winners != 1 || lost != 15 {
					t.Fatalf("round %d: %d winners, %d lost", round, winners, lost)
				}
			}
		})
	}
}

// TestUpdateRace: 16 writers each add 100 to a counter by read, then
// compare and swap, retrying on ErrChanged: no update is lost.
func TestUpdateRace(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if err := s.Create(ctx, "counter", []byte("0")); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for w := 0; w < 16; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 100; i++ {
						for {
							data, v, err := s.Get(ctx, "counter")
							if err != nil {
								t.Error(err)
								return
							}
							n, _ := strconv.Atoi(string(data))
							err = s.Update(ctx, "counter", []byte(strconv.Itoa(n+1)), v)
							if err == nil {
								break
							}
							if !errors.Is(err, ErrChanged) {
								t.Error(err)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			if data, _, err := s.Get(ctx, "counter"); err != nil || string(data) != "1600" {
				t.Errorf("counter = %q, %v; want 1600", data, err)
			}
		})
	}
}

// TestFileStoreLeavesNoTemp: the file store's creates and swaps leave no
// temp files behind.
func TestFileStoreLeavesNoTemp(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Create(ctx, "a/b", []byte("1"))
	s.Create(ctx, "a/b", []byte("2"))
	_, v, _ := s.Get(ctx, "a/b")
	s.Update(ctx, "a/b", []byte("3"), v)
	left, _ := filepath.Glob(filepath.Join(dir, "a", ".strata-tmp-*"))
	if len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a", "b")); string(b) != "3" {
		t.Errorf("a/b = %q", b)
	}
}
