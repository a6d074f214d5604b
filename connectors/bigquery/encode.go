package bigquery

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	bq "cloud.google.com/go/bigquery"
	"cloud.google.com/go/bigquery/storage/managedwriter/adapt"
	"github.com/sluicehq/sluice/schemas"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Wire encodings, as the Storage Write API documents them for the proto types
// adapt.StorageSchemaToProto2Descriptor gives each column
// (https://cloud.google.com/bigquery/docs/supported-data-types, formerly
// https://cloud.google.com/bigquery/docs/write-api#data_type_conversions):
//   - TIMESTAMP: int64 microseconds since the Unix epoch;
//   - DATE: int32 days since the Unix epoch, -719162 (0001-01-01) to 2932896 (9999-12-31);
//   - DATETIME, TIME: int64 packed as CivilTimeEncoder does (https://github.com/googleapis/java-bigquerystorage/blob/main/google-cloud-bigquerystorage/src/main/java/com/google/cloud/bigquery/storage/v1/CivilTimeEncoder.java);
//   - NUMERIC, BIGNUMERIC: bytes as BigDecimalByteStringEncoder writes them (same directory);
//   - JSON, GEOGRAPHY (WKT or GeoJSON), STRING: string; BYTES: bytes; BOOL: bool; INT64:
//     int64; FLOAT64: double;
//   - REPEATED: a repeated field, packed where the descriptor says so; RECORD: a message.

// encoder writes rows of one input schema as the table's proto rows. Safe for concurrent use.
type encoder struct {
	desc   *descriptorpb.DescriptorProto
	nIn    int
	fields []topField
}

// topField is a column the rows have, with the field's position in a row.
type topField struct {
	in int
	f  *fieldEnc
}

// fieldEnc writes one column of a row or of a record.
type fieldEnc struct {
	name     string // the column's name, for errors
	required bool
	// write appends the key and the value(s) of a non-nil v.
	write func(dst []byte, v any) ([]byte, error)
}

// putFn appends one non-nil value without its key: a varint, a fixed64 or a length-prefixed
// payload.
type putFn func(dst []byte, v any) ([]byte, error)

// newEncoder prepares the encoding of rows of in as rows of the table: the proto descriptor
// comes from the table's schema (adapt's conversion, normalized), and each input field is
// written into its column as checkCompatible allows.
func newEncoder(table bq.Schema, in *schemas.Schema) (*encoder, error) {
	if err := checkCompatible(table, in); err != nil {
		return nil, err
	}
	cols, err := descriptorColumns(table, in)
	if err != nil {
		return nil, err
	}
	ts, err := adapt.BQSchemaToStorageTableSchema(cols)
	if err != nil {
		return nil, fmt.Errorf("converting the table schema for the Storage Write API: %w", err)
	}
	d, err := adapt.StorageSchemaToProto2Descriptor(ts, "root")
	if err != nil {
		return nil, fmt.Errorf("making a proto descriptor of the table schema: %w", err)
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, fmt.Errorf("making a proto descriptor of the table schema: got a %T, not a message", d)
	}
	dp, err := adapt.NormalizeDescriptor(md)
	if err != nil {
		return nil, fmt.Errorf("normalizing the table's proto descriptor: %w", err)
	}
	// Encode against the normalized descriptor: it is the one the server decodes with.
	file, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name: new("root.proto"), Syntax: new("proto2"), MessageType: []*descriptorpb.DescriptorProto{dp},
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("loading the table's normalized proto descriptor: %w", err)
	}
	e := &encoder{desc: dp, nIn: len(in.Fields)}
	fds := file.Messages().Get(0).Fields()
	for i, c := range cols {
		j := fieldIndex(in.Fields, c.Name)
		if j < 0 {
			continue
		}
		f, err := newFieldEnc(in.Fields[j].Type, c, fds.ByNumber(protowire.Number(i+1)))
		if err != nil {
			return nil, underField(err, c.Name)
		}
		e.fields = append(e.fields, topField{in: j, f: f})
	}
	return e, nil
}

