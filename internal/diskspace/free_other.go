//go:build !unix

package diskspace

// free cannot be asked here: only ENOSPC in an error tells a full disk.
func free(string) (uint64, bool) { return 0, false }
