// Package console is what people read while a command runs
// (docs/architecture.md#console, docs/behaviour.md#steps-of-a-unit): each
// step's output as one block, prefixed and never interleaved; the live
// status lines on a terminal and "still running" lines without one;
// collapsible groups and error annotations on GitHub Actions and GitLab
// CI; the warning box; and masking (Masker).
//
// It knows a unit only as a Unit (its name, its CI platform, its masker
// and the output kept for the summary). It must not read the state dir,
// the environment or the CI's variables (it is handed the platform and
// the checkout's dir), run anything, or decide a unit's status.
package console
