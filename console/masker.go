package console

import (
	"sort"
	"strings"
	"sync"

	"github.com/strata-iac/strata/internal/textbudget"
)

// Masker replaces secret values with *** in text.
type Masker struct {
	mu      sync.Mutex // a unit's job adds values while its console masks
	secrets []string   // longest first
	known   map[string]bool
}

// NewMasker masks the given values (empty and one-character values are
// ignored: masking them would shred every line).
func NewMasker(values ...string) *Masker {
	m := &Masker{}
	m.Add(values...)
	return m
}

// Add masks more values: an env step's sensitive output, the strings a
// plan marks sensitive.
func (m *Masker) Add(values ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	added := false
	for _, v := range values {
		if len(v) > 1 && !m.known[v] {
			if m.known == nil {
				m.known = map[string]bool{}
			}
			m.known[v] = true
			m.secrets = append(m.secrets, v)
			added = true
		}
	}
	if added {
		// Longest first, so a secret containing another is masked whole.
		sort.SliceStable(m.secrets, func(i, j int) bool { return len(m.secrets[i]) > len(m.secrets[j]) })
	}
}

// Mask returns s with every secret replaced.
func (m *Masker) Mask(s string) string {
	if m == nil {
		return s
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range m.secrets {
		s = strings.ReplaceAll(s, v, "***")
	}
	if len(m.secrets) > 0 && strings.Contains(s, textbudget.Marker) {
		s = m.maskCut(s)
	}
	return s
}

// maskCut masks the start of a secret that a cut left just before its
// note (docs/behaviour.md#text-budgets). Callers hold m.mu.
func (m *Masker) maskCut(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, textbudget.Marker)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		kept := s[:i]
		for _, v := range m.secrets {
			if n := secretStart(kept, v); n > 0 {
				kept = kept[:len(kept)-n] + "***"
				break
			}
		}
		b.WriteString(kept)
		b.WriteString(textbudget.Marker)
		s = s[i+len(textbudget.Marker):]
	}
}

// secretStart is the length of the longest start of secret v that ends
// text, short of the whole of v (which Mask has replaced already).
func secretStart(text, v string) int {
	for n := min(len(v)-1, len(text)); n > 0; n-- {
		if strings.HasSuffix(text, v[:n]) {
			return n
		}
	}
	return 0
}
