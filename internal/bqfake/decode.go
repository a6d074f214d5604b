package bqfake

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"time"

	"cloud.google.com/go/civil"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// decodeRow decodes a stored row into column name -> Go value, as Server.Rows documents.
func decodeRow(ws *writerSchema, b []byte) (map[string]any, error) {
	msg := dynamicpb.NewMessage(ws.desc)
	if err := (proto.UnmarshalOptions{AllowPartial: true, DiscardUnknown: true}).Unmarshal(b, msg); err != nil {
		return nil, fmt.Errorf("decode row: %w", err)
	}
	return decodeMessage(ws.plan, msg)
}

func decodeMessage(p *msgPlan, msg protoreflect.Message) (map[string]any, error) {
	out := make(map[string]any, len(p.cols))
	for i, c := range p.cols {
		fd := p.colFD[i]
		switch {
		case fd == nil && c.repeated():
			out[c.name] = []any{}
		case fd == nil:
			out[c.name] = nil
		case fd.IsList():
			list := msg.Get(fd).List()
			vals := make([]any, list.Len())
			for j := range vals {
				v, err := decodeValue(c, fd, p.colSub[i], list.Get(j))
				if err != nil {
					return nil, err
				}
				vals[j] = v
			}
			out[c.name] = vals
		case !msg.Has(fd) && !fd.HasDefault():
			out[c.name] = nil
		default:
			v, err := decodeValue(c, fd, p.colSub[i], msg.Get(fd))
			if err != nil {
				return nil, err
			}
			out[c.name] = v
		}
	}
	return out, nil
}

func decodeValue(c *column, fd protoreflect.FieldDescriptor, sub *msgPlan, v protoreflect.Value) (any, error) {
	kind := fd.Kind()
	if kind == protoreflect.StringKind {
		if v, err := parseString(c.typ, v.String()); v != nil || err != nil {
			return v, err
		}
	}
	switch c.typ {
	case typeRecord:
		return decodeMessage(sub, v.Message())
	case typeString:
		if kind == protoreflect.EnumKind {
			if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
				return string(ev.Name()), nil
			}
			return strconv.Itoa(int(v.Enum())), nil
		}
		return v.String(), nil
	case typeGeography, typeJSON:
		return v.String(), nil
	case typeBytes:
		if kind == protoreflect.StringKind {
			return []byte(v.String()), nil
		}
		return slices.Clone(v.Bytes()), nil
	case typeInteger:
		return intOf(kind, v), nil
	case typeFloat:
		return v.Float(), nil
	case typeBoolean:
		if kind == protoreflect.BoolKind {
			return v.Bool(), nil
		}
		return intOf(kind, v) != 0, nil
	case typeTimestamp:
		return time.UnixMicro(v.Int()).UTC(), nil
	case typeDate:
		return civil.DateOf(time.Unix(v.Int()*86400, 0).UTC()), nil
	case typeDatetime:
		return unpackDatetime(v.Int()), nil
	case typeTime:
		return unpackTime(v.Int()), nil
	case typeNumeric, typeBigNumeric:
		return decodeNumeric(c.typ, kind, v)
	}
	return nil, fmt.Errorf("column %s: unsupported type %s", c.name, c.typ)
}

func intOf(kind protoreflect.Kind, v protoreflect.Value) int64 {
	switch kind {
	case protoreflect.EnumKind:
		return int64(v.Enum())
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind:
		return int64(v.Uint())
	case protoreflect.BoolKind:
		if v.Bool() {
			return 1
		}
		return 0
	}
	return v.Int()
}

// The packed civil-time encodings of DATETIME and TIME in an int64: from the least
// significant bit, 20 bits of microseconds, then second (6), minute (6), hour (5), and for
// DATETIME day (5), month (4) and year.
func unpackTime(v int64) civil.Time {
	secs := v >> 20
	return civil.Time{
		Hour:       int(secs>>12) & 0x1f,
		Minute:     int(secs>>6) & 0x3f,
		Second:     int(secs) & 0x3f,
		Nanosecond: int(v&0xfffff) * 1000,
	}
}

func unpackDatetime(v int64) civil.DateTime {
	secs := v >> 20
	return civil.DateTime{
		Date: civil.Date{Year: int(secs >> 26), Month: time.Month((secs >> 22) & 0xf), Day: int(secs>>17) & 0x1f},
		Time: unpackTime(v & (1<<37 - 1)),
	}
}

