// Package engines finds, installs and verifies the terraform or tofu binary
// each unit runs with. An engine is asked for by a Spec (a name and an exact
// version, a go-version constraint or "latest"); an Installer resolves the
// version against the releases API or a mirror, then tries its sources in
// order (strata's cache, PATH, a signed download through hc-install or
// tofudl, and, when enabled, a build from the Go module proxy), verifies
// every binary by running "version -json", and places new ones in the cache
// under an OS file lock so concurrent strata processes end with one good
// binary; a failure lists every source tried and why it failed.
package engines
