package schemas

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Offsets maps a source and partition to the next offset to read there.
type Offsets map[string]map[int32]int64

// Set records next as the next offset of source and partition.
func (o Offsets) Set(source string, partition int32, next int64) {
	m := o[source]
	if m == nil {
		m = make(map[int32]int64)
		o[source] = m
	}
	m[partition] = next
}

// Get returns the next offset of source and partition.
func (o Offsets) Get(source string, partition int32) (int64, bool) {
	next, ok := o[source][partition]
	return next, ok
}

// Delete removes the entry of source and partition, and the source when it has no other.
func (o Offsets) Delete(source string, partition int32) {
	delete(o[source], partition)
	if len(o[source]) == 0 {
		delete(o, source)
	}
}

// Covers reports whether the record at p is before the recorded next offset, i.e. already
// delivered by whoever holds these offsets.
func (o Offsets) Covers(p Position) bool {
	next, ok := o[p.Source][p.Partition]
	return ok && p.Offset < next
}

// Includes reports whether o holds every partition of other at or beyond other's offset.
func (o Offsets) Includes(other Offsets) bool {
	for src, parts := range other {
		for p, next := range parts {
			if have, ok := o.Get(src, p); !ok || have < next {
				return false
			}
		}
	}
	return true
}

// Clone returns a deep copy.
func (o Offsets) Clone() Offsets {
	c := make(Offsets, len(o))
	for s, m := range o {
		c[s] = maps.Clone(m)
	}
	return c
}

// Advance moves o forward to other's offsets: an entry of o only ever grows. It returns o.
func (o Offsets) Advance(other Offsets) Offsets {
	for s, m := range other {
		for p, n := range m {
			if cur, ok := o.Get(s, p); !ok || n > cur {
				o.Set(s, p, n)
			}
		}
	}
	return o
}

// Equal reports whether both hold the same entries.
func (o Offsets) Equal(other Offsets) bool {
	if len(o) != len(other) {
		return false
	}
	for s, m := range o {
		if !maps.Equal(m, other[s]) {
			return false
		}
	}
	return true
}

// Min returns, for every source and partition present in all of the given offsets, the
// smallest next offset. A partition missing from any of them is missing from the result, so
// the reader starts it at its default position.
func Min(all ...Offsets) Offsets {
	out := Offsets{}
	if len(all) == 0 {
		return out
	}
	for s, m := range all[0] {
	partitions:
		for p, n := range m {
			for _, other := range all[1:] {
				on, ok := other.Get(s, p)
				if !ok {
					continue partitions
				}
				n = min(n, on)
			}
			out.Set(s, p, n)
		}
	}
	return out
}

// String renders the offsets as "source[partition]=next" pairs in a stable order.
func (o Offsets) String() string {
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(o)) {
		for _, p := range slices.Sorted(maps.Keys(o[s])) {
			parts = append(parts, fmt.Sprintf("%s[%d]=%d", s, p, o[s][p]))
		}
	}
	return strings.Join(parts, " ")
}
