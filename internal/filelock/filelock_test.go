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

// TestShared: shared holders hold together; an exclusive lock waits for
// every one of them, and a shared one waits for the exclusive holder.
func TestShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	ctx := context.Background()
	a, err := AcquireShared(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := AcquireShared(ctx, path, nil)
	if err != nil {
		t.Fatalf("a second shared holder: %v", err)
	}
	if _, err := TryAcquire(path); !errors.Is(err, ErrHeld) {
		t.Fatalf("exclusive beside shared holders: %v, want ErrHeld", err)
	}
	a.Release()
	if _, err := TryAcquire(path); !errors.Is(err, ErrHeld) {
		t.Fatalf("exclusive beside one shared holder: %v, want ErrHeld", err)
	}
	b.Release()
	x, err := TryAcquire(path)
	if err != nil {
		t.Fatalf("exclusive once the shared holders left: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
	defer cancel()
	if _, err := AcquireShared(short, path, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shared beside an exclusive holder: %v, want it to wait", err)
	}
	x.Release()
}
