package avro

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strings"
	"time"
	"unsafe"

	havro "github.com/hamba/avro/v2"
	"github.com/sluicehq/sluice/schemas"
)

// avroKind is the kind of an Avro type as the codec reads and writes it.
type avroKind uint8

const (
	avroBool avroKind = iota
	avroInt
	avroLong
	avroFloat
	avroDouble
	avroString
	avroBytes
	avroEnum
	avroFixed
	avroDate
	avroTimestampMillis
	avroTimestampMicros
	avroDecimalBytes
	avroDecimalFixed
	avroArray
	avroMap
	avroRecord
)

// avroType is an Avro type compiled for decoding binary values into row values and back, with
// the row types that ParseSchema gives the same schema.
type avroType struct {
	kind avroKind
	// nullable is set for a union of null and one type, whose branches are nullIdx and valIdx.
	nullable        bool
	nullIdx, valIdx int64
	elem            *avroType   // items of an array, values of a map
	fields          []avroField // fields of a record
	symbols         []string    // enum
	size            int         // fixed
	scale           int         // decimal
	path            string      // where the type is in the schema, for messages

	// Reading values written with another schema (resolve.go).
	width       int           // record: the number of fields of the reader's record
	defaults    []avroDefault // record: the reader's fields the writer's record lacks
	toFloat     bool          // int or long: read as a float64 (promoted to float or double)
	nullBad     bool          // a null the writer wrote where the reader allows none is an error
	unknown     []string      // enum: the writer's symbols the reader lacks ("" where it has them)
	enumDefault string        // enum: the reader's default symbol, if any
}

// avroField is a field of a record. dst is where its value goes in the reader's row (its index
// in the record, or -1 for a writer's field the reader does not have: read and dropped).
type avroField struct {
	name    string
	t       *avroType
	dst     int
	aliases []string
	def     any   // the default as a row value, when hasDef
	hasDef  bool  // the field has a default that sluice could convert
	defErr  error // why the field's default cannot be used, if it has one
}

// avroDefault is a reader's field filled with its default.
type avroDefault struct {
	dst   int
	name  string
	value any
}

// Codec reads and writes the Avro binary encoding of one record schema as rows of the
// schema ParseSchema gives it.
type Codec struct {
	schema      *schemas.Schema
	root        *avroType
	fingerprint [32]byte // of the schema's canonical form
}

// NewCodec compiles an Avro record schema given as JSON text.
func NewCodec(text string) (*Codec, error) {
	schema, err := ParseSchema(text) // checks what rows can hold, with sluice's messages
	if err != nil {
		return nil, err
	}
	parsed, err := havro.ParseWithCache(text, "", &havro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("avro schema: %w", err)
	}
	root, err := compileAvro(parsed, "")
	if err != nil {
		return nil, err
	}
	return &Codec{schema: schema, root: root, fingerprint: parsed.Fingerprint()}, nil
}

// Schema returns the rows' schema: the one ParseSchema gives the codec's Avro schema.
func (c *Codec) Schema() *schemas.Schema { return c.schema }

// Writer is how values written with a writer's schema read into rows of a codec's schema
// (Codec.Resolve).
type Writer struct{ root *avroType }

// Resolve returns how to read values written with the Avro schema text (the writer's, id in a
// schema registry, for messages) into rows of the codec's schema: the codec's own when text is
// the same schema, else the writer's schema resolved to the codec's as Avro's schema
// resolution says.
func (c *Codec) Resolve(id int, text string) (*Writer, error) {
	parsed, err := havro.ParseWithCache(text, "", &havro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("schema id %d: avro schema: %w", id, err)
	}
	if parsed.Fingerprint() == c.fingerprint {
		return &Writer{c.root}, nil
	}
	if _, ok := parsed.(*havro.RecordSchema); !ok {
		return nil, fmt.Errorf("schema id %d is an Avro %s, not a record", id, parsed.Type())
	}
	w, err := compileAvro(parsed, "")
	if err == nil {
		var root *avroType
		if root, err = resolveAvro(w, c.root); err == nil {
			return &Writer{root}, nil
		}
	}
	return nil, fmt.Errorf("the writer's schema (id %d) cannot be read with the reader's schema: %w", id, err)
}

