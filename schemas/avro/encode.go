package avro

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	havro "github.com/hamba/avro/v2"
	"github.com/sluicehq/sluice/schemas"
)

// Encoder encodes rows with one codec. One goroutine uses it at a time.
type Encoder struct {
	c *Codec
	w *havro.Writer
}

// NewEncoder returns an encoder of rows into the codec's values.
func (c *Codec) NewEncoder() *Encoder {
	return &Encoder{c: c, w: havro.NewWriter(nil, 512)}
}

// Append appends the binary encoding of row to dst; fields maps each field of the Avro record
// to the row's index of the same name (-1: the row has no such field, which writes null).
func (e *Encoder) Append(dst []byte, row schemas.Row, fields []int) ([]byte, error) {
	e.w.Reset(nil)
	for i, f := range e.c.root.fields {
		var v any
		if j := fields[i]; j >= 0 && j < len(row) {
			v = row[j]
		}
		if err := e.value(f.t, v); err != nil {
			return dst, err
		}
	}
	return append(dst, e.w.Buffer()...), nil
}

func (e *Encoder) value(t *avroType, v any) error {
	w := e.w
	if v == nil {
		if !t.nullable {
			return fmt.Errorf("avro field %q is null, but the Avro schema does not allow null there", t.path)
		}
		w.WriteLong(t.nullIdx)
		return nil
	}
	if t.nullable {
		w.WriteLong(t.valIdx)
	}
	mismatch := func() error {
		return fmt.Errorf("avro field %q: a %s value does not fit the Avro schema's %s", t.path, schemas.KindOf(v), t.describe())
	}
	switch t.kind {
	case avroBool:
		b, ok := v.(bool)
		if !ok {
			return mismatch()
		}
		w.WriteBool(b)
	case avroInt, avroLong:
		n, ok := toInt64(v)
		if !ok {
			return mismatch()
		}
		if t.kind == avroInt {
			if n < math.MinInt32 || n > math.MaxInt32 {
				return fmt.Errorf("avro field %q: %d does not fit an Avro int", t.path, n)
			}
			w.WriteInt(int32(n))
			return nil
		}
		w.WriteLong(n)
	case avroFloat, avroDouble:
		f, ok := toFloat64(v)
		if !ok {
			return mismatch()
		}
		if t.kind == avroFloat {
			w.WriteFloat(float32(f))
		} else {
			w.WriteDouble(f)
		}
	case avroString:
		s, ok := v.(string)
		if !ok {
			return mismatch()
		}
		w.WriteString(s)
	case avroEnum:
		s, ok := v.(string)
		if !ok {
			return mismatch()
		}
		i := slices.Index(t.symbols, s)
		if i < 0 {
			return fmt.Errorf("avro field %q: %q is not a symbol of the enum (%s)", t.path, s, strings.Join(t.symbols, ", "))
		}
		w.WriteInt(int32(i))
	case avroBytes, avroFixed:
		b, ok := v.([]byte)
		if !ok {
			return mismatch()
		}
		if t.kind == avroBytes {
			w.WriteBytes(b)
			return nil
		}
		if len(b) != t.size {
			return fmt.Errorf("avro field %q: %d bytes do not fit a fixed of %d", t.path, len(b), t.size)
		}
		_, _ = w.Write(b)
	case avroDate, avroTimestampMillis, avroTimestampMicros:
		ts, ok := v.(time.Time)
		if !ok {
			return mismatch()
		}
		switch t.kind {
		case avroDate:
			days := math.Floor(float64(ts.Unix()) / 86400)
			w.WriteInt(int32(days))
		case avroTimestampMillis:
			w.WriteLong(ts.UnixMilli())
		default:
			w.WriteLong(ts.UnixMicro())
		}
	case avroDecimalBytes, avroDecimalFixed:
		return e.decimal(t, v)
	case avroArray:
		items, ok := v.([]any)
		if !ok {
			return mismatch()
		}
		if len(items) > 0 {
			w.WriteBlockHeader(int64(len(items)), 0)
			for _, it := range items {
				if err := e.value(t.elem, it); err != nil {
					return err
				}
			}
		}
		w.WriteLong(0)
	case avroMap:
		m, ok := v.(map[string]any)
		if !ok {
			return mismatch()
		}
		if len(m) > 0 {
			w.WriteBlockHeader(int64(len(m)), 0)
			for _, k := range slices.Sorted(mapKeys(m)) {
				w.WriteString(k)
				if err := e.value(t.elem, m[k]); err != nil {
					return err
				}
			}
		}
		w.WriteLong(0)
	case avroRecord:
		m, ok := v.(map[string]any)
		if !ok {
			return mismatch()
		}
		for _, f := range t.fields {
			if err := e.value(f.t, m[f.name]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (e *Encoder) decimal(t *avroType, v any) error {
	var r *big.Rat
	switch x := v.(type) {
	case *big.Rat:
		r = x
	case int64:
		r = new(big.Rat).SetInt64(x)
	default:
		return fmt.Errorf("avro field %q: a %s value does not fit the Avro schema's %s", t.path, schemas.KindOf(v), t.describe())
	}
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.scale)), nil)))
	if !scaled.IsInt() {
		return fmt.Errorf("avro field %q: %s has more than %d decimal places", t.path, r.FloatString(t.scale+4), t.scale)
	}
	b := schemas.AppendDecimal(nil, scaled.Num())
	if t.kind == avroDecimalBytes {
		e.w.WriteBytes(b)
		return nil
	}
	if len(b) > t.size {
		return fmt.Errorf("avro field %q: %s does not fit a fixed of %d bytes", t.path, r.FloatString(t.scale), t.size)
	}
	pad := byte(0)
	if scaled.Num().Sign() < 0 {
		pad = 0xff
	}
	for range t.size - len(b) {
		_, _ = e.w.Write([]byte{pad})
	}
	_, _ = e.w.Write(b)
	return nil
}

