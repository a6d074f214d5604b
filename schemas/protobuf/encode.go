package protobuf

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sluicehq/sluice/internal/wiretype"
	"github.com/sluicehq/sluice/schemas"
)

// Put appends one non-nil value of a field, without its tag, in the wire type of the field's
// kind: a varint, a fixed32, a fixed64 or a length-prefixed payload.
type Put func(dst []byte, v any) ([]byte, error)

// Options adapt an Encoder to a destination; the zero Options write rows as docs/kafka.md says.
type Options struct {
	// Field returns the field of md that the row field (or struct key) name goes into, or nil
	// when md has none; nil Field means md.Fields().ByName(name).
	Field func(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor
	// Value returns the writer of values of row type t into fd, a field of a scalar kind (not
	// a message), or nil for the default conversion. It is asked once per field, by
	// NewEncoder; an error is the field's, reported under its path.
	Value func(fd protoreflect.FieldDescriptor, t schemas.Type) (Put, error)
}

// Encoder writes rows of one schema as messages of one type: a row field sets the message
// field its name matches, a null or missing one leaves it unset (an error when the field is
// required). Fields are written in the descriptor's order, map entries in key order. It is
// safe for concurrent use.
type Encoder struct {
	nIn    int
	fields []boundField
}

// boundField is a message field with the row field (or struct key) its value comes from. It
// holds its fieldEnc, not a pointer to it: one load less per field and row.
type boundField struct {
	fieldEnc
	in  int    // the row field's index, for a row
	key string // the row field's name, for a struct
}

// fieldEnc writes one field of a message.
type fieldEnc struct {
	fd       protoreflect.FieldDescriptor
	required bool
	// write appends the tag and the value(s) of a non-nil v.
	write func(dst []byte, v any) ([]byte, error)
}

// NewEncoder prepares the writing of rows of in as messages of md. An error is an *Error.
func NewEncoder(md protoreflect.MessageDescriptor, in *schemas.Schema, opts Options) (*Encoder, error) {
	c := &compiler{opts: opts, anyBodies: map[protoreflect.FullName]*anyBody{}}
	if c.opts.Field == nil {
		c.opts.Field = func(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
			return md.Fields().ByName(protoreflect.Name(name))
		}
	}
	fields, err := c.bind(md, in.Fields)
	if err != nil {
		return nil, err
	}
	return &Encoder{nIn: len(in.Fields), fields: fields}, nil
}

// Append appends the message of row to dst. An error is about the row's data only (a bad
// record), an *Error unless the row is shorter than its schema; dst comes back as it was
// given, so what it held is kept. A longer row is written without the values beyond its
// schema: fields a source added at the rows' end mid-run (ReadFromKafka's
// follow_schema_updates), which the sink was not built for.
func (e *Encoder) Append(dst []byte, row schemas.Row) ([]byte, error) {
	if len(row) < e.nIn {
		return dst, fmt.Errorf("the row has %d values, its schema %d fields", len(row), e.nIn)
	}
	start := len(dst)
	var err error
	for i := range e.fields { // fieldEnc.put, inlined: this loop is the hot path
		b := &e.fields[i]
		v := row[b.in]
		if v == nil {
			if b.required {
				return dst[:start], inField(ErrNullRequired, b.fd)
			}
			continue
		}
		if dst, err = b.write(dst, v); err != nil {
			return dst[:start], inField(err, b.fd)
		}
	}
	return dst, nil
}

// put writes v into the field: nothing for null, unless the field is required.
func (f *fieldEnc) put(dst []byte, v any) ([]byte, error) {
	if v == nil {
		if f.required {
			return dst, inField(ErrNullRequired, f.fd)
		}
		return dst, nil
	}
	out, err := f.write(dst, v)
	if err != nil {
		return dst, inField(err, f.fd)
	}
	return out, nil
}

var errMissingRequired = errors.New("the message requires it, but the rows do not have it")

// compiler makes the writers of one Encoder.
type compiler struct {
	opts      Options
	anyBodies map[protoreflect.FullName]*anyBody // struct writers of values of any type, by message
}

// bind pairs the fields fs of a row or struct with the fields of md they go into, in md's
// order; a row field md lacks is left out (its caller reports it where it has words for it).
func (c *compiler) bind(md protoreflect.MessageDescriptor, fs []schemas.Field) ([]boundField, error) {
	var out []boundField
	bound := make([]bool, md.Fields().Len())
	for j, f := range fs {
		fd := c.opts.Field(md, f.Name)
		if fd == nil || bound[fd.Index()] {
			continue
		}
		enc, err := c.field(fd, f.Type)
		if err != nil {
			return nil, inField(err, fd)
		}
		bound[fd.Index()] = true
		out = append(out, boundField{fieldEnc: *enc, in: j, key: f.Name})
	}
	for i := range md.Fields().Len() {
		if fd := md.Fields().Get(i); fd.Cardinality() == protoreflect.Required && !bound[i] {
			return nil, inField(errMissingRequired, fd)
		}
	}
	slices.SortFunc(out, func(a, b boundField) int { return a.fd.Index() - b.fd.Index() })
	return out, nil
}

// elemOf is the type of t's elements, or any.
func elemOf(t schemas.Type) schemas.Type {
	if (t.Kind == schemas.Array || t.Kind == schemas.Map) && t.Elem != nil {
		return *t.Elem
	}
	return schemas.Type{Kind: schemas.Any}
}

// field returns the writer of values of t into fd.
func (c *compiler) field(fd protoreflect.FieldDescriptor, t schemas.Type) (*fieldEnc, error) {
	f := &fieldEnc{fd: fd, required: fd.Cardinality() == protoreflect.Required}
	var err error
	switch {
	case fd.IsMap():
		f.write, err = c.entries(fd, fd.MapKey(), fd.MapValue(), elemOf(t), true)
	case fd.IsList() && t.Kind == schemas.Map && fd.Message() != nil:
		// Beam's map: a repeated message of key and value, one per entry.
		md := fd.Message()
		k, v := c.opts.Field(md, "key"), c.opts.Field(md, "value")
		if k == nil || v == nil {
			return nil, fmt.Errorf("message %s holds a map only with the fields key and value", md.FullName())
		}
		f.write, err = c.entries(fd, k, v, elemOf(t), false)
	case fd.IsList():
		var put Put
		if put, err = c.put(fd, elemOf(t)); err == nil && fd.IsPacked() {
			f.write = packed(protowire.AppendTag(nil, fd.Number(), protowire.BytesType), put)
		} else if err == nil {
			f.write = repeated(protowire.AppendTag(nil, fd.Number(), wiretype.Of(fd.Kind())), put)
		}
	default:
		var put Put
		if put, err = c.put(fd, t); err == nil {
			f.write = single(fd, put)
		}
	}
	return f, err
}

// put returns the writer of one value of t (an element, for a repeated field) into fd.
func (c *compiler) put(fd protoreflect.FieldDescriptor, t schemas.Type) (Put, error) {
	if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
		return c.message(fd, t)
	}
	if c.opts.Value != nil {
		if put, err := c.opts.Value(fd, t); err != nil || put != nil {
			return put, err
		}
	}
	switch t.Kind {
	case schemas.Struct, schemas.Array, schemas.Map:
		return nil, fmt.Errorf("is a %s field, which cannot hold %s values", fd.Kind(), t)
	}
	return scalarPut(fd)
}

