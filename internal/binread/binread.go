// Package binread reads what encoding/binary's Append functions wrote, for the snapshots of
// window state: a Reader remembers its first failure, after which every read returns zero, so
// a decoder checks for damage once at the end rather than after every field.
package binread

import (
	"encoding/binary"
	"math"
)

// Reader reads B from the front. Damaged is the error a failed read records in Err.
type Reader struct {
	B       []byte
	Err     error
	Damaged error
}

// Fail records that the input is damaged and stops reading.
func (r *Reader) Fail() {
	if r.Err == nil {
		r.Err = r.Damaged
	}
	r.B = nil
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if len(r.B) == 0 {
		r.Fail()
		return 0
	}
	c := r.B[0]
	r.B = r.B[1:]
	return c
}

// Varint reads what binary.AppendVarint wrote.
func (r *Reader) Varint() int64 {
	v, n := binary.Varint(r.B)
	if n <= 0 {
		r.Fail()
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Uvarint reads what binary.AppendUvarint wrote.
func (r *Reader) Uvarint() uint64 {
	v, n := binary.Uvarint(r.B)
	if n <= 0 {
		r.Fail()
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Count reads a length that cannot be more than the bytes left (each item takes at least one).
func (r *Reader) Count() int {
	n := r.Uvarint()
	if n > uint64(len(r.B)) {
		r.Fail()
		return 0
	}
	return int(n)
}

// Bytes reads a length, then that many bytes (shared with B, capacity capped).
func (r *Reader) Bytes() []byte {
	n := r.Count()
	v := r.B[:n:n]
	r.B = r.B[n:]
	return v
}

// Float64 reads 8 big-endian bytes of an IEEE 754 float.
func (r *Reader) Float64() float64 {
	if len(r.B) < 8 {
		r.Fail()
		return 0
	}
	f := math.Float64frombits(binary.BigEndian.Uint64(r.B))
	r.B = r.B[8:]
	return f
}
