package mapping

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// ValidateConfig is the config of ValidateWithSchema.
type ValidateConfig struct {
	Schema        yaml.Node                `yaml:"schema" required:"true" doc:"A JSON Schema (draft 2020-12 unless it names another with $schema) every row must satisfy, as JSON: timestamps are RFC 3339 strings, bytes base64."`
	ErrorHandling *component.ErrorHandling `yaml:"error_handling" doc:"Send rows that do not satisfy the schema to this output, with why, instead of stopping."`
}

func init() {
	component.RegisterTransform("ValidateWithSchema",
		"Passes on the rows that satisfy a JSON Schema; the others go to the error output, or stop the pipeline.",
		component.Inputs{Min: 1, Max: 1}, buildValidate)
}

// validate checks each row, written as JSON as WriteToJson writes it, against a schema.
type validate struct {
	who    string
	schema *jsonschema.Schema
	errors *component.ErrorOutput
}

func buildValidate(ctx *component.Context, cfg *ValidateConfig) (component.Transform, error) {
	var doc any
	if err := cfg.Schema.Decode(&doc); err != nil {
		ctx.Errorf(ctx.KeyPos("schema"), "schema must be a JSON Schema: %v", err)
		return nil, nil
	}
	if text, ok := doc.(string); ok { // a schema written as JSON text
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			ctx.Errorf(ctx.KeyPos("schema"), "schema is not valid JSON: %v", err)
			return nil, nil
		}
		doc = v
	}
	c := jsonschema.NewCompiler()
	const url = "sluice:///schema.json"
	if err := c.AddResource(url, jsonValue(doc)); err != nil {
		ctx.Errorf(ctx.KeyPos("schema"), "schema: %v", err)
		return nil, nil
	}
	sch, err := c.Compile(url)
	if err != nil {
		var se *jsonschema.SchemaValidationError
		if errors.As(err, &se) {
			err = violations(se.Err)
		}
		ctx.Errorf(ctx.KeyPos("schema"), "schema is not a valid JSON Schema: %s", strings.ReplaceAll(err.Error(), url, "schema"))
		return nil, nil
	}
	in := ctx.Input()
	v := &validate{who: ctx.Describe(), schema: sch, errors: ctx.ErrorOutput(cfg.ErrorHandling, in, component.MappingShape)}
	ctx.Output(component.Main, in)
	return v, nil
}

// jsonValue turns YAML-decoded values into those of encoding/json: maps with string keys
// and json.Number for numbers, as the validator wants.
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return v
	}
	return out
}

func (v *validate) Process(_ context.Context, _ int, in *schemas.Batch, emit component.Emit) error {
	out := outBatch(in.Schema, in, len(in.Rows))
	var errs *schemas.Batch
	var buf []byte
	for i, row := range in.Rows {
		buf = schemas.AppendJSON(buf[:0], in.Schema, row)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf))
		if err == nil {
			err = v.schema.Validate(doc)
		}
		if err == nil {
			add(out, in, i, row)
			continue
		}
		var stop error
		if errs, stop = failure(v.errors, errs, in, i, v.who, fmt.Errorf("the row does not satisfy the schema: %w", violations(err))); stop != nil {
			return stop
		}
	}
	if len(out.Rows) == len(in.Rows) {
		out = in
	}
	if err := emitRows(emit, component.Main, out); err != nil {
		return err
	}
	return v.errors.Emit(errs, emit)
}

// violations says briefly where and how a value breaks a schema: "at /age: got string, want
// integer; ...".
func violations(err error) error {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	var parts []string
	var leaves func(u *jsonschema.OutputUnit)
	leaves = func(u *jsonschema.OutputUnit) {
		if len(u.Errors) > 0 {
			for i := range u.Errors {
				leaves(&u.Errors[i])
			}
			return
		}
		if u.Error != nil {
			parts = append(parts, fmt.Sprintf("at %s: %s", cmp.Or(u.InstanceLocation, "/"), u.Error))
		}
	}
	leaves(ve.DetailedOutput())
	if len(parts) == 0 {
		return errors.New("it does not satisfy the schema")
	}
	return errors.New(strings.Join(parts, "; "))
}
