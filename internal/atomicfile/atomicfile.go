// Package atomicfile writes files so that a crash leaves either the old
// content or the new, never a half-written file: write to a temp file in
// the same directory, sync, then rename over the target.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data, created with perm. The directory must
// exist.
func Write(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, true)
}

// WriteUnsynced is Write without the sync: a reader sees the old content
// or the new, but a crash of the machine may leave neither. For files
// that another copy or a rerun makes again (a CI job's copy of state kept
// in a bucket, a file an engine call reads and strata then removes).
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
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
