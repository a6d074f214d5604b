package bigquery

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
	"github.com/sluicehq/sluice/schemas"
)

// rejectingTable opens a sink for {id, s} and then has the table replaced by one whose s is
// JSON, as a concurrent schema change would: the writer still sends s as a string, so
// BigQuery takes the rows whose s is JSON text and rejects the others (RowErrors).
func rejectingTable(t *testing.T, extra ...string) (*fakeBQ, *sink, *schemas.Schema) {
	t.Helper()
	ctx := context.Background()
	f := newFakeBQ(t)
	in := schemas.New(schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}},
		schemas.Field{Name: "s", Type: schemas.Type{Kind: schemas.String}})
	s := f.build(in, "rej", extra...)
	if _, err := s.Open(ctx, component.SinkInfo{Pipeline: "p", Lanes: 1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(ctx) })
	cl, err := bigquery.NewClient(ctx, testProject, f.srv.BigQueryClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	tbl := cl.Dataset("ds").Table("rej")
	if err := tbl.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Create(ctx, &bigquery.TableMetadata{Schema: bigquery.Schema{
		{Name: "id", Type: bigquery.IntegerFieldType, Required: true}, {Name: "s", Type: bigquery.JSONFieldType}}}); err != nil {
		t.Fatal(err)
	}
	return f, s, in
}

func mixedBatch(in *schemas.Schema) *schemas.Batch {
	b := &schemas.Batch{Schema: in}
	for i, v := range []string{`{"a": 1}`, `not json`, `[1, 2]`, `{"b":`, `"x"`} {
		b.Rows = append(b.Rows, schemas.Row{int64(i), v})
		b.Pos = append(b.Pos, schemas.Position{Source: "test:in", Partition: 3, Offset: int64(100 + i)})
	}
	return b
}

// Rows BigQuery rejects go to the error output with their positions, and the rest of the
// batch is appended again and committed.
func TestRowErrorsToErrorOutput(t *testing.T) {
	ctx := context.Background()
	f, s, in := rejectingTable(t, "error_handling: {output: bad}")
	var dead *schemas.Batch
	emit := func(_ string, e *schemas.Batch) error { dead = e; return nil }
	if err := s.Writer(0).(component.ErrorWriter).WriteWithErrors(ctx, mixedBatch(in), emit); err != nil {
		t.Fatal(err)
	}
	d := connectortest.Driver{T: t, Pipeline: "p", Lanes: 1, Source: "test:in"}
	d.Flush(s, 1)
	d.Commit(s, 1, 105)
	if got := f.ids("rej"); !slices.Equal(got, []int64{0, 2, 4}) {
		t.Fatalf("table holds ids %v, want 0, 2, 4", got)
	}
	if dead == nil || dead.Len() != 2 {
		t.Fatalf("error rows %+v, want the rows of ids 1 and 3", dead)
	}
	for i, want := range []int64{101, 103} {
		if dead.Pos[i].Offset != want || dead.Pos[i].Partition != 3 {
			t.Errorf("error row %d at %v, want offset %d of partition 3", i, dead.Pos[i], want)
		}
		if msg, _ := dead.Rows[i][1].(string); !strings.Contains(msg, "BigQuery rejected the row") {
			t.Errorf("error row %d says %q", i, msg)
		}
	}
}

// Without error_handling the first rejected row stops the pipeline at its position.
func TestRowErrorsStopAtPosition(t *testing.T) {
	ctx := context.Background()
	_, s, in := rejectingTable(t)
	err := s.Writer(0).Write(ctx, mixedBatch(in))
	var re *component.RowError
	if !errors.As(err, &re) || re.Pos.Offset != 101 {
		t.Fatalf("want a row error at offset 101, got %v", err)
	}
}
