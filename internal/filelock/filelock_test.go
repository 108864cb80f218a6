package filelock

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestTryAcquireAndNote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	l, err := TryAcquire(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetNote("pid 42 apply"); err != nil {
		t.Fatal(err)
	}
	// flock locks belong to open file descriptions: a second open in the
	// same process contends like another process would.
	if _, err := TryAcquire(path); !errors.Is(err, ErrHeld) {
		t.Fatalf("second TryAcquire = %v, want ErrHeld", err)
	}
	if got := Note(path); got != "pid 42 apply" {
		t.Errorf("note = %q", got)
	}
	l.Release()
	l2, err := TryAcquire(path)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.Release()
}

func TestAcquireWaitsAndHonoursContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	held, err := TryAcquire(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	waited := false
	if _, err := Acquire(ctx, path, func() { waited = true }); !errors.Is(err, context.DeadlineExceeded) || !waited {
		t.Fatalf("Acquire on a held lock = %v (waited %t)", err, waited)
	}
	go func() {
		time.Sleep(150 * time.Millisecond)
		held.Release()
	}()
	l, err := Acquire(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
}
