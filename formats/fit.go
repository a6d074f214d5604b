package formats

import (
	"fmt"

	"github.com/sluicehq/sluice/schemas"
)

// FitTarget names what rows are written as, in the messages of FieldsFit: the Avro record,
// or a Protocol Buffers message (whose fields may all be absent).
type FitTarget struct {
	Record, Schema string // "the Avro record", "the Avro schema"
	AbsentOK       bool   // a field the input lacks is fine, nullable or not
}

var avroTarget = FitTarget{Record: "the Avro record", Schema: "the Avro schema"}

// FieldsFit checks that rows with fields in can be written as a record of fields out: every
// input field is in the record with a type that holds its values, and the record's other
// fields may be null.
func FieldsFit(in, out []schemas.Field, t FitTarget) error {
	return fieldsFit(in, out, "", t)
}

func fieldsFit(in, out []schemas.Field, path string, t FitTarget) error {
	for _, f := range in {
		o, ok := fieldNamed(out, f.Name)
		if !ok {
			return fmt.Errorf("field %q of the input is not in %s", join(path, f.Name), t.Record)
		}
		if err := typeFits(f.Type, o.Type, join(path, f.Name), t); err != nil {
			return err
		}
	}
	for _, o := range out {
		if _, ok := fieldNamed(in, o.Name); !ok && !o.Nullable && !t.AbsentOK {
			return fmt.Errorf("%s's field %q is not in the input and cannot be null", t.Record, join(path, o.Name))
		}
	}
	return nil
}

func typeFits(in, out schemas.Type, path string, t FitTarget) error {
	switch {
	case in.Kind == schemas.Any:
		return nil // checked per value
	case in.Kind == schemas.Int64 && out.Kind == schemas.Float64:
		return nil
	case in.Kind != out.Kind:
		return fmt.Errorf("field %q holds %s values, but %s has %s there", path, in, t.Schema, out)
	case in.Kind == schemas.Struct:
		return fieldsFit(in.Fields, out.Fields, path, t)
	case (in.Kind == schemas.Array || in.Kind == schemas.Map) && in.Elem != nil && out.Elem != nil:
		return typeFits(*in.Elem, *out.Elem, path+"[]", t)
	}
	return nil
}

func fieldNamed(fields []schemas.Field, name string) (schemas.Field, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f, true
		}
	}
	return schemas.Field{}, false
}

// join names a field inside a struct: path.name.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
