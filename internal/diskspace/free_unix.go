//go:build unix

package diskspace

import "golang.org/x/sys/unix"

// free is the space an unprivileged writer has left on dir's file
// system; known is false when it cannot be asked.
func free(dir string) (n uint64, known bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}