// message returns the writer of one value of t into the message field fd: a timestamp, the
// value of a wrapper type, or a struct.
func (c *compiler) message(fd protoreflect.FieldDescriptor, t schemas.Type) (Put, error) {
	md := fd.Message()
	var body Put
	switch w := wrapped(md); {
	case md.FullName() == timestampName:
		body = putTimestamp
	case w != nil:
		inner, err := c.put(w, t)
		if err != nil {
			return nil, err
		}
		body = Put(single(w, inner))
	case t.Kind == schemas.Struct:
		fields, err := c.bind(md, t.Fields)
		if err != nil {
			return nil, err
		}
		body = func(dst []byte, v any) ([]byte, error) {
			vals, ok := v.(map[string]any)
			if !ok {
				return dst, &KindError{What: "message " + string(md.FullName()), Want: "a struct", Value: v}
			}
			var err error
			for i := range fields {
				if dst, err = fields[i].put(dst, vals[fields[i].key]); err != nil {
					return dst, err
				}
			}
			return dst, nil
		}
	default:
		body = c.anyStruct(md).put
	}
	if fd.Kind() == protoreflect.GroupKind {
		end := protowire.AppendTag(nil, fd.Number(), protowire.EndGroupType)
		return func(dst []byte, v any) ([]byte, error) {
			dst, err := body(dst, v)
			return append(dst, end...), err
		}, nil
	}
	return func(dst []byte, v any) ([]byte, error) {
		mark := len(dst)
		dst, err := body(append(dst, 0), v)
		if err != nil {
			return dst, err
		}
		return fixLength(dst, mark), nil
	}, nil
}

