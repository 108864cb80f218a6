// Package subst expands ${name} and $name references in config values
// (docs/behaviour.md#substitution), for the runner, which substitutes
// values, and for the config check, which checks flags with stand-in
// values.
package subst

import "strings"

// Expand replaces ${name} and $name in s in one pass, each by what lookup
// gives for name; `$$` is a literal `$`, and a `$` before anything else
// stays as written. A name lookup does not know stops it: Expand returns
// that name and false.
func Expand(s string, lookup func(string) (string, bool)) (string, string, bool) {
	if !strings.Contains(s, "$") {
		return s, "", true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		switch {
		case next == '$':
			b.WriteByte('$')
			i++
		case next == '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				b.WriteByte(c)
				continue
			}
			name := s[i+2 : i+2+end]
			v, ok := lookup(name)
			if !ok {
				return "", name, false
			}
			b.WriteString(v)
			i += 2 + end
		case isNameStart(next):
			j := i + 1
			for j < len(s) && isNameChar(s[j]) {
				j++
			}
			name := s[i+1 : j]
			v, ok := lookup(name)
			if !ok {
				return "", name, false
			}
			b.WriteString(v)
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), "", true
}

func isNameStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isNameChar(c byte) bool { return isNameStart(c) || (c >= '0' && c <= '9') }
