package files

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/formats"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

func init() {
	component.RegisterSource("ReadFromText",
		"Reads the lines of local text files as rows {line: string}, each file a partition.", buildReadText)
	component.RegisterSource("ReadFromJson",
		"Reads local JSON Lines files as rows of a JSON Schema, each file a partition.", buildReadJSON)
	component.RegisterSource("ReadFromCsv",
		"Reads local CSV files with a header line as rows, each file a partition; the column types are inferred unless a schema is given.", buildReadCSV)
	component.RegisterSource("ReadFromAvro",
		"Reads local Avro object container files as rows of the files' schema, each file a partition.", buildReadAvro)
	component.RegisterSource("ReadFromParquet",
		"Reads local Parquet files as rows of the files' schema, each file a partition.", buildReadParquet)
	component.RegisterSink("WriteToText",
		"Writes one string field per line into an output directory, exactly once, one directory per epoch.", buildWriteText)
	component.RegisterSink("WriteToJson",
		"Writes rows as JSON Lines into an output directory, exactly once, one directory per epoch.", buildWriteJSON)
	component.RegisterSink("WriteToCsv",
		"Writes rows as CSV files with a header line into an output directory, exactly once, one directory per epoch.", buildWriteCSV)
	component.RegisterSink("WriteToAvro",
		"Writes rows as Avro object container files into an output directory, exactly once, one directory per epoch.", buildWriteAvro)
	component.RegisterSink("WriteToParquet",
		"Writes rows as Parquet files into an output directory, exactly once, one directory per epoch.", buildWriteParquet)
}

// ReadTextConfig is the config of ReadFromText.
type ReadTextConfig struct {
	Path string `yaml:"path" required:"true" doc:"A file, a directory, a glob pattern, or the path a sluice writer wrote (its committed files are read). The files present when the pipeline starts are read, each from where the last checkpoint left it; a pattern that matches no file is an error."`
}

// ReadJSONConfig is the config of ReadFromJson.
type ReadJSONConfig struct {
	Path   string     `yaml:"path" required:"true" doc:"JSON Lines files: a file, a directory, a glob pattern, or the path a sluice writer wrote (its committed files are read). The files present when the pipeline starts are read; a pattern that matches no file is an error."`
	Schema *yaml.Node `yaml:"schema" doc:"JSON Schema of the records, as a mapping or as JSON text. When absent, it is inferred from the first 100 lines of the files when the pipeline is validated."`
	// ErrorHandling names the output for lines that are not valid JSON or do not match the
	// schema.
	ErrorHandling *component.ErrorHandling `yaml:"error_handling" doc:"Send lines that cannot be decoded to this output as {failed_row, error_message, source} instead of stopping the pipeline."`
}

// ReadFileConfig is the config of ReadFromAvro and ReadFromParquet, whose files carry their
// schema.
type ReadFileConfig struct {
	Path string `yaml:"path" required:"true" doc:"A file, a directory, a glob pattern, or the path a sluice writer wrote (its committed files are read). The files present when the pipeline starts are read; the first file's schema is the rows' schema; a pattern that matches no file is an error."`
}

// WriteConfig is the config of WriteToJson, WriteToText, WriteToAvro and WriteToParquet.
type WriteConfig struct {
	Path      string `yaml:"path" required:"true" doc:"Output directory, created if missing. Each committed epoch is a directory epoch-<20-digit epoch> holding its data files and _checkpoint.json; a reader given the same path reads the committed files."`
	NumShards int    `yaml:"num_shards" doc:"How many files each epoch has at most (Beam's num_shards). Default: one per lane that wrote rows."`
}

// inferLines is how many records of the input the readers infer a schema from.
const inferLines = 100

// textSchema is the row schema of ReadFromText.
var textSchema = schemas.New(schemas.Field{Name: "line", Type: schemas.Type{Kind: schemas.String}})

var textReadFormat = lineFormat(isEmpty, func() recordDecoder {
	return func(_ *schemas.Batch, _ int, line []byte) (schemas.Row, error) { return schemas.Row{string(line)}, nil }
})

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
	schema := givenOrInferred(ctx, cfg.Schema, cfg.Path, inferJSON)
	if schema == nil {
		return nil, nil
	}
	errOut := ctx.ErrorOutput(cfg.ErrorHandling, nil, component.IOTextShape)
	format := lineFormat(isBlank, func() recordDecoder {
		dec := schemas.NewJSONDecoder(schema)
		return func(_ *schemas.Batch, _ int, line []byte) (schemas.Row, error) { return dec.Decode(line) }
	})
	return newSource(cfg.Path, schema, format, errOut), nil
}

func checkReadPath(ctx *component.Context, path string) bool {
	if strings.TrimSpace(path) == "" {
		ctx.Errorf(ctx.KeyPos("path"), "%s needs a non-empty path", ctx.Describe())
		return false
	}
	return true
}

