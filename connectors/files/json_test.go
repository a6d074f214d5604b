package files

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

const jsonInput = `{"id": 1, "name": "a"}
not json

{"id": "x", "name": "b"}
   
{"id": 3}
`

// jsonSource builds ReadFromJson on path with an inline schema, and error_handling when
// errorsTo is not empty.
func jsonSource(t *testing.T, path, errorsTo string) (component.Source, *component.Context) {
	t.Helper()
	src := fmt.Sprintf(`type: ReadFromJson
config:
  path: %q
  schema:
    type: object
    properties:
      id: {type: integer}
      name: {type: string}
    required: [id]
`, path)
	if errorsTo != "" {
		src += "  error_handling:\n    output: " + errorsTo + "\n"
	}
	c, ctx := mustBuild(t, src)
	return c.(component.Source), ctx
}

func TestReadJSONErrorRows(t *testing.T) {
	p := writeFile(t, t.TempDir(), "in.jsonl", jsonInput)
	src, ctx := jsonSource(t, p, "bad")
	outs := ctx.Outputs()
	if len(outs) != 2 || outs[0].Tag != component.Main || outs[1].Tag != "bad" || !outs[1].Errors {
		t.Fatalf("outputs %+v", outs)
	}
	out, _, err := readAll(t, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, pos := out.Rows(component.Main), out.Positions(component.Main)
	if len(rows) != 2 || rows[0][0] != int64(1) || rows[0][1] != "a" || rows[1][0] != int64(3) || rows[1][1] != nil {
		t.Errorf("good rows %v", rows)
	}
	if len(pos) != 2 || pos[0].Offset != 0 || pos[1].Offset != int64(strings.Index(jsonInput, `{"id": 3}`)) {
		t.Errorf("good positions %v", pos)
	}
	bad, badPos := out.Rows("bad"), out.Positions("bad")
	if len(bad) != 2 {
		t.Fatalf("error rows %v", bad)
	}
	for i, line := range []string{"not json", `{"id": "x", "name": "b"}`} {
		off := int64(strings.Index(jsonInput, line))
		row := bad[i]
		if row[0] != line || row[1] == "" {
			t.Errorf("error row %d: %v", i, row)
		}
		want := map[string]any{"topic": "file:" + p, "partition": int64(0), "offset": off}
		if fmt.Sprint(row[2]) != fmt.Sprint(want) || badPos[i].Offset != off {
			t.Errorf("error row %d comes from %v at %v, want %v", i, row[2], badPos[i], want)
		}
	}
	if msg := bad[1][1].(string); !strings.Contains(msg, "id") {
		t.Errorf("a schema mismatch says %q, which does not name the field", msg)
	}
}

func TestReadJSONStopsAtABadLine(t *testing.T) {
	p := writeFile(t, t.TempDir(), "in.jsonl", jsonInput)
	src, ctx := jsonSource(t, p, "")
	if len(ctx.Outputs()) != 1 {
		t.Errorf("outputs %+v, want only the main one", ctx.Outputs())
	}
	_, _, err := readAll(t, src, nil)
	rowErr, ok := errors.AsType[*component.RowError](err)
	if !ok {
		t.Fatalf("got %v, want a RowError", err)
	}
	want := schemas.Position{Source: "file:" + p, Offset: int64(len(`{"id": 1, "name": "a"}` + "\n"))}
	if rowErr.Pos != want || !strings.Contains(err.Error(), p) {
		t.Errorf("stopped at %v (%v), want %v", rowErr.Pos, err, want)
	}
}

func TestReadJSONInfersTheSchema(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.jsonl", "\n"+`{"id": 1, "name": "x"}`+"\n")
	writeFile(t, dir, "b.jsonl", `{"id": 2, "name": "y", "ok": true}`)
	c, ctx := mustBuild(t, fmt.Sprintf("type: ReadFromJson\nconfig:\n  path: %q\n", filepath.Join(dir, "*.jsonl")))
	s := ctx.Outputs()[0].Schema
	for name, kind := range map[string]schemas.Kind{"id": schemas.Int64, "name": schemas.String, "ok": schemas.Bool} {
		if f, ok := s.Field(name); !ok || f.Type.Kind != kind {
			t.Errorf("inferred %s, want field %s of kind %s", s, name, kind)
		}
	}
	out, _, err := readAll(t, c.(component.Source), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rows := out.Rows(component.Main); len(rows) != 2 {
		t.Errorf("read %v", rows)
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "*.jsonl")
	writeFile(t, dir, "blank/a.jsonl", "\n\n")
	twoFields := schemas.New(schemas.Field{Name: "id", Type: schemas.Type{Kind: schemas.Int64}},
		schemas.Field{Name: "name", Type: schemas.Type{Kind: schemas.String}})
	intLine := schemas.New(schemas.Field{Name: "line", Type: schemas.Type{Kind: schemas.Int64}})
	tests := []struct {
		name, src string
		inputs    []*schemas.Schema
		want      string
	}{
		{"no schema and no file", fmt.Sprintf("type: ReadFromJson\nconfig:\n  path: %q\n", empty), nil,
			`pipeline.yaml:3:9: ReadFromJson takes its schema from its files, but no file matches ` + empty +
				"\n\thint: give the records' schema as config key \"schema\", or write the files first"},
		{"no schema and only blank lines", fmt.Sprintf("type: ReadFromJson\nconfig:\n  path: %q\n", filepath.Join(dir, "blank")), nil,
			"pipeline.yaml:3:9: ReadFromJson has no schema and the files of"},
		{"bad schema", "type: ReadFromJson\nconfig:\n  path: x.jsonl\n  schema:\n    type: object\n    properties:\n      id: {type: int}\n", nil,
			"pipeline.yaml:7:"},
		{"empty path", "type: ReadFromText\nconfig:\n  path: ''\n", nil, "pipeline.yaml:3:9: ReadFromText needs a non-empty path"},
		{"missing path", "type: ReadFromText\nconfig: {}\n", nil, `pipeline.yaml:2:9: ReadFromText needs config key "path"`},
		{"text of two fields", "type: WriteToText\nconfig:\n  path: out\n", []*schemas.Schema{twoFields},
			`pipeline.yaml:1:1: WriteToText writes one string per line, but its input "in0" has rows {id integer, name string}`},
		{"text of an integer", "type: WriteToText\nconfig:\n  path: out\n", []*schemas.Schema{intLine},
			`pipeline.yaml:1:1: WriteToText writes one string per line, but its input "in0" has rows {line integer}`},
		{"sink pattern", "type: WriteToJson\nconfig:\n  path: out/*\n", []*schemas.Schema{twoFields},
			`pipeline.yaml:3:9: WriteToJson: path "out/*" is an output directory, not a pattern`},
		{"unknown key", "type: WriteToJson\nconfig:\n  path: out\n  pth: x\n", []*schemas.Schema{twoFields},
			`pipeline.yaml:4:3: unknown config key "pth" in WriteToJson (did you mean "path"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := env.Build(t, "", tt.src, tt.inputs...)
			if b.Component != nil || len(b.Diags) == 0 {
				t.Fatalf("built without errors")
			}
			if got := b.Err().Error(); !strings.HasPrefix(got, tt.want) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestWriteTextAcceptsOneStringField(t *testing.T) {
	nullable := schemas.New(schemas.Field{Name: "text", Type: schemas.Type{Kind: schemas.String}, Nullable: true})
	mustBuild(t, "type: WriteToText\nconfig:\n  path: out\n", nullable)
}