func compileAvro(s havro.Schema, path string) (*avroType, error) {
	if ref, ok := s.(*havro.RefSchema); ok {
		s = ref.Schema()
	}
	switch x := s.(type) {
	case *havro.UnionSchema:
		var t *avroType
		var nullIdx, valIdx int64 = -1, -1
		for i, b := range x.Types() {
			if b.Type() == havro.Null {
				nullIdx = int64(i)
				continue
			}
			var err error
			if t, err = compileAvro(b, path); err != nil {
				return nil, err
			}
			valIdx = int64(i)
		}
		if t == nil || len(x.Types()) != 2 || nullIdx < 0 {
			return nil, fmt.Errorf("avro field %q: only unions of null and one type are supported", path)
		}
		c := *t
		c.nullable, c.nullIdx, c.valIdx = true, nullIdx, valIdx
		return &c, nil
	case *havro.PrimitiveSchema:
		return compilePrimitive(x, path)
	case *havro.EnumSchema:
		return &avroType{kind: avroEnum, symbols: x.Symbols(), enumDefault: x.Default(), path: path}, nil
	case *havro.FixedSchema:
		if d, ok := x.Logical().(*havro.DecimalLogicalSchema); ok {
			return &avroType{kind: avroDecimalFixed, size: x.Size(), scale: d.Scale(), path: path}, nil
		}
		return &avroType{kind: avroFixed, size: x.Size(), path: path}, nil
	case *havro.ArraySchema:
		elem, err := compileAvro(x.Items(), path+"[]")
		return &avroType{kind: avroArray, elem: elem, path: path}, err
	case *havro.MapSchema:
		elem, err := compileAvro(x.Values(), join(path, "*"))
		return &avroType{kind: avroMap, elem: elem, path: path}, err
	case *havro.RecordSchema:
		t := &avroType{kind: avroRecord, path: path, width: len(x.Fields())}
		for i, f := range x.Fields() {
			ft, err := compileAvro(f.Type(), join(path, f.Name()))
			if err != nil {
				return nil, err
			}
			af := avroField{name: f.Name(), t: ft, dst: i, aliases: f.Aliases()}
			if f.HasDefault() {
				af.def, af.defErr = defaultValue(ft, f.Default())
				af.hasDef = af.defErr == nil
			}
			t.fields = append(t.fields, af)
		}
		return t, nil
	}
	return nil, fmt.Errorf("avro field %q: type %s is not supported", path, s.Type())
}

func compilePrimitive(p *havro.PrimitiveSchema, path string) (*avroType, error) {
	var logical havro.LogicalType
	if l := p.Logical(); l != nil {
		logical = l.Type()
	}
	t := &avroType{path: path}
	switch p.Type() {
	case havro.Boolean:
		t.kind = avroBool
	case havro.Int:
		t.kind = avroInt
		if logical == havro.Date {
			t.kind = avroDate
		}
	case havro.Long:
		t.kind = avroLong
		switch logical {
		case havro.TimestampMillis, havro.LocalTimestampMillis:
			t.kind = avroTimestampMillis
		case havro.TimestampMicros, havro.LocalTimestampMicros:
			t.kind = avroTimestampMicros
		}
	case havro.Float:
		t.kind = avroFloat
	case havro.Double:
		t.kind = avroDouble
	case havro.String:
		t.kind = avroString
	case havro.Bytes:
		t.kind = avroBytes
		if d, ok := p.Logical().(*havro.DecimalLogicalSchema); ok {
			t.kind, t.scale = avroDecimalBytes, d.Scale()
		}
	default:
		return nil, fmt.Errorf("avro field %q: type %s is not supported", path, p.Type())
	}
	return t, nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Decoder decodes values of one codec. One goroutine uses it at a time.
type Decoder struct {
	c *Codec
	r *havro.Reader
	n int   // length of the value being decoded
	e error // the first semantic error of the value being decoded
}

// NewDecoder returns a decoder of the codec's values.
func (c *Codec) NewDecoder() *Decoder {
	return &Decoder{c: c, r: havro.NewReader(nil, 0)}
}

// Decode decodes one binary-encoded record into a row.
func (d *Decoder) Decode(data []byte) (schemas.Row, error) {
	return d.decodeAs(d.c.root, data)
}

// DecodeWritten decodes one record written with w's schema into a row of the codec's schema.
func (d *Decoder) DecodeWritten(w *Writer, data []byte) (schemas.Row, error) {
	return d.decodeAs(w.root, data)
}

// decodeAs decodes one record written with root, a record type of the codec's schema or one
// resolved from a writer's schema to it (resolveAvro), into a row of the codec's schema.
func (d *Decoder) decodeAs(root *avroType, data []byte) (schemas.Row, error) {
	if len(data) == 0 && len(root.fields) > 0 {
		return nil, errors.New("avro: the record value is empty")
	}
	d.r.Reset(data)
	d.r.Error, d.e, d.n = nil, nil, len(data)
	row := make(schemas.Row, root.width)
	for _, f := range root.fields {
		v := d.value(f.t)
		if err := d.err(); err != nil {
			return nil, err
		}
		if f.dst >= 0 {
			row[f.dst] = v
		}
	}
	for _, def := range root.defaults {
		row[def.dst] = def.value
	}
	// The reader has no exported position: a byte past the end means the record is longer
	// than the schema says.
	d.r.Peek()
	if d.r.Error == nil {
		return nil, errors.New("avro: the record has bytes after its last field: it was written with another schema")
	}
	return row, nil
}

func (d *Decoder) err() error {
	if d.e != nil {
		return d.e
	}
	if err := d.r.Error; err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errors.New("avro: the record ends early: it was written with another schema, or is not Avro")
		}
		return fmt.Errorf("avro: %s", strings.TrimPrefix(err.Error(), "avro: "))
	}
	return nil
}

