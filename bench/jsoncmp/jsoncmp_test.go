// Package jsoncmp measures JSON decoders on the bench harness's records (issue 21, target 4):
// sluice's JSONDecoder (its one-pass scanner, and its checked fastjson path, which was the
// decoder before), a SIMD parser (minio/simdjson-go) walked into rows by the schema, and the
// generic decoders (bytedance/sonic, goccy/go-json, encoding/json) into maps converted to rows
// by schemas.Coerce, as a decoder without its own schema-directed path would. Each yields the
// same sluice row per record, checked against JSONDecoder's before timing.
//
// It is a module of its own so that the decoders it compares are not dependencies of sluice:
//
//	cd bench/jsoncmp && go test -bench . -benchmem
package jsoncmp

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bytedance/sonic"
	gojson "github.com/goccy/go-json"
	"github.com/minio/simdjson-go"
	"github.com/sluicehq/sluice/bench/benchdata"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// records are the bench harness's first records, as it loads them into its topic.
func records(n int) [][]byte {
	g := benchdata.NewGenerator(1)
	base := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC).UnixMicro()
	out := make([][]byte, n)
	for i := range out {
		out[i] = g.Event(nil, int64(i), base+int64(i)*1000)
	}
	return out
}

func eventSchema(tb testing.TB) *schemas.Schema {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(benchdata.EventSchema), &n); err != nil {
		tb.Fatal(err)
	}
	s, err := schemas.ParseJSONSchema(n.Content[0])
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

type decoder struct {
	name string
	new  func(s *schemas.Schema) func([]byte) (schemas.Row, error)
}

var decoders = []decoder{
	{"sluice-scan", func(s *schemas.Schema) func([]byte) (schemas.Row, error) {
		return schemas.NewJSONDecoder(s).Decode
	}},
	{"sluice-fastjson", func(s *schemas.Schema) func([]byte) (schemas.Row, error) {
		return schemas.NewJSONDecoder(s).DecodeChecked
	}},
	{"simdjson-go", newSIMD},
	{"sonic", viaMap(func(b []byte, m *map[string]any) error {
		return sonic.Config{UseInt64: true, ValidateString: true}.Froze().Unmarshal(b, m)
	})},
	{"goccy-go-json", viaMap(func(b []byte, m *map[string]any) error { return gojson.Unmarshal(b, m) })},
	{"encoding-json", viaMap(func(b []byte, m *map[string]any) error { return json.Unmarshal(b, m) })},
}

// viaMap decodes into a map with unmarshal, then converts each field with schemas.Coerce.
func viaMap(unmarshal func([]byte, *map[string]any) error) func(*schemas.Schema) func([]byte) (schemas.Row, error) {
	return func(s *schemas.Schema) func([]byte) (schemas.Row, error) {
		return func(b []byte) (schemas.Row, error) {
			var m map[string]any
			if err := unmarshal(b, &m); err != nil {
				return nil, err
			}
			row := make(schemas.Row, len(s.Fields))
			for i, f := range s.Fields {
				v, err := schemas.Coerce(m[f.Name], f.Type, f.Nullable)
				if err != nil {
					return nil, fmt.Errorf("field %s: %w", f.Name, err)
				}
				row[i] = v
			}
			return row, nil
		}
	}
}

// newSIMD parses with simdjson-go into its tape (reused) and walks the root object into a
// row, converting by the field's kind. It handles the flat schemas of the bench only.
func newSIMD(s *schemas.Schema) func([]byte) (schemas.Row, error) {
	index := map[string]int{}
	for i, f := range s.Fields {
		index[f.Name] = i
	}
	var (
		pj         *simdjson.ParsedJson
		root, elem simdjson.Iter
		obj        simdjson.Object
	)
	return func(b []byte) (schemas.Row, error) {
		var err error
		if pj, err = simdjson.Parse(b, pj, simdjson.WithCopyStrings(false)); err != nil {
			return nil, err
		}
		it := pj.Iter()
		it.Advance()
		if _, _, err := it.Root(&root); err != nil {
			return nil, err
		}
		if _, err := root.Object(&obj); err != nil {
			return nil, err
		}
		row := make(schemas.Row, len(s.Fields))
		for {
			name, t, err := obj.NextElementBytes(&elem)
			if err != nil {
				return nil, err
			}
			if t == simdjson.TypeNone {
				return row, nil
			}
			i, ok := index[string(name)]
			if !ok || t == simdjson.TypeNull {
				continue
			}
			var v any
			switch s.Fields[i].Type.Kind {
			case schemas.String:
				var str string
				str, err = elem.String()
				v = strings.Clone(str)
			case schemas.Int64:
				v, err = elem.Int()
			case schemas.Float64:
				v, err = elem.Float()
			case schemas.Bool:
				v, err = elem.Bool()
			case schemas.Timestamp:
				var str string
				if str, err = elem.String(); err == nil {
					var ts time.Time
					ts, err = time.Parse(time.RFC3339Nano, str)
					v = ts.UTC()
				}
			default:
				err = fmt.Errorf("field %s: kind %v is not handled here", s.Fields[i].Name, s.Fields[i].Type.Kind)
			}
			if err != nil {
				return nil, err
			}
			row[i] = v
		}
	}
}

// TestDecodersAgree checks that every decoder gives JSONDecoder's rows.
func TestDecodersAgree(t *testing.T) {
	if !simdjson.SupportedCPU() {
		t.Skip("simdjson-go needs AVX2 and CLMUL")
	}
	s := eventSchema(t)
	want := schemas.NewJSONDecoder(s)
	for _, d := range decoders {
		dec := d.new(s)
		for _, r := range records(200) {
			got, err := dec(r)
			if err != nil {
				t.Fatalf("%s: %s: %v", d.name, r, err)
			}
			w, _ := want.Decode(r)
			if fmt.Sprint(got) != fmt.Sprint(w) {
				t.Fatalf("%s: %s:\n got  %v\n want %v", d.name, r, got, w)
			}
		}
	}
}

// BenchmarkDecode decodes one bench record per iteration; cpu-ns/op is the process's CPU
// time, the collector's included, which the bench harness counts too.
func BenchmarkDecode(b *testing.B) {
	if !simdjson.SupportedCPU() {
		b.Skip("simdjson-go needs AVX2 and CLMUL")
	}
	recs := records(4096)
	size := 0
	for _, r := range recs {
		size += len(r)
	}
	s := eventSchema(b)
	for _, d := range decoders {
		b.Run(d.name, func(b *testing.B) {
			dec := d.new(s)
			b.SetBytes(int64(size / len(recs)))
			b.ReportAllocs()
			cpu := processCPU()
			i := 0
			for b.Loop() {
				if _, err := dec(recs[i%len(recs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
