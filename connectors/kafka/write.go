package kafka

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/sr"
)

// rowEncoder appends the record value of row, aligned with s, to dst. null is set for a
// value that is null (a tombstone). One goroutine uses it at a time.
type rowEncoder func(dst []byte, s *schemas.Schema, row schemas.Row) (out []byte, null bool, err error)

// writeFormat is what distinguishes the formats of WriteToKafka.
type writeFormat struct {
	// newEncoder returns an encoder for one lane.
	newEncoder func() rowEncoder
	// schema is the values' schema as a schema registry holds it (AVRO and JSON).
	schema sr.Schema
	// wire, when set, writes the values in the Confluent wire format.
	wire *wireWriter
}

// Transaction timeouts of the exactly-once producer, unless transaction.timeout.ms sets one:
// long enough for an epoch and its commit (txnTimeoutFor), within what brokers allow by
// default (transaction.max.timeout.ms, 15 minutes).
const (
	minTxnTimeout = time.Minute
	maxTxnTimeout = 15 * time.Minute
)

// txnTimeoutFor returns the transaction timeout for epochs cut every interval: three epochs
// and 30 s, at least a minute and at most maxTxnTimeout.
func txnTimeoutFor(interval time.Duration) time.Duration {
	return min(max(minTxnTimeout, 3*interval+30*time.Second), maxTxnTimeout)
}

func buildWrite(ctx *component.Context, cfg *WriteConfig) (component.Sink, error) {
	ok := true
	set := newSettings()
	if set.bootstrap = parseBootstrap(cfg.BootstrapServers); len(set.bootstrap) == 0 {
		ctx.Errorf(ctx.KeyPos("bootstrap_servers"), "%s needs bootstrap_servers: host:port pairs separated by commas, or embedded", ctx.Describe())
		ok = false
	}
	if cfg.Topic == "" {
		ctx.Errorf(ctx.KeyPos("topic"), "%s needs a topic", ctx.Describe())
		ok = false
	}
	if applyProperties(ctx, "producer_config_updates", cfg.ProducerConfigUpdates, producerSide, set) && finishSecurity(ctx, "producer_config_updates", set) {
		if err := set.checkProducer(ctx.Options.Delivery != component.AtLeastOnce); err != nil {
			pos := propertyPos(ctx, "producer_config_updates", "acks")
			if set.acks == "all" {
				pos = propertyPos(ctx, "producer_config_updates", "enable.idempotence")
			}
			ctx.Errorf(pos, "%s: %v", ctx.Describe(), err)
			ok = false
		}
	} else {
		ok = false
	}
	keyFn, kok := recordKey(ctx, cfg.Key)
	ok = ok && kok
	for _, key := range []string{"file_descriptor_path", "message_name"} {
		if cfg.Format != "PROTO" && component.MappingValue(ctx.Config, key) != nil {
			ctx.Errorf(ctx.KeyPos(key), "%s: %s is for format PROTO, and the format is %s", ctx.Describe(), key, cfg.Format)
			ok = false
		}
	}
	format, fok := writeFormatOf(ctx, cfg)
	if fok && (cfg.ConfluentSchemaRegistryURL != "" || cfg.ConfluentSchemaRegistrySubject != "") {
		format.wire, fok = wireWriterOf(ctx, cfg, set, format.schema)
	}
	if !ok || !fok {
		return nil, nil
	}
	errOut := ctx.ErrorOutput(cfg.ErrorHandling, ctx.Input(), component.IOShape)
	return &sink{what: ctx.Describe(), name: ctx.Name, topic: cfg.Topic, set: set, format: format,
		input: ctx.Input(), errOut: errOut, keyOf: keyFn, exactly: ctx.Options.Delivery != component.AtLeastOnce}, nil
}

