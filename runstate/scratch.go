package runstate

import (
	"errors"
	"os"
	"path/filepath"
)

// Scratch is a state file written for one engine call and emptied when the
// call ends: a unit's var file, which holds values from strata's
// environment and other stacks' outputs.
type Scratch struct {
	f *os.File
}

// WriteScratch writes data to path (0600, its directory made 0700) and
// keeps the file open until Empty. The file is rewritten in place and
// emptied rather than created and removed on each call: creating a file
// costs the file system many times what rewriting one does
// (docs/architecture.md#what-a-command-costs). Anything at path that is
// not a plain file (a link planted there) is removed first, never written
// through.
func WriteScratch(path string, data []byte) (*Scratch, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|noFollow, 0o600)
	if err != nil {
		return nil, err
	}
	// A file an earlier version left readable by others is made the
	// owner's before the values go in.
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(data)
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return &Scratch{f: f}, nil
}

// Empty removes the file's content, keeping its name for the next call.
func (s *Scratch) Empty() error {
	return errors.Join(s.f.Truncate(0), s.f.Close())
}
