package job

import (
	"encoding/binary"
	"fmt"
	"math"
)

// A plan file's values are msgpack, as go-cty writes them
// (docs/architecture.md#what-a-command-costs). This walks them without
// their schema, within the bytes given: every length is checked against
// what is left before anything is read or allocated, so a value that lies
// about its size is an error, never a large allocation. go-cty's own
// decoder (used for outputs) allocates by the lengths it reads, so a value
// is walked here first.

type mpKind int

const (
	mpNil mpKind = iota
	mpBool
	mpInt
	mpFloat
	mpStr
	mpBin
	mpArr
	mpMap
	mpExt
)

// mpHead reads the header of the value at the start of b: its kind, its
// count (array elements, map pairs) or payload length (strings, bytes,
// extensions with their type byte), and the header's size.
func mpHead(b []byte) (kind mpKind, n, hdr int, err error) {
	if len(b) == 0 {
		return 0, 0, 0, fmt.Errorf("%w: msgpack ends early", errPlanFormat)
	}
	c := b[0]
	sized := func(size int) (int, error) {
		if len(b) < 1+size {
			return 0, fmt.Errorf("%w: msgpack ends early", errPlanFormat)
		}
		switch size {
		case 1:
			return int(b[1]), nil
		case 2:
			return int(binary.BigEndian.Uint16(b[1:])), nil
		default:
			v := binary.BigEndian.Uint32(b[1:])
			if uint64(v) > uint64(len(b)) {
				return 0, fmt.Errorf("%w: msgpack length %d past its end", errPlanFormat, v)
			}
			return int(v), nil
		}
	}
	switch {
	case c <= 0x7f || c >= 0xe0:
		return mpInt, 0, 1, nil
	case c <= 0x8f:
		kind, n, hdr = mpMap, int(c&0x0f), 1
	case c <= 0x9f:
		kind, n, hdr = mpArr, int(c&0x0f), 1
	case c <= 0xbf:
		kind, n, hdr = mpStr, int(c&0x1f), 1
	case c == 0xc0:
		return mpNil, 0, 1, nil
	case c == 0xc2 || c == 0xc3:
		return mpBool, 0, 1, nil
	case c >= 0xc4 && c <= 0xc6:
		size := 1 << (c - 0xc4)
		kind, hdr = mpBin, 1+size
		n, err = sized(size)
	case c >= 0xc7 && c <= 0xc9:
		size := 1 << (c - 0xc7)
		kind, hdr = mpExt, 1+size
		n, err = sized(size)
		n++ // the type byte
	case c == 0xca:
		kind, n, hdr = mpFloat, 4, 1
	case c == 0xcb:
		kind, n, hdr = mpFloat, 8, 1
	case c >= 0xcc && c <= 0xcf:
		kind, n, hdr = mpInt, 1<<(c-0xcc), 1
	case c >= 0xd0 && c <= 0xd3:
		kind, n, hdr = mpInt, 1<<(c-0xd0), 1
	case c >= 0xd4 && c <= 0xd8:
		kind, n, hdr = mpExt, 1+(1<<(c-0xd4)), 1
	case c >= 0xd9 && c <= 0xdb:
		size := 1 << (c - 0xd9)
		kind, hdr = mpStr, 1+size
		n, err = sized(size)
	case c == 0xdc || c == 0xdd:
		size := 2 << (c - 0xdc)
		kind, hdr = mpArr, 1+size
		n, err = sized(size)
	case c == 0xde || c == 0xdf:
		size := 2 << (c - 0xde)
		kind, hdr = mpMap, 1+size
		n, err = sized(size)
	default:
		return 0, 0, 0, fmt.Errorf("%w: msgpack byte %#x", errPlanFormat, c)
	}
	if err != nil {
		return 0, 0, 0, err
	}
	left := len(b) - hdr
	switch kind {
	case mpArr:
		if n > left {
			return 0, 0, 0, fmt.Errorf("%w: msgpack array of %d in %d bytes", errPlanFormat, n, left)
		}
	case mpMap:
		if n > left/2 {
			return 0, 0, 0, fmt.Errorf("%w: msgpack map of %d in %d bytes", errPlanFormat, n, left)
		}
	default:
		if n > left {
			return 0, 0, 0, fmt.Errorf("%w: msgpack value of %d bytes in %d", errPlanFormat, n, left)
		}
	}
	return kind, n, hdr, nil
}

// mpSkip is the size of the value at the start of b.
func mpSkip(b []byte, depth int) (int, error) {
	return mpWalk(b, depth, nil)
}

