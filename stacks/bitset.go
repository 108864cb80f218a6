package stacks

import "math/bits"

// bitset is a set of small non-negative integers (stack indexes).
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)   { b[i/64] |= 1 << (i % 64) }
func (b bitset) clear(i int) { b[i/64] &^= 1 << (i % 64) }

func (b bitset) has(i int) bool {
	return i >= 0 && i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0
}

func (b bitset) or(o bitset) {
	for i := range o {
		b[i] |= o[i]
	}
}

// each calls f for every member, in increasing order.
func (b bitset) each(f func(i int)) {
	for w, word := range b {
		for word != 0 {
			t := bits.TrailingZeros64(word)
			f(w*64 + t)
			word &^= 1 << t
		}
	}
}