// numericScale is the decimal scale of the bytes encoding of NUMERIC and BIGNUMERIC: a
// little-endian two's complement integer of value * 10^scale.
var numericScale = map[string]int64{typeNumeric: 9, typeBigNumeric: 38}

func decodeNumeric(typ string, kind protoreflect.Kind, v protoreflect.Value) (*big.Rat, error) {
	switch kind {
	case protoreflect.BytesKind:
		le := v.Bytes()
		be := make([]byte, len(le))
		for i, b := range le {
			be[len(le)-1-i] = b
		}
		n := new(big.Int).SetBytes(be)
		if len(be) > 0 && be[0]&0x80 != 0 { // negative: subtract 2^(8*len)
			n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(be))))
		}
		scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(numericScale[typ]), nil)
		return new(big.Rat).SetFrac(n, scale), nil
	case protoreflect.DoubleKind, protoreflect.FloatKind:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("invalid %s %v", typ, f)
		}
		return new(big.Rat).SetFloat64(f), nil
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind:
		return new(big.Rat).SetInt(new(big.Int).SetUint64(v.Uint())), nil
	}
	return new(big.Rat).SetInt64(v.Int()), nil
}

var errTimeRange = errors.New("out of range [0001-01-01, 9999-12-31]")

// parseString decodes a string written to a column of a non-string type; it returns nil,
// nil for the string types.
func parseString(typ, s string) (any, error) {
	switch typ {
	case typeTimestamp:
		return parseTimestamp(s)
	case typeDate:
		return parseDate(s)
	case typeDatetime:
		return parseDatetime(s)
	case typeTime:
		t, err := civil.ParseTime(s)
		if err != nil {
			return nil, fmt.Errorf("invalid TIME %q", s)
		}
		return t, nil
	case typeNumeric, typeBigNumeric:
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			return nil, fmt.Errorf("invalid %s %q", typ, s)
		}
		return r, nil
	}
	return nil, nil
}

// parseTimestamp accepts the canonical TIMESTAMP string forms: RFC 3339, or a space for
// the T, with or without a zone (UTC when absent).
func parseTimestamp(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < 1 || t.Year() > 9999 {
				return time.Time{}, fmt.Errorf("TIMESTAMP %q: %w", s, errTimeRange)
			}
			return t.UTC().Truncate(time.Microsecond), nil
		}
	}
	return time.Time{}, fmt.Errorf("invalid TIMESTAMP %q", s)
}

func parseDate(s string) (civil.Date, error) {
	d, err := civil.ParseDate(s)
	if err != nil {
		return civil.Date{}, fmt.Errorf("invalid DATE %q: %w", s, err)
	}
	if d.Year < 1 || d.Year > 9999 {
		return civil.Date{}, fmt.Errorf("DATE %q: %w", s, errTimeRange)
	}
	return d, nil
}

func parseDatetime(s string) (civil.DateTime, error) {
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	dt, err := civil.ParseDateTime(s)
	if err != nil {
		return civil.DateTime{}, fmt.Errorf("invalid DATETIME %q", s)
	}
	if dt.Date.Year < 1 || dt.Date.Year > 9999 {
		return civil.DateTime{}, fmt.Errorf("DATETIME %q: %w", s, errTimeRange)
	}
	return dt, nil
}

// cellValue renders a decoded value as tabledata.list does: scalars as strings, RECORDs as
// {"f": [{"v": ...}]}, REPEATED as [{"v": ...}], TIMESTAMP as microseconds (with
// formatOptions.useInt64Timestamp) or as seconds in floating point.
func cellValue(c *column, v any, int64TS bool) any {
	if v == nil {
		return nil
	}
	if c.repeated() {
		list := v.([]any)
		out := make([]any, len(list))
		elem := *c
		elem.mode = modeNullable
		for i, e := range list {
			out[i] = map[string]any{"v": cellValue(&elem, e, int64TS)}
		}
		return out
	}
	switch x := v.(type) {
	case map[string]any:
		f := make([]any, len(c.fields))
		for i, sc := range c.fields {
			f[i] = map[string]any{"v": cellValue(sc, x[sc.name], int64TS)}
		}
		return map[string]any{"f": f}
	case string:
		return x
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		if int64TS {
			return strconv.FormatInt(x.UnixMicro(), 10)
		}
		return strconv.FormatFloat(float64(x.UnixMicro())/1e6, 'E', -1, 64)
	case civil.Date:
		return x.String()
	case civil.DateTime:
		return x.String()
	case civil.Time:
		return x.String()
	case *big.Rat:
		return x.FloatString(int(numericScale[c.typ]))
	}
	return fmt.Sprint(v)
}