func (d *Decoder) fail(t *avroType, format string, args ...any) {
	if d.e == nil {
		d.e = fmt.Errorf("avro field %q: %s", t.path, fmt.Sprintf(format, args...))
	}
}

func (d *Decoder) value(t *avroType) any {
	if d.e != nil || d.r.Error != nil {
		return nil
	}
	if t.nullable {
		switch idx := d.r.ReadLong(); idx {
		case t.nullIdx:
			if t.nullBad {
				d.fail(t, "the writer's schema wrote null, which the reader's schema does not allow here")
			}
			return nil
		case t.valIdx:
		default:
			d.fail(t, "union branch %d does not exist", idx)
			return nil
		}
	}
	r := d.r
	switch t.kind {
	case avroBool:
		return r.ReadBool()
	case avroInt:
		if t.toFloat {
			return float64(r.ReadInt())
		}
		return int64(r.ReadInt())
	case avroLong:
		if t.toFloat {
			return float64(r.ReadLong())
		}
		return r.ReadLong()
	case avroFloat:
		return float64(r.ReadFloat())
	case avroDouble:
		return r.ReadDouble()
	case avroString:
		return d.str(t)
	case avroBytes:
		return d.bytes(t)
	case avroEnum:
		i := r.ReadInt()
		if i < 0 || int(i) >= len(t.symbols) {
			d.fail(t, "enum index %d is out of range", i)
			return nil
		}
		if t.unknown != nil && t.unknown[i] != "" {
			d.fail(t, "the writer's enum symbol %q is not a symbol of the reader's enum, which has no default", t.unknown[i])
			return nil
		}
		return t.symbols[i]
	case avroFixed:
		b := make([]byte, t.size)
		r.Read(b)
		return b
	case avroDate:
		return time.Unix(int64(r.ReadInt())*86400, 0).UTC()
	case avroTimestampMillis:
		return time.UnixMilli(r.ReadLong()).UTC()
	case avroTimestampMicros:
		return time.UnixMicro(r.ReadLong()).UTC()
	case avroDecimalBytes:
		return decimalOf(d.bytes(t), t.scale)
	case avroDecimalFixed:
		b := make([]byte, t.size)
		r.Read(b)
		return decimalOf(b, t.scale)
	case avroArray:
		return d.array(t)
	case avroMap:
		return d.mapValue(t)
	case avroRecord:
		m := make(map[string]any, t.width)
		for _, f := range t.fields {
			if v := d.value(f.t); f.dst >= 0 {
				m[f.name] = v
			}
		}
		for _, def := range t.defaults {
			m[def.name] = def.value
		}
		return m
	}
	d.fail(t, "unsupported type")
	return nil
}

// bytes reads a bytes value, refusing lengths beyond the record (hamba's reader allocates
// what the length says before it finds out that the data is shorter).
func (d *Decoder) bytes(t *avroType) []byte {
	n := d.r.ReadLong()
	if n < 0 || n > int64(d.n) {
		d.fail(t, "a length of %d does not fit in a record of %d bytes", n, d.n)
		return nil
	}
	b := make([]byte, n)
	d.r.Read(b)
	return b
}

// str reads a string value; its bytes are fresh and never written again.
func (d *Decoder) str(t *avroType) string {
	b := d.bytes(t)
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// blockCount reads the next block header of an array or map, refusing counts that cannot fit
// in the record, so a damaged value cannot make the decoder allocate without bound.
func (d *Decoder) blockCount(t *avroType) int {
	n, _ := d.r.ReadBlockHeader()
	if n < 0 || n > int64(d.n) {
		d.fail(t, "a block of %d items does not fit in a record of %d bytes", n, d.n)
		return 0
	}
	return int(n)
}

func (d *Decoder) array(t *avroType) any {
	out := []any{}
	for {
		n := d.blockCount(t)
		if n == 0 || d.e != nil || d.r.Error != nil {
			return out
		}
		if len(out)+n > d.n {
			d.fail(t, "more items than the record has bytes")
			return out
		}
		out = slices.Grow(out, n)
		for range n {
			out = append(out, d.value(t.elem))
		}
	}
}

func (d *Decoder) mapValue(t *avroType) any {
	out := map[string]any{}
	for {
		n := d.blockCount(t)
		if n == 0 || d.e != nil || d.r.Error != nil {
			return out
		}
		for range n {
			k := d.str(t)
			out[k] = d.value(t.elem)
		}
		if len(out) > d.n {
			d.fail(t, "more entries than the record has bytes")
			return out
		}
	}
}

// decimalOf reads a big-endian two's complement unscaled value.
func decimalOf(b []byte, scale int) *big.Rat {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return new(big.Rat).SetFrac(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
}
