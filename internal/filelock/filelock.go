// Package filelock takes exclusive (or shared) OS file locks that other processes
// respect and that the kernel releases when the holding process dies, so a
// crashed strata never leaves a lock behind.
package filelock

import (
	"context"
	"errors"
	"os"
	"time"
)

// A waiting Lock tries again after firstPoll, then twice as long each
// time up to maxPoll: a lock held for a moment (an init reading a cache)
// changes hands at once, one held for minutes costs little.
const (
	firstPoll = 5 * time.Millisecond
	maxPoll   = 100 * time.Millisecond
)

// ErrHeld is returned by TryLock when another process holds the lock.
var ErrHeld = errors.New("lock held by another process")

// Lock is a held lock. Its file may carry a note about the holder (pid,
// command, start time) for the message another process shows.
type Lock struct {
	f *os.File
}

// Acquire takes an exclusive lock on path, creating the file, and waits
// until it gets it or ctx ends. waiting runs once if someone else holds it.
// The lock file is never removed: removing it would let two processes lock
// two different files of the same name.
func Acquire(ctx context.Context, path string, waiting func()) (*Lock, error) {
	return acquire(ctx, path, waiting, false)
}

// AcquireShared takes a shared lock on path: any number of holders share
// it, in this process and others, while none holds it exclusively.
func AcquireShared(ctx context.Context, path string, waiting func()) (*Lock, error) {
	return acquire(ctx, path, waiting, true)
}

func acquire(ctx context.Context, path string, waiting func(), shared bool) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	poll := firstPoll
	for {
		ok, err := tryLock(f, shared)
		if err != nil {
			f.Close()
			return nil, err
		}
		if ok {
			return &Lock{f: f}, nil
		}
		if waiting != nil {
			waiting()
			waiting = nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(poll):
			poll = min(2*poll, maxPoll)
		}
	}
}

// TryAcquire takes the lock without waiting; it returns ErrHeld when
// another process holds it.
func TryAcquire(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	ok, err := tryLock(f, false)
	if err != nil {
		f.Close()
		return nil, err
	}
	if !ok {
		f.Close()
		return nil, ErrHeld
	}
	return &Lock{f: f}, nil
}

// SetNote replaces the lock file's content with a note about the holder.
func (l *Lock) SetNote(note string) error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	_, err := l.f.WriteAt([]byte(note), 0)
	return err
}

// Note reads the note of a lock file, held or not.
func Note(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// Release unlocks and closes the lock file.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	unlock(l.f)
	l.f.Close()
	l.f = nil
}
