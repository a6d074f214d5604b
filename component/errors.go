package component

import (
	"fmt"
	"runtime/debug"

	"github.com/sluicehq/sluice/schemas"
)

// ErrorHandling is Beam's error_handling config: the name of the output that receives the
// records a component fails on. Components embed it as
//
//	ErrorHandling *component.ErrorHandling `yaml:"error_handling"`
type ErrorHandling struct {
	Output string `yaml:"output" required:"true" doc:"Name of the output that receives failed records."`
}

// Shape is the shape of error rows, as Beam defines them.
type Shape int

const (
	// MappingShape is {element, msg, stack, source}: the failed row, the message and where
	// it failed, as mapping transforms emit them.
	MappingShape Shape = iota
	// IOShape is {failed_row, error_message, source}, as IO transforms emit them.
	IOShape
	// IOTextShape is IOShape for sources of text (files of lines): an undecodable record's
	// failed_row is its text, not bytes, so dead letters stay readable.
	IOTextShape
)

// SourceType is the type of the `source` field sluice adds to error rows.
var SourceType = schemas.Type{Kind: schemas.Struct, Fields: []schemas.Field{
	{Name: "topic", Type: schemas.Type{Kind: schemas.String}},
	{Name: "partition", Type: schemas.Type{Kind: schemas.Int64}},
	{Name: "offset", Type: schemas.Type{Kind: schemas.Int64}},
}}

// RowError is a record a component failed on, when there is no error output to send it to:
// the pipeline stops with it, at that record's position.
type RowError struct {
	Pos schemas.Position
	Err error
}

func (e *RowError) Error() string {
	return fmt.Sprintf("record at %s: %v", e.Pos, e.Err)
}

func (e *RowError) Unwrap() error { return e.Err }

// ErrorOutput sends failed records to a component's error output. A nil *ErrorOutput, for a
// component without error_handling, turns every failure into a RowError.
type ErrorOutput struct {
	Tag    string
	Schema *schemas.Schema
	shape  Shape
}

// ErrorOutput declares the error output of eh (nil: none) for records of the input schema in
// (nil for raw payloads) and returns what sends failed records to it.
func (c *Context) ErrorOutput(eh *ErrorHandling, in *schemas.Schema, shape Shape) *ErrorOutput {
	if eh == nil {
		return nil
	}
	elem := schemas.Type{Kind: schemas.Bytes}
	if shape == IOTextShape {
		elem.Kind = schemas.String
	}
	if in != nil {
		fields := make([]schemas.Field, len(in.Fields))
		for i, f := range in.Fields {
			f.Nullable = true
			fields[i] = f
		}
		elem = schemas.Type{Kind: schemas.Struct, Fields: fields}
	}
	str := schemas.Type{Kind: schemas.String}
	var s *schemas.Schema
	if shape != MappingShape {
		s = schemas.New(
			schemas.Field{Name: "failed_row", Type: elem, Nullable: true},
			schemas.Field{Name: "error_message", Type: str},
			schemas.Field{Name: "source", Type: SourceType, Nullable: true})
	} else {
		s = schemas.New(
			schemas.Field{Name: "element", Type: elem, Nullable: true},
			schemas.Field{Name: "msg", Type: str},
			schemas.Field{Name: "stack", Type: str},
			schemas.Field{Name: "source", Type: SourceType, Nullable: true})
	}
	c.outputs = append(c.outputs, Output{Tag: eh.Output, Schema: s, Errors: true})
	return &ErrorOutput{Tag: eh.Output, Schema: s, shape: shape}
}

// Add records that record i of in failed with cause, appending an error row to errs (which
// may be nil: Add allocates it) and returning it. Without an error output it returns a
// RowError instead, which the component returns to stop the pipeline.
func (o *ErrorOutput) Add(errs *schemas.Batch, in *schemas.Batch, i int, cause error) (*schemas.Batch, error) {
	pos := schemas.Position{}
	if i < len(in.Pos) {
		pos = in.Pos[i]
	}
	if o == nil {
		return errs, &RowError{Pos: pos, Err: cause}
	}
	if errs == nil {
		errs = &schemas.Batch{Schema: o.Schema}
	}
	var elem any
	if in.Raw != nil && o.shape == IOTextShape {
		elem = string(in.Raw[i])
	} else if in.Raw != nil {
		elem = in.Raw[i]
	} else if in.Schema != nil {
		m := make(map[string]any, len(in.Schema.Fields))
		for j, f := range in.Schema.Fields {
			m[f.Name] = in.Rows[i][j]
		}
		elem = m
	}
	source := map[string]any{"topic": pos.Source, "partition": int64(pos.Partition), "offset": pos.Offset}
	var row schemas.Row
	if o.shape != MappingShape {
		row = schemas.Row{elem, cause.Error(), source}
	} else {
		row = schemas.Row{elem, cause.Error(), stackOf(cause), source}
	}
	errs.Rows = append(errs.Rows, row)
	errs.Pos = append(errs.Pos, pos)
	if i < len(in.Time) {
		errs.Time = append(errs.Time, in.Time[i])
	}
	return errs, nil
}

// Emit sends errs, if any, to the error output.
func (o *ErrorOutput) Emit(errs *schemas.Batch, emit Emit) error {
	if o == nil || errs == nil || len(errs.Rows) == 0 {
		return nil
	}
	return emit(o.Tag, errs)
}

// stackOf returns the stack recorded with a panic-derived error, or "" for ordinary errors:
// sluice's expression errors have no useful Go stack.
func stackOf(err error) string {
	if p, ok := err.(interface{ Stack() string }); ok {
		return p.Stack()
	}
	return ""
}

// PanicError wraps a recovered panic with the stack where it happened.
type PanicError struct {
	Value any
	stack string
}

// NewPanicError records the current stack; call it from a deferred recover.
func NewPanicError(v any) *PanicError { return &PanicError{Value: v, stack: string(debug.Stack())} }

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Stack returns the goroutine stack at the panic.
func (e *PanicError) Stack() string { return e.stack }
