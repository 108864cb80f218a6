// Package atomicfile writes files so that a crash leaves either the old
// content or the new, never a half-written file: write to a temp file in
// the same directory, sync, then rename over the target.
package atomicfile

import (
	"os"
	"path/filepath"
	"sync/atomic"
)

// synced counts the writes synced since the process started.
var synced atomic.Int64

// Synced is how many writes this process has synced (Write) so far:
// tests and benchmarks count what a command waits for the disk for.
func Synced() int64 { return synced.Load() }

// Write replaces path with data, created with perm. The directory must
// exist.
func Write(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, true)
}

// WriteUnsynced is Write without the sync: a reader sees the old content
// or the new, but a crash of the machine may leave neither. For files
// that another copy or a rerun makes again (a CI job's copy of state kept
// in a bucket, a file an engine call reads and strata then removes).
//
// Where the system can, it replaces an existing file by exchanging the
// two names and removing the old content, rather than renaming over it:
// ext4 takes a rename over an existing file as a reason to write the new
// file's blocks out at once (its auto_da_alloc), which made each record
// cost about 0.3 ms where an exchange costs about 0.06 ms. A crash
// between the exchange and the removal leaves the old content under the
// temp name.
func WriteUnsynced(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, false)
}

func write(path string, data []byte, perm os.FileMode, sync bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil && sync {
		synced.Add(1)
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && !sync && isRegular(path) && exchange(tmp, path) == nil {
		// tmp now names the old content.
		return os.Remove(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// isRegular reports whether path is a regular file, its link not followed:
// anything else at path (nothing, a link, a directory) is renamed over, so
// that an exchange never moves it aside.
func isRegular(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}
