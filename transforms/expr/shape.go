package expr

import "github.com/sluicehq/sluice/schemas"

// Shape is a schema type with what an engine converting its values to another language needs
// precomputed once per program: the element's shape, and for a struct its fields, their
// names in order, an index by name and their shapes. transforms/python and
// transforms/javascript convert rows through it.
type Shape struct {
	Type   schemas.Type
	Elem   *Shape // of an array or a map, if typed
	Fields []schemas.Field
	Keys   []string // the fields' names, in order
	Index  map[string]int
	Sub    []*Shape // the fields' shapes
}

// ShapeOf returns the shape of t.
func ShapeOf(t schemas.Type) *Shape {
	s := &Shape{Type: t}
	switch t.Kind {
	case schemas.Array, schemas.Map:
		if t.Elem != nil {
			s.Elem = ShapeOf(*t.Elem)
		}
	case schemas.Struct:
		s.Fields = t.Fields
		s.Keys = make([]string, len(t.Fields))
		s.Index = make(map[string]int, len(t.Fields))
		s.Sub = make([]*Shape, len(t.Fields))
		for i, f := range t.Fields {
			s.Keys[i] = f.Name
			s.Index[f.Name] = i
			s.Sub[i] = ShapeOf(f.Type)
		}
	}
	return s
}

// RowShape returns the shape of a row of schema in.
func RowShape(in *schemas.Schema) *Shape {
	return ShapeOf(schemas.Type{Kind: schemas.Struct, Fields: in.Fields})
}
