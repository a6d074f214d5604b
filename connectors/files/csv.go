package files

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// ReadCSVConfig is the config of ReadFromCsv: Beam's keys (path, delimiter, comment, as
// pandas' read_csv names them) and sluice's schema and error_handling.
type ReadCSVConfig struct {
	Path      string     `yaml:"path" required:"true" doc:"CSV files with a header line: a file, a directory, a glob pattern, or the path a sluice writer wrote (its committed files are read). The files present when the pipeline starts are read; a pattern that matches no file is an error."`
	Delimiter string     `yaml:"delimiter" doc:"The character between fields (pandas' sep/delimiter). Default: a comma."`
	Comment   string     `yaml:"comment" doc:"A character that starts a comment line: lines whose first character it is are skipped."`
	Schema    *yaml.Node `yaml:"schema" doc:"JSON Schema of the rows; columns are matched to its fields by the header's names. When absent, the fields are the header's columns, each an integer, number, boolean or string as the first 100 rows show, all nullable."`
	// ErrorHandling names the output for rows that cannot be decoded.
	ErrorHandling *component.ErrorHandling `yaml:"error_handling" doc:"Send rows that cannot be decoded (a wrong number of fields, a value of the wrong type) to this output as {failed_row, error_message, source} instead of stopping the pipeline; the message starts with the row's file:line."`
}

// WriteCSVConfig is the config of WriteToCsv.
type WriteCSVConfig struct {
	WriteConfig `yaml:",inline"`
	Delimiter   string `yaml:"delimiter" doc:"The character between fields. Default: a comma."`
}

// csvChar checks a delimiter or comment key: one character that CSV can use.
func csvChar(ctx *component.Context, key, value string, def rune) (rune, bool) {
	if value == "" {
		return def, true
	}
	r, n := utf8.DecodeRuneInString(value)
	if n != len(value) || r == '"' || r == '\r' || r == '\n' || r == utf8.RuneError {
		ctx.Errorf(ctx.KeyPos(key), "%s: %s must be one character other than a quote or a line break, not %q", ctx.Describe(), key, value)
		return 0, false
	}
	return r, true
}

func buildReadCSV(ctx *component.Context, cfg *ReadCSVConfig) (component.Source, error) {
	ok := checkReadPath(ctx, cfg.Path)
	delim, dok := csvChar(ctx, "delimiter", cfg.Delimiter, ',')
	comment, cok := csvChar(ctx, "comment", cfg.Comment, 0)
	if !ok || !dok || !cok {
		return nil, nil
	}
	if delim == comment {
		ctx.Errorf(ctx.KeyPos("comment"), "%s: comment and delimiter are the same character %q", ctx.Describe(), delim)
		return nil, nil
	}
	d := csvDialect{delim: delim, comment: comment}
	schema := givenOrInferred(ctx, cfg.Schema, cfg.Path, func(ctx *component.Context, _ string, files []string) *schemas.Schema {
		s, err := inferCSV(files, d)
		if err != nil {
			ctx.Errorf(ctx.KeyPos("path"), "%s cannot infer the columns' types: %v", ctx.Describe(), err).
				Detail = "give the rows' JSON Schema as config key \"schema\""
		}
		return s
	})
	if schema == nil {
		return nil, nil
	}
	errOut := ctx.ErrorOutput(cfg.ErrorHandling, nil, component.IOTextShape)
	format := fileFormat{
		open: func(f *os.File, name string, size, off int64) (records, error) {
			return openCSV(f, name, size, off, d, schema)
		},
		newDecoder: func() recordDecoder { return newCSVDecoder(schema, d) },
	}
	return newSource(cfg.Path, schema, format, errOut), nil
}

// csvDialect is how a CSV file is written: its delimiter and comment character (0: none).
type csvDialect struct {
	delim, comment rune
}

