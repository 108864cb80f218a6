//go:build windows

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// tryLock takes an exclusive (or shared) LockFileEx lock on f without
// blocking; ok is false when another handle holds it in a way that
// excludes this one. Windows releases the lock when the holding process
// exits.
func tryLock(f *os.File, shared bool) (ok bool, err error) {
	var flags uint32 = windows.LOCKFILE_FAIL_IMMEDIATELY
	if !shared {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := new(windows.Overlapped)
	err = windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return false, nil
	}
	return false, err
}

func unlock(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}
