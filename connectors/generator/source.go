package generator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// Config is the config of StreamingDataGenerator.
type Config struct {
	SchemaTemplate string                   `yaml:"schema_template" enum:"GAME_EVENT,LOG_ENTRY" doc:"A built-in template: GAME_EVENT (Google's game event) or LOG_ENTRY (a flow log entry). Give this or schema."`
	Schema         yaml.Node                `yaml:"schema" doc:"A faker template: JSON text with {{function(args)}} placeholders, as Google's Streaming Data Generator reads (e.g. {\"id\": \"{{uuid()}}\", \"score\": {{integer(0, 100)}}}). Give this or schema_template."`
	QPS            float64                  `yaml:"qps" doc:"Messages per second, paced smoothly. 0 or absent: as fast as possible."`
	MessagesLimit  int64                    `yaml:"messages_limit" doc:"Stop after this many messages. 0 or absent: never stop."`
	OutputType     string                   `yaml:"output_type" enum:"JSON,AVRO,PARQUET" doc:"JSON (default): rows typed by a schema inferred from sample messages. AVRO and PARQUET are not supported yet."`
	Seed           *int64                   `yaml:"seed" doc:"Makes the stream reproducible: the same seed gives the same messages, with times on a synthetic clock from start_time. Without it, a random seed and the wall clock."`
	StartTime      string                   `yaml:"start_time" doc:"With seed: the time of message 0 (RFC 3339); message i comes i/qps seconds later (1 ms apart without qps). Default 2024-01-01T00:00:00Z."`
	ErrorHandling  *component.ErrorHandling `yaml:"error_handling" doc:"Where messages that do not fit the inferred schema go, as {failed_row, error_message}; without it they stop the pipeline."`
}

// SetDefaults sets the defaults before decoding.
func (c *Config) SetDefaults() { c.OutputType = "JSON" }

// BatchSize is the most messages one Read returns.
const BatchSize = 1000

// DefaultStartTime is the time of message 0 of a seeded stream without start_time.
var DefaultStartTime = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	// samples is how many messages are rendered to infer the schema.
	samples = 100
	// sampleSeed makes the inferred schema independent of the stream's seed.
	sampleSeed = 1
	// batchWindow is how long a paced Read gathers due messages into one batch at most.
	batchWindow = 10 * time.Millisecond
	// unpacedStep is the synthetic clock's step between messages without qps.
	unpacedStep = time.Millisecond
)

func init() {
	component.RegisterSource("StreamingDataGenerator",
		"Generates messages from a faker template (Google's Streaming Data Generator), paced to a rate.", build)
}

// Source generates the messages of a StreamingDataGenerator. Its offsets are message indexes
// in partition 0 of source "generator:" + the transform's name.
type Source struct {
	source   string
	tmpl     *Template
	where    func(line, col int) diag.Pos // the file position of a template position
	schema   *schemas.Schema
	seed     uint64
	seeded   bool      // times on the synthetic clock
	start    time.Time // the synthetic clock's time of message 0
	step     float64   // the synthetic clock's nanoseconds between messages
	interval float64   // nanoseconds between messages when paced; 0: unpaced
	limit    int64     // 0: none
	errOut   *component.ErrorOutput
	avgSize  int         // of a rendered message, to size batch buffers
	decoders sync.Pool   // *schemas.JSONDecoder, one per lane at a time
	renderer *Renderer   // Read's
	next     int64       // the index of the next message
	t0       time.Time   // pacing: when Open ran
	n0       int64       // pacing: the index of the first message after Open
	timer    *time.Timer // pacing
	ends     []int       // scratch: where each message of a batch ends
}

