package connectortest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
)

// ErrorsTag is the error output SourceTarget.New declares when asked for one.
const ErrorsTag = "errors"

// SourceTarget is a source under test over records it holds: record i, for i < Records, is
// {"id": i, "name": "row"} in the source's format, except the indexes in Bad, which do not
// decode.
type SourceTarget struct {
	Records int
	Bad     []int
	// New builds a new source over the records (as a restarted process would), with
	// error_handling sending failed records to ErrorsTag when withErrors.
	New func(t *testing.T, withErrors bool) component.Source
}

// TestSource runs the source conformance scenarios: a bounded read ends with io.EOF after
// every record; records that do not decode go to the error output with their positions, or,
// without one, stop the read with a component.RowError at the first of them; and a source
// opened at the offsets another reported reads exactly the records that one had not returned.
func TestSource(t *testing.T, target SourceTarget) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	open := func(withErrors bool, from schemas.Offsets) component.Source {
		t.Helper()
		s := target.New(t, withErrors)
		if b, ok := s.(component.Bounded); ok {
			b.StopAtEnd()
		}
		if err := s.Open(ctx, from); err != nil {
			t.Fatalf("open at %v: %v", from, err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	var good []int64
	for i := range target.Records {
		if !slices.Contains(target.Bad, i) {
			good = append(good, int64(i))
		}
	}

	t.Run("bounded read with errors to the error output", func(t *testing.T) {
		s := open(true, nil)
		got := read(ctx, t, s, -1)
		if ids := got.ids(t); !slices.Equal(ids, good) {
			t.Errorf("read ids %v, want %v", ids, good)
		}
		if len(got.errors) != len(target.Bad) {
			t.Fatalf("%d error rows, want %d (the bad records)", len(got.errors), len(target.Bad))
		}
		for _, e := range got.errors {
			if !got.returned[e.pos] {
				t.Errorf("error row at %v, a position Read never returned", e.pos)
			}
			// The last field of an IO error row is its source: {topic, partition, offset}.
			if src, ok := e.row[len(e.row)-1].(map[string]any); !ok || src["topic"] == "" || src["partition"] != int64(e.pos.Partition) || src["offset"] != e.pos.Offset {
				t.Errorf("error row at %v names its source as %v", e.pos, e.row[len(e.row)-1])
			}
		}
	})

	t.Run("a bad record without an error output stops the read at it", func(t *testing.T) {
		if len(target.Bad) == 0 {
			t.Skip("the target has no bad records")
		}
		s := open(false, nil)
		var rowErr *component.RowError
		err := componenttest.ReadAll(ctx, s, func(string, *schemas.Batch) error { return nil })
		if !errors.As(err, &rowErr) {
			t.Fatalf("read ended with %v, want a RowError", err)
		}
		if rowErr.Pos.Source == "" {
			t.Errorf("the RowError names no position: %v", rowErr)
		}
	})

	t.Run("resume from reported offsets", func(t *testing.T) {
		s := open(true, nil)
		first := read(ctx, t, s, target.Records/2)
		at := s.Offsets()
		_ = s.Close()
		rest := read(ctx, t, open(true, at), -1)
		ids := slices.Sorted(slices.Values(append(first.ids(t), rest.ids(t)...)))
		if !slices.Equal(ids, good) {
			t.Errorf("the first run read %d ids up to %v, the resumed run %d: together %v, want each of %v once",
				len(first.ids(t)), at, len(rest.ids(t)), ids, good)
		}
	})
}

// readResult is what a read returned: the decoded rows, the error rows and every position
// Read returned.
type readResult struct {
	rows     []schemas.Row
	errors   []errorRow
	returned map[schemas.Position]bool
}

type errorRow struct {
	row schemas.Row
	pos schemas.Position
}

// ids returns the id column of the decoded rows, sorted.
func (r readResult) ids(t *testing.T) []int64 {
	t.Helper()
	var out []int64
	for _, row := range r.rows {
		id, ok := row[0].(int64)
		if !ok {
			t.Fatalf("row %v: id is %T, want int64", row, row[0])
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// read reads s until io.EOF, or until at least n records (n >= 0) were returned, decoding
// each batch as a lane does.
func read(ctx context.Context, t *testing.T, s component.Source, n int) readResult {
	t.Helper()
	res := readResult{returned: map[schemas.Position]bool{}}
	emit := func(tag string, b *schemas.Batch) error {
		switch tag {
		case component.Main:
			res.rows = append(res.rows, b.Rows...)
		case ErrorsTag:
			for i, row := range b.Rows {
				res.errors = append(res.errors, errorRow{row: row, pos: b.Pos[i]})
			}
		default:
			return fmt.Errorf("emitted on unknown output %q", tag)
		}
		return nil
	}
	for n < 0 || len(res.returned) < n {
		b, err := s.Read(ctx)
		if errors.Is(err, io.EOF) {
			if n >= 0 {
				t.Fatalf("io.EOF after %d records, want %d first", len(res.returned), n)
			}
			return res
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if b == nil {
			if ctx.Err() != nil {
				t.Fatalf("read: %v", ctx.Err())
			}
			continue
		}
		for _, p := range b.Pos {
			res.returned[p] = true
		}
		if err := s.Decode(ctx, b, emit); err != nil {
			t.Fatalf("decode: %v", err)
		}
	}
	return res
}
