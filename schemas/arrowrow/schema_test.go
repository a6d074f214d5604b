package arrowrow

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/schemas"
)

// TestSchemaRoundTrip: a row schema becomes an Arrow schema and back unchanged, and a field
// without an Arrow type is named in the error.
func TestSchemaRoundTrip(t *testing.T) {
	str := schemas.Type{Kind: schemas.String}
	s := schemas.New(
		schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}},
		schemas.Field{Name: "ok", Type: schemas.Type{Kind: schemas.Bool}, Nullable: true},
		schemas.Field{Name: "x", Type: schemas.Type{Kind: schemas.Float64}, Nullable: true},
		schemas.Field{Name: "at", Type: schemas.Type{Kind: schemas.Timestamp}},
		schemas.Field{Name: "day", Type: schemas.Type{Kind: schemas.Date}},
		schemas.Field{Name: "raw", Type: schemas.Type{Kind: schemas.Bytes}},
		schemas.Field{Name: "price", Type: schemas.Type{Kind: schemas.Decimal, Precision: 9, Scale: 2}},
		schemas.Field{Name: "tags", Type: schemas.Type{Kind: schemas.Array, Elem: &str}},
		schemas.Field{Name: "attrs", Type: schemas.Type{Kind: schemas.Map, Elem: &str}},
		schemas.Field{Name: "owner", Type: schemas.Type{Kind: schemas.Struct, Fields: []schemas.Field{{Name: "name", Type: str, Nullable: true}}}},
	)
	sc, err := ArrowSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := SchemaOf(sc)
	if err != nil {
		t.Fatal(err)
	}
	if back.String() != s.String() {
		t.Errorf("back %s, want %s", back, s)
	}
	bad := schemas.New(schemas.Field{Name: "o", Type: schemas.Type{Kind: schemas.Struct, Fields: []schemas.Field{{Name: "v", Type: schemas.Type{Kind: schemas.Any}}}}})
	if _, err := ArrowSchema(bad); err == nil || !strings.Contains(err.Error(), `column "o.v" is any, which has no Arrow type`) {
		t.Errorf("got %v", err)
	}
}
