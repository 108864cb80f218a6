package engines

import (
	"context"
	"os"
	"time"
)

// lockPollInterval is how often a process waiting for an install lock
// tries again.
const lockPollInterval = 100 * time.Millisecond

// lockFile takes an exclusive OS file lock on path, creating the file, and
// waits until it gets it or ctx ends. waiting runs once if the lock is
// held by someone else. The lock file itself is never removed: removing it
// would let two processes lock two different files of the same name.
func lockFile(ctx context.Context, path string, waiting func()) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		if ok {
			return func() {
				unlock(f)
				f.Close()
			}, nil
		}
		if waiting != nil {
			waiting()
			waiting = nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(lockPollInterval):
		}
	}
}
