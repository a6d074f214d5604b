package confluent

import (
	"encoding/binary"
	"errors"
)

// The Confluent wire format: a value starts with the magic byte 0 and the schema's id in the
// registry as a 4-byte big-endian integer, then the encoded value.
const (
	magic     = 0
	headerLen = 5
)

// ErrNotWire is the decode error of a value that is not in the Confluent wire format.
var ErrNotWire = errors.New("the value is not in the Confluent wire format: it does not start with the magic byte 0 and a 4-byte schema id")

// Split returns the schema id of a value in the Confluent wire format and the encoded value
// after its header.
func Split(v []byte) (int, []byte, error) {
	if len(v) < headerLen || v[0] != magic {
		return 0, nil, ErrNotWire
	}
	return int(binary.BigEndian.Uint32(v[1:headerLen])), v[headerLen:], nil
}

// wireHeader returns the header of values written with schema id.
func Header(id int) []byte {
	return binary.BigEndian.AppendUint32([]byte{magic}, uint32(id))
}
