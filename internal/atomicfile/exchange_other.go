//go:build !linux

package atomicfile

import "errors"

// exchange is not available here: Write renames over the file instead.
func exchange(a, b string) error {
	return errors.ErrUnsupported
}
