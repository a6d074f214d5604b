package files

import (
	"errors"
	"fmt"
	"io"
	"os"

	havro "github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"
	"github.com/klauspost/compress/zstd"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/avro"
)

// Avro object container files (the Avro specification's "Object Container Files"): a
// header with the writer's schema, the codec and a sync marker, then blocks of records. The
// records are decoded with the Avro codec of schemas/avro; the container is read here, with
// hamba/avro's header schema and codecs. A record's offset is its ordinal in the file.

func buildReadAvro(ctx *component.Context, cfg *ReadFileConfig) (component.Source, error) {
	codec := fileSchema(ctx, cfg.Path, func(name string) (*avro.Codec, error) {
		text, err := avroFileSchema(name)
		if err != nil {
			return nil, err
		}
		codec, err := avro.NewCodec(text)
		if err != nil {
			return nil, fmt.Errorf("the schema of %s: %w", name, err)
		}
		return codec, nil
	})
	if codec == nil {
		return nil, nil
	}
	ctx.Output(component.Main, codec.Schema())
	format := fileFormat{
		open: func(f *os.File, name string, _, off int64) (records, error) {
			return openAvro(f, name, off, codec)
		},
		newDecoder: func() recordDecoder {
			dec := codec.NewDecoder()
			return func(b *schemas.Batch, _ int, raw []byte) (schemas.Row, error) {
				return dec.DecodeWritten(b.Meta.(*batchMeta).state.(*avro.Writer), raw)
			}
		},
	}
	return newSource(cfg.Path, codec.Schema(), format, nil), nil
}

// avroHeader reads the header of an object container file.
func avroHeader(r *havro.Reader, name string) (ocf.Header, error) {
	var h ocf.Header
	r.ReadVal(ocf.HeaderSchema, &h)
	if r.Error != nil || h.Magic != [4]byte{'O', 'b', 'j', 1} {
		return h, fmt.Errorf("%s is not an Avro object container file", name)
	}
	return h, nil
}

// avroFileSchema returns the writer's schema of an object container file.
func avroFileSchema(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	h, err := avroHeader(havro.NewReader(f, 4096), name)
	if err != nil {
		return "", err
	}
	return string(h.Meta["avro.schema"]), nil
}

// maxAvroBlock is the largest block the reader accepts: a larger size is a damaged header,
// not a reason to allocate it.
const maxAvroBlock = 1 << 30

// avroRecords reads the records of an object container file, block by block.
type avroRecords struct {
	name   string
	r      *havro.Reader
	sync   [16]byte
	decode func([]byte) ([]byte, error) // the block codec
	schema havro.Schema                 // the writer's
	writer *avro.Writer                 // the writer's schema resolved to the rows'
	block  []byte                       // what is left of the current block
	left   int64                        // records left in the current block
	n      int64                        // records read (the next record's ordinal)
}

func (r *avroRecords) offset() int64  { return r.n }
func (r *avroRecords) fileState() any { return r.writer }
func (r *avroRecords) next() (record, error) {
	for r.left == 0 {
		if err := r.nextBlock(); err != nil {
			return record{}, err
		}
	}
	size, err := avroValueSize(r.schema, r.block)
	if err != nil {
		return record{}, fmt.Errorf("%s, record %d: %w", r.name, r.n, err)
	}
	rec := record{raw: r.block[:size:size], start: r.n}
	r.block, r.left, r.n = r.block[size:], r.left-1, r.n+1
	return rec, nil
}

// nextBlock reads the next block, or returns io.EOF after the last.
func (r *avroRecords) nextBlock() error {
	count, data, err := r.readBlock(-1)
	if err != nil {
		return err
	}
	r.left, r.block = count, data
	return nil
}