// skip reports whether a line is no record: blank, or a comment.
func (d csvDialect) skip(line []byte) bool {
	if d.comment != 0 && bytes.HasPrefix(line, []byte(string(d.comment))) {
		return true
	}
	return isBlank(line)
}

// fields splits one record's text.
func (d csvDialect) fields(raw []byte) ([]string, error) {
	r := csv.NewReader(bytes.NewReader(raw))
	r.Comma, r.FieldsPerRecord = d.delim, -1
	rec, err := r.Read()
	if err == io.EOF {
		return nil, errors.New("the record is empty")
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, err
	}
	return rec, nil
}

// csvRecords reads the records of a CSV file: its lines, a line joined with the next ones
// while a quoted field is open (a quoted field may hold line breaks).
type csvRecords struct {
	lines *lineRecords
	cols  []int // per column of the file's header, the schema's field (-1: not read)
	buf   []byte
}

func (r *csvRecords) offset() int64 { return r.lines.offset() }

func (r *csvRecords) fileState() any { return r.cols }

func (r *csvRecords) next() (record, error) {
	first, err := r.lines.next()
	if err != nil {
		return record{}, err
	}
	quotes := bytes.Count(first.raw, []byte{'"'})
	if quotes%2 == 0 {
		return first, nil
	}
	r.buf = append(r.buf[:0], first.raw...)
	for quotes%2 != 0 {
		// Blank lines inside a quoted field belong to it: read them raw.
		line, _, err := r.lines.lr.next()
		if err == io.EOF {
			return record{}, fmt.Errorf("%s:%d: a quoted field is not closed before the end of the file", r.lines.name, first.line)
		}
		if err != nil {
			return record{}, fmt.Errorf("read %s: %w", r.lines.name, err)
		}
		r.lines.line++
		quotes += bytes.Count(line, []byte{'"'})
		r.buf = append(append(r.buf, '\n'), line...)
	}
	first.raw = r.buf
	return first, nil
}

// openCSV reads the header of a CSV file and returns its records from offset off (0: the
// record after the header).
func openCSV(f *os.File, name string, size, off int64, d csvDialect, schema *schemas.Schema) (records, error) {
	head, err := openLines(f, name, size, 0, d.skip, true)
	if err != nil {
		return nil, err
	}
	hr := &csvRecords{lines: head}
	rec, err := hr.next()
	if err == io.EOF {
		return &csvRecords{lines: head}, nil // an empty file: no header, no records
	}
	if err != nil {
		return nil, err
	}
	header, err := d.fields(rec.raw)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: the header: %w", name, rec.line, err)
	}
	cols, err := csvColumns(header, schema)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, rec.line, err)
	}
	if off == 0 {
		return &csvRecords{lines: head, cols: cols}, nil
	}
	if off < head.offset() {
		return nil, fmt.Errorf("the checkpoint resumes %s at offset %d, inside its header: the file changed since; restore it, or write to a new output to read it from the start", name, off)
	}
	lines, err := openLines(f, name, size, off, d.skip, true)
	if err != nil {
		return nil, err
	}
	return &csvRecords{lines: lines, cols: cols}, nil
}

// csvColumns matches a header's columns with the schema's fields by name: every field that
// is not nullable needs its column.
func csvColumns(header []string, schema *schemas.Schema) ([]int, error) {
	cols := make([]int, len(header))
	found := make([]bool, len(schema.Fields))
	for i, h := range header {
		cols[i] = -1
		for j, f := range schema.Fields {
			if f.Name == strings.TrimSpace(h) && !found[j] {
				cols[i], found[j] = j, true
				break
			}
		}
	}
	for j, f := range schema.Fields {
		if !found[j] && !f.Nullable {
			return nil, fmt.Errorf("the header has no column %q, which the schema requires (the header: %s)", f.Name, strings.Join(header, ","))
		}
	}
	return cols, nil
}