// mpWalk is the size of the value at the start of b; it calls str, when
// not nil, with each string value below it (map keys left out).
func mpWalk(b []byte, depth int, str func(string) error) (int, error) {
	if depth > maxMsgpackDepth {
		return 0, fmt.Errorf("%w: msgpack nested more than %d deep", errPlanFormat, maxMsgpackDepth)
	}
	kind, n, hdr, err := mpHead(b)
	if err != nil {
		return 0, err
	}
	switch kind {
	case mpArr, mpMap:
		at := hdr
		for i := 0; i < n; i++ {
			if kind == mpMap {
				k, err := mpWalk(b[at:], depth+1, nil)
				if err != nil {
					return 0, err
				}
				at += k
			}
			k, err := mpWalk(b[at:], depth+1, str)
			if err != nil {
				return 0, err
			}
			at += k
		}
		return at, nil
	case mpStr:
		if str != nil {
			if err := str(string(b[hdr : hdr+n])); err != nil {
				return 0, err
			}
		}
	}
	return hdr + n, nil
}

// mpString is the string at the start of b, if it is one.
func mpString(b []byte) (string, bool) {
	kind, n, hdr, err := mpHead(b)
	if err != nil || kind != mpStr {
		return "", false
	}
	return string(b[hdr : hdr+n]), true
}

// mpInteger is the integer at the start of b, if it is one that fits.
func mpInteger(b []byte) (int64, bool) {
	kind, n, hdr, err := mpHead(b)
	if err != nil || kind != mpInt {
		return 0, false
	}
	c := b[0]
	p := b[hdr : hdr+n]
	switch {
	case c <= 0x7f:
		return int64(c), true
	case c >= 0xe0:
		return int64(int8(c)), true
	case c == 0xcc:
		return int64(p[0]), true
	case c == 0xcd:
		return int64(binary.BigEndian.Uint16(p)), true
	case c == 0xce:
		return int64(binary.BigEndian.Uint32(p)), true
	case c == 0xcf:
		v := binary.BigEndian.Uint64(p)
		if v > math.MaxInt64 {
			return 0, false
		}
		return int64(v), true
	case c == 0xd0:
		return int64(int8(p[0])), true
	case c == 0xd1:
		return int64(int16(binary.BigEndian.Uint16(p))), true
	case c == 0xd2:
		return int64(int32(binary.BigEndian.Uint32(p))), true
	default:
		return int64(binary.BigEndian.Uint64(p)), true
	}
}

// What following one step of a path found.
const (
	stepFound   = iota
	stepAbsent  // null, unknown, or no such attribute, key or index
	stepUnkeyed // an element of a set: it has no key to follow
)

// mpStep follows one path step into the value at the start of v: an
// attribute (an object's, a map key), or an element key (a list index, a
// map key). A value of a dynamic type is a pair of its type's JSON
// (bytes) and the value, and is looked into.
func mpStep(v []byte, st pathStep) ([]byte, int, error) {
	kind, n, hdr, err := mpHead(v)
	if err != nil {
		return nil, 0, err
	}
	if kind == mpArr && n == 2 {
		if k, _, _, err := mpHead(v[hdr:]); err == nil && k == mpBin {
			tl, err := mpSkip(v[hdr:], 0)
			if err != nil {
				return nil, 0, err
			}
			return mpStep(v[hdr+tl:], st)
		}
	}
	var name string
	var index int64 = -1
	isName := st.key == nil
	if isName {
		name = st.attr
	} else if s, ok := mpString(st.key); ok {
		name, isName = s, true
	} else if i, ok := mpInteger(st.key); ok {
		index = i
	}
	switch kind {
	case mpMap:
		if !isName {
			return nil, stepAbsent, nil
		}
		at := hdr
		for i := 0; i < n; i++ {
			kl, err := mpSkip(v[at:], 0)
			if err != nil {
				return nil, 0, err
			}
			key, isStr := mpString(v[at:])
			at += kl
			if isStr && key == name {
				return v[at:], stepFound, nil
			}
			vl, err := mpSkip(v[at:], 0)
			if err != nil {
				return nil, 0, err
			}
			at += vl
		}
		return nil, stepAbsent, nil
	case mpArr:
		if index < 0 {
			if st.key == nil {
				// An attribute of a list: no such thing.
				return nil, stepAbsent, nil
			}
			// A list's elements are keyed by number; any other key is a
			// set's element, which is its own key.
			return nil, stepUnkeyed, nil
		}
		at := hdr
		for i := int64(0); i < int64(n); i++ {
			if i == index {
				return v[at:], stepFound, nil
			}
			l, err := mpSkip(v[at:], 0)
			if err != nil {
				return nil, 0, err
			}
			at += l
		}
	}
	return nil, stepAbsent, nil
}
