package arrowrow

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/sluicehq/sluice/schemas"
)

// TestRowReaderStrings reads a window of a sliced record with null and empty strings, and
// checks the rows keep their values after the record's buffers are overwritten: the reader
// copies each string column once per batch rather than each value.
func TestRowReaderStrings(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	names := []string{"zero", "", "two", "", "four", "five", "six"}
	for i, s := range names {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i == 3 {
			b.Field(1).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(s)
		}
	}
	full := b.NewRecordBatch()
	defer full.Release()
	rec := full.NewSlice(1, 7) // an array offset other than 0
	defer rec.Release()

	rows := &schemas.Schema{Fields: []schemas.Field{
		{Name: "name", Type: schemas.Type{Kind: schemas.String}, Nullable: true},
		{Name: "id", Type: schemas.Type{Kind: schemas.Int64}},
	}}
	got, err := NewRowReader(rows).Read(rec, 2, 6, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := full.Column(1).(*array.String).ValueBytes()
	for i := range data {
		data[i] = 'X'
	}
	want := []schemas.Row{{nil, int64(3)}, {"four", int64(4)}, {"five", int64(5)}, {"six", int64(6)}}
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Errorf("row %d field %d: got %#v, want %#v", i, j, got[i][j], want[i][j])
			}
		}
	}
	// A row appended to must not write into the next row's values.
	_ = append(got[0], "extra")
	if got[1][0] != "four" || got[1][1] != int64(4) {
		t.Errorf("appending to a row changed the next: %#v", got[1])
	}
}