// Descriptor returns the normalized descriptor of the rows Encode writes, for
// managedwriter.WithSchemaDescriptor. It is shared: callers must not modify it.
func (e *encoder) Descriptor() *descriptorpb.DescriptorProto { return e.desc }

// Encode appends one serialized row to dst. An error is about the row's data only (a bad
// record): it names the field and the value, and dst comes back as it was given, so the rows
// already in it are kept.
func (e *encoder) Encode(dst []byte, row schemas.Row) ([]byte, error) {
	if len(row) != e.nIn {
		return dst, fmt.Errorf("the row has %d values, its schema %d fields", len(row), e.nIn)
	}
	start := len(dst)
	var err error
	for _, tf := range e.fields {
		v := row[tf.in]
		if v == nil {
			if tf.f.required {
				return dst[:start], &fieldPathError{tf.f.name, errNullRequired}
			}
			continue
		}
		if dst, err = tf.f.write(dst, v); err != nil {
			return dst[:start], underField(err, tf.f.name)
		}
	}
	return dst, nil
}

var (
	errNullRequired = errors.New("is REQUIRED in the table, but the row holds null there")
	errNullElement  = errors.New("is null, which a BigQuery array cannot hold")
)

// descriptorColumns returns the table's columns with canonical type names, without those the
// rows do not have and adapt cannot describe (INTERVAL): the Write API matches proto fields
// to columns by name, so a writer may leave columns out.
func descriptorColumns(table bq.Schema, in *schemas.Schema) (bq.Schema, error) {
	out := make(bq.Schema, 0, len(table))
	for _, c := range table {
		cc := canonicalColumn(c)
		if _, err := adapt.BQSchemaToStorageTableSchema(bq.Schema{cc}); err != nil {
			if fieldIndex(in.Fields, c.Name) < 0 {
				continue
			}
			return nil, underField(fmt.Errorf("has a type the Storage Write API client cannot describe: %w", err), c.Name)
		}
		out = append(out, cc)
	}
	return out, nil
}

// newFieldEnc returns the writer of values of t into column c, whose proto field is fd.
func newFieldEnc(t schemas.Type, c *bq.FieldSchema, fd protoreflect.FieldDescriptor) (*fieldEnc, error) {
	if fd == nil {
		return nil, errors.New("has no field in the proto descriptor made from the table schema")
	}
	f := &fieldEnc{name: c.Name, required: c.Required && !c.Repeated}
	switch t.Kind {
	case schemas.Map:
		w, err := newMapWriter(*t.Elem, c, fd)
		if err != nil {
			return nil, err
		}
		f.write = w
	case schemas.Array:
		put, wt, err := newPut(*t.Elem, c, fd)
		if err != nil {
			return nil, err
		}
		if fd.IsPacked() {
			f.write = packedWriter(protowire.AppendTag(nil, fd.Number(), protowire.BytesType), put)
		} else {
			f.write = repeatedWriter(protowire.AppendTag(nil, fd.Number(), wt), put)
		}
	default:
		put, wt, err := newPut(t, c, fd)
		if err != nil {
			return nil, err
		}
		tag := protowire.AppendTag(nil, fd.Number(), wt)
		f.write = func(dst []byte, v any) ([]byte, error) { return put(append(dst, tag...), v) }
	}
	return f, nil
}

func repeatedWriter(tag []byte, put putFn) func([]byte, any) ([]byte, error) {
	return func(dst []byte, v any) ([]byte, error) {
		xs, ok := v.([]any)
		if !ok {
			return dst, mismatch(v, "an array")
		}
		var err error
		for i, x := range xs {
			if x == nil {
				return dst, &fieldPathError{"[" + strconv.Itoa(i) + "]", errNullElement}
			}
			if dst, err = put(append(dst, tag...), x); err != nil {
				return dst, underField(err, "["+strconv.Itoa(i)+"]")
			}
		}
		return dst, nil
	}
}

// packedWriter writes an array of varints or fixed64s as one length-prefixed run, as the
// descriptor's [packed=true] says.
func packedWriter(tag []byte, put putFn) func([]byte, any) ([]byte, error) {
	return func(dst []byte, v any) ([]byte, error) {
		xs, ok := v.([]any)
		if !ok {
			return dst, mismatch(v, "an array")
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
				return dst, &fieldPathError{"[" + strconv.Itoa(i) + "]", errNullElement}
			}
			if dst, err = put(dst, x); err != nil {
				return dst, underField(err, "["+strconv.Itoa(i)+"]")
			}
		}
		return fixLength(dst, mark), nil
	}
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

