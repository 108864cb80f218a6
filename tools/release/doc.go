// Package main is the release command: it builds strata's release
// archives and their checksums.txt into a directory, as `make release`
// runs it (docs/ci.md#release-archives), through internal/release.
//
// It builds and packs; it must not publish, sign or upload anything, and
// nothing in strata imports it.
package main
