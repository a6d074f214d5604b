package formats

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/avro"
)

// follower is the reader's side of a registry subject followed while the pipeline runs
// (ReadOptions.Follow): when a writer's schema has top-level fields the reader's lacks, the
// reader's schema gains them at its end (avro.Extend), and the values of that writer, and of
// every later one, read into rows with those fields. Rows only ever grow at their end, so
// the stages built for the first schema read theirs where they were; older writers' values
// read the added fields' defaults (null unless the writer gave one).
type follower struct {
	mu     sync.Mutex // serializes growing the reader's schema
	text   string     // the reader's Avro schema as it is now
	codec  *avro.Codec
	schema atomic.Pointer[schemas.Schema] // the rows' schema as it is now
}

func newFollower(text string, codec *avro.Codec) *follower {
	f := &follower{text: text, codec: codec}
	f.schema.Store(codec.Schema())
	return f
}

// resolve returns how to read the values written with the writer's schema (id in the
// registry), growing the reader's schema by the fields it lacks first.
func (f *follower) resolve(id int, writer string) (*avro.Writer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	text, added, err := avro.Extend(f.text, writer)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %w", id, err)
	}
	if len(added) > 0 {
		codec, err := avro.NewCodec(text)
		if err != nil {
			return nil, fmt.Errorf("schema id %d adds fields %s, which the reader's schema cannot take on: %w", id, strings.Join(added, ", "), err)
		}
		// The added fields are nullable in the rows whatever their Avro type: the rows read
		// before they existed had no value there.
		fields := slices.Clone(codec.Schema().Fields)
		for i := len(f.codec.Schema().Fields); i < len(fields); i++ {
			fields[i].Nullable = true
		}
		f.text, f.codec = text, codec
		f.schema.Store(schemas.New(fields...))
	}
	return f.codec.Resolve(id, writer)
}

// current returns the rows' schema as it is now.
func (f *follower) current() *schemas.Schema { return f.schema.Load() }
