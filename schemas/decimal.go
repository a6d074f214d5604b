package schemas

import "math/big"

// The binary form of a decimal that Avro, Parquet and Java's BigInteger.toByteArray share: the
// unscaled integer (the value times 10^scale) as the shortest big-endian two's complement
// bytes. BigQuery's NUMERIC and BIGNUMERIC take the same bytes reversed (little-endian).

// AppendDecimal appends the unscaled integer n of a decimal to dst as the shortest big-endian
// two's complement bytes (0 is one zero byte, -128 is 0x80, 128 is 0x00 0x80).
func AppendDecimal(dst []byte, n *big.Int) []byte {
	var buf [32]byte // 256 bits hold a BIGNUMERIC or an Avro decimal of 76 digits
	mag := buf[:]
	if size := (n.BitLen() + 7) / 8; size > len(buf) {
		mag = make([]byte, size)
	}
	return AppendTwosComplement(dst, n.FillBytes(mag), n.Sign() < 0) // FillBytes writes |n|
}

// AppendTwosComplement appends the integer whose magnitude is mag (big-endian, leading zeros
// allowed) and whose sign is negative to dst, as the shortest big-endian two's complement
// bytes. It allocates nothing beyond growing dst.
func AppendTwosComplement(dst, mag []byte, negative bool) []byte {
	for len(mag) > 0 && mag[0] == 0 { // a 256-bit buffer holds mostly zeros: skip them first
		mag = mag[1:]
	}
	start := len(dst)
	dst = append(dst, 0) // room for the sign
	dst = append(dst, mag...)
	b := dst[start:]
	if negative { // -m = ^m + 1
		carry := byte(1)
		for i := len(b) - 1; i >= 0; i-- {
			b[i] = ^b[i] + carry
			if b[i] != 0 {
				carry = 0
			}
		}
	}
	// Drop the leading bytes that only repeat the sign bit of the next one.
	n := 0
	for n < len(b)-1 && (b[n] == 0 && b[n+1]&0x80 == 0 || b[n] == 0xff && b[n+1]&0x80 != 0) {
		n++
	}
	return append(dst[:start], b[n:]...)
}