// readBlock reads the next block's record count and its records' bytes, or skips them (nil
// data) when the block ends at or before record skipTo.
func (r *avroRecords) readBlock(skipTo int64) (int64, []byte, error) {
	count := r.r.ReadLong()
	if errors.Is(r.r.Error, io.EOF) {
		return 0, nil, io.EOF
	}
	size := r.r.ReadLong()
	if r.r.Error != nil || count < 0 || size < 0 || size > maxAvroBlock {
		return 0, nil, fmt.Errorf("read %s: a damaged block header (%d records in %d bytes)", r.name, count, size)
	}
	var data []byte
	if r.n+count > skipTo {
		raw := make([]byte, size)
		r.r.Read(raw)
		if r.r.Error == nil {
			var err error
			if data, err = r.decode(raw); err != nil {
				return 0, nil, fmt.Errorf("read %s: %w", r.name, err)
			}
		}
	} else {
		r.r.SkipNBytes(int(size))
	}
	var sync [16]byte
	r.r.Read(sync[:])
	if r.r.Error != nil {
		return 0, nil, fmt.Errorf("read %s: %w", r.name, r.r.Error)
	}
	if sync != r.sync {
		return 0, nil, fmt.Errorf("read %s: a block does not end with the file's sync marker: the file is damaged", r.name)
	}
	return count, data, nil
}

