package files

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2/ocf"
	"github.com/parquet-go/parquet-go"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// committed returns the data files of an output directory.
func committed(t *testing.T, dir string) []string {
	t.Helper()
	files, err := listFiles(dir)
	if err != nil || len(files) == 0 {
		t.Fatalf("output %s: %v, %d files", dir, err, len(files))
	}
	return files
}

// TestParquetReadByParquetGo reads WriteToParquet's files with parquet-go, a Parquet
// implementation that shares no code with arrow-go's.
func TestParquetReadByParquetGo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	writeOutput(t, dir, fmt.Sprintf("type: WriteToParquet\nconfig:\n  path: %q\n", dir), richSchema, richRow, 20)
	type owner struct {
		First *string `parquet:"first,optional"`
		Age   *int64  `parquet:"age,optional"`
	}
	type rich struct {
		ID    int64     `parquet:"id"`
		Name  *string   `parquet:"name,optional"`
		At    *int64    `parquet:"at,optional"` // microseconds
		Day   *int32    `parquet:"day,optional"`
		Raw   []byte    `parquet:"raw,optional"`
		Tags  []*string `parquet:"tags,optional,list"`
		Owner *owner    `parquet:"owner,optional"`
	}
	var got []string
	for _, f := range committed(t, dir) {
		rows, err := parquet.ReadFile[rich](f)
		if err != nil {
			t.Fatalf("parquet-go reading %s: %v", f, err)
		}
		for _, r := range rows {
			if r.Name == nil {
				got = append(got, fmt.Sprintf("%d null", r.ID))
				continue
			}
			at := time.UnixMicro(*r.At).UTC().Format(time.RFC3339Nano)
			day := time.Unix(int64(*r.Day)*86400, 0).UTC().Format(time.DateOnly)
			got = append(got, fmt.Sprintf("%d %s %s %s %v %s,%s %s/%d", r.ID, *r.Name, at, day, r.Raw, *r.Tags[0], *r.Tags[1], *r.Owner.First, *r.Owner.Age))
		}
	}
	var want []string
	for i := range 20 {
		r := richRow(i)
		if r[1] == nil {
			want = append(want, fmt.Sprintf("%d null", i))
			continue
		}
		own := r[7].(map[string]any)
		want = append(want, fmt.Sprintf("%d %s %s %s %v %s,%s %s/%d", i, r[1], r[2].(time.Time).Format(time.RFC3339Nano), r[3].(time.Time).Format(time.DateOnly),
			r[4], r[6].([]any)[0], r[6].([]any)[1], own["first"], own["age"]))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("parquet-go reads\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAvroReadByOCFDecoder reads WriteToAvro's files with hamba/avro's own container file
// decoder, not the reader of this package.
func TestAvroReadByOCFDecoder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	writeOutput(t, dir, fmt.Sprintf("type: WriteToAvro\nconfig:\n  path: %q\n", dir), flatSchema, flatRow, 20)
	var got []string
	for _, name := range committed(t, dir) {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := ocf.NewDecoder(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if codec := string(dec.Metadata()["avro.codec"]); codec != "deflate" {
			t.Errorf("%s: codec %q, want deflate (Beam's default)", name, codec)
		}
		for dec.HasNext() {
			var r struct {
				ID    int64    `avro:"id"`
				Name  *string  `avro:"name"`
				Score *float64 `avro:"score"`
				OK    *bool    `avro:"ok"`
			}
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if r.Name == nil {
				got = append(got, fmt.Sprintf("%d null", r.ID))
				continue
			}
			got = append(got, fmt.Sprintf("%d %q %v %v", r.ID, *r.Name, *r.Score, *r.OK))
		}
		if err := dec.Error(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	var want []string
	for i := range 20 {
		if r := flatRow(i); r[1] == nil {
			want = append(want, fmt.Sprintf("%d null", i))
		} else {
			want = append(want, fmt.Sprintf("%d %q %v %v", i, r[1], r[2], r[3]))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the ocf decoder reads\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCSVReading: the header names the columns (in any order, extra ones ignored), comment
// lines and blank lines are skipped, a quoted field spans lines, and a bad row goes to the
// error output with its file:line.
func TestCSVReading(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "in.csv", "# exported today\nname;id;extra\n\nann;1;x\n\"bob\nsmith\";2;y\n# a comment\ncid;three;z\ndan;4\neve;5;w\n")
	src := fmt.Sprintf(`type: ReadFromCsv
config:
  path: %q
  delimiter: ";"
  comment: "#"
  schema: {type: object, properties: {id: {type: integer}, name: {type: string}}, required: [id]}
  error_handling: {output: bad}
`, p)
	c, _ := mustBuild(t, src)
	out, _, err := readAll(t, c.(component.Source), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range out.Rows(component.Main) {
		got = append(got, fmt.Sprintf("%v %v", r[0], r[1]))
	}
	if want := []string{"1 ann", "2 bob\nsmith", "5 eve"}; !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
	var msgs []string
	for _, r := range out.Rows("bad") {
		msgs = append(msgs, fmt.Sprintf("%s | %v", r[0], r[1]))
	}
	want := []string{
		"cid;three;z | " + p + `:8: column "id": want an integer, got "three"`,
		"dan;4 | " + p + ":9: the row has 2 fields, the header 3",
	}
	if !slices.Equal(msgs, want) {
		t.Errorf("error rows\n%s\nwant\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
}

// TestCSVResumeKeepsLineNumbers resumes a CSV file mid-way: the header still maps the
// columns and an error names the line counted from the file's start.
func TestCSVResumeKeepsLineNumbers(t *testing.T) {
	p := writeFile(t, t.TempDir(), "in.csv", "id,name\n1,a\n2,b\nx,c\n")
	c, _ := mustBuild(t, fmt.Sprintf("type: ReadFromCsv\nconfig:\n  path: %q\n  schema: {type: object, properties: {id: {type: integer}, name: {type: string}}}\n", p))
	from := schemas.Offsets{}
	from.Set(sourceName(p), 0, int64(len("id,name\n1,a\n")))
	_, _, err := readAll(t, c.(component.Source), from)
	if err == nil || !strings.Contains(err.Error(), p+`:4: column "id": want an integer, got "x"`) {
		t.Errorf("got %v", err)
	}
}

// TestCSVInference: types from the first rows, every field nullable, columns in header order.
func TestCSVInference(t *testing.T) {
	p := writeFile(t, t.TempDir(), "in.csv", "n,x,b,s,e\n1,1.5,true,a,\n2,2,False,3,\n")
	_, ctx := mustBuild(t, fmt.Sprintf("type: ReadFromCsv\nconfig:\n  path: %q\n", p))
	if got, want := ctx.Outputs()[0].Schema.String(), "{n integer?, x number?, b boolean?, s string?, e string?}"; got != want {
		t.Errorf("inferred %s, want %s", got, want)
	}
}

// TestWritersRefuseWhatTheFormatCannotHold: a CSV field holds one value; Avro and Parquet
// need a type for every field.
func TestWritersRefuseWhatTheFormatCannotHold(t *testing.T) {
	anyField := schemas.New(rtField("id", schemas.Int64, false), rtField("payload", schemas.Any, true))
	for _, tt := range []struct {
		typ    string
		schema *schemas.Schema
		want   string
	}{
		{"WriteToCsv", richSchema, `pipeline.yaml:1:1: WriteToCsv writes one value per column, but field "tags" of its input "in0" is array<string>`},
		{"WriteToAvro", anyField, `pipeline.yaml:1:1: WriteToAvro cannot write rows {id integer, payload any?} as Avro`},
		{"WriteToParquet", anyField, `pipeline.yaml:1:1: WriteToParquet cannot write rows {id integer, payload any?} as Parquet: column "payload" is any, which has no Arrow type`},
	} {
		b := env.Build(t, "", "type: "+tt.typ+"\nconfig:\n  path: out\n", tt.schema)
		if err := b.Err(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v\nwant %s", tt.typ, err, tt.want)
		}
	}
	// An empty output has no header to infer CSV columns from.
	dir := filepath.Join(t.TempDir(), "out")
	writeOutput(t, dir, fmt.Sprintf("type: WriteToCsv\nconfig:\n  path: %q\n", dir), flatSchema, nil, 0)
	b := env.Build(t, "", fmt.Sprintf("type: ReadFromCsv\nconfig:\n  path: %q\n", dir))
	if err := b.Err(); err == nil || !strings.Contains(err.Error(), "cannot infer the columns' types: the path holds no committed file yet") {
		t.Errorf("an empty output: %v", err)
	}
}
