package iceberg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/schemas"
)

// The values of schema_evolution.
const (
	evolveNone = "none"
	addColumns = "add_columns"
)

// evolveAttempts bounds the schema updates tried when other writers change the table meanwhile.
const evolveAttempts = 5

// newColumn is a field of the rows that the table lacks: its path (a nested field's under
// its struct column) and the field.
type newColumn struct {
	path  []string
	field schemas.Field
}

// widened is a column of the table whose type the rows' type widens (int to long, float to
// double), as Iceberg's type promotion allows: its path and the wider type.
type widened struct {
	path []string
	to   iceberg.Type
}

// columnChanges compares the fields of fs with the columns cols, nested in structs
// recursively: adds are the fields cols lack, widens the int and float columns that fields
// hold integers and numbers for (sluice's integers are 64-bit and its numbers doubles).
func columnChanges(prefix []string, fs []schemas.Field, cols []iceberg.NestedField) (adds []newColumn, widens []widened) {
	byName := make(map[string]iceberg.NestedField, len(cols))
	for _, c := range cols {
		byName[c.Name] = c
	}
	for _, f := range fs {
		path := append(prefix[:len(prefix):len(prefix)], f.Name)
		c, ok := byName[f.Name]
		st, isStruct := c.Type.(*iceberg.StructType)
		switch {
		case !ok:
			adds = append(adds, newColumn{path: path, field: f})
		case f.Type.Kind == schemas.Int64 && c.Type.Equals(iceberg.PrimitiveTypes.Int32):
			widens = append(widens, widened{path, iceberg.PrimitiveTypes.Int64})
		case f.Type.Kind == schemas.Float64 && c.Type.Equals(iceberg.PrimitiveTypes.Float32):
			widens = append(widens, widened{path, iceberg.PrimitiveTypes.Float64})
		case isStruct && f.Type.Kind == schemas.Struct:
			a, w := columnChanges(path, f.Type.Fields, st.FieldList)
			adds, widens = append(adds, a...), append(widens, w...)
		}
	}
	return adds, widens
}