// openAvro reads the header of an object container file and skips its first off records.
func openAvro(f *os.File, name string, off int64, codec *avro.Codec) (records, error) {
	hr := havro.NewReader(f, readBufferBytes)
	h, err := avroHeader(hr, name)
	if err != nil {
		return nil, err
	}
	text := string(h.Meta["avro.schema"])
	schema, err := havro.ParseWithCache(text, "", &havro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("%s: its schema: %w", name, err)
	}
	w, err := codec.Resolve(0, text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	decode, err := avroBlockCodec(string(h.Meta["avro.codec"]))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r := &avroRecords{name: name, r: hr, sync: h.Sync, decode: decode, schema: schema, writer: w}
	for r.n < off {
		count, data, err := r.readBlock(off)
		if err == io.EOF {
			return nil, fmt.Errorf("the checkpoint resumes %s at record %d, but the file has %d records: it was truncated or replaced since; restore it, or write to a new output to read it from the start", name, off, r.n)
		}
		if err != nil {
			return nil, err
		}
		if data == nil {
			r.n += count
			continue
		}
		r.left, r.block = count, data
		for r.n < off {
			if _, err := r.next(); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// avroBlockCodec returns the decompression of a codec the Avro specification names.
func avroBlockCodec(name string) (func([]byte) ([]byte, error), error) {
	switch ocf.CodecName(name) {
	case "", ocf.Null:
		return func(b []byte) ([]byte, error) { return b, nil }, nil
	case ocf.Deflate:
		return (&ocf.DeflateCodec{}).Decode, nil
	case ocf.Snappy:
		return (&ocf.SnappyCodec{}).Decode, nil
	case ocf.ZStandard:
		dec, err := zstd.NewReader(nil)
		if err != nil {
			return nil, err
		}
		return func(b []byte) ([]byte, error) { return dec.DecodeAll(b, nil) }, nil
	}
	return nil, fmt.Errorf("its blocks are compressed with %q, which sluice cannot read (null, deflate, snappy, zstandard)", name)
}

var errAvroShort = errors.New("the block ends inside a record: the file is damaged or its schema is not the one its records were written with")

// avroValueSize returns how many bytes the value of schema s at the start of data takes, by
// walking the binary encoding without decoding.
func avroValueSize(s havro.Schema, data []byte) (int, error) {
	n := 0
	long := func() (int64, error) {
		var v uint64
		for shift := uint(0); ; shift += 7 {
			if n >= len(data) || shift > 63 {
				return 0, errAvroShort
			}
			c := data[n]
			n++
			v |= uint64(c&0x7f) << shift
			if c < 0x80 {
				return int64(v>>1) ^ -int64(v&1), nil
			}
		}
	}
	skip := func(k int64) error {
		if k < 0 || int64(len(data)-n) < k {
			return errAvroShort
		}
		n += int(k)
		return nil
	}
	var walk func(s havro.Schema) error
	blocks := func(item func() error) error {
		for {
			count, err := long()
			if err != nil || count == 0 {
				return err
			}
			if count < 0 {
				size, err := long()
				if err != nil {
					return err
				}
				if err := skip(size); err != nil {
					return err
				}
				continue
			}
			for range count {
				if err := item(); err != nil {
					return err
				}
			}
		}
	}
	walk = func(s havro.Schema) error {
		switch t := s.(type) {
		case *havro.RefSchema:
			return walk(t.Schema())
		case *havro.RecordSchema:
			for _, f := range t.Fields() {
				if err := walk(f.Type()); err != nil {
					return err
				}
			}
			return nil
		case *havro.UnionSchema:
			i, err := long()
			if err != nil {
				return err
			}
			if i < 0 || int(i) >= len(t.Types()) {
				return fmt.Errorf("a union branch %d of %d: the file is damaged", i, len(t.Types()))
			}
			return walk(t.Types()[i])
		case *havro.ArraySchema:
			return blocks(func() error { return walk(t.Items()) })
		case *havro.MapSchema:
			return blocks(func() error {
				k, err := long()
				if err == nil {
					err = skip(k)
				}
				if err == nil {
					err = walk(t.Values())
				}
				return err
			})
		case *havro.FixedSchema:
			return skip(int64(t.Size()))
		case *havro.EnumSchema:
			_, err := long()
			return err
		}
		switch s.Type() {
		case havro.Null:
			return nil
		case havro.Boolean:
			return skip(1)
		case havro.Int, havro.Long:
			_, err := long()
			return err
		case havro.Float:
			return skip(4)
		case havro.Double:
			return skip(8)
		case havro.String, havro.Bytes:
			k, err := long()
			if err == nil {
				err = skip(k)
			}
			return err
		}
		return fmt.Errorf("the Avro type %s is not supported", s.Type())
	}
	if err := walk(s); err != nil {
		return 0, err
	}
	return n, nil
}

func buildWriteAvro(ctx *component.Context, cfg *WriteConfig) (component.Sink, error) {
	ok := checkWriteConfig(ctx, cfg)
	in := ctx.Input()
	var codec *avro.Codec
	var text string
	if in != nil {
		var err error
		if text, err = avro.SchemaFor(in); err == nil {
			codec, err = avro.NewCodec(text)
		}
		if err != nil {
			ctx.Errorf(ctx.Pos, "%s cannot write rows %s as Avro: %v", ctx.Describe(), in, err)
			ok = false
		}
	}
	if !ok {
		return nil, nil
	}
	format := writeFormat{ext: ".avro", newEncoder: func(w io.Writer, s *schemas.Schema) (fileEncoder, error) {
		if codec == nil {
			return nil, errors.New("the input's schema is not known")
		}
		enc, err := ocf.NewEncoder(text, w, ocf.WithCodec(ocf.Deflate))
		if err != nil {
			return nil, err
		}
		return &avroEncoder{ocf: enc, rows: codec.NewEncoder(), file: s}, nil
	}}
	return newSink(cfg, ctx.Describe(), format, in), nil
}

// avroEncoder writes rows as the records of an object container file.
type avroEncoder struct {
	ocf    *ocf.Encoder
	rows   *avro.Encoder
	file   *schemas.Schema // the file's schema: the sink's input
	last   *schemas.Schema // the schema fields was made for
	fields []int           // per field of the file's schema, the index of the batch's field
	buf    []byte
}

func (e *avroEncoder) encode(b *schemas.Batch, s *schemas.Schema) error {
	if s != e.last {
		e.fields, e.last = fieldIndex(e.file, s), s
	}
	for i, row := range b.Rows {
		var err error
		if e.buf, err = e.rows.Append(e.buf[:0], row, e.fields); err != nil {
			return atRecord(b, i, err)
		}
		if _, err := e.ocf.Write(e.buf); err != nil {
			return err
		}
	}
	return nil
}

func (e *avroEncoder) finish() error { return e.ocf.Close() }

// fieldIndex returns, per field of file, the index of the field of the same name in s (-1:
// none).
func fieldIndex(file, s *schemas.Schema) []int {
	out := make([]int, len(file.Fields))
	for i, f := range file.Fields {
		out[i] = -1
		for j, g := range s.Fields {
			if g.Name == f.Name {
				out[i] = j
				break
			}
		}
	}
	return out
}