func writeFormatOf(ctx *component.Context, cfg *WriteConfig) (writeFormat, bool) {
	if cfg.Format != "AVRO" && cfg.Schema != nil {
		ctx.Errorf(ctx.KeyPos("schema"), "%s: schema is only used with format AVRO; format %s writes the input's fields", ctx.Describe(), cfg.Format)
		return writeFormat{}, false
	}
	switch cfg.Format {
	case "RAW":
		ok := true
		for _, in := range ctx.Inputs {
			s := in.Schema
			if s != nil && (len(s.Fields) != 1 || (s.Fields[0].Type.Kind != schemas.Bytes && s.Fields[0].Type.Kind != schemas.String)) {
				ctx.Errorf(ctx.Pos, "%s with format RAW writes one bytes or string field per record, but its input %q has rows %s", ctx.Describe(), in.Name, s).
					Detail = "map the rows to a single field first, e.g. MapToFields with fields: {payload: ...}"
				ok = false
			}
		}
		return writeFormat{newEncoder: func() rowEncoder { return encodeRaw }}, ok
	case "JSON":
		f := writeFormat{newEncoder: func() rowEncoder {
			return func(dst []byte, s *schemas.Schema, row schemas.Row) ([]byte, bool, error) {
				return schemas.AppendJSON(dst, s, row), false, nil
			}
		}}
		if in := ctx.Input(); in != nil {
			text, err := json.Marshal(jsonSchemaFor(in.Fields))
			if err != nil {
				ctx.Errorf(ctx.KeyPos("format"), "%s: the JSON Schema of the input: %v", ctx.Describe(), err)
				return writeFormat{}, false
			}
			f.schema = sr.Schema{Schema: string(text), Type: sr.TypeJSON}
		}
		return f, true
	case "PROTO":
		return protoWriteFormat(ctx, cfg)
	}
	return avroWriteFormat(ctx, cfg)
}

func encodeRaw(dst []byte, _ *schemas.Schema, row schemas.Row) ([]byte, bool, error) {
	if len(row) != 1 {
		return dst, false, fmt.Errorf("format RAW writes rows of one field, not %d", len(row))
	}
	switch v := row[0].(type) {
	case []byte:
		return append(dst, v...), false, nil
	case string:
		return append(dst, v...), false, nil
	case nil:
		return dst, true, nil
	}
	return dst, false, fmt.Errorf("format RAW writes bytes or strings, not a %s value", goKind(row[0]))
}

// avroWriteFormat encodes rows with the Avro schema of the config, or one derived from the
// input, matching the record's fields to the rows' by name.
func avroWriteFormat(ctx *component.Context, cfg *WriteConfig) (writeFormat, bool) {
	var codec *avroCodec
	var text string
	if cfg.Schema != nil {
		if codec = avroCodecOf(ctx, cfg.Schema, "AVRO"); codec == nil {
			return writeFormat{}, false
		}
		text, _ = avroText(cfg.Schema) // it compiled
		ok := true
		for _, in := range ctx.Inputs {
			if in.Schema == nil {
				continue
			}
			if err := fieldsFit(in.Schema.Fields, codec.schema.Fields, "", avroTarget); err != nil {
				ctx.Errorf(ctx.KeyPos("schema"), "%s: the Avro schema does not fit input %q: %v", ctx.Describe(), in.Name, err)
				ok = false
			}
		}
		if !ok {
			return writeFormat{}, false
		}
	} else {
		in := ctx.Input()
		if in == nil {
			ctx.Errorf(ctx.KeyPos("format"), "%s: format AVRO needs a schema when the input's is not known", ctx.Describe())
			return writeFormat{}, false
		}
		var err error
		text, err = avroSchemaFor(in)
		if err == nil {
			codec, err = newAvroCodec(text)
		}
		if err != nil {
			ctx.Errorf(ctx.KeyPos("format"), "%s: cannot derive an Avro schema from the input: %v", ctx.Describe(), err).
				Detail = "give the Avro schema to write as schema"
			return writeFormat{}, false
		}
	}
	return writeFormat{schema: sr.Schema{Schema: text, Type: sr.TypeAvro}, newEncoder: func() rowEncoder {
		enc := codec.newEncoder()
		fieldsOf := map[*schemas.Schema][]int{} // per row schema: Avro field -> row index
		return func(dst []byte, s *schemas.Schema, row schemas.Row) ([]byte, bool, error) {
			fields, ok := fieldsOf[s]
			if !ok {
				fields = make([]int, len(codec.root.fields))
				for i, f := range codec.root.fields {
					fields[i] = -1
					if j, ok := s.Index(f.name); ok {
						fields[i] = j
					}
				}
				fieldsOf[s] = fields
			}
			out, err := enc.Append(dst, row, fields)
			return out, false, err
		}
	}}, true
}

