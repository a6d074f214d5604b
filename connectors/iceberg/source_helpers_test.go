package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
)

// exprs compiles expressions with expr-lang, as the runner gives them to components.
type exprs struct{ lines []string }

func (c exprs) Compile(e component.Expr, in *schemas.Schema, language string) (component.RowFunc, schemas.Type, error) {
	p, err := expr.Compile(e, in, expr.Options{Language: language, Lines: c.lines})
	if err != nil {
		return nil, schemas.Type{}, err
	}
	ev := expr.NewEvaluator(in, p)
	return func(row schemas.Row) (any, error) {
		s := ev.Scope()
		defer s.Release()
		s.Bind(row)
		return s.Eval(0)
	}, p.Type(), nil
}

// events is the schema of the tables the read tests write: id, name, score, tags, ts.
var events = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 3, Name: "score", Type: iceberg.PrimitiveTypes.Float64},
	iceberg.NestedField{ID: 4, Name: "tags", Type: &iceberg.ListType{ElementID: 6, Element: iceberg.PrimitiveTypes.String}},
	iceberg.NestedField{ID: 5, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
)

// event is row i of the test tables, in the columns of events.
func event(i int) schemas.Row {
	var name any = fmt.Sprintf("n%d", i)
	if i%10 == 9 {
		name = nil
	}
	return schemas.Row{int64(i), name, float64(i) / 2, []any{"t", fmt.Sprint(i % 3)}, time.UnixMicro(int64(i) * 1e6).UTC()}
}

// readConfig is the YAML of a read source of table in the warehouse, plus extra config lines.
func (w warehouse) readConfig(typ, tableName string, extra ...string) string {
	s := fmt.Sprintf("type: %s\nconfig:\n  table: %s\n  catalog_properties:\n    type: sql\n    uri: %s\n    warehouse: %s\n",
		typ, tableName, filepath.Join(w.dir, "catalog.db"), filepath.Join(w.dir, "wh"))
	for _, e := range extra {
		s += "  " + e + "\n"
	}
	return s
}

// buildSource builds the source src describes as the runner does, with expressions; it
// returns the source or the config errors.
func buildSource(t *testing.T, src string) (component.Source, *schemas.Schema, error) {
	t.Helper()
	env := componenttest.Env{File: testFile}
	d, root := env.Parse(t, src)
	typ := component.MappingValue(root, "type").Value
	spec, ok := component.Lookup(typ)
	if !ok {
		t.Fatalf("%s is not registered", typ)
	}
	ctx := &component.Context{Decoder: d, Type: typ, Name: typ, Pos: d.At(root),
		Config: component.MappingValue(root, "config"), Exprs: exprs{lines: d.Lines}}
	c := spec.Build(ctx)
	if err := d.Diags.Err(); err != nil {
		return nil, nil, err
	}
	return c.(component.Source), ctx.Outputs()[0].Schema, nil
}

func (w warehouse) source(typ, tableName string, extra ...string) component.Source {
	w.t.Helper()
	src, _, err := buildSource(w.t, w.readConfig(typ, tableName, extra...))
	if err != nil {
		w.t.Fatalf("build: %v", err)
	}
	return src
}

// create creates an empty table of events.
func (w warehouse) create(tableName string) *table.Table {
	w.t.Helper()
	ctx := context.Background()
	cat := w.catalog()
	ident, _ := identifier(tableName)
	if err := cat.CreateNamespace(ctx, catalog.NamespaceFromIdent(ident), nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		w.t.Fatal(err)
	}
	tbl, err := cat.CreateTable(ctx, ident, events)
	if err != nil {
		w.t.Fatal(err)
	}
	return tbl
}

// appendEvents commits rows [from, to) of events in one append snapshot and returns it.
func (w warehouse) appendEvents(tableName string, from, to int) *table.Snapshot {
	w.t.Helper()
	ctx := context.Background()
	tbl := w.load(tableName)
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		w.t.Fatal(err)
	}
	conv, err := newConverter(sc, func(name string) func(schemas.Row) any {
		for i, f := range events.Fields() {
			if f.Name == name {
				return func(r schemas.Row) any { return r[i] }
			}
		}
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
	var rows []schemas.Row
	for i := from; i < to; i++ {
		rows = append(rows, event(i))
	}
	rec, err := conv.Record(rows, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rec.Release()
	at := array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec})
	defer at.Release()
	tx := tbl.NewTransaction()
	if err := tx.AppendTable(ctx, at, 1000, nil); err != nil {
		w.t.Fatal(err)
	}
	tbl, err = tx.Commit(ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	return tbl.CurrentSnapshot()
}

// compact rewrites all data files of the table into one, as a compaction job does.
func (w warehouse) compact(tableName string) *table.Snapshot {
	w.t.Helper()
	ctx := context.Background()
	tbl := w.load(tableName)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	res, err := tbl.RewriteDataFiles(ctx, []table.CompactionTaskGroup{{Tasks: tasks}}, table.RewriteDataFilesOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	snap := res.Table.CurrentSnapshot()
	if snap.Summary.Operation != table.OpReplace {
		w.t.Fatalf("compaction committed a %s snapshot, want replace", snap.Summary.Operation)
	}
	return snap
}

// readN reads src until it has n rows (or io.EOF, or the timeout) and returns the rows and
// their positions.
func readN(t *testing.T, src component.Source, n int, timeout time.Duration) ([]schemas.Row, []schemas.Position, error) {
	t.Helper()
	return readNInterrupted(t, src, n, timeout, 20*time.Millisecond)
}

// readNInterrupted is readN with each Read cancelled after every, as the runner cancels a
// Read when an epoch is due.
func readNInterrupted(t *testing.T, src component.Source, n int, timeout, every time.Duration) ([]schemas.Row, []schemas.Position, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out := componenttest.Emitted{}
	for len(out.Rows(component.Main)) < n {
		rctx, rcancel := context.WithTimeout(ctx, every) // as barriers interrupt Read
		b, err := src.Read(rctx)
		rcancel()
		switch {
		case errors.Is(err, io.EOF):
			return out.Rows(component.Main), out.Positions(component.Main), err
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			continue
		case err != nil:
			return out.Rows(component.Main), out.Positions(component.Main), err
		}
		if b == nil {
			continue
		}
		if err := src.Decode(ctx, b, out.Emit); err != nil {
			return nil, nil, err
		}
	}
	return out.Rows(component.Main), out.Positions(component.Main), nil
}

// readToEnd reads src to io.EOF.
func readToEnd(t *testing.T, src component.Source) ([]schemas.Row, []schemas.Position) {
	t.Helper()
	rows, pos, err := readN(t, src, 1<<30, 30*time.Second)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("read: %v", err)
	}
	return rows, pos
}

func openSource(t *testing.T, src component.Source, from schemas.Offsets) {
	t.Helper()
	if err := src.Open(context.Background(), from); err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = src.Close() })
}

// idsOf returns column 0 of rows as ints.
func idsOf(rows []schemas.Row) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r[0].(int64)
	}
	return out
}
