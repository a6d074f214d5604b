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
	"github.com/sluicehq/sluice/schemas/protobuf"
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

// encoder writes rows of one input schema as the table's proto rows, with schemas/protobuf's
// encoder driven by the table's descriptor and the conversions of scalarPut. Safe for
// concurrent use.
type encoder struct {
	desc *descriptorpb.DescriptorProto
	enc  *protobuf.Encoder
	// columns holds the column of each field of the descriptor (of its nested records too),
	// for the writers of its values and the names in errors.
	columns map[protoreflect.FieldDescriptor]*bq.FieldSchema
}

// putFn appends one non-nil value without its key: a varint, a fixed64 or a length-prefixed
// payload.
type putFn = protobuf.Put

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
	e := &encoder{desc: dp, columns: map[protoreflect.FieldDescriptor]*bq.FieldSchema{}}
	root := file.Messages().Get(0)
	records := map[protoreflect.FullName]bq.Schema{}
	e.mapColumns(root, cols, records)
	e.enc, err = protobuf.NewEncoder(root, in, protobuf.Options{
		// Field n of a message is its record's column n-1 (adapt numbers them so); the
		// descriptor's names are not the columns' when those are not proto names.
		Field: func(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
			rec := records[md.FullName()]
			i := findColumn(rec, name)
			if i < 0 {
				return nil
			}
			return md.Fields().ByNumber(protowire.Number(i + 1))
		},
		Value: e.put,
	})
	if err != nil {
		return nil, e.rowError(err)
	}
	return e, nil
}

// mapColumns records the column of each field of md, whose columns are cols, and of the
// fields of its records.
func (e *encoder) mapColumns(md protoreflect.MessageDescriptor, cols bq.Schema, records map[protoreflect.FullName]bq.Schema) {
	records[md.FullName()] = cols
	for i, c := range cols {
		fd := md.Fields().ByNumber(protowire.Number(i + 1))
		if fd == nil {
			continue
		}
		e.columns[fd] = c
		if fd.Message() != nil {
			e.mapColumns(fd.Message(), c.Schema, records)
		}
	}
}

// put returns the writer of values of t into the column of fd, as scalarPut says.
func (e *encoder) put(fd protoreflect.FieldDescriptor, t schemas.Type) (putFn, error) {
	c := e.columns[fd]
	if c == nil {
		return nil, errors.New("has no field in the proto descriptor made from the table schema")
	}
	put, kind := scalarPut(t.Kind, canonicalType(c.Type), c)
	if put == nil {
		return nil, fmt.Errorf("has type %s in the table, which sluice cannot write values of type %s to", sqlTypeName(c), t)
	}
	if fd.Kind() != kind {
		return nil, fmt.Errorf("is a proto %s in the descriptor made from the table schema, where sluice writes a %s", fd.Kind(), kind)
	}
	return put, nil
}

// Descriptor returns the normalized descriptor of the rows Encode writes, for
// managedwriter.WithSchemaDescriptor. It is shared: callers must not modify it.
func (e *encoder) Descriptor() *descriptorpb.DescriptorProto { return e.desc }

// Encode appends one serialized row to dst. An error is about the row's data only (a bad
// record): it names the field and the value, and dst comes back as it was given, so the rows
// already in it are kept.
func (e *encoder) Encode(dst []byte, row schemas.Row) ([]byte, error) {
	out, err := e.enc.Append(dst, row)
	if err != nil {
		return out, e.rowError(err)
	}
	return out, nil
}

var (
	errNullRequired = errors.New("is REQUIRED in the table, but the row holds null there")
	errNullElement  = errors.New("is null, which a BigQuery array cannot hold")
)

// rowError words an error of schemas/protobuf's encoder as the other errors of this package:
// the path of columns as "a.b[2][k]", the value as describe shows it.
func (e *encoder) rowError(err error) error {
	var pe *protobuf.Error
	if !errors.As(err, &pe) {
		return err
	}
	path := ""
	for _, s := range pe.Path {
		switch {
		case s.IsEntry():
			path += "[" + s.Key + "]"
		case s.IsElement():
			path += "[" + strconv.Itoa(s.Index) + "]"
		default:
			name := string(s.Field.Name())
			if c := e.columns[s.Field]; c != nil {
				name = c.Name
			}
			path = joinPath(path, name)
		}
	}
	leaf := pe.Err
	var kind *protobuf.KindError
	var key *protobuf.KeyError
	switch {
	case errors.Is(leaf, protobuf.ErrNullRequired):
		leaf = errNullRequired
	case errors.Is(leaf, protobuf.ErrNullElement):
		leaf = errNullElement
	case errors.As(leaf, &kind):
		leaf = mismatch(kind.Value, kind.Want)
	case errors.As(leaf, &key) && errors.Is(key.Err, protobuf.ErrInvalidUTF8):
		leaf = fmt.Errorf("has the key %s, which is not valid UTF-8", describe(key.Key))
	}
	if path == "" {
		return leaf
	}
	return &fieldPathError{path, leaf}
}

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
// complement (schemas.AppendTwosComplement, reversed, as BigDecimalByteStringEncoder does).
func appendTwos(dst []byte, mag u256, neg bool) []byte {
	n := len(mag) // the words that hold the magnitude (most values need one)
	for n > 1 && mag[n-1] == 0 {
		n--
	}
	var b [32]byte
	for i, w := range mag[:n] {
		binary.BigEndian.PutUint64(b[8*(n-1-i):], w)
	}
	mark := len(dst)
	dst = schemas.AppendTwosComplement(append(dst, 0), b[:8*n], neg)
	slices.Reverse(dst[mark+1:])
	dst[mark] = byte(len(dst) - mark - 1) // at most 33 bytes: a one-byte varint
	return dst
}
