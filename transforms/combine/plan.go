package combine

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
	"github.com/sluicehq/sluice/transforms/window"
)

// Plan is a built Combine or GroupByKey: it evaluates the key and values of input rows into
// a State and turns fired results into output rows. A Plan is immutable and safe for
// concurrent use; each State is not.
type Plan struct {
	// Out is the output schema: the group_by fields then the combined ones (Combine), or
	// {key, values} (GroupByKey).
	Out *schemas.Schema
	// Aggs are the combined outputs, in order.
	Aggs []Agg

	who     string
	keys    []int           // Combine: the group_by fields
	keyExpr bool            // GroupByKey: the key is program 0 of ev
	values  []*expr.Program // the values, one per agg (GroupByKey: none when projecting)
	topKeys []int           // Combine: per agg, the program of top's key (0: none; never program 0)
	project []int           // GroupByKey: fields collected as a struct
	names   []string        // their names
	ev      *expr.Evaluator
	errors  *component.ErrorOutput
}

// Stats counts what AddBatch did with a batch's rows.
type Stats struct {
	// Added rows went into at least one window; Late rows only into closed ones (dropped, or
	// sent to the error output); Failed rows went to the error output.
	Added, Late, Failed int
}

// NewState returns an empty state of the plan's aggs for windowing fn.
func (p *Plan) NewState(fn window.Fn) *State { return NewState(fn, p.Aggs) }

// AddBatch adds every row of b to st at its event time (b.Time). A row whose key or
// values fail goes to the error output; without one, AddBatch stops with a
// *component.RowError at that row (rows before it are in st). A late row goes to the
// error output when there is one and is dropped otherwise; either way it is counted.
func (p *Plan) AddBatch(st *State, b *schemas.Batch, emit component.Emit) (Stats, error) {
	var stats Stats
	var errs *schemas.Batch
	s := p.ev.Scope()
	defer s.Release()
	key := make([]any, max(len(p.keys), 1))[:len(p.keys)]
	if p.keyExpr {
		key = key[:1]
	}
	vals := make([]any, len(p.Aggs))
	for i, row := range b.Rows {
		if i >= len(b.Time) {
			return stats, fmt.Errorf("%s: row %d of a batch has no event time", p.who, i)
		}
		err := p.eval(s, row, key, vals)
		var added Added
		if err == nil {
			added, err = st.Add(key, vals, b.Time[i].UnixNano())
		}
		switch {
		case err != nil:
			stats.Failed++
		case added.Windows == 0 && added.Late > 0:
			stats.Late++
			if p.errors == nil {
				continue
			}
			err = fmt.Errorf("late record: its event time %s is in a window that closed at watermark %s",
				b.Time[i].UTC().Format(time.RFC3339Nano), time.Unix(0, st.Watermark()).UTC().Format(time.RFC3339Nano))
		default:
			stats.Added++
			continue
		}
		var stop error
		if errs, stop = p.errors.Add(errs, b, i, fmt.Errorf("%s: %w", p.who, err)); stop != nil {
			return stats, stop
		}
	}
	return stats, p.errors.Emit(errs, emit)
}

// eval computes the key and values of row into key and vals.
func (p *Plan) eval(s *expr.Scope, row schemas.Row, key, vals []any) error {
	s.Bind(row)
	off := 0
	if p.keyExpr {
		v, err := s.Eval(0)
		if err != nil {
			return err
		}
		key[0], off = v, 1
	} else {
		for j, f := range p.keys {
			key[j] = row[f]
		}
	}
	if p.project != nil {
		m := make(map[string]any, len(p.project))
		for j, f := range p.project {
			m[p.names[j]] = row[f]
		}
		vals[0] = m
		return nil
	}
	for j := range p.values {
		v, err := s.Eval(off + j)
		if err != nil {
			return err
		}
		vals[j] = v
	}
	for j, k := range p.topKeys {
		if k == 0 {
			continue
		}
		key, err := s.Eval(off + k)
		if err != nil {
			return err
		}
		vals[j] = keyed{key, vals[j]}
	}
	return nil
}

// Rows turns fired results into a batch of output rows. A row's event time is the last
// millisecond of its window (Beam's END_OF_WINDOW), and Windows holds its window; its
// Position is left zero for the runner to set.
func (p *Plan) Rows(rs []Result) *schemas.Batch {
	b := &schemas.Batch{Schema: p.Out, Rows: make([]schemas.Row, len(rs)),
		Pos: make([]schemas.Position, len(rs)), Time: make([]time.Time, len(rs)), Windows: make([][2]int64, len(rs))}
	for i, r := range rs {
		row := make(schemas.Row, 0, len(r.Key)+len(r.Values))
		row = append(append(row, r.Key...), r.Values...)
		b.Rows[i] = row
		b.Time[i] = time.Unix(0, r.Window.MaxTimestamp()).UTC()
		b.Windows[i] = [2]int64{r.Window.Start, r.Window.End}
	}
	return b
}

// AppendKey appends the encoding of row's group key: its group_by fields, or GroupByKey's
// key. Rows of one group encode equal.
func (p *Plan) AppendKey(dst []byte, _ int, row schemas.Row) ([]byte, error) {
	if !p.keyExpr {
		key := make([]any, len(p.keys))
		for j, f := range p.keys {
			key[j] = row[f]
		}
		return appendKey(dst, key)
	}
	s := p.ev.Scope()
	defer s.Release()
	s.Bind(row)
	v, err := s.Eval(0)
	if err != nil {
		return dst, fmt.Errorf("%s: key: %w", p.who, err)
	}
	return appendKey(dst, []any{v})
}