func build(ctx *component.Context, cfg *Config) (component.Source, error) {
	text, where := templateText(ctx, cfg)
	s := &Source{source: "generator:" + ctx.Name, where: where, limit: cfg.MessagesLimit, start: DefaultStartTime}
	if !(cfg.QPS >= 0) || math.IsInf(cfg.QPS, 0) {
		ctx.Errorf(ctx.KeyPos("qps"), "qps must be a number of messages per second, 0 or more (0: as fast as possible)")
	} else if cfg.QPS > 0 {
		// Beyond a message a nanosecond or below one a year, pacing changes nothing.
		s.interval = min(max(float64(time.Second)/cfg.QPS, 1), float64(365*24*time.Hour))
	}
	if cfg.MessagesLimit < 0 {
		ctx.Errorf(ctx.KeyPos("messages_limit"), "messages_limit must be 0 (no limit) or more")
	}
	if cfg.OutputType != "JSON" {
		ctx.Errorf(ctx.KeyPos("output_type"), "output_type %s is not supported yet: use JSON (the rows are typed either way, by a schema inferred from sample messages)", cfg.OutputType)
	}
	s.seeded = cfg.Seed != nil
	if s.seeded {
		s.seed = uint64(*cfg.Seed)
	} else {
		s.seed = rand.Uint64()
	}
	if cfg.StartTime != "" {
		t, err := time.Parse(time.RFC3339Nano, cfg.StartTime)
		switch {
		case err != nil:
			ctx.Errorf(ctx.KeyPos("start_time"), "start_time %q is not an RFC 3339 time such as 2024-01-01T00:00:00Z", cfg.StartTime)
		case !s.seeded:
			ctx.Errorf(ctx.KeyPos("start_time"), "start_time sets the clock of a reproducible stream: it needs seed").
				Detail = "without seed, messages carry the time they are generated"
		}
		s.start = t.UTC()
	}
	s.step = float64(unpacedStep)
	if s.interval > 0 {
		s.step = s.interval
	}
	if text == "" {
		return nil, nil
	}
	tmpl, err := Parse(text)
	if err != nil {
		var errs TemplateErrors
		errors.As(err, &errs)
		for _, e := range errs {
			ctx.Errorf(where(e.Line, e.Col), "%s", e.Msg)
		}
		return nil, nil
	}
	s.tmpl = tmpl
	if !s.inferSchema(ctx) {
		return nil, nil
	}
	ctx.Output(component.Main, s.schema)
	s.errOut = ctx.ErrorOutput(cfg.ErrorHandling, nil, component.IOTextShape)
	return s, nil
}

// templateText returns the template of cfg and how to place its positions in the file, or ""
// after reporting why there is none.
func templateText(ctx *component.Context, cfg *Config) (string, func(line, col int) diag.Pos) {
	hasSchema := cfg.Schema.Kind != 0 && cfg.Schema.ShortTag() != "!!null"
	switch {
	case hasSchema && cfg.SchemaTemplate != "":
		ctx.Errorf(ctx.KeyPos("schema"), "give schema_template or schema, not both")
	case cfg.SchemaTemplate != "":
		at := ctx.KeyPos("schema_template")
		return Templates[cfg.SchemaTemplate], func(int, int) diag.Pos { return at }
	case !hasSchema:
		ctx.Errorf(ctx.KeyPos("schema"), "%s needs config key \"schema_template\" (e.g. GAME_EVENT) or \"schema\" (a faker template)", ctx.Describe())
	case cfg.Schema.Kind != yaml.ScalarNode:
		ctx.Errorf(ctx.At(&cfg.Schema), "\"schema\" must be the template's text, not a mapping or list").
			Detail = "write the JSON template as a block of text: schema: |, then the template indented below"
	default:
		// Decode the text as an expression, which knows where each of its characters stands
		// in the file, also in | and > blocks.
		var holder struct {
			Text component.Expr `yaml:"schema"`
		}
		key := &yaml.Node{Kind: yaml.ScalarNode, Value: "schema", Line: cfg.Schema.Line, Column: cfg.Schema.Column}
		if !ctx.Decoder.Decode(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{key, &cfg.Schema}}, &holder, ctx.Describe()) {
			return "", nil
		}
		return holder.Text.Text, holder.Text.At
	}
	return "", nil
}

// inferSchema renders sample messages and infers the rows' schema from them.
func (s *Source) inferSchema(ctx *component.Context) bool {
	r := s.tmpl.NewRenderer(sampleSeed)
	docs := make([][]byte, samples)
	size := 0
	for i := range docs {
		doc, err := r.Render(nil, int64(i), s.timeOf(int64(i)))
		if err != nil {
			ctx.Errorf(s.errorPos(err), "%s", errorMsg(err))
			return false
		}
		docs[i], size = doc, size+len(doc)
	}
	s.avgSize = size/samples + 16
	schema, err := schemas.InferJSONLines(docs)
	if err != nil {
		// Say which message, and show it.
		i := slices.IndexFunc(docs, func(doc []byte) bool {
			_, err1 := schemas.InferJSONLines([][]byte{doc})
			return err1 != nil
		})
		if i >= 0 {
			_, err = schemas.InferJSONLines(docs[i : i+1])
		}
		i = max(i, 0)
		ctx.Errorf(s.where(1, 1), "the template does not render a JSON object: sample message %d: %s", i,
			strings.TrimPrefix(err.Error(), "line 1: ")).
			Detail = fmt.Sprintf("it rendered: %.300s", strings.Join(strings.Fields(string(docs[i])), " "))
		return false
	}
	s.schema = schema
	return true
}

// errorPos returns the file position of a rendering error.
func (s *Source) errorPos(err error) diag.Pos {
	var te *TemplateError
	if errors.As(err, &te) {
		return s.where(te.Line, te.Col)
	}
	return s.where(1, 1)
}

func errorMsg(err error) string {
	var te *TemplateError
	if errors.As(err, &te) {
		return te.Msg
	}
	return err.Error()
}