// evolveTable adds to tbl, as optional columns, the fields of rows it lacks, widens the int
// and float columns that rows hold integers and numbers for, and returns the table as
// committed (tbl itself when it needed nothing). Nothing is changed unless the rows then fit
// the table (checkCompatible names what does not), and a required field of the rows is
// refused: the table's existing rows have no value for it.
func evolveTable(ctx context.Context, cat catalog.Catalog, tbl *table.Table, rows *schemas.Schema) (*table.Table, error) {
	for attempt := 0; ; attempt++ {
		adds, widens := columnChanges(nil, rows.Fields, tbl.Schema().Fields())
		if len(adds) == 0 && len(widens) == 0 {
			return tbl, nil
		}
		var errs []error
		for _, a := range adds {
			if !a.field.Nullable {
				errs = append(errs, fmt.Errorf("column %q is not in the table and the rows declare it required (not nullable): schema_evolution adds only nullable columns, since the table's rows have no value for it; make the field nullable, or add the column yourself", strings.Join(a.path, ".")))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		// A preview first: the rows must fit the changed schema, else nothing changes.
		preview, _, err := stageChanges(tbl.NewTransaction(), adds, widens)
		var after *iceberg.Schema
		if err == nil {
			after, err = preview.Apply()
		}
		if err == nil {
			if err = checkCompatible(rows, after); err != nil {
				return nil, fmt.Errorf("the rows do not fit the table's schema: %w", err)
			}
		}
		if err != nil {
			return nil, err
		}
		txn := tbl.NewTransaction()
		upd, names, err := stageChanges(txn, adds, widens)
		if err == nil {
			err = upd.Commit()
		}
		if err == nil {
			var next *table.Table
			if next, err = txn.Commit(ctx); err == nil {
				slog.Info("changed the table's schema for the rows", "table", strings.Join(tbl.Identifier(), "."),
					"changes", strings.Join(names, ", "))
				return next, nil
			}
		}
		if attempt+1 == evolveAttempts {
			return nil, fmt.Errorf("changing the table's schema (%s): %w", strings.Join(names, ", "), err)
		}
		// Another writer may have changed the table meanwhile: look again.
		if tbl, err = cat.LoadTable(ctx, tbl.Identifier()); err != nil {
			return nil, fmt.Errorf("changing the table's schema (%s): %w", strings.Join(names, ", "), err)
		}
	}
}

// stageChanges stages the added and widened columns in a schema update of txn and returns it
// with what it does, for messages.
func stageChanges(txn *table.Transaction, adds []newColumn, widens []widened) (*table.UpdateSchema, []string, error) {
	upd := txn.UpdateSchema(true, false)
	var names []string
	for _, a := range adds {
		ids := 0 // placeholders: UpdateSchema assigns the table's IDs
		typ, err := icebergType(a.field.Type, func() int { ids++; return ids })
		if err != nil {
			return nil, nil, inColumn(err, strings.Join(a.path, "."))
		}
		upd.AddColumn(a.path, typ, "", false, nil)
		names = append(names, "adding "+strings.Join(a.path, "."))
	}
	for _, w := range widens {
		upd.UpdateColumn(w.path, table.ColumnUpdate{FieldType: iceberg.Optional[iceberg.Type]{Valid: true, Val: w.to}})
		names = append(names, fmt.Sprintf("widening %s to %s", strings.Join(w.path, "."), w.to))
	}
	return upd, names, nil
}

// Mid-run: a source whose rows' schema changes while the pipeline runs (ReadFromKafka with
// follow_schema_updates, when a newer writer's schema adds fields) sends batches whose Schema
// is not the one the sink was built for. With schema_evolution: add_columns and rows written
// as they are (no keep, drop, only or upsert), the sink follows: the first batch of a new
// schema changes the table's schema (a commit of its own, serialized with the epochs'
// commits), the lanes end their runs of the old schema (their files stay in the epoch) and
// write on with the new one, so that the epoch's commit, built on the changed table, carries
// files of both. A crash after the schema change and before the epoch's commit leaves the
// column in the table, which the replayed epoch then fills: the change is idempotent.

// followsRows reports whether the sink changes the table for rows of a schema it was not
// built for; otherwise it writes every batch as rows of plan.rows (fields beyond are left out).
func (s *sink) followsRows() bool {
	return s.cfg.SchemaEvolution == addColumns && s.plan.upsert == nil &&
		s.cfg.Keep == nil && s.cfg.Drop == nil && s.cfg.Only == ""
}

// writingFor returns how to write rows of schema rows into ts now: the table's current
// writing and the converter of those rows into it, changing the table's schema first when
// the rows need it.
func (s *sink) writingFor(ctx context.Context, ts *tableState, rows *schemas.Schema) (*writing, *converter, error) {
	wr := ts.wr.Load()
	if rows == nil || rows == s.plan.rows || !s.followsRows() {
		return wr, wr.conv, nil
	}
	if c, ok := wr.evolved.Load(rows); ok {
		return wr, c.(*converter), nil
	}
	if sameFields(rows.Fields, s.plan.rows.Fields) { // the rows' schema, built again
		return wr, wr.conv, nil
	}
	return s.adopt(ctx, ts, rows)
}

// sameFields reports whether a and b are the same fields.
func sameFields(a, b []schemas.Field) bool {
	return schemas.Type{Kind: schemas.Struct, Fields: a}.Equal(schemas.Type{Kind: schemas.Struct, Fields: b})
}

// adopt prepares writing rows of a schema new to the sink into ts: it evolves the table when
// the rows have fields it lacks (or wider types), checks that they fit, and returns the
// writing with a converter for them. It holds commitMu, so that the schema change and the
// epochs' commits, each built on the table the other left, do not interleave.
func (s *sink) adopt(ctx context.Context, ts *tableState, rows *schemas.Schema) (*writing, *converter, error) {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	wr := ts.wr.Load()
	if c, ok := wr.evolved.Load(rows); ok { // another lane got here first
		return wr, c.(*converter), nil
	}
	fail := func(err error) (*writing, *converter, error) {
		return nil, nil, fmt.Errorf("%s: table %s: the rows' schema changed while running, to %s: %w", s.what, ts.name, rows, err)
	}
	cat, tbl, err := s.current(ts)
	if err != nil {
		return nil, nil, err
	}
	next, err := evolveTable(ctx, cat, tbl, rows)
	if err == nil && next == tbl {
		err = checkCompatible(rows, tbl.Schema()) // evolveTable checks only when it changes tbl
		if err != nil {
			err = fmt.Errorf("the rows do not fit the table's schema: %w", err)
		}
	}
	if err != nil {
		return fail(diskError(err, s.catalogFile()))
	}
	if next != tbl {
		s.mu.Lock()
		ts.tbl = next // the epochs' commits build on the changed table from now on
		s.mu.Unlock()
		if err := s.step(stepEvolved); err != nil {
			return fail(err)
		}
		nwr, err := newWriting(next, cat, s.plan.rows)
		if err != nil {
			return fail(err)
		}
		s.mu.Lock()
		ts.retired = append(ts.retired, wr)
		ts.wr.Store(nwr)
		s.mu.Unlock()
		wr = nwr
	}
	conv, err := rowsConverter(wr.conv.Schema(), rows)
	if err != nil {
		return fail(err)
	}
	c, _ := wr.evolved.LoadOrStore(rows, conv)
	return wr, c.(*converter), nil
}
