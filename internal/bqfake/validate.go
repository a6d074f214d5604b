package bqfake

import (
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// BigQuery's value ranges: DATE 0001-01-01..9999-12-31 (days since the epoch) and
// TIMESTAMP 0001-01-01 00:00:00..9999-12-31 23:59:59.999999 UTC (microseconds).
const (
	minDateDays    = -719162
	maxDateDays    = 2932896
	minTimestampUS = -62135596800000000
	maxTimestampUS = 253402300799999999
)

// checkRow validates one serialized row against the plan without decoding it into a
// message: wire types, REQUIRED columns, value ranges, UTF-8. It returns "" for a good
// row and the reason otherwise.
func (p *msgPlan) checkRow(b []byte) string {
	var seen uint64
	var seenMore []bool
	if len(p.reqNames) > 64 {
		seenMore = make([]bool, len(p.reqNames))
	}
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "cannot decode the row with the writer schema: " + protowire.ParseError(n).Error()
		}
		if !num.IsValid() {
			return fmt.Sprintf("cannot decode the row with the writer schema: invalid field number %d", num)
		}
		b = b[n:]
		fp := p.field(num)
		if fp == nil { // unknown to the writer schema: skipped, as a proto parser does
			if n = protowire.ConsumeFieldValue(num, wt, b); n < 0 {
				return "cannot decode the row with the writer schema: " + protowire.ParseError(n).Error()
			}
			b = b[n:]
			continue
		}
		n, msg := fp.consume(wt, b)
		if msg != "" {
			return msg
		}
		b = b[n:]
		if fp.req >= 64 {
			seenMore[fp.req] = true
		} else if fp.req >= 0 {
			seen |= 1 << fp.req
		}
	}
	for i, name := range p.reqNames {
		if (i < 64 && seen&(1<<i) == 0) || (i >= 64 && !seenMore[i]) {
			return "missing required field: " + name
		}
	}
	if len(p.alwaysMissing) > 0 {
		return "missing required field: " + p.alwaysMissing[0]
	}
	return ""
}

// consume reads one occurrence of the field (a value, or a packed run of values).
func (fp *fieldPlan) consume(wt protowire.Type, b []byte) (int, string) {
	if wt == fp.wire {
		return fp.consumeOne(b)
	}
	if fp.list && wt == protowire.BytesType && fp.wire != protowire.BytesType {
		packed, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return 0, fp.decodeErr(n)
		}
		for len(packed) > 0 {
			m, msg := fp.consumeOne(packed)
			if msg != "" {
				return 0, msg
			}
			packed = packed[m:]
		}
		return n, ""
	}
	return 0, fmt.Sprintf("cannot decode field %s with the writer schema: wire type %d, want %d", fp.path, wt, fp.wire)
}

func (fp *fieldPlan) decodeErr(n int) string {
	return fmt.Sprintf("cannot decode field %s with the writer schema: %v", fp.path, protowire.ParseError(n))
}

func (fp *fieldPlan) consumeOne(b []byte) (int, string) {
	switch fp.wire {
	case protowire.VarintType:
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return 0, fp.decodeErr(n)
		}
		return n, fp.checkInt(signedOf(fp.kind, v))
	case protowire.Fixed32Type:
		v, n := protowire.ConsumeFixed32(b)
		if n < 0 {
			return 0, fp.decodeErr(n)
		}
		if fp.kind == protoreflect.FloatKind {
			return n, fp.checkFloat(float64(math.Float32frombits(v)))
		}
		return n, fp.checkInt(signedOf(fp.kind, uint64(v)))
	case protowire.Fixed64Type:
		v, n := protowire.ConsumeFixed64(b)
		if n < 0 {
			return 0, fp.decodeErr(n)
		}
		if fp.kind == protoreflect.DoubleKind {
			return n, fp.checkFloat(math.Float64frombits(v))
		}
		return n, fp.checkInt(signedOf(fp.kind, v))
	default:
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return 0, fp.decodeErr(n)
		}
		if fp.sub != nil {
			if msg := fp.sub.checkRow(v); msg != "" {
				return 0, msg
			}
			return n, ""
		}
		return n, fp.checkBytes(v)
	}
}

// signedOf interprets a raw wire value as the signed integer the kind encodes.
func signedOf(k protoreflect.Kind, v uint64) int64 {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sfixed32Kind:
		return int64(int32(v))
	case protoreflect.Sint32Kind:
		return int64(int32(protowire.DecodeZigZag(v & math.MaxUint32)))
	case protoreflect.Sint64Kind:
		return protowire.DecodeZigZag(v)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return int64(uint32(v))
	default:
		return int64(v)
	}
}

func (fp *fieldPlan) checkInt(v int64) string {
	switch fp.check {
	case checkDateInt:
		if v < minDateDays || v > maxDateDays {
			return fmt.Sprintf("field %s: %d days is out of the DATE range [0001-01-01, 9999-12-31]", fp.path, v)
		}
	case checkTimestampInt:
		if v < minTimestampUS || v > maxTimestampUS {
			return fmt.Sprintf("field %s: %d microseconds is out of the TIMESTAMP range [0001-01-01, 9999-12-31 23:59:59.999999]", fp.path, v)
		}
	case checkDatetimeInt:
		if dt := unpackDatetime(v); v < 0 || !dt.IsValid() || dt.Date.Year < 1 || dt.Date.Year > 9999 {
			return fmt.Sprintf("field %s: %d is not a valid packed DATETIME", fp.path, v)
		}
	case checkTimeInt:
		if v < 0 || v >= 1<<37 || !unpackTime(v).IsValid() {
			return fmt.Sprintf("field %s: %d is not a valid packed TIME", fp.path, v)
		}
	}
	return ""
}

func (fp *fieldPlan) checkFloat(f float64) string {
	if fp.check == checkFinite && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return fmt.Sprintf("field %s: %v is not a valid %s", fp.path, f, fp.col.typ)
	}
	return ""
}

func (fp *fieldPlan) checkBytes(v []byte) string {
	switch fp.check {
	case checkUTF8:
		if !utf8.Valid(v) {
			return fmt.Sprintf("field %s: string is not valid UTF-8", fp.path)
		}
	case checkJSON:
		if !json.Valid(v) {
			return fmt.Sprintf("field %s: not a valid JSON value", fp.path)
		}
	case checkNumericBytes:
		if len(v) > numericBytes[fp.col.typ] {
			return fmt.Sprintf("field %s: %d bytes is too long for %s", fp.path, len(v), fp.col.typ)
		}
	case checkParse:
		if !utf8.Valid(v) {
			return fmt.Sprintf("field %s: string is not valid UTF-8", fp.path)
		}
		if _, err := parseString(fp.col.typ, string(v)); err != nil {
			return fmt.Sprintf("field %s: %v", fp.path, err)
		}
	}
	return ""
}

// numericBytes is the longest bytes encoding of each decimal type: NUMERIC values fit in
// 128 bits, BIGNUMERIC in 256.
var numericBytes = map[string]int{typeNumeric: 16, typeBigNumeric: 32}
