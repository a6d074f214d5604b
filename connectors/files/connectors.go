package files

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

func init() {
	component.RegisterSource("ReadFromText",
		"Reads the lines of local text files as rows {line: string}, each file a partition.", buildReadText)
	component.RegisterSource("ReadFromJson",
		"Reads local JSON Lines files as rows of a JSON Schema, each file a partition.", buildReadJSON)
	component.RegisterSink("WriteToText",
		"Writes one string field per line into an output directory, exactly once, one directory per epoch.", buildWriteText)
	component.RegisterSink("WriteToJson",
		"Writes rows as JSON Lines into an output directory, exactly once, one directory per epoch.", buildWriteJSON)
}

// ReadTextConfig is the config of ReadFromText.
type ReadTextConfig struct {
	Path string `yaml:"path" required:"true" doc:"A file, a directory (its regular files, sorted, without names starting with . or _) or a glob pattern. The files present when the pipeline starts are read, each from where the last checkpoint left it."`
}

// ReadJSONConfig is the config of ReadFromJson.
type ReadJSONConfig struct {
	Path   string     `yaml:"path" required:"true" doc:"A file, a directory (its regular files, sorted, without names starting with . or _) or a glob pattern of JSON Lines files. The files present when the pipeline starts are read, each from where the last checkpoint left it."`
	Schema *yaml.Node `yaml:"schema" doc:"JSON Schema of the records, as a mapping or as JSON text. When absent, it is inferred from the first 100 lines of the files when the pipeline is validated."`
	// ErrorHandling names the output for lines that are not valid JSON or do not match the
	// schema.
	ErrorHandling *component.ErrorHandling `yaml:"error_handling" doc:"Send lines that cannot be decoded to this output as {failed_row, error_message, source} instead of stopping the pipeline."`
}

// WriteConfig is the config of WriteToJson and WriteToText.
type WriteConfig struct {
	Path string `yaml:"path" required:"true" doc:"Output directory, created if missing. Each committed epoch is a directory epoch-<20-digit epoch> holding one lane-<N> file per lane that wrote rows and _checkpoint.json; read path/epoch-*/lane-*."`
}

// inferLines is how many lines of the input ReadFromJson infers a schema from.
const inferLines = 100

// textSchema is the row schema of ReadFromText.
var textSchema = schemas.New(schemas.Field{Name: "line", Type: schemas.Type{Kind: schemas.String}})

var textReadFormat = readFormat{
	skip: isEmpty,
	newDecoder: func() lineDecoder {
		return func(line []byte) (schemas.Row, error) { return schemas.Row{string(line)}, nil }
	},
}

func buildReadText(ctx *component.Context, cfg *ReadTextConfig) (component.Source, error) {
	if !checkReadPath(ctx, cfg.Path) {
		return nil, nil
	}
	ctx.Output(component.Main, textSchema)
	return newSource(cfg.Path, textSchema, textReadFormat, nil), nil
}

func buildReadJSON(ctx *component.Context, cfg *ReadJSONConfig) (component.Source, error) {
	if !checkReadPath(ctx, cfg.Path) {
		return nil, nil
	}
	var schema *schemas.Schema
	if cfg.Schema != nil {
		s, err := schemas.ParseJSONSchema(cfg.Schema)
		if err != nil {
			pos := ctx.KeyPos("schema")
			if se, ok := errors.AsType[*schemas.SchemaError](err); ok && se.Line > 0 {
				pos.Line, pos.Col = se.Line, se.Column
			}
			ctx.Errorf(pos, "%s: %v", ctx.Describe(), err)
			return nil, nil
		}
		schema = s
	} else if schema = inferSchema(ctx, cfg.Path); schema == nil {
		return nil, nil
	}
	ctx.Output(component.Main, schema)
	errOut := ctx.ErrorOutput(cfg.ErrorHandling, nil, component.IOTextShape)
	format := readFormat{
		skip: isBlank,
		newDecoder: func() lineDecoder {
			return schemas.NewJSONDecoder(schema).Decode
		},
	}
	return newSource(cfg.Path, schema, format, errOut), nil
}

