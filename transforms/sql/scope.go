package sql

import (
	"math/big"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
)

// inputScope resolves the columns of the input's rows.
type inputScope struct {
	in *schemas.Schema
	// tables are the names a column may be qualified with (PCOLLECTION, the input's name).
	tables []string
}

// lookup finds a field by name: exactly, else ignoring case when only one field matches
// (Calcite folds unquoted names; Beam's rows keep theirs).
func lookup(fields []schemas.Field, name string) (int, bool) {
	found := -1
	for i, f := range fields {
		if f.Name == name {
			return i, true
		}
		if strings.EqualFold(f.Name, name) {
			if found >= 0 {
				return -1, false
			}
			found = i
		}
	}
	return found, found >= 0
}

func (s *inputScope) isTable(name string) bool {
	for _, t := range s.tables {
		if strings.EqualFold(t, name) {
			return true
		}
	}
	return false
}

func (s *inputScope) column(c *compiler, n *ast.ColumnNameExpr) (node, bool) {
	name, table := n.Name.Name.O, n.Name.Table.O
	if table != "" && !s.isTable(table) {
		// struct.field: a field of a struct column.
		i, ok := lookup(s.in.Fields, table)
		if !ok || s.in.Fields[i].Type.Kind != schemas.Struct {
			c.errorf(n, "unknown column %q%s", table, diag.DidYouMean(table, s.in.Names()))
			return node{}, false
		}
		sub := s.in.Fields[i].Type.Fields
		j, ok := lookup(sub, name)
		if !ok {
			names := make([]string, len(sub))
			for k, f := range sub {
				names[k] = f.Name
			}
			c.errorf(n, "unknown field %q of %s%s", name, table, diag.DidYouMean(name, names))
			return node{}, false
		}
		key := sub[j].Name
		return node{typ: sqlType(sub[j].Type), null: true, eval: func(r schemas.Row) (any, error) {
			m, _ := r[i].(map[string]any)
			return sqlValue(m[key]), nil
		}}, true
	}
	i, ok := lookup(s.in.Fields, name)
	if !ok {
		c.errorf(n, "unknown column %q%s", name, diag.DidYouMean(name, s.in.Names())).
			Detail = "the input's columns are " + strings.Join(s.in.Names(), ", ")
		return node{}, false
	}
	return readField(i, s.in.Fields[i]), true
}

// readField reads field i of a row as SQL sees it.
func readField(i int, f schemas.Field) node {
	n := node{typ: sqlType(f.Type), null: f.Nullable || f.Type.Kind == schemas.Any}
	if f.Type.Kind == schemas.Decimal {
		n.eval = func(r schemas.Row) (any, error) { return sqlValue(r[i]), nil }
	} else {
		n.eval = func(r schemas.Row) (any, error) { return r[i], nil }
	}
	return n
}

// sqlType is the type SQL computes with for a field's: DECIMAL as DOUBLE.
func sqlType(t schemas.Type) schemas.Type {
	if t.Kind == schemas.Decimal {
		return tFloat
	}
	return t
}

func sqlValue(v any) any {
	if r, ok := v.(*big.Rat); ok {
		f, _ := r.Float64()
		return f
	}
	return v
}

func (s *inputScope) special(*compiler, ast.ExprNode) (node, bool, bool) { return node{}, false, true }
