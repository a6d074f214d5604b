package sql

import (
	"math/big"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/join"
)

// inputScope resolves the columns of the input's rows.
type inputScope struct {
	in *schemas.Schema
	// tables are the names a column may be qualified with (PCOLLECTION, the input's name).
	tables []string
	// joined are the tables of a JOIN, whose rows in is the concatenation of (join.go).
	joined []*table
	// using are the columns of JOIN ... USING by lower-case name: the tables' fields.
	using map[string][]join.Field
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
	if n.Name.Name.O == "" {
		c.errorf(n, "a column name is empty")
		return node{}, false
	}
	if s.joined != nil {
		if merged, ok := s.usingColumn(n); ok {
			return merged, true
		}
		i, keys, ok := s.joinedColumn(c, n)
		if !ok {
			return node{}, false
		}
		return s.structField(c, n, i, keys)
	}
	// A name of up to three parts: [PCOLLECTION.]column[.field[.field]].
	var path []string
	for _, p := range []string{n.Name.Schema.O, n.Name.Table.O, n.Name.Name.O} {
		if p != "" {
			path = append(path, p)
		}
	}
	if len(path) > 1 && s.isTable(path[0]) {
		if _, isColumn := lookup(s.in.Fields, path[0]); !isColumn {
			path = path[1:]
		}
	}
	i, ok := lookup(s.in.Fields, path[0])
	if !ok {
		c.errorf(n, "unknown column %q%s", path[0], diag.DidYouMean(path[0], s.in.Names())).
			Detail = "the input's columns are " + strings.Join(s.in.Names(), ", ")
		return node{}, false
	}
	return s.structField(c, n, i, path[1:])
}

// structField reads column i of the row, or the field keys of it, a struct: null when a
// struct on the way is.
func (s *inputScope) structField(c *compiler, n *ast.ColumnNameExpr, i int, keys []string) (node, bool) {
	if len(keys) == 0 {
		return readField(i, s.in.Fields[i]), true
	}
	t := s.in.Fields[i].Type
	path := append([]string{s.in.Fields[i].Name}, keys...)
	for k, name := range keys {
		if t.Kind != schemas.Struct {
			c.errorf(n, "%s is %s, not a struct with fields", strings.Join(path[:k+1], "."), sqlName(t))
			return node{}, false
		}
		j, ok := lookup(t.Fields, name)
		if !ok {
			names := make([]string, len(t.Fields))
			for f, field := range t.Fields {
				names[f] = field.Name
			}
			c.errorf(n, "unknown field %q of %s%s", name, strings.Join(path[:k+1], "."), diag.DidYouMean(name, names))
			return node{}, false
		}
		keys[k], t = t.Fields[j].Name, t.Fields[j].Type
	}
	return node{typ: sqlType(t), null: true, eval: func(r schemas.Row) (any, error) {
		v := r[i]
		for _, key := range keys {
			m, _ := v.(map[string]any)
			v = m[key]
		}
		return sqlValue(v), nil
	}}, true
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
