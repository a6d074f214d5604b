package protobuf

import (
	"fmt"
	"testing"
)

// FuzzDecode decodes arbitrary bytes as t.All messages: no panic, and a message that decodes
// is a row the Encoder writes back into a message that decodes to the same row
// (go test -fuzz FuzzDecode ./schemas/protobuf/).
func FuzzDecode(f *testing.F) {
	all, _ := testMessages(f)
	enc, err := NewEncoder(all, mustSchema(f, all), Options{})
	if err != nil {
		f.Fatal(err)
	}
	seed, err := enc.Append(nil, fullRow())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Add([]byte{0x08, 0x96, 0x01})
	dec := NewDecoder(all)
	f.Fuzz(func(t *testing.T, data []byte) {
		row, err := dec.Decode(data)
		if err != nil {
			return
		}
		b, err := enc.Append(nil, row)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("%v: %v is not an *Error", row, err)
			}
			return // a value read but not writable (a string that is not UTF-8 in proto2)
		}
		again, err := dec.Decode(b)
		if err != nil || fmt.Sprint(again) != fmt.Sprint(row) {
			t.Fatalf("%v wrote %x, which reads back as %v, %v", row, b, again, err)
		}
	})
}