// putTimestamp writes a google.protobuf.Timestamp: seconds (1) and nanos (2), zeros left out.
func putTimestamp(dst []byte, v any) ([]byte, error) {
	t, ok := v.(time.Time)
	if !ok {
		return dst, &KindError{What: string(timestampName), Want: "a timestamp", Value: v}
	}
	if s := t.Unix(); s != 0 {
		dst = protowire.AppendVarint(append(dst, 1<<3|byte(protowire.VarintType)), uint64(s))
	}
	if n := t.Nanosecond(); n != 0 {
		dst = protowire.AppendVarint(append(dst, 2<<3|byte(protowire.VarintType)), uint64(n))
	}
	return dst, nil
}

// anyBody writes structs whose fields have no type of their own (schemaless values) as
// messages of md: each key names a field, and a key md lacks is an error.
type anyBody struct {
	md       protoreflect.MessageDescriptor
	find     func(protoreflect.MessageDescriptor, string) protoreflect.FieldDescriptor
	fields   []*fieldEnc // by field index
	required []protoreflect.FieldDescriptor
}

// anyStruct returns the writer of schemaless structs into md, made once per message so that a
// message that contains itself is written as deep as the value goes.
func (c *compiler) anyStruct(md protoreflect.MessageDescriptor) *anyBody {
	if b := c.anyBodies[md.FullName()]; b != nil {
		return b
	}
	b := &anyBody{md: md, find: c.opts.Field, fields: make([]*fieldEnc, md.Fields().Len())}
	c.anyBodies[md.FullName()] = b
	for i := range md.Fields().Len() {
		fd := md.Fields().Get(i)
		f, err := c.field(fd, schemas.Type{Kind: schemas.Any})
		if err != nil { // a kind no value can be written into: say so when a value comes
			f = &fieldEnc{fd: fd, write: func(dst []byte, _ any) ([]byte, error) { return dst, err }}
		}
		b.fields[i] = f
		if fd.Cardinality() == protoreflect.Required {
			b.required = append(b.required, fd)
		}
	}
	return b
}