// recordEnc writes a struct (map[string]any keyed by the input's field names) as a RECORD.
type recordEnc struct {
	fields []recordField
}

type recordField struct {
	key string // the input's field name
	f   *fieldEnc
}

func newRecordEnc(fs []schemas.Field, cols bq.Schema, md protoreflect.MessageDescriptor) (*recordEnc, error) {
	r := &recordEnc{}
	for i, c := range cols {
		j := fieldIndex(fs, c.Name)
		if j < 0 {
			continue
		}
		f, err := newFieldEnc(fs[j].Type, c, md.Fields().ByNumber(protowire.Number(i+1)))
		if err != nil {
			return nil, underField(err, c.Name)
		}
		r.fields = append(r.fields, recordField{key: fs[j].Name, f: f})
	}
	return r, nil
}

func (r *recordEnc) put(dst []byte, v any) ([]byte, error) {
	vals, ok := v.(map[string]any)
	if !ok {
		return dst, mismatch(v, "a struct")
	}
	mark := len(dst)
	dst = append(dst, 0)
	var err error
	for _, rf := range r.fields {
		x := vals[rf.key]
		if x == nil {
			if rf.f.required {
				return dst, &fieldPathError{rf.f.name, errNullRequired}
			}
			continue
		}
		if dst, err = rf.f.write(dst, x); err != nil {
			return dst, underField(err, rf.f.name)
		}
	}
	return fixLength(dst, mark), nil
}