// newCSVDecoder returns the decoder of CSV records into rows of schema. The columns of each
// file come with the batch (batchMeta.cols); errors start with the record's file:line.
func newCSVDecoder(schema *schemas.Schema, d csvDialect) recordDecoder {
	return func(b *schemas.Batch, i int, raw []byte) (schemas.Row, error) {
		meta := b.Meta.(*batchMeta)
		row, err := decodeCSV(raw, d, meta.state.([]int), schema)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", meta.file, meta.lines[i], err)
		}
		return row, nil
	}
}

func decodeCSV(raw []byte, d csvDialect, cols []int, schema *schemas.Schema) (schemas.Row, error) {
	fields, err := d.fields(raw)
	if err != nil {
		return nil, err
	}
	if len(fields) != len(cols) {
		return nil, fmt.Errorf("the row has %d fields, the header %d", len(fields), len(cols))
	}
	row := make(schemas.Row, len(schema.Fields))
	for i, text := range fields {
		j := cols[i]
		if j < 0 {
			continue
		}
		f := schema.Fields[j]
		v, err := parseCell(text, f.Type)
		if err == nil && v == nil && !f.Nullable {
			err = errors.New("is empty, and the field is required")
		}
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		row[j] = v
	}
	return row, nil
}

// parseCell converts a CSV field to a value of t; an empty field is null.
func parseCell(text string, t schemas.Type) (any, error) {
	if text == "" {
		return nil, nil
	}
	switch t.Kind {
	case schemas.String:
		return text, nil
	case schemas.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("want an integer, got %q", text)
		}
		return n, nil
	case schemas.Float64:
		x, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil {
			return nil, fmt.Errorf("want a number, got %q", text)
		}
		return x, nil
	case schemas.Bool:
		if b, ok := parseBool(text); ok {
			return b, nil
		}
		return nil, fmt.Errorf("want a boolean, got %q", text)
	case schemas.Any:
		return cellValue(text), nil
	}
	return schemas.Coerce(text, t, true)
}

func parseBool(text string) (bool, bool) {
	switch strings.TrimSpace(text) {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	return false, false
}

// cellValue is the value a CSV field holds without a schema: an integer, a number, a
// boolean or the text.
func cellValue(text string) any {
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return n
	}
	if x, err := strconv.ParseFloat(text, 64); err == nil {
		return x
	}
	if b, ok := parseBool(text); ok {
		return b
	}
	return text
}

// inferCSV infers the schema of CSV files: the first file's header gives the fields, and the
// first inferLines records of the files (matched by header name) their types: integer when
// every value is one, else number when every value is one, else boolean, else string. Every
// field is nullable: an empty CSV field is null.
func inferCSV(files []string, d csvDialect) (*schemas.Schema, error) {
	var names []string
	kinds := map[string]schemas.Kind{}
	seen := 0
	for _, name := range files {
		if seen >= inferLines {
			break
		}
		header, rows, err := sampleCSV(name, d, inferLines-seen)
		if err != nil {
			return nil, err
		}
		if names == nil {
			names = header
		}
		for _, rec := range rows {
			for i, text := range rec {
				if i < len(header) && text != "" {
					kinds[header[i]] = widen(kinds[header[i]], cellValue(text))
				}
			}
		}
		seen += len(rows)
	}
	switch {
	case len(files) == 0:
		return nil, errors.New("the path holds no committed file yet")
	case len(names) == 0:
		return nil, fmt.Errorf("%s has no header line", files[0])
	}
	fields := make([]schemas.Field, len(names))
	for i, n := range names {
		k, ok := kinds[n]
		if !ok || k == schemas.Any {
			k = schemas.String
		}
		fields[i] = schemas.Field{Name: n, Type: schemas.Type{Kind: k}, Nullable: true}
	}
	return schemas.New(fields...), nil
}