func checkReadPath(ctx *component.Context, path string) bool {
	if strings.TrimSpace(path) == "" {
		ctx.Errorf(ctx.KeyPos("path"), "%s needs a non-empty path", ctx.Describe())
		return false
	}
	return true
}

// inferSchema infers the schema of ReadFromJson from the first lines of its files, reporting
// at the path when it cannot.
func inferSchema(ctx *component.Context, path string) *schemas.Schema {
	pos := ctx.KeyPos("path")
	files, err := listFiles(path)
	if err != nil && !notExist(err) {
		ctx.Errorf(pos, "%s: %v", ctx.Describe(), err)
		return nil
	}
	const hint = "give the records' JSON Schema as config key \"schema\""
	if len(files) == 0 {
		ctx.Errorf(pos, "%s has no schema and no file matches %q to infer one from", ctx.Describe(), path).Detail = hint
		return nil
	}
	lines, err := firstLines(files, inferLines)
	if err != nil {
		ctx.Errorf(pos, "%s: %v", ctx.Describe(), err)
		return nil
	}
	if len(lines) == 0 {
		ctx.Errorf(pos, "%s has no schema and the files of %q have no lines to infer one from", ctx.Describe(), path).Detail = hint
		return nil
	}
	s, err := schemas.InferJSONLines(lines)
	if err != nil {
		ctx.Errorf(pos, "%s cannot infer a schema from the first lines of %q: %v", ctx.Describe(), path, err).Detail = hint
		return nil
	}
	return s
}

func buildWriteJSON(ctx *component.Context, cfg *WriteConfig) (component.Sink, error) {
	if !checkWritePath(ctx, cfg.Path) {
		return nil, nil
	}
	format := writeFormat{ext: ".jsonl", encode: func(dst []byte, s *schemas.Schema, row schemas.Row) ([]byte, error) {
		return schemas.AppendJSON(dst, s, row), nil
	}}
	return newSink(cfg.Path, ctx.Describe(), format, ctx.Input()), nil
}

func buildWriteText(ctx *component.Context, cfg *WriteConfig) (component.Sink, error) {
	ok := checkWritePath(ctx, cfg.Path)
	for _, in := range ctx.Inputs {
		s := in.Schema
		if s != nil && (len(s.Fields) != 1 || s.Fields[0].Type.Kind != schemas.String) {
			ctx.Errorf(ctx.Pos, "%s writes one string per line, but its input %q has rows %s", ctx.Describe(), in.Name, s).
				Detail = "map the rows to a single string field first, e.g. MapToFields with fields: {line: ...}"
			ok = false
		}
	}
	if !ok {
		return nil, nil
	}
	return newSink(cfg.Path, ctx.Describe(), textWriteFormat, ctx.Input()), nil
}

var textWriteFormat = writeFormat{ext: ".txt", encode: func(dst []byte, _ *schemas.Schema, row schemas.Row) ([]byte, error) {
	if len(row) != 1 {
		return dst, fmt.Errorf("a row of %d fields, not 1", len(row))
	}
	switch v := row[0].(type) {
	case string:
		return append(dst, v...), nil
	case nil:
		return dst, nil // a null writes an empty line
	}
	return dst, fmt.Errorf("the field holds a %s value, not a string", schemas.KindOf(row[0]))
}}

func checkWritePath(ctx *component.Context, path string) bool {
	switch {
	case strings.TrimSpace(path) == "":
		ctx.Errorf(ctx.KeyPos("path"), "%s needs a non-empty path", ctx.Describe())
		return false
	case strings.ContainsAny(path, "*?["):
		ctx.Errorf(ctx.KeyPos("path"), "%s: path %q is an output directory, not a pattern", ctx.Describe(), path)
		return false
	}
	return true
}