// newMapWriter writes a map as a REPEATED RECORD of key and value, one entry per key in
// sorted order (Beam's representation).
func newMapWriter(elem schemas.Type, c *bq.FieldSchema, fd protoreflect.FieldDescriptor) (func([]byte, any) ([]byte, error), error) {
	if err := checkKind(fd, protoreflect.MessageKind); err != nil {
		return nil, err
	}
	md := fd.Message()
	k, v := findColumn(c.Schema, mapKeyField), findColumn(c.Schema, mapValueField)
	keyFD := md.Fields().ByNumber(protowire.Number(k + 1))
	if err := checkKind(keyFD, protoreflect.StringKind); err != nil {
		return nil, underField(err, c.Schema[k].Name)
	}
	val, err := newFieldEnc(elem, c.Schema[v], md.Fields().ByNumber(protowire.Number(v+1)))
	if err != nil {
		return nil, underField(err, c.Schema[v].Name)
	}
	tag := protowire.AppendTag(nil, fd.Number(), protowire.BytesType)
	keyTag := protowire.AppendTag(nil, keyFD.Number(), protowire.BytesType)
	return func(dst []byte, x any) ([]byte, error) {
		m, ok := x.(map[string]any)
		if !ok {
			return dst, mismatch(x, "a map")
		}
		keys := make([]string, 0, len(m))
		for key := range m {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		var err error
		for _, key := range keys {
			if !utf8.ValidString(key) {
				return dst, fmt.Errorf("has the key %s, which is not valid UTF-8", describe(key))
			}
			dst = append(dst, tag...)
			mark := len(dst)
			dst = protowire.AppendString(append(append(dst, 0), keyTag...), key)
			if mv := m[key]; mv != nil {
				if dst, err = val.write(dst, mv); err != nil {
					return dst, underField(err, "["+key+"]")
				}
			} else if val.required {
				return dst, &fieldPathError{"[" + key + "]", errNullRequired}
			}
			dst = fixLength(dst, mark)
		}
		return dst, nil
	}, nil
}

// newPut returns the writer of one value of t (not an array or a map) into the element type
// of column c, and its wire type.
func newPut(t schemas.Type, c *bq.FieldSchema, fd protoreflect.FieldDescriptor) (putFn, protowire.Type, error) {
	if t.Kind == schemas.Struct {
		if err := checkKind(fd, protoreflect.MessageKind); err != nil {
			return nil, 0, err
		}
		r, err := newRecordEnc(t.Fields, c.Schema, fd.Message())
		if err != nil {
			return nil, 0, err
		}
		return r.put, protowire.BytesType, nil
	}
	put, kind := scalarPut(t.Kind, canonicalType(c.Type), c)
	if put == nil {
		return nil, 0, fmt.Errorf("has type %s in the table, which sluice cannot write values of type %s to", sqlTypeName(c), t)
	}
	if err := checkKind(fd, kind); err != nil {
		return nil, 0, err
	}
	switch kind {
	case protoreflect.DoubleKind:
		return put, protowire.Fixed64Type, nil
	case protoreflect.StringKind, protoreflect.BytesKind:
		return put, protowire.BytesType, nil
	}
	return put, protowire.VarintType, nil
}

func checkKind(fd protoreflect.FieldDescriptor, want protoreflect.Kind) error {
	if fd == nil {
		return errors.New("has no field in the proto descriptor made from the table schema")
	}
	if fd.Kind() != want {
		return fmt.Errorf("is a proto %s in the descriptor made from the table schema, where sluice writes a %s", fd.Kind(), want)
	}
	return nil
}

// scalarPut returns the writer of a value of kind k into a column of type ft, with the proto
// kind it writes, for each pair in accepts; nil for any other pair.
func scalarPut(k schemas.Kind, ft bq.FieldType, c *bq.FieldSchema) (putFn, protoreflect.Kind) {
	switch {
	case k == schemas.Bool && ft == bq.BooleanFieldType:
		return putBool, protoreflect.BoolKind
	case k == schemas.Int64 && ft == bq.IntegerFieldType:
		return putInt64, protoreflect.Int64Kind
	case k == schemas.Int64 && ft == bq.FloatFieldType:
		return putInt64AsFloat, protoreflect.DoubleKind
	case (k == schemas.Int64 || k == schemas.Decimal) && (ft == bq.NumericFieldType || ft == bq.BigNumericFieldType):
		return newDecimalSpec(c).put, protoreflect.BytesKind
	case k == schemas.Float64 && ft == bq.FloatFieldType:
		return putFloat64, protoreflect.DoubleKind
	case k == schemas.String && (ft == bq.StringFieldType || ft == bq.GeographyFieldType):
		return putString, protoreflect.StringKind
	case k == schemas.String && ft == bq.JSONFieldType:
		return putJSONText, protoreflect.StringKind
	case k == schemas.String && ft == bq.DateTimeFieldType:
		return putDateTimeString, protoreflect.Int64Kind
	case k == schemas.String && ft == bq.TimeFieldType:
		return putTimeString, protoreflect.Int64Kind
	case k == schemas.Bytes && ft == bq.BytesFieldType:
		return putBytes, protoreflect.BytesKind
	case (k == schemas.Timestamp || k == schemas.Date) && ft == bq.TimestampFieldType:
		return putTimestamp, protoreflect.Int64Kind
	case k == schemas.Timestamp && ft == bq.DateTimeFieldType:
		return putTimestampAsDateTime, protoreflect.Int64Kind
	case k == schemas.Date && ft == bq.DateFieldType:
		return putDate, protoreflect.Int32Kind
	case k == schemas.Date && ft == bq.DateTimeFieldType:
		return putDateAsDateTime, protoreflect.Int64Kind
	case k == schemas.Any && (ft == bq.JSONFieldType || ft == bq.StringFieldType):
		return putJSON, protoreflect.StringKind
	}
	return nil, 0
}

func putBool(dst []byte, v any) ([]byte, error) {
	x, ok := v.(bool)
	if !ok {
		return dst, mismatch(v, "a boolean")
	}
	return protowire.AppendVarint(dst, protowire.EncodeBool(x)), nil
}

func putInt64(dst []byte, v any) ([]byte, error) {
	x, ok := v.(int64)
	if !ok {
		return dst, mismatch(v, "an integer")
	}
	return protowire.AppendVarint(dst, uint64(x)), nil
}

// putInt64AsFloat writes an integer into a FLOAT64 column when the float holds it exactly.
func putInt64AsFloat(dst []byte, v any) ([]byte, error) {
	x, ok := v.(int64)
	if !ok {
		return dst, mismatch(v, "an integer")
	}
	f := float64(x)
	if f >= 0x1p63 || int64(f) != x {
		return dst, fmt.Errorf("holds %d, which a FLOAT64 cannot hold exactly", x)
	}
	return protowire.AppendFixed64(dst, math.Float64bits(f)), nil
}

func putFloat64(dst []byte, v any) ([]byte, error) {
	x, ok := v.(float64)
	if !ok {
		return dst, mismatch(v, "a number")
	}
	return protowire.AppendFixed64(dst, math.Float64bits(x)), nil
}

// putString writes a STRING or GEOGRAPHY (WKT or GeoJSON, which BigQuery checks) value.
func putString(dst []byte, v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return dst, mismatch(v, "a string")
	}
	if !utf8.ValidString(s) {
		return dst, fmt.Errorf("holds %s, which is not valid UTF-8", describe(s))
	}
	return protowire.AppendString(dst, s), nil
}