// widen returns the kind that holds the values of kind k (Any: none yet) and v.
func widen(k schemas.Kind, v any) schemas.Kind {
	var vk schemas.Kind
	switch v.(type) {
	case int64:
		vk = schemas.Int64
	case float64:
		vk = schemas.Float64
	case bool:
		vk = schemas.Bool
	default:
		return schemas.String
	}
	switch {
	case k == schemas.Any || k == vk:
		return vk
	case (k == schemas.Int64 && vk == schemas.Float64) || (k == schemas.Float64 && vk == schemas.Int64):
		return schemas.Float64
	}
	return schemas.String
}

// sampleCSV returns the header and up to n records of a CSV file.
func sampleCSV(name string, d csvDialect, n int) ([]string, [][]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	lines, err := openLines(f, name, 0, 0, d.skip, true)
	if err != nil {
		return nil, nil, err
	}
	r := &csvRecords{lines: lines}
	var header []string
	var out [][]string
	for len(out) < n {
		rec, err := r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		fields, err := d.fields(rec.raw)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", name, rec.line, err)
		}
		if header == nil {
			header = fields
			for i := range header {
				header[i] = strings.TrimSpace(header[i])
			}
			continue
		}
		out = append(out, fields)
	}
	return header, out, nil
}

func buildWriteCSV(ctx *component.Context, cfg *WriteCSVConfig) (component.Sink, error) {
	ok := checkWriteConfig(ctx, &cfg.WriteConfig)
	delim, dok := csvChar(ctx, "delimiter", cfg.Delimiter, ',')
	for _, in := range ctx.Inputs {
		if in.Schema == nil {
			continue
		}
		for _, f := range in.Schema.Fields {
			switch f.Type.Kind {
			case schemas.Array, schemas.Struct, schemas.Map, schemas.Any:
				ctx.Errorf(ctx.Pos, "%s writes one value per column, but field %q of its input %q is %s", ctx.Describe(), f.Name, in.Name, f.Type).
					Detail = "map it to a string first (e.g. its JSON text), or use WriteToJson, WriteToAvro or WriteToParquet for nested rows"
				ok = false
			}
		}
	}
	if !ok || !dok {
		return nil, nil
	}
	return newSink(&cfg.WriteConfig, ctx.Describe(), csvWriteFormat(delim), ctx.Input()), nil
}

// csvWriteFormat writes a header line of the field names, then a line per row.
func csvWriteFormat(delim rune) writeFormat {
	record := func(dst []byte, fields []string) ([]byte, error) {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.Comma = delim
		if err := w.Write(fields); err != nil {
			return dst, err
		}
		w.Flush()
		return append(dst, bytes.TrimSuffix(b.Bytes(), []byte{'\n'})...), w.Error()
	}
	header := func(s *schemas.Schema) []byte {
		names := make([]string, len(s.Fields))
		for i, f := range s.Fields {
			names[i] = f.Name
		}
		out, _ := record(nil, names)
		return out
	}
	return lineWriteFormat(".csv", header, func(dst []byte, s *schemas.Schema, row schemas.Row) ([]byte, error) {
		cells := make([]string, 0, len(row))
		for i, v := range row {
			text, err := cellText(v, s.Fields[i].Type.Kind)
			if err != nil {
				return dst, fmt.Errorf("field %q: %w", s.Fields[i].Name, err)
			}
			cells = append(cells, text)
		}
		return record(dst, cells)
	})
}

// cellText writes a value as a CSV field that ReadFromCsv reads back: null is empty,
// numbers keep a fraction when they are floats, so that they read back as numbers.
func cellText(v any, k schemas.Kind) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEnN") {
			s += ".0"
		}
		return s, nil
	case bool:
		return strconv.FormatBool(x), nil
	case time.Time:
		if k == schemas.Date {
			return x.Format(time.DateOnly), nil
		}
		return x.Format(time.RFC3339Nano), nil
	case []byte:
		return base64.StdEncoding.EncodeToString(x), nil
	case *big.Rat:
		digits, _ := x.FloatPrec()
		return x.FloatString(digits), nil
	}
	return "", fmt.Errorf("holds a %s value, which a CSV field cannot hold", schemas.KindOf(v))
}