// fitTarget names what rows are written as, in the messages of fieldsFit: the Avro record,
// or a Protocol Buffers message (whose fields may all be absent).
type fitTarget struct {
	record, schema string // "the Avro record", "the Avro schema"
	absentOK       bool   // a field the input lacks is fine, nullable or not
}

var avroTarget = fitTarget{record: "the Avro record", schema: "the Avro schema"}

// fieldsFit checks that rows with fields in can be written as a record of fields out: every
// input field is in the record with a type that holds its values, and the record's other
// fields may be null.
func fieldsFit(in, out []schemas.Field, path string, t fitTarget) error {
	for _, f := range in {
		o, ok := fieldNamed(out, f.Name)
		if !ok {
			return fmt.Errorf("field %q of the input is not in %s", join(path, f.Name), t.record)
		}
		if err := typeFits(f.Type, o.Type, join(path, f.Name), t); err != nil {
			return err
		}
	}
	for _, o := range out {
		if _, ok := fieldNamed(in, o.Name); !ok && !o.Nullable && !t.absentOK {
			return fmt.Errorf("%s's field %q is not in the input and cannot be null", t.record, join(path, o.Name))
		}
	}
	return nil
}

func typeFits(in, out schemas.Type, path string, t fitTarget) error {
	switch {
	case in.Kind == schemas.Any:
		return nil // checked per value
	case in.Kind == schemas.Int64 && out.Kind == schemas.Float64:
		return nil
	case in.Kind != out.Kind:
		return fmt.Errorf("field %q holds %s values, but %s has %s there", path, in, t.schema, out)
	case in.Kind == schemas.Struct:
		return fieldsFit(in.Fields, out.Fields, path, t)
	case (in.Kind == schemas.Array || in.Kind == schemas.Map) && in.Elem != nil && out.Elem != nil:
		return typeFits(*in.Elem, *out.Elem, path+"[]", t)
	}
	return nil
}

func fieldNamed(fields []schemas.Field, name string) (schemas.Field, bool) {
	for _, f := range fields {
		if f.Name == name {
			return f, true
		}
	}
	return schemas.Field{}, false
}

// recordKey compiles sluice's `key:` expression, whose value becomes each record's key:
// strings and bytes as they are, numbers and booleans as their text, null as no key.
func recordKey(ctx *component.Context, key *component.Expr) (component.RowFunc, bool) {
	if key == nil {
		return nil, true
	}
	if ctx.Exprs == nil {
		ctx.Errorf(ctx.KeyPos("key"), "%s: key expressions are not available here", ctx.Describe())
		return nil, false
	}
	fn, typ, err := ctx.Exprs.Compile(*key, ctx.Input(), "")
	if err != nil {
		ctx.Diags.Append(key.Pos, err)
		return nil, false
	}
	switch typ.Kind {
	case schemas.String, schemas.Bytes, schemas.Int64, schemas.Float64, schemas.Bool, schemas.Any:
		return fn, true
	}
	ctx.Errorf(ctx.KeyPos("key"), "%s: key must give a string, bytes or a number, but %q gives %s", ctx.Describe(), key.Text, typ)
	return nil, false
}

// keyBytes is the record key for a key expression's value.
func keyBytes(v any) ([]byte, error) {
	switch k := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []byte(k), nil
	case []byte:
		return k, nil
	case int64:
		return strconv.AppendInt(nil, k, 10), nil
	case float64:
		return strconv.AppendFloat(nil, k, 'g', -1, 64), nil
	case bool:
		return strconv.AppendBool(nil, k), nil
	}
	return nil, fmt.Errorf("key: a %T cannot be a record key; make the expression give a string", v)
}