func (t *avroType) describe() string {
	names := [...]string{"boolean", "int", "long", "float", "double", "string", "bytes", "enum", "fixed", "date",
		"timestamp-millis", "timestamp-micros", "decimal", "decimal", "array", "map", "record"}
	return names[t.kind]
}

func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == math.Trunc(n) && n >= math.MinInt64 && n < math.MaxInt64 {
			return int64(n), true
		}
	}
	return 0, false
}

func toFloat64(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// SchemaFor derives an Avro record schema from a row schema, for WriteToKafka with format
// AVRO and no schema: nullable fields are unions with null, nested structs are records named
// after their path.
func SchemaFor(s *schemas.Schema) (string, error) {
	rec, err := avroRecordFor(s.Fields, "sluice.Row", "")
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(rec)
	return string(b), err
}

func avroRecordFor(fields []schemas.Field, name, path string) (map[string]any, error) {
	out := make([]any, 0, len(fields))
	for _, f := range fields {
		t, err := avroTypeFor(f.Type, join(path, f.Name))
		if err != nil {
			return nil, err
		}
		if f.Nullable {
			t = []any{"null", t}
		}
		out = append(out, map[string]any{"name": f.Name, "type": t})
	}
	return map[string]any{"type": "record", "name": name, "fields": out}, nil
}

func avroTypeFor(t schemas.Type, path string) (any, error) {
	switch t.Kind {
	case schemas.Bool:
		return "boolean", nil
	case schemas.Int64:
		return "long", nil
	case schemas.Float64:
		return "double", nil
	case schemas.String:
		return "string", nil
	case schemas.Bytes:
		return "bytes", nil
	case schemas.Timestamp:
		return map[string]any{"type": "long", "logicalType": "timestamp-micros"}, nil
	case schemas.Date:
		return map[string]any{"type": "int", "logicalType": "date"}, nil
	case schemas.Decimal:
		p := t.Precision
		if p <= 0 {
			p = 38
		}
		return map[string]any{"type": "bytes", "logicalType": "decimal", "precision": p, "scale": t.Scale}, nil
	case schemas.Array, schemas.Map:
		if t.Elem == nil {
			break
		}
		elem, err := avroTypeFor(*t.Elem, path+"_item")
		if err != nil {
			return nil, err
		}
		if t.Kind == schemas.Array {
			return map[string]any{"type": "array", "items": elem}, nil
		}
		return map[string]any{"type": "map", "values": elem}, nil
	case schemas.Struct:
		return avroRecordFor(t.Fields, "sluice.Row_"+strings.ReplaceAll(path, ".", "_"), path)
	}
	return nil, fmt.Errorf("field %q holds %s values, which have no Avro type: give an Avro schema, or map the field to a typed one first", path, t)
}
