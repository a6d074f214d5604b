package iceberg

import (
	"context"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

// TestSchemaEvolution: an existing table of id and name gains the rows' nullable score column
// with schema_evolution: add_columns; its old rows read null there. Without the key, or for
// a required new column, Open fails naming the column.
func TestSchemaEvolution(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "evolve", lanes: 1}
	ctx := context.Background()
	s := w.build(connectortest.Schema, "db.evo")
	h.open(s, "")
	h.write(s, connectortest.Schema, 0, 0, 5, idRow)
	h.flush(s, 1)
	h.driver().Commit(s, 1, 5)
	s.Close(ctx)

	wider := schemas.New(append(slices.Clone(connectortest.Schema.Fields),
		schemas.Field{Name: "score", Type: typ(schemas.Float64), Nullable: true})...)
	open := func(in *schemas.Schema, extra ...string) (*sink, error) {
		s := w.build(in, "db.evo", extra...)
		_, err := s.Open(ctx, h.info(""))
		return s, err
	}
	if _, err := open(wider); err == nil || !strings.Contains(err.Error(), `column "score" is not in the table`) {
		t.Fatalf("without schema_evolution: %v", err)
	}
	required := schemas.New(append(slices.Clone(wider.Fields), schemas.Field{Name: "rank", Type: typ(schemas.Int64)})...)
	if _, err := open(required, "schema_evolution: add_columns"); err == nil ||
		!strings.Contains(err.Error(), `column "rank" is not in the table and the rows declare it required`) {
		t.Fatalf("a required new column: %v", err)
	}
	if got := topNames(w.load("db.evo").Schema()); !slices.Equal(got, []string{"id", "name"}) {
		t.Fatalf("a refused evolution changed the table: columns %v", got)
	}

	s, err := open(wider, "schema_evolution: add_columns")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	h.write(s, wider, 0, 5, 10, func(i int) schemas.Row { return schemas.Row{int64(i), "n", float64(i) / 2} })
	h.flush(s, 2)
	h.driver().Commit(s, 2, 10)

	checkScores(t, w, "db.evo", 10, func(id int) bool { return id >= 5 })
}

// TestConversionErrorOutput: with error_handling, a row whose value does not fit the table's
// column goes to the error output and the others are written.
func TestConversionErrorOutput(t *testing.T) {
	w := newWarehouse(t)
	h := harness{t: t, pipeline: "conv", lanes: 1}
	ctx := context.Background()
	in := schemas.New(schemas.Field{Name: "id", Type: typ(schemas.Int64)},
		schemas.Field{Name: "amount", Type: schemas.Type{Kind: schemas.Decimal, Precision: 4, Scale: 1}})
	s := w.build(in, "db.conv", "error_handling: {output: bad}")
	h.open(s, "")
	defer s.Close(ctx)
	b := &schemas.Batch{Schema: in}
	for i, v := range []string{"1.5", "2.25", "3.0"} { // 2.25 has two decimal places
		b.Rows = append(b.Rows, schemas.Row{int64(i), rat(v)})
		b.Pos = append(b.Pos, schemas.Position{Source: testSource, Offset: int64(i)})
	}
	var dead []schemas.Row
	emit := func(_ string, e *schemas.Batch) error { dead = append(dead, e.Rows...); return nil }
	if err := s.Writer(0).(component.ErrorWriter).WriteWithErrors(ctx, b, emit); err != nil {
		t.Fatal(err)
	}
	h.flush(s, 1)
	h.driver().Commit(s, 1, 3)
	if len(dead) != 1 || !strings.Contains(dead[0][1].(string), "more than 1 decimal places") {
		t.Fatalf("error rows %v, want the row of 2.25", dead)
	}
	if got := sorted(w.ids("db.conv")); !slices.Equal(got, []int64{0, 2}) {
		t.Fatalf("ids %v, want 0 and 2", got)
	}
}

func rat(s string) *big.Rat {
	r, _ := new(big.Rat).SetString(s)
	return r
}
