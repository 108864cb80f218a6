//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package filelock

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock(2) on f without blocking; ok is false
// when another open file holds it. The kernel releases the lock when the
// holding process dies, so a crashed install never blocks the next one.
func tryLock(f *os.File) (ok bool, err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return false, err
	}
}

func unlock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
