package kafka

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/schemas"
	sluiceavro "github.com/sluicehq/sluice/schemas/avro"
)

// benchBatch is a batch of 1000 undecoded values, as Read returns them.
func benchBatch(value func(i int) []byte) *schemas.Batch {
	b := &schemas.Batch{}
	for i := range 1000 {
		b.Raw = append(b.Raw, value(i))
		b.Pos = append(b.Pos, schemas.Position{Source: "kafka:bench", Offset: int64(i)})
	}
	b.Time = make([]time.Time, len(b.Raw))
	return b
}

func benchDecode(b *testing.B, config string, value func(i int) []byte) {
	src := env.Build(b, "", "type: ReadFromKafka\nconfig:\n  topic: bench\n  bootstrap_servers: x:1\n"+config).Component.(*source)
	batch := benchBatch(value)
	size := 0
	for _, v := range batch.Raw {
		size += len(v)
	}
	discard := func(string, *schemas.Batch) error { return nil }
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if err := src.Decode(context.Background(), batch, discard); err != nil {
			b.Fatal(err)
		}
	}
}

// Decoding ~1 KiB JSON values (measure, do not assert: go test -run '^$' -bench . ./connectors/kafka/).
func BenchmarkDecodeJSON(b *testing.B) {
	pad := strings.Repeat("x", 900)
	benchDecode(b, "  format: JSON\n  schema: {type: object, properties: {id: {type: integer}, user: {type: string}, score: {type: number}, pad: {type: string}}}\n",
		func(i int) []byte {
			return fmt.Appendf(nil, `{"id": %d, "user": "user%d", "score": %d.5, "pad": "%s"}`, i, i%100, i, pad)
		})
}

// Decoding ~1 KiB Avro values.
func BenchmarkDecodeAvro(b *testing.B) {
	schema := `{"type": "record", "name": "E", "fields": [{"name": "id", "type": "long"}, {"name": "user", "type": "string"}, {"name": "score", "type": "double"}, {"name": "pad", "type": "string"}]}`
	c, err := sluiceavro.NewCodec(schema)
	if err != nil {
		b.Fatal(err)
	}
	enc, pad := c.NewEncoder(), strings.Repeat("x", 950)
	benchDecode(b, "  format: AVRO\n  schema: '"+schema+"'\n", func(i int) []byte {
		v, err := enc.Append(nil, schemas.Row{int64(i), fmt.Sprintf("user%d", i%100), float64(i) + .5, pad}, []int{0, 1, 2, 3})
		if err != nil {
			b.Fatal(err)
		}
		return v
	})
}

// Encoding ~1 KiB rows as shop.Order messages with WriteToKafka's format PROTO: every field
// set, nested messages, a map, a timestamp and a wrapper (go test -run '^$' -bench Proto
// ./connectors/kafka/).
func BenchmarkEncodeProto(b *testing.B) {
	path, md := writeDescriptorSet(b)
	lines := []string{"format: PROTO", "file_descriptor_path: " + path, "message_name: shop.Order"}
	src := env.Build(b, "", "type: ReadFromKafka\nconfig:\n"+config("t", lines...)).Component.(*source)
	row, err := src.format.NewDecoder()(orderValues(b, md)[0])
	if err != nil {
		b.Fatal(err)
	}
	row[1] = strings.Repeat("a long name of the order, ", 36) // ~1 KiB in all
	enc := env.Build(b, "", "type: WriteToKafka\nconfig:\n"+config("t", lines...), src.out).Component.(*sink).format.NewEncoder()
	buf, _, err := enc(nil, src.out, row)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if buf, _, err = enc(buf[:0], src.out, row); err != nil {
			b.Fatal(err)
		}
	}
}
