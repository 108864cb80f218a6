package tagquery

import (
	"math/bits"
	"slices"
)

// Set is a set of subject ids of an Index, held as a bitset. Operations return
// new sets and never change their operands; the zero Set is empty.
type Set struct {
	words []uint64
}

// Has reports whether subject i is in the set.
func (s Set) Has(i int) bool {
	w := i / 64
	return i >= 0 && w < len(s.words) && s.words[w]&(1<<(uint(i)%64)) != 0
}

// Len returns the number of subjects in the set.
func (s Set) Len() int {
	n := 0
	for _, w := range s.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// IsEmpty reports whether the set has no subject.
func (s Set) IsEmpty() bool {
	for _, w := range s.words {
		if w != 0 {
			return false
		}
	}
	return true
}

// Each calls fn for every subject id in the set, in increasing order.
func (s Set) Each(fn func(i int)) {
	for wi, w := range s.words {
		for w != 0 {
			fn(wi*64 + bits.TrailingZeros64(w))
			w &= w - 1
		}
	}
}

// Members returns the subject ids in the set, in increasing order.
func (s Set) Members() []int {
	ids := make([]int, 0, s.Len())
	s.Each(func(i int) { ids = append(ids, i) })
	return ids
}

// And returns the subjects in both s and t.
func (s Set) And(t Set) Set {
	out := make([]uint64, min(len(s.words), len(t.words)))
	for i := range out {
		out[i] = s.words[i] & t.words[i]
	}
	return Set{words: out}
}

// Or returns the subjects in s or t.
func (s Set) Or(t Set) Set {
	long, short := s.words, t.words
	if len(short) > len(long) {
		long, short = short, long
	}
	out := append([]uint64(nil), long...)
	for i, w := range short {
		out[i] |= w
	}
	return Set{words: out}
}

// AndNot returns the subjects in s and not in t.
func (s Set) AndNot(t Set) Set {
	out := append([]uint64(nil), s.words...)
	for i := range min(len(out), len(t.words)) {
		out[i] &^= t.words[i]
	}
	return Set{words: out}
}

// Equal reports whether s and t hold the same subjects.
func (s Set) Equal(t Set) bool {
	long, short := s.words, t.words
	if len(short) > len(long) {
		long, short = short, long
	}
	for i, w := range long {
		if i < len(short) {
			if w != short[i] {
				return false
			}
		} else if w != 0 {
			return false
		}
	}
	return true
}

// posting is the subjects holding one tag or dir: a sorted list of ids while
// it is sparse, a bitset once it is dense, so that an index over many
// subjects and many rare tags (dir:…) stays small.
type posting struct {
	ids  []int32
	bits []uint64
}

// orInto adds the posting's subjects to acc.
func (p posting) orInto(acc []uint64) {
	if p.bits != nil {
		for i, w := range p.bits {
			acc[i] |= w
		}
		return
	}
	for _, id := range p.ids {
		acc[id/64] |= 1 << (uint(id) % 64)
	}
}

// andInto keeps in acc only the posting's subjects.
func (p posting) andInto(acc []uint64) {
	if p.bits != nil {
		for i, w := range p.bits {
			acc[i] &= w
		}
		return
	}
	kept := make([]int32, 0, len(p.ids))
	for _, id := range p.ids {
		if acc[id/64]&(1<<(uint(id)%64)) != 0 {
			kept = append(kept, id)
		}
	}
	clear(acc)
	for _, id := range kept {
		acc[id/64] |= 1 << (uint(id) % 64)
	}
}

// andNotInto removes the posting's subjects from acc.
func (p posting) andNotInto(acc []uint64) {
	if p.bits != nil {
		for i, w := range p.bits {
			acc[i] &^= w
		}
		return
	}
	for _, id := range p.ids {
		acc[id/64] &^= 1 << (uint(id) % 64)
	}
}

// postingBuilder collects ids in increasing order and turns dense once there
// are more ids than bitset words.
type postingBuilder struct {
	posting
	words int
}

func (b *postingBuilder) add(id int32) {
	if b.bits != nil {
		b.bits[id/64] |= 1 << (uint(id) % 64)
		return
	}
	if n := len(b.ids); n > 0 && b.ids[n-1] == id {
		return
	}
	b.ids = append(b.ids, id)
	if len(b.ids) > b.words {
		b.bits = make([]uint64, b.words)
		for _, i := range b.ids {
			b.bits[i/64] |= 1 << (uint(i) % 64)
		}
		b.ids = nil
	}
}

// unionPostings returns a posting of every subject in the parts, dense when
// that is the smaller form.
func unionPostings(parts []posting, words int) posting {
	total, dense := 0, false
	for _, p := range parts {
		total += len(p.ids)
		dense = dense || p.bits != nil
	}
	if dense || total > words {
		bits := make([]uint64, words)
		for _, p := range parts {
			p.orInto(bits)
		}
		return posting{bits: bits}
	}
	ids := make([]int32, 0, total)
	for _, p := range parts {
		ids = append(ids, p.ids...)
	}
	slices.Sort(ids)
	return posting{ids: slices.Compact(ids)}
}
