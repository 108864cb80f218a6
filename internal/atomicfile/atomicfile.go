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
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
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
