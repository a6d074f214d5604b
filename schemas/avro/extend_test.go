package avro

import (
	"slices"
	"testing"

	"github.com/sluicehq/sluice/schemas"
)

// Extend appends the writer's fields the reader lacks (by name or alias), making those without
// a default nullable with a null default, and reads older writers' values with the defaults.
func TestExtend(t *testing.T) {
	reader := `{"type": "record", "name": "E", "fields": [{"name": "id", "type": "long"}, {"name": "tag", "type": "string", "aliases": ["label"], "default": ""}]}`
	writer := `{"type": "record", "name": "E", "fields": [{"name": "label", "type": "string"}, {"name": "id", "type": "long"},
		{"name": "score", "type": ["double", "null"]}, {"name": "rank", "type": "int"}, {"name": "note", "type": "string", "default": "none"}]}`
	text, added, err := Extend(reader, writer)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(added, []string{"score", "rank", "note"}) {
		t.Fatalf("added %v, want score, rank, note", added)
	}
	c, err := NewCodec(text)
	if err != nil {
		t.Fatalf("the extended schema %s: %v", text, err)
	}
	want := schemas.New(
		schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}},
		schemas.Field{Name: "tag", Type: schemas.Type{Kind: schemas.String}},
		schemas.Field{Name: "score", Type: schemas.Type{Kind: schemas.Float64}, Nullable: true},
		schemas.Field{Name: "rank", Type: schemas.Type{Kind: schemas.Int64}, Nullable: true},
		schemas.Field{Name: "note", Type: schemas.Type{Kind: schemas.String}})
	if got := c.Schema().String(); got != want.String() {
		t.Errorf("schema %s, want %s", got, want)
	}
	// A value of the reader's own (older) schema reads the added fields' defaults.
	w, err := c.Resolve(1, reader)
	if err != nil {
		t.Fatal(err)
	}
	row, err := c.NewDecoder().DecodeWritten(w, []byte{0x04, 0x02, 'x'}) // id 2, tag "x"
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(row, schemas.Row{int64(2), "x", nil, nil, "none"}) {
		t.Errorf("row %v, want [2 x <nil> <nil> none]", row)
	}
	if same, added, err := Extend(reader, reader); err != nil || same != reader || added != nil {
		t.Errorf("nothing to add: %q %v %v", same, added, err)
	}
	if _, _, err := Extend(reader, `"string"`); err == nil {
		t.Error("a writer's schema that is not a record: no error")
	}
}