// putJSONText writes a string holding JSON text into a JSON column.
func putJSONText(dst []byte, v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return dst, mismatch(v, "a string")
	}
	if !utf8.ValidString(s) || !json.Valid([]byte(s)) {
		return dst, fmt.Errorf("holds %s, which is not JSON text (the column is JSON)", describe(s))
	}
	return protowire.AppendString(dst, s), nil
}

// putJSON writes schemaless JSON as JSON text (encoding/json: map keys sorted, so the text of
// a value is always the same).
func putJSON(dst []byte, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, fmt.Errorf("holds %s, which cannot be written as JSON: %w", describe(v), err)
	}
	return protowire.AppendBytes(dst, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})), nil
}

func putBytes(dst []byte, v any) ([]byte, error) {
	x, ok := v.([]byte)
	if !ok {
		return dst, mismatch(v, "bytes")
	}
	return protowire.AppendBytes(dst, x), nil
}

// BigQuery's TIMESTAMP, DATE and DATETIME hold years 1 to 9999.
var minTime, endTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)

func timeValue(v any, want string) (time.Time, error) {
	t, ok := v.(time.Time)
	if !ok {
		return t, mismatch(v, want)
	}
	if t.Before(minTime) || !t.Before(endTime) {
		return t, fmt.Errorf("holds %s, which is outside BigQuery's range (years 1 to 9999)", describe(v))
	}
	return t, nil
}

// putTimestamp writes a TIMESTAMP: int64 microseconds since the Unix epoch, digits below the
// microsecond dropped (towards the past).
func putTimestamp(dst []byte, v any) ([]byte, error) {
	t, err := timeValue(v, "a timestamp")
	if err != nil {
		return dst, err
	}
	return protowire.AppendVarint(dst, uint64(t.UnixMicro())), nil
}

// putDate writes a DATE: int32 days since the Unix epoch (of the date in UTC).
func putDate(dst []byte, v any) ([]byte, error) {
	t, err := timeValue(v, "a date")
	if err != nil {
		return dst, err
	}
	days := t.Unix() / 86400
	if t.Unix()%86400 < 0 {
		days--
	}
	return protowire.AppendVarint(dst, uint64(days)), nil
}

// packDateTime returns the DATETIME of t's wall clock in the int64 the Write API takes
// (CivilTimeEncoder.encodePacked64DatetimeMicros: year 14 bits, month 4, day 5, hour 5,
// minute 6, second 6, microsecond 20).
func packDateTime(t time.Time) int64 {
	y, mo, d := t.Date()
	return int64(y)<<46 | int64(mo)<<42 | int64(d)<<37 | packTime(t)
}

// packTime returns the TIME of t's wall clock in the int64 the Write API takes
// (CivilTimeEncoder.encodePacked64TimeMicros: hour 5 bits, minute 6, second 6, microsecond 20).
func packTime(t time.Time) int64 {
	h, mi, s := t.Clock()
	return (int64(h)<<12|int64(mi)<<6|int64(s))<<20 | int64(t.Nanosecond()/1000)
}

