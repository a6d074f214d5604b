// Package schemas holds the row model every stage shares: Schema and Type, positional Rows,
// Batches with their source positions, Offsets, and the decoders and encoders between bytes
// and rows. It imports no other package of this project except internal ones.
package schemas

import (
	"fmt"
	"strings"
	"time"
)

// Kind is the kind of a Type.
type Kind uint8

// The kinds of values a field can hold, with the Go type a Row holds for each.
const (
	Any       Kind = iota // any: schemaless JSON (nil, bool, int64, float64, string, []any, map[string]any)
	Bool                  // bool
	Int64                 // int64
	Float64               // float64
	String                // string
	Bytes                 // []byte
	Timestamp             // time.Time, UTC
	Date                  // time.Time at midnight UTC
	Decimal               // *big.Rat
	Array                 // []any
	Struct                // map[string]any keyed by field name
	Map                   // map[string]any
)

var kindNames = [...]string{"any", "boolean", "integer", "number", "string", "bytes", "timestamp", "date", "decimal", "array", "struct", "map"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Type describes the values of a field.
type Type struct {
	Kind Kind
	// Elem is the element type of an Array and the value type of a Map.
	Elem *Type
	// Fields are the fields of a Struct.
	Fields []Field
	// Precision and Scale describe a Decimal.
	Precision, Scale int
}

// Field is a named, possibly nullable, typed column.
type Field struct {
	Name     string
	Type     Type
	Nullable bool
}

// Articled returns the type's name with "a" or "an" before it, for messages: "an integer".
func (t Type) Articled() string {
	s := t.String()
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

// String renders the type the way error messages show it, e.g. "array<string>".
func (t Type) String() string {
	switch t.Kind {
	case Array:
		if t.Elem != nil {
			return "array<" + t.Elem.String() + ">"
		}
	case Map:
		if t.Elem != nil {
			return "map<string, " + t.Elem.String() + ">"
		}
	case Decimal:
		return fmt.Sprintf("decimal(%d, %d)", t.Precision, t.Scale)
	case Struct:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f.Name + " " + f.Type.String()
		}
		return "struct<" + strings.Join(parts, ", ") + ">"
	}
	return t.Kind.String()
}

// Equal reports whether two types are the same, nullability of nested fields included.
func (t Type) Equal(o Type) bool {
	if t.Kind != o.Kind || t.Precision != o.Precision || t.Scale != o.Scale || len(t.Fields) != len(o.Fields) {
		return false
	}
	if (t.Elem == nil) != (o.Elem == nil) || (t.Elem != nil && !t.Elem.Equal(*o.Elem)) {
		return false
	}
	for i := range t.Fields {
		a, b := t.Fields[i], o.Fields[i]
		if a.Name != b.Name || a.Nullable != b.Nullable || !a.Type.Equal(b.Type) {
			return false
		}
	}
	return true
}

// Schema is the ordered list of fields a Row is aligned with.
type Schema struct {
	Fields []Field
	index  map[string]int
}

// New returns a schema of the given fields. Field names must be unique.
func New(fields ...Field) *Schema {
	s := &Schema{Fields: fields, index: make(map[string]int, len(fields))}
	for i, f := range fields {
		s.index[f.Name] = i
	}
	return s
}

// Index returns the position of the named field.
func (s *Schema) Index(name string) (int, bool) {
	i, ok := s.index[name]
	return i, ok
}

// Field returns the named field.
func (s *Schema) Field(name string) (Field, bool) {
	if i, ok := s.index[name]; ok {
		return s.Fields[i], true
	}
	return Field{}, false
}

// Names returns the field names in order.
func (s *Schema) Names() []string {
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = f.Name
	}
	return names
}

// String renders the schema as "{a integer, b string?}" (? marks nullable fields).
func (s *Schema) String() string {
	parts := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		parts[i] = f.Name + " " + f.Type.String()
		if f.Nullable {
			parts[i] += "?"
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// Row is one record, positionally aligned with its Schema's fields. A nil entry is null.
// Rows are immutable once emitted: stages build new rows rather than change received ones.
type Row []any

// Position is where a record came from: the source ("kafka:topic", "file:path", ...), the
// partition and the offset within it.
type Position struct {
	Source    string
	Partition int32
	Offset    int64
}

func (p Position) String() string {
	return fmt.Sprintf("%s partition %d offset %d", p.Source, p.Partition, p.Offset)
}

// Batch is a group of rows that move through the pipeline together. Pos and Time are aligned
// with Rows. A batch received by a stage is read-only to it.
type Batch struct {
	Schema *Schema
	Rows   []Row
	Pos    []Position
	// Time is each row's event time (the source's record time unless assigned).
	Time []time.Time
	// Windows is, for the results of a grouping (Combine, GroupByKey), each row's window as
	// {start, end} in Unix nanoseconds; nil elsewhere (a row's windows then follow from its
	// event time).
	Windows [][2]int64
	// Origin is, for rows read back from a repartition topic (docs/scaling.md), the
	// position each was first read at; nil elsewhere. A grouping's watermark follows the
	// origin partitions, in whose order the rows come.
	Origin []Position
	// Raw holds undecoded payloads between a source's Read and its Decode; nil elsewhere.
	Raw [][]byte
	// Meta is the source's own data about a raw batch, from its Read to its Decode (Kafka:
	// the records, for their keys and headers); nil elsewhere.
	Meta any
}

// Len returns the number of records in the batch.
func (b *Batch) Len() int {
	if b.Raw != nil {
		return len(b.Raw)
	}
	return len(b.Rows)
}
