package iceberg

import (
	"context"
	"errors"
	"fmt"
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

// missingColumns returns the fields of fs (nested in structs, recursively) that cols lack.
func missingColumns(prefix []string, fs []schemas.Field, cols []iceberg.NestedField) []newColumn {
	byName := make(map[string]iceberg.NestedField, len(cols))
	for _, c := range cols {
		byName[c.Name] = c
	}
	var out []newColumn
	for _, f := range fs {
		path := append(prefix[:len(prefix):len(prefix)], f.Name)
		c, ok := byName[f.Name]
		if !ok {
			out = append(out, newColumn{path: path, field: f})
			continue
		}
		if st, isStruct := c.Type.(*iceberg.StructType); isStruct && f.Type.Kind == schemas.Struct {
			out = append(out, missingColumns(path, f.Type.Fields, st.FieldList)...)
		}
	}
	return out
}

// addMissingColumns adds to tbl, as optional columns, the fields of rows it lacks, and
// returns the table as committed. A required field of the rows is refused: the table's
// existing rows have no value for it.
func addMissingColumns(ctx context.Context, cat catalog.Catalog, tbl *table.Table, rows *schemas.Schema) (*table.Table, error) {
	for attempt := 0; ; attempt++ {
		adds := missingColumns(nil, rows.Fields, tbl.Schema().Fields())
		if len(adds) == 0 {
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
		txn := tbl.NewTransaction()
		upd := txn.UpdateSchema(true, false)
		var names []string
		for _, a := range adds {
			ids := 0 // placeholders: UpdateSchema assigns the table's IDs
			typ, err := icebergType(a.field.Type, func() int { ids++; return ids })
			if err != nil {
				return nil, inColumn(err, strings.Join(a.path, "."))
			}
			upd.AddColumn(a.path, typ, "", false, nil)
			names = append(names, strings.Join(a.path, "."))
		}
		err := upd.Commit()
		if err == nil {
			var next *table.Table
			if next, err = txn.Commit(ctx); err == nil {
				return next, nil
			}
		}
		if attempt+1 == evolveAttempts {
			return nil, fmt.Errorf("adding columns %s: %w", strings.Join(names, ", "), err)
		}
		// Another writer may have changed the table meanwhile: look again.
		if tbl, err = cat.LoadTable(ctx, tbl.Identifier()); err != nil {
			return nil, fmt.Errorf("adding columns %s: %w", strings.Join(names, ", "), err)
		}
	}
}