// putTimestampAsDateTime writes a timestamp's UTC wall clock as a DATETIME.
func putTimestampAsDateTime(dst []byte, v any) ([]byte, error) {
	t, err := timeValue(v, "a timestamp")
	if err != nil {
		return dst, err
	}
	return protowire.AppendVarint(dst, uint64(packDateTime(t.UTC()))), nil
}

// putDateAsDateTime writes a date as the DATETIME of its midnight.
func putDateAsDateTime(dst []byte, v any) ([]byte, error) {
	t, err := timeValue(v, "a date")
	if err != nil {
		return dst, err
	}
	y, m, d := t.UTC().Date()
	return protowire.AppendVarint(dst, uint64(packDateTime(time.Date(y, m, d, 0, 0, 0, 0, time.UTC)))), nil
}

// The DATETIME and TIME literals a string may hold
// (https://cloud.google.com/bigquery/docs/reference/standard-sql/lexical#datetime_literals).
var dateTimeLayouts = [...]string{"2006-1-2 15:04:05", "2006-1-2T15:04:05", "2006-1-2"}

// parseCivil parses s with the first layout that takes it, to at most microseconds.
func parseCivil(s string, layouts ...string) (time.Time, bool) {
	for _, l := range layouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, t.Nanosecond()%1000 == 0
		}
	}
	return time.Time{}, false
}

func putDateTimeString(dst []byte, v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return dst, mismatch(v, "a string")
	}
	t, ok := parseCivil(s, dateTimeLayouts[:]...)
	if !ok || t.Year() < 1 {
		return dst, fmt.Errorf("holds %s, which is not a DATETIME literal (YYYY-MM-DD HH:MM:SS, at most 6 fraction digits)", describe(s))
	}
	return protowire.AppendVarint(dst, uint64(packDateTime(t))), nil
}

func putTimeString(dst []byte, v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return dst, mismatch(v, "a string")
	}
	t, ok := parseCivil(s, "15:04:05")
	if !ok {
		return dst, fmt.Errorf("holds %s, which is not a TIME literal (HH:MM:SS, at most 6 fraction digits)", describe(s))
	}
	return protowire.AppendVarint(dst, uint64(packTime(t))), nil
}

// decimalSpec is what a NUMERIC or BIGNUMERIC column takes. On the wire a value is the integer
// value×10^9 (NUMERIC) or value×10^38 (BIGNUMERIC) as little-endian two's complement bytes
// (BigDecimalByteStringEncoder in the Java client). The column takes values with at most
// scale fraction digits whose wire integer's magnitude is below limPos (limNeg if negative).
type decimalSpec struct {
	wireScale, scale   int
	limPos, limNeg     u256
	errScale, errRange error
}

func newDecimalSpec(c *bq.FieldSchema) *decimalSpec {
	d := &decimalSpec{wireScale: numericScale, scale: numericScale}
	intDigits := numericIntDigits
	isBig := canonicalType(c.Type) == bq.BigNumericFieldType
	if isBig {
		d.wireScale, d.scale, intDigits = bigNumericScale, bigNumericScale, bigNumericIntDigits
	}
	if c.Precision > 0 { // a parameterized NUMERIC(P, S)
		d.scale, intDigits = int(c.Scale), int(c.Precision-c.Scale)
	}
	if isBig && c.Precision == 0 { // BIGNUMERIC is the 256-bit range
		d.limPos, d.limNeg = u256{3: 1 << 63}, u256{0: 1, 3: 1 << 63}
	} else { // |value| < 10^intDigits
		d.limPos = u256{1}
		d.limPos.mulPow(10, intDigits+d.wireScale)
		d.limNeg = d.limPos
	}
	d.errScale = fmt.Errorf("has more than %d digits after the decimal point (the column is %s)", d.scale, sqlTypeName(c))
	d.errRange = fmt.Errorf("is out of the range of %s", sqlTypeName(c))
	return d
}

