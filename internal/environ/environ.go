// Package environ reads variables from an environment list (os.Environ's
// form, "NAME=value"), as a process started with it would see them.
package environ

import "strings"

// Lookup finds a variable in an environment list; the last entry wins,
// as it does for a process.
func Lookup(environ []string, name string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// Getenv is os.Getenv over an environment list.
func Getenv(environ []string) func(string) string {
	return func(name string) string {
		v, _ := Lookup(environ, name)
		return v
	}
}

// InCI says the environment is a CI job's: CI is set (GitHub Actions,
// GitLab CI and most others set it), or GITHUB_ACTIONS or GITLAB_CI is.
// "false" and "0" are not set.
func InCI(get func(string) string) bool {
	for _, name := range []string{"CI", "GITHUB_ACTIONS", "GITLAB_CI"} {
		if v := get(name); v != "" && v != "0" && !strings.EqualFold(v, "false") {
			return true
		}
	}
	return false
}
