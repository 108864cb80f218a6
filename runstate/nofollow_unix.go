//go:build unix

package runstate

import "syscall"

// noFollow makes an open fail on a link at the path's last element.
const noFollow = syscall.O_NOFOLLOW