func (b *anyBody) put(dst []byte, v any) ([]byte, error) {
	vals, ok := v.(map[string]any)
	if !ok {
		return dst, &KindError{What: "message " + string(b.md.FullName()), Want: "a struct", Value: v}
	}
	type set struct {
		f *fieldEnc
		v any
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	sets := make([]set, 0, len(vals))
	for _, k := range keys {
		fd := b.find(b.md, k)
		if fd == nil {
			return dst, fmt.Errorf("message %s has no field %q", b.md.FullName(), k)
		}
		sets = append(sets, set{b.fields[fd.Index()], vals[k]})
	}
	for _, fd := range b.required {
		if !slices.ContainsFunc(sets, func(s set) bool { return s.f.fd == fd && s.v != nil }) {
			return dst, inField(ErrNullRequired, fd)
		}
	}
	slices.SortFunc(sets, func(x, y set) int { return x.f.fd.Index() - y.f.fd.Index() })
	var err error
	for _, s := range sets {
		if dst, err = s.f.put(dst, s.v); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// single writes a field that holds one value. A field without presence (proto3's plain
// scalars) leaves out its zero value, as protobuf's own encoders do, except in map entries.
func single(fd protoreflect.FieldDescriptor, put Put) func([]byte, any) ([]byte, error) {
	tag := protowire.AppendTag(nil, fd.Number(), wiretype.Of(fd.Kind()))
	if fd.HasPresence() || fd.Message() != nil || fd.ContainingMessage().IsMapEntry() {
		return func(dst []byte, v any) ([]byte, error) { return put(append(dst, tag...), v) }
	}
	return func(dst []byte, v any) ([]byte, error) {
		start := len(dst)
		dst, err := put(append(dst, tag...), v)
		if err == nil && allZero(dst[start+len(tag):]) { // 0, false, "", the first enum value
			dst = dst[:start]
		}
		return dst, err
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// repeated writes an array as one tagged value per element.
func repeated(tag []byte, put Put) func([]byte, any) ([]byte, error) {
	return func(dst []byte, v any) ([]byte, error) {
		xs, ok := v.([]any)
		if !ok {
			return dst, &KindError{What: "a repeated field", Want: "an array", Value: v}
		}
		var err error
		for i, x := range xs {
			if x == nil {
				return dst, inElement(ErrNullElement, i)
			}
			if dst, err = put(append(dst, tag...), x); err != nil {
				return dst, inElement(err, i)
			}
		}
		return dst, nil
	}
}

// packed writes an array of varints or fixed-size numbers as one length-prefixed run, as a
// packed field (proto3's default for them, proto2's [packed=true]) says.
func packed(tag []byte, put Put) func([]byte, any) ([]byte, error) {
	return func(dst []byte, v any) ([]byte, error) {
		xs, ok := v.([]any)
		if !ok {
			return dst, &KindError{What: "a repeated field", Want: "an array", Value: v}
		}
		if len(xs) == 0 {
			return dst, nil
		}
		dst = append(dst, tag...)
		mark := len(dst)
		dst = append(dst, 0)
		var err error
		for i, x := range xs {
			if x == nil {
				return dst, inElement(ErrNullElement, i)
			}
			if dst, err = put(dst, x); err != nil {
				return dst, inElement(err, i)
			}
		}
		return fixLength(dst, mark), nil
	}
}

// entries writes a map as one entry message of key and value per key, in key order: fd is a
// protobuf map (protoMap, whose values cannot be null) or a repeated message of key and value
// (Beam's map, where a null value is left unset).
func (c *compiler) entries(fd, keyFD, valFD protoreflect.FieldDescriptor, elem schemas.Type, protoMap bool) (func([]byte, any) ([]byte, error), error) {
	putKey, err := keyWriter(keyFD)
	if err != nil {
		return nil, inField(err, keyFD)
	}
	val, err := c.field(valFD, elem)
	if err != nil {
		return nil, inField(err, valFD)
	}
	tag := protowire.AppendTag(nil, fd.Number(), protowire.BytesType)
	return func(dst []byte, x any) ([]byte, error) {
		m, ok := x.(map[string]any)
		if !ok {
			return dst, &KindError{What: "a map field", Want: "a map", Value: x}
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var err error
		for _, k := range keys {
			dst = append(dst, tag...)
			mark := len(dst)
			if dst, err = putKey(append(dst, 0), k); err != nil {
				return dst, &KeyError{Key: k, Err: err}
			}
			switch mv := m[k]; {
			case mv != nil:
				if dst, err = val.write(dst, mv); err != nil {
					return dst, inEntry(err, k)
				}
			case val.required:
				return dst, inEntry(ErrNullRequired, k)
			case protoMap:
				return dst, inEntry(ErrNullMapValue, k)
			}
			dst = fixLength(dst, mark)
		}
		return dst, nil
	}, nil
}

// keyWriter returns the writer of a map key (the row's key text) with its tag: a string, a
// boolean or an integer.
func keyWriter(fd protoreflect.FieldDescriptor) (func([]byte, string) ([]byte, error), error) {
	tag := protowire.AppendTag(nil, fd.Number(), wiretype.Of(fd.Kind()))
	switch fd.Kind() {
	case protoreflect.StringKind:
		return func(dst []byte, k string) ([]byte, error) {
			if !utf8.ValidString(k) {
				return dst, ErrInvalidUTF8
			}
			return protowire.AppendString(append(dst, tag...), k), nil
		}, nil
	case protoreflect.BoolKind:
		return func(dst []byte, k string) ([]byte, error) {
			b, err := strconv.ParseBool(k)
			if err != nil {
				return dst, errNotBool
			}
			return protowire.AppendVarint(append(dst, tag...), protowire.EncodeBool(b)), nil
		}, nil
	}
	put, err := scalarPut(fd)
	if err != nil {
		return nil, err
	}
	return func(dst []byte, k string) ([]byte, error) {
		n, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return dst, errNotInteger
		}
		return put(append(dst, tag...), n)
	}, nil
}

// fixLength writes at dst[mark], where one byte was reserved, the varint length of what
// follows it, moving that along when the varint needs more bytes.
func fixLength(dst []byte, mark int) []byte {
	n := len(dst) - mark - 1
	if n < 0x80 {
		dst[mark] = byte(n)
		return dst
	}
	size := protowire.SizeVarint(uint64(n))
	dst = append(dst, make([]byte, size-1)...)
	copy(dst[mark+size:], dst[mark+1:mark+1+n])
	protowire.AppendVarint(dst[:mark], uint64(n))
	return dst
}
