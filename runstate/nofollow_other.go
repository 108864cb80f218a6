//go:build !unix

package runstate

// noFollow is nothing where the system has no such flag: WriteScratch's
// check of what is at the path stands alone.
const noFollow = 0