// put writes an integer or a *big.Rat, exactly or not at all: nothing is rounded.
func (d *decimalSpec) put(dst []byte, v any) ([]byte, error) {
	var mag u256
	var neg bool
	var err error
	switch x := v.(type) {
	case int64:
		neg = x < 0
		mag, err = d.scaled(absU64(x), 1)
	case *big.Rat:
		if x == nil {
			return dst, mismatch(v, "a decimal")
		}
		mag, neg, err = d.scaledRat(x)
	default:
		return dst, mismatch(v, "a decimal")
	}
	if err == nil && (!neg && mag.cmp(d.limPos) >= 0 || neg && mag.cmp(d.limNeg) >= 0) {
		err = d.errRange
	}
	if err != nil {
		return dst, fmt.Errorf("holds %s, which %w", describe(v), err)
	}
	return appendTwos(dst, mag, neg), nil
}

// scaled returns num/den×10^wireScale for a fraction in lowest terms.
func (d *decimalSpec) scaled(num, den uint64) (u256, error) {
	a, b := 0, 0
	for den%2 == 0 {
		den, a = den/2, a+1
	}
	for den%5 == 0 {
		den, b = den/5, b+1
	}
	if den != 1 || a > d.scale || b > d.scale {
		return u256{}, d.errScale
	}
	w := u256{num}
	if !w.mulPow(2, d.wireScale-a) || !w.mulPow(5, d.wireScale-b) {
		return u256{}, d.errRange
	}
	return w, nil
}

func (d *decimalSpec) scaledRat(r *big.Rat) (u256, bool, error) {
	num := r.Num()
	neg := num.Sign() < 0
	if num.IsInt64() && (r.IsInt() || r.Denom().IsUint64()) { // no allocation
		den := uint64(1)
		if !r.IsInt() {
			den = r.Denom().Uint64()
		}
		w, err := d.scaled(absU64(num.Int64()), den)
		return w, neg, err
	}
	ten := big.NewInt(10)
	p := new(big.Int).Exp(ten, big.NewInt(int64(d.scale)), nil)
	if new(big.Int).Rem(p, r.Denom()).Sign() != 0 {
		return u256{}, neg, d.errScale
	}
	w := new(big.Int).Abs(num)
	w.Mul(w, p.Quo(p, r.Denom()))
	w.Mul(w, new(big.Int).Exp(ten, big.NewInt(int64(d.wireScale-d.scale)), nil))
	if w.BitLen() > 256 {
		return u256{}, neg, d.errRange
	}
	var b [32]byte
	w.FillBytes(b[:])
	var m u256
	for i := range m {
		m[i] = binary.BigEndian.Uint64(b[24-8*i:])
	}
	return m, neg, nil
}

func absU64(x int64) uint64 {
	if x < 0 {
		return uint64(-(x + 1)) + 1
	}
	return uint64(x)
}

// u256 is a 256-bit magnitude, least significant word first.
type u256 [4]uint64

// mul sets a to a×m and reports whether that fits.
func (a *u256) mul(m uint64) bool {
	var carry uint64
	for i := range a {
		hi, lo := bits.Mul64(a[i], m)
		var c uint64
		a[i], c = bits.Add64(lo, carry, 0)
		carry = hi + c
	}
	return carry == 0
}

// mulPow sets a to a×base^n and reports whether that fits.
func (a *u256) mulPow(base uint64, n int) bool {
	for n > 0 {
		p, k := uint64(1), 0
		for ; k < n && p <= math.MaxUint64/base; k++ {
			p *= base
		}
		if !a.mul(p) {
			return false
		}
		n -= k
	}
	return true
}

func (a u256) cmp(b u256) int {
	for i := 3; i >= 0; i-- {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// appendTwos appends ±mag as length-prefixed bytes: the shortest little-endian two's
// complement (Java's BigInteger.toByteArray, reversed).
func appendTwos(dst []byte, mag u256, neg bool) []byte {
	if neg {
		c := uint64(1)
		for i := range mag {
			mag[i], c = bits.Add64(^mag[i], 0, c)
		}
	}
	var b [32]byte
	for i, w := range mag {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	n := len(b)
	for n > 1 && (b[n-1] == 0 && b[n-2]&0x80 == 0 || b[n-1] == 0xff && b[n-2]&0x80 != 0) {
		n--
	}
	return protowire.AppendBytes(dst, b[:n])
}
