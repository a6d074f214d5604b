package schemas

import (
	"bytes"
	"math/big"
	"testing"
)

// twos reads big-endian two's complement bytes back, independently of AppendDecimal.
func twos(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return n
}

// AppendDecimal writes the shortest two's complement bytes, which read back to the integer,
// after what dst held; and the edges of each length are where Java's BigInteger puts them.
func TestAppendDecimal(t *testing.T) {
	check := func(n *big.Int) {
		t.Helper()
		b := AppendDecimal([]byte("x"), n)
		if b[0] != 'x' {
			t.Fatalf("%s: dst's bytes are lost", n)
		}
		b = b[1:]
		if twos(b).Cmp(n) != 0 {
			t.Errorf("%s: %x reads back as %s", n, b, twos(b))
		}
		if len(b) > 1 && (b[0] == 0 && b[1]&0x80 == 0 || b[0] == 0xff && b[1]&0x80 != 0) {
			t.Errorf("%s: %x is not the shortest", n, b)
		}
	}
	for i := int64(-70000); i <= 70000; i += 7 {
		check(big.NewInt(i))
	}
	huge := new(big.Int).Lsh(big.NewInt(1), 300) // beyond the 256 bits of the stack buffer
	check(huge)
	check(new(big.Int).Neg(huge))
	for _, c := range []struct {
		n    int64
		want []byte
	}{
		{0, []byte{0}}, {1, []byte{1}}, {-1, []byte{0xff}}, {127, []byte{0x7f}}, {128, []byte{0, 0x80}},
		{-128, []byte{0x80}}, {-129, []byte{0xff, 0x7f}}, {255, []byte{0, 0xff}}, {-256, []byte{0xff, 0}},
	} {
		if got := AppendDecimal(nil, big.NewInt(c.n)); !bytes.Equal(got, c.want) {
			t.Errorf("%d: %x, want %x", c.n, got, c.want)
		}
	}
	if got := AppendTwosComplement(nil, []byte{0, 0, 0}, true); !bytes.Equal(got, []byte{0}) {
		t.Errorf("-0: %x, want 00", got)
	}
}