// filesToInferFrom lists the files a reader takes its schema from when the pipeline is
// built. When none exists yet and the pipeline is only checked (sluice validate; the
// pipelines of a test file before the one that writes the files has run), the schema is
// declared as known only at run time and ok is false with no error; otherwise no file is an
// error at the path. key is the config key that would give the schema, "" for formats whose
// files carry it.
func filesToInferFrom(ctx *component.Context, path, key string) (files []string, ok bool) {
	pos := ctx.KeyPos("path")
	files, err := listFiles(path)
	switch {
	case err == nil:
		return files, true
	case ctx.Offline && (notExist(err) || isNoMatch(err)):
		ctx.OutputFromService(component.Main, fmt.Sprintf("the files of %q, which do not exist yet", path))
		return nil, false
	case notExist(err) || isNoMatch(err):
		d := ctx.Errorf(pos, "%s takes its schema from its files, but %v", ctx.Describe(), err)
		if key != "" {
			d.Detail = fmt.Sprintf("give the records' schema as config key %q, or write the files first", key)
		}
		return nil, false
	}
	ctx.Errorf(pos, "%s: %v", ctx.Describe(), err)
	return nil, false
}

// givenOrInferred returns the schema of config key schema (n) or, without it, the one infer
// finds in the files of path, and declares it as the main output; nil after reporting why
// there is none.
func givenOrInferred(ctx *component.Context, n *yaml.Node, path string,
	infer func(ctx *component.Context, path string, files []string) *schemas.Schema) *schemas.Schema {
	var schema *schemas.Schema
	if n != nil {
		schema = formats.JSONSchema(ctx, n)
	} else if files, ok := filesToInferFrom(ctx, path, "schema"); ok {
		schema = infer(ctx, path, files)
	}
	if schema != nil {
		ctx.Output(component.Main, schema)
	}
	return schema
}

// fileSchema returns what read finds in the first file of path (its schema), for the formats
// whose files carry their schema; nil after reporting why there is none.
func fileSchema[T any](ctx *component.Context, path string, read func(name string) (*T, error)) *T {
	if !checkReadPath(ctx, path) {
		return nil
	}
	files, ok := filesToInferFrom(ctx, path, "")
	if !ok {
		return nil
	}
	pos := ctx.KeyPos("path")
	if len(files) == 0 {
		ctx.Errorf(pos, "%s takes its schema from its files, but %s holds no committed file yet", ctx.Describe(), path)
		return nil
	}
	v, err := read(files[0])
	if err != nil {
		ctx.Errorf(pos, "%s: %v", ctx.Describe(), err)
		return nil
	}
	return v
}

// inferJSON infers the schema of ReadFromJson from the first lines of its files, reporting
// at the path when it cannot.
func inferJSON(ctx *component.Context, path string, files []string) *schemas.Schema {
	pos := ctx.KeyPos("path")
	const hint = "give the records' JSON Schema as config key \"schema\""
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

var jsonWriteFormat = lineWriteFormat(".jsonl", nil, func(dst []byte, s *schemas.Schema, row schemas.Row) ([]byte, error) {
	return schemas.AppendJSON(dst, s, row), nil
})

func buildWriteJSON(ctx *component.Context, cfg *WriteConfig) (component.Sink, error) {
	if !checkWriteConfig(ctx, cfg) {
		return nil, nil
	}
	return newSink(cfg, ctx.Describe(), jsonWriteFormat, ctx.Input()), nil
}

func buildWriteText(ctx *component.Context, cfg *WriteConfig) (component.Sink, error) {
	ok := checkWriteConfig(ctx, cfg)
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
	return newSink(cfg, ctx.Describe(), textWriteFormat, ctx.Input()), nil
}

var textWriteFormat = lineWriteFormat(".txt", nil, func(dst []byte, _ *schemas.Schema, row schemas.Row) ([]byte, error) {
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
})

// checkWriteConfig checks the keys every writer has.
func checkWriteConfig(ctx *component.Context, cfg *WriteConfig) bool {
	ok := true
	switch path := cfg.Path; {
	case strings.TrimSpace(path) == "":
		ctx.Errorf(ctx.KeyPos("path"), "%s needs a non-empty path", ctx.Describe())
		ok = false
	case strings.ContainsAny(path, "*?["):
		ctx.Errorf(ctx.KeyPos("path"), "%s: path %q is an output directory, not a pattern", ctx.Describe(), path)
		ok = false
	}
	if cfg.NumShards < 0 {
		ctx.Errorf(ctx.KeyPos("num_shards"), "%s: num_shards must be 1 or more (or absent: one file per lane), not %d", ctx.Describe(), cfg.NumShards)
		ok = false
	}
	return ok
}