// timeOf returns the time of message index: on the synthetic clock of a seeded stream, else
// now.
func (s *Source) timeOf(index int64) time.Time {
	if !s.seeded {
		return time.Now().UTC()
	}
	return s.start.Add(time.Duration(float64(index) * s.step))
}

// Schema returns the schema of the rows, inferred from sample messages.
func (s *Source) Schema() *schemas.Schema { return s.schema }

// Open starts at the offset recorded for partition 0, if any; pacing starts now.
func (s *Source) Open(_ context.Context, from schemas.Offsets) error {
	s.next = 0
	if n, ok := from.Get(s.source, 0); ok && n > 0 {
		s.next = n
	}
	s.renderer = s.tmpl.NewRenderer(s.seed)
	s.t0, s.n0 = time.Now(), s.next
	return nil
}

// Read returns the next messages, rendered but not parsed: up to BatchSize when unpaced, the
// messages due when paced (waiting for at least one, or for a batch window's worth), and
// io.EOF after messages_limit.
func (s *Source) Read(ctx context.Context) (*schemas.Batch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := int64(BatchSize)
	if s.limit > 0 {
		if s.next >= s.limit {
			return nil, io.EOF
		}
		n = min(n, s.limit-s.next)
	}
	if s.interval > 0 {
		due, err := s.wait(ctx, n)
		if err != nil {
			return nil, err
		}
		n = due
	}
	return s.generate(ctx, int(n))
}

// dueAt returns when message index is due.
func (s *Source) dueAt(index int64) time.Time {
	return s.t0.Add(time.Duration(float64(index-s.n0) * s.interval))
}

// wait waits until messages are due, as many as a batch window holds (at least one, at most
// most), and returns how many are due, at most most.
func (s *Source) wait(ctx context.Context, most int64) (int64, error) {
	want := min(most, max(1, int64(float64(batchWindow)/s.interval)))
	for {
		now := time.Now()
		due := s.n0 + int64(float64(now.Sub(s.t0))/s.interval) + 1 - s.next
		if due >= want {
			return min(due, most), nil
		}
		d := s.dueAt(s.next + want - 1).Sub(now)
		if s.timer == nil {
			s.timer = time.NewTimer(d)
		} else {
			s.timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			s.timer.Stop()
			return 0, ctx.Err()
		case <-s.timer.C:
		}
	}
}

// generate renders up to n messages into one batch. It stops early when ctx is cancelled and
// counts in Offsets only what it returns.
func (s *Source) generate(ctx context.Context, n int) (*schemas.Batch, error) {
	buf := make([]byte, 0, n*s.avgSize)
	times := make([]time.Time, 0, n)
	s.ends = s.ends[:0]
	var err error
	for i := range n {
		if i%64 == 63 && ctx.Err() != nil {
			break
		}
		index := s.next + int64(i)
		at := s.timeOf(index)
		if buf, err = s.renderer.Render(buf, index, at); err != nil {
			return nil, fmt.Errorf("%s: %s (message at offset %d)", s.errorPos(err), errorMsg(err), index)
		}
		s.ends = append(s.ends, len(buf))
		times = append(times, at)
	}
	count := len(s.ends)
	if count == 0 {
		return nil, ctx.Err()
	}
	b := &schemas.Batch{Raw: make([][]byte, count), Pos: make([]schemas.Position, count), Time: times}
	start := 0
	for i, end := range s.ends {
		b.Raw[i] = buf[start:end:end]
		b.Pos[i] = schemas.Position{Source: s.source, Partition: 0, Offset: s.next + int64(i)}
		start = end
	}
	s.next += int64(count)
	return b, nil
}

// Offsets returns the index of the next message.
func (s *Source) Offsets() schemas.Offsets {
	o := schemas.Offsets{}
	o.Set(s.source, 0, s.next)
	return o
}

// Decode parses the rendered messages into rows of the inferred schema. A message that does not
// fit it (a template whose values vary in type beyond what the samples showed) goes to the
// error output, or stops the pipeline without one.
func (s *Source) Decode(_ context.Context, b *schemas.Batch, emit component.Emit) error {
	d, _ := s.decoders.Get().(*schemas.JSONDecoder)
	if d == nil {
		d = schemas.NewJSONDecoder(s.schema)
	}
	defer s.decoders.Put(d)
	return component.DecodeBatch(b, s.schema, s.errOut, emit, func(_ int, raw []byte) (schemas.Row, error) {
		row, err := d.Decode(raw)
		if err != nil {
			return nil, fmt.Errorf("generated message does not fit the schema inferred from samples: %w", err)
		}
		return row, nil
	})
}

// Close stops the pacing timer.
func (s *Source) Close() error {
	if s.timer != nil {
		s.timer.Stop()
	}
	return nil
}
